// echo-server: a tiny TLS gRPC server for trying echo-client.
//
//   echo-server --port 50051 --cert server-chain.pem --key server.key [--client-ca root.pem]
//               [--host localhost]
//
// --cert is the chain the server presents (leaf first, then intermediates), --key its key.
// With --client-ca, clients must present a certificate that verifies against those roots
// (mutual TLS); the reply then names the client certificate's CN. --port 0 picks a free port.
// Prints "listening on HOST:PORT" on stdout once it accepts connections; stops on SIGINT or
// SIGTERM. Exit codes: 0 stopped by a signal; 2 usage; 1 cannot read files or listen.

#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "echo_service.hpp"

namespace {

constexpr std::string_view kUsage =
    "usage: echo-server --port PORT --cert CHAIN.pem --key KEY.pem [--client-ca ROOTS.pem]\n"
    "                   [--host HOST]\n";

struct Args {
  std::string host = "localhost";
  int port = -1;
  std::string cert;
  std::string key;
  std::string client_ca;
};

std::optional<Args> parse_args(int argc, char** argv) {
  Args args;
  const std::vector<std::string_view> argl(argv + 1, argv + argc);
  for (std::size_t i = 0; i < argl.size(); ++i) {
    const std::string_view arg = argl[i];
    if (i + 1 >= argl.size()) return std::nullopt;
    const std::string_view value = argl[++i];
    if (arg == "--port") {
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), args.port);
      if (ec != std::errc() || end != value.data() + value.size() || args.port < 0 ||
          args.port > 65535) {
        return std::nullopt;
      }
    } else if (arg == "--cert") {
      args.cert = std::string(value);
    } else if (arg == "--key") {
      args.key = std::string(value);
    } else if (arg == "--client-ca") {
      args.client_ca = std::string(value);
    } else if (arg == "--host") {
      args.host = std::string(value);
    } else {
      return std::nullopt;
    }
  }
  if (args.port < 0 || args.cert.empty() || args.key.empty()) return std::nullopt;
  return args;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = parse_args(argc, argv);
  if (!args) {
    std::cerr << kUsage;
    return 2;
  }
  const auto chain = read_text(args->cert);
  const auto key = read_text(args->key);
  const auto client_ca = args->client_ca.empty() ? std::optional<std::string>(std::string())
                                                 : read_text(args->client_ca);
  if (!chain || !key || !client_ca) {
    std::cerr << "echo-server: cannot read the certificate, key or client CA file\n";
    return 1;
  }

  grpc::SslServerCredentialsOptions tls(
      args->client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  tls.pem_root_certs = *client_ca;
  tls.pem_key_cert_pairs.push_back({*key, *chain});

  // Block the stop signals in every thread (gRPC's included); main waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  getcert::examples::EchoService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(args->host + ":" + std::to_string(args->port),
                           grpc::SslServerCredentials(tls), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::cerr << "echo-server: cannot listen on " << args->host << ":" << args->port << "\n";
    return 1;
  }
  std::cout << "listening on " << args->host << ":" << port
            << (args->client_ca.empty() ? " (TLS)" : " (mutual TLS)") << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  server->Shutdown();
  server->Wait();
  return 0;
}
