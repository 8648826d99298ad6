#pragma once

// The profile rules, one family per file (names.cpp, constraints.cpp, profile_rules.cpp,
// keys.cpp), in the manner of rustls-webpki: each family is a pure function over the parsed
// path that reports what it finds, whatever the profile; profiles.cpp alone decides what a
// finding weighs under each profile. Path validation itself (signatures, validity, purpose,
// pathLen, name constraints as RFC 5280 6.1 defines them) stays with OpenSSL.

#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "getcert/verify.hpp"

namespace getcert::detail {

// A path as far as it was built: leaf first, borrowed handles.
struct PathView {
  std::vector<X509*> certs;
  bool anchored = false;  // the last certificate is a trust anchor
  Purpose purpose = Purpose::server;
  // VerifyOptions::max_depth: at most this many intermediates (self-issued ones not counted).
  std::optional<int> max_intermediates;
  STACK_OF(X509_CRL) * crls = nullptr;  // the --crl-file CRLs (borrowed), may be null
  // The path builder already counted RFC 5280's name-constraint comparisons for this path
  // (path_search.cpp): the rules count only their own.
  bool constraints_counted = false;
  mutable std::optional<bool> root_cache;  // has_root(), decided once (it checks a signature)

  // The last certificate is a self-signed trust anchor (a root, not an intermediate given as an
  // anchor): the root rules apply to it. Self-signed means its subject is its issuer and its own
  // key verifies its signature, whatever its AKI says (OpenSSL's EXFLAG_SS also asks the AKI to
  // match, which would hide a root with a wrong AKI from the rules about root AKIs).
  bool has_root() const;
  bool is_root(std::size_t depth) const { return has_root() && depth + 1 == certs.size(); }
  // "certificate at depth 1 'Example CA'": how every reason names the certificate.
  std::string who(std::size_t depth) const;
};

struct RuleFinding {
  int depth = 0;
  ProblemCode code = ProblemCode::x509_error;
  std::string reason;  // names the certificate and the rule (RFC 5280 or BR section)
};

// Bounds the work the rules may do on hostile input, as rustls-webpki's Budget does.
struct RuleBudget {
  // 250,000 name-constraint comparisons: rustls-webpki's figure (RUSTSEC-2023-0053), far above
  // any real PKI (a few dozen subtrees times a few hundred SANs) and well under a second.
  std::size_t name_constraint_comparisons = 250000;
  bool exhausted = false;
  // Takes one comparison; false once none is left.
  bool spend() {
    if (name_constraint_comparisons == 0) {
      exhausted = true;
      return false;
    }
    --name_constraint_comparisons;
    return true;
  }
  // Takes `n` comparisons at once; false (and exhausted) when fewer are left.
  bool spend(std::size_t n) {
    if (n > name_constraint_comparisons) {
      name_constraint_comparisons = 0;
      exhausted = true;
      return false;
    }
    name_constraint_comparisons -= n;
    return true;
  }
};

// What RFC 5280 6.1 name-constraint processing compares, for the budget: the subtrees of one
// nameConstraints extension, and the names of a certificate held to them (every SAN and every
// subject attribute, the emailAddress and the CN among them).
std::size_t constraint_subtrees(const NAME_CONSTRAINTS* nc);
std::size_t constrained_names(X509* cert);

// The leaf's keyUsage allows none of the key uses TLS needs for `purpose` (OpenSSL's purpose
// check refuses it too; verify.cpp leaves that refusal to the leaf_key_usage_purpose rule).
bool leaf_key_usage_refuses(X509* leaf, Purpose purpose);

std::vector<RuleFinding> check_name_rules(const PathView& path);
std::vector<RuleFinding> check_constraint_rules(const PathView& path, RuleBudget& budget);
std::vector<RuleFinding> check_profile_rules(const PathView& path);
std::vector<RuleFinding> check_key_rules(const PathView& path);
std::vector<RuleFinding> check_crl_rules(const PathView& path);

// Every family, in a fixed order; an exhausted budget is a finding of its own.
std::vector<RuleFinding> check_rules(const PathView& path, RuleBudget& budget);

}  // namespace getcert::detail
