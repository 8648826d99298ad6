// Hostile and awkward network peers against the real `getcert` binary: HTTP servers for the
// AIA URL that split their writes (every run must complete the chain), and AIA servers, STARTTLS
// servers, proxies and TLS targets that flood, drip or stall. Each run must end within
// --timeout + 1 s with the documented exit code and well-formed output.
//
// The AIA cases serve on the test PKI's fixed AIA/CRL (18080) and OCSP (18081) ports, so this
// executable holds the ctest RESOURCE_LOCK pki_fixed_ports (tests/CMakeLists.txt).

#include <catch2/catch.hpp>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/asn1.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/http_server.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using getcert::test::HostilePeer;
using getcert::test::HttpServer;
using getcert::test::pki;
using getcert::test::read_file;
using getcert::test::run_getcert;
using getcert::test::RunResult;
using Kind = HostilePeer::Step::Kind;
using Script = HostilePeer::Script;
using Json = nlohmann::json;
using namespace std::chrono_literals;
using namespace getcert::test;  // exit codes, explain(), parse_json()

namespace {

// How long the client went on after `peer` accepted its connection. Its deadline was already
// running then, so --timeout bounds this whatever spawning the process cost: under ASan, with
// the rest of the suite on both cores, a start-up alone has taken over a second.
std::chrono::milliseconds after_accept(const HostilePeer& peer, const RunResult& r) {
  const auto accepted = peer.first_accepted();
  if (!accepted) return std::chrono::milliseconds::max();  // never connected: fails any bound
  return std::chrono::duration_cast<std::chrono::milliseconds>(r.ended - *accepted);
}

const std::string kAiaUrl = "http://127.0.0.1:18080/intermediate.der";

#define REQUIRE_OPENSSL()                                                         \
  do {                                                                            \
    if (!getcert::test::have_openssl()) GETCERT_SKIP("openssl is not installed"); \
  } while (false)

// What every failing run must look like: one error line, every line getcert's own
// ("getcert: error|warning|hint: ..."), and no byte that could drive a terminal.
void check_well_formed(const RunResult& r) {
  INFO(explain(r));
  CHECK_FALSE(r.timed_out);
  int errors = 0;
  std::size_t start = 0;
  while (start < r.err.size()) {
    const auto end = r.err.find('\n', start);
    const std::string line = r.err.substr(start, end - start);
    CHECK(line.rfind("getcert: ", 0) == 0);
    if (line.rfind("getcert: error: ", 0) == 0) ++errors;
    for (const char c : line) {
      const auto u = static_cast<unsigned char>(c);
      CHECK((u >= 0x20 && u != 0x7F));
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  CHECK(errors == 1);
}

std::string target(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

std::string http_ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/pkix-cert\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n";
}

// Chunked, with an extension on every chunk and trailers, each chunk its own write.
Script chunked_script(const std::string& body) {
  Script s{{Kind::read_until, "\r\n\r\n", 0ms},
           {Kind::send, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0ms}};
  constexpr std::size_t kChunk = 100;
  for (std::size_t off = 0; off < body.size(); off += kChunk) {
    const std::string part = body.substr(off, kChunk);
    std::ostringstream size;
    size << std::hex << part.size() << ";n=" << std::dec << off << "\r\n";
    s.push_back({Kind::send, size.str() + part + "\r\n", 0ms});
  }
  s.push_back({Kind::send, "0\r\nX-Checksum: none\r\n\r\n", 0ms});
  return s;
}

}  // namespace

// ---- AIA servers that are slow to write, but correct -------------------------------------------

// The split-write bugs this guards against were intermittent, hence the repeated runs. Under the
// sanitizers (the dev preset) every byte-by-byte run costs ten times more; the static suite runs
// the full count against the optimised binary.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSplitWriteRuns = 10;
#else
constexpr int kSplitWriteRuns = 30;
#endif

TEST_CASE("AIA servers that split their writes complete the chain on every run", "[cli]") {
  REQUIRE_OPENSSL();
  const std::string der = read_file(pki("intermediate.der"));
  struct Case {
    const char* name;
    Script script;
  };
  const std::vector<Case> cases = {
      {"byte by byte",
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::send_bytewise, http_ok(der) + der, 0ms}}},
      {"a pause between headers and body",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, http_ok(der), 0ms},
        {Kind::send, der, 60ms}}},
      {"chunked", chunked_script(der)},
  };
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  for (const auto& c : cases) {
    HostilePeer aia(c.script, kPkiHttpPort);
    for (int run = 0; run < kSplitWriteRuns; ++run) {
      INFO(c.name << ", run " << run);
      const auto r = run_getcert({"localhost:" + std::to_string(server.port()), "--ca-file",
                                  pki("root.pem"), "-o", "json"});
      INFO(explain(r));
      REQUIRE(r.exit_code == kExitVerify);
      const Json v = parse_json(r.out).at("verification");
      REQUIRE(v.at("verdict") == "valid_only_with_aia_fetch");
      REQUIRE(v.at("fetched_intermediates").size() == 1);
    }
  }
}

