// Key rules: the strength, algorithms and shapes of every key and signature on the path.
//  - Strength: OpenSSL's security level 2 (too_weak), the floor OpenSSL 3 clients, Chromium and
//    rustls-webpki hold (RSA under 2048 bits is refused by rustls-webpki, SHA-1 by Chromium), and
//    under it getcert's rfc5280 floor (broken_algorithm): RFC 5280 sets no key size, so that
//    profile refuses only what is broken in practice. Path validation runs at OpenSSL's level 0
//    and these rules weigh strength per profile, so the same path answers every profile.
//  - Shapes (BR 6.1.5, 6.1.6): DSA, RSA moduli and exponents, EC curves and their encoding.
//    The SubjectPublicKeyInfo is read as encoded, not through a decoded key, so the answer does
//    not depend on which OpenSSL key code (provider or built-in) decoded it.

#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "internal/owners.hpp"
#include "verify/rules.hpp"

namespace getcert::detail {
namespace {

// OpenSSL's security level 2 (x509_vfy.c check_key_level, check_sig_level).
constexpr int kLevel2Bits = 112;
// getcert's rfc5280 floor: RSA and DSA of 1024 bits, EC of 160 (80 bits of security).
constexpr int kFloorBits = 80;

bool broken_digest(int mdnid) { return mdnid == NID_md5 || mdnid == NID_md2 || mdnid == NID_md4; }

void check_strength(const PathView& path, std::size_t d, std::vector<RuleFinding>& out) {
  X509* cert = path.certs[d];
  const auto depth = static_cast<int>(d);
  if (EVP_PKEY* key = X509_get0_pubkey(cert); key != nullptr) {
    const int bits = EVP_PKEY_get_security_bits(key);
    if (bits > 0 && bits < kLevel2Bits) {
      const int id = EVP_PKEY_get_base_id(key);
      const char* type = id == EVP_PKEY_EC ? "EC" : id == EVP_PKEY_DSA ? "DSA" : "RSA";
      const std::string what = path.who(d) + " has a weak key: " + type + " " +
                               std::to_string(EVP_PKEY_get_bits(key)) + " bits";
      if (bits < kFloorBits) {
        out.push_back({depth, ProblemCode::broken_algorithm,
                       what + " (no client accepts RSA or DSA under 1024 bits, EC under 160)"});
      }
      out.push_back({depth, ProblemCode::too_weak,
                     what + " (clients require at least 2048 bits for RSA and DSA, 224 for EC; "
                            "OpenSSL security level 2)"});
    }
  }
  // Every signature but the trust anchor's own, as OpenSSL judges them.
  if (d + 1 >= path.certs.size()) return;
  int mdnid = NID_undef;
  int secbits = -1;
  if (X509_get_signature_info(cert, &mdnid, nullptr, &secbits, nullptr) != 1) return;
  const int sig = X509_get_signature_nid(cert);
  const char* md = sig != NID_undef ? OBJ_nid2ln(sig) : "an unknown algorithm";
  if (broken_digest(mdnid)) {
    out.push_back({depth, ProblemCode::broken_algorithm,
                   path.who(d) + " is signed with " + md +
                       ", which is broken (RFC 6151; no client accepts it)"});
  }
  if (secbits >= 0 && secbits < kLevel2Bits) {
    out.push_back({depth, ProblemCode::too_weak,
                   path.who(d) + " is signed with a weak algorithm, " + md +
                       " (clients reject SHA-1 and MD5 signatures below the trust anchor)"});
  }
}

// The SubjectPublicKeyInfo as encoded: algorithm, parameters and the key's bit string.
struct Spki {
  int algorithm = NID_undef;
  int parameter_type = V_ASN1_UNDEF;  // V_ASN1_OBJECT: a named curve; V_ASN1_SEQUENCE: explicit
  int curve = NID_undef;
  const unsigned char* key = nullptr;
  int key_len = 0;
};

Spki spki_of(X509* cert) {
  Spki out;
  const ASN1_OBJECT* alg = nullptr;
  const void* param = nullptr;
  const X509_ALGOR* algor = nullptr;
  X509_PUBKEY* pub = X509_get_X509_PUBKEY(cert);
  if (pub == nullptr ||
      X509_PUBKEY_get0_param(nullptr, &out.key, &out.key_len, const_cast<X509_ALGOR**>(&algor),
                             pub) != 1 ||
      algor == nullptr) {
    return out;
  }
  X509_ALGOR_get0(&alg, &out.parameter_type, &param, algor);
  out.algorithm = OBJ_obj2nid(alg);
  if (out.parameter_type == V_ASN1_OBJECT && param != nullptr) {
    out.curve = OBJ_obj2nid(static_cast<const ASN1_OBJECT*>(param));
  }
  return out;
}

// The public exponent of an RSAPublicKey (SEQUENCE { modulus, publicExponent }), or nullopt.
struct Exponent {
  bool odd = false;
  bool below_3 = false;
};
std::optional<Exponent> rsa_exponent(const Spki& spki) {
  const unsigned char* p = spki.key;
  const internal::Asn1TypeStackPtr seq(d2i_ASN1_SEQUENCE_ANY(nullptr, &p, spki.key_len));
  if (!seq || sk_ASN1_TYPE_num(seq.get()) != 2) return std::nullopt;
  const ASN1_TYPE* e = sk_ASN1_TYPE_value(seq.get(), 1);
  if (e->type != V_ASN1_INTEGER) return std::nullopt;
  const ASN1_INTEGER* value = e->value.integer;
  const int len = ASN1_STRING_length(value);
  const unsigned char* bytes = ASN1_STRING_get0_data(value);
  if (len <= 0) return Exponent{false, true};
  Exponent out;
  out.odd = (bytes[len - 1] & 1U) != 0;
  std::int64_t small = 0;
  out.below_3 = ASN1_INTEGER_get_int64(&small, value) == 1 && small < 3;
  return out;
}

void check_shape(const PathView& path, std::size_t d, std::vector<RuleFinding>& out) {
  X509* cert = path.certs[d];
  const auto depth = static_cast<int>(d);
  const Spki spki = spki_of(cert);
  const EVP_PKEY* key = X509_get0_pubkey(cert);
  if (spki.algorithm == NID_dsa) {
    out.push_back({depth, ProblemCode::dsa_key,
                   path.who(d) + " has a DSA key (BR 6.1.5: RSA or ECDSA only; Go, rustls, "
                                 "Chromium and TLS 1.3 do not accept DSA)"});
  } else if (spki.algorithm == NID_rsaEncryption || spki.algorithm == NID_rsassaPss) {
    if (key != nullptr && EVP_PKEY_get_bits(key) % 8 != 0) {
      out.push_back({depth, ProblemCode::rsa_modulus_not_multiple_of_8,
                     path.who(d) + " has an RSA modulus of " +
                         std::to_string(EVP_PKEY_get_bits(key)) +
                         " bits, not a multiple of 8 (BR 6.1.5)"});
    }
    if (const auto e = rsa_exponent(spki); e && (!e->odd || e->below_3)) {
      out.push_back({depth, ProblemCode::rsa_exponent_invalid,
                     path.who(d) + " has an RSA public exponent that is " +
                         (e->below_3 ? "below 3" : "even") +
                         " (RFC 8017 3.1: odd and at least 3; BR 6.1.6; rustls-webpki and "
                         "Chromium refuse it)"});
    }
  } else if (spki.algorithm == NID_X9_62_id_ecPublicKey) {
    if (spki.parameter_type != V_ASN1_OBJECT) {
      out.push_back({depth, ProblemCode::ec_explicit_parameters,
                     path.who(d) + " has an EC key with explicit curve parameters instead of a "
                                   "named curve (RFC 5480 2.1.1: namedCurve only; Chromium, "
                                   "Go and rustls-webpki refuse it)"});
    } else if (spki.curve != NID_X9_62_prime256v1 && spki.curve != NID_secp384r1 &&
               spki.curve != NID_secp521r1) {
      const char* name = spki.curve != NID_undef ? OBJ_nid2sn(spki.curve) : "an unknown curve";
      out.push_back({depth, ProblemCode::ec_curve_not_allowed,
                     path.who(d) + " has an EC key on " + name +
                         " (BR 6.1.5: P-256, P-384 or P-521 only; Chromium and rustls-webpki "
                         "refuse other curves)"});
    }
    // The point's first octet: 0x04 uncompressed; 0x02 or 0x03 compressed (RFC 5480 2.2).
    if (spki.key_len > 0 && (spki.key[0] == 0x02 || spki.key[0] == 0x03)) {
      out.push_back({depth, ProblemCode::ec_point_compressed,
                     path.who(d) + " has an EC key whose point is compressed (RFC 5480 2.2 "
                                   "makes that optional; Firefox, Go and rustls-webpki refuse "
                                   "it)"});
    }
  }
}

// What a browser can do with a server's leaf key in a handshake (tests/differential measures
// it): no EdDSA in either browser, no P-521 in Chromium, and an ECDSA key must be allowed
// digitalSignature (Chromium: illegal_parameter).
void check_browser_leaf(const PathView& path, std::vector<RuleFinding>& out) {
  if (path.purpose != Purpose::server || path.certs.size() < 2) return;
  X509* leaf = path.certs.front();
  const Spki spki = spki_of(leaf);
  const bool eddsa = spki.algorithm == NID_ED25519 || spki.algorithm == NID_ED448;
  const bool p521 = spki.algorithm == NID_X9_62_id_ecPublicKey && spki.curve == NID_secp521r1;
  if (eddsa || p521) {
    out.push_back({0, ProblemCode::leaf_key_not_in_browsers,
                   path.who(0) + " has " + (eddsa ? "an EdDSA" : "a P-521") + " key, for which " +
                       (eddsa ? "neither Chromium nor Firefox" : "Chromium") +
                       " offers a TLS signature scheme: the handshake fails there"});
  }
  if (spki.algorithm == NID_X9_62_id_ecPublicKey &&
      (X509_get_extension_flags(leaf) & EXFLAG_KUSAGE) != 0 &&
      (X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE) == 0) {
    out.push_back({0, ProblemCode::ec_leaf_without_digital_signature,
                   path.who(0) + " has an EC key whose keyUsage lacks digitalSignature, which "
                                 "an ECDSA handshake signature needs (BR 7.1.2.7.11; Chromium "
                                 "refuses it)"});
  }
}

}  // namespace

std::vector<RuleFinding> check_key_rules(const PathView& path) {
  std::vector<RuleFinding> out;
  for (std::size_t d = 0; d < path.certs.size(); ++d) {
    check_strength(path, d, out);
    check_shape(path, d, out);
  }
  check_browser_leaf(path, out);
  return out;
}

}  // namespace getcert::detail
