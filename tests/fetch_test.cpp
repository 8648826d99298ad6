// getcert::fetch against real TLS servers (nginx, openssl s_server, gnutls-serv) and hostile
// in-process peers on loopback: what was presented, what was negotiated, and how each kind of
// network or protocol failure is reported.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "getcert/fetch.hpp"
#include "support/cli_checks.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/net.hpp"
#include "support/test_pki.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using getcert::Errc;
using getcert::FetchOptions;
using getcert::FetchResult;
using getcert::test::fetch_trusting_test_root;
using getcert::test::HostilePeer;
using getcert::test::pki;
using getcert::test::pki_chain;
using getcert::test::read_file;
using namespace std::chrono_literals;

namespace {

std::string at(std::uint16_t port, const std::string& host = "127.0.0.1") {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

FetchResult fetched(const std::string& target, const FetchOptions& options) {
  auto r = getcert::fetch(target, options);
  INFO("target: " << target);
  if (!r) FAIL("fetch failed: " << r.error().message << " / " << r.error().detail);
  return *r;
}

std::string leaf_cn(const FetchResult& r) {
  return r.presented_chain.empty() ? std::string() : r.presented_chain.front().subject_cn;
}

std::string problems(const FetchResult& r) {
  std::string out;
  for (const auto& e : r.verification.errors) {
    out += std::string(getcert::to_string(e.code)) + ": " + e.reason + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("presented chain is exactly what nginx serves, in order and byte for byte", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const char* leaves[] = {"rsa", "ecdsa", "ed25519"};
  getcert::test::NginxOptions config;
  for (std::size_t i = 0; i < 3; ++i) config.vhosts.push_back({"", pki_chain(leaves[i]), i});
  const auto nginx = getcert::test::start_nginx(config);

  for (std::size_t i = 0; i < 3; ++i) {
    INFO("leaf: " << leaves[i]);
    const auto r = fetched(at(nginx.port(i)), fetch_trusting_test_root());
    INFO(problems(r));
    CHECK(getcert::to_pem(r.presented_chain) ==
          read_file(pki(std::string(leaves[i]) + "-chain.pem")));
    CHECK(r.verification.ok);
    CHECK(r.target.host == "127.0.0.1");
    CHECK(r.target.port == nginx.port(i));
    CHECK(r.target.address == "127.0.0.1");
    CHECK(r.target.sni.empty());
    CHECK(r.tls.version == "TLSv1.3");
    CHECK_THAT(r.tls.cipher, StartsWith("TLS_"));
    CHECK(r.tls.alpn.empty());
    REQUIRE(r.verification.verified_chain.size() == 3);
    CHECK(r.verification.verified_chain.back().pem() == read_file(pki("root.pem")));
  }
}

TEST_CASE("presented chain from openssl s_server and gnutls-serv", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_openssl() && getcert::test::have_gnutls_serv(),
               "openssl or gnutls-serv");
  const auto s_server = getcert::test::start_openssl_server(pki_chain("rsa"));
  const auto gnutls = getcert::test::start_gnutls_server(pki_chain("ed25519"));

  const auto from_openssl = fetched(at(s_server.port()), fetch_trusting_test_root());
  CHECK(getcert::to_pem(from_openssl.presented_chain) == read_file(pki("rsa-chain.pem")));
  CHECK(from_openssl.verification.ok);

  const auto from_gnutls = fetched(at(gnutls.port()), fetch_trusting_test_root());
  CHECK(getcert::to_pem(from_gnutls.presented_chain) == read_file(pki("ed25519-chain.pem")));
  CHECK(from_gnutls.verification.ok);
  CHECK_FALSE(from_gnutls.tls.version.empty());
  CHECK_FALSE(from_gnutls.tls.cipher.empty());
}

TEST_CASE("TLS 1.2 version and cipher are reported", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  getcert::test::OpenSslServerOptions o;
  o.served = pki_chain("ecdsa");
  o.extra_args = {"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"};
  const auto server = getcert::test::start_openssl_server(o);
  const auto r = fetched(at(server.port()), fetch_trusting_test_root());
  CHECK(r.tls.version == "TLSv1.2");
  CHECK(r.tls.cipher == "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
  CHECK(r.verification.ok);
}

TEST_CASE("SNI selects the certificate nginx presents", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  getcert::test::NginxOptions config;
  config.vhosts = {{"localhost", pki_chain("ecdsa"), 0},
                   {"a.sni.test", pki_chain("sni-a"), 0},
                   {"b.sni.test", pki_chain("sni-b"), 0}};
  const auto nginx = getcert::test::start_nginx(config);

  auto with_sni = [](const std::string& name) {
    auto o = fetch_trusting_test_root();
    o.connect.sni = name;
    return o;
  };
  const auto a = fetched(at(nginx.port(), "localhost"), with_sni("a.sni.test"));
  CHECK(leaf_cn(a) == "a.sni.test");
  CHECK(a.target.sni == "a.sni.test");
  CHECK(a.verification.ok);  // checked against the SNI name, not "localhost"
  CHECK(getcert::to_pem(a.presented_chain) == read_file(pki("sni-a-chain.pem")));

  const auto b = fetched(at(nginx.port(), "localhost"), with_sni("b.sni.test"));
  CHECK(leaf_cn(b) == "b.sni.test");
  CHECK(b.verification.ok);

  const auto by_host = fetched(at(nginx.port(), "localhost"), fetch_trusting_test_root());
  CHECK(by_host.target.sni == "localhost");
  CHECK(leaf_cn(by_host) == "ecdsa.test");

  SECTION("an IP target sends no SNI, so the default server answers") {
    const auto ip = fetched(at(nginx.port()), fetch_trusting_test_root());
    CHECK(ip.target.sni.empty());
    CHECK(leaf_cn(ip) == "ecdsa.test");
  }
  SECTION("an IP target with --sni sends that name") {
    const auto ip = fetched(at(nginx.port()), with_sni("b.sni.test"));
    CHECK(leaf_cn(ip) == "b.sni.test");
    CHECK(ip.verification.ok);
  }
}

TEST_CASE("SNI with openssl s_server: named cert for its name, default otherwise", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  getcert::test::OpenSslServerOptions o;
  o.served = pki_chain("ecdsa");
  o.sni_name = "a.sni.test";
  o.sni_served = pki_chain("sni-a");
  const auto server = getcert::test::start_openssl_server(o);

  auto opts = fetch_trusting_test_root();
  opts.connect.sni = "a.sni.test";
  CHECK(leaf_cn(fetched(at(server.port(), "localhost"), opts)) == "a.sni.test");
  opts.connect.sni = "b.sni.test";
  CHECK(leaf_cn(fetched(at(server.port(), "localhost"), opts)) == "ecdsa.test");

  const auto ip = fetched(at(server.port()), fetch_trusting_test_root());
  CHECK(ip.target.sni.empty());
  CHECK(leaf_cn(ip) == "ecdsa.test");
  CHECK(ip.verification.ok);

  SECTION("send_sni = false suppresses even an explicit name") {
    auto none = fetch_trusting_test_root();
    none.connect.sni = "a.sni.test";
    none.connect.send_sni = false;
    const auto r = fetched(at(server.port(), "localhost"), none);
    CHECK(r.target.sni.empty());
    CHECK(leaf_cn(r) == "ecdsa.test");
    CHECK(r.verification.ok);  // the name checked is the host, localhost
  }
}

TEST_CASE("the server_name on the wire", "[fetch]") {
  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  auto quick = FetchOptions{};
  quick.connect.timeout = 5s;
  (void)getcert::fetch(at(peer.port()), quick);
  (void)getcert::fetch(at(peer.port(), "localhost"), quick);
  auto named = quick;
  named.connect.sni = "x.example";
  (void)getcert::fetch(at(peer.port(), "localhost"), named);
  auto none = quick;
  none.connect.send_sni = false;
  (void)getcert::fetch(at(peer.port(), "localhost"), none);
  auto typed = quick;
  typed.connect.sni = "X.Example.";  // as typed: the wire carries the normalised name (RFC 6066)
  (void)getcert::fetch(at(peer.port(), "localhost"), typed);

  const auto hellos = peer.client_hellos();
  REQUIRE(hellos.size() == 5);
  CHECK(getcert::test::sni_of_client_hello(hellos[4]) == std::optional<std::string>("x.example"));
  CHECK(getcert::test::sni_of_client_hello(hellos[0]) == std::nullopt);
  CHECK(getcert::test::sni_of_client_hello(hellos[1]) == std::optional<std::string>("localhost"));
  CHECK(getcert::test::sni_of_client_hello(hellos[2]) == std::optional<std::string>("x.example"));
  CHECK(getcert::test::sni_of_client_hello(hellos[3]) == std::nullopt);
}

TEST_CASE("an IP address is refused as --sni", "[fetch]") {
  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  auto o = FetchOptions{};
  o.connect.sni = "127.0.0.1";
  auto r = getcert::fetch(at(peer.port()), o);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::invalid_argument);
  CHECK(peer.connections_settled() == 0);
}

TEST_CASE("ALPN h2 is negotiated when offered", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_nginx() && getcert::test::have_openssl(), "nginx or openssl");
  getcert::test::NginxOptions config;
  config.vhosts = {{"", pki_chain("ecdsa"), 0}};
  config.http2 = true;
  const auto nginx = getcert::test::start_nginx(config);
  getcert::test::OpenSslServerOptions so;
  so.served = pki_chain("rsa");
  so.extra_args = {"-alpn", "h2"};
  const auto s_server = getcert::test::start_openssl_server(so);

  auto offer = fetch_trusting_test_root();
  offer.connect.alpn = {"h2", "http/1.1"};
  CHECK(fetched(at(nginx.port()), offer).tls.alpn == "h2");
  CHECK(fetched(at(s_server.port()), offer).tls.alpn == "h2");
  CHECK(fetched(at(nginx.port()), fetch_trusting_test_root()).tls.alpn.empty());

  auto only_http1 = fetch_trusting_test_root();
  only_http1.connect.alpn = {"http/1.1"};
  CHECK(fetched(at(nginx.port()), only_http1).tls.alpn == "http/1.1");
}

TEST_CASE("IPv6 loopback", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  if (!getcert::test::ipv6_loopback_available()) {
    GETCERT_SKIP("::1 is not configured");
  }
  getcert::test::NginxOptions config;
  config.vhosts = {{"", pki_chain("ecdsa"), 0}};
  config.ipv6 = true;
  const auto nginx = getcert::test::start_nginx(config);

  const auto r = fetched("[::1]:" + std::to_string(nginx.port()), fetch_trusting_test_root());
  INFO(problems(r));
  CHECK(r.target.host == "::1");
  CHECK(r.target.address == "::1");
  CHECK(r.target.sni.empty());
  CHECK(r.verification.ok);  // ecdsa has IP SAN ::1
  CHECK(getcert::to_pem(r.presented_chain) == read_file(pki("ecdsa-chain.pem")));

  const auto url = fetched("https://[::1]:" + std::to_string(nginx.port()) + "/health",
                           fetch_trusting_test_root());
  CHECK(url.target.address == "::1");
}

TEST_CASE("a server that rejects the server name is tls_handshake_failed with its alert",
          "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  getcert::test::OpenSslServerOptions o;
  o.served = pki_chain("ecdsa");
  o.sni_name = "a.sni.test";
  o.sni_served = pki_chain("sni-a");
  o.extra_args = {"-servername_fatal"};
  const auto server = getcert::test::start_openssl_server(o);
  auto opts = fetch_trusting_test_root();
  opts.connect.sni = "b.sni.test";
  auto r = getcert::fetch(at(server.port(), "localhost"), opts);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::tls_handshake_failed);
  CHECK_THAT(r.error().message,
             Contains("rejected the TLS handshake") && Contains("unrecognized name"));
  opts.connect.sni = "a.sni.test";
  CHECK(leaf_cn(fetched(at(server.port(), "localhost"), opts)) == "a.sni.test");
}

TEST_CASE("a failed verification is a result with the chain, not an error", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const auto server = getcert::test::start_openssl_server(pki_chain("wronghost"));
  const auto r = fetched(at(server.port(), "localhost"), fetch_trusting_test_root());
  CHECK_FALSE(r.verification.ok);
  CHECK(r.verification.trusted);
  CHECK_FALSE(r.verification.hostname_ok);
  CHECK(r.presented_chain.size() == 2);
  REQUIRE_FALSE(r.verification.errors.empty());
  CHECK_THAT(r.verification.errors[0].reason,
             Contains("name mismatch: certificate is for other.example"));

  SECTION("verify_name overrides the name checked") {
    auto o = fetch_trusting_test_root();
    o.verify.name = "other.example";
    CHECK(fetched(at(server.port(), "localhost"), o).verification.ok);
  }
}

TEST_CASE("a refused port fails fast with connect_failed", "[fetch]") {
  const auto port = getcert::test::closed_port();
  const auto start = std::chrono::steady_clock::now();
  auto r = getcert::fetch(at(port), fetch_trusting_test_root());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::connect_failed);
  CHECK_THAT(r.error().message, Contains("127.0.0.1:" + std::to_string(port)));
  CHECK(elapsed < 3s);
}

