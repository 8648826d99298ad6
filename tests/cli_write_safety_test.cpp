// Where getcert's output goes, when the world around it fails or is hostile: a full disk or a
// closed pipe on stdout, an output folder that is a symbolic link, a --force run that cannot
// replace every file, two targets that need one folder, a target list that never ends and a
// Ctrl-C while it waits. The real binary runs against real servers on loopback; each case
// asserts the documented exit code, a one-line message, and what is (not) on disk.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using namespace getcert::test;  // exit codes, explain(), run_getcert(), pki(), TempDir
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A word for /bin/sh, single-quoted.
std::string quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `getcert ARGS...` as a shell command line (for redirections and pipes).
std::string getcert_line(const std::vector<std::string>& args) {
  std::string line = quoted(GETCERT_BINARY);
  for (const auto& a : args) line += " " + quoted(a);
  return line;
}

// Every stderr line is one getcert message.
void check_one_line_messages(const std::string& err) {
  INFO("stderr: " << err);
  CHECK(!err.empty());
  for (const auto& line : lines_of(err)) CHECK(line.rfind("getcert: ", 0) == 0);
}

std::string local(std::uint16_t port) { return "localhost:" + std::to_string(port); }

// A PKCS#12 file of the test PKI's rsa leaf with its chain, and its password file.
struct P12Files {
  TempDir dir;
  std::string pw = dir / "pw.txt";
  std::string a = dir / "a.p12";
  std::string b = dir / "b.p12";
  P12Files() {
    write_file(pw, "secret\n");
    for (const auto& out : {a, b}) {
      openssl({"pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa-chain.pem"),
               "-certfile", pki("root.pem"), "-passout", "file:" + pw, "-out", out});
    }
  }
};

}  // namespace

TEST_CASE("a write error on stdout is exit 11 with one line, on every output path", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(fs::exists("/dev/full"), "/dev/full");
  const TlsServer server = start_openssl_server(pki_chain("rsa"));
  const P12Files p12;
  const std::string target = local(server.port());
  const std::string refused = "127.0.0.1:" + std::to_string(closed_port());
  const std::vector<std::string> trust{"--ca-file", pki("ca-bundle.pem"), "--timeout", "10s"};
  const std::vector<std::vector<std::string>> runs{
      plus({"--select", "root", target}, trust),
      plus({target}, trust),
      plus({target, "-o", "json"}, trust),
      plus({target, target, "-o", "json"}, trust),
      plus({target, refused, "-o", "prometheus"}, trust),
      {"show", pki("rsa-chain.pem")},
      {"p12", "topem", p12.a, "--password-file", p12.pw, "--stdout"},
  };
  for (const auto& args : runs) {
    const auto r = run_shell(getcert_line(args) + " > /dev/full");
    INFO(getcert_line(args) << "\n" << explain(r));
    CHECK(r.exit_code == kExitIo);
    CHECK_THAT(r.err, Contains("cannot write to standard output: No space left on device"));
    check_one_line_messages(r.err);
  }
}

TEST_CASE("a closed stdout stops a fleet run: getcert -f list | head -1", "[cli][fleet]") {
  const TempDir dir;
  const std::string refused = "127.0.0.1:" + std::to_string(closed_port());
  constexpr int kTargets = 3000;
  std::string list;
  for (int i = 0; i < kTargets; ++i) list += refused + "\n";
  write_file(dir / "list.txt", list);
  const auto r = run_shell("{ " +
                               getcert_line({"-f", dir / "list.txt", "-o", "json", "--concurrency",
                                             "1", "--timeout", "5s"}) +
                               " 2> " + quoted(dir / "err.txt") + "; echo $? > " +
                               quoted(dir / "rc.txt") + "; } | head -n 1",
                           60s);
  const std::string err = read_file(dir / "err.txt");
  INFO(explain(r) << "\ngetcert stderr: " << err);
  CHECK(lines_of(r.out).size() == 1);
  CHECK(read_file(dir / "rc.txt") == std::to_string(kExitIo) + "\n");
  CHECK_THAT(err, Contains("cannot write to standard output: Broken pipe"));
  CHECK_THAT(err, Contains("the rest of the list was not tried"));
  // The work done is counted by the summary: a handful of targets, not the whole list.
  std::smatch done;
  REQUIRE(std::regex_search(err, done, std::regex("getcert: ([0-9]+) targets? in")));
  CHECK(std::stoi(done[1].str()) < kTargets / 10);
}

