#include "mac.hpp"

#include <algorithm>

#include "crypto.hpp"
#include "internal/try.hpp"
#include "pbe.hpp"

namespace getcert::pkcs12::detail {
namespace {

Result<std::string> read_oid(BerReader& r, const char* what) {
  GETCERT_TRY_ASSIGN(auto el, r.expect(kTagOid, what));
  return oid(el, what);
}

// PBMAC1-params ::= SEQUENCE { keyDerivationFunc AlgorithmIdentifier {PBKDF2},
//                              messageAuthScheme AlgorithmIdentifier {hmacWithSHA*} }
Result<void> parse_pbmac1(const Element& params, std::uint64_t max_iterations, MacData& mac) {
  GETCERT_TRY_ASSIGN(auto r, children(params, "PBMAC1 parameters"));
  GETCERT_TRY_ASSIGN(auto kdf, r.expect(kTagSequence, "PBMAC1 key derivation function"));
  GETCERT_TRY_ASSIGN(auto scheme, r.expect(kTagSequence, "PBMAC1 message authentication scheme"));

  GETCERT_TRY_ASSIGN(auto kdf_params, parse_pbkdf2(kdf, "PBMAC1", "PBMAC1 PBKDF2"));
  mac.salt = std::move(kdf_params.salt);
  mac.iterations = kdf_params.iterations;
  mac.prf = kdf_params.prf;
  const std::optional<std::uint64_t> key_length = kdf_params.key_length;

  GETCERT_TRY_ASSIGN(auto sr, children(scheme, "PBMAC1 message authentication scheme"));
  GETCERT_TRY_ASSIGN(auto scheme_oid, read_oid(sr, "PBMAC1 message authentication scheme"));
  mac.hash = hash_by_hmac_oid(scheme_oid);
  if (mac.hash == nullptr) {
    return fail(Errc::unsupported, "unsupported PBMAC1 MAC algorithm " + describe_oid(scheme_oid));
  }
  GETCERT_TRY_ASSIGN(auto md, fetch_digest(mac.hash->openssl_name, mac.hash->display));
  const auto out_len = static_cast<std::uint64_t>(EVP_MD_get_size(md.get()));

  // RFC 9579 makes keyLength mandatory. A key shorter than the HMAC output lets a forger brute
  // force the key instead of the password (a 1-octet key verifies under 1 in 256 passwords), so
  // it is refused rather than "verified". Producers write the HMAC output length (20, 32, 48 or
  // 64 octets); any other length is no real file, and a long one only multiplies the PBKDF2
  // work (1024 octets of SHA-256 output are 32 full runs of the iteration count).
  if (!key_length) {
    return fail(Errc::malformed_input,
                "malformed PKCS#12: PBMAC1 PBKDF2 parameters lack the required keyLength");
  }
  if (*key_length < out_len || !is_hmac_output_size(*key_length)) {
    return fail(
        Errc::malformed_input,
        "malformed PKCS#12: PBMAC1 keyLength " + std::to_string(*key_length) +
            " is invalid for HMAC-" + std::string(mac.hash->display) +
            " (producers use the HMAC output length, " + std::to_string(out_len) +
            " octets: a shorter key makes the MAC forgeable, a longer one only multiplies the "
            "work); refusing the file");
  }
  mac.key_length = static_cast<std::size_t>(*key_length);
  auto ok = check_iterations(mac.iterations, max_iterations, "the PBMAC1 MAC");
  if (!ok) return ok;
  mac.info.algorithm = "PBMAC1(PBKDF2-HMAC-" + std::string(mac.prf->display) + ", HMAC-" +
                       std::string(mac.hash->display) + ")";
  mac.info.iterations = mac.iterations;
  mac.info.salt_length = mac.salt.size();
  return {};
}

}  // namespace

Result<MacData> parse_mac_data(const Element& mac_data, std::uint64_t max_iterations) {
  // MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }
  MacData mac;
  mac.info.present = true;
  GETCERT_TRY_ASSIGN(auto r, children(mac_data, "MacData"));
  GETCERT_TRY_ASSIGN(auto digest_info, r.expect(kTagSequence, "MAC DigestInfo"));
  GETCERT_TRY_ASSIGN(auto salt, r.expect(kTagOctetString, "MAC salt"));
  GETCERT_TRY_ASSIGN(auto salt_bytes, octet_string(salt, "MAC salt"));
  // An explicitly encoded DEFAULT 1 is not DER, but real producers (pyca, RFC 9579) emit it.
  std::uint64_t iterations = 1;
  auto iter = r.optional(TagClass::universal, kTagInteger, "MAC iterations");
  if (!iter) return tl::unexpected(iter.error());
  if (*iter) {
    GETCERT_TRY_ASSIGN(auto v, small_uint(**iter, "MAC iterations"));
    iterations = v;
  }

  GETCERT_TRY_ASSIGN(auto dr, children(digest_info, "MAC DigestInfo"));
  GETCERT_TRY_ASSIGN(auto alg, dr.expect(kTagSequence, "MAC algorithm"));
  GETCERT_TRY_ASSIGN(auto digest, dr.expect(kTagOctetString, "MAC value"));
  GETCERT_TRY_ASSIGN(auto digest_bytes, octet_string(digest, "MAC value"));
  mac.digest = std::move(digest_bytes);

  GETCERT_TRY_ASSIGN(auto ar, children(alg, "MAC algorithm"));
  GETCERT_TRY_ASSIGN(auto alg_oid, read_oid(ar, "MAC algorithm"));

  if (alg_oid == oids::kPbmac1) {
    mac.pbmac1 = true;
    GETCERT_TRY_ASSIGN(auto params, ar.expect(kTagSequence, "PBMAC1 parameters"));
    GETCERT_TRY(parse_pbmac1(params, max_iterations, mac));
    return mac;
  }
  mac.hash = hash_by_digest_oid(alg_oid);
  if (mac.hash == nullptr) {
    return fail(Errc::unsupported, "unsupported MAC digest algorithm " + describe_oid(alg_oid));
  }
  mac.salt = std::move(salt_bytes);
  mac.iterations = iterations;
  mac.info.algorithm = std::string(mac.hash->display);
  mac.info.iterations = iterations;
  mac.info.salt_length = mac.salt.size();
  GETCERT_TRY(check_iterations(iterations, max_iterations, "the MAC"));
  return mac;
}

std::uint64_t attempt_cost(const MacData& mac) noexcept {
  // Classic: one PKCS#12 KDF block of the MAC hash. PBMAC1: PBKDF2 blocks of its PRF.
  if (mac.pbmac1) return derivation_cost(mac.iterations, mac.key_length, mac.prf->output_size);
  return derivation_cost(mac.iterations, mac.hash->output_size, mac.hash->output_size);
}

Result<std::optional<std::size_t>> verify_mac(const MacData& mac,
                                              const std::vector<PasswordForms>& candidates,
                                              Bytes auth_safe, WorkBudget& budget,
                                              std::size_t& variant) {
  GETCERT_TRY_ASSIGN(auto md, fetch_digest(mac.hash->openssl_name, mac.hash->display));
  const auto md_size = static_cast<std::size_t>(EVP_MD_get_size(md.get()));
  if (mac.digest.size() != md_size) return std::optional<std::size_t>{};
  internal::EvpMdPtr prf;
  if (mac.pbmac1) {
    GETCERT_TRY_ASSIGN(auto p, fetch_digest(mac.prf->openssl_name, mac.prf->display));
    prf = std::move(p);
  }
  // Forms with the same bytes derive the same key (PBKDF2 sees the absent and the empty
  // password alike): each distinct one is paid for and tried once.
  std::vector<const SecureBytes*> tried;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    // PBMAC1 runs PBKDF2 over the password bytes; the classic MAC the PKCS#12 KDF over the
    // BMPString.
    const auto& variants = mac.pbmac1 ? candidates[i].raw : candidates[i].bmp;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const SecureBytes& bytes = variants[v].bytes;
      if (std::any_of(tried.begin(), tried.end(),
                      [&](const SecureBytes* t) { return *t == bytes; })) {
        continue;
      }
      GETCERT_TRY(budget.spend(attempt_cost(mac), tried.empty(), "the MAC"));
      tried.push_back(&bytes);
      auto key =
          mac.pbmac1
              ? pbkdf2(prf.get(), variants[v].bytes, mac.salt, mac.iterations, mac.key_length)
              : pkcs12_kdf(md.get(), variants[v].bytes, mac.salt, 3, mac.iterations, md_size);
      if (!key) return tl::unexpected(key.error());
      GETCERT_TRY_ASSIGN(auto value, hmac(md.get(), *key, auth_safe));
      if (equal_constant_time(value, mac.digest)) {
        variant = v;
        return std::optional<std::size_t>{i};
      }
    }
  }
  return std::optional<std::size_t>{};
}

}  // namespace getcert::pkcs12::detail
