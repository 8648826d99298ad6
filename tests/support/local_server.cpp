#include "support/local_server.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <utility>

#include "support/net.hpp"

namespace getcert::test {

LocalServer start_local_server(
    const std::function<std::vector<std::string>(std::uint16_t port)>& argv_for,
    const std::string& what, std::chrono::milliseconds limit) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::uint16_t port = free_port();
    SpawnOptions options;
    options.die_with_parent = true;
    Process p = Process::spawn(argv_for(port), options);
    if (wait_for_port("127.0.0.1", port, limit, &p)) return {std::move(p), port};
  }
  FAIL(what << " did not start");
  throw std::logic_error("unreachable");
}

}  // namespace getcert::test
