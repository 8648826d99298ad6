// Fuzz target: getcert::pkcs12::read_keystore, the format detection in front of every key store
// input (DER, base64 and PEM-armoured PKCS#12, JKS, JCEKS): with the seeds' password, and
// listed without one as `p12 info` and `show` do. Built and run by tools/fuzz, replayed over
// seeds/keystore and regressions/keystore by ctest (fuzz-replay: keystore).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "getcert/keystore.hpp"
#include "getcert/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> input(data, data + size);
  getcert::pkcs12::KeystoreOptions options;
  options.password = "fuzz-pass";  // the seed stores' password, so mutations reach the entries
  // Cheap inputs: the fuzzer explores structure, not key-derivation cost.
  options.max_iterations = 32'768;
  if (auto store = getcert::pkcs12::read_keystore(input, options)) {
    for (const auto& e : store->entries) {
      // Aliases reach JSON reports as they are: they must already be valid UTF-8.
      if (!getcert::is_valid_utf8(e.alias)) std::abort();
    }
    for (const auto& id : store->bundle.identities) static_cast<void>(id.key.pem());
  }
  options.password.reset();
  options.list_without_password = true;
  static_cast<void>(getcert::pkcs12::read_keystore(input, options));
  return 0;
}
