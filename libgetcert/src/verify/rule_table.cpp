// The rules table (see rule_table.hpp). Each weight answers "which clients refuse this?", as
// tests/differential measures them (Chromium, Firefox, Go, rustls-webpki, OpenSSL, GnuTLS,
// Java, pyca) and docs/verification.md records:
//  - webpki: an error when at least one of Chromium, Firefox, Go or rustls-webpki refuses the
//    chain; a warning when only the Baseline Requirements, pyca or a strict OpenSSL do;
//  - openssl: an error only where an OpenSSL 3 client with default settings refuses, a warning
//    where a modern client would;
//  - rfc5280: an error only for an RFC 5280 MUST (or the documented key floor), a warning for
//    the rest, so nothing wrong is silent;
//  - cabf: RFC 5280 plus every Baseline Requirements certificate-profile rule as an error.

#include "verify/rule_table.hpp"

namespace getcert::detail {
namespace {

constexpr RuleLevel E = RuleLevel::error;
constexpr RuleLevel W = RuleLevel::warning;
constexpr RuleLevel N = RuleLevel::none;

constexpr Weights kFatal{E, E, E, E};
constexpr Weights kNotWeighed{N, N, N, N};

constexpr RuleRow path(std::string_view name, std::string_view section, std::string_view summary) {
  return {name, RuleKind::path, section, summary, kFatal};
}
constexpr RuleRow note(std::string_view name, RuleKind kind, std::string_view summary) {
  return {name, kind, "", summary, kNotWeighed};
}
constexpr RuleRow rule(std::string_view name, std::string_view section, std::string_view summary,
                       Weights w) {
  return {name, RuleKind::rule, section, summary, w};
}

// One row per code; the switch in rule_row() picks it. Kept apart from the switch so the rows
// read as a table.
constexpr RuleRow kExpired = path("expired", "RFC 5280 4.1.2.5", "past notAfter");
constexpr RuleRow kNotYetValid = path("not_yet_valid", "RFC 5280 4.1.2.5", "before notBefore");
constexpr RuleRow kMissingIntermediate =
    path("missing_intermediate", "RFC 5280 6.1", "the server omits an intermediate");
constexpr RuleRow kUnknownIssuer = path("unknown_issuer", "RFC 5280 6.1", "no issuer found");
constexpr RuleRow kSelfSigned =
    path("self_signed", "RFC 5280 6.1", "an untrusted self-signed leaf");
constexpr RuleRow kUntrustedRoot = path("untrusted_root", "RFC 5280 6.1", "a root not trusted");
constexpr RuleRow kBadSignature = path("bad_signature", "RFC 5280 6.1.3", "a signature that fails");
constexpr RuleRow kWrongPurpose =
    path("wrong_purpose", "RFC 5280 4.2.1.12", "keyUsage or EKU forbids the purpose");
constexpr RuleRow kInvalidCa = path("invalid_ca", "RFC 5280 6.1.4", "an issuer that is no CA");
constexpr RuleRow kPathLength =
    path("path_length_exceeded", "RFC 5280 4.2.1.9", "pathLenConstraint exceeded");
constexpr RuleRow kRevoked = path("revoked", "RFC 5280 6.3, RFC 6960", "revoked");
constexpr RuleRow kHostname =
    path("hostname_mismatch", "RFC 6125 6.4", "the name is not the leaf's");
constexpr RuleRow kIp = path("ip_mismatch", "RFC 6125 6.2", "the address is not the leaf's");
constexpr RuleRow kPin = path("pin_mismatch", "RFC 7469", "no certificate matches a pin");
constexpr RuleRow kBadStaple = path("bad_ocsp_staple", "RFC 6960", "the stapled response is bad");
constexpr RuleRow kRevocationUnavailable =
    path("revocation_unavailable", "--require-revocation", "no revocation status");
constexpr RuleRow kMustStaple =
    path("must_staple_missing", "RFC 7633", "must-staple without a staple");
constexpr RuleRow kNameConstraintViolation =
    path("name_constraint_violation", "RFC 5280 4.2.1.10", "a name outside the constraints");
constexpr RuleRow kCritical =
    path("unhandled_critical_extension", "RFC 5280 4.2", "an unknown critical extension");
constexpr RuleRow kX509Error = path("x509_error", "OpenSSL", "another OpenSSL verify error");
constexpr RuleRow kCnFallback =
    note("cn_fallback", RuleKind::warning, "the name matched through the CN");
constexpr RuleRow kAnchorNotSelfSigned =
    note("anchor_not_self_signed", RuleKind::warning, "trusted at an intermediate");
constexpr RuleRow kAiaFetchFailed =
    note("aia_fetch_failed", RuleKind::warning, "a missing intermediate could not be downloaded");
constexpr RuleRow kRevocationUnchecked =
    note("revocation_unchecked", RuleKind::warning, "no revocation status (not required)");
constexpr RuleRow kRootSent = note("root_sent", RuleKind::chain_issue, "the server sends its root");
constexpr RuleRow kOutOfOrder = note("out_of_order", RuleKind::chain_issue, "sent out of order");
constexpr RuleRow kDuplicate = note("duplicate", RuleKind::chain_issue, "sent twice");
constexpr RuleRow kUnrelated = note("unrelated", RuleKind::chain_issue, "on no path");
constexpr RuleRow kExpiredUnneeded =
    note("expired_unneeded", RuleKind::chain_issue, "expired and not needed");

//                                                              webpki openssl rfc5280 cabf
constexpr RuleRow kTooWeak = rule(
    "too_weak", "OpenSSL security level 2, BR 6.1.5",
    "a key under 112 bits of security (RSA/DSA < 2048, EC < 224) or a SHA-1 signature below the "
    "anchor",
    {E, E, W, E});
constexpr RuleRow kBrokenAlgorithm =
    rule("broken_algorithm", "RFC 6151, getcert's rfc5280 floor",
         "RSA or DSA under 1024 bits, EC under 160, an MD2 or MD5 signature below the anchor",
         {E, E, E, E});
constexpr RuleRow kNoSan = rule("no_subject_alt_name", "BR 7.1.2.7.12, RFC 9525 6.3",
                                "a server leaf without subjectAltName", {E, N, E, E});
// Must the CN be one of the SANs? BR 7.1.4.3 says so, character for character; no client
// looks (every one matches SANs only when there are SANs), so only cabf refuses it.
constexpr RuleRow kCnNotInSans =
    rule("cn_not_in_sans", "BR 7.1.4.3", "the CN is not one of the SANs", {W, N, W, E});
constexpr RuleRow kCnIp = rule("cn_ip_not_canonical", "BR 7.1.4.3",
                               "a CN holding an IP address in a non-canonical form", {W, N, W, E});
constexpr RuleRow kUnderscore = rule("dns_name_underscore", "RFC 5280 4.2.1.6, BR 7.1.4.2",
                                     "an underscore in a DNS SAN", {W, N, E, E});
constexpr RuleRow kWildcardSuffix =
    rule("wildcard_public_suffix", "BR 3.2.2.6",
         "a wildcard over an ICANN public suffix (Chromium refuses)", {E, W, W, E});
// The BRs make an explicit exception to RFC 5280 here (7.1.2.5.2: SHOULD be critical, MAY not
// be for legacy clients), so cabf warns where rfc5280 fails.
constexpr RuleRow kNcNotCritical =
    rule("name_constraints_not_critical", "RFC 5280 4.2.1.10 (BR 7.1.2.5.2 allows it)",
         "nameConstraints not critical", {W, N, E, W});
constexpr RuleRow kNcInLeaf = rule("name_constraints_in_leaf", "RFC 5280 4.2.1.10",
                                   "nameConstraints in an end entity", {W, W, E, E});
constexpr RuleRow kExcludedWildcard =
    rule("excluded_wildcard", "RFC 5280 4.2.1.10, CVE-2025-61727",
         "a wildcard SAN that expands into an excluded subtree", {E, W, E, E});
constexpr RuleRow kInvalidNc =
    rule("invalid_name_constraint", "RFC 5280 4.2.1.10",
         "nameConstraints that do not decode, or a wildcard dNSName subtree", {E, W, E, E});
constexpr RuleRow kEmptyNc = rule("empty_name_constraints", "RFC 5280 4.2.1.10",
                                  "nameConstraints with no subtrees", {E, W, E, E});
constexpr RuleRow kV1 = rule("v1_certificate", "BR 7.1.1", "a version 1 leaf", {E, W, W, E});
constexpr RuleRow kLeafIsCa = rule("leaf_is_ca", "BR 7.1.2.7.8 (RFC 5280 allows it)",
                                   "an end entity with cA=TRUE", {E, W, W, E});
constexpr RuleRow kLeafKeyCertSign = rule("leaf_key_cert_sign", "RFC 5280 4.2.1.3, 4.2.1.9",
                                          "keyCertSign without cA=TRUE", {W, W, E, E});
constexpr RuleRow kLeafMissingEku =
    rule("leaf_missing_eku", "BR 7.1.2.7.10", "a leaf without extendedKeyUsage", {W, N, W, E});
constexpr RuleRow kLeafAnyEku =
    rule("leaf_any_eku", "BR 7.1.2.7.10", "anyExtendedKeyUsage in a leaf", {E, N, W, E});
constexpr RuleRow kEkuCritical =
    rule("eku_critical", "BR 7.1.2.7.10", "extendedKeyUsage marked critical", {W, N, W, E});
constexpr RuleRow kRootHasEku =
    rule("root_has_eku", "BR 7.1.2.1.2", "a root with extendedKeyUsage", {W, N, W, E});
constexpr RuleRow kDsa = rule("dsa_key", "BR 6.1.5", "a DSA key", {E, W, W, E});
constexpr RuleRow kRsaMod8 = rule("rsa_modulus_not_multiple_of_8", "BR 6.1.5",
                                  "an RSA modulus not a multiple of 8 bits", {W, N, W, E});
constexpr RuleRow kRootBcMissing =
    rule("root_basic_constraints_missing", "RFC 5280 4.2.1.9, BR 7.1.2.1.4",
         "a root without basicConstraints", {E, W, E, E});
constexpr RuleRow kRootBcNotCritical =
    rule("root_basic_constraints_not_critical", "RFC 5280 4.2.1.9",
         "a root whose basicConstraints is not critical", {W, N, E, E});
constexpr RuleRow kMissingSki = rule("missing_subject_key_id", "RFC 5280 4.2.1.2",
                                     "a CA without subjectKeyIdentifier", {W, N, E, E});
// Must a leaf carry authorityKeyIdentifier? RFC 5280 4.2.1.1 tells conforming CAs to include it
// everywhere but in self-signed certificates; Chromium, Firefox, Go and webpki accept a leaf
// without it (measured), only pyca refuses, and test PKIs made with pyca/cryptography lack it
// first. So: a warning under webpki, an error where RFC 5280's MUSTs rule (rfc5280, cabf).
constexpr RuleRow kMissingAki = rule(
    "missing_authority_key_id", "RFC 5280 4.2.1.1",
    "a certificate other than a self-signed root without authorityKeyIdentifier", {W, N, E, E});
constexpr RuleRow kRootAkiIssuer = rule("root_aki_issuer_serial", "BR 7.1.2.1.3",
                                        "a root AKI naming issuer and serial", {W, N, W, E});
constexpr RuleRow kRootAkiNoKeyId = rule("root_aki_without_key_id", "RFC 5280 4.2.1.1",
                                         "a root AKI without keyIdentifier", {W, N, E, E});
constexpr RuleRow kEmptySubject =
    rule("empty_subject_san_not_critical", "RFC 5280 4.2.1.6",
         "an empty subject with a non-critical subjectAltName", {E, W, E, E});
constexpr RuleRow kMalformedAia = rule("malformed_aia", "RFC 5280 4.2.2.1",
                                       "an authorityInfoAccess that does not decode", {E, W, E, E});
constexpr RuleRow kBadSerial =
    rule("bad_serial_number", "RFC 5280 4.1.2.2",
         "a serial that is zero, negative or over 20 octets", {W, N, E, E});
constexpr RuleRow kBudget = rule("budget_exhausted", "rustls-webpki Budget",
                                 "a work bound reached on hostile input", kFatal);
constexpr RuleRow kChainTooLong = rule("chain_too_long", "--max-depth (OpenSSL's 100)",
                                       "more intermediates than the maximum depth", kFatal);
constexpr RuleRow kEmailMismatch =
    path("email_mismatch", "RFC 8398", "the leaf does not hold the --email address");
constexpr RuleRow kCrlProblem =
    path("crl_problem", "RFC 5280 6.3", "a --crl-file CRL that is stale or unsigned");
constexpr RuleRow kEcCurve =
    rule("ec_curve_not_allowed", "BR 6.1.5, rustls-webpki, Chromium",
         "an EC key on a curve other than P-256, P-384, P-521", {E, W, W, E});
constexpr RuleRow kEcExplicit = rule("ec_explicit_parameters", "RFC 5480 2.1.1",
                                     "an EC key with explicit curve parameters", {E, W, E, E});
constexpr RuleRow kPathLenSelfIssued =
    rule("path_length_self_issued", "RFC 5280 4.2.1.9 (Go and OpenSSL count them)",
         "a pathLenConstraint exceeded only when self-issued intermediates count", {E, E, W, W});
constexpr RuleRow kNcLeadingPeriod =
    rule("dns_constraint_leading_period", "RFC 5280 4.2.1.10",
         "a dNSName constraint with a leading period (every client reads it as subdomains only)",
         {W, N, E, E});
constexpr RuleRow kLeafKeyUsage =
    rule("leaf_key_usage_purpose", "RFC 5280 4.2.1.12, RFC 8446 4.4.2.2",
         "a leaf whose keyUsage allows no TLS use of its key", {E, E, W, E});
constexpr RuleRow kSanSyntax =
    rule("invalid_san_syntax", "RFC 5280 4.2.1.6",
         "a DNS SAN that is no host name, an email SAN no mailbox", {W, N, E, E});
constexpr RuleRow kPcNotCritical = rule("policy_constraints_not_critical", "RFC 5280 4.2.1.11",
                                        "policyConstraints not critical", {W, N, E, E});
constexpr RuleRow kRootAkiMismatch =
    rule("root_aki_mismatch", "BR 7.1.2.1.3", "a root whose AKI keyIdentifier is not its SKI",
         {W, N, W, E});
constexpr RuleRow kCrlNumber = rule("crl_number_missing", "RFC 5280 5.2.3",
                                    "a --crl-file CRL without cRLNumber", {W, N, E, E});
// Does a leaf key a browser cannot sign a handshake with fail the chain? Measured by
// tests/differential: Chromium offers no TLS signature scheme for P-521, neither browser one
// for Ed25519, so they never reach the chain; Go, rustls-webpki and OpenSSL connect and accept
// it. No verifier refuses the chain itself, and gRPC services use such keys, so it is a
// warning (a browser-facing site should hear it), not a verdict.
constexpr RuleRow kLeafKeyBrowsers = rule(
    "leaf_key_not_in_browsers", "Chromium and Firefox TLS signature schemes",
    "a server leaf key browsers cannot use in a handshake (Ed25519, Ed448, P-521)", {W, N, N, W});
// Chromium refuses an ECDSA server leaf without digitalSignature (illegal_parameter); BR
// 7.1.2.7.11 requires it.
constexpr RuleRow kEcLeafDs =
    rule("ec_leaf_without_digital_signature", "BR 7.1.2.7.11, Chromium",
         "an EC server leaf whose keyUsage lacks digitalSignature", {E, W, W, E});
// mozilla::pkix and rustls-webpki build paths of at most 6 intermediates.
constexpr RuleRow kTooManyIntermediates =
    rule("too_many_intermediates", "Firefox (mozilla::pkix), rustls-webpki",
         "more than 6 intermediates between the leaf and the anchor", {E, N, N, W});
// Measured by tests/differential: Firefox, Go and rustls-webpki (and GnuTLS and Java) refuse a
// compressed point, Chromium, OpenSSL and pyca take it. RFC 5480 2.2 makes the uncompressed
// form the one every implementation MUST support and compression optional.
constexpr RuleRow kEcCompressed =
    rule("ec_point_compressed", "RFC 5480 2.2; Firefox, Go, rustls-webpki",
         "an EC key whose point is compressed", {E, W, W, E});
constexpr RuleRow kRsaExponent = rule("rsa_exponent_invalid", "RFC 8017 3.1, BR 6.1.6",
                                      "an RSA exponent that is even or below 3", {E, W, E, E});

}  // namespace

RuleLevel Weights::of(Profile p) const {
  switch (p) {
    case Profile::webpki:
      return webpki;
    case Profile::openssl:
      return openssl;
    case Profile::rfc5280:
      return rfc5280;
    case Profile::cabf:
      return cabf;
  }
  return webpki;
}

const RuleRow& rule_row(ProblemCode code) noexcept {
  using P = ProblemCode;
  // One row a line, as a table reads.
  // clang-format off
  switch (code) {
    case P::expired: return kExpired;
    case P::not_yet_valid: return kNotYetValid;
    case P::missing_intermediate: return kMissingIntermediate;
    case P::unknown_issuer: return kUnknownIssuer;
    case P::self_signed: return kSelfSigned;
    case P::untrusted_root: return kUntrustedRoot;
    case P::bad_signature: return kBadSignature;
    case P::wrong_purpose: return kWrongPurpose;
    case P::invalid_ca: return kInvalidCa;
    case P::path_length_exceeded: return kPathLength;
    case P::revoked: return kRevoked;
    case P::too_weak: return kTooWeak;
    case P::hostname_mismatch: return kHostname;
    case P::ip_mismatch: return kIp;
    case P::pin_mismatch: return kPin;
    case P::bad_ocsp_staple: return kBadStaple;
    case P::revocation_unavailable: return kRevocationUnavailable;
    case P::must_staple_missing: return kMustStaple;
    case P::name_constraint_violation: return kNameConstraintViolation;
    case P::unhandled_critical_extension: return kCritical;
    case P::x509_error: return kX509Error;
    case P::cn_fallback: return kCnFallback;
    case P::anchor_not_self_signed: return kAnchorNotSelfSigned;
    case P::aia_fetch_failed: return kAiaFetchFailed;
    case P::revocation_unchecked: return kRevocationUnchecked;
    case P::root_sent: return kRootSent;
    case P::out_of_order: return kOutOfOrder;
    case P::duplicate: return kDuplicate;
    case P::unrelated: return kUnrelated;
    case P::expired_unneeded: return kExpiredUnneeded;
    case P::no_subject_alt_name: return kNoSan;
    case P::cn_not_in_sans: return kCnNotInSans;
    case P::cn_ip_not_canonical: return kCnIp;
    case P::dns_name_underscore: return kUnderscore;
    case P::wildcard_public_suffix: return kWildcardSuffix;
    case P::name_constraints_not_critical: return kNcNotCritical;
    case P::name_constraints_in_leaf: return kNcInLeaf;
    case P::excluded_wildcard: return kExcludedWildcard;
    case P::invalid_name_constraint: return kInvalidNc;
    case P::empty_name_constraints: return kEmptyNc;
    case P::v1_certificate: return kV1;
    case P::leaf_is_ca: return kLeafIsCa;
    case P::leaf_key_cert_sign: return kLeafKeyCertSign;
    case P::leaf_missing_eku: return kLeafMissingEku;
    case P::leaf_any_eku: return kLeafAnyEku;
    case P::eku_critical: return kEkuCritical;
    case P::root_has_eku: return kRootHasEku;
    case P::dsa_key: return kDsa;
    case P::rsa_modulus_not_multiple_of_8: return kRsaMod8;
    case P::root_basic_constraints_missing: return kRootBcMissing;
    case P::root_basic_constraints_not_critical: return kRootBcNotCritical;
    case P::missing_subject_key_id: return kMissingSki;
    case P::missing_authority_key_id: return kMissingAki;
    case P::root_aki_issuer_serial: return kRootAkiIssuer;
    case P::root_aki_without_key_id: return kRootAkiNoKeyId;
    case P::empty_subject_san_not_critical: return kEmptySubject;
    case P::malformed_aia: return kMalformedAia;
    case P::bad_serial_number: return kBadSerial;
    case P::budget_exhausted: return kBudget;
    case P::chain_too_long: return kChainTooLong;
    case P::email_mismatch: return kEmailMismatch;
    case P::crl_problem: return kCrlProblem;
    case P::ec_curve_not_allowed: return kEcCurve;
    case P::ec_explicit_parameters: return kEcExplicit;
    case P::rsa_exponent_invalid: return kRsaExponent;
    case P::broken_algorithm: return kBrokenAlgorithm;
    case P::path_length_self_issued: return kPathLenSelfIssued;
    case P::dns_constraint_leading_period: return kNcLeadingPeriod;
    case P::leaf_key_usage_purpose: return kLeafKeyUsage;
    case P::invalid_san_syntax: return kSanSyntax;
    case P::policy_constraints_not_critical: return kPcNotCritical;
    case P::root_aki_mismatch: return kRootAkiMismatch;
    case P::crl_number_missing: return kCrlNumber;
    case P::leaf_key_not_in_browsers: return kLeafKeyBrowsers;
    case P::ec_leaf_without_digital_signature: return kEcLeafDs;
    case P::too_many_intermediates: return kTooManyIntermediates;
    case P::ec_point_compressed: return kEcCompressed;
  }
  // clang-format on
  return kX509Error;
}

const std::array<ProblemCode, 77>& all_problem_codes() noexcept {
  // Codes are appended only, so the last one bounds the enum; the table test checks that every
  // value up to it has its own name.
  static const std::array<ProblemCode, 77> codes = [] {
    std::array<ProblemCode, 77> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<ProblemCode>(i);
    return out;
  }();
  static_assert(static_cast<std::size_t>(ProblemCode::ec_point_compressed) + 1 == 77,
                "a new ProblemCode needs a row in rule_row() and a larger all_problem_codes()");
  return codes;
}

std::string_view to_string(RuleLevel level) noexcept {
  switch (level) {
    case RuleLevel::error:
      return "E";
    case RuleLevel::warning:
      return "W";
    case RuleLevel::none:
      return "-";
  }
  return "-";
}

}  // namespace getcert::detail

namespace getcert {

std::string_view to_string(ProblemCode code) noexcept { return detail::rule_row(code).name; }

}  // namespace getcert
