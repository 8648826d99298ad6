// Fuzz target: SQL Server's side of TDS as getcert reads it (starttls/tds.hpp): the PRELOGIN
// answer, and the framing BIO that takes TDS headers off the server's handshake packets.
//
// Input: 1 byte choosing read sizes, then the server's bytes. They are parsed as one PRELOGIN
// payload, and read through the framing BIO, whose output must be exactly the payloads of the
// leading PRELOGIN packets (computed here independently).

#include <openssl/bio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "invariant.hpp"
#include "net/replies.hpp"
#include "starttls/tds.hpp"

using getcert::fuzz::require;

namespace {

// The payloads of the PRELOGIN packets at the start of `wire` (the last one maybe cut short by
// the end of the input), and whether reading stops at a packet of another type or a bad length.
std::string expected_payloads(std::string_view wire, bool& failure) {
  std::string out;
  failure = false;
  std::size_t pos = 0;
  while (pos + 8 <= wire.size()) {
    const auto type = static_cast<unsigned char>(wire[pos]);
    const std::size_t length =
        (static_cast<std::size_t>(static_cast<unsigned char>(wire[pos + 2])) << 8U) |
        static_cast<unsigned char>(wire[pos + 3]);
    if (type != 0x12 || length < 8) {
      failure = true;
      return out;
    }
    out.append(wire.substr(pos + 8, length - 8));  // substr: a truncated packet gives what is left
    pos += length;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace d = getcert::detail;
  if (size < 1) return 0;
  const unsigned step = 1 + data[0] % 64;
  const std::string_view wire(reinterpret_cast<const char*>(data + 1), size - 1);

  if (auto answer = d::parse_prelogin(wire)) {
    if (answer->encryption) {
      const std::string name = d::tds_encryption_name(*answer->encryption);
      require(!name.empty() && name.find('\n') == std::string::npos,
              "encryption names are one line");
    }
    if (answer->version) require(!d::tds_version_text(*answer->version).empty(), "version text");
  }
  if (wire.size() >= 8) static_cast<void>(d::parse_tds_header(wire.substr(0, 8)));

  bool failure = false;
  const std::string expected = expected_payloads(wire, failure);
  BIO* source = BIO_new_mem_buf(wire.data(), static_cast<int>(wire.size()));
  require(source != nullptr, "a memory BIO");
  BIO* framing = d::push_tds_framing(source);
  require(framing != nullptr, "the framing BIO");
  std::string got;
  std::vector<char> buf(step);
  for (;;) {
    std::size_t n = 0;
    if (BIO_read_ex(framing, buf.data(), buf.size(), &n) <= 0) {
      // An empty packet hands control back as a retryable read (so a TLS handshake loop can
      // check its deadline); the memory BIO underneath never asks for a retry itself.
      if (BIO_should_retry(framing)) continue;
      break;
    }
    require(n >= 1 && n <= buf.size(), "a read returns what fits");
    got.append(buf.data(), n);
    require(got.size() <= wire.size(), "never more than the wire held");
  }
  require(got == expected, "the framing passes exactly the PRELOGIN payloads through, in order");
  require(d::tds_framing_failure(framing).empty() != failure,
          "the framing stops at a packet that is not PRELOGIN, and says why");
  BIO_free_all(framing);
  return 0;
}
