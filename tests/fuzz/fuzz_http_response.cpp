// Fuzz target: the HTTP response parser that reads AIA, OCSP and CRL downloads, fed the input
// in chunks of varying size (a server may split its writes anywhere), then the close.
//
// Input: 2 bytes seeding the chunk sizes, then the bytes the "server" sends.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http/http.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::uint32_t seed = (static_cast<std::uint32_t>(data[0]) << 8) | data[1];
  const std::string_view wire(reinterpret_cast<const char*>(data + 2), size - 2);

  // A small body cap so the fuzzer reaches it; the default keeps its own tests.
  constexpr std::size_t kFuzzBodyCap = 4096;
  getcert::detail::HttpResponseParser parser(kFuzzBodyCap);
  std::size_t off = 0;
  bool failed = false;
  while (off < wire.size() && !failed) {
    seed = seed * 1103515245U + 12345U;
    const std::size_t piece = 1 + (seed >> 16) % 97;
    failed = !parser.feed(wire.substr(off, piece));
    off += piece;
    check(parser.body().size() <= kFuzzBodyCap);
  }
  const bool finished = static_cast<bool>(parser.finish());
  if (failed) check(!finished);  // a failed parser stays failed
  if (finished) {
    check(parser.done());
    check(parser.status() >= 200 && parser.status() <= 999);
    (void)parser.header("content-type");
  }
  return 0;
}
