#include "verify/path_search.hpp"

#include <openssl/x509v3.h>

#include <algorithm>
#include <map>
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

class Search {
 public:
  Search(const IssuerSources& sources, PathBudget& budget, const PathJudge& judge,
         std::vector<internal::X509Ptr>& keep)
      : sources_(sources), budget_(budget), judge_(judge), keep_(keep) {}

  SearchEnd run(X509* leaf) {
    ctx_.reset(X509_STORE_CTX_new());
    if (!ctx_ || X509_STORE_CTX_init(ctx_.get(), sources_.store, nullptr, nullptr) != 1) {
      internal::clear_errors();
      ctx_.reset();  // the store cannot be asked: peer and AIA certificates only
    }
    path_.assign(1, leaf);
    const SearchEnd end = extend();
    internal::clear_errors();
    return end;
  }

 private:
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
        const bool self_signed = (X509_get_extension_flags(c.get()) & EXFLAG_SS) != 0;
        out.emplace_back(c.get(), sources_.explicit_anchors || self_signed);
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

  SearchEnd extend() {
    if (!budget_.take_build_call()) return SearchEnd::exhausted;
    X509* child = path_.back();
    const std::size_t intermediates = path_.size() - 1;
    for (const Candidate& c : candidates(child)) {
      if (!budget_.take_build_call()) return SearchEnd::exhausted;
      if (in_path(c.cert)) continue;
      // Past the depth limit only an anchor may come next.
      if (!c.anchor && intermediates + 1 > sources_.max_intermediates) continue;
      EVP_PKEY* key = X509_get0_pubkey(c.cert);
      if (key == nullptr) continue;
      if (!budget_.take_signature()) return SearchEnd::exhausted;
      if (X509_verify(child, key) != 1) {
        internal::clear_errors();
        continue;
      }
      path_.push_back(c.cert);
      if (c.anchor) {
        // As in Go, an anchor ends the path: a shorter path is preferred to one beyond it.
        if (!budget_.may_judge()) return SearchEnd::exhausted;
        const Judgement judgement = judge_(path_);
        if (judgement == Judgement::accepted) return SearchEnd::accepted;
        if (judgement == Judgement::rejected) budget_.judged();
      } else {
        const SearchEnd end = extend();
        if (end != SearchEnd::no_more_paths) return end;
      }
      path_.pop_back();
    }
    return SearchEnd::no_more_paths;
  }

  const IssuerSources& sources_;
  PathBudget& budget_;
  const PathJudge& judge_;
  std::vector<internal::X509Ptr>& keep_;
  internal::X509StoreCtxPtr ctx_;
  std::map<std::string, std::vector<std::pair<X509*, bool>>> store_cache_;
  std::vector<X509*> path_;
};

}  // namespace

SearchEnd search_paths(X509* leaf, const IssuerSources& sources, PathBudget& budget,
                       const PathJudge& judge, std::vector<internal::X509Ptr>& keep) {
  return Search(sources, budget, judge, keep).run(leaf);
}

}  // namespace getcert::detail
