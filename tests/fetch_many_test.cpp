// fetch_many() against real peers on loopback: one callback per target, never more targets in
// flight than asked, cancellation that stops pulling targets, errors from callbacks surfaced.

#include "getcert/fetch_many.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/net.hpp"

using getcert::test::HostilePeer;
using namespace std::chrono_literals;

namespace {

std::string loopback(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// A source over a fixed list that counts how often it was asked.
struct ListSource {
  std::vector<std::string> targets;
  std::size_t pulled = 0;
  std::optional<std::string> operator()() {
    if (pulled == targets.size()) return std::nullopt;
    return targets[pulled++];
  }
};

}  // namespace

TEST_CASE("fetch_many calls back once per target, with its index and input", "[fetch]") {
  const std::uint16_t closed = getcert::test::closed_port();
  const std::string refused = loopback(closed);
  ListSource source{{refused, "no such:target:x", refused, "[::1"}};
  std::vector<getcert::ManyResult> results;
  getcert::FetchManyOptions options;
  options.concurrency = 3;
  options.fetch.connect.timeout = 5s;
  const auto stats = getcert::fetch_many(
      [&] { return source(); }, [&](getcert::ManyResult&& r) { results.push_back(std::move(r)); },
      options);
  CHECK(stats.completed == 4);
  CHECK_FALSE(stats.cancelled);
  REQUIRE(results.size() == 4);
  std::sort(results.begin(), results.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  for (std::size_t i = 0; i < results.size(); ++i) {
    CHECK(results[i].index == i);
    CHECK(results[i].input == source.targets[i]);
    REQUIRE_FALSE(results[i].result.has_value());
  }
  CHECK(results[0].result.error().code == getcert::Errc::connect_failed);
  CHECK(results[0].endpoint.host == "127.0.0.1");
  CHECK(results[0].endpoint.port == closed);
  CHECK(results[1].result.error().code == getcert::Errc::invalid_argument);
  CHECK(results[1].result.error().message.find("no such:target:x") != std::string::npos);
  CHECK(results[3].result.error().code == getcert::Errc::invalid_argument);
}

TEST_CASE("fetch_many keeps exactly `concurrency` targets in flight", "[fetch]") {
  const HostilePeer stalled(HostilePeer::Behavior::silent);
  std::mutex mutex;  // the source and the callback run on different workers
  std::size_t pulled = 0;
  std::size_t delivered = 0;
  std::size_t most_in_flight = 0;
  getcert::FetchManyOptions options;
  options.concurrency = 3;
  options.fetch.connect.timeout = 1s;
  const auto stats = getcert::fetch_many(
      [&]() -> std::optional<std::string> {
        const std::lock_guard<std::mutex> lock(mutex);
        if (pulled == 7) return std::nullopt;
        ++pulled;
        most_in_flight = std::max(most_in_flight, pulled - delivered);
        return loopback(stalled.port());
      },
      [&](getcert::ManyResult&& r) {
        const std::lock_guard<std::mutex> lock(mutex);
        ++delivered;
        CHECK(r.result.error().code == getcert::Errc::timeout);
      },
      options);
  CHECK(stats.completed == 7);
  // Each peer stalls for the whole timeout, so all three workers are busy at once, never four.
  CHECK(most_in_flight == 3);
}

TEST_CASE("fetch_many stops pulling targets once cancelled", "[fetch]") {
  const std::string refused = loopback(getcert::test::closed_port());
  ListSource source{std::vector<std::string>(1000, refused)};
  getcert::FetchManyOptions options;
  options.concurrency = 4;
  std::size_t delivered = 0;
  const auto stats =
      getcert::fetch_many([&] { return source(); },
                          [&](getcert::ManyResult&&) {
                            ++delivered;
                            options.cancel.cancel();  // the callback holds a copy's shared flag
                          },
                          options);
  CHECK(stats.cancelled);
  // Only targets already taken when the first result arrived still finish: one per worker.
  CHECK(source.pulled <= 4);
  CHECK(delivered == source.pulled);
  CHECK(stats.completed == delivered);
}

TEST_CASE("an exception from the callback stops fetch_many and reaches the caller", "[fetch]") {
  const std::string refused = loopback(getcert::test::closed_port());
  ListSource source{std::vector<std::string>(100, refused)};
  getcert::FetchManyOptions options;
  options.concurrency = 2;
  CHECK_THROWS_WITH(
      getcert::fetch_many([&] { return source(); },
                          [](getcert::ManyResult&&) { throw std::runtime_error("disk full"); },
                          options),
      "disk full");
  CHECK(source.pulled <= 2);
}

TEST_CASE(
    "an exception while a target is fetched is that target's error, not the end of the process",
    "[fetch]") {
  // A peer that accepts and says nothing: the TCP connect step completes, and the caller's
  // on_step throws from inside a worker thread.
  HostilePeer silent(HostilePeer::Behavior::silent);
  ListSource source{std::vector<std::string>(6, loopback(silent.port()))};
  getcert::FetchManyOptions options;
  options.concurrency = 3;
  options.fetch.connect.timeout = 2s;
  options.fetch.on_step = [](const getcert::StepTiming&) {
    throw std::runtime_error("the step log is full");
  };
  std::vector<getcert::ManyResult> results;
  const auto stats = getcert::fetch_many(
      [&] { return source(); }, [&](getcert::ManyResult&& r) { results.push_back(std::move(r)); },
      options);
  CHECK_FALSE(stats.cancelled);
  REQUIRE(results.size() == 6);
  for (const auto& r : results) {
    REQUIRE_FALSE(r.result);
    CHECK(r.result.error().code == getcert::Errc::internal);
    CHECK_THAT(r.result.error().message, Catch::Contains("the step log is full"));
  }
}
