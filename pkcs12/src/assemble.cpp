// Identity assembly: private key -> leaf by public key, leaf -> root by issuer name and
// signature, whatever order (or file) the producer put them in.
//
// The cost is linear in the number of certificates for any file: certificates are indexed by
// subject name and by public key once, each certificate's issuer is searched for at most once
// (chains share intermediates), a candidate whose key identifier contradicts the child's is
// skipped without a signature check, and every signature check is paid from a budget (see
// SignatureBudget), so a file made of thousands of look-alike issuers fails fast and says why.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include <openssl/x509v3.h>

#include "algorithms.hpp"
#include "assemble.hpp"
#include "budget.hpp"
#include "internal/ossl.hpp"
#include "internal/try.hpp"

namespace getcert::pkcs12::detail {
namespace {

// Every localKeyId value of a bag (some producers attach two, see bc-repeatedLocalKeyIdPfx).
std::set<std::string> local_key_ids(const BagAttributes& attrs) {
  std::set<std::string> out;
  for (const auto& a : attrs.all) {
    if (a.oid != oids::kLocalKeyId) continue;
    std::size_t start = 0;
    while (start <= a.value.size()) {
      const std::size_t comma = a.value.find(", ", start);
      const std::string part =
          a.value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!part.empty()) out.insert(part);
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
  }
  return out;
}

bool shares_any(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(b.begin(), b.end(), [&](const auto& id) { return a.contains(id); });
}

// DER of an X509_NAME (OpenSSL's canonical encoding is cached in the name): the index key.
std::string name_key(const X509_NAME* name) {
  const unsigned char* der = nullptr;
  std::size_t len = 0;
  if (X509_NAME_get0_der(name, &der, &len) != 1) return {};
  return {reinterpret_cast<const char*>(der), len};
}

// The SubjectPublicKeyInfo DER of a key: the index key that pairs a private key with its leaf.
std::string spki_key(const EVP_PKEY* pkey) {
  if (pkey == nullptr) return {};
  unsigned char* der = nullptr;
  const int len = i2d_PUBKEY(pkey, &der);
  const internal::OpensslBytes owned(der);
  if (len <= 0) return {};
  return {reinterpret_cast<const char*>(der), static_cast<std::size_t>(len)};
}

class Assembler {
 public:
  Assembler(const std::vector<FoundCert>& certs, SignatureBudget& budget)
      : certs_(certs), budget_(budget), issuer_(certs.size()) {
    lkids_.reserve(certs.size());
    spki_.reserve(certs.size());
    for (std::size_t i = 0; i < certs.size(); ++i) {
      X509* x = certs[i].x509.get();
      by_subject_[name_key(X509_get_subject_name(x))].push_back(i);
      spki_.push_back(spki_key(X509_get0_pubkey(x)));
      by_spki_[spki_.back()].push_back(i);
      lkids_.push_back(local_key_ids(certs[i].attributes));
    }
  }

  const std::set<std::string>& lkids(std::size_t cert) const { return lkids_[cert]; }

  // The leaf for a key: certificates carrying the same public key; localKeyId breaks ties
  // (several renewals of one key), then the latest notAfter.
  std::optional<std::size_t> find_leaf(const FoundKey& key,
                                       const std::set<std::string>& key_lkids) const {
    if (!key.key.pkey) return std::nullopt;
    std::vector<std::size_t> matches;
    const auto found = by_spki_.find(spki_key(key.key.pkey.get()));
    if (found != by_spki_.end()) {
      matches = found->second;
    } else if (EVP_PKEY_get_base_id(key.key.pkey.get()) == EVP_PKEY_EC) {
      // An EC point has two encodings (compressed or not): compare the keys themselves, EC
      // certificates only.
      for (std::size_t i = 0; i < certs_.size(); ++i) {
        const EVP_PKEY* pub = X509_get0_pubkey(certs_[i].x509.get());
        if (pub == nullptr || EVP_PKEY_get_base_id(pub) != EVP_PKEY_EC) continue;
        if (EVP_PKEY_eq(key.key.pkey.get(), pub) == 1) matches.push_back(i);
      }
    }
    std::optional<std::size_t> best;
    bool best_lkid = false;
    for (const std::size_t i : matches) {
      const bool lkid = shares_any(key_lkids, lkids_[i]);
      if (!best || (lkid && !best_lkid) ||
          (lkid == best_lkid && certs_[i].cert.not_after > certs_[*best].cert.not_after)) {
        best = i;
        best_lkid = lkid;
      }
    }
    return best;
  }

  // leaf's chain towards its root, without the leaf.
  Result<std::vector<std::size_t>> build_chain(std::size_t leaf) {
    std::vector<std::size_t> chain;
    std::vector<std::size_t> visited{leaf};
    std::size_t current = leaf;
    while (!certs_[current].cert.self_signed && chain.size() < kMaxChainLength) {
      auto issuer = issuer_of(current);
      if (!issuer) return tl::unexpected(issuer.error());
      if (!*issuer) break;
      if (std::find(visited.begin(), visited.end(), **issuer) != visited.end()) {
        // A cycle (cross-signed pair): look again, passing over what the chain holds.
        GETCERT_TRY_ASSIGN(auto other, search_issuer(current, &visited));
        if (!other) break;
        *issuer = other;
      }
      chain.push_back(**issuer);
      visited.push_back(**issuer);
      current = **issuer;
    }
    return chain;
  }

