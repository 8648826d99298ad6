// `getcert serve` against real parts: the built binary on a free loopback port, probing
// openssl s_server instances that present the test PKI's valid, expired, wrong-name and
// untrusted chains, an SMTP STARTTLS server, an HTTP CONNECT proxy and Dante's SOCKS5 server,
// certificate files and key stores on disk, and a stalled peer.

#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/http_server.hpp"
#include "support/local_server.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

using namespace getcert::test;  // NOLINT(google-build-using-namespace)

namespace {

// Exit codes of `getcert serve` (README "Exit codes"), restated so a renumbering breaks this.
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitUnavailable = 12;

// A `getcert serve` on a free loopback port, stopped (SIGKILL) when it goes away.
class Exporter {
 public:
  explicit Exporter(const std::string& config, std::vector<std::string> extra = {}) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      std::vector<std::string> argv{GETCERT_BINARY, "serve", "--listen",
                                    "127.0.0.1:" + std::to_string(port_)};
      if (!config.empty()) {
        argv.emplace_back("--config");
        argv.push_back(config);
      }
      argv.insert(argv.end(), extra.begin(), extra.end());
      SpawnOptions options;
      options.die_with_parent = true;
      options.extra_env = {"P12_PASSWORD=secret-p12"};
      process_.emplace(Process::spawn(argv, options));
      if (wait_for_port("127.0.0.1", port_, std::chrono::seconds(10), &*process_)) return;
      process_->kill();
    }
    FAIL("getcert serve did not start: " << process_->stderr_text());
  }
  std::uint16_t port() const { return port_; }
  Process& process() { return *process_; }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30, 0);
    return c;
  }
  // GET /probe; the status and the body.
  std::pair<int, std::string> probe(const std::string& target, const std::string& module,
                                    const httplib::Headers& headers = {}) const {
    auto c = client();
    const auto res =
        c.Get(("/probe?target=" + httplib::detail::encode_query_param(target) + "&module=" + module)
                  .c_str(),
              headers);
    REQUIRE(res);
    return {res->status, res->body};
  }

 private:
  std::uint16_t port_ = 0;
  std::optional<Process> process_;
};

// The value of the first sample whose name and labels match `pattern` (a regex over the
// "name{labels}" part), or nullopt.
std::optional<double> sample(const std::string& body, const std::string& pattern) {
  const std::regex line("^(" + pattern + ") (\\S+)$", std::regex::multiline);
  std::smatch m;
  if (!std::regex_search(body, m, line)) return std::nullopt;
  return std::stod(m[m.size() - 1].str());
}

std::string write_config(const TempDir& dir, const std::string& text) {
  const std::string path = dir / "exporter.yml";
  write_file(path, text);
  return path;
}

std::string tls_config(const TempDir& dir) {
  return write_config(dir, "modules:\n  tls:\n    ca_file: " + pki("ca-bundle.pem") +
                               "\n    timeout: 5s\n  short:\n    ca_file: " + pki("ca-bundle.pem") +
                               "\n    timeout: 2s\n");
}

bool have_promtool() { return have_tool("promtool"); }

}  // namespace

TEST_CASE("a probe answers every series for valid, expired, misnamed and untrusted chains",
          "[exporter]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_promtool(), "promtool (Debian package prometheus)");
  TempDir dir;
  auto valid = start_openssl_server(pki_chain("rsa"));
  auto expired = start_openssl_server(pki_chain("expired"));
  auto wrong = start_openssl_server(pki_chain("wronghost"));
  auto untrusted = start_openssl_server(pki_chain("untrusted"));
  Exporter exporter(tls_config(dir));
  const auto now = static_cast<double>(std::time(nullptr));

  auto [status, body] = exporter.probe("localhost:" + std::to_string(valid.port()), "tls");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="ok"\})") == 1.0);
  CHECK(sample(body, R"(getcert_tls_version_info\{version="TLSv1\.3"\})") == 1.0);
  CHECK(sample(body, R"(getcert_tls_cipher_info\{cipher="TLS_\w+"\})") == 1.0);
  // Leaf, intermediate and root of the verified chain; leaf and intermediate as presented.
  CHECK(sample(
      body,
      R"(getcert_cert_not_after_seconds\{chain="presented",depth="0",serial="[0-9A-F]+",subject_cn="rsa\.test",issuer_cn="[^"]+",sha256="[0-9A-F]{64}"\})"));
  CHECK(sample(body, R"(getcert_cert_not_before_seconds\{chain="verified",depth="2",[^}]*\})"));
  CHECK_FALSE(
      sample(body, R"(getcert_cert_not_after_seconds\{chain="presented",depth="2",[^}]*\})"));
  CHECK(sample(body, R"(getcert_verification_info\{verdict="valid",problems="",[^}]*\})") == 1.0);
  CHECK(sample(body, R"(getcert_client_certificate_requested)") == 0.0);
  CHECK(sample(body, R"(getcert_ocsp_staple_present)") == 0.0);
  CHECK(sample(body, R"(getcert_probe_step_duration_seconds\{step="handshake"\})"));
  CHECK(sample(body, R"(getcert_chain_expiry_seconds)") > now);

  std::tie(status, body) = exporter.probe("localhost:" + std::to_string(expired.port()), "tls");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="expired"\})") == 0.0);
  const auto not_after = sample(
      body,
      R"(getcert_cert_not_after_seconds\{chain="presented",depth="0",[^}]*subject_cn="expired\.test"[^}]*\})");
  REQUIRE(not_after);
  CHECK(*not_after < now);
  CHECK(sample(body, R"(getcert_verification_problem\{code="expired",depth="0"\})") == 1.0);

  std::tie(status, body) = exporter.probe("localhost:" + std::to_string(wrong.port()), "tls");
  CHECK(sample(body, R"(getcert_probe_success\{reason="hostname_mismatch"\})") == 0.0);
  // Trusted, only misnamed: the verified chain is still there.
  CHECK(sample(
      body,
      R"(getcert_cert_not_after_seconds\{chain="verified",depth="0",[^}]*subject_cn="other\.example"[^}]*\})"));

  std::tie(status, body) = exporter.probe("localhost:" + std::to_string(untrusted.port()), "tls");
  const auto reason = std::regex_search(
      body,
      std::regex(
          R"re(getcert_probe_success\{reason="(unknown_issuer|untrusted_root|self_signed)"\} 0)re"));
  CHECK(reason);
  CHECK(sample(
      body,
      R"(getcert_cert_not_after_seconds\{chain="presented",depth="0",[^}]*subject_cn="untrusted\.test"[^}]*\})"));
  CHECK_FALSE(sample(body, R"(getcert_cert_not_after_seconds\{chain="verified"[^}]*\})"));

  {
    const auto lint = run_with_input({"promtool", "check", "metrics"}, body);
    INFO(lint.out << lint.err);
    CHECK(lint.exit_code == 0);
  }

  // A target nobody listens on: success 0 with the error as the reason, still HTTP 200.
  std::tie(status, body) = exporter.probe("127.0.0.1:" + std::to_string(closed_port()), "tls");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="connect_failed"\})") == 0.0);

  // Unknown module and missing target: 400, as blackbox_exporter answers.
  CHECK(exporter.probe("localhost:1", "nope").first == 400);
  CHECK(exporter.probe("", "tls").first == 400);

  // The exporter's own metrics count what happened.
  auto c = exporter.client();
  const auto metrics = c.Get("/metrics");
  REQUIRE(metrics);
  CHECK(sample(metrics->body, R"(getcert_exporter_probes_total\{module="tls",success="true"\})") ==
        1.0);
  CHECK(sample(metrics->body, R"(getcert_exporter_probes_total\{module="tls",success="false"\})") ==
        4.0);
  CHECK(sample(metrics->body, R"(getcert_exporter_probes_in_flight)") == 0.0);
  CHECK(sample(metrics->body, R"(process_open_fds)") > 0.0);
}

