// --proxy: getcert reaches the server through a real HTTP CONNECT proxy (a small Python relay),
// the chain is the same as direct, the request carries the target and credentials, and a proxy
// that refuses or is down gives a one-line network error that never shows the password.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using namespace getcert::test;  // exit codes, explain(), files, servers

namespace {

struct Proxy {
  Process process;
  std::uint16_t port;
};

Proxy start_proxy(const std::string& log, const std::string& deny = {}) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::uint16_t port = free_port();
    std::vector<std::string> argv{"python3", GETCERT_CONNECT_PROXY, std::to_string(port), log};
    if (!deny.empty()) {
      argv.emplace_back("--deny");
      argv.push_back(deny);
    }
    SpawnOptions options;
    options.die_with_parent = true;
    Process p = Process::spawn(argv, options);
    if (wait_for_port("127.0.0.1", port, std::chrono::seconds(5), &p)) return {std::move(p), port};
  }
  FAIL("the CONNECT proxy did not start");
  throw std::logic_error("unreachable");
}

std::string proxy_url(const Proxy& p, const std::string& credentials = {}) {
  return "http://" + (credentials.empty() ? "" : credentials + "@") +
         "127.0.0.1:" + std::to_string(p.port);
}

}  // namespace

TEST_CASE("proxy: the chain through a CONNECT proxy equals the chain fetched directly",
          "[fetch][cli]") {
  if (!have_openssl()) {
    GETCERT_SKIP("openssl is not installed");
  }
  TempDir tmp;
  const auto server = start_openssl_server(pki_chain("rsa"));
  auto proxy = start_proxy(tmp / "requests.log");
  const std::string target = "localhost:" + std::to_string(server.port());
  const auto direct = run_getcert({target, "--ca-file", pki("root.pem")});
  const auto proxied = run_getcert(
      {target, "--ca-file", pki("root.pem"), "--proxy", proxy_url(proxy, "alice:s3cr3t")});
  INFO(explain(proxied));
  REQUIRE(direct.exit_code == kExitOk);
  CHECK(proxied.exit_code == kExitOk);
  CHECK(proxied.out == direct.out);
  const std::string log = read_file(tmp / "requests.log");
  CHECK_THAT(log, Contains("CONNECT " + target + " HTTP/1.1\r\n"));
  CHECK_THAT(log, Contains("Proxy-Authorization: Basic YWxpY2U6czNjcjN0\r\n"));  // alice:s3cr3t
}

TEST_CASE("proxy: a proxy that refuses is a network error quoting its answer, no password",
          "[fetch][cli]") {
  TempDir tmp;
  auto proxy = start_proxy(tmp / "requests.log", "407 Proxy Authentication Required");
  const auto r = run_getcert(
      {"localhost:443", "--proxy", proxy_url(proxy, "bob:hunter2"), "--ca-file", pki("root.pem")});
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("refused to connect to localhost:443") && Contains("407") &&
                        Contains("credentials"));
  CHECK(r.err.find("hunter2") == std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("proxy: a proxy that is down, or a bad proxy URL", "[fetch][cli]") {
  const auto down = run_getcert(
      {"localhost:443", "--proxy", "http://127.0.0.1:" + std::to_string(closed_port())});
  CHECK(down.exit_code == kExitNetwork);
  CHECK_THAT(down.err, Contains("proxy 127.0.0.1:") && Contains("Connection refused"));

  const auto bad = run_getcert({"localhost:443", "--proxy", "socks5://127.0.0.1:1080"});
  CHECK(bad.exit_code == kExitUsage);
  CHECK_THAT(bad.err, Contains("--proxy takes http://"));
}
