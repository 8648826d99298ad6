// Fuzz target: the exporter's HTTP/1.1 request reader (cli/exporter/http_request.cpp), which
// reads what any client that reaches the port sends, before authentication.
//
// Input: 2 bytes seeding the piece sizes, then the bytes a client sends. The same bytes are
// read whole and in pieces of 1 to 61 bytes, as a connection receives them; both readings must
// agree on every request (state, status, length, fields), since a reader that frames a request
// differently depending on how TCP cut it is a smuggling bug.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/http_request.hpp"

namespace {

using getcert::cli::exporter::http::Parse;
using getcert::cli::exporter::http::ParseResult;
using getcert::cli::exporter::http::Request;
using getcert::cli::exporter::http::RequestReader;

void check(bool ok) {
  if (!ok) std::abort();
}

struct Seen {
  Parse state;
  int status;
  std::size_t consumed;
  std::string method, path, body;
  std::size_t headers, params;
  bool keep_alive;
  bool operator==(const Seen&) const = default;
};

// Reads requests one after another (pipelining), feeding `wire` in pieces.
std::vector<Seen> read_all(std::string_view wire, std::uint32_t seed, bool whole) {
  std::vector<Seen> seen;
  RequestReader reader;
  std::string buffer;
  std::size_t off = 0;
  for (;;) {
    ParseResult r = reader.parse(buffer);
    while (r.state == Parse::need_more && off < wire.size()) {
      seed = seed * 1103515245U + 12345U;
      const std::size_t piece = whole ? wire.size() : 1 + (seed >> 16) % 61;
      buffer.append(wire.substr(off, piece));
      off += std::min(piece, wire.size() - off);
      r = reader.parse(buffer);
    }
    if (r.state == Parse::need_more) return seen;
    check(r.consumed <= buffer.size());
    if (r.state == Parse::error) {
      check(r.status >= 400 && r.status < 600 && !r.reason.empty());
      check(r.reason.find('\n') == std::string::npos);
      seen.push_back({r.state, r.status, 0, {}, {}, {}, 0, 0, false});
      return seen;
    }
    check(r.consumed > 0);
    const Request request = reader.take();
    check(!request.method.empty() && request.body.size() <= 4096);
    seen.push_back({r.state, r.status, r.consumed, request.method, request.path, request.body,
                    request.headers.size(), request.params.size(), request.keep_alive});
    buffer.erase(0, r.consumed);
    if (seen.size() > 64) return seen;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint32_t seed = (static_cast<std::uint32_t>(data[0]) << 8) | data[1];
  const std::string_view wire(reinterpret_cast<const char*>(data + 2), size - 2);
  const auto whole = read_all(wire, seed, true);
  const auto pieces = read_all(wire, seed, false);
  // Read whole, the first request ends where the pieces' first does; an error found early in
  // pieces (e.g. a bare LF) must be the same error read whole.
  check(whole.size() == pieces.size());
  for (std::size_t i = 0; i < whole.size(); ++i) check(whole[i] == pieces[i]);
  return 0;
}
