// Fuzz target: getcert::pkcs12::decode, with a password and without. Built and run by
// tools/fuzz (libFuzzer, seeded with the public vectors in tests/vectors/pkcs12), and
// replayed over seeds/pkcs12 and regressions/pkcs12 by ctest (fuzz-replay: pkcs12).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "getcert/pkcs12.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> input(data, data + size);
  getcert::pkcs12::DecodeOptions options;
  // A password that matches several seed vectors, so mutations reach the decrypted contents.
  options.password = "cryptography";
  // Keep each input cheap: the fuzzer explores structure, not key-derivation cost. The budget
  // covers the whole file; the 2048-iteration seed vectors need about 10,000 of it.
  options.max_iterations = 32'768;
  auto result = getcert::pkcs12::decode(input, options);
  if (result) {
    for (const auto& id : result->identities) {
      static_cast<void>(id.key.pem());
    }
  }
  // Also the no-password path (empty + absent candidates).
  options.password.reset();
  static_cast<void>(getcert::pkcs12::decode(input, options));
  return 0;
}
