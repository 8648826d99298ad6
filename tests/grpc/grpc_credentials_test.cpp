// getcert::grpc against a real gRPC server on loopback (in process, TLS and mutual TLS, the
// generated test PKI). The server reads its PEM files directly; the client obtains every piece
// of certificate material only through getcert: the trust anchor from fetch + verification,
// the client identity from a .p12 decoded by getcert::pkcs12.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "echo_client.hpp"
#include "echo_service.hpp"
#include "getcert/certificate.hpp"
#include "getcert/fetch.hpp"
#include "getcert/grpc.hpp"
#include "getcert/pkcs12.hpp"
#include "getcert/tls_material.hpp"
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/test_pki.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using getcert::Errc;
using getcert::FetchOptions;
using getcert::test::describe;
using getcert::test::echo;
using getcert::test::fetch_trusting;
using getcert::test::pki;
using getcert::test::read_file;
using namespace std::chrono_literals;

namespace {

enum class ClientCerts { not_requested, required };

// An in-process gRPC server with the Echo service, presenting NAME-chain.pem (leaf +
// intermediate) or, with leaf_only, just NAME.pem. Shut down on destruction.
class EchoServer {
 public:
  explicit EchoServer(ClientCerts client_certs, const std::string& leaf = "ecdsa",
                      bool leaf_only = false) {
    grpc::SslServerCredentialsOptions tls(
        client_certs == ClientCerts::required
            ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
            : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    if (client_certs == ClientCerts::required) tls.pem_root_certs = read_file(pki("root.pem"));
    tls.pem_key_cert_pairs.push_back({read_file(pki(leaf + ".key")),
                                      read_file(pki(leaf + (leaf_only ? ".pem" : "-chain.pem")))});
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(tls), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    if (!server_ || port_ == 0) throw std::runtime_error("gRPC test server did not start");
  }
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;
  ~EchoServer() { server_->Shutdown(std::chrono::system_clock::now() + 2s); }

  // What clients dial: the name the test leaves are issued for.
  std::string target() const { return "localhost:" + std::to_string(port_); }

 private:
  getcert::examples::EchoService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

getcert::FetchResult fetched(const std::string& target, const FetchOptions& options) {
  auto result = getcert::fetch(target, options);
  if (!result) FAIL("fetch " << target << ": " << result.error().message);
  return *result;
}

// The PKCS#12 file a user gets from their CA, made by an independent producer (openssl).
std::vector<std::uint8_t> client_p12(const getcert::test::TempDir& dir,
                                     const std::string& certfile) {
  const auto out = dir / "client.p12";
  const auto run =
      getcert::test::run({GETCERT_TEST_OPENSSL, "pkcs12", "-export", "-in", pki("client.pem"),
                          "-inkey", pki("client.key"), "-certfile", certfile, "-name",
                          "getcert test client", "-passout", "pass:p12 secret", "-out", out});
  if (run.exit_code != 0) FAIL("openssl pkcs12 -export failed: " << run.err);
  const std::string bytes = read_file(out);
  return {bytes.begin(), bytes.end()};
}

getcert::pkcs12::Identity client_identity(const getcert::test::TempDir& dir,
                                          const std::string& certfile) {
  getcert::pkcs12::DecodeOptions options;
  options.password = "p12 secret";
  auto identity = getcert::single_identity(client_p12(dir, certfile), options);
  if (!identity) FAIL("single_identity: " << identity.error().message);
  return std::move(*identity);
}

// PEM of one certificate file of the PKI, as getcert renders it (for comparisons only).
std::string pem_of(const std::string& name) {
  auto certs = getcert::parse_certificates_pem(read_file(pki(name)));
  REQUIRE(certs);
  REQUIRE(certs->size() == 1);
  return certs->front().pem();
}

#define REQUIRE_OPENSSL()                                                         \
  do {                                                                            \
    if (!getcert::test::have_openssl()) GETCERT_SKIP("openssl is not installed"); \
  } while (false)

}  // namespace

TEST_CASE("server TLS: credentials from a verified fetch let a gRPC client in", "[grpc]") {
  const EchoServer server(ClientCerts::not_requested);

  const auto result = fetched(server.target(), fetch_trusting(pki("root.pem")));
  REQUIRE(result.verification.ok);
  auto options = getcert::grpc_tls::ssl_options_from_fetch(result);
  REQUIRE(options);
  // Exactly the trust anchor, as `getcert --select root` prints it; no client identity.
  CHECK(options->pem_root_certs == pem_of("root.pem"));
  CHECK(options->pem_private_key.empty());
  CHECK(options->pem_cert_chain.empty());

  const auto call = echo(server.target(), grpc::SslCredentials(*options), "hello over TLS");
  INFO(describe(call.status));
  REQUIRE(call.status.ok());
  CHECK(call.reply.message() == "hello over TLS");
  CHECK(call.reply.client_common_name().empty());
}

TEST_CASE("channel_credentials_for goes from an endpoint to working credentials in one call",
          "[grpc]") {
  const EchoServer server(ClientCerts::not_requested);
  for (const std::string& endpoint : {server.target(), "dns:///" + server.target()}) {
    INFO("endpoint: " << endpoint);
    auto creds =
        getcert::grpc_tls::channel_credentials_for(endpoint, fetch_trusting(pki("root.pem")));
    if (!creds) FAIL(creds.error().message);
    const auto call = echo(server.target(), *creds);
    INFO(describe(call.status));
    CHECK(call.status.ok());
  }
}

TEST_CASE("mutual TLS: the identity from a .p12 is accepted by a server requiring one", "[grpc]") {
  REQUIRE_OPENSSL();
  const getcert::test::TempDir dir;
  const EchoServer server(ClientCerts::required);
  const auto identity = client_identity(dir, pki("intermediate.pem"));

  SECTION("mtls_options: trust anchor from the fetch, key and chain from the .p12") {
    const auto result = fetched(server.target(), fetch_trusting(pki("root.pem")));
    auto options = getcert::grpc_tls::mtls_options(result, identity);
    REQUIRE(options);
    CHECK(options->pem_root_certs == pem_of("root.pem"));
    CHECK(options->pem_cert_chain == pem_of("client.pem") + pem_of("intermediate.pem"));
    CHECK_THAT(options->pem_private_key, Contains("-----BEGIN PRIVATE KEY-----"));

    const auto call = echo(server.target(), grpc::SslCredentials(*options), "hello over mTLS");
    INFO(describe(call.status));
    REQUIRE(call.status.ok());
    CHECK(call.reply.message() == "hello over mTLS");
    CHECK(call.reply.client_common_name() == "getcert test client");
  }
  SECTION("channel_credentials_for with an identity") {
    auto creds = getcert::grpc_tls::channel_credentials_for(server.target(), identity,
                                                            fetch_trusting(pki("root.pem")));
    if (!creds) FAIL(creds.error().message);
    const auto call = echo(server.target(), *creds);
    INFO(describe(call.status));
    REQUIRE(call.status.ok());
    CHECK(call.reply.client_common_name() == "getcert test client");
  }
}

TEST_CASE("the client chain is leaf + intermediates, without the root the .p12 carries", "[grpc]") {
  REQUIRE_OPENSSL();
  const getcert::test::TempDir dir;
  getcert::test::write_file(dir / "issuers.pem",
                            read_file(pki("intermediate.pem")) + read_file(pki("root.pem")));
  const auto identity = client_identity(dir, dir / "issuers.pem");
  REQUIRE(identity.chain.size() == 2);  // the file does carry the root

  auto material = getcert::identity_material(identity);
  REQUIRE(material);
  CHECK(material->root_pem.empty());
  CHECK(material->cert_chain_pem == pem_of("client.pem") + pem_of("intermediate.pem"));
  const auto options = getcert::grpc_tls::ssl_options(*material);
  CHECK(options.pem_private_key == std::string(material->key_pem.begin(), material->key_pem.end()));
}

TEST_CASE("a client trusting the wrong root is refused with UNAVAILABLE", "[grpc]") {
  const EchoServer server(ClientCerts::not_requested);
  // A root from somewhere else (parsed by getcert), not the one verification established.
  getcert::TlsMaterial wrong;
  wrong.root_pem = pem_of("untrusted-root.pem");

  const auto call =
      echo(server.target(), grpc::SslCredentials(getcert::grpc_tls::ssl_options(wrong)));
  INFO(describe(call.status));
  CHECK(call.status.error_code() == grpc::StatusCode::UNAVAILABLE);
  // What a user sees (gRPC 1.51, OpenSSL 3.0): "failed to connect to all addresses; last
  // error: UNKNOWN: ipv4:127.0.0.1:PORT: Ssl handshake failed: SSL_ERROR_SSL:
  // error:0A000086:SSL routines::certificate verify failed".
  CHECK_THAT(call.status.error_message(), Contains("certificate verify failed"));
}

TEST_CASE("mutual TLS without a client identity is refused with UNAVAILABLE", "[grpc]") {
  const EchoServer server(ClientCerts::required);
  const auto result = fetched(server.target(), fetch_trusting(pki("root.pem")));
  auto options = getcert::grpc_tls::ssl_options_from_fetch(result);
  REQUIRE(options);

  const auto call = echo(server.target(), grpc::SslCredentials(*options));
  INFO(describe(call.status));
  CHECK(call.status.error_code() == grpc::StatusCode::UNAVAILABLE);
  // With TLS 1.3 the client finishes its handshake before the server rejects the missing
  // certificate, so the user sees "failed to connect to all addresses; last error:
  // UNAVAILABLE: ipv4:127.0.0.1:PORT: Socket closed" (the server logs "peer did not return a
  // certificate"); with TLS 1.2 the handshake itself fails.
  CHECK_THAT(call.status.error_message(), Contains("Socket closed") || Contains("andshake failed"));
}

TEST_CASE("the helpers refuse, with the reason, when verification established nothing", "[grpc]") {
  SECTION("untrusted root") {
    const EchoServer server(ClientCerts::not_requested);
    const auto result = fetched(server.target(), fetch_trusting(pki("untrusted-root.pem")));
    REQUIRE_FALSE(result.verification.ok);

    auto options = getcert::grpc_tls::ssl_options_from_fetch(result);
    REQUIRE_FALSE(options);
    CHECK(options.error().code == Errc::verification_failed);
    CHECK_THAT(options.error().message, Contains(server.target()));
    CHECK_THAT(options.error().message, Contains("pem_root_certs"));
    CHECK_THAT(options.error().message, Contains("not in the trust store"));
    CHECK_THAT(options.error().detail, Contains("unknown_issuer"));

    auto creds = getcert::grpc_tls::channel_credentials_for(
        server.target(), fetch_trusting(pki("untrusted-root.pem")));
    REQUIRE_FALSE(creds);
    CHECK(creds.error().message == options.error().message);
  }
  SECTION("certificate for another name") {
    const EchoServer server(ClientCerts::not_requested, "wronghost");
    const auto result = fetched(server.target(), fetch_trusting(pki("root.pem")));
    auto material = getcert::tls_material(result);
    REQUIRE_FALSE(material);
    CHECK(material.error().code == Errc::verification_failed);
    CHECK_THAT(material.error().message, Contains("other.example"));
  }
  SECTION("chain that verifies only with an intermediate the server does not send") {
    // The client's CA file holds the intermediate too, so getcert can complete the chain; a
    // gRPC client given only the anchor could not, so the helper says why instead.
    const EchoServer server(ClientCerts::not_requested, "ecdsa", /*leaf_only=*/true);
    const getcert::test::TempDir dir;
    getcert::test::write_file(dir / "ca.pem",
                              read_file(pki("root.pem")) + read_file(pki("intermediate.pem")));
    auto options = fetch_trusting(dir / "ca.pem");
    options.verify.fetch_missing = false;
    const auto result = fetched(server.target(), options);
    INFO("verdict " << getcert::to_string(result.verification.verdict));
    REQUIRE(result.verification.verdict == getcert::Verdict::incomplete_chain);

    auto root = getcert::trust_anchor_pem(result);
    REQUIRE_FALSE(root);
    CHECK(root.error().code == Errc::verification_failed);
    CHECK_THAT(root.error().message, Contains("full chain"));

    // The refusal is right: gRPC trusting the anchor alone fails against this server.
    grpc::SslCredentialsOptions anchor_only;
    anchor_only.pem_root_certs = result.verification.verified_chain.back().pem();
    const auto call = echo(server.target(), grpc::SslCredentials(anchor_only));
    INFO(describe(call.status));
    CHECK(call.status.error_code() == grpc::StatusCode::UNAVAILABLE);
  }
}

TEST_CASE("network failures of channel_credentials_for are getcert errors", "[grpc]") {
  const auto port = getcert::test::closed_port();
  auto creds = getcert::grpc_tls::channel_credentials_for("127.0.0.1:" + std::to_string(port),
                                                          fetch_trusting(pki("root.pem")));
  REQUIRE_FALSE(creds);
  CHECK(creds.error().code == Errc::connect_failed);

  auto bad = getcert::grpc_tls::channel_credentials_for("unix:/tmp/socket");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::invalid_argument);
}

TEST_CASE("a .p12 that is no usable client identity is rejected before any network use", "[grpc]") {
  REQUIRE_OPENSSL();
  const getcert::test::TempDir dir;

  SECTION("wrong password") {
    getcert::pkcs12::DecodeOptions options;
    options.password = "not it";
    auto identity = getcert::single_identity(client_p12(dir, pki("intermediate.pem")), options);
    REQUIRE_FALSE(identity);
    CHECK(identity.error().code == Errc::wrong_password);
  }
  SECTION("key without its certificate") {
    getcert::pkcs12::CreateOptions create;
    create.password = "pw";
    auto pfx = getcert::pkcs12::create(read_file(pki("client.key")), {}, create);
    REQUIRE(pfx);
    getcert::pkcs12::DecodeOptions options;
    options.password = "pw";
    auto single = getcert::single_identity(*pfx, options);
    REQUIRE_FALSE(single);
    CHECK(single.error().code == Errc::invalid_argument);
    CHECK_THAT(single.error().message, Contains("no certificate"));

    auto bundle = getcert::pkcs12::decode(*pfx, options);
    REQUIRE(bundle);
    REQUIRE(bundle->identities.size() == 1);
    const auto& key_only = bundle->identities.front();
    CHECK_FALSE(getcert::identity_material(key_only));
    // Refused before dialing: the endpoint is closed, yet the error is about the identity.
    auto creds = getcert::grpc_tls::channel_credentials_for(
        "127.0.0.1:" + std::to_string(getcert::test::closed_port()), key_only);
    REQUIRE_FALSE(creds);
    CHECK(creds.error().code == Errc::invalid_argument);
  }
}
