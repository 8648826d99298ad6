// Step timings: a real loopback fetch reports every step it went through (resolve, connect,
// proxy, STARTTLS, handshake, verify, and the AIA, OCSP and CRL downloads) with its duration,
// in the library's result, through its callback (also for a fetch that fails), in `-o json`,
// and as `-v` log lines on stderr. Durations are only checked to be there and consistent,
// never against a speed.
//
// The AIA/OCSP/CRL cases serve on the test PKI's fixed ports (18080, 18081), so this
// executable holds the ctest RESOURCE_LOCK pki_fixed_ports (tests/CMakeLists.txt).

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "getcert/fetch.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/http_server.hpp"
#include "support/net.hpp"
#include "support/ocsp_responder.hpp"
#include "support/process.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using getcert::test::HttpServer;
using getcert::test::OcspResponder;
using getcert::test::pki;
using getcert::test::read_file;
using getcert::test::run_getcert;
using getcert::test::RunResult;
using Json = nlohmann::json;
using namespace getcert::test;  // exit codes, explain(), parse_json(), servers

namespace {

#define REQUIRE_OPENSSL()                                                         \
  do {                                                                            \
    if (!getcert::test::have_openssl()) GETCERT_SKIP("openssl is not installed"); \
  } while (false)

std::vector<std::string> steps_of(const std::vector<getcert::StepTiming>& timings) {
  std::vector<std::string> out;
  for (const auto& t : timings) out.emplace_back(getcert::to_string(t.step));
  return out;
}

std::vector<std::string> steps_of(const Json& timings) {
  std::vector<std::string> out;
  for (const auto& t : timings) out.push_back(t.at("step").get<std::string>());
  return out;
}

bool has(const std::vector<std::string>& steps, const std::string& step) {
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

// The -v lines of one step: "getcert: debug: TARGET: STEP 1.234 ms: DETAIL".
std::vector<std::string> log_lines(const std::string& err, const std::string& target,
                                   const std::string& step) {
  std::vector<std::string> out;
  const std::regex line(
      "getcert: debug: " + std::regex_replace(target, std::regex(R"([.\[\]])"), R"(\$&)") + ": " +
      step + " (failed after )?[0-9]+\\.[0-9]{3} ms(: .*)?");
  std::size_t start = 0;
  while (start < err.size()) {
    const auto end = err.find('\n', start);
    const std::string text = err.substr(start, end == std::string::npos ? end : end - start);
    if (std::regex_match(text, line)) out.push_back(text);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

struct Relay {
  Process process;
  std::uint16_t port;
};

Relay start_connect_proxy(const std::string& log) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::uint16_t port = free_port();
    SpawnOptions options;
    options.die_with_parent = true;
    Process p =
        Process::spawn({"python3", GETCERT_CONNECT_PROXY, std::to_string(port), log}, options);
    if (wait_for_port("127.0.0.1", port, std::chrono::seconds(5), &p)) return {std::move(p), port};
  }
  FAIL("the CONNECT proxy did not start");
  throw std::logic_error("unreachable");
}

Relay start_smtp_server() {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::uint16_t port = free_port();
    SpawnOptions options;
    options.die_with_parent = true;
    Process p = Process::spawn({"python3", GETCERT_STARTTLS_SERVER, "smtp", std::to_string(port),
                                pki("rsa-chain.pem"), pki("rsa.key")},
                               options);
    if (wait_for_port("127.0.0.1", port, std::chrono::seconds(5), &p)) return {std::move(p), port};
  }
  FAIL("the STARTTLS test server did not start");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("fetch() times resolve, connect, handshake and verify, in order", "[fetch]") {
  REQUIRE_OPENSSL();
  const auto server = start_openssl_server(pki_chain("rsa"));
  getcert::FetchOptions options;
  options.verify.trust.ca_file = pki("root.pem");
  std::vector<getcert::StepTiming> told;
  options.on_step = [&](const getcert::StepTiming& t) { told.push_back(t); };
  const auto before = std::chrono::steady_clock::now();
  auto r = getcert::fetch("localhost:" + std::to_string(server.port()), options);
  const auto elapsed = std::chrono::steady_clock::now() - before;
  REQUIRE(r);
  CHECK(r->verification.ok);
  const auto steps = steps_of(r->timings);
  INFO("steps: " << Json(steps).dump());
  REQUIRE(steps.size() >= 4);
  CHECK(steps.front() == "resolve");
  CHECK(has(steps, "connect"));
  CHECK(steps[steps.size() - 2] == "handshake");
  CHECK(steps.back() == "verify");
  CHECK(std::regex_match(r->timings.front().detail,
                         std::regex(R"(localhost \(1 address\)|localhost \([2-9] addresses\))")));
  CHECK(r->timings[steps.size() - 2].detail == "SNI localhost (" + r->tls.version + ")");
  CHECK(r->timings.back().detail == "localhost (valid)");
  // The connection that answered is the last connect, and it succeeded.
  CHECK(r->timings[steps.size() - 3].ok);
  CHECK_THAT(r->timings[steps.size() - 3].detail,
             Contains(r->target.address + " port " + std::to_string(server.port())));
  std::chrono::microseconds sum{0};
  for (const auto& t : r->timings) sum += t.duration;
  CHECK(sum <= elapsed);
  CHECK(r->timings[steps.size() - 2].duration.count() > 0);  // a handshake takes some time
  // The callback saw the same steps as they ended; nothing needed the network in verification.
  CHECK(steps_of(told) == steps);
  CHECK(r->verification.timings.empty());
}

TEST_CASE("connect() carries the handshake's timings", "[fetch]") {
  REQUIRE_OPENSSL();
  const auto server = start_openssl_server(pki_chain("rsa"));
  auto shake = getcert::connect("127.0.0.1:" + std::to_string(server.port()));
  REQUIRE(shake);
  // An IP literal is not looked up: no resolve step.
  CHECK(steps_of(shake->timings) == std::vector<std::string>{"connect", "handshake"});
  CHECK(shake->timings.back().detail ==
        "127.0.0.1:" + std::to_string(server.port()) + " (" + shake->tls.version + ")");
}

TEST_CASE("a fetch that fails still tells its callback the steps it took", "[fetch]") {
  const std::uint16_t port = closed_port();
  getcert::FetchOptions options;
  std::vector<getcert::StepTiming> told;
  options.on_step = [&](const getcert::StepTiming& t) { told.push_back(t); };
  auto r = getcert::fetch("127.0.0.1:" + std::to_string(port), options);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == getcert::Errc::connect_failed);
  REQUIRE(steps_of(told) == std::vector<std::string>{"connect"});
  CHECK_FALSE(told.front().ok);
  CHECK(told.front().detail == "127.0.0.1 port " + std::to_string(port) + " (Connection refused)");
}

TEST_CASE("verbose: -v logs every step with its duration, and JSON carries the same timings",
          "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = start_openssl_server(pki_chain("rsa"));
  const std::string target = "localhost:" + std::to_string(server.port());
  const auto quiet = run_getcert({target, "--ca-file", pki("root.pem"), "-o", "json"});
  CHECK(quiet.exit_code == kExitOk);
  CHECK(quiet.err.find("debug") == std::string::npos);  // only with -v
  CHECK_FALSE(parse_json(quiet.out).contains("timings"));

  const auto r = run_getcert({"-v", target, "--ca-file", pki("root.pem"), "-o", "json"});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  for (const std::string step : {"resolve", "connect", "handshake", "verify"}) {
    INFO("step " << step);
    CHECK(log_lines(r.err, target, step).size() >= 1);
  }
  CHECK(log_lines(r.err, target, "handshake").front() ==
        log_lines(r.err, target, "handshake").back());
  CHECK_THAT(log_lines(r.err, target, "verify").front(), Contains(": localhost (valid)"));
  const Json timings = parse_json(r.out).at("timings");
  const auto steps = steps_of(timings);
  CHECK(steps.front() == "resolve");
  CHECK(steps.back() == "verify");
  CHECK(has(steps, "handshake"));
  for (const auto& t : timings) {
    CHECK(t.at("ms").get<double>() >= 0.0);
    CHECK(t.at("ok").is_boolean());
    CHECK(t.at("detail").is_string());
  }
}

TEST_CASE("verbose: -v on a refused connection logs the failed connect before the error", "[cli]") {
  const std::string target = "127.0.0.1:" + std::to_string(closed_port());
  const auto r = run_getcert({"-v", target});
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  const auto lines = log_lines(r.err, target, "connect");
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines.front(), Contains("connect failed after ") && Contains("Connection refused"));
  CHECK(r.err.find(lines.front()) < r.err.find("getcert: error:"));
}