 private:
  // No real chain is anywhere near this long (OpenSSL verifies 100 deep by default); a longer
  // one is a file made to make every step cost.
  static constexpr std::size_t kMaxChainLength = 100;

  // The issuer of a certificate, searched for once and remembered: chains share intermediates.
  Result<std::optional<std::size_t>> issuer_of(std::size_t subject) {
    if (issuer_[subject]) return *issuer_[subject];
    auto found = search_issuer(subject, nullptr);
    if (!found) return found;
    issuer_[subject] = *found;
    return *found;
  }

  // The issuer of certs[subject]: subject/issuer names equal, key identifiers not contradicting
  // each other, and the signature verifies. A signature OpenSSL cannot check (unknown
  // algorithm) falls back to the name match. Candidates in `skip` (and the subject) are passed
  // over.
  Result<std::optional<std::size_t>> search_issuer(std::size_t subject,
                                                   const std::vector<std::size_t>* skip) {
    X509* child = certs_[subject].x509.get();
    const auto bucket = by_subject_.find(name_key(X509_get_issuer_name(child)));
    if (bucket == by_subject_.end()) return std::nullopt;
    const ASN1_OCTET_STRING* akid = X509_get0_authority_key_id(child);
    std::optional<std::size_t> name_only;
    // A key that failed to verify this child fails again under another certificate.
    std::set<std::string_view> failed_keys;
    for (const std::size_t i : bucket->second) {
      if (i == subject) continue;
      if (skip != nullptr && std::find(skip->begin(), skip->end(), i) != skip->end()) continue;
      X509* cand = certs_[i].x509.get();
      // The child names its issuer's key and the candidate names its own: a mismatch rules the
      // candidate out for free (what OpenSSL's chain building checks too).
      const ASN1_OCTET_STRING* skid = X509_get0_subject_key_id(cand);
      if (akid != nullptr && skid != nullptr && ASN1_OCTET_STRING_cmp(akid, skid) != 0) continue;
      EVP_PKEY* pub = X509_get0_pubkey(cand);
      if (pub == nullptr) continue;
      if (!spki_[i].empty() && failed_keys.contains(spki_[i])) continue;
      GETCERT_TRY(budget_.spend());
      const int verified = X509_verify(child, pub);
      if (verified == 1) {
        internal::clear_errors();
        return i;
      }
      if (verified < 0 && !name_only) name_only = i;
      if (verified == 0 && !spki_[i].empty()) failed_keys.insert(spki_[i]);
    }
    internal::clear_errors();
    return name_only;
  }

  const std::vector<FoundCert>& certs_;
  SignatureBudget& budget_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_subject_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_spki_;
  std::vector<std::string> spki_;  // each certificate's SubjectPublicKeyInfo DER
  std::vector<std::set<std::string>> lkids_;
  std::vector<std::optional<std::optional<std::size_t>>> issuer_;  // searched -> result
};

}  // namespace

Result<Bundle> assemble(Contents contents, Info info, std::uint64_t max_signature_checks) {
  Bundle out;
  out.info = std::move(info);

  // The same certificate twice (leaf repeated in the chain, say) would otherwise show up as an
  // extra CA certificate.
  std::vector<FoundCert> certs;
  std::set<std::string> seen;
  for (auto& c : contents.certs) {
    if (!seen.insert(c.cert.sha256).second) {
      out.info.warnings.push_back("duplicate certificate " + c.cert.display_name() + " ignored");
      continue;
    }
    certs.push_back(std::move(c));
  }

  SignatureBudget budget(max_signature_checks);
  Assembler assembler(certs, budget);
  std::vector<bool> used(certs.size(), false);
  for (auto& key : contents.keys) {
    Identity identity;
    const std::set<std::string> key_lkids = local_key_ids(key.attributes);
    const auto leaf = assembler.find_leaf(key, key_lkids);
    if (leaf) {
      used[*leaf] = true;
      identity.leaf = certs[*leaf].cert;
      identity.leaf_attributes = certs[*leaf].attributes;
      auto chain = assembler.build_chain(*leaf);
      if (!chain) {
        out.info.signature_checks = budget.spent();
        return tl::unexpected(chain.error());
      }
      for (std::size_t i : *chain) {
        used[i] = true;
        identity.chain.push_back(certs[i].cert);
      }
    } else {
      for (std::size_t i = 0; i < certs.size() && !key_lkids.empty(); ++i) {
        if (shares_any(key_lkids, assembler.lkids(i))) {
          out.info.warnings.push_back("certificate " + certs[i].cert.display_name() +
                                      " has the private key's localKeyId but a different public "
                                      "key; not paired");
        }
      }
      out.info.warnings.push_back("a private key (" + key.key.info.type +
                                  ") has no matching certificate in the file");
    }
    identity.key =
        PrivateKey(std::move(key.key.der), std::move(key.key.info), std::move(key.attributes));
    out.identities.push_back(std::move(identity));
  }
  out.info.signature_checks = budget.spent();
  for (std::size_t i = 0; i < certs.size(); ++i) {
    if (used[i]) continue;
    out.extra_certs.push_back(std::move(certs[i].cert));
    out.extra_cert_attributes.push_back(std::move(certs[i].attributes));
  }
  return out;
}

}  // namespace getcert::pkcs12::detail