TEST_CASE("file:// targets read PEM, DER and PKCS#12 files through a glob", "[exporter]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir dir;
  TempDir certs;
  write_file(certs / "a.pem", read_file(pki("rsa-chain.pem")));
  const auto der = run({GETCERT_TEST_OPENSSL, "x509", "-in", pki("expired.pem"), "-outform", "DER",
                        "-out", certs / "b.der"});
  REQUIRE(der.exit_code == 0);
  const auto p12 =
      run({GETCERT_TEST_OPENSSL, "pkcs12", "-export", "-in", pki("ecdsa-chain.pem"), "-inkey",
           pki("ecdsa.key"), "-passout", "pass:secret-p12", "-out", certs / "c.p12"});
  REQUIRE(p12.exit_code == 0);
  const std::string config =
      write_config(dir, "modules:\n  files:\n    ca_file: " + pki("ca-bundle.pem") +
                            "\n    file_password_env: P12_PASSWORD\nallow:\n  files: [\"" +
                            certs.path().string() + "/*\"]\n");
  Exporter exporter(config);

  auto [status, body] = exporter.probe("file://" + certs.path().string() + "/a.pem", "files");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="ok"\})") == 1.0);
  CHECK(sample(
      body,
      R"(getcert_cert_not_after_seconds\{file="[^"]*/a\.pem",chain="verified",depth="2",[^}]*\})"));

  std::tie(status, body) = exporter.probe("file://" + certs.path().string() + "/*", "files");
  CHECK(sample(body, R"(getcert_probe_success\{reason="expired"\})") == 0.0);
  CHECK(sample(
      body,
      R"(getcert_cert_not_after_seconds\{file="[^"]*/b\.der",chain="presented",depth="0",[^}]*subject_cn="expired\.test"[^}]*\})"));
  CHECK(sample(
      body,
      R"(getcert_cert_not_after_seconds\{file="[^"]*/c\.p12",chain="presented",depth="0",[^}]*subject_cn="ecdsa\.test"[^}]*\})"));

  std::tie(status, body) = exporter.probe("file://" + certs.path().string() + "/none*", "files");
  CHECK(sample(body, R"(getcert_probe_success\{reason="no_file"\})") == 0.0);
  CHECK(exporter.probe("file://relative/path", "files").first == 400);
}

TEST_CASE("a bad config is refused at start with file, line and key", "[exporter]") {
  TempDir dir;
  struct Case {
    std::string yaml;
    const char* message;
  };
  const Case cases[] = {
      {"modules:\n  tls:\n    timout: 5s\n", ":3: modules.tls.timout: unknown key"},
      {"modules:\n  tls:\n    timeout: soon\n",
       ":3: modules.tls.timeout: 'soon' is not a duration"},
      {"modules:\n  tls:\n    protocol: gopher\n",
       ":3: modules.tls.protocol: 'gopher' is not one of"},
      {"modules:\n  tls: {\n", "not valid YAML"},
      {"modules: {}\n", "modules: must map at least one module name"},
      {"modules:\n  tls:\n    pins: [nope]\n", "modules.tls: --pin takes sha256/"},
      {"modules:\n  m:\n    client:\n      keystore_file: /nonexistent.p12\n",
       ":4: modules.m.client.keystore_file: cannot read /nonexistent.p12"},
      {"modules:\n  m: {}\nallow:\n  cidrs: [10.0.0.0/33]\n",
       ":4: allow.cidrs[0]: '10.0.0.0/33' is not an address or CIDR"},
      {"modules:\n  tls:\n    profile: strict\n",
       ":3: modules.tls.profile: must be webpki, openssl, rfc5280 or cabf"},
      {"modules:\n  tls:\n    max_depth: -1\n",
       "modules.tls: --max-depth takes a number of intermediate CAs"},
      {"modules:\n  tls:\n    crl_files: [/nonexistent.crl]\n", "/nonexistent.crl"},
      // A key given twice: yaml-cpp would keep the first and ignore the second without a word.
      {"modules:\n  tls: {}\nallow:\n  cidrs: [127.0.0.1/32]\nallow:\n  cidrs: [10.0.0.0/8]\n",
       ":5: allow: given twice (first on line 3)"},
      {"modules:\n  tls:\n    timeout: 5s\n    timeout: 1s\n",
       ":4: modules.tls.timeout: given twice (first on line 3)"},
      // Over 1 MiB: refused before the parser sees it.
      {"#" + std::string(std::size_t{1} << 20, 'x') + "\nmodules:\n  tls: {}\n",
       ": the config file is larger than 1 MiB"},
  };
  for (const auto& c : cases) {
    const std::string path = write_config(dir, c.yaml);
    const auto check = run({GETCERT_BINARY, "serve", "--config", path, "--check-config"});
    INFO(c.yaml);
    CHECK(check.exit_code == kExitUsage);
    CHECK_THAT(check.err, Catch::Contains(path + "") && Catch::Contains(c.message));
    // The server itself refuses to start on the same file, with the same exit code.
    const auto start = run({GETCERT_BINARY, "serve", "--config", path, "--listen",
                            "127.0.0.1:" + std::to_string(free_port())},
                           std::chrono::seconds(10));
    CHECK(start.exit_code == kExitUsage);
    CHECK_THAT(start.err, Catch::Contains(c.message));
  }
  const std::string good = write_config(dir, "modules:\n  tls:\n    timeout: 5s\n");
  const auto ok = run({GETCERT_BINARY, "serve", "--config", good, "--check-config"});
  CHECK(ok.exit_code == kExitOk);
  CHECK_THAT(ok.out, Catch::Contains("1 module: tls"));
}

// The config is read again on every reload: a FIFO in its place would hang the service, and a
// device would be read without end. Both are refused at once, the FIFO without waiting for a
// writer.
TEST_CASE("getcert serve refuses a config that is a FIFO or a device", "[exporter]") {
  TempDir dir;
  const std::string fifo = dir / "getcert.yml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& config : {fifo, std::string("/dev/zero")}) {
    const auto r = run({GETCERT_BINARY, "serve", "--config", config, "--check-config"},
                       std::chrono::seconds(20));
    INFO(config << ": " << r.err);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == kExitUsage);  // as every config problem of serve
    CHECK_THAT(r.err, Catch::Contains(config + ": the config file is a") &&
                          Catch::Contains("not a regular file"));
  }
}

// Every answer is counted, once: what no route takes (404) and a method a route does not take,
// as much as the routed answers.
TEST_CASE("self metrics count every answer once, 404s included", "[exporter]") {
  TempDir dir;
  Exporter exporter(write_config(dir, "modules:\n  tls: {}\n"));
  httplib::Client http("127.0.0.1", exporter.port());
  for (int i = 0; i < 3; ++i) {
    const auto res = http.Get("/nope");
    REQUIRE(res);
    CHECK(res->status == 404);
  }
  const auto post = http.Post("/metrics", "", "text/plain");
  REQUIRE(post);
  CHECK(post->status >= 400);
  REQUIRE(http.Get("/-/healthy"));
  const auto res = http.Get("/metrics");
  REQUIRE(res);
  INFO(res->body);
  CHECK(sample(res->body,
               R"(getcert_exporter_http_requests_total\{handler="other",code="404"\})") == 3.0);
  CHECK(sample(res->body, R"(getcert_exporter_http_requests_total\{handler="/metrics",code=")" +
                              std::to_string(post->status) + R"("\})") == 1.0);
  CHECK(sample(res->body,
               R"(getcert_exporter_http_requests_total\{handler="/-/healthy",code="200"\})") ==
        1.0);
}

// The web config is checked at load: a bcrypt cost every request could not afford, a user given
// twice (the second password would be ignored), each with its line.
TEST_CASE("serve refuses a web config with a bcrypt cost above 14 or a user given twice",
          "[exporter]") {
  TempDir dir;
  const std::string config = write_config(dir, "modules:\n  tls: {}\n");
  // Valid bcrypt shapes (the hash part is not checked at load, the cost is).
  const std::string salt_and_hash = "$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz012";
  const struct {
    std::string users;
    const char* message;
  } cases[] = {
      {"  prometheus: $2y$31" + salt_and_hash + "\n",
       ":2: basic_auth_users.prometheus: bcrypt cost must be 4 to 14"},
      {"  prometheus: $2y$03" + salt_and_hash + "\n", "bcrypt cost must be 4 to 14"},
      {"  prometheus: $2y$1x" + salt_and_hash + "\n", "bcrypt cost must be 4 to 14"},
      {"  a: $2y$10" + salt_and_hash + "\n  a: $2y$10" + salt_and_hash + "\n",
       ":3: basic_auth_users.a: given twice (first on line 2)"},
  };
  for (const auto& c : cases) {
    write_file(dir / "web.yml", "basic_auth_users:\n" + c.users);
    const auto check = run({GETCERT_BINARY, "serve", "--config", config, "--web-config-file",
                            dir / "web.yml", "--check-config"});
    INFO(c.users << check.err);
    CHECK(check.exit_code == kExitUsage);
    CHECK_THAT(check.err, Catch::Contains(c.message));
  }
  write_file(dir / "web.yml", "basic_auth_users:\n  prometheus: $2y$14" + salt_and_hash + "\n");
  const auto ok = run({GETCERT_BINARY, "serve", "--config", config, "--web-config-file",
                       dir / "web.yml", "--check-config"});
  INFO(ok.err);
  CHECK(ok.exit_code == kExitOk);
}

