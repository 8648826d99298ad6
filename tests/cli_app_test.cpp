// getcert::cli::run in-process with in-memory streams: help, version and usage errors.

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "exit_codes.hpp"
#include "support/hostile_peer.hpp"

using Catch::Matchers::Contains;

namespace {

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

Outcome run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "getcert");
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  getcert::cli::Terminal term{in, out, err};
  const int rc = getcert::cli::run(args, term);
  return {rc, out.str(), err.str()};
}

}  // namespace

TEST_CASE("help prints usage on stdout and exits 0", "[cli]") {
  const auto r = run_cli({"--help"});
  CHECK(r.exit_code == getcert::cli::kExitOk);
  CHECK_THAT(r.out, Contains("fetch") && Contains("Exit codes"));

  const auto fetch_help = run_cli({"fetch", "--help"});
  CHECK(fetch_help.exit_code == getcert::cli::kExitOk);
  CHECK_THAT(fetch_help.out, Contains("--ca-file") && Contains("--select") && Contains("--sni"));
}

TEST_CASE("version names getcert and OpenSSL", "[cli]") {
  const auto r = run_cli({"--version"});
  CHECK(r.exit_code == getcert::cli::kExitOk);
  CHECK_THAT(r.out + r.err, Contains("getcert") && Contains("OpenSSL"));
  // `--version` alone skips building the CLI; with a global flag it goes through CLI11.
  const auto parsed = run_cli({"-q", "--version"});
  CHECK(parsed.exit_code == getcert::cli::kExitOk);
  CHECK(parsed.out == r.out);
  CHECK(r.err.empty());
}

TEST_CASE("usage errors exit 2 with a message on stderr and nothing on stdout", "[cli]") {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--no-such-flag"},
      {"fetch"},
      {"localhost", "--output", "yaml"},
      {"localhost", "--timeout", "0"},
      {"localhost", "--timeout", "10 parsecs"},
      {"localhost", "--connect-timeout", "-1s"},
      {"localhost", "--at", "2027-03-01T00:00:00"},
      {"localhost", "--timeout", "nan"},
      {"localhost", "--timeout", "inf"},
      {"localhost", "--timeout", "200000d"},
      {"localhost", "--timeout", ""},
      {"localhost", "--connect-timeout", "1e3"},
      {"localhost", "--expires-in", "nan"},
      {"localhost", "--expires-in", "-inf"},
      {"localhost", "--expires-in", ""},
      {"localhost", "--at", ""},
      {"localhost", "--at", "2027-02-30"},
      {"localhost", "--at", "2027-03-01T00:00:00+99:99"},
      {"localhost", "--at", "2027-03-01T24:00:00Z"},
      {"localhost", "-o", "der"},
      {"localhost:0"},
      {"[::1"},
      {"ftp://example.com"},
  };
  for (const auto& args : cases) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    INFO("getcert " << shown);
    const auto r = run_cli(args);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == getcert::cli::kExitUsage);
    CHECK_FALSE(r.err.empty());
    CHECK(r.out.empty());
  }
}

TEST_CASE("the messages of usage errors name the problem", "[cli]") {
  CHECK_THAT(run_cli({"host:70000"}).err, Contains("70000") && Contains("1-65535"));
  CHECK_THAT(run_cli({"localhost", "--timeout", "0s"}).err, Contains("greater than zero"));
  CHECK_THAT(run_cli({"localhost", "--at", "2027-03-01T00:00:00"}).err, Contains("zone"));
  CHECK_THAT(run_cli({"localhost", "-o", "der"}).err, Contains("--select leaf"));
}

TEST_CASE("duration and time errors name the option and the accepted form", "[cli]") {
  CHECK_THAT(run_cli({"localhost", "--timeout", "nan"}).err,
             Contains("--timeout: 'nan' is not a duration") && Contains("ms|s|m|h|d|w") &&
                 Contains("e.g. 10s"));
  CHECK_THAT(run_cli({"localhost", "--connect-timeout", "inf"}).err,
             Contains("--connect-timeout: 'inf' is not a duration"));
  CHECK_THAT(run_cli({"localhost", "--expires-in", "nan"}).err,
             Contains("--expires-in: 'nan' is not a duration") && Contains("e.g. 30d"));
  CHECK_THAT(run_cli({"localhost", "--timeout", "200000d"}).err,
             Contains("--timeout: '200000d' is too long") && Contains("36500d"));
  // An empty --at is a mistake (an unset variable in a script), not "now".
  CHECK_THAT(run_cli({"localhost", "--at", ""}).err,
             Contains("--at: '' is not a time") && Contains("2027-03-01T00:00:00Z"));
  CHECK_THAT(run_cli({"localhost", "--at", "2027-02-30"}).err,
             Contains("--at: '2027-02-30'") && Contains("2027-02 has 28 days"));
  CHECK_THAT(run_cli({"localhost", "--at", "2027-03-01T00:00:00+99:99"}).err,
             Contains("-23:59 to +23:59"));
}

TEST_CASE("a network failure in-process: exit 4, explained on the error stream", "[cli]") {
  getcert::test::HostilePeer peer(getcert::test::HostilePeer::Behavior::plain_http);
  const auto r = run_cli({"127.0.0.1:" + std::to_string(peer.port())});
  CHECK(r.exit_code == getcert::cli::kExitTls);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("getcert: error:") && Contains("plain HTTP"));
}
