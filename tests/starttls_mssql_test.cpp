// SQL Server STARTTLS (MS-TDS PRELOGIN) against tests/support/tds_server.py, a server written
// from the specification that carries its handshake in TDS packets, in one piece or split into
// small packets dribbled a few bytes at a time: the chain getcert prints is the one served;
// ENCRYPT_NOT_SUP, a framing error and stalls are named.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/local_server.hpp"
#include "support/net.hpp"
#include "support/process.hpp"

namespace {

using Catch::Matchers::Contains;
using getcert::test::pki;
using getcert::test::run_getcert;

using Server = getcert::test::LocalServer;

Server start_tds(const std::vector<std::string>& options) {
  return getcert::test::start_local_server(
      [&](std::uint16_t port) {
        std::vector<std::string> argv{"python3", GETCERT_TDS_SERVER, std::to_string(port),
                                      pki("rsa-chain.pem"), pki("rsa.key")};
        argv.insert(argv.end(), options.begin(), options.end());
        return argv;
      },
      "the test server");
}

std::string target(const Server& s) { return "localhost:" + std::to_string(s.port); }

}  // namespace

TEST_CASE("TDS: the handshake inside PRELOGIN packets yields the served chain, however split",
          "[fetch][cli]") {
  const std::string expected = getcert::test::read_file(pki("rsa-chain.pem"));
  const std::vector<std::vector<std::string>> cases{
      {},                               // TLS 1.3, one packet per flight
      {"--tls-max", "1.2"},             // what SQL Server before 2022 negotiates
      {"--split"},                      // records across packets, headers across reads
      {"--split", "--tls-max", "1.2"},  // ... and a second client flight
      {"--encryption", "0"},            // ENCRYPT_OFF: still encrypts when asked (2.2.6.5)
      {"--encryption", "3"},            // ENCRYPT_REQ
  };
  for (const auto& options : cases) {
    std::string label;
    for (const auto& o : options) label += o + " ";
    INFO("server options: " << label);
    auto server = start_tds(options);
    const auto r = run_getcert(
        {"--starttls", "mssql", target(server), "--ca-file", pki("root.pem"), "-o", "json"});
    INFO(getcert::test::explain(r) << "\nserver:\n" << server.process.stderr_text());
    REQUIRE(r.exit_code == 0);
    const auto json = getcert::test::parse_json(r.out);
    std::string chain;
    for (const auto& cert : json["presented_chain"]) chain += cert["pem"].get<std::string>();
    CHECK(chain == expected);
    CHECK(json["verification"]["ok"] == true);
    CHECK(json["tls"]["version"] ==
          (label.find("1.2") != std::string::npos ? "TLSv1.2" : "TLSv1.3"));
  }
}

TEST_CASE("TDS: ENCRYPT_NOT_SUP is exit 4 naming the server's encryption setting", "[fetch][cli]") {
  auto server = start_tds({"--encryption", "2"});
  const auto r = run_getcert({"--starttls", "mssql", target(server), "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(r));
  CHECK(r.exit_code == 4);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("SQL Server 16.0.1000.0 does not support encryption") &&
                        Contains("ENCRYPT_NOT_SUP (0x02)"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("TDS: a server that stalls before or during the handshake times out in time",
          "[fetch][cli]") {
  for (const std::string stage : {"prelogin", "handshake"}) {
    INFO("stall at " << stage);
    auto server = start_tds({"--stall", stage});
    const auto r = run_getcert(
        {"--starttls", "mssql", "--timeout", "1s", target(server), "--ca-file", pki("root.pem")},
        std::chrono::seconds(10));
    INFO(getcert::test::explain(r));
    CHECK(r.exit_code == 3);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("in time") || Contains("within 1 s"));
    CHECK(r.elapsed < std::chrono::milliseconds(2500));
  }
}

TEST_CASE("TDS: endless empty PRELOGIN packets end at the deadline, not never", "[fetch][cli]") {
  // Each empty packet is legal framing but carries no TLS byte; the socket never stops being
  // readable, so only a deadline check between packets ends the handshake.
  auto server = start_tds({"--flood-empty"});
  const auto r = run_getcert(
      {"--starttls", "mssql", "--timeout", "1s", target(server), "--ca-file", pki("root.pem")},
      std::chrono::seconds(10));
  INFO(getcert::test::explain(r));
  CHECK(r.exit_code == 3);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("in time") || Contains("within 1 s"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.elapsed < std::chrono::milliseconds(2500));
}

TEST_CASE("TDS: handshake packets of the wrong type, and a server that is not TDS, are named",
          "[fetch][cli]") {
  auto wrong = start_tds({"--wrong-type"});
  const auto r = run_getcert({"--starttls", "mssql", target(wrong), "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(r));
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.err, Contains("SQL Server sent a TDS packet of type 0x04 during the TLS handshake"));

  // An SMTP server greets first; its banner is no TDS answer.
  auto smtp = getcert::test::start_local_server(
      [](std::uint16_t port) {
        return std::vector<std::string>{"python3",
                                        GETCERT_STARTTLS_SERVER,
                                        "smtp",
                                        std::to_string(port),
                                        pki("rsa-chain.pem"),
                                        pki("rsa.key")};
      },
      "the test server");
  const auto not_tds =
      run_getcert({"--starttls", "mssql", target(smtp), "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(not_tds));
  CHECK(not_tds.exit_code == 4);
  CHECK_THAT(not_tds.err, Contains("SQL Server did not answer PRELOGIN with a TDS reply") &&
                              Contains("220-test"));
}
