#pragma once

// getcert for gRPC clients: grpc::SslCredentialsOptions / grpc::ChannelCredentials from what
// getcert established, in target getcert::grpc (built only when gRPC is found; the core
// libraries do not depend on gRPC). Public header: C++17, no OpenSSL types.
//
//   // Trust exactly what verification established for this endpoint:
//   auto creds = getcert::grpc_tls::channel_credentials_for("svc.internal:443");
//   if (!creds) return fail(creds.error().message);       // network, TLS or verification
//   auto channel = grpc::CreateChannel("svc.internal:443", *creds);
//
//   // Mutual TLS with a .p12 from your CA:
//   auto id = getcert::single_identity(p12_bytes, {password});
//   auto creds = getcert::grpc_tls::channel_credentials_for("svc.internal:443", *id);
//
// The namespace is getcert::grpc_tls, not getcert::grpc, so that `using namespace getcert;`
// never makes `grpc::` ambiguous in user code.
//
// Secrets: gRPC's options hold the private key in a plain std::string (its type, not ours);
// keep SslCredentialsOptions short-lived. grpc::SslCredentials copies what it needs.

#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/security/credentials.h>

#include "getcert/error.hpp"
#include "getcert/fetch.hpp"
#include "getcert/pkcs12.hpp"
#include "getcert/tls_material.hpp"

namespace getcert::grpc_tls {

// Copies the three PEM strings into gRPC's option struct (pem_root_certs, pem_private_key,
// pem_cert_chain). Cannot fail; empty fields stay empty (gRPC: default roots / no client
// certificate).
::grpc::SslCredentialsOptions ssl_options(const TlsMaterial& material);

// Server TLS: pem_root_certs = the trust anchor of the verified chain (see
// getcert::trust_anchor_pem for the exact rule). Fails with Errc::verification_failed when the
// fetch did not verify, with the verification problem in the message.
Result<::grpc::SslCredentialsOptions> ssl_options_from_fetch(const FetchResult& result);

// Mutual TLS: trust anchor of `result`, plus the identity's key and chain (leaf +
// intermediates). Errors: those of ssl_options_from_fetch, and invalid_argument for an
// identity without a certificate.
Result<::grpc::SslCredentialsOptions> mtls_options(const FetchResult& result,
                                                   const pkcs12::Identity& identity);

// Mutual TLS with trust anchors you already have (PEM; "" = gRPC's default roots), e.g. a CA
// file shipped with your service. Errors: invalid_argument for an identity without a
// certificate.
Result<::grpc::SslCredentialsOptions> mtls_options(std::string root_pem,
                                                   const pkcs12::Identity& identity);

// Convenience: fetch `endpoint` with `options`, require that it verifies, and return
// grpc::SslCredentials trusting its anchor. `endpoint` is what getcert::fetch accepts
// ("host:port", "[v6]:port", "grpcs://host:port"); gRPC's "dns:///host:port" form is accepted
// too. When options.connect.alpn is empty, "h2" is offered, as a gRPC client would. The caller
// owns the returned credentials (share them between channels freely).
// Errors: those of getcert::fetch (invalid_argument, resolve_failed, connect_failed, timeout,
// tls_handshake_failed, not_tls, network_error, io_error for the trust store), then those of
// ssl_options_from_fetch.
Result<std::shared_ptr<::grpc::ChannelCredentials>> channel_credentials_for(
    std::string_view endpoint, const FetchOptions& options = {});

// As above, presenting `identity` (borrowed for the duration of the call; the key is copied
// into the credentials) as the client certificate for mutual TLS.
Result<std::shared_ptr<::grpc::ChannelCredentials>> channel_credentials_for(
    std::string_view endpoint, const pkcs12::Identity& identity, const FetchOptions& options = {});

}  // namespace getcert::grpc_tls
