// Key rules: the algorithms and sizes the Baseline Requirements allow (BR 6.1.5). Weak sizes are
// OpenSSL's security level (too_weak); these are the shapes no modern verifier supports.

#include <openssl/evp.h>

#include "verify/rules.hpp"

namespace getcert::detail {

std::vector<RuleFinding> check_key_rules(const PathView& path) {
  std::vector<RuleFinding> out;
  for (std::size_t d = 0; d < path.certs.size(); ++d) {
    const EVP_PKEY* key = X509_get0_pubkey(path.certs[d]);
    if (key == nullptr) continue;
    const auto depth = static_cast<int>(d);
    const int id = EVP_PKEY_get_base_id(key);
    if (id == EVP_PKEY_DSA) {
      out.push_back({depth, ProblemCode::dsa_key,
                     path.who(d) + " has a DSA key (BR 6.1.5: RSA or ECDSA only; Go, rustls, "
                                   "Chromium and TLS 1.3 do not accept DSA)"});
    } else if ((id == EVP_PKEY_RSA || id == EVP_PKEY_RSA_PSS) && EVP_PKEY_get_bits(key) % 8 != 0) {
      out.push_back({depth, ProblemCode::rsa_modulus_not_multiple_of_8,
                     path.who(d) + " has an RSA modulus of " +
                         std::to_string(EVP_PKEY_get_bits(key)) +
                         " bits, not a multiple of 8 (BR 6.1.5)"});
    }
  }
  return out;
}

}  // namespace getcert::detail
