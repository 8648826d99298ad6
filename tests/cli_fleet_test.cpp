// Fleet mode, as a user runs it: the built `getcert` binary with target lists (files, stdin and
// positional targets together) against real TLS servers and stalling peers on loopback. Every
// result must be what a single-target run gives, every line of a list must be accounted for
// exactly once (also across shards), and the exit code must not depend on completion order.

#include <sys/resource.h>
#include <sys/time.h>
#include <csignal>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fleet.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/net.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using Json = nlohmann::json;
using namespace std::chrono_literals;

using namespace getcert::test;  // the harness: pki(), run_getcert(), exit codes, explain()

namespace {

std::string local(std::uint16_t port) { return "localhost:" + std::to_string(port); }
std::string loopback(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// The JSON Lines of a run, by their "input" (every object must carry one).
std::multimap<std::string, Json> by_input(const std::string& out) {
  std::multimap<std::string, Json> objects;
  for (const auto& line : lines_of(out)) {
    const Json j = parse_json(line);
    REQUIRE(j.contains("input"));
    objects.emplace(j.at("input").get<std::string>(), j);
  }
  return objects;
}

// Drops what legitimately differs between two fetches of the same server.
Json comparable(Json j) {
  j.erase("input");
  return j;
}

std::string write_list(const TempDir& dir, const std::string& name,
                       const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  getcert::test::write_file(dir / name, text);
  return dir / name;
}

struct Servers {
  TlsServer valid = getcert::test::start_openssl_server(getcert::test::pki_chain("rsa"));
  TlsServer expired = getcert::test::start_openssl_server(getcert::test::pki_chain("expired"));
};

}  // namespace

TEST_CASE("a targets file: comments and blank lines skipped, every other line one result",
          "[cli][fleet]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const Servers s;
  const TempDir dir;
  const std::string refused = loopback(getcert::test::closed_port());
  const std::string list =
      write_list(dir, "targets.txt",
                 {"# production endpoints", "", local(s.valid.port()) + "   # the good one", "   ",
                  "not a target:99999", local(s.expired.port()), refused});
  const auto r = run_getcert({"-f", list, local(s.valid.port()), "--ca-file", pki("ca-bundle.pem"),
                              "-o", "json", "--timeout", "10s"});
  INFO(explain(r));
  const auto results = by_input(r.out);
  REQUIRE(results.size() == 5);
  CHECK(results.count(local(s.valid.port())) == 2);
  CHECK(results.count(local(s.expired.port())) == 1);
  CHECK(results.count(refused) == 1);

  const Json& bad = results.find("not a target:99999")->second;
  CHECK(bad.at("error").at("code") == "invalid_argument");
  CHECK(bad.at("error").at("exit_code") == kExitUsage);
  CHECK_THAT(bad.at("error").at("message").get<std::string>(), Contains("not a target:99999"));
  CHECK(results.find(refused)->second.at("error").at("code") == "connect_failed");
  CHECK(results.find(local(s.expired.port()))->second.at("verification").at("ok") == false);
  for (auto [it, end] = results.equal_range(local(s.valid.port())); it != end; ++it) {
    CHECK(it->second.at("verification").at("ok") == true);
  }
  // The unparseable line is the first failure in input order (positional targets come first).
  CHECK(r.exit_code == kExitUsage);
  // The summary counts each outcome and names the earliest expiry (the expired leaf).
  CHECK_THAT(r.err, Contains("5 targets"));
  CHECK_THAT(r.err, Contains("2 valid"));
  CHECK_THAT(r.err, Contains("1 invalid"));
  CHECK_THAT(r.err, Contains("1 refused"));
  CHECK_THAT(r.err, Contains("1 bad target"));
  CHECK_THAT(r.err, Contains("earliest expiry"));
  CHECK_THAT(r.err, Contains("(expired) at " + local(s.expired.port())));
  // The error line for the unparseable target names it.
  CHECK_THAT(r.err, Contains("cannot parse target 'not a target:99999'"));

  SECTION("-q silences the summary") {
    const auto quiet = run_getcert(
        {"-q", "-f", list, "--ca-file", pki("ca-bundle.pem"), "-o", "json", "--timeout", "10s"});
    INFO(explain(quiet));
    CHECK(lines_of(quiet.out).size() == 4);
    CHECK_THAT(quiet.err, !Contains("targets in"));
  }
}

TEST_CASE("each fleet result is what a single-target run gives", "[cli][fleet]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const Servers s;
  const std::string refused = loopback(getcert::test::closed_port());
  const std::vector<std::string> targets{local(s.valid.port()), local(s.expired.port()), refused};
  const std::vector<std::string> common{"--ca-file", pki("ca-bundle.pem"), "--timeout", "10s"};

  SECTION("JSON: the same object, plus \"input\"") {
    std::vector<std::string> args = targets;
    args.insert(args.end(), common.begin(), common.end());
    args.insert(args.end(), {"-o", "json"});
    const auto fleet = run_getcert(args);
    INFO(explain(fleet));
    const auto results = by_input(fleet.out);
    REQUIRE(results.size() == targets.size());
    for (const auto& t : targets) {
      std::vector<std::string> single_args{t};
      single_args.insert(single_args.end(), common.begin(), common.end());
      single_args.insert(single_args.end(), {"-o", "json"});
      const auto single = run_getcert(single_args);
      INFO(explain(single));
      REQUIRE(results.count(t) == 1);
      CHECK(comparable(results.find(t)->second) == comparable(parse_json(single.out)));
    }
  }
  SECTION("PEM: one block per target under a header line") {
    std::vector<std::string> args = targets;
    args.insert(args.end(), common.begin(), common.end());
    args.emplace_back("--insecure");
    const auto fleet = run_getcert(args);
    INFO(explain(fleet));
    for (const std::string& t : {local(s.valid.port()), local(s.expired.port())}) {
      std::vector<std::string> single_args{t, "--insecure"};
      single_args.insert(single_args.end(), common.begin(), common.end());
      const auto single = run_getcert(single_args);
      REQUIRE(single.exit_code == kExitOk);
      CHECK_THAT(fleet.out, Contains("# target: " + t + "\n" + single.out));
    }
    // Nothing was fetched from the refused port, so it has no block.
    CHECK_THAT(fleet.out, !Contains("# target: " + refused));
    CHECK(fleet.exit_code == kExitNetwork);
  }
}

TEST_CASE("the exit code is the first failing target's in input order, not completion order",
          "[cli][fleet]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const Servers s;
  const HostilePeer stalled(HostilePeer::Behavior::silent);
  // The stalled target is first in the list and finishes last (after its timeout); the
  // expired one fails long before it.
  const auto r =
      run_getcert({loopback(stalled.port()), local(s.expired.port()), local(s.valid.port()),
                   "--ca-file", pki("ca-bundle.pem"), "--timeout", "2s", "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(parse_json(lines.back()).at("input") == loopback(stalled.port()));

  const auto swapped =
      run_getcert({local(s.valid.port()), local(s.expired.port()), loopback(stalled.port()),
                   "--ca-file", pki("ca-bundle.pem"), "--timeout", "2s", "-o", "json"});
  INFO(explain(swapped));
  CHECK(swapped.exit_code == kExitVerify);
}

TEST_CASE("on a terminal a progress line is drawn on stderr and erased at the end",
          "[cli][fleet]") {
  REQUIRE_TOOL(!getcert::test::run({"sh", "-c", "command -v script"}).out.empty(),
               "script (util-linux)");
  const TempDir dir;
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) lines.push_back("bad_target_" + std::to_string(i) + ":0");
  const std::string list = write_list(dir, "targets.txt", lines);
  // script(1) runs getcert with a pseudo-terminal as stdin, stdout and stderr.
  const auto run_on_tty = [&](const std::string& flags) {
    return getcert::test::run_shell("script -qec '" + std::string(GETCERT_BINARY) + flags + " -f " +
                                    list + " -o json' /dev/null");
  };
  const auto r = run_on_tty("");
  INFO(explain(r));
  CHECK_THAT(r.out, Contains("\r\x1b[Kgetcert: 1/30 done"));
  // Every drawing has the same shape: done/total, the rate, failures, and an ETA once a rate is
  // known and targets remain (the values depend on the machine, the format does not).
  const std::regex drawn(
      R"(\r\x1b\[Kgetcert: (\d+)/30 done, (\d+\.\d)/s, (\d+) failed(, ETA [^\r]+)?)");
  const std::regex eta(R"(ETA (\d+\.\d s|\d+ min \d+ s|\d+ h \d+ min))");
  std::size_t drawings = 0;
  bool any_eta = false;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), drawn);
       it != std::sregex_iterator(); ++it) {
    ++drawings;
    const auto done = std::stoul((*it)[1]);
    CHECK(std::stoul((*it)[3]) == done);  // every target here fails
    if ((*it)[4].matched) {
      any_eta = true;
      const std::string tail = (*it)[4];
      CHECK(std::regex_search(tail, eta));
      CHECK(done < 30);  // nothing left, no ETA
    }
  }
  CHECK(drawings >= 30);
  CHECK(any_eta);
  CHECK_THAT(r.out, Contains("30/30 done"));
  CHECK_THAT(r.out, Contains("30 failed"));
  // Erased before the summary, which is the last line.
  CHECK_THAT(r.out, Contains("\r\x1b[Kgetcert: 30 targets in"));
  CHECK_THAT(r.out, Contains("30 bad target"));

  const auto quiet = run_on_tty(" -q");
  INFO(explain(quiet));
  CHECK_THAT(quiet.out, !Contains(" done, "));
  CHECK_THAT(quiet.out, !Contains("targets in"));
  CHECK_THAT(quiet.out, Contains("bad_target_29:0"));
}

