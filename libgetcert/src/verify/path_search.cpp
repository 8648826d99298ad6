#include "verify/path_search.hpp"

#include <openssl/x509v3.h>

#include "internal/owners.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace getcert::detail {
namespace {

struct Candidate {
  X509* cert = nullptr;
  bool anchor = false;
  // 0: its subject key identifier is the child's authority key identifier; 1: one of them is
  // absent; 2: both are present and differ (a signature check would almost surely fail).
  int key_id_rank = 1;
  bool valid_now = false;
};

int key_id_rank(X509* child, X509* issuer) {
  const ASN1_OCTET_STRING* akid = X509_get0_authority_key_id(child);
  const ASN1_OCTET_STRING* skid = X509_get0_subject_key_id(issuer);
  if (akid == nullptr || skid == nullptr) return 1;
  return ASN1_OCTET_STRING_cmp(akid, skid) == 0 ? 0 : 2;
}

bool valid_at(X509* cert, std::int64_t now) {
  const auto t = static_cast<time_t>(now);
  return ASN1_TIME_cmp_time_t(X509_get0_notBefore(cert), t) <= 0 &&
         ASN1_TIME_cmp_time_t(X509_get0_notAfter(cert), t) >= 0;
}

bool same_subject_and_key(X509* a, X509* b) {
  const EVP_PKEY* ka = X509_get0_pubkey(a);
  const EVP_PKEY* kb = X509_get0_pubkey(b);
  return X509_NAME_cmp(X509_get_subject_name(a), X509_get_subject_name(b)) == 0 && ka != nullptr &&
         kb != nullptr && EVP_PKEY_eq(ka, kb) == 1;
}

std::string name_key(const X509_NAME* name) {
  const unsigned char* der = nullptr;
  std::size_t len = 0;
  if (X509_NAME_get0_der(name, &der, &len) != 1) return {};
  return {reinterpret_cast<const char*>(der), len};
}

bool self_signed(X509* cert) { return (X509_get_extension_flags(cert) & EXFLAG_SS) != 0; }

bool self_issued(X509* cert) { return (X509_get_extension_flags(cert) & EXFLAG_SI) != 0; }

bool eku_allows(X509* cert, Purpose purpose) {
  if ((X509_get_extension_flags(cert) & EXFLAG_XKUSAGE) == 0 || purpose == Purpose::any) {
    return true;
  }
  const std::uint32_t eku = X509_get_extended_key_usage(cert);
  const std::uint32_t wanted = purpose == Purpose::server ? XKU_SSL_SERVER : XKU_SSL_CLIENT;
  return (eku & (wanted | XKU_ANYEKU)) != 0;
}

class Search {
 public:
  Search(const IssuerSources& sources, PathBudget& budget, const PathJudge& judge,
         std::vector<internal::X509Ptr>& keep)
      : sources_(sources), budget_(budget), judge_(judge), keep_(keep) {}

  SearchOutcome run(X509* leaf) {
    ctx_.reset(X509_STORE_CTX_new());
    if (!ctx_ || X509_STORE_CTX_init(ctx_.get(), sources_.store, nullptr, nullptr) != 1) {
      internal::clear_errors();
      ctx_.reset();  // the store cannot be asked: peer and AIA certificates only
    }
    path_.assign(1, leaf);
    SearchOutcome out;
    // A self-signed leaf the store holds is a root of its own; a leaf the user trusts that is
    // not self-signed is its own anchor only when no path to a root passes (as OpenSSL's
    // non-partial build is preferred to its partial one).
    const bool leaf_is_root = self_signed(leaf);
    if (leaf_is_root) out.end = leaf_in_store(leaf);
    if (out.end == SearchEnd::no_more_paths) out.end = extend();
    // Nothing passed: walk again with the pruned candidates, for the path that came closest (a
    // path through one may still pass, if the judge weighs a check differently).
    if (out.end == SearchEnd::no_more_paths && pruned_ + unsigned_ > 0) {
      prune_ = false;
      out.end = extend();
    }
    if (out.end == SearchEnd::no_more_paths && !leaf_is_root) out.end = leaf_in_store(leaf);
    out.dead_end = std::move(dead_end_);
    out.pruned = pruned_;
    out.too_deep = too_deep_;
    internal::clear_errors();
    return out;
  }

 private:
  // A leaf the store holds as an anchor (a pinned self-signed certificate, an --ca-file leaf)
  // is a path by itself.
  SearchEnd leaf_in_store(X509* leaf) {
    for (const auto& [cert, anchor] : store_certs(X509_get_subject_name(leaf))) {
      if (anchor && X509_cmp(cert, leaf) == 0) return judge(path_);
    }
    return SearchEnd::no_more_paths;
  }

  SearchEnd judge(const std::vector<X509*>& path) {
    if (!budget_.may_judge()) return SearchEnd::exhausted;
    switch (judge_(path)) {
      case Judgement::accepted:
        return SearchEnd::accepted;
      case Judgement::final_rejection:
        budget_.judged();
        return SearchEnd::stopped;
      case Judgement::rejected:
        budget_.judged();
        break;
      case Judgement::already_judged:
        break;
    }
    return SearchEnd::no_more_paths;
  }