TEST_CASE("output never lands outside --out-dir through a symlinked subfolder", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const TempDir dir;
  const std::string out = dir / "out";
  const std::string elsewhere = dir / "elsewhere";
  fs::create_directories(out);
  fs::create_directories(elsewhere);
  write_file(elsewhere + "/key.pem", "victim\n");
  write_file(elsewhere + "/chain.pem", "victim\n");

  SECTION("p12 topem a.p12 b.p12 --out-dir O --force, with O/a a link") {
    const P12Files p12;
    fs::create_directory_symlink(elsewhere, out + "/a");
    const auto r = run_getcert(
        {"p12", "topem", p12.a, p12.b, "--password-file", p12.pw, "--out-dir", out, "--force"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitIo);
    CHECK_THAT(r.err, Contains("symbolic link"));
    check_one_line_messages(r.err);
    CHECK(directory_listing(out) == std::vector<std::string>{"a"});
  }
  SECTION("fetch A B --out-dir O --force, with O/HOST_PORT a link") {
    const TlsServer server = start_openssl_server(pki_chain("rsa"));
    fs::create_directory_symlink(elsewhere, out + "/localhost_" + std::to_string(server.port()));
    const auto r =
        run_getcert({local(server.port()), "127.0.0.1:" + std::to_string(server.port()), "-k",
                     "--out-dir", out, "--force", "-o", "json", "--timeout", "10s"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitIo);
    CHECK_THAT(r.err, Contains("symbolic link"));
    check_one_line_messages(r.err);
  }
  CHECK(directory_listing(elsewhere) == std::vector<std::string>{"chain.pem", "key.pem"});
  CHECK(read_file(elsewhere + "/key.pem") == "victim\n");
  CHECK(read_file(elsewhere + "/chain.pem") == "victim\n");
}

TEST_CASE(
    "with --force, writing is all or nothing: one output that cannot be replaced keeps every old "
    "file",
    "[cli][pkcs12]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const P12Files p12;
  const std::string out = p12.dir / "out";
  fs::create_directories(out + "/ca.pem");
  write_file(out + "/ca.pem/keep", "x\n");
  write_file(out + "/key.pem", "the old key\n");
  write_file(out + "/cert.pem", "the old cert\n");
  const auto r =
      run_getcert({"p12", "topem", p12.a, "--password-file", p12.pw, "--out-dir", out, "--force"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitIo);
  CHECK_THAT(r.err, Contains("ca.pem") && Contains("nothing was written"));
  check_one_line_messages(r.err);
  CHECK(read_file(out + "/key.pem") == "the old key\n");
  CHECK(read_file(out + "/cert.pem") == "the old cert\n");
  CHECK(directory_listing(out) == std::vector<std::string>{"ca.pem", "cert.pem", "key.pem"});
}

TEST_CASE("a fetch --out-dir that cannot write leaves no new empty directory", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const TlsServer server = start_openssl_server(pki_chain("rsa"));
  const TempDir dir;
  const std::string out = dir / "new-folder";
  // A file size limit of 0 is a full disk for every file getcert creates (SIGXFSZ ignored, so
  // write(2) fails with EFBIG). Its stdout and stderr go to a pipe, which the limit does not
  // cover; only the messages are kept.
  const auto r = run_shell("( trap '' XFSZ; ulimit -f 0; " +
                           getcert_line({local(server.port()), "--ca-file", pki("ca-bundle.pem"),
                                         "--out-dir", out, "--timeout", "10s"}) +
                           " 2>&1 >/dev/null; echo \"exit $?\" ) | cat");
  INFO(explain(r));
  CHECK_THAT(r.out, Contains("getcert: error: cannot write '" + out));
  CHECK_THAT(r.out, Contains("exit " + std::to_string(kExitIo)));
  CHECK_FALSE(fs::exists(out));
  CHECK(directory_listing(dir.path()).empty());
}

TEST_CASE("two targets that need the same --out-dir folder are refused upfront", "[cli][fleet]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const TlsServer server = start_openssl_server(pki_chain("rsa"));
  const TempDir dir;
  const std::string out = dir / "out";
  const std::string first = local(server.port());
  const std::string second = "https://localhost:" + std::to_string(server.port()) + "/x";
  const std::vector<std::string> common{"--ca-file", pki("ca-bundle.pem"), "--timeout", "10s"};

  SECTION("on the command line: exit 2 before anything is fetched") {
    const auto r = run_getcert(plus({first, second, "--out-dir", out}, common));
    INFO(explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK_THAT(r.err, Contains("would both be written to"));
    check_one_line_messages(r.err);
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("in a list: the later one always fails with exit 2, the first is written") {
    write_file(dir / "list.txt", first + "\n" + second + "\n");
    for (int round = 0; round < 3; ++round) {
      fs::remove_all(out);
      const auto r = run_getcert(plus({"-f", dir / "list.txt", "--out-dir", out}, common));
      INFO(explain(r));
      CHECK(r.exit_code == kExitUsage);
      CHECK_THAT(r.err, Contains("'" + first + "' and '" + second + "' would both be written"));
      CHECK(fs::exists(out + "/localhost_" + std::to_string(server.port()) + "/chain.pem"));
    }
  }
}

TEST_CASE("distinct targets give distinct Prometheus series", "[cli][fleet]") {
  // From a list: unparseable targets still get their series (probe_success 0).
  const TempDir dir;
  write_file(dir / "list.txt", std::string("z\xff\n") + "z\\xff\n");
  const auto r = run_getcert({"-f", dir / "list.txt", "-o", "prometheus", "--timeout", "5s"});
  INFO(explain(r));
  std::set<std::string> labels;
  for (const auto& line : lines_of(r.out)) {
    if (line.rfind("getcert_probe_success{", 0) != 0 && line.rfind("probe_success{", 0) != 0) {
      continue;
    }
    labels.insert(line.substr(0, line.find('}')));
  }
  INFO(r.out);
  CHECK(labels.size() == 2);
}

TEST_CASE("an empty --shard is a usage error, not 'no shard'", "[cli][fleet]") {
  const TempDir dir;
  write_file(dir / "list.txt", "127.0.0.1:" + std::to_string(closed_port()) + "\n");
  const auto r = run_getcert({"-f", dir / "list.txt", "--shard", "", "--timeout", "5s"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitUsage);
  CHECK_THAT(r.err, Contains("--shard ''"));
  CHECK_THAT(r.err, !Contains("refused"));
  check_one_line_messages(r.err);
}

TEST_CASE("a targets file of /dev/zero: the over-long line is reported promptly, and the run ends",
          "[cli][fleet]") {
  const auto r = run_getcert({"-f", "/dev/zero", "--timeout", "2s"}, 20s);
  INFO(explain(r));
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == kExitMalformed);
  CHECK_THAT(r.err, Contains("/dev/zero") && Contains("has a line longer than"));
  check_one_line_messages(r.err);
}

TEST_CASE("Ctrl-C while a list is read from an open pipe ends the run with exit 130",
          "[cli][fleet]") {
  const TempDir dir;
  const std::string fifo = dir / "targets";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Held open for writing for the whole test, so the list never ends by itself.
  const int writer = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(writer >= 0);
  const std::string line = "127.0.0.1:" + std::to_string(closed_port()) + "\n";
  REQUIRE(::write(writer, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  SpawnOptions options;
  options.stdin_path = fifo;
  auto child = Process::spawn({GETCERT_BINARY, "-f", "-", "--timeout", "2s"}, options);
  std::this_thread::sleep_for(1s);  // the first target is done; the list waits for more
  REQUIRE(child.running());
  REQUIRE(::kill(child.pid(), SIGINT) == 0);
  const auto rc = child.wait_for(3s);  // --timeout + 1 s
  ::close(writer);
  INFO("stderr: " << child.stderr_text());
  REQUIRE(rc.has_value());
  CHECK(*rc == 130);
  CHECK_THAT(child.stderr_text(), Contains("interrupted"));
  check_one_line_messages(child.stderr_text());
}

TEST_CASE("Ctrl-C at the password prompt leaves the terminal's echo on", "[cli][pkcs12]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_tool("python3"), "python3");
  const P12Files p12;
  // Runs getcert on a new pseudo-terminal, presses Ctrl-C at the prompt, then reports the
  // terminal's ECHO flag once getcert is gone.
  constexpr const char* kScript = R"PY(
import os, pty, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen = b""
deadline = time.time() + 20
while b"Password for " not in seen and time.time() < deadline:
    try:
        seen += os.read(fd, 4096)
    except OSError:
        break
time.sleep(0.2)
os.write(fd, b"\x03")
_, status = os.waitpid(pid, 0)
echo = termios.tcgetattr(fd)[3] & termios.ECHO
print("prompted" if b"Password for " in seen else "no prompt", "echo on" if echo else "echo off",
      "signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status) else "exit %d" % os.WEXITSTATUS(status))
)PY";
  const auto r = run({"python3", "-c", kScript, GETCERT_BINARY, "p12", "topem", p12.a, "--out-dir",
                      p12.dir / "out"},
                     30s);
  INFO(explain(r));
  CHECK_THAT(r.out, Contains("prompted"));
  CHECK_THAT(r.out, Contains("echo on"));
  CHECK_THAT(r.out, Contains("signal 2"));
  CHECK_FALSE(fs::exists(p12.dir / "out"));
}

TEST_CASE("p12 topem never leaves out a key it cannot encrypt", "[cli][pkcs12]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const TempDir dir;
  // A key alone, neither encrypted nor MAC-protected: decoding needs no cryptography. With
  // OpenSSL told to use only FIPS implementations (none installed), encrypting the key for
  // --key-passphrase-file is then the one step that fails.
  openssl({"pkcs12", "-export", "-nocerts", "-inkey", pki("rsa.key"), "-keypbe", "NONE", "-certpbe",
           "NONE", "-nomac", "-passout", "pass:", "-out", dir / "key.p12"});
  write_file(dir / "fips.cnf",
             "openssl_conf = init\n[init]\nalg_section = algs\n[algs]\n"
             "default_properties = fips=yes\n");
  write_file(dir / "pass.txt", "passphrase\n");
  // The static build's wrapper keeps OpenSSL's own files out of reach, but passes this one on.
  const std::vector<std::string> env{"OPENSSL_CONF=" + (dir / "fips.cnf"),
                                     "GETCERT_TEST_OPENSSL_CONF=" + (dir / "fips.cnf")};
  for (const std::vector<std::string>& where :
       {std::vector<std::string>{"--stdout"}, std::vector<std::string>{"-o", dir / "all.pem"}}) {
    const auto r = run_getcert_with(plus({"p12", "topem", dir / "key.p12", "--no-password",
                                          "--key-passphrase-file", dir / "pass.txt"},
                                         where),
                                    env);
    INFO(explain(r));
    CHECK(r.exit_code != kExitOk);
    CHECK_THAT(r.err, Contains("cannot encrypt a private key"));
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(dir / "all.pem"));
    check_one_line_messages(r.err);
  }
}
