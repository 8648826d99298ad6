// MySQL STARTTLS against a real MariaDB server (Debian's mariadb-server), started by the test
// with an empty data directory in a temp dir on a free loopback port: the chain getcert prints is
// the one `openssl s_client -starttls mysql` sees, and a server without SSL is named.

#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

namespace {

using Catch::Matchers::Contains;
using getcert::test::pki;
using getcert::test::Process;
using getcert::test::run_getcert;

constexpr const char* kMariadbd = "/usr/sbin/mariadbd";  // Debian's mariadb-server package
bool have_mariadbd() { return ::access(kMariadbd, X_OK) == 0; }

struct Mariadb {
  std::unique_ptr<getcert::test::TempDir> dir;
  Process process;
  std::uint16_t port;
};

// mariadbd on an empty data directory: no grant tables (nobody logs in; the test needs only the
// greeting) and no InnoDB (nothing is stored), which keeps the start under a second and the
// directory a few KiB. `with_ssl`: the test PKI's RSA chain; without it MariaDB 10.11 offers no
// SSL.
Mariadb start_mariadb(bool with_ssl) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto dir = std::make_unique<getcert::test::TempDir>();
    std::filesystem::create_directory(dir->path() / "data");
    const std::uint16_t port = getcert::test::free_port();
    std::vector<std::string> argv{kMariadbd,
                                  "--no-defaults",
                                  "--datadir=" + (*dir / "data"),
                                  "--socket=" + (*dir / "mysqld.sock"),
                                  "--pid-file=" + (*dir / "mysqld.pid"),
                                  "--log-error=" + (*dir / "error.log"),
                                  "--port=" + std::to_string(port),
                                  "--bind-address=127.0.0.1",
                                  "--skip-grant-tables",
                                  "--skip-innodb",
                                  "--default-storage-engine=Aria",
                                  "--default-tmp-storage-engine=Aria"};
    if (::geteuid() == 0) argv.emplace_back("--user=root");  // else it runs as the caller
    if (with_ssl) {
      argv.push_back("--ssl-cert=" + pki("rsa-chain.pem"));
      argv.push_back("--ssl-key=" + pki("rsa.key"));
    }
    getcert::test::SpawnOptions options;
    options.die_with_parent = true;
    options.own_process_group = true;
    Process p = Process::spawn(argv, options);
    if (getcert::test::wait_for_port("127.0.0.1", port, std::chrono::seconds(20), &p)) {
      return {std::move(dir), std::move(p), port};
    }
  }
  FAIL("mariadbd did not start");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("MySQL: MariaDB gives the chain openssl s_client -starttls mysql sees", "[fetch][cli]") {
  if (!have_mariadbd()) GETCERT_SKIP("mariadb-server is not installed");
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const auto server = start_mariadb(/*with_ssl=*/true);
  const std::string oracle = getcert::test::certificate_blocks(
      getcert::test::openssl({"s_client", "-starttls", "mysql", "-connect",
                              "127.0.0.1:" + std::to_string(server.port), "-showcerts"}));
  CHECK(oracle == getcert::test::read_file(pki("rsa-chain.pem")));
  const auto r = run_getcert({"--starttls", "mysql", "localhost:" + std::to_string(server.port),
                              "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(r) << "\nmariadbd:\n"
                                 << getcert::test::read_file(*server.dir / "error.log"));
  CHECK(r.exit_code == 0);
  CHECK(r.out == oracle);
  CHECK(r.err.empty());
}

TEST_CASE("MySQL: a MariaDB server without SSL is exit 4: the server did not offer SSL",
          "[fetch][cli]") {
  if (!have_mariadbd()) GETCERT_SKIP("mariadb-server is not installed");
  const auto server = start_mariadb(/*with_ssl=*/false);
  const auto r = run_getcert({"--starttls", "mysql", "localhost:" + std::to_string(server.port),
                              "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(r));
  CHECK(r.exit_code == 4);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("MySQL server \"5.5.5-10.") && Contains("MariaDB") &&
                        Contains("did not offer SSL"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