TEST_CASE("a stalled server hits the timeout, and the call returns on time", "[fetch]") {
  HostilePeer peer(HostilePeer::Behavior::silent);
  auto o = fetch_trusting_test_root();
  o.connect.timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  auto r = getcert::fetch(at(peer.port()), o);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::timeout);
  CHECK_THAT(r.error().message, Contains("1 s"));
  INFO("elapsed ms: " << elapsed.count());
  CHECK(elapsed >= 950ms);
  CHECK(elapsed <= 2000ms);  // the limit + 1 s: a correctness bound, not a speed test
  CHECK(peer.connections() == 1);
}

TEST_CASE("plain HTTP on the port is not_tls and says so", "[fetch]") {
  HostilePeer peer(HostilePeer::Behavior::plain_http);
  auto r = getcert::fetch(at(peer.port()), fetch_trusting_test_root());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::not_tls);
  CHECK_THAT(r.error().message, Contains("plain HTTP"));
}

TEST_CASE("a peer that closes mid-handshake is tls_handshake_failed", "[fetch]") {
  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  auto r = getcert::fetch(at(peer.port()), fetch_trusting_test_root());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::tls_handshake_failed);
  CHECK_THAT(r.error().message, Contains("closed the connection"));
}

TEST_CASE("a peer that answers garbage is not_tls", "[fetch]") {
  HostilePeer peer(HostilePeer::Behavior::garbage);
  auto r = getcert::fetch(at(peer.port()), fetch_trusting_test_root());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::not_tls);
  CHECK_THAT(r.error().message, Contains("not with TLS"));
}

