// The test harness itself, where a mistake would make other tests pass or fail for the wrong
// reason: a server counts as ready only when it is the one listening.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

using getcert::test::LoopbackListener;
using getcert::test::pki;
using getcert::test::Process;
using getcert::test::SpawnOptions;
using getcert::test::wait_for_port;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> s_server_on(std::uint16_t port) {
  // -www: without it s_server quits once stdin (here /dev/null) ends.
  return {GETCERT_TEST_OPENSSL,
          "s_server",
          "-accept",
          "127.0.0.1:" + std::to_string(port),
          "-cert",
          pki("rsa.pem"),
          "-key",
          pki("rsa.key"),
          "-www"};
}

}  // namespace

TEST_CASE("wait_for_port does not mistake another process' listener for the server", "[harness]") {
  // This process listens on the port, as another test's server would after taking it between
  // free_port() and the server's own bind.
  LoopbackListener foreign("foreign listener", 0);
  foreign.start([](int fd) { ::close(fd); });
  const std::uint16_t port = foreign.port();
  SpawnOptions options;
  options.die_with_parent = true;

  // A server that never listens: the port accepts connections, yet it is not ready.
  Process idle = Process::spawn({"sleep", "30"}, options);
  CHECK_FALSE(wait_for_port("127.0.0.1", port, 300ms, &idle));
  // Without a server to check, a connection is all wait_for_port asks for.
  CHECK(wait_for_port("127.0.0.1", port, 300ms));

  // A real server told to use the taken port fails to bind and exits: not ready either.
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  Process server = Process::spawn(s_server_on(port), options);
  CHECK_FALSE(wait_for_port("127.0.0.1", port, 10s, &server));
}

TEST_CASE("wait_for_port accepts a server once it holds the listening socket", "[harness]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  SpawnOptions options;
  options.die_with_parent = true;
  const std::uint16_t port = getcert::test::free_port();
  Process server = Process::spawn(s_server_on(port), options);
  CHECK(wait_for_port("127.0.0.1", port, 10s, &server));
}