// getcert-serve where getcert looks for it: next to it (the build tree), or installed.
std::filesystem::path getcert_serve_binary() {
  const auto dir = std::filesystem::canonical(GETCERT_BINARY).parent_path();
  for (const auto& candidate :
       {dir / "getcert-serve", dir / ".." / "libexec" / "getcert" / "getcert-serve"}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  FAIL("no getcert-serve next to " << GETCERT_BINARY << " nor in ../libexec/getcert");
  return {};
}

TEST_CASE("getcert serve execs getcert-serve in place, and says so in one line when it is missing",
          "[exporter]") {
  const auto serve_binary = getcert_serve_binary();
  TempDir dir;
  SECTION("the same process: systemd's Type=notify and signals reach the exporter") {
    Exporter exporter("");
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink(
        "/proc/" + std::to_string(exporter.process().pid()) + "/exe", ec);
    CHECK(exe.filename() == "getcert-serve");
    ::kill(exporter.process().pid(), SIGTERM);
    CHECK(exporter.process().wait_for(std::chrono::seconds(10)) == kExitOk);
  }
  SECTION("one command line: the exit codes and the help come through unchanged") {
    const auto ok = run({GETCERT_BINARY, "serve", "--check-config"});
    CHECK(ok.exit_code == kExitOk);
    CHECK_THAT(ok.out, Catch::Contains("(built-in): ok, 1 module: default"));
    const std::string bad = dir / "bad.yml";
    write_file(bad, "modules: {}\n");
    const auto refused = run({GETCERT_BINARY, "-v", "serve", "--config", bad, "--check-config"});
    CHECK(refused.exit_code == kExitUsage);
    CHECK_THAT(refused.err, Catch::Contains("modules: must map at least one module name"));
    // getcert-serve takes serve's command line with or without the word `serve`.
    const auto direct = run({serve_binary.string(), "--config", bad, "--check-config"});
    CHECK(direct.exit_code == kExitUsage);
    const auto help = run({GETCERT_BINARY, "serve", "--help"});
    CHECK(help.exit_code == kExitOk);
    CHECK_THAT(help.out, Catch::Contains("Usage: getcert serve [OPTIONS]"));
    CHECK(run({serve_binary.string(), "--help"}).out == help.out);
    CHECK(run({serve_binary.string(), "serve", "--help"}).out == help.out);
    // Options serve does not take are refused by either.
    CHECK(run({serve_binary.string(), "fetch", "example.com"}).exit_code == kExitUsage);
  }
  SECTION("without getcert-serve: one line naming where it was looked for, exit 12") {
    const auto alone = dir.path() / "bin" / "getcert";
    std::filesystem::create_directories(alone.parent_path());
    std::filesystem::copy_file(std::filesystem::canonical(GETCERT_BINARY), alone);
    const auto missing = run({alone.string(), "serve", "--check-config"});
    CHECK(missing.exit_code == kExitUnavailable);
    CHECK(missing.out.empty());
    CHECK(std::count(missing.err.begin(), missing.err.end(), '\n') == 1);
    CHECK_THAT(
        missing.err,
        Catch::StartsWith("getcert: error: 'serve' runs getcert-serve") &&
            Catch::Contains((dir.path() / "bin" / "getcert-serve").string()) &&
            Catch::Contains((dir.path() / "libexec" / "getcert" / "getcert-serve").string()));
    // Every other command is unaffected.
    const auto version = run({alone.string(), "--version"});
    CHECK(version.exit_code == kExitOk);
    CHECK(version.out == run({GETCERT_BINARY, "--version"}).out);
    CHECK_THAT(version.out, Catch::StartsWith("getcert "));
    // Found once installed where `make install` puts it.
    const auto libexec = dir.path() / "libexec" / "getcert";
    std::filesystem::create_directories(libexec);
    std::filesystem::copy_file(serve_binary, libexec / "getcert-serve");
    const auto installed = run({alone.string(), "serve", "--check-config"});
    CHECK(installed.exit_code == kExitOk);
    CHECK_THAT(installed.out, Catch::Contains("(built-in): ok"));
  }
}

// What systemd's Type=notify checks: READY=1 arrives on NOTIFY_SOCKET from the main pid, the
// one it started (/usr/bin/getcert), although the exporter runs in getcert-serve.
TEST_CASE("under systemd's Type=notify, READY=1 comes from the pid that was started",
          "[exporter]") {
#ifndef GETCERT_TEST_HAVE_SYSTEMD
  GETCERT_SKIP("built without libsystemd: getcert serve does not notify");
#else
  TempDir dir;
  const std::string path = dir / "notify";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0);
  const int one = 1;
  REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) == 0);

  SpawnOptions options;
  options.die_with_parent = true;
  options.extra_env = {"NOTIFY_SOCKET=" + path};
  Process exporter = Process::spawn(
      {GETCERT_BINARY, "serve", "--listen", "127.0.0.1:" + std::to_string(free_port())}, options);
  // The first message and the pid the kernel says sent it (SO_PASSCRED).
  pollfd ready{fd, POLLIN, 0};
  REQUIRE(::poll(&ready, 1, 10000) == 1);
  char text[256] = {};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
  iovec iov{text, sizeof(text) - 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  REQUIRE(::recvmsg(fd, &msg, 0) > 0);
  const cmsghdr* c = CMSG_FIRSTHDR(&msg);
  REQUIRE(c != nullptr);
  REQUIRE(c->cmsg_type == SCM_CREDENTIALS);
  ucred sender{};
  std::memcpy(&sender, CMSG_DATA(c), sizeof(sender));
  CHECK_THAT(std::string(text), Catch::Contains("READY=1"));
  CHECK(sender.pid == exporter.pid());
  ::kill(exporter.pid(), SIGTERM);
  CHECK(exporter.wait_for(std::chrono::seconds(10)) == kExitOk);
#endif
}

TEST_CASE("a module's profile, max_depth and protocol reach the verdict", "[exporter]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir dir;
  // A leaf named only by its CN (no subjectAltName), trusted directly: OpenSSL-based clients
  // accept it through the CN, the webpki profile does not.
  const std::string cn_cert = dir / "cn-only.pem";
  const std::string cn_key = dir / "cn-only.key";
  const auto made = run({"openssl",
                         "req",
                         "-x509",
                         "-newkey",
                         "ec",
                         "-pkeyopt",
                         "ec_paramgen_curve:P-256",
                         "-nodes",
                         "-subj",
                         "/CN=localhost",
                         "-days",
                         "2",
                         "-addext",
                         "basicConstraints=critical,CA:FALSE",
                         "-addext",
                         "extendedKeyUsage=serverAuth",
                         "-keyout",
                         cn_key,
                         "-out",
                         cn_cert});
  REQUIRE(made.exit_code == 0);
  auto cn_only = start_openssl_server(ServedChain{cn_cert, cn_key});
  auto valid = start_openssl_server(pki_chain("rsa"));
  const std::string ca = pki("ca-bundle.pem");
  Exporter exporter(write_config(
      dir, "modules:\n  webpki:\n    ca_file: " + cn_cert +
               "\n  openssl:\n    profile: openssl\n    ca_file: " + cn_cert +
               "\n  shallow:\n    max_depth: 0\n    ca_file: " + ca +
               "\n  smtp:\n    protocol: smtp\n    ca_file: " + ca + "\n    timeout: 2s\n"));
  const std::string cn_target = "localhost:" + std::to_string(cn_only.port());
  auto [status, body] = exporter.probe(cn_target, "openssl");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="ok"\})") == 1.0);
  std::tie(status, body) = exporter.probe(cn_target, "webpki");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="[a-z_]+"\})") == 0.0);
  CHECK_FALSE(sample(body, R"(getcert_probe_success\{reason="ok"\})"));

  // One intermediate is one too many for max_depth 0: a failed probe, every series kept.
  const std::string target = "localhost:" + std::to_string(valid.port());
  std::tie(status, body) = exporter.probe(target, "shallow");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="chain_too_long"\})") == 0.0);
  CHECK(sample(body, R"(getcert_cert_not_after_seconds\{chain="presented",depth="0",[^}]*\})"));
  // The smtp module speaks SMTP first: a TLS server does not answer its greeting.
  std::tie(status, body) = exporter.probe(target, "smtp");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="[a-z_]+"\})") == 0.0);
}