TEST_CASE("a broken trust store fails before any connection", "[fetch]") {
  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  auto o = FetchOptions{};
  o.verify.trust.ca_file = "/nonexistent/getcert/ca.pem";
  auto r = getcert::fetch(at(peer.port()), o);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::io_error);
  CHECK(peer.connections_settled() == 0);
}

TEST_CASE("connect() captures the chain without judging it; fetch() is connect + verify_chain",
          "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const auto server = getcert::test::start_openssl_server(pki_chain("untrusted"));
  getcert::ConnectOptions c;
  c.timeout = 10s;
  auto shake = getcert::connect(at(server.port(), "localhost"), c);
  REQUIRE(shake);
  CHECK(shake->target.sni == "localhost");
  CHECK(getcert::to_pem(shake->presented_chain) == read_file(pki("untrusted-chain.pem")));

  auto o = fetch_trusting_test_root();
  auto fetched_result = getcert::fetch(at(server.port(), "localhost"), o);
  REQUIRE(fetched_result);
  getcert::VerifyOptions v = o.verify;
  v.name = "localhost";
  auto verified = getcert::verify_chain(shake->presented_chain, v);
  REQUIRE(verified);
  CHECK(fetched_result->verification.verdict == verified->verdict);
  CHECK(verified->verdict == getcert::Verdict::invalid);
  CHECK(fetched_result->verification.errors.size() == verified->errors.size());
}

