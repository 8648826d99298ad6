#pragma once

// Real TLS servers on loopback for integration tests: openssl s_server, nginx, gnutls-serv.
// Each runs on a fresh free port (retrying when another process grabs it first), is ready
// (accepting TCP) when start_* returns, and is killed when its TlsServer goes away.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/process.hpp"

namespace getcert::test {

class TlsServer {
 public:
  TlsServer(std::string name, Process process, std::vector<std::uint16_t> ports,
            std::unique_ptr<TempDir> dir);
  TlsServer(TlsServer&&) noexcept = default;
  TlsServer& operator=(TlsServer&&) noexcept = default;
  ~TlsServer() = default;

  const std::string& name() const noexcept { return name_; }
  // The server's process (nginx: its master), e.g. to signal it.
  pid_t pid() const noexcept { return process_.pid(); }
  // The port of listener `slot` (nginx may listen on several).
  std::uint16_t port(std::size_t slot = 0) const { return ports_.at(slot); }
  // What the server printed so far, for failure messages.
  std::string log() const;

 private:
  std::string name_;
  Process process_;
  std::vector<std::uint16_t> ports_;
  std::unique_ptr<TempDir> dir_;
};

// What a server presents: a PEM file with the leaf first, then the chain to send (possibly
// nothing), and the leaf's key.
struct ServedChain {
  std::string chain_pem_file;
  std::string key_file;
};

// The PKI's NAME-chain.pem + NAME.key (leaf + issuing CA, as a real server is configured).
ServedChain pki_chain(const std::string& leaf);
// Only NAME.pem + NAME.key: a server that forgot its intermediate.
ServedChain pki_leaf_only(const std::string& leaf);

bool have_openssl();
bool have_nginx();
bool have_gnutls_serv();

struct OpenSslServerOptions {
  ServedChain served;
  // SNI: when the client asks for sni_name, present sni_served instead (s_server -servername,
  // -cert2, -key2; s_server sends only that leaf, without chain).
  std::string sni_name;
  ServedChain sni_served;
  std::vector<std::string> extra_args;  // e.g. {"-alpn", "h2"}
};
// `openssl s_server -www` on 127.0.0.1.
TlsServer start_openssl_server(const OpenSslServerOptions& options);
TlsServer start_openssl_server(const ServedChain& served);

struct NginxVhost {
  std::string server_name;  // "" = "_" (catch-all)
  ServedChain served;
  std::size_t slot = 0;  // listener index; vhosts sharing a slot share its port (SNI)
};
struct NginxOptions {
  std::vector<NginxVhost> vhosts;  // the first vhost of each slot is its default server
  bool ipv6 = false;               // also listen on [::1] (same port)
  bool http2 = false;              // offer h2 via ALPN
  // With a master process, as nginx runs in production: SIGHUP to TlsServer's process (the
  // master) reloads the configuration and the certificate files, as `nginx -s reload` does.
  // The whole process group is killed at the end, workers included.
  bool reloadable = false;
  // nginx counts its listening sockets among these: many slots need more.
  std::size_t worker_connections = 128;
};
// nginx (foreground, no master process) with a generated config in a temp dir.
TlsServer start_nginx(const NginxOptions& options);

// gnutls-serv (listens on all addresses; tests connect to loopback).
TlsServer start_gnutls_server(const ServedChain& served);

// Dante's SOCKS5 server (danted), the proxy side of --proxy socks5://.
bool have_danted();
struct DanteOptions {
  // Require RFC 1929 username/password authentication; Dante checks them against the system's
  // accounts, so this needs root (and such an account).
  bool username_auth = false;
  // Connections to this port are refused by a rule ("not allowed by ruleset").
  std::uint16_t blocked_port = 0;
};
// danted in the foreground on 127.0.0.1 with its own config in a temp dir; log() shows each
// connection it relayed.
TlsServer start_danted(const DanteOptions& options);

}  // namespace getcert::test
