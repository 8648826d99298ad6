// getcert::grpc's reloading credentials against real gRPC (libgrpc++, in process, loopback):
// servers and clients whose key store is rotated under them (by rename and by Kubernetes'
// "..data" symlink swap), bad rotations, and getcert's verdicts inside gRPC handshakes.

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "../../grpc/src/keystore_identity.hpp"
#include "echo_client.hpp"
#include "echo_service.hpp"
#include "getcert/certificate.hpp"
#include "getcert/grpc_reloading.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/http_server.hpp"
#include "support/net.hpp"
#include "support/ocsp_responder.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using getcert::Errc;
using getcert::grpc_tls::ClientCertificates;
using getcert::grpc_tls::KeystoreSource;
using getcert::grpc_tls::ReloadEvent;
using getcert::grpc_tls::ReloadOutcome;
using getcert::test::Call;
using getcert::test::describe;
using getcert::test::echo;
using getcert::test::fresh_channel;
using getcert::test::openssl;
using getcert::test::pki;
using getcert::test::read_file;
using getcert::test::TempDir;
using getcert::test::write_file;
using namespace std::chrono_literals;

namespace {

constexpr const char* kPassword = "rotation secret";

#define REQUIRE_OPENSSL()                                                         \
  do {                                                                            \
    if (!getcert::test::have_openssl()) GETCERT_SKIP("openssl is not installed"); \
  } while (false)

// A certificate made at test time: KEY + PEM (+ the issuer chain to send after it).
struct Issued {
  std::string key;
  std::string pem;
  std::string chain;  // leaf + issuing intermediate
};

enum class Kind { server_leaf, client_leaf, intermediate };

Issued issue(const TempDir& dir, const std::string& stem, const std::string& cn, Kind kind,
             const std::string& ca_pem, const std::string& ca_key, int days = 30) {
  Issued out{dir / (stem + ".key"), dir / (stem + ".pem"), dir / (stem + "-chain.pem")};
  const std::string csr = dir / (stem + ".csr");
  const std::string ext = dir / (stem + ".ext");
  openssl({"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", out.key});
  openssl({"req", "-new", "-key", out.key, "-subj", "/O=getcert tests/CN=" + cn, "-out", csr});
  std::string extensions = "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always\n";
  switch (kind) {
    case Kind::intermediate:
      extensions +=
          "basicConstraints = critical, CA:TRUE, pathlen:0\n"
          "keyUsage = critical, keyCertSign, cRLSign\n";
      break;
    case Kind::server_leaf:
      extensions +=
          "basicConstraints = critical, CA:FALSE\nkeyUsage = critical, "
          "digitalSignature\nextendedKeyUsage = serverAuth\n"
          "subjectAltName = DNS:localhost, IP:127.0.0.1\n";
      break;
    case Kind::client_leaf:
      extensions +=
          "basicConstraints = critical, CA:FALSE\nkeyUsage = critical, "
          "digitalSignature\nextendedKeyUsage = clientAuth\n";
      break;
  }
  write_file(ext, extensions);
  // No serial given: OpenSSL 3 picks a random one, so every certificate here is distinct.
  openssl({"x509", "-req", "-in", csr, "-CA", ca_pem, "-CAkey", ca_key, "-days",
           std::to_string(days), "-sha256", "-extfile", ext, "-out", out.pem});
  write_file(out.chain, read_file(out.pem) + (kind == Kind::intermediate ? "" : read_file(ca_pem)));
  return out;
}

// A .p12 as a CA hands it out (openssl, an independent producer): key, leaf, issuers.
std::vector<std::uint8_t> make_p12(const TempDir& dir, const std::string& key,
                                   const std::string& leaf, const std::string& issuers,
                                   const std::string& password = kPassword) {
  const std::string out = dir / "made.p12";
  std::vector<std::string> args{"pkcs12",   "-export",          "-in",  leaf, "-inkey", key,
                                "-passout", "pass:" + password, "-out", out};
  if (!issuers.empty()) args.insert(args.end(), {"-certfile", issuers});
  openssl(args);
  auto bytes = getcert::test::read_bytes(out);
  std::filesystem::remove(out);
  return bytes;
}

// temp + rename, as a careful writer does.
void replace_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  const std::string tmp = path + ".new";
  write_file(tmp, bytes);
  std::filesystem::rename(tmp, path);
}

// A Kubernetes Secret volume: NAME -> ..data/NAME, ..data -> ..<version>/, swapped atomically.
class SecretVolume {
 public:
  SecretVolume(const TempDir& dir, std::string name)
      : root_(dir / "secret"), name_(std::move(name)) {
    std::filesystem::create_directories(root_);
  }
  std::string path() const { return root_ + "/" + name_; }
  void publish(const std::vector<std::uint8_t>& bytes) {
    const std::string version = "..v" + std::to_string(++versions_);
    std::filesystem::create_directories(root_ + "/" + version);
    write_file(root_ + "/" + version + "/" + name_, bytes);
    std::filesystem::create_symlink(version, root_ + "/..data_tmp");
    std::filesystem::rename(root_ + "/..data_tmp", root_ + "/..data");
    if (versions_ == 1) std::filesystem::create_symlink("..data/" + name_, path());
  }

 private:
  std::string root_;
  std::string name_;
  int versions_ = 0;
};

// Reload reports, in order, as the watcher thread makes them.
class Reports {
 public:
  getcert::grpc_tls::ReloadCallback callback() {
    return [this](const ReloadEvent& event) {
      const std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(event);
    };
  }
  std::vector<ReloadEvent> events() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }
  // Waits until at least n reports arrived (false after 10 s).
  bool wait_for(std::size_t n) const {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < until) {
      if (events().size() >= n) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<ReloadEvent> events_;
};

getcert::grpc_tls::WatchOptions fast_watch(Reports* reports = nullptr) {
  getcert::grpc_tls::WatchOptions watch;
  watch.poll_interval = 100ms;
  if (reports != nullptr) watch.on_reload = reports->callback();
  return watch;
}

KeystoreSource keystore(const std::string& path, const std::string& password = kPassword) {
  KeystoreSource source;
  source.path = path;
  source.password.value = password;
  return source;
}

