#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "getcert/grpc.hpp"
#include "internal/try.hpp"
#include "peer_verifier.hpp"

namespace getcert::grpc_tls {
std::string_view detail::without_dns_scheme(std::string_view target) {
  for (std::string_view prefix : {std::string_view("dns:///"), std::string_view("dns:")}) {
    if (target.substr(0, prefix.size()) == prefix) return target.substr(prefix.size());
  }
  return target;
}

namespace {

Result<FetchResult> fetch_for_grpc(std::string_view endpoint, const FetchOptions& options) {
  FetchOptions grpc_like = options;
  if (grpc_like.connect.alpn.empty()) grpc_like.connect.alpn = {"h2"};
  return fetch(detail::without_dns_scheme(endpoint), grpc_like);
}

}  // namespace

::grpc::SslCredentialsOptions ssl_options(const TlsMaterial& material) {
  ::grpc::SslCredentialsOptions options;
  options.pem_root_certs = material.root_pem;
  options.pem_private_key.assign(material.key_pem.data(), material.key_pem.size());
  options.pem_cert_chain = material.cert_chain_pem;
  return options;
}

Result<::grpc::SslCredentialsOptions> ssl_options_from_fetch(const FetchResult& result) {
  GETCERT_TRY_ASSIGN(auto material, tls_material(result));
  return ssl_options(material);
}

Result<::grpc::SslCredentialsOptions> mtls_options(const FetchResult& result,
                                                   const pkcs12::Identity& identity) {
  GETCERT_TRY_ASSIGN(auto material, tls_material(result, identity));
  return ssl_options(material);
}

Result<::grpc::SslCredentialsOptions> mtls_options(std::string root_pem,
                                                   const pkcs12::Identity& identity) {
  GETCERT_TRY_ASSIGN(auto material, identity_material(identity));
  material.root_pem = std::move(root_pem);
  return ssl_options(material);
}

Result<std::shared_ptr<::grpc::ChannelCredentials>> channel_credentials_for(
    std::string_view endpoint, const FetchOptions& options) {
  GETCERT_TRY_ASSIGN(auto fetched, fetch_for_grpc(endpoint, options));
  GETCERT_TRY_ASSIGN(auto ssl, ssl_options_from_fetch(fetched));
  return ::grpc::SslCredentials(ssl);
}

Result<std::shared_ptr<::grpc::ChannelCredentials>> channel_credentials_for(
    std::string_view endpoint, const pkcs12::Identity& identity, const FetchOptions& options) {
  // Check the identity before touching the network: a key-only .p12 is the caller's mistake.
  GETCERT_TRY_ASSIGN(auto own, identity_material(identity));
  GETCERT_TRY_ASSIGN(auto fetched, fetch_for_grpc(endpoint, options));
  GETCERT_TRY_ASSIGN(auto root, trust_anchor_pem(fetched));
  own.root_pem = std::move(root);
  return ::grpc::SslCredentials(ssl_options(own));
}

}  // namespace getcert::grpc_tls