TEST_CASE(
    "reload by POST (only with --web.enable-lifecycle) and SIGHUP, and a bad reload keeps the "
    "running config",
    "[exporter]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir dir;
  auto valid = start_openssl_server(pki_chain("rsa"));
  const std::string target = "localhost:" + std::to_string(valid.port());
  const std::string ca = pki("ca-bundle.pem");
  const std::string path = write_config(dir, "modules:\n  first:\n    ca_file: " + ca + "\n");
  {
    // Without --web.enable-lifecycle, POST /-/reload is refused and reloads nothing.
    Exporter closed(path);
    write_config(dir, "modules:\n  other:\n    ca_file: " + ca + "\n");
    const auto refused = closed.client().Post("/-/reload");
    REQUIRE(refused);
    CHECK(refused->status == 403);
    CHECK_THAT(refused->body, Catch::Contains("--web.enable-lifecycle"));
    CHECK(closed.probe(target, "first").first == 200);
    CHECK(closed.probe(target, "other").first == 400);
    write_config(dir, "modules:\n  first:\n    ca_file: " + ca + "\n");
  }
  Exporter exporter(path, {"--web.enable-lifecycle"});
  CHECK(exporter.probe(target, "first").first == 200);
  CHECK(exporter.probe(target, "second").first == 400);

  write_config(dir, "modules:\n  second:\n    ca_file: " + ca + "\n");
  auto c = exporter.client();
  auto res = c.Post("/-/reload");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(exporter.probe(target, "second").first == 200);
  CHECK(exporter.probe(target, "first").first == 400);

  write_config(dir, "modules:\n  third:\n    timeout: never\n");
  res = c.Post("/-/reload");
  REQUIRE(res);
  CHECK(res->status == 500);
  CHECK_THAT(res->body, Catch::Contains(":3: modules.third.timeout"));
  CHECK(exporter.probe(target, "second").first == 200);
  const auto metrics = c.Get("/metrics");
  REQUIRE(metrics);
  CHECK(sample(metrics->body, "getcert_exporter_config_last_reload_successful") == 0.0);

  write_config(dir, "modules:\n  fourth:\n    ca_file: " + ca + "\n");
  REQUIRE(::kill(exporter.process().pid(), SIGHUP) == 0);
  bool reloaded = false;
  for (int i = 0; i < 50 && !reloaded; ++i) {
    reloaded = exporter.probe(target, "fourth").first == 200;
    if (!reloaded) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(reloaded);
}

TEST_CASE("past --max-concurrent-probes a probe gets 503, and SIGTERM finishes probes in flight",
          "[exporter]") {
  TempDir dir;
  HostilePeer stalled(HostilePeer::Behavior::silent);
  const std::string path = write_config(dir, "modules:\n  slow:\n    timeout: 3s\n");
  Exporter exporter(path, {"--max-concurrent-probes", "1"});
  const std::string target = "127.0.0.1:" + std::to_string(stalled.port());

  auto first = std::async(std::launch::async, [&] { return exporter.probe(target, "slow"); });
  // Wait until the first probe holds the only slot.
  bool busy = false;
  for (int i = 0; i < 100 && !busy; ++i) {
    auto c = exporter.client();
    const auto m = c.Get("/metrics");
    busy = m && sample(m->body, "getcert_exporter_probes_in_flight") == 1.0;
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(busy);
  CHECK(exporter.probe(target, "slow").first == 503);
  // The scrape timeout header bounds the probe below the module's 3 s.
  const auto started = std::chrono::steady_clock::now();
  const auto [status, body] = first.get();
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="timeout"\})") == 0.0);

  const auto bounded_start = std::chrono::steady_clock::now();
  const auto bounded =
      exporter.probe(target, "slow", {{"X-Prometheus-Scrape-Timeout-Seconds", "1.5"}});
  const auto bounded_took = std::chrono::steady_clock::now() - bounded_start;
  CHECK(sample(bounded.second, R"(getcert_probe_success\{reason="timeout"\})") == 0.0);
  CHECK(bounded_took < std::chrono::milliseconds(2000));
  (void)started;

  // SIGTERM while a probe runs: the probe still gets its answer, then the server exits 0.
  auto last = std::async(std::launch::async, [&] { return exporter.probe(target, "slow"); });
  busy = false;
  for (int i = 0; i < 100 && !busy; ++i) {
    auto c = exporter.client();
    const auto m = c.Get("/metrics");
    busy = m && sample(m->body, "getcert_exporter_probes_in_flight") == 1.0;
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(busy);
  REQUIRE(::kill(exporter.process().pid(), SIGTERM) == 0);
  CHECK(last.get().first == 200);
  CHECK(exporter.process().wait_for(std::chrono::seconds(10)) == kExitOk);
}

TEST_CASE("the allow list refuses other hosts, ports and files with 403", "[exporter]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir dir;
  auto valid = start_openssl_server(pki_chain("rsa"));
  const std::string path =
      write_config(dir, "modules:\n  tls:\n    ca_file: " + pki("ca-bundle.pem") +
                            "\nallow:\n  hosts: [localhost]\n  cidrs: [127.0.0.0/8]\n  ports: [\"" +
                            std::to_string(valid.port()) + "\"]\n  files: [\"" +
                            dir.path().string() + "/*.pem\"]\n");
  Exporter exporter(path);
  const std::string port = std::to_string(valid.port());
  CHECK(exporter.probe("localhost:" + port, "tls").first == 200);
  CHECK(exporter.probe("127.0.0.2:" + port, "tls").first == 200);
  CHECK(exporter.probe("localhost:1", "tls").first == 403);
  CHECK(exporter.probe("192.0.2.1:" + port, "tls").first == 403);
  CHECK(exporter.probe("example.invalid:" + port, "tls").first == 403);
  CHECK(exporter.probe("file:///etc/ssl/certs/*.pem", "tls").first == 403);
  write_file(dir / "x.pem", read_file(pki("rsa.pem")));
  CHECK(exporter.probe("file://" + dir.path().string() + "/x.pem", "tls").first == 200);
}

TEST_CASE(
    "file:// targets are off unless allow: files lists a folder, and a glob's walk is bounded",
    "[exporter]") {
  TempDir dir;
  TempDir certs;
  write_file(certs / "a.pem", read_file(pki("rsa-chain.pem")));
  const std::string target = "file://" + (certs / "a.pem");
  {
    // No allow list at all, and an allow list without files: anyone who reaches the port could
    // otherwise read every certificate and key store the service user can, or learn which
    // files exist.
    Exporter open(write_config(dir, "modules:\n  tls: {}\n"));
    auto [status, body] = open.probe(target, "tls");
    CHECK(status == 403);
    CHECK_THAT(body, Catch::Contains("allow: files:"));
    Exporter hosts_only(write_config(dir, "modules:\n  tls: {}\nallow:\n  hosts: [\"*\"]\n"));
    CHECK(hosts_only.probe(target, "tls").first == 403);
  }
  // 100 folders of 101 files: `*/z*` matches nothing, but finding that out reads every folder,
  // over 10,000 entries. The walk stops there and says so, rather than reading on.
  for (int i = 0; i < 100; ++i) {
    const std::string sub = certs / ("d" + std::to_string(i));
    std::filesystem::create_directory(sub);
    for (int j = 0; j <= 100; ++j) write_file(sub + "/f" + std::to_string(j), "");
  }
  Exporter exporter(write_config(dir, "modules:\n  tls: {}\nallow:\n  files: [\"" +
                                          certs.path().string() + "/*\", \"" +
                                          certs.path().string() + "/*/*\"]\n"));
  CHECK(sample(exporter.probe(target, "tls").second, R"(getcert_probe_success\{reason="ok"\})") ==
        1.0);
  CHECK(sample(exporter.probe("file://" + (certs / "d1/z*"), "tls").second,
               R"(getcert_probe_success\{reason="no_file"\})") == 0.0);
  CHECK(sample(exporter.probe("file://" + (certs / "*/z*"), "tls").second,
               R"(getcert_probe_success\{reason="too_many_files"\})") == 0.0);
}

TEST_CASE("AIA downloads keep to the allow list, and internal addresses need the module's leave",
          "[exporter]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir dir;
  // The test PKI's AIA URL: http://127.0.0.1:18080/intermediate.der (a fixed port: this case
  // holds the pki_fixed_ports lock, see tests/CMakeLists.txt).
  getcert::test::HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const auto server = start_openssl_server(getcert::test::pki_leaf_only("rsa"));
  const std::string port = std::to_string(server.port());
  const std::string target = "127.0.0.1:" + port;
  const std::string module =
      "modules:\n  tls:\n    ca_file: " + pki("ca-bundle.pem") + "\n    verify_name: false\n";
  const auto probe = [&](const std::string& config) {
    Exporter exporter(write_config(dir, config));
    const auto [status, body] = exporter.probe(target, "tls");
    CHECK(status == 200);
    return body;
  };
  // No allow list: the URL's address is loopback, which a certificate's owner may not make the
  // exporter request.
  CHECK(sample(probe(module), R"(getcert_probe_success\{reason="missing_intermediate"\})") == 0.0);
  CHECK(http.requests().empty());
  // The target's port allowed, the AIA port not: refused, even with internal addresses allowed.
  probe(module + "    fetch_private_addresses: true\nallow:\n  cidrs: [127.0.0.0/8]\n  ports: [\"" +
        port + "\"]\n");
  CHECK(http.requests().empty());
  // The port allowed, the host by name pattern only: loopback still needs the module's leave.
  probe(module + "allow:\n  hosts: [\"127.0.0.1\"]\n  ports: [\"" + port + "\", \"18080\"]\n");
  CHECK(http.requests().empty());
  // The allow list's ranges name the address: the intermediate is downloaded.
  probe(module + "allow:\n  cidrs: [127.0.0.0/8]\n  ports: [\"" + port + "\", \"18080\"]\n");
  CHECK(http.requests() == std::vector<std::string>{"GET /intermediate.der"});
  // No allow list, and the module allows internal addresses: downloaded too.
  probe(module + "    fetch_private_addresses: true\n");
  CHECK(http.requests().size() == 2);
}

// The allow list's file patterns are matched as text, and glob() then expands escapes: `\.\.`
// passes every text check for "..", matches `*`, and becomes `..`. What glob finds is checked
// too, so the file outside the allowed folders is never read.
TEST_CASE("a file:// target cannot leave the allowed folders through glob escapes", "[exporter]") {
  TempDir dir;
  std::filesystem::create_directories(dir / "certs/a");
  write_file(dir / "certs/a/ok.pem", read_file(pki("rsa.pem")));
  write_file(dir / "secret.pem", read_file(pki("ecdsa.pem")));
  const std::string path = write_config(
      dir, "modules:\n  tls: {}\nallow:\n  files: [\"" + (dir / "certs/*/*.pem") + "\"]\n");
  Exporter exporter(path);
  auto [status, body] = exporter.probe("file://" + (dir / "certs/a/ok.pem"), "tls");
  CHECK(status == 200);
  CHECK(sample(body, R"(getcert_probe_success\{reason="ok"\})") == 1.0);
  for (const std::string escaped : {R"(\.\.)", R"([.][.])", R"(.\.)"}) {
    const std::string target = "file://" + (dir / "certs/") + escaped + "/secret.pem";
    INFO(target);
    std::tie(status, body) = exporter.probe(target, "tls");
    INFO(body);
    // Refused upfront, not matched by glob at all (`[.]` never matches a leading dot), or found
    // and refused: never read.
    const bool not_read =
        status == 400 || status == 403 ||
        sample(body, R"(getcert_probe_success\{reason="file_not_allowed"\})") == 0.0 ||
        sample(body, R"(getcert_probe_success\{reason="no_file"\})") == 0.0;
    CHECK(not_read);
    CHECK_FALSE(sample(body, R"(getcert_probe_success\{reason="ok"\})").has_value());
  }
}

namespace {

// The test PKI's leaves that openssl s_server presents for the Prometheus tests: valid ones of
// each key type and IP SAN, and every kind of failure. Each is probed as localhost:PORT and as
// 127.0.0.1:PORT.
const char* const kServedLeaves[] = {"rsa",       "ecdsa",     "ed25519",    "ipsan",    "expired",
                                     "wronghost", "untrusted", "selfsigned", "expiring", "notyet"};

struct Fleet {
  std::vector<TlsServer> servers;
  std::map<std::string, std::uint16_t> port;  // leaf name -> port
};

Fleet start_fleet() {
  Fleet f;
  for (const char* leaf : kServedLeaves) {
    f.servers.push_back(start_openssl_server(pki_chain(leaf)));
    f.port[leaf] = f.servers.back().port();
  }
  return f;
}

// GET a URL from a server on loopback; the body, or "" on failure.
std::string http_get(std::uint16_t port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  const auto res = c.Get(path.c_str());
  return res && res->status == 200 ? res->body : std::string();
}

}  // namespace

TEST_CASE("a real Prometheus scrapes 27 targets through getcert serve", "[exporter][prometheus]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_tool("prometheus"), "prometheus");
  REQUIRE_TOOL(have_tool("python3"), "python3");
  REQUIRE_TOOL(have_danted(), "danted (dante-server)");
  TempDir dir;
  TempDir files;
  write_file(files / "tls.crt", read_file(pki("ecdsa-chain.pem")));
  write_file(files / "old.crt", read_file(pki("expired.pem")));
  Fleet fleet = start_fleet();
  // SMTP with STARTTLS: the test server's preamble, then TLS with the rsa chain.
  const auto smtp = start_local_server(
      [](std::uint16_t port) {
        return std::vector<std::string>{"python3",
                                        GETCERT_STARTTLS_SERVER,
                                        "smtp",
                                        std::to_string(port),
                                        pki("rsa-chain.pem"),
                                        pki("rsa.key")};
      },
      "the STARTTLS test server");
  // An HTTP CONNECT proxy that logs each request, and Dante's SOCKS5 server.
  const std::string proxy_log = dir / "proxy.log";
  const auto connect_proxy = start_local_server(
      [&](std::uint16_t port) {
        return std::vector<std::string>{"python3", GETCERT_CONNECT_PROXY, std::to_string(port),
                                        proxy_log};
      },
      "the CONNECT proxy");
  const auto dante = start_danted({});
  // A server that requires a client certificate from the test PKI's CA.
  OpenSslServerOptions mtls_options;
  mtls_options.served = pki_chain("rsa");
  mtls_options.extra_args = {"-Verify", "1", "-CAfile", pki("ca-bundle.pem")};
  const auto mtls = start_openssl_server(mtls_options);

  const std::string ca = "\n    ca_file: " + pki("ca-bundle.pem") + "\n    timeout: 5s\n";
  Exporter exporter(write_config(
      dir, "modules:\n  tls:" + ca + "  smtp:\n    protocol: smtp" + ca +
               "  http_proxy:\n    proxy: http://127.0.0.1:" + std::to_string(connect_proxy.port) +
               ca + "  socks5:\n    proxy: socks5://127.0.0.1:" + std::to_string(dante.port()) +
               ca + "  mtls:\n    client:\n      cert_file: " + pki("client-chain.pem") +
               "\n      key_file: " + pki("client.key") + ca +
               "allow:\n  hosts: [\"*\"]\n  files: [\"" + (files / "*.crt") + "\"]\n"));

  const auto at = [](std::uint16_t port) { return "localhost:" + std::to_string(port); };
  std::vector<std::string> tls_targets;
  for (const auto& [leaf, port] : fleet.port) {
    tls_targets.push_back(at(port));
    tls_targets.push_back("127.0.0.1:" + std::to_string(port));
  }
  tls_targets.push_back("file://" + (files / "tls.crt"));
  tls_targets.push_back("file://" + (files / "old.crt"));
  // One job per module, as blackbox_exporter's users write them: the target becomes
  // __param_target and the instance, and every scrape goes to the exporter.
  const auto job = [&](const std::string& name, const std::string& module,
                       const std::vector<std::string>& targets) {
    std::string text = "  - job_name: " + name + "\n    metrics_path: /probe\n" +
                       "    params:\n      module: [" + module + "]\n" +
                       "    static_configs:\n      - targets:\n";
    for (const auto& t : targets) text += "          - " + t + "\n";
    return text +
           "    relabel_configs:\n"
           "      - source_labels: [__address__]\n        target_label: __param_target\n"
           "      - source_labels: [__param_target]\n        target_label: instance\n"
           "      - target_label: __address__\n        replacement: 127.0.0.1:" +
           std::to_string(exporter.port()) + "\n";
  };
  const std::string prometheus_yml =
      "global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\nscrape_configs:\n" +
      job("getcert", "tls", tls_targets) + job("getcert-smtp", "smtp", {at(smtp.port)}) +
      job("getcert-http-proxy", "http_proxy", {at(fleet.port["rsa"]), at(fleet.port["expired"])}) +
      job("getcert-socks5", "socks5", {at(fleet.port["ecdsa"])}) +
      job("getcert-mtls", "mtls", {at(mtls.port())});
  write_file(dir / "prometheus.yml", prometheus_yml);

  const auto prometheus = start_local_server(
      [&](std::uint16_t port) -> std::vector<std::string> {
        return {"prometheus", "--config.file=" + (dir / "prometheus.yml"),
                "--storage.tsdb.path=" + (dir / "data"),
                "--web.listen-address=127.0.0.1:" + std::to_string(port)};
      },
      "prometheus", std::chrono::seconds(30));
  const std::uint16_t prom_port = prometheus.port;

  // Wait until every target was scraped at least once.
  const std::string expired_instance = "localhost:" + std::to_string(fleet.port["expired"]);
  nlohmann::json answer;
  auto query = [&](const std::string& promql) {
    const std::string body =
        http_get(prom_port, "/api/v1/query?query=" + httplib::detail::encode_query_param(promql));
    answer = body.empty() ? nlohmann::json() : nlohmann::json::parse(body);
    return answer.is_object() && answer["status"] == "success" ? answer["data"]["result"]
                                                               : nlohmann::json::array();
  };
  bool all = false;
  for (int i = 0; i < 150 && !all; ++i) {
    const auto r = query("count(getcert_probe_success)");
    all = r.size() == 1 && r[0]["value"][1] == "27";
    if (!all) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  INFO(prometheus.process.stderr_text().substr(0, 4000));
  REQUIRE(all);

  // The one getcert_probe_success series SELECTOR picks: its reason and its value.
  auto check_probe = [&](const std::string& selector, const std::string& reason,
                         const std::string& value) {
    INFO("getcert_probe_success{" << selector << "}");
    const auto series = query("getcert_probe_success{" + selector + "}");
    REQUIRE(series.size() == 1);
    CHECK(series[0]["metric"]["reason"] == reason);
    CHECK(series[0]["value"][1] == value);
  };

  // The expired certificate's notAfter is stored, in the past, with its labels.
  auto r = query("getcert_cert_not_after_seconds{job=\"getcert\",instance=\"" + expired_instance +
                 "\",chain=\"presented\",depth=\"0\"}");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["metric"]["subject_cn"] == "expired.test");
  CHECK(std::stod(r[0]["value"][1].get<std::string>()) < static_cast<double>(std::time(nullptr)));
  check_probe("job=\"getcert\",instance=\"" + expired_instance + "\"", "expired", "0");
  // Successes: the four valid leaves under two names, minus ipsan as "localhost" (its SAN is
  // the IP only), plus expiring (5 days left: valid), plus the valid file.
  r = query("count(getcert_probe_success{job=\"getcert\"} == 1)");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["value"][1] == "10");
  r = query("getcert_probe_success{job=\"getcert\",instance=\"" + at(fleet.port["ipsan"]) + "\"}");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["metric"]["reason"] == "hostname_mismatch");
  r = query("getcert_probe_success{job=\"getcert\",instance=\"" + at(fleet.port["notyet"]) + "\"}");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["metric"]["reason"] == "not_yet_valid");
  // The untrusted chains still have their presented certificates.
  r = query(
      "count(getcert_cert_not_after_seconds{job=\"getcert\",chain=\"presented\",subject_cn=~"
      "\"untrusted.test|"
      "selfsigned.test\"})");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["value"][1] == "4");
  r = query("getcert_probe_success{instance=\"file://" + (files / "old.crt") + "\"}");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["metric"]["reason"] == "expired");

  // STARTTLS: the SMTP server's certificate, as stored.
  check_probe("job=\"getcert-smtp\"", "ok", "1");
  r = query("getcert_cert_not_after_seconds{job=\"getcert-smtp\",chain=\"presented\",depth=\"0\"}");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["metric"]["subject_cn"] == "rsa.test");
  // Through the CONNECT proxy: a valid and an expired target, and the proxy saw both requests.
  check_probe("job=\"getcert-http-proxy\",instance=\"" + at(fleet.port["rsa"]) + "\"", "ok", "1");
  r = query("getcert_cert_not_after_seconds{job=\"getcert-http-proxy\",instance=\"" +
            at(fleet.port["expired"]) + "\",chain=\"presented\",depth=\"0\"}");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["metric"]["subject_cn"] == "expired.test");
  CHECK(std::stod(r[0]["value"][1].get<std::string>()) < static_cast<double>(std::time(nullptr)));
  const std::string requests = read_file(proxy_log);
  CHECK_THAT(requests, Catch::Contains("CONNECT " + at(fleet.port["rsa"]) + " HTTP/1.1") &&
                           Catch::Contains("CONNECT " + at(fleet.port["expired"]) + " HTTP/1.1"));
  // Through SOCKS5: Dante relayed the connection.
  check_probe("job=\"getcert-socks5\"", "ok", "1");
  r = query("getcert_cert_not_after_seconds{job=\"getcert-socks5\",chain=\"verified\"}");
  CHECK(r.size() == 3);
  INFO(dante.log());
  CHECK_THAT(dante.log(), Catch::Contains("." + std::to_string(fleet.port["ecdsa"])));
  // mTLS: the server required a client certificate and the module's PEM identity answered.
  check_probe("job=\"getcert-mtls\"", "ok", "1");
  r = query("getcert_client_certificate_requested{job=\"getcert-mtls\"}");
  REQUIRE(r.size() == 1);
  CHECK(r[0]["value"][1] == "1");
}

