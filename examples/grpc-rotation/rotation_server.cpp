// rotation-server: an Echo server whose certificate follows a key store that gets rotated
// (a .p12 re-issued by a CA, a Kubernetes Secret), with getcert judging client certificates.
//
//   rotation-server --listen 127.0.0.1:50051 --keystore server.p12 [--password-file FILE]
//                   [--client-ca ROOTS.pem [--client-pin sha256/...]]
//
// Every reload (or rejected new version) of the key store and every client certificate getcert
// judged is logged with spdlog. Runs until SIGTERM or SIGINT.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "echo_service.hpp"
#include "getcert/grpc_reloading.hpp"

namespace {

volatile std::sig_atomic_t stop_requested = 0;
extern "C" void request_stop(int /*signal*/) { stop_requested = 1; }

constexpr std::string_view kUsage =
    "usage: rotation-server --listen HOST:PORT --keystore FILE [--password-file FILE]\n"
    "                       [--client-ca ROOTS.pem [--client-pin sha256/BASE64]]\n";

void log_reload(const getcert::grpc_tls::ReloadEvent& event) {
  if (event.outcome == getcert::grpc_tls::ReloadOutcome::loaded) {
    spdlog::info("key store {} reloaded (identity #{}): now serving '{}' (sha256 {})", event.path,
                 event.generation, event.leaf->display_name(), event.leaf->sha256.substr(0, 16));
  } else {
    spdlog::warn("key store {}: new version rejected, still serving identity #{}: {}", event.path,
                 event.generation, event.error.message);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen;
  getcert::grpc_tls::ReloadingServerOptions options;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    const std::string value = has_value ? std::string(args[i + 1]) : std::string();
    if (args[i] == "--listen" && has_value) {
      listen = value;
    } else if (args[i] == "--keystore" && has_value) {
      options.identity.path = value;
    } else if (args[i] == "--password-file" && has_value) {
      options.identity.password.file = value;
    } else if (args[i] == "--client-ca" && has_value) {
      options.peer.verify.trust.ca_file = value;
      options.client_certificates = getcert::grpc_tls::ClientCertificates::require;
    } else if (args[i] == "--client-pin" && has_value) {
      options.peer.verify.pins.push_back(value);
    } else {
      std::cerr << kUsage;
      return 2;
    }
    ++i;
  }
  if (listen.empty() || options.identity.path.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  options.watch.on_reload = log_reload;

  auto creds = getcert::grpc_tls::reloading_server_credentials(options);
  if (!creds) {
    spdlog::error("cannot use the key store: {}", creds.error().message);
    return 3;
  }
  if (creds->verdicts) {
    creds->verdicts->set_callback([](const getcert::grpc_tls::PeerVerdict& verdict) {
      if (verdict.accepted) {
        spdlog::info("client certificate '{}' accepted by getcert",
                     verdict.presented.empty() ? "" : verdict.presented.front().display_name());
      } else {
        spdlog::warn("client rejected: {}", verdict.reason);
      }
    });
  }
  const auto leaf = creds->identity->current_leaf();
  spdlog::info("serving '{}' (sha256 {}) from {}", leaf.display_name(), leaf.sha256.substr(0, 16),
               options.identity.path);

  getcert::examples::EchoService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, creds->credentials, &port);
  builder.RegisterService(&service);
  const auto server = builder.BuildAndStart();
  if (!server || port == 0) {
    spdlog::error("cannot listen on {}", listen);
    return 3;
  }
  spdlog::info("listening on {} (port {})", listen, port);
  std::signal(SIGTERM, request_stop);
  std::signal(SIGINT, request_stop);
  while (stop_requested == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("stopping");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