TEST_CASE("stalled targets do not delay the others: the run ends within about one timeout",
          "[cli][fleet]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const Servers s;
  const HostilePeer stalled(HostilePeer::Behavior::silent);
  std::vector<std::string> args;
  for (int i = 0; i < 8; ++i) {
    args.push_back(loopback(stalled.port()));
    args.push_back(local(s.valid.port()));
  }
  args.insert(args.end(), {"--ca-file", pki("ca-bundle.pem"), "--timeout", "3s", "-o", "json"});
  // One after another this takes 8 x 3 s; concurrently, one timeout plus the handshakes. The
  // bound is generous for a loaded machine and still far below the sequential time.
  const auto r = run_getcert(args, 60s);
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  CHECK(r.elapsed < 12s);
  const auto results = by_input(r.out);
  CHECK(results.count(local(s.valid.port())) == 8);
  CHECK(results.count(loopback(stalled.port())) == 8);
  for (const auto& [input, j] : results) {
    if (input == loopback(stalled.port())) CHECK(j.at("error").at("code") == "timeout");
  }
  CHECK_THAT(r.err, Contains("8 valid, 8 timeout"));
}

TEST_CASE("Ctrl-C stops taking targets: those in flight finish, a summary, exit 130",
          "[cli][fleet]") {
  const HostilePeer stalled(HostilePeer::Behavior::silent);
  const TempDir dir;
  const std::string list =
      write_list(dir, "targets.txt", std::vector<std::string>(20, loopback(stalled.port())));
  auto child = getcert::test::Process::spawn(
      {GETCERT_BINARY, "-f", list, "--concurrency", "2", "--timeout", "2s", "-o", "json"});
  // The signal comes once both workers are stalled in their first target.
  for (int i = 0; i < 200 && stalled.connections() < 2; ++i) std::this_thread::sleep_for(50ms);
  REQUIRE(stalled.connections() == 2);
  REQUIRE(::kill(child.pid(), SIGINT) == 0);
  const auto rc = child.wait_for(10s);
  INFO(child.stdout_text() << child.stderr_text());
  REQUIRE(rc.has_value());
  CHECK(*rc == 130);
  CHECK(lines_of(child.stdout_text()).size() == 2);
  CHECK_THAT(child.stderr_text(),
             Contains("2 targets") && Contains("2 timeout") && Contains("interrupted"));
}

