// Certificate profile rules: what each certificate of the path must look like for its place in
// it (RFC 5280 4.1 and 4.2, CA/B Forum Baseline Requirements 7.1.2).

#include <openssl/x509v3.h>

#include "internal/owners.hpp"
#include "verify/rules.hpp"

namespace getcert::detail {
namespace {

bool has_ext(X509* cert, int nid) { return X509_get_ext_by_NID(cert, nid, -1) >= 0; }

bool ext_critical(X509* cert, int nid) {
  const int at = X509_get_ext_by_NID(cert, nid, -1);
  return at >= 0 && X509_EXTENSION_get_critical(X509_get_ext(cert, at)) != 0;
}

// RFC 5280 4.1.2.2: a positive integer of at most 20 octets (DER content, sign octet included).
std::string serial_problem(X509* cert) {
  const ASN1_INTEGER* serial = X509_get0_serialNumber(cert);
  const int len = ASN1_STRING_length(serial);
  const unsigned char* bytes = ASN1_STRING_get0_data(serial);
  if (ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER) return "is negative";
  bool zero = true;
  for (int i = 0; i < len; ++i) zero = zero && bytes[i] == 0;
  if (zero) return "is zero";
  const int octets = len + ((bytes[0] & 0x80) != 0 ? 1 : 0);
  if (octets > 20) return "is " + std::to_string(octets) + " octets long";
  return {};
}

void check_eku(const PathView& path, std::size_t d, std::vector<RuleFinding>& out) {
  X509* cert = path.certs[d];
  const auto depth = static_cast<int>(d);
  const std::string who = path.who(d);
  const bool leaf = d == 0;
  if (!has_ext(cert, NID_ext_key_usage)) {
    if (leaf && path.purpose != Purpose::any && path.certs.size() > 1) {
      out.push_back({depth, ProblemCode::leaf_missing_eku,
                     who + " has no extendedKeyUsage, so it is valid for every purpose (BR "
                           "7.1.2.7.10 requires it, with serverAuth)"});
    }
    return;
  }
  if (path.is_root(d) && d > 0) {
    out.push_back({depth, ProblemCode::root_has_eku,
                   who + " is a root with extendedKeyUsage (BR 7.1.2.1.2: MUST NOT be present)"});
  }
  if (ext_critical(cert, NID_ext_key_usage) && !path.is_root(d)) {
    out.push_back({depth, ProblemCode::eku_critical,
                   who + " marks extendedKeyUsage critical (BR 7.1.2.7.10 and 7.1.2.10.6: "
                         "MUST NOT be critical)"});
  }
  if (!leaf) return;
  const internal::ExtKeyUsagePtr eku(static_cast<EXTENDED_KEY_USAGE*>(
      X509_get_ext_d2i(cert, NID_ext_key_usage, nullptr, nullptr)));
  for (int i = 0; eku && i < sk_ASN1_OBJECT_num(eku.get()); ++i) {
    if (OBJ_obj2nid(sk_ASN1_OBJECT_value(eku.get(), i)) == NID_anyExtendedKeyUsage) {
      out.push_back({depth, ProblemCode::leaf_any_eku,
                     who + " has anyExtendedKeyUsage (BR 7.1.2.7.10: MUST NOT be present in a "
                           "subscriber certificate)"});
      break;
    }
  }
}

void check_key_ids(const PathView& path, std::size_t d, std::vector<RuleFinding>& out) {
  X509* cert = path.certs[d];
  const auto depth = static_cast<int>(d);
  const std::string who = path.who(d);
  const bool root = path.is_root(d) && d > 0;
  if (d > 0 && !has_ext(cert, NID_subject_key_identifier)) {
    out.push_back({depth, ProblemCode::missing_subject_key_id,
                   who + " is a CA without subjectKeyIdentifier (RFC 5280 4.2.1.2: MUST be "
                         "present in CA certificates)"});
  }
  if (!root && !path.is_root(d) && !has_ext(cert, NID_authority_key_identifier)) {
    out.push_back({depth, ProblemCode::missing_authority_key_id,
                   who + " has no authorityKeyIdentifier (RFC 5280 4.2.1.1: MUST be present "
                         "except in self-signed CA certificates)"});
  }
  if (!root || !has_ext(cert, NID_authority_key_identifier)) return;
  const internal::AuthorityKeyIdPtr aki(static_cast<AUTHORITY_KEYID*>(
      X509_get_ext_d2i(cert, NID_authority_key_identifier, nullptr, nullptr)));
  if (aki && (aki->issuer != nullptr || aki->serial != nullptr)) {
    out.push_back({depth, ProblemCode::root_aki_issuer_serial,
                   who + " is a root whose authorityKeyIdentifier names an issuer and serial "
                         "(BR 7.1.2.1.3: keyIdentifier only)"});
  }
  if (!aki || aki->keyid == nullptr) {
    out.push_back({depth, ProblemCode::root_aki_without_key_id,
                   who + " is a root whose authorityKeyIdentifier has no keyIdentifier (RFC 5280 "
                         "4.2.1.1, BR 7.1.2.1.3)"});
    return;
  }
  const ASN1_OCTET_STRING* ski = X509_get0_subject_key_id(cert);
  if (ski == nullptr || ASN1_OCTET_STRING_cmp(ski, aki->keyid) != 0) {
    out.push_back({depth, ProblemCode::root_aki_mismatch,
                   who + " is a root whose authorityKeyIdentifier keyIdentifier is not its own "
                         "subjectKeyIdentifier (BR 7.1.2.1.3: MUST be identical)"});
  }
}

// The key uses TLS needs of the leaf for the purpose asked (the digitalSignature of an ECDHE or
// TLS 1.3 handshake, the keyEncipherment of RSA key exchange, keyAgreement of static ECDH), as
// OpenSSL's purpose check asks; verify.cpp leaves this part of the purpose to the rule, so the
// rfc5280 profile, for which RFC 5280 6.1 never looks at the leaf's keyUsage, only warns.
void check_leaf_key_usage(const PathView& path, std::vector<RuleFinding>& out) {
  if (path.purpose == Purpose::any || path.certs.empty()) return;
  X509* leaf = path.certs.front();
  if (!leaf_key_usage_refuses(leaf, path.purpose)) return;
  out.push_back(
      {0, ProblemCode::leaf_key_usage_purpose,
       path.who(0) + " has a keyUsage that allows no TLS " +
           (path.purpose == Purpose::server ? "server" : "client") + " use of its key (" +
           (path.purpose == Purpose::server ? "digitalSignature, keyEncipherment or keyAgreement"
                                            : "digitalSignature or keyAgreement") +
           "; RFC 5280 4.2.1.12)"});
}

// RFC 5280 4.2.1.9 and 6.1.4 (l, m): a CA's pathLenConstraint bounds the intermediates below
// it, not counting self-issued ones (subject and issuer the same name: a key rollover). Do
// clients exempt them? Chromium (its RFC 5280 path validation) does; Go's crypto/x509 counts
// every intermediate, and OpenSSL exempts only one whose AKI also matches its own SKI. So a
// path over the bound only by its self-issued intermediates is path_length_self_issued (fails
// webpki and openssl), and one over it by the RFC's count is path_length_exceeded (fails all).
void check_path_length(const PathView& path, std::vector<RuleFinding>& out) {
  for (std::size_t d = 2; d < path.certs.size(); ++d) {
    const internal::BasicConstraintsPtr bc(static_cast<BASIC_CONSTRAINTS*>(
        X509_get_ext_d2i(path.certs[d], NID_basic_constraints, nullptr, nullptr)));
    if (!bc || bc->ca == 0 || bc->pathlen == nullptr) continue;
    const long limit = ASN1_INTEGER_get(bc->pathlen);
    if (limit < 0) continue;
    std::size_t counted = 0;
    for (std::size_t below = 1; below < d; ++below) {
      X509* c = path.certs[below];
      if (X509_NAME_cmp(X509_get_subject_name(c), X509_get_issuer_name(c)) != 0) ++counted;
    }
    const std::size_t all = d - 1;
    const auto bound = static_cast<std::size_t>(limit);
    const auto depth = static_cast<int>(d);
    if (counted > bound) {
      out.push_back({depth, ProblemCode::path_length_exceeded,
                     path.who(d) + " allows " + std::to_string(bound) +
                         " intermediate CA(s) below it (pathLenConstraint), and the path has " +
                         std::to_string(counted) + " (RFC 5280 4.2.1.9)"});
    } else if (all > bound) {
      out.push_back({depth, ProblemCode::path_length_self_issued,
                     path.who(d) + " allows " + std::to_string(bound) +
                         " intermediate CA(s) below it (pathLenConstraint); the path has " +
                         std::to_string(all) + ", " + std::to_string(all - counted) +
                         " of them self-issued, which RFC 5280 4.2.1.9 does not count and Go "
                         "and OpenSSL do"});
    }
  }
}

// Firefox (mozilla::pkix) and rustls-webpki build paths of at most 6 intermediates: a longer
// one fails there whatever else holds.
constexpr std::size_t kBrowserIntermediates = 6;
void check_browser_depth(const PathView& path, std::vector<RuleFinding>& out) {
  if (!path.anchored || path.certs.size() < 2) return;
  const std::size_t intermediates = path.certs.size() - 2;
  if (intermediates <= kBrowserIntermediates) return;
  out.push_back({static_cast<int>(path.certs.size() - 2), ProblemCode::too_many_intermediates,
                 "the path has " + std::to_string(intermediates) +
                     " intermediate CAs; Firefox and rustls-webpki build paths of at most 6"});
}

// VerifyOptions::max_depth: the intermediates between the leaf and the anchor, self-issued ones
// (a key rollover: subject and issuer the same name) not counted, as RFC 5280 6.1.4 (l) does not
// count them; x509-limbo's max_chain_depth counts the same way.
void check_max_depth(const PathView& path, std::vector<RuleFinding>& out) {
  if (!path.max_intermediates || path.certs.size() < 2) return;
  const std::size_t end = path.anchored ? path.certs.size() - 1 : path.certs.size();
  std::size_t counted = 0;
  for (std::size_t d = 1; d < end; ++d) {
    X509* c = path.certs[d];
    if (X509_NAME_cmp(X509_get_subject_name(c), X509_get_issuer_name(c)) != 0) ++counted;
  }
  if (counted <= static_cast<std::size_t>(*path.max_intermediates)) return;
  out.push_back({static_cast<int>(end - 1), ProblemCode::chain_too_long,
                 "the path to a trust anchor has " + std::to_string(counted) +
                     " intermediate CAs (self-issued ones not counted), more than the maximum "
                     "depth of " +
                     std::to_string(*path.max_intermediates) + " allows (at " + path.who(end - 1) +
                     ")"});
}

}  // namespace

bool leaf_key_usage_refuses(X509* leaf, Purpose purpose) {
  if (purpose == Purpose::any) return false;
  const std::uint32_t flags = X509_get_extension_flags(leaf);
  if ((flags & EXFLAG_KUSAGE) == 0) return false;
  const std::uint32_t needed = purpose == Purpose::server
                                   ? KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT | KU_KEY_AGREEMENT
                                   : KU_DIGITAL_SIGNATURE | KU_KEY_AGREEMENT;
  return (X509_get_key_usage(leaf) & needed) == 0;
}

std::vector<RuleFinding> check_profile_rules(const PathView& path) {
  std::vector<RuleFinding> out;
  check_path_length(path, out);
  check_max_depth(path, out);
  check_browser_depth(path, out);
  check_leaf_key_usage(path, out);
  for (std::size_t d = 0; d < path.certs.size(); ++d) {
    X509* cert = path.certs[d];
    const auto depth = static_cast<int>(d);
    const std::string who = path.who(d);
    const bool leaf = d == 0;
    if (leaf && X509_get_version(cert) == X509_VERSION_1) {
      out.push_back({depth, ProblemCode::v1_certificate,
                     who + " is a version 1 certificate, which carries no extensions (BR 7.1.1: "
                           "version 3 only; RFC 5280 4.1.2.1)"});
    }
    int bc_critical = -1;
    const internal::BasicConstraintsPtr bc(static_cast<BASIC_CONSTRAINTS*>(
        X509_get_ext_d2i(cert, NID_basic_constraints, &bc_critical, nullptr)));
    const bool ca = bc && bc->ca != 0;
    if (leaf && ca && path.certs.size() > 1) {
      out.push_back({depth, ProblemCode::leaf_is_ca,
                     who + " is used as the end-entity certificate but is a CA (basicConstraints "
                           "cA=TRUE; BR 7.1.2.7.8; RFC 5280 allows it)"});
    }
    if (leaf && !ca && (X509_get_key_usage(cert) & KU_KEY_CERT_SIGN) != 0 &&
        has_ext(cert, NID_key_usage)) {
      out.push_back({depth, ProblemCode::leaf_key_cert_sign,
                     who + " asserts keyCertSign without basicConstraints cA=TRUE (RFC 5280 "
                           "4.2.1.3 and 4.2.1.9)"});
    }
    if (path.is_root(d) && d > 0) {
      if (!bc) {
        out.push_back({depth, ProblemCode::root_basic_constraints_missing,
                       who + " is a root without basicConstraints (RFC 5280 4.2.1.9, BR "
                             "7.1.2.1.4)"});
      } else if (bc_critical == 0) {
        out.push_back({depth, ProblemCode::root_basic_constraints_not_critical,
                       who + " is a root whose basicConstraints is not critical (RFC 5280 "
                             "4.2.1.9: MUST be critical in CA certificates)"});
      }
    }
    check_eku(path, d, out);
    check_key_ids(path, d, out);
    if (has_ext(cert, NID_policy_constraints) && !ext_critical(cert, NID_policy_constraints)) {
      out.push_back({depth, ProblemCode::policy_constraints_not_critical,
                     who + " has a non-critical policyConstraints extension (RFC 5280 4.2.1.11: "
                           "conforming CAs MUST mark it critical)"});
    }
    if (X509_NAME_entry_count(X509_get_subject_name(cert)) == 0 &&
        !ext_critical(cert, NID_subject_alt_name)) {
      out.push_back({depth, ProblemCode::empty_subject_san_not_critical,
                     who + " has an empty subject and a subjectAltName that is absent or not "
                           "critical (RFC 5280 4.2.1.6: MUST be critical then)"});
    }
    if (has_ext(cert, NID_info_access)) {
      const internal::AuthorityInfoAccessPtr aia(static_cast<AUTHORITY_INFO_ACCESS*>(
          X509_get_ext_d2i(cert, NID_info_access, nullptr, nullptr)));
      if (!aia || sk_ACCESS_DESCRIPTION_num(aia.get()) == 0) {
        out.push_back({depth, ProblemCode::malformed_aia,
                       who + " has an authorityInfoAccess extension that does not decode or is "
                             "empty (RFC 5280 4.2.2.1: a SEQUENCE SIZE (1..MAX))"});
      }
    }
    if (std::string why = serial_problem(cert); !why.empty()) {
      out.push_back({depth, ProblemCode::bad_serial_number,
                     who + " has a serial number that " + why +
                         " (RFC 5280 4.1.2.2: a positive integer of at most 20 octets)"});
    }
  }
  return out;
}

}  // namespace getcert::detail
