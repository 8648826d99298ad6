#pragma once

// Server processes a test starts on a free loopback port (test servers, proxies).

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace getcert::test {

// A server process listening on 127.0.0.1:port; killed when this goes away.
struct LocalServer {
  Process process;
  std::uint16_t port;
};

// Spawns argv_for(port) on a free port, dying with the test, and waits up to `limit` for it to
// listen. Another process may take the port first, so it tries a few ports before it FAILs
// with "<what> did not start".
LocalServer start_local_server(
    const std::function<std::vector<std::string>(std::uint16_t port)>& argv_for,
    const std::string& what, std::chrono::milliseconds limit = std::chrono::seconds(5));

}  // namespace getcert::test