TEST_CASE("shards (--shard I/N) of a list cover every line exactly once", "[cli][fleet]") {
  const TempDir dir;
  // Unparseable targets fail at once, each with its own result: enough to follow the lines.
  std::vector<std::string> lines;
  std::set<std::string> all;
  for (int i = 0; i < 23; ++i) {
    lines.push_back("bad_target_" + std::to_string(i) + ":0");
    all.insert(lines.back());
    if (i % 5 == 0) lines.emplace_back("# a comment is not a target");
  }
  const std::string list = write_list(dir, "targets.txt", lines);
  std::set<std::string> seen;
  for (int shard = 1; shard <= 3; ++shard) {
    const std::string spec = std::to_string(shard) + "/3";
    const auto r = run_getcert({"-f", list, "--shard", spec, "-o", "json"});
    INFO(spec << "\n" << explain(r));
    CHECK(r.exit_code == kExitUsage);
    for (const auto& [input, j] : by_input(r.out)) {
      CHECK(seen.insert(input).second);  // never in two shards
      // Shard I takes targets I, I+N, I+2N, ... (1-based, comments not counted).
      const int number = std::stoi(input.substr(std::string("bad_target_").size()));
      CHECK(number % 3 == shard - 1);
    }
  }
  CHECK(seen == all);

  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0"}) {
    const auto r = run_getcert({"-f", list, "--shard", bad});
    INFO(explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK_THAT(r.err, Contains("--shard"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("targets from stdin and files combine and a missing file fails before any fetch",
          "[cli][fleet]") {
  const TempDir dir;
  const std::string a = write_list(dir, "a.txt", {"bad_a:0"});
  const std::string piped = dir / "stdin.txt";
  getcert::test::write_file(piped, "bad_stdin:0\n");
  const auto r = getcert::test::run_shell(std::string(GETCERT_BINARY) + " -f " + a +
                                          " -f - -o json < " + piped);
  INFO(explain(r));
  const auto results = by_input(r.out);
  CHECK(results.count("bad_a:0") == 1);
  CHECK(results.count("bad_stdin:0") == 1);

  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  const auto missing = run_getcert({loopback(peer.port()), "-f", dir / "nope.txt"});
  INFO(explain(missing));
  CHECK(missing.exit_code == kExitIo);
  CHECK_THAT(missing.err, Contains("nope.txt"));
  CHECK(peer.connections_settled() == 0);
}

TEST_CASE("a 100000-line list is read as a stream: memory does not grow with it", "[cli][fleet]") {
  const TempDir dir;
  const std::uint16_t refused = getcert::test::closed_port();
  // ~70 MB of list: an implementation that holds the file (or its lines) blows the bound.
  const std::string padding(700, 'x');
  const auto write_list = [&](const std::string& path, int lines) {
    std::ofstream out(path);
    for (int i = 0; i < lines; ++i) {
      out << loopback(refused) << " # line " << i << " " << padding << "\n";
    }
  };
  write_list(dir / "small.txt", 1000);
  write_list(dir / "big.txt", 100000);
  // ru_maxrss is in KiB: the largest child this test process has waited for (only getcert
  // here). The small list first gives the baseline of this build (sanitizers add their own).
  const auto peak_kib = [] {
    rusage usage{};
    REQUIRE(getrusage(RUSAGE_CHILDREN, &usage) == 0);
    return usage.ru_maxrss;
  };
  const auto small = run_getcert({"-f", dir / "small.txt", "--shard", "1/1000", "-o", "json"});
  INFO(explain(small).substr(0, 2000));
  CHECK(small.exit_code == kExitNetwork);
  const long baseline = peak_kib();
  // Shard 1/1000 reads every line but fetches only 100 of them, keeping the test quick.
  const auto r = run_getcert({"-f", dir / "big.txt", "--shard", "1/1000", "-o", "json"}, 120s);
  INFO(explain(r).substr(0, 2000));
  CHECK(r.exit_code == kExitNetwork);
  CHECK(by_input(r.out).count(loopback(refused)) == 100);
  CHECK_THAT(r.err, Contains("100 targets"));
  const long peak = peak_kib();
  INFO("peak RSS " << peak << " KiB, baseline " << baseline << " KiB");
#if !defined(__SANITIZE_ADDRESS__)
  // 100 times the lines may cost a little more (more results in flight), never the list.
  CHECK(peak - baseline < 16L * 1024);
  CHECK(peak < 64L * 1024);  // the issue's bound
#else
  // Under ASan freed memory waits in a quarantine of up to 256 MiB before reuse, so RSS
  // measures the sanitizer, not getcert: the uninstrumented suites enforce the bounds.
  static_cast<void>(baseline);
  static_cast<void>(peak);
#endif
}

TEST_CASE("Prometheus output reports expiry even when verification fails", "[cli][fleet]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const Servers s;
  const std::string refused = loopback(getcert::test::closed_port());
  const auto r = run_getcert({local(s.valid.port()), local(s.expired.port()), refused, "--ca-file",
                              pki("ca-bundle.pem"), "-o", "prometheus"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  const std::string v = "target=\"" + local(s.valid.port()) + "\"";
  const std::string e = "target=\"" + local(s.expired.port()) + "\"";
  CHECK_THAT(r.out, Contains("# TYPE getcert_probe_success gauge"));
  CHECK_THAT(r.out, Contains("getcert_probe_success{" + v + "} 1\n"));
  CHECK_THAT(r.out, Contains("getcert_probe_success{" + e + "} 0\n"));
  CHECK_THAT(r.out, Contains("getcert_probe_success{target=\"" + refused + "\"} 0\n"));
  CHECK_THAT(r.out, Contains("getcert_probe_duration_seconds{" + v + "} "));
  CHECK_THAT(r.out, Contains("getcert_tls_version_info{" + v + ",version=\"TLSv1.3\"} 1\n"));
  CHECK_THAT(r.out, Contains("getcert_cert_not_after_seconds{" + v +
                             ",depth=\"0\",subject=\"CN=rsa.test\""));
  // Verified chain: leaf, intermediate, root.
  CHECK_THAT(r.out, Contains("getcert_cert_not_after_seconds{" + v + ",depth=\"2\""));
  // The expired chain did not verify; its expiry is still there, and in the past.
  const std::string expiry_prefix = "getcert_chain_expiry_seconds{" + e + "} ";
  const auto at = r.out.find(expiry_prefix);
  REQUIRE(at != std::string::npos);
  const long long expiry = std::stoll(r.out.substr(at + expiry_prefix.size()));
  CHECK(expiry < static_cast<long long>(std::time(nullptr)));
  CHECK(expiry > 1700000000);
  CHECK_THAT(r.out, !Contains("getcert_chain_expiry_seconds{target=\"" + refused));
}

TEST_CASE("promtool check metrics accepts the Prometheus output", "[cli][fleet]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  REQUIRE_TOOL(!getcert::test::run({"sh", "-c", "command -v promtool"}).out.empty(),
               "promtool (Debian package prometheus)");
  const Servers s;
  const TempDir dir;
  // Hostile text in a label: quotes, a backslash and bytes that are not UTF-8.
  const std::string odd = write_list(dir, "odd.txt", {"\"odd\\name\xff:443"});
  const auto r = run_getcert({local(s.valid.port()), local(s.expired.port()), "-f", odd,
                              "--ca-file", pki("ca-bundle.pem"), "-o", "prometheus"});
  INFO(explain(r));
  REQUIRE(!r.out.empty());
  getcert::test::write_file(dir / "metrics.prom", r.out);
  const auto check =
      getcert::test::run_shell("promtool check metrics < '" + (dir / "metrics.prom") + "'");
  INFO(explain(check));
  CHECK(check.exit_code == 0);
}

namespace {

std::vector<std::string> read_all(getcert::cli::TargetList& list) {
  std::vector<std::string> out;
  while (auto t = list.next()) out.push_back(*t);
  return out;
}

}  // namespace

TEST_CASE("target lists: CRLF, comments, URL fragments and overlong lines", "[cli][fleet]") {
  const TempDir dir;
  const std::string long_line(10000, 'a');
  getcert::test::write_file(dir / "list.txt",
                            "a.example\r\n"
                            "  # indented comment\n"
                            "b.example:8443\t# tab comment\n"
                            "https://c.example/path#fragment\n"
                            "\r\n" +
                                long_line + "\n" + "d.example");  // no final newline
  std::istringstream no_stdin;
  auto list = getcert::cli::TargetList::open({"pos.example"}, {dir / "list.txt"}, {}, no_stdin);
  REQUIRE(list.has_value());
  const auto targets = read_all(*list);
  REQUIRE(targets.size() == 6);
  CHECK(targets[0] == "pos.example");
  CHECK(targets[1] == "a.example");
  CHECK(targets[2] == "b.example:8443");
  CHECK(targets[3] == "https://c.example/path#fragment");
  // Cut to a bounded length (it then fails to parse as its own result), never held whole.
  CHECK(targets[4].size() == 4096);
  CHECK(targets[5] == "d.example");

  SECTION("shards partition the targets") {
    std::vector<std::string> joined;
    for (std::size_t i = 0; i < 4; ++i) {
      auto part = getcert::cli::TargetList::open({"pos.example"}, {dir / "list.txt"},
                                                 getcert::cli::Shard{i, 4}, no_stdin);
      REQUIRE(part.has_value());
      const auto got = read_all(*part);
      for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k] == targets[i + 4 * k]);
      joined.insert(joined.end(), got.begin(), got.end());
    }
    CHECK(joined.size() == targets.size());
  }
}

TEST_CASE("shard specifications are I/N with I from 1 to N", "[cli][fleet]") {
  const auto shard = getcert::cli::parse_shard("2/5");
  REQUIRE(shard.has_value());
  CHECK(shard->index == 1);
  CHECK(shard->count == 5);
  CHECK(getcert::cli::parse_shard("5/5").has_value());
  for (const char* bad : {"0/5", "6/5", "/5", "2/", "2", "-1/5", "2/5/7", "1/9999999999", " 1/2"}) {
    INFO(bad);
    CHECK_FALSE(getcert::cli::parse_shard(bad).has_value());
  }
}
