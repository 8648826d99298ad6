// `getcert p12 topem --watch`: the real binary keeps PEM files in sync with a rotated key store,
// and a real nginx (with a master process, reloaded by the --exec hook) serves what it wrote.

#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using namespace getcert::test;  // the harness: pki(), run_getcert(), openssl()
using namespace std::chrono_literals;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitMalformed = 8;

// A .p12 of the PKI's leaf NAME with its chain, made by openssl (an independent producer).
void make_p12(const TempDir& dir, const std::string& name, const std::string& out,
              const std::string& password = "watch pw") {
  const std::string tmp = dir / "made.p12";
  openssl({"pkcs12", "-export", "-in", pki(name + ".pem"), "-inkey", pki(name + ".key"),
           "-certfile", pki("intermediate.pem"), "-passout", "pass:" + password, "-out", tmp});
  std::filesystem::rename(tmp, out);  // the key store changes in one step, as a CA's tool does
}

std::string getcert_binary() { return GETCERT_BINARY; }

std::size_t lines_in(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("topem --watch keeps nginx's PEM files in sync through rotations", "[cli][pkcs12]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  if (!have_nginx()) GETCERT_SKIP("nginx is not installed");
  const TempDir dir;
  const std::string p12 = dir / "tls.p12";
  const std::string out = dir / "tls";
  write_file(dir / "pw", std::string("watch pw\n"));
  make_p12(dir, "ecdsa", p12);

  // The first conversion, before nginx starts (nginx needs the files to exist).
  const auto once =
      run_getcert({"p12", "topem", p12, "--password-file", dir / "pw", "--out-dir", out});
  REQUIRE(once.exit_code == kExitOk);
  NginxOptions options;
  options.reloadable = true;
  options.vhosts.push_back({"", ServedChain{out + "/fullchain.pem", out + "/key.pem"}, 0});
  const TlsServer nginx = start_nginx(options);
  REQUIRE(first_certificate_block(s_client_chain(nginx.port(), "localhost")) ==
          first_certificate_block(read_file(pki("ecdsa.pem"))));

  const std::string hook_log = dir / "hook.log";
  const std::string hook =
      "echo reload >> '" + hook_log + "' && kill -HUP " + std::to_string(nginx.pid());
  SpawnOptions spawn;
  spawn.die_with_parent = true;
  Process watcher = Process::spawn(
      {getcert_binary(), "p12", "topem", p12, "--password-file", dir / "pw", "--out-dir", out,
       "--force", "--watch", "--watch-interval", "100", "--exec", hook},
      spawn);
  const auto hooks = [&] {
    return std::filesystem::exists(hook_log) ? lines_in(read_file(hook_log)) : std::size_t{0};
  };
  REQUIRE(eventually([&] { return hooks() == 1; }));  // the update at start

  SECTION("a good rotation reaches nginx after the hook; a bad one writes nothing") {
    make_p12(dir, "rsa", p12);
    CHECK(eventually([&] { return hooks() == 2; }));
    CHECK(first_certificate_block(read_file(out + "/cert.pem")) ==
          first_certificate_block(read_file(pki("rsa.pem"))));
    CHECK(eventually([&] {
      return first_certificate_block(s_client_chain(nginx.port(), "localhost")) ==
             first_certificate_block(read_file(pki("rsa.pem")));
    }));

    // Bad versions: truncated, then the wrong password. Nothing is written, no hook runs.
    const std::string key_before = read_file(out + "/key.pem");
    const auto good = read_bytes(p12);
    write_file(dir / "cut", std::vector<std::uint8_t>(good.begin(), good.begin() + 200));
    std::filesystem::rename(dir / "cut", p12);
    CHECK(eventually(
        [&] { return watcher.stderr_text().find("update rejected") != std::string::npos; }));
    make_p12(dir, "ecdsa", p12, "another password");
    std::this_thread::sleep_for(1s);
    CHECK(hooks() == 2);
    CHECK(read_file(out + "/key.pem") == key_before);
    CHECK(first_certificate_block(s_client_chain(nginx.port(), "localhost")) ==
          first_certificate_block(read_file(pki("rsa.pem"))));
    const std::string err = watcher.stderr_text();
    CHECK_THAT(err, Contains("malformed") || Contains("truncated") || Contains("not a"));
    CHECK_THAT(err, Contains("password"));

    // The password file follows the store: the next update goes through.
    write_file(dir / "pw", std::string("another password\n"));
    CHECK(eventually([&] { return hooks() == 3; }));
    CHECK(eventually([&] {
      return first_certificate_block(s_client_chain(nginx.port(), "localhost")) ==
             first_certificate_block(read_file(pki("ecdsa.pem")));
    }));
  }

  // SIGTERM ends it cleanly, whatever happened before.
  REQUIRE(::kill(watcher.pid(), SIGTERM) == 0);
  const auto code = watcher.wait_for(10s);
  INFO(watcher.stderr_text());
  REQUIRE(code);
  CHECK(*code == kExitOk);
  CHECK_THAT(watcher.stderr_text(), Contains("stopping"));
}

TEST_CASE("topem --watch refuses what it cannot watch", "[cli][pkcs12]") {
  const TempDir dir;
  const auto no_watch = run_getcert({"p12", "topem", "x.p12", "--exec", "true"});
  CHECK(no_watch.exit_code == kExitUsage);
  const auto from_stdin = run_getcert({"p12", "topem", "-", "--watch", "--out-dir", dir / "o"});
  CHECK(from_stdin.exit_code != kExitOk);
  CHECK_THAT(from_stdin.err, Contains("--watch needs files"));
  const auto to_stdout = run_getcert({"p12", "topem", "x.p12", "--watch", "--stdout"});
  CHECK(to_stdout.exit_code != kExitOk);
  CHECK_THAT(to_stdout.err, Contains("not with --stdout"));

  // A first version that does not decode ends the run with its error, having written nothing.
  write_file(dir / "bad.p12", std::string("not a key store"));
  const auto bad = run_getcert(
      {"p12", "topem", dir / "bad.p12", "--watch", "--out-dir", dir / "o", "--no-password"}, 10s);
  CHECK(bad.exit_code == kExitMalformed);
  CHECK_FALSE(std::filesystem::exists(dir / "o/key.pem"));
}

TEST_CASE("the --exec hook gets no password variable, and a stop does not wait on it forever",
          "[cli][pkcs12]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const TempDir dir;
  const std::string p12 = dir / "tls.p12";
  make_p12(dir, "ecdsa", p12);
  const std::string env_log = dir / "env.log";
  // The hook records whether it sees the variable, then hangs (as a stuck reload would).
  const std::string hook = "echo \"seen=${STORE_PW-unset}\" > '" + env_log + "'; exec sleep 600";
  SpawnOptions spawn;
  spawn.die_with_parent = true;
  spawn.extra_env = {"STORE_PW=watch pw"};
  Process watcher = Process::spawn(
      {getcert_binary(), "p12", "topem", p12, "--password-env", "STORE_PW", "--out-dir",
       dir / "out", "--watch", "--watch-interval", "100", "--exec", hook},
      spawn);
  REQUIRE(eventually(
      [&] { return std::filesystem::exists(env_log) && lines_in(read_file(env_log)) == 1; }));
  CHECK(read_file(env_log) == "seen=unset\n");
  CHECK(std::filesystem::exists(dir / "out/key.pem"));

  // SIGTERM while the hook hangs: passed on to it, and the loop ends well within the grace.
  const auto sent = std::chrono::steady_clock::now();
  REQUIRE(::kill(watcher.pid(), SIGTERM) == 0);
  const auto code = watcher.wait_for(20s);
  INFO(watcher.stderr_text());
  REQUIRE(code);
  CHECK(*code == kExitOk);
  CHECK(std::chrono::steady_clock::now() - sent < 10s);
}

TEST_CASE("an update that cannot write is tried again without waiting for the store to change",
          "[cli][pkcs12]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const TempDir dir;
  const std::string p12 = dir / "tls.p12";
  const std::string out = dir / "out";
  write_file(dir / "pw", std::string("watch pw\n"));
  make_p12(dir, "ecdsa", p12);
  SpawnOptions spawn;
  spawn.die_with_parent = true;
  Process watcher =
      Process::spawn({getcert_binary(), "p12", "topem", p12, "--password-file", dir / "pw",
                      "--out-dir", out, "--watch", "--watch-interval", "100"},
                     spawn);
  REQUIRE(eventually([&] { return std::filesystem::exists(out + "/cert.pem"); }));
  // A directory where cert.pem goes: no file can be renamed over it (permissions would not stop
  // root, which CI runs as). The rotation then fails to write, and keeps what was there.
  std::filesystem::remove(out + "/cert.pem");
  std::filesystem::create_directory(out + "/cert.pem");
  write_file(out + "/cert.pem/keep", std::string("x"));
  make_p12(dir, "rsa", p12);
  REQUIRE(
      eventually([&] { return watcher.stderr_text().find("retrying in") != std::string::npos; }));
  // The obstacle goes; the store does not change again, and the update still lands.
  std::filesystem::remove_all(out + "/cert.pem");
  CHECK(eventually([&] {
    return std::filesystem::is_regular_file(out + "/cert.pem") &&
           first_certificate_block(read_file(out + "/cert.pem")) ==
               first_certificate_block(read_file(pki("rsa.pem")));
  }));
  INFO(watcher.stderr_text());
  REQUIRE(::kill(watcher.pid(), SIGTERM) == 0);
  const auto code = watcher.wait_for(20s);
  REQUIRE(code);
  CHECK(*code == kExitOk);
}