  // Certificates of the store with this subject, looked up once per name (the lookup may read
  // a hashed directory or decode bundle entries).
  const std::vector<std::pair<X509*, bool>>& store_certs(const X509_NAME* name) {
    const std::string key = name_key(name);
    if (auto found = store_cache_.find(key); found != store_cache_.end()) return found->second;
    std::vector<std::pair<X509*, bool>> out;
    if (ctx_) {
      internal::X509StackPtr certs(X509_STORE_CTX_get1_certs(ctx_.get(), name));
      while (certs && sk_X509_num(certs.get()) > 0) {
        internal::X509Ptr c(sk_X509_shift(certs.get()));
        out.emplace_back(c.get(), sources_.explicit_anchors || self_signed(c.get()));
        keep_.push_back(std::move(c));
      }
    }
    return store_cache_.emplace(key, std::move(out)).first->second;
  }

  std::vector<Candidate> candidates(X509* child) {
    const X509_NAME* wanted = X509_get_issuer_name(child);
    std::vector<Candidate> out;
    auto add = [&](X509* c, bool anchor) {
      const bool duplicate = std::any_of(
          out.begin(), out.end(), [&](const Candidate& k) { return X509_cmp(k.cert, c) == 0; });
      if (duplicate) return;  // the store's copy came first and carries the anchor status
      out.push_back({c, anchor, key_id_rank(child, c), valid_at(c, sources_.now)});
    };
    for (const auto& [cert, anchor] : store_certs(wanted)) add(cert, anchor);
    for (X509* c : sources_.untrusted) {
      if (X509_NAME_cmp(X509_get_subject_name(c), wanted) == 0) add(c, false);
    }
    std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
      if (a.key_id_rank != b.key_id_rank) return a.key_id_rank < b.key_id_rank;
      if (a.valid_now != b.valid_now) return a.valid_now;
      if (a.anchor != b.anchor) return a.anchor;  // a shorter path
      return ASN1_TIME_compare(X509_get0_notBefore(a.cert), X509_get0_notBefore(b.cert)) > 0;
    });
    return out;
  }

  bool in_path(X509* c) const {
    return std::any_of(path_.begin(), path_.end(),
                       [&](X509* p) { return X509_cmp(p, c) == 0 || same_subject_and_key(p, c); });
  }

  // Intermediates already below the candidate that pathLenConstraint counts (RFC 5280 6.1.4
  // (l): self-issued ones do not).
  std::size_t counted_intermediates() const {
    std::size_t n = 0;
    for (std::size_t i = 1; i < path_.size(); ++i)
      if (!self_issued(path_[i])) ++n;
    return n;
  }

  // The checks that need no signature, as rustls-webpki's check_issuer_independent_properties
  // makes them. An anchor is held to its validity only (its other properties are the store
  // owner's to vouch for); an intermediate also to CA status, keyUsage, EKU and pathLen.
  bool fit(const Candidate& c) const {
    if (!c.valid_now) return false;
    if (c.anchor) return true;
    if (X509_check_ca(c.cert) != 1) return false;
    const std::uint32_t flags = X509_get_extension_flags(c.cert);
    if ((flags & EXFLAG_KUSAGE) != 0 && (X509_get_key_usage(c.cert) & KU_KEY_CERT_SIGN) == 0) {
      return false;
    }
    if (!eku_allows(c.cert, sources_.purpose)) return false;
    const long path_len = X509_get_pathlen(c.cert);
    return path_len < 0 || counted_intermediates() <= static_cast<std::size_t>(path_len);
  }

  // The candidate's name constraints over every certificate below it (RFC 5280 6.1.3 (b), (c);
  // self-issued intermediates are exempt), each comparison counted before it is made. nullopt:
  // the budget cannot pay for them.
  std::optional<bool> constraints_hold(X509* issuer) {
    const internal::NameConstraintsPtr nc(static_cast<NAME_CONSTRAINTS*>(
        X509_get_ext_d2i(issuer, NID_name_constraints, nullptr, nullptr)));
    if (!nc) return true;  // none, or one that does not decode: the rules say so
    const std::size_t subtrees = constraint_subtrees(nc.get());
    for (std::size_t i = 0; i < path_.size(); ++i) {
      X509* below = path_[i];
      if (i > 0 && self_issued(below)) continue;
      if (sources_.constraint_budget != nullptr &&
          !sources_.constraint_budget->spend(subtrees * constrained_names(below))) {
        return std::nullopt;
      }
      if (NAME_CONSTRAINTS_check(below, nc.get()) != X509_V_OK) {
        internal::clear_errors();
        return false;
      }
      if (i == 0 && NAME_CONSTRAINTS_check_CN(below, nc.get()) != X509_V_OK) {
        internal::clear_errors();
        return false;
      }
    }
    return true;
  }

  // Does `issuer`'s key verify `child`'s signature? Each pair is checked once per search, and
  // each check is taken from the budget.
  std::optional<bool> signs(X509* child, X509* issuer) {
    const auto pair = std::make_pair(child, issuer);
    if (auto known = signatures_.find(pair); known != signatures_.end()) return known->second;
    EVP_PKEY* key = X509_get0_pubkey(issuer);
    if (key == nullptr) return signatures_[pair] = false;
    if (!budget_.take_signature()) return std::nullopt;
    const bool ok = X509_verify(child, key) == 1;
    if (!ok) internal::clear_errors();
    return signatures_[pair] = ok;
  }

  // Admits `c` as the next link: the checks without a signature first, then the signature.
  // nullopt: a bound was reached.
  // `take_unsigned`: a link whose signature fails is taken anyway (the second walk's last
  // resort, below).
  std::optional<bool> admit(const Candidate& c, bool take_unsigned = false) {
    if (prune_ && !fit(c)) {
      ++pruned_;
      return false;
    }
    if (prune_) {
      const auto held = constraints_hold(c.cert);
      if (!held) {
        budget_.exhausted = BudgetLimit::name_constraints;
        return std::nullopt;
      }
      if (!*held) {
        ++pruned_;
        return false;
      }
    }
    const auto signed_by = signs(path_.back(), c.cert);
    if (!signed_by || *signed_by) return signed_by;
    ++unsigned_;
    return take_unsigned;
  }

  // An anchor that is not self-signed (an intermediate the user trusts): a self-signed root the
  // store holds for it makes the longer path, preferred as OpenSSL's non-partial build prefers
  // it; the path ending at the anchor itself is judged after.
  SearchEnd through_partial_anchor() {
    for (const Candidate& root : candidates(path_.back())) {
      if (!root.anchor || !self_signed(root.cert) || in_path(root.cert)) continue;
      const auto ok = admit(root);
      if (!ok) return SearchEnd::exhausted;
      if (!*ok) continue;
      path_.push_back(root.cert);
      const SearchEnd end = judge(path_);
      path_.pop_back();
      if (end != SearchEnd::no_more_paths) return end;
    }
    return judge(path_);
  }

  SearchEnd extend() {
    if (!budget_.take_build_call()) return SearchEnd::exhausted;
    const std::vector<Candidate> issuers = candidates(path_.back());
    bool linked = false;
    const std::size_t unsigned_before = unsigned_;
    SearchEnd end = through(issuers, false, linked);
    // The second walk, when no issuer's signature holds but some issuer's fails: the link is
    // taken anyway, so the path whose only fault that is gets judged and reported as
    // bad_signature (as rustls-webpki ranks it above an unknown issuer), not as an issuer that
    // was never found.
    if (end == SearchEnd::no_more_paths && !prune_ && !linked && unsigned_ > unsigned_before) {
      end = through(issuers, true, linked);
    }
    if (end == SearchEnd::no_more_paths && !linked && path_.size() > dead_end_.size()) {
      dead_end_ = path_;
    }
    return end;
  }

  // Tries each issuer as the next link, and the paths beyond it.
  SearchEnd through(const std::vector<Candidate>& issuers, bool take_unsigned, bool& linked) {
    const std::size_t intermediates = path_.size() - 1;
    for (const Candidate& c : issuers) {
      if (!budget_.take_build_call()) return SearchEnd::exhausted;
      if (in_path(c.cert)) continue;
      // Past the depth limit only an anchor may come next.
      if (!c.anchor && intermediates + 1 > sources_.max_intermediates) {
        too_deep_ = true;
        continue;
      }
      const auto ok = admit(c, take_unsigned);
      if (!ok) return SearchEnd::exhausted;
      if (!*ok) continue;
      linked = true;
      path_.push_back(c.cert);
      SearchEnd end = SearchEnd::no_more_paths;
      if (c.anchor) {
        // As in Go, an anchor ends the path: a shorter path is preferred to one beyond it.
        end = self_signed(c.cert) ? judge(path_) : through_partial_anchor();
      } else {
        end = extend();
      }
      path_.pop_back();
      if (end != SearchEnd::no_more_paths) return end;
    }
    return SearchEnd::no_more_paths;
  }

  const IssuerSources& sources_;
  PathBudget& budget_;
  const PathJudge& judge_;
  std::vector<internal::X509Ptr>& keep_;
  internal::X509StoreCtxPtr ctx_;
  std::map<std::string, std::vector<std::pair<X509*, bool>>> store_cache_;
  std::map<std::pair<X509*, X509*>, bool> signatures_;
  std::vector<X509*> path_;
  std::vector<X509*> dead_end_;
  bool prune_ = true;
  std::size_t pruned_ = 0;
  std::size_t unsigned_ = 0;  // links whose signature failed
  bool too_deep_ = false;
};

}  // namespace

SearchOutcome search_paths(X509* leaf, const IssuerSources& sources, PathBudget& budget,
                           const PathJudge& judge, std::vector<internal::X509Ptr>& keep) {
  return Search(sources, budget, judge, keep).run(leaf);
}

}  // namespace getcert::detail