TEST_CASE("getcert serve and blackbox_exporter agree on the facts they share",
          "[exporter][blackbox]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_tool("prometheus-blackbox-exporter"), "prometheus-blackbox-exporter");
  TempDir dir;
  Fleet fleet = start_fleet();
  Exporter exporter(tls_config(dir));
  write_file(dir / "blackbox.yml",
             "modules:\n  tls:\n    prober: tcp\n    timeout: 5s\n    tcp:\n      tls: true\n"
             "      tls_config:\n        ca_file: " +
                 pki("ca-bundle.pem") +
                 "\n  tls_insecure:\n    prober: tcp\n    timeout: 5s\n    tcp:\n      tls: true\n"
                 "      tls_config:\n        insecure_skip_verify: true\n");
  const auto blackbox = start_local_server(
      [&](std::uint16_t port) -> std::vector<std::string> {
        return {"prometheus-blackbox-exporter", "--config.file=" + (dir / "blackbox.yml"),
                "--web.listen-address=127.0.0.1:" + std::to_string(port)};
      },
      "prometheus-blackbox-exporter", std::chrono::seconds(20));
  const std::uint16_t bb_port = blackbox.port;

  for (const auto& [leaf, port] : fleet.port) {
    const std::string target = "localhost:" + std::to_string(port);
    INFO(target << " (" << leaf << ")");
    const auto ours = exporter.probe(target, "tls").second;
    const std::string theirs = http_get(
        bb_port, "/probe?module=tls&target=" + httplib::detail::encode_query_param(target));
    const std::string theirs_insecure =
        http_get(bb_port, "/probe?module=tls_insecure&target=" +
                              httplib::detail::encode_query_param(target));
    REQUIRE_FALSE(theirs.empty());
    REQUIRE_FALSE(theirs_insecure.empty());
    const bool we_succeed = sample(ours, R"(getcert_probe_success\{reason="ok"\})") == 1.0;
    const bool they_succeed = sample(theirs, "probe_success") == 1.0;
    // Success agrees wherever both judge the same thing; blackbox does not check validity
    // dates beyond Go's own verification, which both do, so every served leaf must agree.
    CHECK(we_succeed == they_succeed);
    // Earliest expiry of the presented chain: blackbox reports it only when it skips
    // verification (otherwise a failed chain has no certificate metrics at all).
    const auto their_earliest = sample(theirs_insecure, "probe_ssl_earliest_cert_expiry");
    REQUIRE(their_earliest);
    std::int64_t our_earliest = INT64_MAX;
    const std::regex presented(
        R"re(getcert_cert_not_after_seconds\{chain="presented"[^}]*\} (\d+))re");
    for (std::sregex_iterator it(ours.begin(), ours.end(), presented), end; it != end; ++it) {
      our_earliest = std::min<std::int64_t>(our_earliest, std::stoll((*it)[1].str()));
    }
    CHECK(static_cast<double>(our_earliest) == *their_earliest);
    // The TLS version: "TLSv1.3" here, "TLS 1.3" there.
    CHECK(sample(theirs_insecure, R"(probe_tls_version_info\{version="TLS 1\.3"\})") == 1.0);
    CHECK(sample(ours, R"(getcert_tls_version_info\{version="TLSv1\.3"\})") == 1.0);
  }
}

