// Channel and server credentials on gRPC's experimental TLS API: the identity from an
// IdentityWatcher, the peer judged by getcert's verifier.

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_credentials_options.h>

#include "getcert/grpc_reloading.hpp"
#include "internal/try.hpp"
#include "peer_verifier.hpp"

namespace getcert::grpc_tls {

Result<ReloadingChannelCredentials> reloading_channel_credentials(
    const ReloadingChannelOptions& options) {
  ReloadingChannelCredentials made;
  if (options.anchor &&
      (!options.peer.verify.trust.ca_file.empty() || !options.peer.verify.trust.ca_dir.empty())) {
    return fail(
        Errc::invalid_argument,
        "give either an anchor to establish or a trust store (peer.verify.trust), not both");
  }
  // Everything that can fail comes before gRPC's options object: in gRPC 1.51 an options object
  // that never reaches TlsCredentials() leaks the C structure it allocated.
  if (options.identity) {
    GETCERT_TRY_ASSIGN(auto watcher, IdentityWatcher::start(*options.identity, options.watch));
    made.identity = std::move(watcher);
  }
  PeerVerifyOptions peer = options.peer;
  if (options.anchor) {
    GETCERT_TRY_ASSIGN(auto anchor, AnchorWatcher::establish(*options.anchor));
    made.anchor = std::move(anchor);
    peer.anchor = made.anchor;
  }
  ::grpc::experimental::TlsChannelCredentialsOptions tls;
  if (made.identity) {
    tls.set_certificate_provider(made.identity->provider());
    tls.watch_identity_key_cert_pairs();
  }
  // getcert judges the chain, the name and everything else; gRPC's own checks would only be a
  // second, weaker opinion (and would need roots of their own to reload).
  tls.set_verify_server_certs(false);
  tls.set_check_call_host(false);
  auto verifier = make_verifier(peer, Purpose::server);
  tls.set_certificate_verifier(verifier.verifier);
  made.verdicts = std::move(verifier.verdicts);
  made.credentials = ::grpc::experimental::TlsCredentials(tls);
  if (!made.credentials) return fail(Errc::internal, "gRPC refused the TLS channel options");
  return made;
}

Result<ReloadingServerCredentials> reloading_server_credentials(
    const ReloadingServerOptions& options) {
  ReloadingServerCredentials made;
  GETCERT_TRY_ASSIGN(auto watcher, IdentityWatcher::start(options.identity, options.watch));
  made.identity = std::move(watcher);
  ::grpc::experimental::TlsServerCredentialsOptions tls(made.identity->provider());
  tls.watch_identity_key_cert_pairs();
  switch (options.client_certificates) {
    case ClientCertificates::none:
      tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
      break;
    case ClientCertificates::request:
      tls.set_cert_request_type(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
      break;
    case ClientCertificates::require:
      tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
      break;
  }
  if (options.client_certificates != ClientCertificates::none) {
    auto verifier = detail::make_verifier(
        options.peer, Purpose::client, options.client_certificates == ClientCertificates::request);
    tls.set_certificate_verifier(verifier.verifier);
    made.verdicts = std::move(verifier.verdicts);
  }
  made.credentials = ::grpc::experimental::TlsServerCredentials(tls);
  if (!made.credentials) return fail(Errc::internal, "gRPC refused the TLS server options");
  return made;
}

}  // namespace getcert::grpc_tls
