// Fleet mode at scale, bounded for ctest: 10,000 targets (200 loopback ports of one nginx, each
// listed 50 times) in one run. Every target must complete, the process's descriptors must stay
// within what its concurrency needs (none leak per target), and its peak RSS under 64 MiB.
// bench/soak runs the same at 100,000 targets and reports over time.

#include <sys/resource.h>
#include <sys/time.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using namespace std::chrono_literals;
using namespace getcert::test;

namespace {

constexpr std::size_t kPorts = 200;
constexpr std::size_t kRepeats = 50;
constexpr std::size_t kTargets = kPorts * kRepeats;
constexpr long kConcurrency = 50;

std::size_t open_fds(pid_t pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("10,000 targets complete with bounded descriptors and memory", "[cli][fleet][scale]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  if (!have_nginx()) GETCERT_SKIP("nginx is not installed");
  NginxOptions options;
  options.worker_connections = 1024;
  for (std::size_t slot = 0; slot < kPorts; ++slot) {
    options.vhosts.push_back({"", pki_chain("ecdsa"), slot});
  }
  const TlsServer nginx = start_nginx(options);
  const TempDir dir;
  std::string list;
  for (std::size_t round = 0; round < kRepeats; ++round) {
    for (std::size_t slot = 0; slot < kPorts; ++slot) {
      list += "127.0.0.1:" + std::to_string(nginx.port(slot)) + "\n";
    }
  }
  write_file(dir / "targets.txt", list);

  SpawnOptions spawn;
  spawn.die_with_parent = true;
  Process getcert = Process::spawn(
      {GETCERT_BINARY, "-f", dir / "targets.txt", "--concurrency", std::to_string(kConcurrency),
       "--timeout", "5s", "--ca-file", pki("ca-bundle.pem"), "-o", "csv"},
      spawn);
  // Sampled while it runs: the most descriptors it held at once.
  std::size_t peak_fds = 0;
  std::optional<int> rc;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!(rc = getcert.wait_for(50ms)) && std::chrono::steady_clock::now() < deadline) {
    peak_fds = std::max(peak_fds, open_fds(getcert.pid()));
  }
  REQUIRE(rc.has_value());
  const std::string out = getcert.stdout_text();
  const std::string err = getcert.stderr_text();
  INFO(err.substr(0, 2000));
  // The ecdsa leaf names 127.0.0.1: every target verifies.
  CHECK(*rc == kExitOk);
  CHECK(lines_of(out).size() == kTargets + 1);  // the header and one row per target
  CHECK_THAT(err, Contains("getcert: " + std::to_string(kTargets) + " targets in"));
  CHECK_THAT(err, Contains(std::to_string(kTargets) + " valid"));
  CHECK_THAT(err, !Contains("timeout"));
  // stdio, the list, the trust store, the resolver; then at most two sockets per target in
  // flight. A descriptor leaked per target would pass this within the first hundred.
  INFO("peak descriptors " << peak_fds);
  CHECK(peak_fds > 0);
  CHECK(peak_fds <= static_cast<std::size_t>(64 + 2 * kConcurrency));

  rusage usage{};
  REQUIRE(getrusage(RUSAGE_CHILDREN, &usage) == 0);
  INFO("peak RSS of a child " << usage.ru_maxrss << " KiB");
  WARN("10,000 targets: peak " << peak_fds << " descriptors, " << usage.ru_maxrss << " KiB RSS");
#if !defined(__SANITIZE_ADDRESS__)
  CHECK(usage.ru_maxrss < 64L * 1024);  // the bound (nginx is still running: not it)
#else
  // ASan's quarantine holds freed memory: RSS measures the sanitizer; other builds check it.
  static_cast<void>(usage);
#endif
}
