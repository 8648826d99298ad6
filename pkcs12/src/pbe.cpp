#include "pbe.hpp"

#include "budget.hpp"
#include "crypto.hpp"
#include "internal/try.hpp"
#include "legacy_ciphers.hpp"

namespace getcert::pkcs12::detail {
namespace {

Result<PbeAlgorithm> parse_pbes1(const Pbes1Scheme& scheme, const Element& params,
                                 std::uint64_t max_iterations, const char* where) {
  PbeAlgorithm alg;
  alg.pbes1 = &scheme;
  alg.description = std::string(scheme.display);
  // pkcs-12PbeParams ::= SEQUENCE { salt OCTET STRING, iterations INTEGER }
  GETCERT_TRY_ASSIGN(auto r, children(params, "PBE parameters"));
  GETCERT_TRY_ASSIGN(auto salt, r.expect(kTagOctetString, "PBE salt"));
  GETCERT_TRY_ASSIGN(auto salt_bytes, octet_string(salt, "PBE salt"));
  alg.salt = std::move(salt_bytes);
  GETCERT_TRY_ASSIGN(auto iter, r.expect(kTagInteger, "PBE iterations"));
  GETCERT_TRY_ASSIGN(auto count, small_uint(iter, "PBE iterations"));
  alg.iterations = count;
  GETCERT_TRY(check_iterations(alg.iterations, max_iterations, where));
  return alg;
}

Result<PbeAlgorithm> parse_pbes2(const Element& params, std::uint64_t max_iterations,
                                 const char* where) {
  // PBES2-params ::= SEQUENCE { keyDerivationFunc AlgorithmIdentifier,
  //                             encryptionScheme AlgorithmIdentifier }
  GETCERT_TRY_ASSIGN(auto r, children(params, "PBES2 parameters"));
  GETCERT_TRY_ASSIGN(auto kdf, r.expect(kTagSequence, "PBES2 key derivation function"));
  GETCERT_TRY_ASSIGN(auto enc, r.expect(kTagSequence, "PBES2 encryption scheme"));

  GETCERT_TRY_ASSIGN(auto kdf_params, parse_pbkdf2(kdf, "PBES2", "PBKDF2"));
  PbeAlgorithm alg;
  alg.salt = std::move(kdf_params.salt);
  alg.iterations = kdf_params.iterations;
  alg.prf = kdf_params.prf;
  const std::optional<std::uint64_t> key_length = kdf_params.key_length;

  GETCERT_TRY_ASSIGN(auto er, children(enc, "PBES2 encryption scheme"));
  GETCERT_TRY_ASSIGN(auto enc_oid_el, er.expect(kTagOid, "PBES2 encryption scheme"));
  GETCERT_TRY_ASSIGN(auto enc_oid, oid(enc_oid_el, "PBES2 encryption scheme"));
  alg.pbes2 = pbes2_cipher(enc_oid);
  if (alg.pbes2 == nullptr) {
    return fail(Errc::unsupported, "unsupported PBES2 encryption scheme " + describe_oid(enc_oid));
  }
  GETCERT_TRY_ASSIGN(auto iv, er.expect(kTagOctetString, "PBES2 IV"));
  GETCERT_TRY_ASSIGN(auto iv_bytes, octet_string(iv, "PBES2 IV"));
  if (iv_bytes.size() != static_cast<std::size_t>(alg.pbes2->iv_length)) {
    return fail(Errc::malformed_input, "malformed PKCS#12: PBES2 IV has the wrong length");
  }
  alg.iv = std::move(iv_bytes);
  if (key_length && *key_length != static_cast<std::uint64_t>(alg.pbes2->key_length)) {
    return fail(Errc::malformed_input, "malformed PKCS#12: PBKDF2 keyLength does not match " +
                                           std::string(alg.pbes2->display));
  }
  alg.description =
      "PBES2/PBKDF2-HMAC-" + std::string(alg.prf->display) + "/" + std::string(alg.pbes2->display);
  GETCERT_TRY(check_iterations(alg.iterations, max_iterations, where));
  return alg;
}

}  // namespace

Result<Pbkdf2Params> parse_pbkdf2(const Element& kdf, std::string_view scheme,
                                  std::string_view label) {
  const std::string kdf_what = std::string(scheme) + " key derivation function";
  const auto what = [&](const char* field) { return std::string(label) + " " + field; };
  GETCERT_TRY_ASSIGN(auto kr, children(kdf, kdf_what.c_str()));
  GETCERT_TRY_ASSIGN(auto kdf_oid_el, kr.expect(kTagOid, kdf_what.c_str()));
  GETCERT_TRY_ASSIGN(auto kdf_oid, oid(kdf_oid_el, kdf_what.c_str()));
  if (kdf_oid != oids::kPbkdf2) {
    return fail(Errc::unsupported, "unsupported " + kdf_what + " " + describe_oid(kdf_oid));
  }
  // PBKDF2-params ::= SEQUENCE { salt CHOICE { specified OCTET STRING, otherSource AlgId },
  //   iterationCount INTEGER, keyLength INTEGER OPTIONAL, prf AlgId DEFAULT hmacWithSHA1 }
  const std::string params_what = what("parameters");
  GETCERT_TRY_ASSIGN(auto kp, kr.expect(kTagSequence, params_what.c_str()));
  GETCERT_TRY_ASSIGN(auto pr, children(kp, params_what.c_str()));
  const std::string salt_what = what("salt");
  GETCERT_TRY_ASSIGN(auto salt, pr.next(salt_what.c_str()));
  if (!salt.is_universal(kTagOctetString)) {
    return fail(Errc::unsupported,
                "unsupported " + salt_what + " source (only a specified salt is supported)");
  }
  Pbkdf2Params out;
  GETCERT_TRY_ASSIGN(auto salt_bytes, octet_string(salt, salt_what.c_str()));
  out.salt = std::move(salt_bytes);
  const std::string iter_what = what("iteration count");
  GETCERT_TRY_ASSIGN(auto iter, pr.expect(kTagInteger, iter_what.c_str()));
  GETCERT_TRY_ASSIGN(auto count, small_uint(iter, iter_what.c_str()));
  out.iterations = count;
  const std::string length_what = what("keyLength");
  auto kl = pr.optional(TagClass::universal, kTagInteger, length_what.c_str());
  if (!kl) return tl::unexpected(kl.error());
  if (*kl) {
    GETCERT_TRY_ASSIGN(auto v, small_uint(**kl, length_what.c_str()));
    out.key_length = v;
  }
  std::string prf_oid(oids::kHmacWithSha1);
  const std::string prf_what = what("PRF");
  auto prf = pr.optional(TagClass::universal, kTagSequence, prf_what.c_str());
  if (!prf) return tl::unexpected(prf.error());
  if (*prf) {
    GETCERT_TRY_ASSIGN(auto prr, children(**prf, prf_what.c_str()));
    GETCERT_TRY_ASSIGN(auto prf_el, prr.expect(kTagOid, prf_what.c_str()));
    GETCERT_TRY_ASSIGN(auto p, oid(prf_el, prf_what.c_str()));
    prf_oid = p;
  }
  out.prf = hash_by_hmac_oid(prf_oid);
  if (out.prf == nullptr) {
    return fail(Errc::unsupported, "unsupported " + prf_what + " " + describe_oid(prf_oid));
  }
  return out;
}

Result<void> check_iterations(std::uint64_t iterations, std::uint64_t max_iterations,
                              const std::string& where) {
  if (iterations == 0) {
    return fail(Errc::malformed_input, "malformed PKCS#12: iteration count 0 in " + where);
  }
  if (iterations > max_iterations) {
    return fail(Errc::limit_exceeded, "iteration count " + std::to_string(iterations) + " in " +
                                          where + " exceeds the limit of " +
                                          std::to_string(max_iterations) +
                                          " (raise DecodeOptions::max_iterations to accept it)");
  }
  return {};
}

Result<PbeAlgorithm> parse_pbe(const Element& algorithm_identifier, std::uint64_t max_iterations,
                               const char* where) {
  if (!algorithm_identifier.is_universal(kTagSequence)) {
    return fail(Errc::malformed_input, "malformed PKCS#12: bad encryption algorithm identifier");
  }
  GETCERT_TRY_ASSIGN(auto r, children(algorithm_identifier, "encryption algorithm"));
  GETCERT_TRY_ASSIGN(auto oid_el, r.expect(kTagOid, "encryption algorithm"));
  GETCERT_TRY_ASSIGN(auto alg_oid, oid(oid_el, "encryption algorithm"));
  const bool known = pbes1_scheme(alg_oid) != nullptr || alg_oid == oids::kPbes2;
  if (!known) {
    return fail(Errc::unsupported,
                "unsupported encryption algorithm " + describe_oid(alg_oid) + " in " + where);
  }
  GETCERT_TRY_ASSIGN(auto params, r.next("encryption parameters"));
  if (!params.is_universal(kTagSequence)) {
    return fail(Errc::malformed_input,
                "malformed PKCS#12: encryption parameters are not a SEQUENCE");
  }
  if (const Pbes1Scheme* s = pbes1_scheme(alg_oid)) {
    return parse_pbes1(*s, params, max_iterations, where);
  }
  return parse_pbes2(params, max_iterations, where);
}

std::uint64_t attempt_cost(const PbeAlgorithm& alg) noexcept {
  if (alg.pbes1 != nullptr) {
    constexpr std::size_t kSha1Size = 20;
    const auto key = static_cast<std::size_t>(alg.pbes1->key_length);
    const auto iv = static_cast<std::size_t>(alg.pbes1->iv_length);
    const std::uint64_t key_cost = derivation_cost(alg.iterations, key, kSha1Size);
    return iv == 0 ? key_cost : add_cost(key_cost, derivation_cost(alg.iterations, iv, kSha1Size));
  }
  return derivation_cost(alg.iterations, static_cast<std::size_t>(alg.pbes2->key_length),
                         alg.prf->output_size);
}

Result<std::optional<SecureBytes>> pbe_decrypt(const PbeAlgorithm& alg,
                                               const PasswordVariant& password, Bytes ciphertext,
                                               bool& legacy_used) {
  if (alg.pbes1 != nullptr) {
    const Pbes1Scheme& s = *alg.pbes1;
    GETCERT_TRY_ASSIGN(auto sha1, fetch_digest("SHA1", "SHA-1"));
    GETCERT_TRY_ASSIGN(auto key, pkcs12_kdf(sha1.get(), password.bytes, alg.salt, 1, alg.iterations,
                                            static_cast<std::size_t>(s.key_length)));
    SecureBytes iv;
    if (s.iv_length > 0) {
      GETCERT_TRY_ASSIGN(auto derived,
                         pkcs12_kdf(sha1.get(), password.bytes, alg.salt, 2, alg.iterations,
                                    static_cast<std::size_t>(s.iv_length)));
      iv = std::move(derived);
    }
    // RC2 and RC4 run here, not in OpenSSL's legacy provider: the same everywhere, with no
    // module to load (see legacy_ciphers.hpp). The effective key length is the key length.
    switch (s.implementation) {
      case Pbes1Cipher::rc2_cbc:
        return rc2_cbc_decrypt(key, static_cast<unsigned>(s.key_length) * 8, iv, ciphertext);
      case Pbes1Cipher::rc4:
        return std::optional<SecureBytes>{rc4_decrypt(key, ciphertext)};
      case Pbes1Cipher::openssl:
        break;
    }
    GETCERT_TRY_ASSIGN(auto cipher, fetch_cipher(s.cipher, s.short_name, legacy_used));
    return decrypt(cipher.get(), key, iv, ciphertext);
  }
  const Pbes2Cipher& c = *alg.pbes2;
  GETCERT_TRY_ASSIGN(auto cipher, fetch_cipher(c.cipher, c.display, legacy_used));
  GETCERT_TRY_ASSIGN(auto md, fetch_digest(alg.prf->openssl_name, alg.prf->display));
  GETCERT_TRY_ASSIGN(auto key, pbkdf2(md.get(), password.bytes, alg.salt, alg.iterations,
                                      static_cast<std::size_t>(c.key_length)));
  return decrypt(cipher.get(), key, alg.iv, ciphertext);
}

}  // namespace getcert::pkcs12::detail