TEST_CASE("the status page shows modules and recent probes in a real browser",
          "[exporter][chromium]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_tool("chromium"), "chromium");
  TempDir dir;
  TempDir profile;
  auto valid = start_openssl_server(pki_chain("rsa"));
  auto expired = start_openssl_server(pki_chain("expired"));
  // File targets are allowed under /nonexistent (the markup's "</b>" is a folder), so that a
  // probe of one is made and shown.
  Exporter exporter(write_config(
      dir, read_file(tls_config(dir)) +
               "allow:\n  hosts: [\"*\"]\n  files: [\"/nonexistent/*\", \"/nonexistent/*/*\"]\n"));
  exporter.probe("localhost:" + std::to_string(valid.port()), "tls");
  exporter.probe("localhost:" + std::to_string(expired.port()), "short");
  // A target that is shown (it is a file glob that matches nothing) and carries markup.
  exporter.probe("file:///nonexistent/<b>bold</b>", "tls");
  const auto page =
      run({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--user-data-dir=" + profile.path().string(), "--dump-dom",
           "http://127.0.0.1:" + std::to_string(exporter.port()) + "/"},
          std::chrono::seconds(60));
  INFO(page.err.substr(0, 2000));
  REQUIRE(page.exit_code == 0);
  CHECK_THAT(page.out, Catch::Contains("<td class=\"module\">tls</td>"));
  CHECK_THAT(page.out, Catch::Contains("<td class=\"module\">short</td>"));
  CHECK_THAT(page.out,
             Catch::Contains("<td class=\"target\">localhost:" + std::to_string(valid.port()) +
                             "</td><td class=\"result\">Success</td>"));
  CHECK_THAT(page.out,
             Catch::Contains("<td class=\"target\">localhost:" + std::to_string(expired.port()) +
                             "</td><td class=\"result\">Failure</td><td "
                             "class=\"reason\">expired</td>"));
  CHECK_THAT(page.out, Catch::Contains("file:///nonexistent/&lt;b&gt;bold&lt;/b&gt;"));
  CHECK_THAT(page.out, !Catch::Contains("<b>bold</b>"));
}

