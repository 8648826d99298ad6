#pragma once

// Offline verification of a certificate chain: trust store, hostname or IP, validity time and
// purpose. A chain that fails is a result (with reasons), never an error.
// Public header: C++17, no OpenSSL types.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"

namespace getcert {

enum class Purpose { server, client, any };

// The keyUsage bits of RFC 5280 4.2.1.3, for VerifyOptions::key_usages.
enum class KeyUsage {
  digital_signature,
  non_repudiation,  // contentCommitment
  key_encipherment,
  data_encipherment,
  key_agreement,
  key_cert_sign,
  crl_sign,
  encipher_only,
  decipher_only,
};
// RFC 5280's names: "digitalSignature", "nonRepudiation", "keyEncipherment", ...
std::string_view to_string(KeyUsage usage) noexcept;
// The usage named by to_string()'s text ("contentCommitment" too); nullopt otherwise.
std::optional<KeyUsage> key_usage_from_string(std::string_view name) noexcept;

// The steps a fetch or a verification goes through, each timed (FetchResult::timings).
// resolve: a name lookup; connect: one TCP connection attempt (to the target, a proxy or a
// download server); proxy: the CONNECT or SOCKS5 exchange; starttls: the plain-text
// preamble; handshake: the TLS handshake; verify: the whole verification, downloads included;
// aia, ocsp, crl: one HTTP download of verification.
enum class Step { resolve, connect, proxy, starttls, handshake, verify, aia, ocsp, crl };
std::string_view to_string(Step step) noexcept;  // "resolve", "connect", ...

struct StepTiming {
  Step step = Step::resolve;
  std::chrono::microseconds duration{0};
  // What the step was about and how it ended, for people: "localhost (2 addresses)",
  // "127.0.0.1 port 8443", "http://ocsp.test/ (failed: ...)". May quote a peer: escape it
  // before showing it on a terminal.
  std::string detail;
  bool ok = true;  // false: the step failed (the fetch may still go on, e.g. the next address)
};

// Called as each step ends, in order, including the steps of a fetch that fails in the end
// (whose timings a result cannot carry). fetch() and verify_chain() call it on the thread that
// called them; fetch_many() calls FetchOptions::on_step from its worker threads, several at
// once, so a callback given there must be thread-safe.
using StepCallback = std::function<void(const StepTiming&)>;

// One AIA, OCSP or CRL download as a DownloadPolicy sees it, before it is made (each redirect
// is one too).
struct DownloadTarget {
  std::string url;
  std::string host;  // as the URL names it
  std::uint16_t port = 80;
  // Every address `host` resolves to: the download connects to these and no others, so the
  // policy judges what is dialled. Empty when it goes through a proxy, which resolves the name.
  std::vector<std::string> addresses;
};
// nullopt lets the download go ahead; a text refuses it, and the download's error says why.
using DownloadPolicy = std::function<std::optional<std::string>(const DownloadTarget&)>;

struct TrustOptions {
  // Each replaces the system trust store when non-empty; both may be given.
  std::string ca_file;  // PEM bundle
  std::string ca_dir;   // OpenSSL hashed directory (c_rehash / openssl rehash)
};

// The rule set that decides a verdict (see docs: "Verification profiles").
enum class Profile {
  // "Works in every modern client": a chain fails when at least one of Chromium, Firefox, Go's
  // crypto/x509 or rustls-webpki refuses it; no subject CN fallback. Baseline Requirements
  // rules those clients do not enforce are warnings. The default.
  webpki,
  // What an OpenSSL 3 client with default settings accepts (gRPC C++ core, curl, Python's ssl):
  // a leaf without subjectAltName matches through its CN, with a warning.
  openssl,
  // RFC 5280's MUSTs and nothing else (path validation, AKI/SKI, serial numbers, critical
  // markings), with its own key and algorithm floor (see docs: "Profiles"); a CA certificate
  // may be a leaf, and SHA-1 or RSA-1024 are not refused, as RFC 5280 does not refuse them.
  rfc5280,
  // RFC 5280 plus every certificate-profile rule of the CA/B Forum Baseline Requirements as an
  // error: what a publicly trusted CA must issue, the gate a PKI team puts in CI (pyca's
  // verifier is this strict).
  cabf,
};
// "webpki", "openssl", "rfc5280", "cabf"
std::string_view to_string(Profile profile) noexcept;
// The profile named by to_string()'s text; nullopt for any other text.
std::optional<Profile> profile_from_string(std::string_view name) noexcept;

struct VerifyOptions {
  TrustOptions trust;
  Profile profile = Profile::webpki;
  // When the server omitted an intermediate, download it from the certificate's Authority
  // Information Access "CA Issuers" URL (http) to complete the chain, as browsers do. The
  // verdict then says the chain is valid only for clients that do the same. Off by default,
  // as in Go and rustls-webpki: the URL comes from the certificate being judged, so only a
  // caller that asks lets verify_chain() or fetch() touch the network for the chain (the CLI's
  // fetch asks; `show` and the gRPC verifier never do).
  bool fetch_missing = false;
  // Ask each certificate's OCSP responder (or, lacking one, its CRL distribution point).
  bool check_revocation = false;
  // With check_revocation: an unreachable responder or unknown status fails verification
  // instead of producing a warning.
  bool require_revocation = false;
  // Make the HTTP requests of the options above through this proxy (ConnectOptions::proxy's
  // syntax). fetch() uses its connection's proxy when this is empty.
  std::string proxy;
  // Limit for all HTTP requests made by the options above together.
  std::chrono::milliseconds network_timeout{10000};
  // "sha256/BASE64" SPKI pins; when non-empty, some certificate in the chain must match one.
  std::vector<std::string> pins;
  // A stapled OCSP response (DER) for the leaf, as received in the handshake.
  std::vector<std::uint8_t> ocsp_staple;
  // The chain comes from a TLS handshake and ocsp_staple is everything the server stapled,
  // so a leaf that demands stapling (TLS Feature status_request, "must-staple") fails without
  // one. fetch() sets it; for certificates read from files there is no handshake to judge.
  bool from_handshake = false;
  // DNS name or IP literal the leaf must be valid for; empty = skip the name check.
  std::string name;
  // More names: the leaf must be valid for at least one of `name` and these (fetch() then
  // checks these instead of the name it connected to).
  std::vector<std::string> names;
  // An email address the leaf must hold (rfc822Name SAN), for client certificates; empty = none.
  std::string email;
  // At most this many intermediate CAs between the leaf and the trust anchor (as openssl
  // verify -verify_depth counts); nullopt = OpenSSL's limit of 100.
  std::optional<int> max_depth;
  // CRL files (PEM or DER, any number of CRLs each) checked offline: every certificate whose
  // issuer has a CRL here is checked against it; one without is reported as unchecked.
  std::vector<std::string> crl_files;
  // Verify as of this time (seconds since the epoch); nullopt = now.
  std::optional<std::int64_t> at_time;
  Purpose purpose = Purpose::server;
  // keyUsage bits the leaf must assert (a leaf without the keyUsage extension asserts none),
  // beyond what `purpose` implies; a leaf lacking one fails with wrong_purpose.
  std::vector<KeyUsage> key_usages;
  // Told about each AIA, OCSP and CRL download as it ends (see StepCallback); may be empty.
  StepCallback on_step;
  // Asked before each AIA, OCSP and CRL download: the URLs come from the certificates being
  // judged, so a service that verifies what strangers present (getcert serve) keeps them to
  // the hosts, ports and addresses its operator allows. Empty: any http:// URL is fetched.
  DownloadPolicy download_policy;
};

// The outcome, most useful first. Only `valid` means every client with this trust store
// accepts the chain.
enum class Verdict {
  valid,
  // Complete only with an intermediate downloaded from the AIA URL, as browsers do; most
  // non-browser clients (gRPC, curl, OpenSSL) fail.
  valid_only_with_aia_fetch,
  // An intermediate the server did not send was taken from the local trust store.
  incomplete_chain,
  invalid,
};

// Stable snake_case codes of errors, warnings and chain issues. New codes are only appended.
enum class ProblemCode {
  // errors
  expired,
  not_yet_valid,
  missing_intermediate,
  unknown_issuer,
  self_signed,
  untrusted_root,
  bad_signature,
  wrong_purpose,
  invalid_ca,
  path_length_exceeded,
  revoked,
  too_weak,
  hostname_mismatch,
  ip_mismatch,
  pin_mismatch,
  bad_ocsp_staple,
  revocation_unavailable,
  must_staple_missing,
  name_constraint_violation,     // a name outside what an issuer's nameConstraints allow
  unhandled_critical_extension,  // a critical extension no verifier may ignore
  x509_error,                    // any other OpenSSL verification error; the reason says which
  // warnings
  cn_fallback,             // the name matched the subject CN of a leaf without any SAN
  anchor_not_self_signed,  // the trust anchor is an intermediate given in the trust options
  aia_fetch_failed,        // a missing intermediate could not be downloaded
  revocation_unchecked,    // revocation status could not be established (not required)
  // chain issues: what the server sends, judged against the verified path
  root_sent,         // the server sends its root (useless: clients have it or reject it)
  out_of_order,      // a certificate of the path is not right after the one it signed
  duplicate,         // the same certificate is sent twice
  unrelated,         // belongs to no path from the leaf
  expired_unneeded,  // expired, and not needed for the path
  // profile rules (an error or a warning depending on VerifyOptions::profile)
  no_subject_alt_name,             // the leaf has no subjectAltName (BR 7.1.2.7.12)
  cn_not_in_sans,                  // the leaf's CN is not one of its SANs (BR 7.1.4.3)
  cn_ip_not_canonical,             // the leaf's CN is an IP address in a non-canonical form
  dns_name_underscore,             // a DNS SAN holds '_' (RFC 5280 4.2.1.6, BR 7.1.4.2)
  wildcard_public_suffix,          // a wildcard SAN covers a public suffix (BR 3.2.2.6)
  name_constraints_not_critical,   // RFC 5280 4.2.1.10: MUST be critical
  name_constraints_in_leaf,        // RFC 5280 4.2.1.10: only in CA certificates
  excluded_wildcard,               // a wildcard SAN can expand into an excluded subtree
  invalid_name_constraint,         // a dNSName constraint that is no DNS name (".example.com")
  empty_name_constraints,          // both subtrees absent or empty (RFC 5280 4.2.1.10)
  v1_certificate,                  // a version 1 leaf (BR 7.1.2: v3 only)
  leaf_is_ca,                      // an end-entity certificate with cA=TRUE
  leaf_key_cert_sign,              // keyCertSign without cA=TRUE (RFC 5280 4.2.1.9)
  leaf_missing_eku,                // no extendedKeyUsage in the leaf (BR 7.1.2.7.10)
  leaf_any_eku,                    // anyExtendedKeyUsage in the leaf (BR 7.1.2.7.10)
  eku_critical,                    // extendedKeyUsage marked critical (BR 7.1.2.7.10)
  root_has_eku,                    // a root with extendedKeyUsage (BR 7.1.2.1.2)
  dsa_key,                         // a DSA key (BR 6.1.5: RSA or ECDSA only)
  rsa_modulus_not_multiple_of_8,   // BR 6.1.5
  root_basic_constraints_missing,  // RFC 5280 4.2.1.9, BR 7.1.2.1.2
  root_basic_constraints_not_critical,
  missing_subject_key_id,          // a CA without SKI (RFC 5280 4.2.1.2)
  missing_authority_key_id,        // a non-root without AKI (RFC 5280 4.2.1.1)
  root_aki_issuer_serial,          // a root AKI naming issuer and serial (BR 7.1.2.1.3)
  root_aki_without_key_id,         // a root AKI without keyIdentifier (RFC 5280 4.2.1.1)
  empty_subject_san_not_critical,  // RFC 5280 4.2.1.6: SAN MUST be critical then
  malformed_aia,                   // an authorityInfoAccess that does not decode
  bad_serial_number,               // zero, negative or over 20 octets (RFC 5280 4.1.2.2)
  budget_exhausted,        // hostile input: a work bound was reached (the reason says which)
  chain_too_long,          // more intermediates than VerifyOptions::max_depth allows
  email_mismatch,          // the leaf does not hold VerifyOptions::email
  crl_problem,             // a CRL from crl_files is expired, not yet valid or unsigned
  ec_curve_not_allowed,    // an EC key on a curve other than P-256, P-384 or P-521
  ec_explicit_parameters,  // an EC key with explicit (specifiedCurve) parameters
  rsa_exponent_invalid,    // an RSA public exponent that is even or below 3
  broken_algorithm,        // a key or signature broken in practice: RSA < 1024 bits, MD2, MD5
  // a pathLenConstraint exceeded only when self-issued intermediates count (RFC 5280 4.2.1.9
  // exempts them; Go and OpenSSL count them)
  path_length_self_issued,
  dns_constraint_leading_period,    // a dNSName constraint ".example.com" (RFC 5280 syntax)
  leaf_key_usage_purpose,           // the leaf's keyUsage allows no TLS use of its key
  invalid_san_syntax,               // a DNS or email SAN that is no host name or mailbox
  policy_constraints_not_critical,  // RFC 5280 4.2.1.11: MUST be critical
  root_aki_mismatch,                // a root whose AKI keyIdentifier is not its SKI (BR 7.1.2.1.3)
  crl_number_missing,               // a CRL without cRLNumber (RFC 5280 5.2.3)
  leaf_key_not_in_browsers,         // a server leaf key browsers cannot use (Ed25519, P-521)
  ec_leaf_without_digital_signature,  // an EC leaf whose keyUsage lacks digitalSignature
  too_many_intermediates,             // more than 6 intermediates (mozilla::pkix, webpki)
  ec_point_compressed,                // an EC key whose point is compressed (RFC 5480 2.2)
};

enum class RevocationStatus { good, revoked, unknown, error, none };

// Where revocation evidence came from. to_string(): "ocsp-staple", "ocsp", "crl", "none".
enum class RevocationSource {
  none,         // the certificate names no OCSP responder or CRL, or none was reachable
  ocsp_staple,  // the response the server stapled to its handshake
  ocsp,         // a response fetched from the certificate's OCSP responder
  crl,          // a CRL: fetched from the certificate's distribution point, or a --crl-file
};

std::string_view to_string(Verdict verdict) noexcept;
std::string_view to_string(ProblemCode code) noexcept;
std::string_view to_string(RevocationStatus status) noexcept;
std::string_view to_string(RevocationSource source) noexcept;

struct VerifyProblem {
  int depth = 0;  // 0 = leaf, 1 = its issuer, ...
  ProblemCode code = ProblemCode::x509_error;
  std::string reason;  // plain-language sentence for humans
};

// A warning or a chain issue: worth acting on, but not a verification failure.
struct VerifyNote {
  ProblemCode code = ProblemCode::x509_error;
  // Index in the presented chain (chain issues) or the verified chain (warnings) of the
  // certificate concerned; nullopt when there is none (e.g. an intermediate never sent).
  std::optional<int> depth;
  std::string message;
};

// Revocation evidence for one certificate of the chain.
struct RevocationCheck {
  int depth = 0;
  RevocationSource source = RevocationSource::none;
  std::string url;  // responder or CRL URL (empty for a staple)
  RevocationStatus status = RevocationStatus::none;
  std::string detail;                       // why: error text, revocation reason, signature problem
  std::optional<std::int64_t> produced_at;  // OCSP producedAt, or CRL lastUpdate
  std::optional<std::int64_t> this_update;
  std::optional<std::int64_t> next_update;
  std::optional<std::int64_t> revoked_at;
};

// Another profile that accepts a chain the chosen one rejects, and why.
struct ProfileAlternative {
  Profile profile = Profile::openssl;
  // "rejected under webpki: the leaf has no subjectAltName; OpenSSL-based clients (gRPC C++,
  // curl, Python) accept it through the CN: --profile openssl"
  std::string reason;
};

// A path to a trust anchor that path building judged and rejected (see docs: "Path building").
struct RejectedPath {
  std::vector<Certificate> chain;       // leaf .. trust anchor
  std::vector<VerifyProblem> problems;  // why it was rejected; never empty
};

// The work path building did: getcert's walk, under every profile but openssl (whose path is
// the one OpenSSL builds, as OpenSSL clients take it).
struct PathSearch {
  bool ran = false;                   // getcert's path builder ran (not --profile openssl)
  std::size_t candidate_paths = 0;    // complete paths judged, of at most 16
  std::size_t pruned_candidates = 0;  // issuers set aside before their signature
  std::size_t signature_checks = 0;   // of at most 100
  std::size_t build_calls = 0;        // of at most 200,000
  std::size_t name_constraint_comparisons = 0;  // of at most 250,000, over every path judged
  bool budget_exhausted = false;                // a bound stopped it (an error says which)
};

struct Verification {
  bool ok = false;  // verdict == valid
  Verdict verdict = Verdict::invalid;
  Profile profile = Profile::webpki;  // the rule set the verdict follows
  bool profile_ok = true;             // no rule of the profile failed
  // The facts the verdict is computed from.
  bool trusted = false;                  // a path to a trust anchor exists with no chain errors
  bool hostname_ok = false;              // leaf matches the name (true when no name was asked for)
  bool completed_by_aia = false;         // the path needed an intermediate downloaded via AIA
  bool intermediate_from_store = false;  // the path needed an intermediate only the store had
  bool pins_ok = true;                   // no pins asked, or a certificate matches one
  bool revocation_ok = true;             // nothing revoked; staple and required checks fine
  bool staple_ok = true;                 // no must-staple leaf went without a staple
  std::vector<VerifyProblem> errors;
  std::string trust_store;  // what was trusted: "system (/etc/ssl/certs)", "file:ca.pem", ...
  std::vector<Certificate> verified_chain;         // leaf .. trust anchor; empty unless trusted
  std::vector<Certificate> fetched_intermediates;  // downloaded via AIA (fetch_missing)
  std::vector<RevocationCheck> revocation;         // staple first, then online checks
  std::vector<VerifyNote> warnings;                // problems that do not fail verification
  // When the verdict is invalid: the other profiles under which the chain would pass.
  std::vector<ProfileAlternative> accepted_by;
  // What the server should change in the chain it sends (never a failure by itself).
  std::vector<VerifyNote> chain_issues;
  // The paths judged and rejected besides the one the verdict is about, in the order they were
  // tried; verified_chain is the path chosen (empty when none was accepted).
  std::vector<RejectedPath> rejected_paths;
  PathSearch path_search;
  // The network steps verification took (AIA, OCSP and CRL downloads, with the resolve and
  // connect steps of each), in the order they ended; empty when it needed the network for none.
  std::vector<StepTiming> timings;
};

// Verifies `presented` (leaf first; the rest are untrusted helpers in any order).
// Fails only when the trust store cannot be loaded (io_error, malformed_input) or presented
// is empty (invalid_argument); a chain that does not verify is a Verification, never an error.
Result<Verification> verify_chain(const std::vector<Certificate>& presented,
                                  const VerifyOptions& options);

// The certificates a server should send for this verification: the leaf and the
// intermediates of the verified path (never a self-signed root). Empty when nothing verified.
std::vector<Certificate> full_chain(const Verification& verification);

}  // namespace getcert
