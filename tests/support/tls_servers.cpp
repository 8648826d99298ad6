#include "support/tls_servers.hpp"

#include <unistd.h>
#include <chrono>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "support/net.hpp"

namespace getcert::test {
namespace {

using namespace std::chrono_literals;

constexpr int kStartAttempts = 5;
constexpr auto kReadyLimit = 15s;

bool executable(const char* path) { return path[0] != '\0' && ::access(path, X_OK) == 0; }

// Starts a server on fresh ports until one comes up, retrying when the port was taken.
// make_argv(ports, dir) returns the command line.
TlsServer start_with_retry(
    const std::string& name, std::size_t port_count, bool check_ipv6,
    const std::function<std::vector<std::string>(const std::vector<std::uint16_t>&, TempDir&)>&
        make_argv,
    bool own_process_group = false) {
  std::string last_log;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    auto dir = std::make_unique<TempDir>();
    std::vector<std::uint16_t> ports;
    while (ports.size() < port_count) {
      const auto p = free_port();
      bool dup = false;
      for (const auto q : ports) dup = dup || q == p;
      if (!dup) ports.push_back(p);
    }
    SpawnOptions spawn;
    spawn.die_with_parent = true;
    spawn.own_process_group = own_process_group;
    Process proc = Process::spawn(make_argv(ports, *dir), spawn);
    bool ready = true;
    for (const auto p : ports) {
      ready = ready && wait_for_port("127.0.0.1", p, kReadyLimit, &proc);
      if (check_ipv6) ready = ready && wait_for_port("::1", p, kReadyLimit, &proc);
    }
    if (ready) return TlsServer(name, std::move(proc), std::move(ports), std::move(dir));
    proc.kill();
    last_log = proc.stdout_text() + proc.stderr_text();
  }
  throw std::runtime_error(name + " did not start after " + std::to_string(kStartAttempts) +
                           " attempts; last output:\n" + last_log);
}

// Splits a PEM chain file into leaf.pem and rest.pem (rest may be empty) inside dir.
std::pair<std::string, std::string> split_chain(const ServedChain& served, TempDir& dir) {
  const auto blocks = certificate_block_list(read_file(served.chain_pem_file));
  if (blocks.empty()) throw std::runtime_error("no certificate in " + served.chain_pem_file);
  static int counter = 0;
  const std::string stem = "split" + std::to_string(++counter);
  const std::string leaf = dir / (stem + "-leaf.pem");
  write_file(leaf, blocks.front());
  std::string rest_text;
  for (std::size_t i = 1; i < blocks.size(); ++i) rest_text += blocks[i];
  std::string rest;
  if (!rest_text.empty()) {
    rest = dir / (stem + "-rest.pem");
    write_file(rest, rest_text);
  }
  return {leaf, rest};
}

}  // namespace

TlsServer::TlsServer(std::string name, Process process, std::vector<std::uint16_t> ports,
                     std::unique_ptr<TempDir> dir)
    : name_(std::move(name)),
      process_(std::move(process)),
      ports_(std::move(ports)),
      dir_(std::move(dir)) {}

std::string TlsServer::log() const {
  std::string out = process_.stdout_text() + process_.stderr_text();
  if (name_ == "nginx" && dir_) {
    try {
      out += read_file(dir_->path() / "error.log");
    } catch (const std::exception&) {
    }
  }
  return out;
}

ServedChain pki_chain(const std::string& leaf) {
  return {pki(leaf + "-chain.pem"), pki(leaf + ".key")};
}

ServedChain pki_leaf_only(const std::string& leaf) {
  return {pki(leaf + ".pem"), pki(leaf + ".key")};
}

bool have_openssl() { return executable(GETCERT_TEST_OPENSSL); }
bool have_nginx() { return executable(GETCERT_TEST_NGINX); }
bool have_gnutls_serv() { return executable(GETCERT_TEST_GNUTLS_SERV); }
bool have_danted() { return executable(GETCERT_TEST_DANTED); }

TlsServer start_danted(const DanteOptions& options) {
  return start_with_retry(
      "danted", 1, false,
      [&options](const std::vector<std::uint16_t>& ports, TempDir& dir) {
        const std::string method = options.username_auth ? "username" : "none";
        std::ostringstream conf;
        // The log goes to stderr, so TlsServer::log() shows each connection it relayed.
        conf << "logoutput: stderr\n"
             << "internal: 127.0.0.1 port = " << ports[0] << "\n"
             << "external: lo\n"
             << "clientmethod: none\nsocksmethod: " << method << "\n";
        // Switching users needs root; unprivileged, Dante runs everything as the caller.
        if (::geteuid() == 0) conf << "user.privileged: root\nuser.unprivileged: nobody\n";
        conf << "client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }\n";
        // Dante's socks rules are per address family: IPv6 targets (::1) need their own.
        if (options.blocked_port != 0) {
          for (const char* to : {"0.0.0.0/0", "::/0"}) {
            conf << "socks block { from: 0.0.0.0/0 to: " << to << " port = " << options.blocked_port
                 << " }\n";
          }
        }
        for (const char* to : {"0.0.0.0/0", "::/0"}) {
          conf << "socks pass { from: 127.0.0.0/8 to: " << to << " log: connect error }\n";
        }
        write_file(dir / "danted.conf", conf.str());
        return std::vector<std::string>{
            GETCERT_TEST_DANTED, "-f", dir / "danted.conf", "-p", dir / "danted.pid", "-N", "1"};
      },
      // danted forks its workers; killing only the first process would leave them behind.
      /*own_process_group=*/true);
}

