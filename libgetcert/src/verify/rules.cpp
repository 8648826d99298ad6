#include "verify/rules.hpp"

#include "internal/ossl.hpp"
#include "internal/x509_util.hpp"

namespace getcert::detail {

bool PathView::has_root() const {
  if (!anchored || certs.empty()) return false;
  if (root_cache) return *root_cache;
  X509* last = certs.back();
  bool root = (X509_get_extension_flags(last) & EXFLAG_SS) != 0;
  if (!root && X509_NAME_cmp(X509_get_subject_name(last), X509_get_issuer_name(last)) == 0) {
    EVP_PKEY* key = X509_get0_pubkey(last);
    root = key != nullptr && X509_verify(last, key) == 1;
    internal::clear_errors();
  }
  root_cache = root;
  return root;
}

std::string PathView::who(std::size_t depth) const {
  std::string name;
  if (depth < certs.size()) {
    const X509_NAME* subject = X509_get_subject_name(certs[depth]);
    const int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (i >= 0) {
      unsigned char* utf8 = nullptr;
      const int n =
          ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)));
      const internal::OpensslBytes owned(utf8);
      if (n >= 0) name.assign(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(n));
    }
    if (name.empty()) name = internal::name_to_string(subject);
  }
  const char* role = depth == 0 ? "the leaf" : is_root(depth) ? "the root" : "the CA";
  return std::string(role) + " (depth " + std::to_string(depth) + ", '" + name + "')";
}

std::vector<RuleFinding> check_rules(const PathView& path, RuleBudget& budget) {
  std::vector<RuleFinding> out;
  for (auto&& family : {check_name_rules(path), check_constraint_rules(path, budget),
                        check_profile_rules(path), check_key_rules(path), check_crl_rules(path)}) {
    out.insert(out.end(), family.begin(), family.end());
  }
  if (budget.exhausted) {
    out.push_back({0, ProblemCode::budget_exhausted,
                   "verification stopped after 250,000 name-constraint comparisons "
                   "(rustls-webpki's bound, RUSTSEC-2023-0053): the chain is built to exhaust "
                   "verifiers"});
  }
  return out;
}

}  // namespace getcert::detail