TEST_CASE("a STARTTLS server or proxy that floods is connect_failed naming the cap, on time",
          "[fetch]") {
  using Kind = HostilePeer::Step::Kind;
  HostilePeer smtp(HostilePeer::Script{{Kind::flood, "220-more\r\n", 0ms}});
  HostilePeer proxy(HostilePeer::Script{{Kind::read_until, "\r\n\r\n", 0ms},
                                        {Kind::send, "HTTP/1.1 200 OK\r\n", 0ms},
                                        {Kind::flood, "X-More: yes\r\n", 0ms}});
  auto smtp_options = fetch_trusting_test_root();
  smtp_options.connect.timeout = 2s;
  smtp_options.connect.starttls = getcert::StartTls::smtp;
  auto proxy_options = fetch_trusting_test_root();
  proxy_options.connect.timeout = 2s;
  proxy_options.connect.proxy = "http://" + at(proxy.port());
  struct Case {
    const char* name;
    std::string target;
    const FetchOptions& options;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"SMTP", at(smtp.port()), smtp_options,
       "SMTP server sent more than 100 lines before answering"},
      {"proxy", "localhost:443", proxy_options,
       "proxy " + at(proxy.port()) + " sent more than 100 lines before answering"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto start = std::chrono::steady_clock::now();
    auto r = getcert::fetch(c.target, c.options);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::connect_failed);
    CHECK_THAT(r.error().message, Contains(c.says));
    CHECK(elapsed < 3s);  // the limit + 1 s: a correctness bound, not a speed test
  }
}