// ---- AIA servers that misbehave
// -------------------------------------------------------------------

TEST_CASE("a hostile AIA server fails the download, and getcert ends within --timeout + 1 s",
          "[cli]") {
  REQUIRE_OPENSSL();
  struct Case {
    const char* name;
    Script script;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"endless header lines",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, "HTTP/1.1 200 OK\r\n", 0ms},
        {Kind::flood, "X-Flood: again\r\n", 0ms}},
       "sent more than 100 header fields"},
      {"endless body",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, "HTTP/1.1 200 OK\r\n\r\n", 0ms},
        {Kind::flood, std::string(65536, '\x30'), 0ms}},
       "sent more than 10 MiB"},
      {"a drip",
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::drip, "HTTP/1.1 200 OK\r\n", 100ms}},
       "timed out"},
      {"a stall", {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::hold, "", 0ms}}, "timed out"},
      {"a huge Content-Length",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, "HTTP/1.1 200 OK\r\nContent-Length: 123456789012\r\n\r\n0", 0ms},
        {Kind::hold, "", 0ms}},
       "announced 123456789012 bytes, more than getcert's limit of 10 MiB"},
      {"a garbage status line",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, std::string("HTTQ\x1b]0;owned\x07\r\n\r\n", 17), 0ms}},
       "did not answer with HTTP (it sent \"HTTQ\")"},
  };
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  for (const auto& c : cases) {
    INFO(c.name);
    HostilePeer aia(c.script, kPkiHttpPort);
    const auto r = run_getcert({"localhost:" + std::to_string(server.port()), "--ca-file",
                                pki("root.pem"), "--timeout", "3s"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    CHECK(r.elapsed < 4s);  // --timeout + 1 s: a bound, not a speed test
    CHECK_THAT(r.err, Contains("the AIA server at " + kAiaUrl + " " + c.says));
    CHECK_THAT(r.err, Contains("verification failed") && Contains(kAiaUrl));
    check_well_formed(r);
  }
}

namespace {

// A certs-only PKCS#7 (SignedData with no content and no signers) that holds `cert` `count`
// times: built by hand, because generating tens of thousands of certificates would take minutes.
std::string pkcs7_of_copies(const std::string& cert, std::size_t count) {
  namespace asn1 = getcert::test::asn1;
  asn1::Der certs;
  certs.reserve(cert.size() * count);
  for (std::size_t i = 0; i < count; ++i) certs.insert(certs.end(), cert.begin(), cert.end());
  const asn1::Der signed_data = asn1::seq({
      asn1::integer(1), asn1::set({}),                 // digestAlgorithms
      asn1::seq({asn1::oid("1.2.840.113549.1.7.1")}),  // contentInfo: data, absent
      asn1::tlv(0xA0, certs),                          // certificates [0] IMPLICIT SET OF
      asn1::set({}),                                   // signerInfos
  });
  const asn1::Der info =
      asn1::seq({asn1::oid("1.2.840.113549.1.7.2"), asn1::explicit0(signed_data)});
  return {info.begin(), info.end()};
}

}  // namespace

TEST_CASE(
    "a 10 MB PKCS#7 of 45,000 certificates from the AIA server: refused within --timeout + 1 s",
    "[cli]") {
  REQUIRE_OPENSSL();
  TempDir dir;
  write_file(dir / "min.cnf", "[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=x\n");
  // A 213-byte Ed25519 certificate without extensions: the smallest a tool writes.
  getcert::test::openssl({"req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout",
                          dir / "min.key", "-config", dir / "min.cnf", "-days", "1", "-outform",
                          "DER", "-out", dir / "min.der"});
  const std::string bundle = pkcs7_of_copies(read_file(dir / "min.der"), 45000);
  REQUIRE(bundle.size() > 9'000'000);
  REQUIRE(bundle.size() <
          std::size_t{10} * 1024 * 1024);  // under the body cap: the download succeeds
  HttpServer http;
  http.serve("/intermediate.der", bundle);
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r = run_getcert({"localhost:" + std::to_string(server.port()), "--ca-file",
                              pki("root.pem"), "--timeout", "2s"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  CHECK(r.elapsed < 3s);  // --timeout + 1 s
  CHECK_THAT(r.err, Contains("the AIA server at " + kAiaUrl + " sent more than 100 certificates"));
  check_well_formed(r);
}

TEST_CASE("a hung OCSP responder leaves time for the CRL", "[cli]") {
  REQUIRE_OPENSSL();
  HostilePeer ocsp(Script{{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::hold, "", 0ms}},
                   kPkiOcspPort);
  HttpServer http;
  http.serve("/intermediate.crl", read_file(pki("intermediate.crl")));
  const auto server = getcert::test::start_openssl_server(pki_chain("good"));
  const auto r =
      run_getcert({"localhost:" + std::to_string(server.port()), "--ca-file", pki("root.pem"),
                   "--check-revocation", "--timeout", "4s", "-o", "json"});
  INFO(explain(r));
  CHECK(r.elapsed < 5s);
  const Json v = parse_json(r.out).at("verification");
  REQUIRE_FALSE(v.at("revocation").empty());
  const Json& leaf = v.at("revocation")[0];
  CHECK(leaf.at("depth") == 0);
  CHECK(leaf.at("source") == "crl");
  CHECK(leaf.at("status") == "good");
}

// ---- STARTTLS servers, proxies and TLS targets that never finish ------------------------------

TEST_CASE("STARTTLS servers that flood, drip or stall: exit 3 within --timeout + 1 s", "[cli]") {
  struct Case {
    const char* name;
    const char* protocol;
    Script script;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"SMTP: endless 220- lines",
       "smtp",
       {{Kind::flood, "220-still greeting\r\n", 0ms}},
       "SMTP server sent more than 100 lines before answering"},
      {"SMTP: endless EHLO answer",
       "smtp",
       {{Kind::send, "220 hello\r\n", 0ms},
        {Kind::read_until, "\n", 0ms},
        {Kind::flood, "250-EXTENSION\r\n", 0ms}},
       "SMTP server sent more than 100 lines before answering"},
      {"SMTP: one endless line",
       "smtp",
       {{Kind::flood, std::string(4096, 'a'), 0ms}},
       "SMTP server sent a line longer than 4 KiB"},
      {"IMAP: endless untagged lines",
       "imap",
       {{Kind::send, "* OK ready\r\n", 0ms},
        {Kind::read_until, "\n", 0ms},
        {Kind::flood, "* CAPABILITY IMAP4rev1\r\n", 0ms}},
       "IMAP server sent more than 100 lines before answering"},
      {"SMTP: a drip",
       "smtp",
       {{Kind::drip, "220-slow\r\n", 100ms}},
       "SMTP server did not answer the STARTTLS exchange in time"},
      {"IMAP: a stall",
       "imap",
       {{Kind::hold, "", 0ms}},
       "IMAP server did not answer the STARTTLS exchange in time"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    HostilePeer peer(c.script);
    const auto r = run_getcert({target(peer.port()), "--starttls", c.protocol, "--timeout", "2s"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitNetwork);
    CHECK(after_accept(peer, r) < 3s);  // --timeout + 1 s, from the connection
    CHECK(r.elapsed < 6s);              // and the spawn with it, loosely
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains(c.says));
    check_well_formed(r);
  }
}

TEST_CASE("proxies that flood, drip or stall: exit 3 within --timeout + 1 s", "[cli]") {
  struct Case {
    const char* name;
    Script script;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"200, then endless headers",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, "HTTP/1.1 200 Connection established\r\n", 0ms},
        {Kind::flood, "Via: 1.1 again\r\n", 0ms}},
       "sent more than 100 lines before answering"},
      {"a drip",
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::drip, "HTTP/1.1 200 OK\r\nVia: x\r\n", 100ms}},
       "did not answer the CONNECT request in time"},
      {"a stall",
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::hold, "", 0ms}},
       "did not answer the CONNECT request in time"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    HostilePeer proxy(c.script);
    const auto r = run_getcert(
        {"localhost:443", "--proxy", "http://" + target(proxy.port()), "--timeout", "2s"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitNetwork);
    CHECK(after_accept(proxy, r) < 3s);  // --timeout + 1 s, from the connection
    CHECK(r.elapsed < 6s);               // and the spawn with it, loosely
    CHECK_THAT(r.err, Contains("proxy " + target(proxy.port()) + " " + c.says));
    check_well_formed(r);
  }
}