class RotatingServer {
 public:
  explicit RotatingServer(const getcert::grpc_tls::ReloadingServerOptions& options) {
    auto creds = getcert::grpc_tls::reloading_server_credentials(options);
    if (!creds) throw std::runtime_error("server credentials: " + creds.error().message);
    creds_ = std::move(*creds);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", creds_.credentials, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    if (!server_ || port_ == 0) throw std::runtime_error("gRPC test server did not start");
  }
  RotatingServer(const RotatingServer&) = delete;
  RotatingServer& operator=(const RotatingServer&) = delete;
  ~RotatingServer() { server_->Shutdown(std::chrono::system_clock::now() + 2s); }

  std::string target() const { return "localhost:" + std::to_string(port_); }
  const getcert::grpc_tls::ReloadingServerCredentials& credentials() const { return creds_; }

 private:
  getcert::grpc_tls::ReloadingServerCredentials creds_;
  getcert::examples::EchoService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// Channel options that trust the test PKI's root, watching fast (and reporting to `reports`).
getcert::grpc_tls::ReloadingChannelOptions trusting_root(Reports* reports = nullptr) {
  getcert::grpc_tls::ReloadingChannelOptions options;
  options.peer.verify.trust.ca_file = pki("root.pem");
  options.watch = fast_watch(reports);
  return options;
}

std::string sha256_of_pem_file(const std::string& path) {
  auto certs = getcert::parse_certificates_pem(read_file(path));
  if (!certs || certs->empty()) throw std::runtime_error("no certificate in " + path);
  return certs->front().sha256;
}

// The leaf a brand-new connection is shown, as getcert's verifier saw it ("" if none), trusting
// `ca_file` (default: the test PKI's root).
std::string leaf_seen_by_new_connection(const std::string& target,
                                        const std::string& ca_file = "") {
  auto options = trusting_root();
  if (!ca_file.empty()) options.peer.verify.trust.ca_file = ca_file;
  auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
  if (!creds) throw std::runtime_error(creds.error().message);
  const auto call = echo(target, creds->credentials);
  const auto verdict = creds->verdicts->last();
  if (!call.status.ok() || !verdict || verdict->presented.empty()) return "";
  return verdict->presented.front().sha256;
}

bool wait_until_new_connections_see(const std::string& target, const std::string& sha256,
                                    const std::string& ca_file = "") {
  const auto until = std::chrono::steady_clock::now() + 15s;
  while (std::chrono::steady_clock::now() < until) {
    if (leaf_seen_by_new_connection(target, ca_file) == sha256) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// A server whose identity is the key store at `path`, watched fast (reporting to `reports`).
getcert::grpc_tls::ReloadingServerOptions server_on(const std::string& path,
                                                    Reports* reports = nullptr) {
  getcert::grpc_tls::ReloadingServerOptions options;
  options.identity = keystore(path);
  options.watch = fast_watch(reports);
  return options;
}

// A server that requires client certificates and judges them against the test root.
getcert::grpc_tls::ReloadingServerOptions mtls_server_on(const std::string& path) {
  auto options = server_on(path);
  options.client_certificates = ClientCertificates::require;
  options.peer.verify.trust.ca_file = pki("root.pem");
  return options;
}

// A .p12 of the PKI's leaf LEAF (LEAF.key, LEAF.pem) and the intermediate.
std::vector<std::uint8_t> pki_leaf_p12(const TempDir& dir, const std::string& leaf = "ecdsa") {
  return make_p12(dir, pki(leaf + ".key"), pki(leaf + ".pem"), pki("intermediate.pem"));
}

// Writes that .p12 to dir/FILE and returns its path.
std::string pki_p12(const TempDir& dir, const std::string& file,
                    const std::string& leaf = "ecdsa") {
  std::string path = dir / file;
  write_file(path, pki_leaf_p12(dir, leaf));
  return path;
}

// A call refused by getcert's verifier inside the handshake, with `reason` in its message.
void check_refused(const Call& call, const std::string& reason) {
  INFO(describe(call.status));
  CHECK(call.status.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK_THAT(call.status.error_message(), Contains(reason));
}

// The two rotations of a server's key store in `volume` that its clients must not notice, each
// awaited until the watcher reported it and new connections see the new leaf:
// 1. the same intermediate, a new key;
void rotate_to_new_key(const TempDir& dir, SecretVolume& volume, const Reports& reports,
                       const std::string& target) {
  const auto new_key = issue(dir, "rotated-key", "rotated key", Kind::server_leaf,
                             pki("intermediate.pem"), pki("intermediate.key"));
  volume.publish(make_p12(dir, new_key.key, new_key.pem, pki("intermediate.pem")));
  REQUIRE(reports.wait_for(1));
  CHECK(reports.events()[0].outcome == ReloadOutcome::loaded);
  CHECK(wait_until_new_connections_see(target, sha256_of_pem_file(new_key.pem)));
}

// 2. a new intermediate under the same root, and a leaf under it (returned).
Issued rotate_to_new_intermediate(const TempDir& dir, SecretVolume& volume, const Reports& reports,
                                  const std::string& target) {
  const auto new_ca = issue(dir, "intermediate-2", "getcert Test Intermediate CA 2",
                            Kind::intermediate, pki("root.pem"), pki("root.key"));
  auto moved =
      issue(dir, "moved", "moved to a new intermediate", Kind::server_leaf, new_ca.pem, new_ca.key);
  volume.publish(make_p12(dir, moved.key, moved.pem, new_ca.pem));
  REQUIRE(reports.wait_for(2));
  CHECK(reports.events()[1].outcome == ReloadOutcome::loaded);
  CHECK(wait_until_new_connections_see(target, sha256_of_pem_file(moved.pem)));
  return moved;
}

// Channel credentials trusting the test root, with the key store at `p12` as the client's
// identity (its reloads reported to `reports`).
getcert::grpc_tls::ReloadingChannelCredentials client_with_identity(const std::string& p12,
                                                                    Reports* reports = nullptr) {
  auto options = trusting_root(reports);
  options.identity = keystore(p12);
  auto client = getcert::grpc_tls::reloading_channel_credentials(options);
  REQUIRE(client);
  return std::move(*client);
}

// One call to `target` from a client whose identity is the key store at `p12`.
Call echo_with_identity(const std::string& target, const std::string& p12) {
  return echo(target, client_with_identity(p12).credentials);
}

// A client's key store at `p12` replaced by one for a new leaf, CN "rotated client", awaited until
// the watcher reported it.
void rotate_client_identity(const TempDir& dir, const std::string& p12, const Reports& reports) {
  const auto rotated = issue(dir, "rotated-client", "rotated client", Kind::client_leaf,
                             pki("intermediate.pem"), pki("intermediate.key"));
  replace_file(p12, make_p12(dir, rotated.key, rotated.pem, pki("intermediate.pem")));
  REQUIRE(reports.wait_for(1));
  CHECK(reports.events()[0].outcome == ReloadOutcome::loaded);
}

// The client certificate name a server reports to new connections, once it is `cn` (or the
// last one seen, after 15 s). Every call must succeed.
std::string wait_until_server_sees_client(const std::string& target,
                                          const std::shared_ptr<grpc::ChannelCredentials>& creds,
                                          const std::string& cn) {
  std::string seen;
  const auto until = std::chrono::steady_clock::now() + 15s;
  while (seen != cn && std::chrono::steady_clock::now() < until) {
    const auto call = echo(target, creds);
    INFO(describe(call.status));
    REQUIRE(call.status.ok());
    seen = call.reply.client_common_name();
    if (seen != cn) std::this_thread::sleep_for(100ms);
  }
  return seen;
}

}  // namespace

TEST_CASE("reloading credentials: a valid chain connects and the verdict is readable", "[grpc]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  const RotatingServer server(server_on(pki_p12(dir, "server.p12")));

  auto creds = getcert::grpc_tls::reloading_channel_credentials(trusting_root());
  REQUIRE(creds);
  CHECK_FALSE(creds->identity);
  const auto call = echo(server.target(), creds->credentials, "valid chain");
  INFO(describe(call.status));
  REQUIRE(call.status.ok());
  CHECK(call.reply.message() == "valid chain");

  const auto verdict = creds->verdicts->last();
  REQUIRE(verdict);
  CHECK(verdict->accepted);
  CHECK(verdict->reason.empty());
  CHECK(verdict->name == "localhost");
  CHECK(verdict->verification.ok);
  REQUIRE(verdict->presented.size() == 2);  // leaf + intermediate, as the server sent them
  CHECK(verdict->presented.front().sha256 == sha256_of_pem_file(pki("ecdsa.pem")));
  CHECK(creds->verdicts->count() == 1);  // one verification for one handshake

  // The server's copy for gRPC is private: 0700 directory, 0600 file.
  struct stat st {};
  const std::string pem = server.credentials().identity->pem_path();
  REQUIRE(::stat(std::filesystem::path(pem).parent_path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat(pem.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("reloading credentials: getcert's rejection is the failed call's reason", "[grpc]") {
  REQUIRE_OPENSSL();
  const TempDir dir;

  SECTION("pin mismatch") {
    const RotatingServer server(server_on(pki_p12(dir, "server.p12")));
    auto options = trusting_root();
    options.peer.verify.pins = {"sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="};
    auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE(creds);
    const auto call = echo(server.target(), creds->credentials);
    check_refused(call, "getcert: localhost: pin_mismatch: ");
    const auto verdict = creds->verdicts->last();
    REQUIRE(verdict);
    CHECK_FALSE(verdict->accepted);
    CHECK_THAT(call.status.error_message(), Contains(verdict->reason));
    REQUIRE_FALSE(verdict->problems.empty());
    CHECK(verdict->problems.front().code == getcert::ProblemCode::pin_mismatch);
    CHECK(verdict->reason.find('\n') == std::string::npos);

    // The right pin (the intermediate's key) connects.
    options.peer.verify.pins = {
        "sha256/" +
        getcert::parse_certificates_pem(read_file(pki("intermediate.pem")))->front().spki_sha256};
    auto pinned = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE(pinned);
    const auto ok = echo(server.target(), pinned->credentials);
    INFO(describe(ok.status));
    CHECK(ok.status.ok());
  }
  SECTION("a certificate inside the expiry window") {
    const RotatingServer server(server_on(pki_p12(dir, "server.p12", "expiring")));
    auto options = trusting_root();
    // Without a window the chain is valid...
    auto plain = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE(plain);
    const auto accepted = echo(server.target(), plain->credentials);
    INFO(describe(accepted.status));
    CHECK(accepted.status.ok());
    // ...and inside a 30-day window it is refused, naming the certificate.
    options.peer.expires_within = std::chrono::hours(24 * 30);
    auto windowed = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE(windowed);
    const auto call = echo(server.target(), windowed->credentials);
    check_refused(call, "getcert: localhost: expired: certificate");
    CHECK_THAT(call.status.error_message(), Contains("within the expiry window of 30d"));
  }
  SECTION("a name the certificate does not carry") {
    const RotatingServer server(server_on(pki_p12(dir, "server.p12", "wronghost")));
    auto creds = getcert::grpc_tls::reloading_channel_credentials(trusting_root());
    REQUIRE(creds);
    const auto call = echo(server.target(), creds->credentials);
    check_refused(call, "getcert: localhost: hostname_mismatch");
  }
  SECTION("an untrusted root") {
    const RotatingServer server(server_on(pki_p12(dir, "server.p12")));
    auto options = trusting_root();
    options.peer.verify.trust.ca_file = pki("untrusted-root.pem");
    auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE(creds);
    const auto call = echo(server.target(), creds->credentials);
    check_refused(call, "getcert: localhost: ");
    CHECK_FALSE(creds->verdicts->last()->verification.trusted);
  }
}

TEST_CASE("the verifier never downloads: OCSP and CRL URLs of the peer go unasked",
          "[grpc][ocsp]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  // Listeners where the PKI's OCSP responder and CRL distribution point are: each counts the
  // connections made to it.
  getcert::test::HttpServer ocsp_server(getcert::test::kPkiOcspPort);
  getcert::test::HttpServer crl_server;
  const RotatingServer server(server_on(pki_p12(dir, "server.p12", "revoked")));
  auto options = trusting_root();
  // Asked for, and still not done: a handshake never leaves the machine.
  options.peer.verify.check_revocation = true;
  options.peer.verify.require_revocation = true;
  SECTION("online revocation is not checked") {
    auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE(creds);
    const auto call = echo(server.target(), creds->credentials);
    INFO(describe(call.status));
    CHECK(call.status.ok());
    CHECK(ocsp_server.connections_settled() == 0);
    CHECK(crl_server.connections_settled() == 0);
  }
  SECTION("an offline CRL is the way, and it catches the revoked leaf") {
    options.peer.verify.crl_files = {pki("intermediate-crl.pem")};
    auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE(creds);
    const auto call = echo(server.target(), creds->credentials);
    check_refused(call, "getcert: localhost: revoked: ");
    const RotatingServer good(server_on(pki_p12(dir, "good.p12", "good")));
    const auto ok = echo(good.target(), creds->credentials);
    INFO(describe(ok.status));
    CHECK(ok.status.ok());
    CHECK(ocsp_server.connections_settled() == 0);
    CHECK(crl_server.connections_settled() == 0);
  }
}

TEST_CASE("an mTLS server does not fetch the CA Issuers URL a client writes into its certificate",
          "[grpc][ocsp]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  // The client leaf names http://127.0.0.1:18080/intermediate.der as its issuer's location, and
  // sends no intermediate: a verifier that chases AIA would connect here.
  getcert::test::HttpServer aia_server;
  aia_server.serve("/intermediate.der", read_file(pki("intermediate.der")));
  auto server_options = mtls_server_on(pki_p12(dir, "server.p12"));
  server_options.peer.verify.fetch_missing = true;  // asked for, and still not done
  const RotatingServer server(server_options);
  const std::string leaf_only = dir / "leaf-only.p12";
  write_file(leaf_only, make_p12(dir, pki("client.key"), pki("client.pem"), ""));
  const auto call = echo_with_identity(server.target(), leaf_only);
  INFO(describe(call.status));
  CHECK_FALSE(call.status.ok());
  const auto verdict = server.credentials().verdicts->last();
  REQUIRE(verdict);
  CHECK_FALSE(verdict->accepted);
  CHECK_THAT(verdict->reason, Contains("missing_intermediate"));
  CHECK(aia_server.connections_settled() == 0);
  CHECK(aia_server.requests().empty());
  CHECK(verdict->verification.fetched_intermediates.empty());
}

TEST_CASE("a server rotates to a new key, then a new intermediate, while a client keeps calling",
          "[grpc]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  SecretVolume volume(dir, "tls.p12");
  volume.publish(pki_leaf_p12(dir));
  Reports reports;
  const RotatingServer server(server_on(volume.path(), &reports));

  // A client that calls all the time, on one long-lived channel and on new ones.
  auto client = getcert::grpc_tls::reloading_channel_credentials(trusting_root());
  REQUIRE(client);
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  std::thread caller([&] {
    const auto long_lived = fresh_channel(server.target(), client->credentials);
    while (!stop) {
      for (const auto& channel :
           {long_lived, fresh_channel(server.target(), client->credentials)}) {
        const auto call = echo(channel, "during rotation");
        ++calls;
        if (!call.status.ok()) {
          const std::lock_guard<std::mutex> lock(failures_mutex);
          failures.push_back(describe(call.status));
        }
      }
    }
  });
  // Stops the caller however this test ends. A failed REQUIRE or a throwing helper below unwinds
  // through here, and a still-joinable std::thread would then abort the whole run (ctest said
  // only "Subprocess aborted") instead of letting Catch report what failed.
  struct StopCaller {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~StopCaller() {
      stop = true;
      if (thread.joinable()) thread.join();
    }
  } const stop_caller{stop, caller};

  std::this_thread::sleep_for(300ms);
  rotate_to_new_key(dir, volume, reports, server.target());

  const Issued moved = rotate_to_new_intermediate(dir, volume, reports, server.target());
  std::this_thread::sleep_for(300ms);
  stop = true;
  caller.join();

  CHECK(server.credentials().identity->generation() == 3);
  CHECK(server.credentials().identity->current_leaf().sha256 == sha256_of_pem_file(moved.pem));
  // The verdict of a new connection shows the new chain: leaf, then the new intermediate.
  const auto last = client->verdicts->last();
  REQUIRE(last);
  CHECK(last->accepted);
  INFO("calls made: " << calls.load());
  CHECK(calls.load() > 10);
  const std::lock_guard<std::mutex> lock(failures_mutex);
  CHECK(failures.empty());
  for (const auto& failure : failures) UNSCOPED_INFO(failure);
  CHECK(reports.events().size() == 2);  // one report per version, none per handshake
}

TEST_CASE("a client rotates its .p12 and the server sees the new client certificate", "[grpc]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  const RotatingServer server(mtls_server_on(pki_p12(dir, "server.p12")));

  const std::string p12 = pki_p12(dir, "client.p12", "client");
  Reports reports;
  const auto client = client_with_identity(p12, &reports);
  REQUIRE(client.identity);

  const auto first = echo(server.target(), client.credentials);
  INFO(describe(first.status));
  REQUIRE(first.status.ok());
  CHECK(first.reply.client_common_name() == "getcert test client");
  REQUIRE(server.credentials().verdicts);
  const auto judged = server.credentials().verdicts->last();
  REQUIRE(judged);
  CHECK(judged->accepted);
  CHECK(judged->name.empty());  // client certificates are not checked against a name

  rotate_client_identity(dir, p12, reports);
  CHECK(client.identity->generation() == 2);

  CHECK(wait_until_server_sees_client(server.target(), client.credentials, "rotated client") ==
        "rotated client");
  CHECK(server.credentials().verdicts->last()->presented.front().subject_cn == "rotated client");
}

TEST_CASE("mTLS servers judge client certificates with getcert", "[grpc]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  auto server_options = mtls_server_on(pki_p12(dir, "server.p12"));

  SECTION("a server certificate is no client certificate (purpose client)") {
    const RotatingServer server(server_options);
    const auto call = echo_with_identity(server.target(), pki_p12(dir, "wrong.p12"));
    INFO(describe(call.status));
    CHECK_FALSE(call.status.ok());
    const auto verdict = server.credentials().verdicts->last();
    REQUIRE(verdict);
    CHECK_FALSE(verdict->accepted);
    CHECK_THAT(verdict->reason,
               Contains("getcert: client certificate '") && Contains("wrong_purpose"));
  }
  SECTION("pinned client certificates") {
    server_options.peer.verify.pins = {"sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="};
    const RotatingServer server(server_options);
    const auto call = echo_with_identity(server.target(), pki_p12(dir, "client.p12", "client"));
    INFO(describe(call.status));
    CHECK_FALSE(call.status.ok());
    CHECK_THAT(server.credentials().verdicts->last()->reason, Contains("pin_mismatch"));
  }
  SECTION("no client certificate at all") {
    const RotatingServer server(server_options);
    auto client = getcert::grpc_tls::reloading_channel_credentials(trusting_root());
    REQUIRE(client);
    const auto call = echo(server.target(), client->credentials);
    INFO(describe(call.status));
    CHECK_FALSE(call.status.ok());
  }
}

TEST_CASE("bad rotations keep the old identity and are reported exactly once", "[grpc]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  const std::string path = dir / "server.p12";
  const auto good = pki_leaf_p12(dir);
  write_file(path, good);
  Reports reports;
  const RotatingServer server(server_on(path, &reports));
  const auto& watcher = server.credentials().identity;
  const std::string old_leaf = sha256_of_pem_file(pki("ecdsa.pem"));
  REQUIRE(leaf_seen_by_new_connection(server.target()) == old_leaf);

  const auto next = issue(dir, "next", "next server", Kind::server_leaf, pki("intermediate.pem"),
                          pki("intermediate.key"));
  const auto next_p12 = make_p12(dir, next.key, next.pem, pki("intermediate.pem"));
  Errc expected = Errc::internal;
  // State of the mid-read replacement below; lives as long as the hook may run.
  std::atomic<bool> fired{false};
  const std::string truncated = dir / "truncated";
  struct HookReset {
    HookReset() = default;
    HookReset(const HookReset&) = delete;
    HookReset& operator=(const HookReset&) = delete;
    ~HookReset() { getcert::grpc_tls::detail::set_after_read_hook_for_testing(nullptr); }
  } const reset_hook;

  SECTION("a truncated file") {
    replace_file(path, std::vector<std::uint8_t>(
                           next_p12.begin(),
                           next_p12.begin() + static_cast<std::ptrdiff_t>(next_p12.size() / 2)));
    expected = Errc::malformed_input;
  }
  SECTION("a wrong password") {
    replace_file(path, make_p12(dir, next.key, next.pem, pki("intermediate.pem"), "not it"));
    expected = Errc::wrong_password;
  }
  SECTION("a key that does not match the certificate (PEM key + chain)") {
    // The new certificate with the old key: what a half-finished rotation leaves behind.
    std::string pem = read_file(pki("ecdsa.key")) + read_file(next.chain);
    replace_file(path, std::vector<std::uint8_t>(pem.begin(), pem.end()));
    expected = Errc::invalid_argument;
  }
  SECTION("a FIFO in the store's place") {
    // Opening a FIFO for reading waits for a writer: the watcher must refuse it at once (and
    // its destructor must not wait on it either).
    const std::string fifo = dir / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::filesystem::rename(fifo, path);
    expected = Errc::io_error;
  }
  SECTION("a file replaced while it is read") {
    // A new, good version is written; while the watcher reads it, a truncated file replaces
    // it. The good bytes it read are no longer the file: nothing of them may reach gRPC.
    write_file(truncated, std::vector<std::uint8_t>(next_p12.begin(), next_p12.begin() + 100));
    getcert::grpc_tls::detail::set_after_read_hook_for_testing([&] {
      if (!fired.exchange(true)) std::filesystem::rename(truncated, path);
    });
    replace_file(path, next_p12);
    expected = Errc::malformed_input;
  }

  REQUIRE(reports.wait_for(1));
  getcert::grpc_tls::detail::set_after_read_hook_for_testing(nullptr);
  // Several poll intervals and handshakes later: still one report, still the old identity.
  std::this_thread::sleep_for(600ms);
  for (int i = 0; i < 3; ++i) CHECK(leaf_seen_by_new_connection(server.target()) == old_leaf);
  const auto events = reports.events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].outcome == ReloadOutcome::rejected);
  CHECK(events[0].error.code == expected);
  CHECK(events[0].path == path);
  CHECK_FALSE(events[0].error.message.empty());
  CHECK(events[0].error.message.find('\n') == std::string::npos);
  CHECK(watcher->generation() == 1);
  CHECK(watcher->current_leaf().sha256 == old_leaf);

  // A good version afterwards is taken, and reported once more.
  replace_file(path, next_p12);
  REQUIRE(reports.wait_for(2));
  CHECK(reports.events()[1].outcome == ReloadOutcome::loaded);
  CHECK(wait_until_new_connections_see(server.target(), sha256_of_pem_file(next.pem)));
  CHECK(reports.events().size() == 2);
}

TEST_CASE("key stores in every form load, and a first version that cannot is an error", "[grpc]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  const auto p12 = pki_leaf_p12(dir);
  const std::string leaf = sha256_of_pem_file(pki("ecdsa.pem"));

  SECTION("PKCS#12, base64 of it, PEM key + chain, base64 of that") {
    write_file(dir / "p12", p12);
    write_file(dir / "pem", read_file(pki("ecdsa.key")) + read_file(pki("ecdsa-chain.pem")));
    openssl({"base64", "-in", dir / "p12", "-out", dir / "p12.b64"});
    openssl({"base64", "-in", dir / "pem", "-out", dir / "pem.b64"});
    const std::vector<std::pair<std::string, std::string>> files{
        {dir / "p12", kPassword},
        {dir / "p12.b64", kPassword},
        {dir / "pem", ""},
        {dir / "pem.b64", ""},
    };
    for (const auto& [file, password] : files) {
      INFO(file);
      auto watcher =
          getcert::grpc_tls::IdentityWatcher::start(keystore(file, password), fast_watch());
      if (!watcher) FAIL(watcher.error().message);
      CHECK((*watcher)->current_leaf().sha256 == leaf);
      const std::string copy = read_file((*watcher)->pem_path());
      CHECK(copy.rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
      CHECK(getcert::test::certificate_block_list(copy).size() == 2);  // leaf + intermediate
    }
  }
  SECTION("a wrong password the first time") {
    write_file(dir / "p12", p12);
    auto watcher = getcert::grpc_tls::IdentityWatcher::start(keystore(dir / "p12", "nope"));
    REQUIRE_FALSE(watcher);
    CHECK(watcher.error().code == Errc::wrong_password);
    CHECK_THAT(watcher.error().message, Contains(dir / "p12"));
  }
  SECTION("a missing file") {
    auto watcher = getcert::grpc_tls::IdentityWatcher::start(keystore(dir / "absent.p12"));
    REQUIRE_FALSE(watcher);
    CHECK(watcher.error().code == Errc::io_error);
  }
  SECTION("the password from a file, read again at each reload") {
    write_file(dir / "p12", p12);
    write_file(dir / "password", std::string(kPassword) + "\n");
    KeystoreSource source;
    source.path = dir / "p12";
    source.password.file = dir / "password";
    Reports reports;
    auto watcher = getcert::grpc_tls::IdentityWatcher::start(source, fast_watch(&reports));
    if (!watcher) FAIL(watcher.error().message);
    CHECK((*watcher)->current_leaf().sha256 == leaf);

    // The CA re-issues the store under a new password; the password file follows.
    const auto next = issue(dir, "next", "next server", Kind::server_leaf, pki("intermediate.pem"),
                            pki("intermediate.key"));
    replace_file(dir / "p12", make_p12(dir, next.key, next.pem, pki("intermediate.pem"), "new"));
    REQUIRE(reports.wait_for(1));
    // Seen before the password file changed: rejected once, then loaded with the new one.
    if (reports.events()[0].outcome == ReloadOutcome::rejected) {
      CHECK(reports.events()[0].error.code == Errc::wrong_password);
    }
    write_file(dir / "password", std::string("new\n"));
    const auto until = std::chrono::steady_clock::now() + 10s;
    while ((*watcher)->generation() < 2 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(20ms);
    }
    CHECK((*watcher)->current_leaf().sha256 == sha256_of_pem_file(next.pem));
    CHECK(reports.events().back().outcome == ReloadOutcome::loaded);
    CHECK(reports.events().size() <= 2);
  }
}

// ---------------------------------------------------------------------------------------------
// Python's grpcio on the other side (tests/grpc/grpcio_peer.py): a peer that judges the chains
// with its own verification, not getcert's and not through gRPC C++'s API.

namespace {

// Debian's python3-grpcio is installed for /usr/bin/python3, which a python3 earlier in PATH
// (pyenv, a virtualenv) may not see: the first interpreter that imports grpc, "" when none does.
// -I (isolated): neither the working directory nor PYTHON* variables can shadow the module.
std::string python_with_grpcio() {
  for (const char* name : {"python3", "/usr/bin/python3"}) {
    std::string candidate = name;
    const bool exists = candidate.front() == '/' ? std::filesystem::exists(candidate)
                                                 : getcert::test::have_tool(candidate);
    if (!exists) continue;
    if (getcert::test::run({candidate, "-I", "-c", "import grpc"}, 30s).exit_code == 0) {
      return candidate;
    }
  }
  return "";
}

#define REQUIRE_GRPCIO(python)                                                        \
  do {                                                                                \
    if ((python).empty()) {                                                           \
      GETCERT_SKIP("python3 with the grpc module (python3-grpcio) is not installed"); \
    }                                                                                 \
  } while (false)

getcert::test::Process spawn_peer(const std::string& python, std::vector<std::string> args) {
  args.insert(args.begin(), {python, "-I", GETCERT_GRPCIO_PEER});
  getcert::test::SpawnOptions options;
  options.die_with_parent = true;
  return getcert::test::Process::spawn(args, options);
}

// The calls the Python client reported so far (its last "calls N failures M" line), -1 if none.
int python_calls(const getcert::test::Process& peer) {
  const std::string out = peer.stdout_text();
  const auto at = out.rfind("calls ");
  if (at == std::string::npos || (at != 0 && out[at - 1] != '\n')) return -1;
  return std::stoi(out.substr(at + 6));
}

// Waits until the Python client made `more` calls beyond those it had reported at the start.
bool python_makes_calls(getcert::test::Process& peer, int more) {
  const int start = python_calls(peer);
  return getcert::test::eventually(
             [&] { return !peer.running() || python_calls(peer) >= start + more; }, 30s) &&
         peer.running();
}

std::string peer_output(const getcert::test::Process& peer) {
  return "python stdout:\n" + peer.stdout_text() + "python stderr:\n" + peer.stderr_text();
}

}  // namespace

TEST_CASE("a server rotates while a python grpcio client keeps calling", "[grpc][grpcio]") {
  REQUIRE_OPENSSL();
  const std::string python = python_with_grpcio();
  REQUIRE_GRPCIO(python);
  const TempDir dir;
  SecretVolume volume(dir, "tls.p12");
  volume.publish(pki_leaf_p12(dir));
  Reports reports;
  const RotatingServer server(server_on(volume.path(), &reports));

  // grpcio verifies against the test root with its own code: a server that sent a wrong or
  // incomplete chain at any moment of the rotation would fail one of its calls.
  const std::string stop = dir / "stop";
  auto client = spawn_peer(python, {"client", server.target(), pki("root.pem"), stop});
  const bool ready = getcert::test::eventually(
      [&] { return !client.running() || client.stdout_text().find("ready\n") == 0; }, 30s);
  {
    INFO(peer_output(client));
    REQUIRE(ready);
    REQUIRE(client.running());
    REQUIRE(python_makes_calls(client, 10));
  }

  rotate_to_new_key(dir, volume, reports, server.target());
  // Every other call of the client is on a new connection: these see the new key.
  CHECK(python_makes_calls(client, 20));

  rotate_to_new_intermediate(dir, volume, reports, server.target());
  CHECK(python_makes_calls(client, 20));

  write_file(stop, std::string());
  const auto exit_code = client.wait_for(30s);
  INFO(peer_output(client));
  REQUIRE(exit_code);
  const std::string out = client.stdout_text();
  CHECK(out.find("\nfail ") == std::string::npos);
  CHECK(python_calls(client) >= 50);
  CHECK_THAT(out, Contains(" failures 0\n"));
  CHECK(*exit_code == 0);  // grpcio's own verdict: no call failed
  CHECK(server.credentials().identity->generation() == 3);
  CHECK(reports.events().size() == 2);
}

TEST_CASE("a client rotates its .p12 and a python grpcio mTLS server sees the new certificate",
          "[grpc][grpcio]") {
  REQUIRE_OPENSSL();
  const std::string python = python_with_grpcio();
  REQUIRE_GRPCIO(python);
  const TempDir dir;
  // grpcio requires a client certificate and verifies it against the test root itself.
  const std::string stop = dir / "stop";
  auto server = spawn_peer(
      python, {"server", pki("ecdsa.key"), pki("ecdsa-chain.pem"), pki("root.pem"), stop});
  int port = 0;
  getcert::test::eventually(
      [&] {
        const std::string out = server.stdout_text();
        if (out.rfind("listening ", 0) == 0) port = std::stoi(out.substr(10));
        return port != 0 || !server.running();
      },
      30s);
  {
    INFO(peer_output(server));
    REQUIRE(port != 0);
  }
  const std::string target = "localhost:" + std::to_string(port);

  const std::string p12 = pki_p12(dir, "client.p12", "client");
  Reports reports;
  const auto client = client_with_identity(p12, &reports);

  const auto first = echo(target, client.credentials, "before");
  INFO(describe(first.status));
  REQUIRE(first.status.ok());
  CHECK(first.reply.message() == "before");
  CHECK(first.reply.client_common_name() == "getcert test client");
  // getcert judged grpcio's server certificate.
  const auto verdict = client.verdicts->last();
  REQUIRE(verdict);
  CHECK(verdict->accepted);
  CHECK(verdict->presented.front().sha256 == sha256_of_pem_file(pki("ecdsa.pem")));

  const auto long_lived = fresh_channel(target, client.credentials);
  REQUIRE(echo(long_lived).status.ok());
  rotate_client_identity(dir, p12, reports);

  CHECK(wait_until_server_sees_client(target, client.credentials, "rotated client") ==
        "rotated client");
  // The connection made before the rotation keeps working with the identity it was made with.
  const auto old = echo(long_lived);
  INFO(describe(old.status));
  CHECK(old.status.ok());
  CHECK(old.reply.client_common_name() == "getcert test client");

  write_file(stop, std::string());
  const auto exit_code = server.wait_for(30s);
  INFO(peer_output(server));
  REQUIRE(exit_code);
  CHECK(*exit_code == 0);
  CHECK_THAT(server.stdout_text(),
             Contains("peer getcert test client\n") && Contains("peer rotated client\n"));
}

// ---------------------------------------------------------------------------------------------
// Roots from the anchor a getcert fetch established (AnchorWatcher)

namespace {

// A second root CA, an intermediate under it and a server leaf under that: where a server
// moves when its CA changes.
struct OtherCa {
  std::string root;
  Issued intermediate;
  Issued leaf;
};

OtherCa other_ca(const TempDir& dir) {
  OtherCa ca;
  ca.root = dir / "root-2.pem";
  const std::string key = dir / "root-2.key";
  openssl({"req",
           "-x509",
           "-newkey",
           "ec",
           "-pkeyopt",
           "ec_paramgen_curve:P-256",
           "-nodes",
           "-keyout",
           key,
           "-out",
           ca.root,
           "-days",
           "30",
           "-subj",
           "/O=getcert tests/CN=getcert Test Root CA 2",
           "-addext",
           "basicConstraints=critical,CA:TRUE",
           "-addext",
           "keyUsage=critical,keyCertSign,cRLSign",
           "-addext",
           "subjectKeyIdentifier=hash"});
  ca.intermediate = issue(dir, "intermediate-r2", "getcert Test Intermediate under Root 2",
                          Kind::intermediate, ca.root, key);
  ca.leaf = issue(dir, "leaf-r2", "server under root 2", Kind::server_leaf, ca.intermediate.pem,
                  ca.intermediate.key);
  return ca;
}

getcert::grpc_tls::AnchorSource anchor_of(const std::string& target, const std::string& trust,
                                          Reports* reports) {
  getcert::grpc_tls::AnchorSource source;
  source.endpoint = target;
  source.fetch.verify.trust.ca_file = trust;
  source.min_refetch_interval = 1s;
  source.on_change = reports->callback();
  return source;
}

}  // namespace

TEST_CASE("roots from a fetch's anchor follow a server that moves to a new CA", "[grpc][anchor]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  const OtherCa moved = other_ca(dir);
  // The store the anchor is taken from trusts both roots; the channel trusts only the anchor.
  const std::string trusted = dir / "trusted.pem";
  write_file(trusted, read_file(pki("root.pem")) + read_file(moved.root));
  const std::string p12 = pki_p12(dir, "server.p12");
  Reports server_reports;
  const RotatingServer server(server_on(p12, &server_reports));

  Reports reports;
  getcert::grpc_tls::ReloadingChannelOptions options;
  options.anchor = anchor_of(server.target(), trusted, &reports);
  auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
  if (!creds) FAIL(creds.error().message);
  REQUIRE(creds->anchor);
  CHECK(creds->anchor->current().sha256 == sha256_of_pem_file(pki("root.pem")));
  CHECK(creds->anchor->generation() == 1);
  CHECK(creds->anchor->fetches() == 1);
  CHECK(sha256_of_pem_file(creds->anchor->pem_path()) == sha256_of_pem_file(pki("root.pem")));
  struct stat st {};
  REQUIRE(::stat(std::filesystem::path(creds->anchor->pem_path()).parent_path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  const auto before = echo(server.target(), creds->credentials, "before");
  INFO(describe(before.status));
  REQUIRE(before.status.ok());
  CHECK(creds->anchor->fetches() == 1);  // a chain that reaches the anchor fetches nothing

  // Trust is narrowed to that anchor: a chain under the other root, which the fetch's store
  // trusts, is not accepted as it is (proven on a channel whose anchor cannot be re-fetched).
  {
    auto narrow = options;
    Reports ignored;
    narrow.anchor = anchor_of(server.target(), trusted, &ignored);
    narrow.anchor->min_refetch_interval = 1h;
    auto pinned = getcert::grpc_tls::reloading_channel_credentials(narrow);
    REQUIRE(pinned);

    // The server moves to a chain under the other root.
    write_file(dir / "moved.p12",
               make_p12(dir, moved.leaf.key, moved.leaf.pem, moved.intermediate.pem));
    replace_file(p12, getcert::test::read_bytes(dir / "moved.p12"));
    REQUIRE(server_reports.wait_for(1));
    REQUIRE(server_reports.events()[0].outcome == ReloadOutcome::loaded);
    REQUIRE(wait_until_new_connections_see(server.target(), sha256_of_pem_file(moved.leaf.pem),
                                           moved.root));

    const auto refused = echo(server.target(), pinned->credentials);
    check_refused(refused, "getcert: localhost: ");
    CHECK(pinned->anchor->fetches() == 1);
    CHECK(pinned->anchor->current().sha256 == sha256_of_pem_file(pki("root.pem")));
  }

  // The first channel's interval has passed: its next handshake re-establishes the anchor
  // through a fetch verified against the store, and the call goes through.
  std::this_thread::sleep_for(1100ms);
  const auto after = echo(server.target(), creds->credentials, "after");
  INFO(describe(after.status));
  CHECK(after.status.ok());
  CHECK(creds->anchor->generation() == 2);
  CHECK(creds->anchor->fetches() == 2);
  CHECK(creds->anchor->current().sha256 == sha256_of_pem_file(moved.root));
  CHECK(sha256_of_pem_file(creds->anchor->pem_path()) == sha256_of_pem_file(moved.root));
  const auto verdict = creds->verdicts->last();
  REQUIRE(verdict);
  CHECK(verdict->accepted);
  CHECK(verdict->presented.front().sha256 == sha256_of_pem_file(moved.leaf.pem));
  REQUIRE(reports.events().size() == 1);  // the first anchor is establish()'s result
  CHECK(reports.events()[0].outcome == ReloadOutcome::loaded);
  REQUIRE(reports.events()[0].leaf);
  CHECK(reports.events()[0].leaf->sha256 == sha256_of_pem_file(moved.root));
  CHECK(reports.events()[0].path == server.target());
  CHECK(reports.events()[0].generation == 2);

  // Further handshakes reach the new anchor: no more fetches.
  for (int i = 0; i < 3; ++i) {
    CHECK(echo(server.target(), creds->credentials).status.ok());
  }
  CHECK(creds->anchor->fetches() == 2);
}

TEST_CASE("an anchor that cannot be re-established stays, and re-fetches are bounded",
          "[grpc][anchor]") {
  REQUIRE_OPENSSL();
  const TempDir dir;
  const OtherCa moved = other_ca(dir);
  const std::string p12 = pki_p12(dir, "server.p12");
  Reports server_reports;
  const RotatingServer server(server_on(p12, &server_reports));

  // The store the anchor comes from trusts only the test root.
  Reports reports;
  getcert::grpc_tls::ReloadingChannelOptions options;
  options.anchor = anchor_of(server.target(), pki("root.pem"), &reports);
  options.anchor->min_refetch_interval = 3s;
  auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
  if (!creds) FAIL(creds.error().message);
  REQUIRE(echo(server.target(), creds->credentials).status.ok());

  // The server moves to a root that store does not trust.
  replace_file(p12, make_p12(dir, moved.leaf.key, moved.leaf.pem, moved.intermediate.pem));
  REQUIRE(server_reports.wait_for(1));
  REQUIRE(wait_until_new_connections_see(server.target(), sha256_of_pem_file(moved.leaf.pem),
                                         moved.root));
  std::this_thread::sleep_for(3100ms);

  // Several handshakes within one interval: one fetch, one report, every call refused.
  // (The fetch at establish() set the first wait: min_refetch_interval.)
  for (int i = 0; i < 3; ++i) {
    const auto call = echo(server.target(), creds->credentials);
    check_refused(call, "getcert: localhost: ");
  }
  CHECK(creds->anchor->fetches() == 2);
  // That fetch established nothing: the wait doubled (6 s), so one interval later still none.
  std::this_thread::sleep_for(3100ms);
  CHECK_FALSE(echo(server.target(), creds->credentials).status.ok());
  CHECK(creds->anchor->fetches() == 2);
  CHECK(creds->anchor->generation() == 1);
  CHECK(creds->anchor->current().sha256 == sha256_of_pem_file(pki("root.pem")));
  const auto events = reports.events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].outcome == ReloadOutcome::rejected);
  CHECK(events[0].error.code == Errc::verification_failed);
  CHECK(events[0].error.message.find('\n') == std::string::npos);
  const auto verdict = creds->verdicts->last();
  REQUIRE(verdict);
  CHECK_FALSE(verdict->accepted);
  REQUIRE_FALSE(verdict->problems.empty());
  CHECK((verdict->problems.front().code == getcert::ProblemCode::unknown_issuer ||
         verdict->problems.front().code == getcert::ProblemCode::untrusted_root ||
         verdict->problems.front().code == getcert::ProblemCode::missing_intermediate));
}

TEST_CASE("anchor options: errors before any connection", "[grpc][anchor]") {
  Reports reports;
  getcert::grpc_tls::ReloadingChannelOptions options;
  options.anchor = anchor_of("localhost:" + std::to_string(getcert::test::closed_port()),
                             pki("root.pem"), &reports);
  SECTION("both an anchor and a trust store") {
    options.peer.verify.trust.ca_file = pki("root.pem");
    auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE_FALSE(creds);
    CHECK(creds.error().code == Errc::invalid_argument);
  }
  SECTION("an endpoint that cannot be reached: no anchor to start with") {
    auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
    REQUIRE_FALSE(creds);
    CHECK(creds.error().code == Errc::connect_failed);
  }
}
