// Name constraint rules beyond what OpenSSL's RFC 5280 6.1 processing checks: where the
// extension may appear and how it must be marked (RFC 5280 4.2.1.10), the syntax of dNSName
// subtrees, and wildcard SANs whose expansions reach an excluded subtree (CVE-2025-61727).

#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>

#include "internal/owners.hpp"
#include "verify/rules.hpp"

namespace getcert::detail {
namespace {

std::string lower_text(const ASN1_STRING* s) {
  std::string out(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                  static_cast<std::size_t>(ASN1_STRING_length(s)));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::size_t subtree_count(const STACK_OF(GENERAL_SUBTREE) * s) {
  return s == nullptr ? 0 : static_cast<std::size_t>(sk_GENERAL_SUBTREE_num(s));
}

bool empty_subtrees(const STACK_OF(GENERAL_SUBTREE) * s) {
  return s == nullptr || sk_GENERAL_SUBTREE_num(s) == 0;
}

std::vector<std::string> dns_subtrees(const STACK_OF(GENERAL_SUBTREE) * s) {
  std::vector<std::string> out;
  for (int i = 0; s != nullptr && i < sk_GENERAL_SUBTREE_num(s); ++i) {
    const GENERAL_NAME* base = sk_GENERAL_SUBTREE_value(s, i)->base;
    if (base->type == GEN_DNS) out.push_back(lower_text(base->d.dNSName));
  }
  return out;
}

std::vector<std::string> wildcard_suffixes(X509* leaf) {
  std::vector<std::string> out;
  const internal::GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
    if (n->type != GEN_DNS) continue;
    std::string dns = lower_text(n->d.dNSName);
    if (dns.rfind("*.", 0) == 0) out.push_back(dns.substr(2));
  }
  return out;
}

// True when `subtree` is exactly one label below `suffix`: "*.suffix" then expands to a name
// inside it, though the pattern itself is not in it.
bool one_label_below(const std::string& subtree, const std::string& suffix) {
  if (subtree.size() <= suffix.size() + 1) return false;
  const std::size_t cut = subtree.size() - suffix.size() - 1;
  return subtree.compare(cut + 1, std::string::npos, suffix) == 0 && subtree[cut] == '.' &&
         subtree.find('.') == cut;
}

}  // namespace

std::size_t constrained_names(X509* cert) {
  const internal::GeneralNamesPtr sans(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  const int san_count = sans ? sk_GENERAL_NAME_num(sans.get()) : 0;
  return static_cast<std::size_t>(san_count) +
         static_cast<std::size_t>(X509_NAME_entry_count(X509_get_subject_name(cert)));
}

std::size_t constraint_subtrees(const NAME_CONSTRAINTS* nc) {
  return subtree_count(nc->permittedSubtrees) + subtree_count(nc->excludedSubtrees);
}

std::vector<RuleFinding> check_constraint_rules(const PathView& path, RuleBudget& budget) {
  std::vector<RuleFinding> out;
  if (path.certs.empty()) return out;
  const std::vector<std::string> wildcards = wildcard_suffixes(path.certs.front());
  for (std::size_t d = 0; d < path.certs.size(); ++d) {
    X509* cert = path.certs[d];
    const int at = X509_get_ext_by_NID(cert, NID_name_constraints, -1);
    if (at < 0) continue;
    const auto depth = static_cast<int>(d);
    const std::string who = path.who(d);
    if (d == 0 && path.certs.size() > 1) {
      out.push_back({depth, ProblemCode::name_constraints_in_leaf,
                     who + " is an end-entity certificate with nameConstraints, which only CA "
                           "certificates may carry (RFC 5280 4.2.1.10)"});
    }
    if (X509_EXTENSION_get_critical(X509_get_ext(cert, at)) == 0) {
      out.push_back({depth, ProblemCode::name_constraints_not_critical,
                     who + " has a non-critical nameConstraints extension (RFC 5280 4.2.1.10: "
                           "conforming CAs MUST mark it critical)"});
    }
    const internal::NameConstraintsPtr nc(static_cast<NAME_CONSTRAINTS*>(
        X509_get_ext_d2i(cert, NID_name_constraints, nullptr, nullptr)));
    if (!nc) {
      out.push_back({depth, ProblemCode::invalid_name_constraint,
                     who + " has a nameConstraints extension that does not decode (RFC 5280 "
                           "4.2.1.10)"});
      continue;
    }
    if (empty_subtrees(nc->permittedSubtrees) && empty_subtrees(nc->excludedSubtrees)) {
      out.push_back({depth, ProblemCode::empty_name_constraints,
                     who + " has nameConstraints with neither permitted nor excluded subtrees "
                           "(RFC 5280 4.2.1.10: it MUST NOT be an empty sequence)"});
    }
    const auto permitted = dns_subtrees(nc->permittedSubtrees);
    const auto excluded = dns_subtrees(nc->excludedSubtrees);
    for (const auto* set : {&permitted, &excluded}) {
      for (const auto& base : *set) {
        // Does a leading period constrain a dNSName? Yes, to subdomains only: mozilla::pkix,
        // NSS, SChannel, rustls-webpki, Go and OpenSSL (nc_dns) all read ".example.com" so, and
        // roots in Mozilla's program (HARICA) rely on it; OpenSSL's path validation applies
        // that meaning. RFC 5280 gives that syntax to URI and rfc822Name subtrees only, so the
        // rfc5280 and cabf profiles refuse it and webpki only warns. A wildcard, which no
        // verifier defines for a subtree, is refused everywhere but openssl.
        if (!base.empty() && base.front() == '.') {
          out.push_back({depth, ProblemCode::dns_constraint_leading_period,
                         who + " has the dNSName constraint '" + base +
                             "' with a leading period: clients read it as its subdomains only, "
                             "but RFC 5280 4.2.1.10 gives that syntax to URI and email "
                             "constraints, not DNS names"});
        }
        if (base.find('*') != std::string::npos) {
          out.push_back({depth, ProblemCode::invalid_name_constraint,
                         who + " has the dNSName constraint '" + base +
                             "', which is not a DNS name (RFC 5280 4.2.1.10)"});
        }
      }
    }
    if (d == 0) continue;
    // The comparisons path validation makes for these constraints: each subtree against each
    // name of each certificate below. The path builder counts them before it makes them; a
    // path OpenSSL built (the openssl profile) has them counted here, after OpenSSL made them.
    // Either way a CA with thousands of subtrees over a leaf with hundreds of SANs fails as it
    // does in rustls-webpki, Go and pyca, not as OpenSSL's untyped error.
    if (!path.constraints_counted) {
      std::size_t names_below = 0;
      for (std::size_t below = 0; below < d; ++below)
        names_below += constrained_names(path.certs[below]);
      if (!budget.spend(constraint_subtrees(nc.get()) * names_below)) return out;
    }
    for (const auto& suffix : wildcards) {
      for (const auto& base : excluded) {
        if (!budget.spend()) return out;
        if (one_label_below(base, suffix)) {
          out.push_back({0, ProblemCode::excluded_wildcard,
                         path.who(0) + " has the wildcard SAN '*." + suffix +
                             "', which also names '" + base + "', a subtree " + who +
                             " excludes (RFC 5280 4.2.1.10, CVE-2025-61727)"});
        }
      }
    }
  }
  return out;
}

}  // namespace getcert::detail
