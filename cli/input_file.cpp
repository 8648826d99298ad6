#include "input_file.hpp"

#include <fstream>
#include <iterator>

namespace getcert::cli {
namespace {

Result<std::vector<std::uint8_t>> read_stream(std::istream& in, const std::string& name) {
  std::vector<std::uint8_t> out;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    out.insert(out.end(), buf, buf + in.gcount());
    if (out.size() > kMaxInputBytes) {
      return fail(Errc::limit_exceeded, name + " is larger than 64 MiB; not a certificate file");
    }
  }
  if (in.bad()) return fail(Errc::io_error, "cannot read " + name);
  return out;
}

}  // namespace

Result<std::vector<std::uint8_t>> read_input(const std::string& path, Terminal& term,
                                             internal::FileKinds kinds) {
  if (path == "-") return read_stream(term.in, "standard input");
  auto bytes = internal::read_bounded_file(path, kMaxInputBytes, "'" + path + "'", kinds);
  if (!bytes) {
    if (bytes.error().code != Errc::limit_exceeded) return tl::unexpected(bytes.error());
    return fail(Errc::limit_exceeded,
                "'" + path + "' is larger than 64 MiB; not a certificate file");
  }
  return std::vector<std::uint8_t>(bytes->begin(), bytes->end());
}

}  // namespace getcert::cli