TEST_CASE("listener TLS and bcrypt basic auth from a web config, JSON logs without secrets",
          "[exporter]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_tool("python3"), "python3");
  TempDir dir;
  // A bcrypt hash made by another implementation (Python's crypt, i.e. libxcrypt, cost 4).
  const auto hash = run({"python3", "-W", "ignore", "-c",
                         "import crypt; print(crypt.crypt('right-password', "
                         "crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))"});
  if (hash.exit_code != 0 || hash.out.rfind("$2", 0) != 0) {
    GETCERT_SKIP("python3 cannot make a bcrypt hash here");
  }
  const std::string bcrypt = hash.out.substr(0, hash.out.find('\n'));
  write_file(dir / "web.yml", "tls_server_config:\n  cert_file: " + pki("rsa-chain.pem") +
                                  "\n  key_file: " + pki("rsa.key") +
                                  "\nbasic_auth_users:\n  prometheus: " + bcrypt + "\n");
  const auto p12 =
      run({GETCERT_TEST_OPENSSL, "pkcs12", "-export", "-in", pki("client-chain.pem"), "-inkey",
           pki("client.key"), "-passout", "pass:secret-p12", "-out", dir / "client.p12"});
  REQUIRE(p12.exit_code == 0);
  const std::string config =
      write_config(dir, "modules:\n  mtls:\n    ca_file: " + pki("ca-bundle.pem") +
                            "\n    client:\n      keystore_file: " + (dir / "client.p12") +
                            "\n      password_env: P12_PASSWORD\n");
  Exporter exporter(config, {"--web-config-file", dir / "web.yml", "--log-format", "json"});

  httplib::SSLClient tls("127.0.0.1", exporter.port());
  tls.set_ca_cert_path(pki("ca-bundle.pem").c_str());
  tls.enable_server_certificate_verification(true);
  auto res = tls.Get("/metrics");
  REQUIRE(res);
  CHECK(res->status == 401);
  // Credentials that are not base64 (all padding, too much of it) are refused like wrong ones:
  // a 401, never a 500 with the text of an exception.
  for (const char* header :
       {"Basic ====", "Basic a===", "Basic ========", "Basic cHJvbWV0aGV1cw="}) {
    INFO(header);
    res = tls.Get("/metrics", {{"Authorization", header}});
    REQUIRE(res);
    CHECK(res->status == 401);
    for (const auto& [name, value] : res->headers) {
      CHECK_THAT(value, !Catch::Contains("basic_string") && !Catch::Contains("exception"));
    }
  }
  tls.set_basic_auth("prometheus", "wrong-password");
  res = tls.Get("/metrics");
  REQUIRE(res);
  CHECK(res->status == 401);
  tls.set_basic_auth("prometheus", "right-password");
  res = tls.Get("/metrics");
  REQUIRE(res);
  CHECK(res->status == 200);
  // mTLS: s_server asks for a client certificate and the module's PKCS#12 identity answers.
  OpenSslServerOptions mtls;
  mtls.served = pki_chain("rsa");
  mtls.extra_args = {"-verify", "1", "-CAfile", pki("ca-bundle.pem")};
  auto server = start_openssl_server(mtls);
  res = tls.Get(("/probe?module=mtls&target=localhost:" + std::to_string(server.port())).c_str());
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(sample(res->body, R"(getcert_probe_success\{reason="ok"\})") == 1.0);
  CHECK(sample(res->body, "getcert_client_certificate_requested") == 1.0);
  // Plain HTTP to the TLS listener gets no answer.
  httplib::Client plain("127.0.0.1", exporter.port());
  plain.set_read_timeout(5, 0);
  const auto refused = plain.Get("/metrics");
  CHECK((!refused || refused->status != 200));

  REQUIRE(::kill(exporter.process().pid(), SIGTERM) == 0);
  CHECK(exporter.process().wait_for(std::chrono::seconds(10)) == kExitOk);
  const std::string log = exporter.process().stderr_text();
  std::size_t lines = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line); ++lines) {
    INFO(line);
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    REQUIRE(j.is_object());
    CHECK(j.contains("time"));
    CHECK(j.contains("level"));
    CHECK(j.contains("msg"));
  }
  CHECK(lines >= 3);  // listening, the probe, stopped
  CHECK_THAT(log, !Catch::Contains("secret-p12") && !Catch::Contains("right-password") &&
                      !Catch::Contains(bcrypt));
}

// Under AddressSanitizer freed memory is held in a quarantine (256 MiB by default) before reuse,
// so resident memory rises by up to that much whatever the program does; LeakSanitizer checks
// the leaks there instead.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kAsanQuarantine = 256.0 * 1024 * 1024;
#else
constexpr double kAsanQuarantine = 0;
#endif

TEST_CASE("under load with stalled targets, descriptors and memory stay bounded",
          "[exporter][load]") {
  TempDir dir;
  TempDir certs;
  write_file(certs / "a.pem", read_file(pki("rsa-chain.pem")));
  HostilePeer stalled(HostilePeer::Behavior::silent);
  const std::string config =
      write_config(dir, "modules:\n  fast:\n    ca_file: " + pki("ca-bundle.pem") +
                            "\n  slow:\n    timeout: 1s\nallow:\n  hosts: [\"*\"]\n  files: [\"" +
                            (certs / "*.pem") + "\"]\n");
  Exporter exporter(config, {"--max-concurrent-probes", "64"});
  const std::string file_target =
      httplib::detail::encode_query_param("file://" + (certs / "a.pem"));
  const std::string stalled_target = "127.0.0.1:" + std::to_string(stalled.port());
  auto gauge = [&](const char* name) {
    auto c = exporter.client();
    const auto m = c.Get("/metrics");
    REQUIRE(m);
    const auto v = sample(m->body, name);
    REQUIRE(v);
    return *v;
  };
  // One round: 200 clients at once, 30 of them probing a target that never answers.
  auto round = [&](int clients) {
    std::atomic<int> ok{0};
    std::atomic<int> busy{0};
    std::atomic<int> other{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i) {
      threads.emplace_back([&, i] {
        auto c = exporter.client();
        const bool slow = i % 7 == 0 && i < 7 * 30;
        const auto res = c.Get(slow ? ("/probe?module=slow&target=" + stalled_target).c_str()
                                    : ("/probe?module=fast&target=" + file_target).c_str());
        if (res && res->status == 200) {
          ++ok;
        } else if (res && res->status == 503) {
          ++busy;
        } else {
          ++other;
        }
      });
    }
    for (auto& t : threads) t.join();
    // Catch's assertions are not thread-safe: the caller checks.
    return std::make_tuple(ok.load(), busy.load(), other.load());
  };
  const auto [ok, busy, other] = round(200);
  CHECK(other == 0);
  CHECK(ok + busy == 200);
  CHECK(ok >= 64);  // at least the bound's worth went through
  for (int i = 0; i < 2; ++i) CHECK(std::get<2>(round(200)) == 0);
  const double fds_after_warmup = gauge("process_open_fds");
  const double rss_after_warmup = gauge("process_resident_memory_bytes");
  for (int i = 0; i < 6; ++i) CHECK(std::get<2>(round(200)) == 0);  // 1,200 more probes
  CHECK(gauge("getcert_exporter_probes_in_flight") == 0.0);
  // No descriptor kept per probe; memory does not grow with the number of probes (a margin
  // for the allocator's arenas of up to 72 threads).
  CHECK(gauge("process_open_fds") <= fds_after_warmup + 4);
  CHECK(gauge("process_resident_memory_bytes") < rss_after_warmup * 1.5 + 8e6 + kAsanQuarantine);
  // SIGHUP under load: the reload succeeds while probes run.
  auto load = std::async(std::launch::async, [&] { return round(200); });
  REQUIRE(::kill(exporter.process().pid(), SIGHUP) == 0);
  CHECK(std::get<2>(load.get()) == 0);
  CHECK(gauge("getcert_exporter_config_last_reload_successful") == 1.0);
}