TlsServer start_openssl_server(const ServedChain& served) {
  OpenSslServerOptions o;
  o.served = served;
  return start_openssl_server(o);
}

TlsServer start_openssl_server(const OpenSslServerOptions& options) {
  return start_with_retry(
      "openssl s_server", 1, false,
      [&options](const std::vector<std::uint16_t>& ports, TempDir& dir) {
        // With OpenSSL 3.0, -cert FILE sends only FILE's first certificate; the rest must
        // come from -cert_chain.
        const auto [leaf, rest] = split_chain(options.served, dir);
        std::vector<std::string> argv = {GETCERT_TEST_OPENSSL,
                                         "s_server",
                                         "-accept",
                                         "127.0.0.1:" + std::to_string(ports[0]),
                                         "-cert",
                                         leaf,
                                         "-key",
                                         options.served.key_file,
                                         "-www",
                                         "-no_dhe"};
        if (!rest.empty()) argv.insert(argv.end(), {"-cert_chain", rest});
        if (!options.sni_name.empty()) {
          const auto [leaf2, rest2] = split_chain(options.sni_served, dir);
          argv.insert(argv.end(), {"-servername", options.sni_name, "-cert2", leaf2, "-key2",
                                   options.sni_served.key_file});
        }
        argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
        return argv;
      });
}

TlsServer start_nginx(const NginxOptions& options) {
  std::size_t slots = 0;
  for (const auto& v : options.vhosts) slots = std::max(slots, v.slot + 1);
  return start_with_retry(
      "nginx", slots, options.ipv6,
      [&options](const std::vector<std::uint16_t>& ports, TempDir& dir) {
        const std::string d = dir.path().string();
        std::ostringstream conf;
        // Foreground, single process, everything inside the temp dir: runs as root in CI
        // without touching /var/log/nginx or /run.
        conf << "daemon off;\nmaster_process " << (options.reloadable ? "on" : "off")
             << ";\nworker_processes 1;\n"
             << "error_log " << d << "/error.log info;\npid " << d << "/nginx.pid;\n"
             << "events { worker_connections " << options.worker_connections
             << "; }\nhttp {\n  access_log off;\n"
             << "  client_body_temp_path " << d << "/body;\n  proxy_temp_path " << d
             << "/proxy;\n  fastcgi_temp_path " << d << "/fastcgi;\n  uwsgi_temp_path " << d
             << "/uwsgi;\n  scgi_temp_path " << d << "/scgi;\n";
        for (const auto& v : options.vhosts) {
          const std::string port = std::to_string(ports.at(v.slot));
          const std::string params = std::string(" ssl") + (options.http2 ? " http2" : "");
          conf << "  server {\n    listen 127.0.0.1:" << port << params << ";\n";
          if (options.ipv6) conf << "    listen [::1]:" << port << params << ";\n";
          conf << "    server_name " << (v.server_name.empty() ? "_" : v.server_name) << ";\n"
               << "    ssl_certificate " << v.served.chain_pem_file << ";\n"
               << "    ssl_certificate_key " << v.served.key_file << ";\n"
               << "    ssl_protocols TLSv1.2 TLSv1.3;\n"
               << "    location / { return 200 \"ok\\n\"; }\n  }\n";
        }
        conf << "}\n";
        const std::string conf_path = dir / "nginx.conf";
        write_file(conf_path, conf.str());
        return std::vector<std::string>{GETCERT_TEST_NGINX, "-p", d + "/",         "-c",
                                        conf_path,          "-e", d + "/error.log"};
      },
      options.reloadable);
}

TlsServer start_gnutls_server(const ServedChain& served) {
  return start_with_retry(
      "gnutls-serv", 1, false, [&served](const std::vector<std::uint16_t>& ports, TempDir&) {
        return std::vector<std::string>{GETCERT_TEST_GNUTLS_SERV, "--x509certfile",
                                        served.chain_pem_file,    "--x509keyfile",
                                        served.key_file,          "-p",
                                        std::to_string(ports[0])};
      });
}

}  // namespace getcert::test