TEST_CASE("verbose: -v shows the AIA download that completed the chain", "[cli]") {
  REQUIRE_OPENSSL();
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const auto server = start_openssl_server(pki_leaf_only("rsa"));
  const std::string target = "localhost:" + std::to_string(server.port());
  const auto r = run_getcert({"-v", target, "--ca-file", pki("root.pem"), "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);  // valid only with the AIA fetch
  const auto aia = log_lines(r.err, target, "aia");
  REQUIRE(aia.size() == 1);
  CHECK_THAT(aia.front(),
             Contains("http://127.0.0.1:18080/intermediate.der (") && Contains(" bytes)"));
  const Json j = parse_json(r.out);
  CHECK(j.at("verification").at("verdict") == "valid_only_with_aia_fetch");
  const auto steps = steps_of(j.at("timings"));
  // The download's own connection comes after the handshake, and ends before verify does.
  const auto handshake = std::find(steps.begin(), steps.end(), "handshake");
  const auto download = std::find(steps.begin(), steps.end(), "aia");
  REQUIRE(download != steps.end());
  CHECK(handshake < download);
  CHECK(std::find(handshake, download, "connect") != download);
  CHECK(steps.back() == "verify");
}

TEST_CASE("verify_chain() reports its downloads in Verification::timings", "[verify]") {
  REQUIRE_OPENSSL();
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const std::string pem = read_file(pki("rsa.pem"));
  auto leaf = getcert::parse_certificates(std::vector<std::uint8_t>(pem.begin(), pem.end()));
  REQUIRE(leaf);
  getcert::VerifyOptions options;
  options.trust.ca_file = pki("root.pem");
  options.name = "localhost";
  options.fetch_missing = true;  // off by default: the library downloads only when asked
  std::vector<std::string> told;
  options.on_step = [&](const getcert::StepTiming& t) {
    told.emplace_back(getcert::to_string(t.step));
  };
  auto v = getcert::verify_chain(*leaf, options);
  REQUIRE(v);
  CHECK(v->completed_by_aia);
  const auto steps = steps_of(v->timings);
  CHECK(steps.back() == "aia");
  CHECK(v->timings.back().ok);
  CHECK(v->timings.back().detail.rfind("http://127.0.0.1:18080/intermediate.der (", 0) == 0);
  CHECK(told == steps);
}

TEST_CASE("verbose: -v shows the OCSP request, and the CRL download when OCSP fails", "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = start_openssl_server(pki_chain("good"));
  const std::string target = "localhost:" + std::to_string(server.port());
  SECTION("OCSP answers") {
    OcspResponder responder;
    const auto r = run_getcert({"-v", target, "--ca-file", pki("root.pem"), "--check-revocation"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    const auto ocsp = log_lines(r.err, target, "ocsp");
    REQUIRE_FALSE(ocsp.empty());
    CHECK_THAT(ocsp.front(), Contains("ocsp ") && Contains(": http://127.0.0.1:18081 ("));
    CHECK(log_lines(r.err, target, "crl").empty());
  }
  SECTION("no responder: the CRL") {
    HttpServer http;
    http.serve("/intermediate.crl", read_file(pki("intermediate.crl")));
    const auto r = run_getcert(
        {"-v", target, "--ca-file", pki("root.pem"), "--check-revocation", "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    const auto ocsp = log_lines(r.err, target, "ocsp");
    REQUIRE_FALSE(ocsp.empty());
    CHECK_THAT(ocsp.front(), Contains("ocsp failed after ") && Contains("(failed)"));
    const auto crl = log_lines(r.err, target, "crl");
    REQUIRE_FALSE(crl.empty());
    CHECK_THAT(crl.front(),
               Contains(": http://127.0.0.1:18080/intermediate.crl (") && Contains(" bytes)"));
    const auto steps = steps_of(parse_json(r.out).at("timings"));
    CHECK(has(steps, "ocsp"));
    CHECK(has(steps, "crl"));
  }
}

TEST_CASE("verbose: -v shows the CONNECT exchange through a proxy", "[cli]") {
  REQUIRE_OPENSSL();
  TempDir tmp;
  const auto server = start_openssl_server(pki_chain("rsa"));
  auto proxy = start_connect_proxy(tmp / "requests.log");
  const std::string target = "localhost:" + std::to_string(server.port());
  const auto r = run_getcert({"-v", target, "--ca-file", pki("root.pem"), "--proxy",
                              "http://127.0.0.1:" + std::to_string(proxy.port)});
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  const auto exchange = log_lines(r.err, target, "proxy");
  REQUIRE(exchange.size() == 1);
  CHECK_THAT(exchange.front(),
             Contains(": CONNECT " + target + " via 127.0.0.1:" + std::to_string(proxy.port)));
  // The TCP connection is the proxy's; no lookup of the target happens here.
  const auto connects = log_lines(r.err, target, "connect");
  REQUIRE(connects.size() == 1);
  CHECK_THAT(connects.front(), Contains("127.0.0.1 port " + std::to_string(proxy.port)));
  CHECK(log_lines(r.err, target, "resolve").empty());
  CHECK(log_lines(r.err, target, "handshake").size() == 1);
}

TEST_CASE("verbose: -v shows the STARTTLS preamble", "[cli]") {
  REQUIRE_OPENSSL();
  auto smtp = start_smtp_server();
  const std::string target = "localhost:" + std::to_string(smtp.port);
  const auto r = run_getcert({"-v", "--starttls", "smtp", target, "--ca-file", pki("root.pem")});
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  for (const std::string step : {"resolve", "connect", "starttls", "handshake", "verify"}) {
    INFO("step " << step);
    CHECK_FALSE(log_lines(r.err, target, step).empty());
  }
  CHECK(r.err.find(": starttls ") < r.err.find(": handshake "));
}

TEST_CASE("verbose: -v with several targets logs each target's steps under its name", "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = start_openssl_server(pki_chain("rsa"));
  const std::string good = "localhost:" + std::to_string(server.port());
  const std::string refused = "127.0.0.1:" + std::to_string(closed_port());
  const auto r = run_getcert({"-v", good, refused, "--ca-file", pki("root.pem"), "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  CHECK(log_lines(r.err, good, "handshake").size() == 1);
  CHECK(log_lines(r.err, good, "verify").size() == 1);
  const auto failed = log_lines(r.err, refused, "connect");
  REQUIRE(failed.size() == 1);
  CHECK_THAT(failed.front(), Contains("Connection refused"));
  CHECK(log_lines(r.err, refused, "handshake").empty());
}