TEST_CASE("descriptors and memory do not grow over 10000 probes", "[exporter][load]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir dir;
  TempDir certs;
  write_file(certs / "a.pem", read_file(pki("rsa-chain.pem")));
  const auto tls = start_openssl_server(pki_chain("ecdsa"));
  Exporter exporter(
      write_config(dir, "modules:\n  fast:\n    ca_file: " + pki("ca-bundle.pem") +
                            "\n    timeout: 5s\nallow:\n  hosts: [\"*\"]\n  files: [\"" +
                            (certs / "*.pem") + "\"]\n"),
      {"--max-concurrent-probes", "32"});
  // Cheap loopback probes of three kinds in turn: a handshake and a verified chain, a
  // certificate file, and a refused connection (a socket opened and closed).
  const std::vector<std::string> paths{
      "/probe?module=fast&target=localhost:" + std::to_string(tls.port()),
      "/probe?module=fast&target=" +
          httplib::detail::encode_query_param("file://" + (certs / "a.pem")),
      "/probe?module=fast&target=127.0.0.1:" + std::to_string(closed_port())};
  constexpr int kClients = 32;  // as many as the probe bound: nobody is turned away
  // Probes number `from` to `to` - 1 from kClients threads, each on its own connection; the
  // answers that were not 200.
  auto run_probes = [&](int from, int to) {
    std::atomic<int> next{from};
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kClients; ++t) {
      threads.emplace_back([&] {
        auto c = exporter.client();
        c.set_keep_alive(true);
        for (int i = next.fetch_add(1); i < to; i = next.fetch_add(1)) {
          const auto res = c.Get(paths[static_cast<std::size_t>(i) % paths.size()].c_str());
          if (!res || res->status != 200) ++failed;
        }
      });
    }
    for (auto& t : threads) t.join();
    return failed.load();
  };
  auto metrics = [&] {
    auto c = exporter.client();
    const auto m = c.Get("/metrics");
    REQUIRE(m);
    return m->body;
  };
  auto gauge = [&](const std::string& pattern) {
    const auto v = sample(metrics(), pattern);
    REQUIRE(v);
    return *v;
  };
  // Warm-up: every pool thread has run probes of each kind, OpenSSL's tables are loaded, the
  // allocator's arenas have grown to what the load needs. Then 10,000 probes are measured.
  constexpr int kWarmUp = 2500;
  constexpr int kTotal = kWarmUp + 10000;
  CHECK(run_probes(0, kWarmUp) == 0);
  // The clients' connections are closed once the server has seen them go.
  const auto settled_fds = [&](double bound) {
    return eventually([&] { return gauge("process_open_fds") <= bound; }, std::chrono::seconds(5));
  };
  const double fds_after_warmup = gauge("process_open_fds");
  const double rss_after_warmup = gauge("process_resident_memory_bytes");
  double rss_peak = rss_after_warmup;
  std::ostringstream trace;  // resident MiB after each batch, for a failure's message
  for (int done = kWarmUp; done < kTotal; done += 1500) {
    CHECK(run_probes(done, std::min(done + 1500, kTotal)) == 0);
    CHECK(settled_fds(fds_after_warmup + 2));
    const double rss = gauge("process_resident_memory_bytes");
    trace << " " << rss / 1048576;
    rss_peak = std::max(rss_peak, rss);
  }
  const std::string end = metrics();
  const auto ok = sample(end, R"(getcert_exporter_probes_total\{module="fast",success="true"\})");
  const auto failed =
      sample(end, R"(getcert_exporter_probes_total\{module="fast",success="false"\})");
  REQUIRE(ok);
  REQUIRE(failed);
  CHECK(*ok + *failed == kTotal);
  CHECK(*failed == kTotal / 3);  // the refused connections: probes 2, 5, 8 ... 12497
  CHECK(sample(end, "getcert_exporter_probes_in_flight") == 0.0);
  // No descriptor is kept by a probe, and resident memory over 10,000 more probes stays within
  // 3 MiB (and 2%) of where the warm-up left it: the allocator's arenas settle a little (+2 MiB
  // measured), but nothing grows with the number of probes. With glibc's default of 8 arenas per
  // core (MALLOC_ARENA_MAX=16 here) it grew by 4.8 MiB and was still growing.
  INFO("RSS after warm-up " << rss_after_warmup / 1048576 << " MiB, then" << trace.str());
  CHECK(rss_peak < rss_after_warmup * 1.02 + 3.0 * 1048576 + kAsanQuarantine);
}

TEST_CASE("bad query strings, oversized requests and slow clients are turned away", "[exporter]") {
  TempDir dir;
  Exporter exporter(write_config(dir, "modules:\n  tls:\n    timeout: 2s\n"));
  // Targets that do not parse: 400 with the reason, nothing dialled.
  for (const char* target : {"host:99999", "[::1", "a b:443", "host:-1", "file://relative"}) {
    INFO(target);
    CHECK(exporter.probe(target, "tls").first == 400);
  }
  auto c = exporter.client();
  // A URI longer than cpp-httplib's 8 KiB limit: 414, and the server goes on.
  const auto huge = c.Get(("/probe?module=tls&target=" + std::string(9000, 'a')).c_str());
  REQUIRE(huge);
  CHECK(huge->status == 414);
  // A body past the 4 KiB payload limit: 413.
  const auto body = c.Post("/-/reload", std::string(8192, 'x'), "text/plain");
  REQUIRE(body);
  CHECK(body->status == 413);
  // A slow-loris client that sends half a request line and stops is dropped (read timeout),
  // and meanwhile everyone else is served.
  REQUIRE_TOOL(have_tool("bash"), "bash");
  const auto loris = run({"bash", "-c",
                          "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(exporter.port()) +
                              "; printf 'GET /metr' >&3; timeout 15 cat <&3; echo closed"},
                         std::chrono::seconds(20));
  CHECK_THAT(loris.out, Catch::Contains("closed"));
  CHECK(loris.elapsed < std::chrono::seconds(12));
  const auto metrics = c.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
}

namespace {

// A loopback TCP client socket connected to `port` (blocking), or -1.
int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_text(int fd, const std::string& text) {
  return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

// Reads one answer's head and its Content-Length body (the exporter always sends one).
bool read_one_answer(int fd) {
  std::string in;
  char buf[4096];
  for (;;) {
    const auto head_end = in.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const auto at = in.find("Content-Length: ");
      const std::size_t length =
          at == std::string::npos ? 0
                                  : std::stoul(in.substr(at + 16, in.find("\r\n", at) - at - 16));
      if (in.size() >= head_end + 4 + length) return in.rfind("HTTP/1.1 200", 0) == 0;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) <= 0) return false;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

TEST_CASE(
    "probes keep answering with 1,000 dripping clients and 10,000 idle keep-alive connections",
    "[exporter][load]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < 12000) GETCERT_SKIP("fewer than 12,000 descriptors may be opened here");
  TempDir dir;
  auto valid = start_openssl_server(pki_chain("rsa"));
  const std::string target = "localhost:" + std::to_string(valid.port());
  Exporter exporter(tls_config(dir));

  // 10,000 keep-alive connections, each answered once and then left idle.
  std::vector<int> fds;
  struct CloseAll {
    std::vector<int>& fds;
    ~CloseAll() {
      for (const int fd : fds) ::close(fd);
    }
  } close_all{fds};
  for (int i = 0; i < 10000; ++i) {
    const int fd = connect_loopback(exporter.port());
    REQUIRE(fd >= 0);
    fds.push_back(fd);
    REQUIRE(send_text(fd, "GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"));
    REQUIRE(read_one_answer(fd));
  }
  // 1,000 clients that send half a request, then one more byte now and then: a server with
  // a per-read() timeout (cpp-httplib's, before) keeps each on a worker thread for good.
  std::vector<int> slow;
  for (int i = 0; i < 1000; ++i) {
    const int fd = connect_loopback(exporter.port());
    REQUIRE(fd >= 0);
    fds.push_back(fd);
    slow.push_back(fd);
    (void)send_text(fd, "GET /probe?target=half HTTP/1.1\r\nHost: x\r\n");
  }
  for (int round = 0; round < 3; ++round) {
    for (const int fd : slow) (void)send_text(fd, "X");
    const auto [status, body] = exporter.probe(target, "tls");
    CHECK(status == 200);
    CHECK(sample(body, R"(getcert_probe_success\{reason="ok"\})") == 1.0);
  }
  // The idle connections are still served.
  for (std::size_t i = 0; i < 10000; i += 2500) {
    REQUIRE(send_text(fds[i], "GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"));
    CHECK(read_one_answer(fds[i]));
  }
}