TEST_CASE("TLS version limits and a client identity through FetchOptions", "[fetch]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  getcert::test::OpenSslServerOptions so;
  so.served = pki_chain("rsa");
  so.extra_args = {
      "-tls1_3", "-Verify", "2", "-CAfile", pki("ca-bundle.pem"), "-verify_return_error"};
  const auto server = getcert::test::start_openssl_server(so);

  FetchOptions options = fetch_trusting_test_root();
  options.connect.tls_max = getcert::TlsVersion::tls1_2;
  const auto refused = getcert::fetch(at(server.port()), options);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::tls_handshake_failed);
  CHECK_THAT(refused.error().message, Contains("TLS 1.0 to 1.2"));

  options.connect.tls_max.reset();
  options.connect.tls_min = getcert::TlsVersion::tls1_3;
  const auto anonymous = fetched(at(server.port()), options);
  CHECK(anonymous.tls.version == "TLSv1.3");
  CHECK(anonymous.tls.client_certificate_requested);
  CHECK_FALSE(anonymous.tls.client_certificate_sent);
  CHECK_FALSE(anonymous.tls.handshake_completed);
  CHECK(anonymous.tls.acceptable_client_cas ==
        std::vector<std::string>{"CN=getcert Test Root CA,O=getcert tests"});
  CHECK(anonymous.verification.ok);

  options.connect.client_identity =
      getcert::ClientIdentity{read_file(pki("client-chain.pem")), read_file(pki("client.key"))};
  const auto identified = fetched(at(server.port()), options);
  CHECK(identified.tls.client_certificate_sent);
  CHECK(identified.tls.handshake_completed);

  // A key that is not the certificate's fails before anything is sent.
  options.connect.client_identity->private_key_pem = read_file(pki("rsa.key"));
  const auto mismatched = getcert::fetch(at(server.port()), options);
  REQUIRE_FALSE(mismatched);
  CHECK(mismatched.error().code == Errc::invalid_argument);
}
