#include "getcert/tls_material.hpp"
#include "internal/try.hpp"

#include "getcert/fetch.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace getcert {
namespace {

std::string endpoint_label(const FetchResult& result) {
  if (result.target.host.empty()) return "endpoint";
  const bool v6 = result.target.host.find(':') != std::string::npos;
  return (v6 ? "[" + result.target.host + "]" : result.target.host) + ":" +
         std::to_string(result.target.port);
}

// Every problem, one per line, for Error::detail.
std::string all_problems(const Verification& v) {
  std::string out;
  for (const auto& p : v.errors) {
    if (!out.empty()) out += '\n';
    out +=
        "depth " + std::to_string(p.depth) + " " + std::string(to_string(p.code)) + ": " + p.reason;
  }
  return out;
}

}  // namespace

Result<std::string> trust_anchor_pem(const FetchResult& result) {
  const Verification& v = result.verification;
  const std::string where = endpoint_label(result);
  // Trusted, but only with an intermediate the server does not send: name that, since
  // trusting the anchor would not help a client that has no way to find the intermediate.
  if (v.verdict == Verdict::valid_only_with_aia_fetch || v.verdict == Verdict::incomplete_chain) {
    const std::string how = v.verdict == Verdict::incomplete_chain
                                ? "an intermediate found only in the local trust store"
                                : "an intermediate downloaded from its AIA URL";
    return fail(Errc::verification_failed,
                where + ": the chain verifies only with " + how + " (verdict " +
                    std::string(to_string(v.verdict)) +
                    "); the server does not send it and gRPC/TLS clients do not fetch it, so "
                    "trusting the root alone would still fail: configure the server to send "
                    "its full chain",
                all_problems(v));
  }
  if (!v.ok || v.verified_chain.empty()) {
    const std::string why =
        v.errors.empty() ? std::string("verification failed") : v.errors.front().reason;
    return fail(Errc::verification_failed,
                where + ": the chain did not verify, so there is no trust anchor to use as " +
                    "pem_root_certs (" + why + ")",
                all_problems(v));
  }
  return v.verified_chain.back().pem();
}

Result<TlsMaterial> identity_material(const pkcs12::Identity& identity) {
  if (identity.key.pkcs8_der().empty()) {
    return fail(Errc::invalid_argument,
                "the PKCS#12 identity has no private key, so it cannot authenticate a client");
  }
  if (!identity.leaf) {
    return fail(Errc::invalid_argument,
                "the PKCS#12 file has a private key but no certificate for it; mutual TLS needs "
                "the client certificate too");
  }
  TlsMaterial material;
  material.key_pem = identity.key.pem();
  // The peer has (or lacks) the anchor itself; sending it only wastes bytes.
  material.cert_chain_pem = to_pem(leaf_plus_intermediates(*identity.leaf, identity.chain));
  return material;
}

Result<TlsMaterial> tls_material(const FetchResult& result) {
  GETCERT_TRY_ASSIGN(auto root, trust_anchor_pem(result));
  TlsMaterial material;
  material.root_pem = std::move(root);
  return material;
}

Result<TlsMaterial> tls_material(const FetchResult& result, const pkcs12::Identity& identity) {
  GETCERT_TRY_ASSIGN(auto root, trust_anchor_pem(result));
  auto material = identity_material(identity);
  if (!material) return material;
  material->root_pem = std::move(root);
  return material;
}

Result<pkcs12::Identity> single_identity(const std::vector<std::uint8_t>& pfx,
                                         const pkcs12::DecodeOptions& options) {
  GETCERT_TRY_ASSIGN(auto bundle, pkcs12::decode(pfx, options));
  std::vector<std::size_t> usable;
  for (std::size_t i = 0; i < bundle.identities.size(); ++i) {
    if (bundle.identities[i].leaf) usable.push_back(i);
  }
  if (usable.empty()) {
    return fail(Errc::invalid_argument,
                bundle.identities.empty()
                    ? "the PKCS#12 file holds no private key, so it is no client identity"
                    : "the PKCS#12 file holds a private key but no certificate for it");
  }
  if (usable.size() > 1) {
    return fail(Errc::invalid_argument,
                "the PKCS#12 file holds " + std::to_string(usable.size()) +
                    " keys with certificates; choose one from pkcs12::decode().identities");
  }
  return std::move(bundle.identities[usable.front()]);
}

}  // namespace getcert
