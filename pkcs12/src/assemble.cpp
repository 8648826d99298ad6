// Identity assembly: private key -> leaf by public key, leaf -> root by issuer name and
// signature, whatever order (or file) the producer put them in.

#include <algorithm>
#include <set>
#include <string>

#include "algorithms.hpp"
#include "assemble.hpp"
#include "internal/ossl.hpp"

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

bool shares_local_key_id(const BagAttributes& a, const BagAttributes& b) {
  const auto ids_a = local_key_ids(a);
  const auto ids_b = local_key_ids(b);
  return std::any_of(ids_b.begin(), ids_b.end(),
                     [&](const auto& id) { return ids_a.contains(id); });
}

// The leaf for a key: certificates carrying the same public key; localKeyId breaks ties (several
// renewals of one key), then the latest notAfter.
std::optional<std::size_t> find_leaf(const FoundKey& key, const std::vector<FoundCert>& certs) {
  if (!key.key.pkey) return std::nullopt;
  std::optional<std::size_t> best;
  bool best_lkid = false;
  for (std::size_t i = 0; i < certs.size(); ++i) {
    const EVP_PKEY* pub = X509_get0_pubkey(certs[i].x509.get());
    if (pub == nullptr || EVP_PKEY_eq(key.key.pkey.get(), pub) != 1) continue;
    const bool lkid = shares_local_key_id(key.attributes, certs[i].attributes);
    if (!best || (lkid && !best_lkid) ||
        (lkid == best_lkid && certs[i].cert.not_after > certs[*best].cert.not_after)) {
      best = i;
      best_lkid = lkid;
    }
  }
  return best;
}

// The issuer of certs[subject] among `certs`: subject/issuer names equal and the signature
// verifies. A signature OpenSSL cannot check (unknown algorithm) falls back to the name match.
std::optional<std::size_t> find_issuer(std::size_t subject, const std::vector<FoundCert>& certs,
                                       const std::set<std::size_t>& visited) {
  X509* child = certs[subject].x509.get();
  std::optional<std::size_t> name_only;
  for (std::size_t i = 0; i < certs.size(); ++i) {
    if (visited.contains(i)) continue;
    X509* cand = certs[i].x509.get();
    if (X509_NAME_cmp(X509_get_subject_name(cand), X509_get_issuer_name(child)) != 0) continue;
    EVP_PKEY* pub = X509_get0_pubkey(cand);
    if (pub == nullptr) continue;
    const int verified = X509_verify(child, pub);
    if (verified == 1) return i;
    if (verified < 0 && !name_only) name_only = i;
  }
  internal::clear_errors();
  return name_only;
}

std::vector<std::size_t> build_chain(std::size_t leaf, const std::vector<FoundCert>& certs) {
  std::vector<std::size_t> chain;
  std::set<std::size_t> visited{leaf};
  std::size_t current = leaf;
  while (!certs[current].cert.self_signed) {
    const auto issuer = find_issuer(current, certs, visited);
    if (!issuer) break;
    chain.push_back(*issuer);
    visited.insert(*issuer);
    current = *issuer;
  }
  return chain;
}

}  // namespace

Bundle assemble(Contents contents, Info info) {
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

  std::vector<bool> used(certs.size(), false);
  for (auto& key : contents.keys) {
    Identity identity;
    const auto leaf = find_leaf(key, certs);
    if (leaf) {
      used[*leaf] = true;
      identity.leaf = certs[*leaf].cert;
      identity.leaf_attributes = certs[*leaf].attributes;
      for (std::size_t i : build_chain(*leaf, certs)) {
        used[i] = true;
        identity.chain.push_back(certs[i].cert);
      }
    } else {
      for (const auto& c : certs) {
        if (shares_local_key_id(key.attributes, c.attributes)) {
          out.info.warnings.push_back("certificate " + c.cert.display_name() +
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
  for (std::size_t i = 0; i < certs.size(); ++i) {
    if (used[i]) continue;
    out.extra_certs.push_back(std::move(certs[i].cert));
    out.extra_cert_attributes.push_back(std::move(certs[i].attributes));
  }
  return out;
}

}  // namespace getcert::pkcs12::detail
