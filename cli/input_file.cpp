#include "input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
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

Result<std::vector<std::uint8_t>> read_input(const std::string& path, Terminal& term) {
  if (path == "-") return read_stream(term.in, "standard input");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fail(Errc::io_error, "cannot read '" + path + "': " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return fail(Errc::io_error, "'" + path + "' is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Errc::io_error, "cannot open '" + path + "': " + std::strerror(errno));
  return read_stream(in, "'" + path + "'");
}

}  // namespace getcert::cli