TEST_CASE("a TLS target that drips its handshake: exit 3 within --timeout + 1 s", "[cli]") {
  // A record header announcing 16 KiB, then its bytes one at a time: always almost readable.
  HostilePeer peer(Script{{Kind::send, std::string("\x16\x03\x03\x40\x00", 5), 0ms},
                          {Kind::drip, std::string(1, '\x02'), 50ms}});
  const auto r = run_getcert({target(peer.port()), "--timeout", "2s"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  CHECK(after_accept(peer, r) < 3s);  // --timeout + 1 s, from the connection
  CHECK(r.elapsed < 6s);              // and the spawn with it, loosely
  CHECK_THAT(r.err, Contains("did not complete the TLS handshake within 2 s"));
  check_well_formed(r);
}

TEST_CASE("a certificate list over getcert's limit is named as getcert's limit, not a rejection",
          "[cli]") {
  // A TLS 1.2 ServerHello (AES128-SHA, no extensions), then a Certificate message header that
  // announces 128 KiB: OpenSSL refuses it against max_cert_list before reading further.
  std::string server_hello("\x02\x00\x00\x26\x03\x03", 6);
  server_hello += std::string(32, '\x11');             // random
  server_hello += std::string("\x00\x00\x2f\x00", 4);  // no session id, AES128-SHA, no compression
  const std::string records = std::string("\x16\x03\x03\x00\x2a", 5) + server_hello +
                              std::string("\x16\x03\x03\x00\x04\x0b\x02\x00\x00", 9);
  HostilePeer peer(Script{{Kind::send, records, 0ms}, {Kind::hold, "", 0ms}});
  const auto r = run_getcert({target(peer.port()), "--timeout", "5s"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitTls);
  CHECK_THAT(r.err, Contains("larger than getcert's limit of 100 KiB"));
  CHECK_THAT(r.err, !Contains("rejected"));
  check_well_formed(r);
}

TEST_CASE("the missing-intermediate reason names the AIA URL that served it, not the first one",
          "[cli]") {
  REQUIRE_OPENSSL();
  // A leaf whose first CA Issuers URL is gone (404) and whose second one works.
  const getcert::test::TempDir dir;
  const std::string key = dir / "leaf.key";
  const std::string csr = dir / "leaf.csr";
  const std::string ext = dir / "leaf.ext";
  const std::string pem = dir / "leaf.pem";
  getcert::test::openssl(
      {"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key});
  getcert::test::openssl({"req", "-new", "-key", key, "-subj", "/CN=localhost", "-out", csr});
  getcert::test::write_file(ext,
                            "basicConstraints = critical, CA:FALSE\n"
                            "extendedKeyUsage = serverAuth\n"
                            "subjectAltName = DNS:localhost\n"
                            "authorityInfoAccess = caIssuers;URI:http://127.0.0.1:18080/gone.der, "
                            "caIssuers;URI:" +
                                kAiaUrl + "\n");
  getcert::test::openssl({"x509", "-req", "-in", csr, "-CA", pki("intermediate.pem"), "-CAkey",
                          pki("intermediate.key"), "-set_serial", "0xa1a", "-days", "30", "-sha256",
                          "-extfile", ext, "-out", pem});
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const auto server = getcert::test::start_openssl_server(getcert::test::ServedChain{pem, key});
  const auto r = run_getcert(
      {"localhost:" + std::to_string(server.port()), "--ca-file", pki("root.pem"), "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  const Json v = parse_json(r.out).at("verification");
  CHECK(v.at("verdict") == "valid_only_with_aia_fetch");
  REQUIRE_FALSE(v.at("errors").empty());
  const std::string reason = v.at("errors")[0].at("reason");
  CHECK_THAT(reason, Contains("it was fetched from " + kAiaUrl));
  CHECK(http.requests() == std::vector<std::string>{"GET /gone.der", "GET /intermediate.der"});
}

TEST_CASE("hostile OCSP responders and CRL servers are warnings, within --timeout + 1 s", "[cli]") {
  REQUIRE_OPENSSL();
  struct Case {
    const char* name;
    Script ocsp;
    Script crl;
    const char* ocsp_says;
    const char* crl_says;
  };
  const std::vector<Case> cases = {
      {"endless body, then a stall",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, "HTTP/1.1 200 OK\r\n\r\n", 0ms},
        {Kind::flood, std::string(65536, '\x30'), 0ms}},
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::hold, "", 0ms}},
       "sent more than 10 MiB",
       "timed out"},
      {"garbage, then a drip",
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::send, "\x01\x02garbage\r\n\r\n", 0ms}},
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::drip, "HTTP/1.1 200 OK\r\nX: y\r\n", 100ms}},
       "did not answer with HTTP",
       "timed out"},
  };
  const auto server = getcert::test::start_openssl_server(pki_chain("good"));
  for (const auto& c : cases) {
    INFO(c.name);
    HostilePeer ocsp(c.ocsp, kPkiOcspPort);
    HostilePeer crl(c.crl, kPkiHttpPort);
    const auto r = run_getcert({"localhost:" + std::to_string(server.port()), "--ca-file",
                                pki("root.pem"), "--check-revocation", "--timeout", "3s"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK(r.elapsed < 4s);
    REQUIRE_FALSE(ocsp.client_hellos().empty());
    CHECK(ocsp.client_hellos()[0].rfind("POST / HTTP/1.1\r\n", 0) == 0);
    CHECK_THAT(r.err, Contains("OCSP failed first: the OCSP responder at http://127.0.0.1:18081 " +
                               std::string(c.ocsp_says)));
    CHECK_THAT(r.err, Contains("the CRL server at http://127.0.0.1:18080") && Contains(c.crl_says));
    CHECK_FALSE(r.out.empty());
    for (const char ch : r.err) {
      const auto u = static_cast<unsigned char>(ch);
      CHECK((ch == '\n' || (u >= 0x20 && u != 0x7F)));
    }
  }
}
