// getcert-bench-grpc-handshakes: gRPC handshakes per second with getcert as the verifier of the
// server (getcert::grpc_tls::reloading_channel_credentials) against gRPC's own verification
// (grpc::SslCredentials with the same root), on loopback, one new connection per call.
//
//   getcert-bench-grpc-handshakes [--seconds S] [--pki DIR]
//
// Prints both rates and their ratio (getcert / gRPC default; 1.0 = no cost), and checks that
// getcert ran exactly one verification per handshake. DIR is the generated test PKI
// (root.pem, ecdsa.key, ecdsa-chain.pem); the default is this build's.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"
#include "echo_service.hpp"
#include "getcert/grpc_reloading.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct Rate {
  long handshakes = 0;
  double seconds = 0;
  long failures = 0;
  double per_second() const { return seconds > 0 ? static_cast<double>(handshakes) / seconds : 0; }
};

// New channel (own subchannel pool: a new TCP connection and TLS handshake) + one call, for
// `seconds`.
Rate measure(const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& creds,
             double seconds) {
  Rate rate;
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);
    auto stub = getcert::examples::Echo::NewStub(grpc::CreateCustomChannel(target, creds, args));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    getcert::examples::EchoRequest request;
    request.set_message("bench");
    getcert::examples::EchoReply reply;
    if (stub->Echo(&context, request, &reply).ok()) {
      ++rate.handshakes;
    } else {
      ++rate.failures;
    }
  }
  rate.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  std::string pki = GETCERT_BENCH_PKI_DIR;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--seconds" && i + 1 < args.size()) {
      seconds = std::stod(std::string(args[++i]));
    } else if (args[i] == "--pki" && i + 1 < args.size()) {
      pki = std::string(args[++i]);
    } else {
      std::cerr << "usage: getcert-bench-grpc-handshakes [--seconds S] [--pki DIR]\n";
      return 2;
    }
  }
  try {
    grpc::SslServerCredentialsOptions tls(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    tls.pem_key_cert_pairs.push_back({slurp(pki + "/ecdsa.key"), slurp(pki + "/ecdsa-chain.pem")});
    getcert::examples::EchoService service;
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(tls), &port);
    builder.RegisterService(&service);
    const auto server = builder.BuildAndStart();
    if (!server || port == 0) throw std::runtime_error("the gRPC server did not start");
    const std::string target = "localhost:" + std::to_string(port);

    grpc::SslCredentialsOptions plain;
    plain.pem_root_certs = slurp(pki + "/root.pem");
    const auto grpc_default = grpc::SslCredentials(plain);

    getcert::grpc_tls::ReloadingChannelOptions options;
    options.peer.verify.trust.ca_file = pki + "/root.pem";
    auto getcert_creds = getcert::grpc_tls::reloading_channel_credentials(options);
    if (!getcert_creds) throw std::runtime_error(getcert_creds.error().message);

    measure(target, grpc_default, 0.3);  // warm-up of both paths (trust store cache, threads)
    measure(target, getcert_creds->credentials, 0.3);
    const auto verifications_before = getcert_creds->verdicts->count();
    const Rate base = measure(target, grpc_default, seconds);
    const Rate ours = measure(target, getcert_creds->credentials, seconds);
    const auto verifications = getcert_creds->verdicts->count() - verifications_before;
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));

    std::printf("%-34s %10s %8s %8s\n", "client", "handshakes", "seconds", "per s");
    std::printf("%-34s %10ld %8.2f %8.1f\n", "gRPC default verification", base.handshakes,
                base.seconds, base.per_second());
    std::printf("%-34s %10ld %8.2f %8.1f\n", "getcert verifier (ExternalVerifier)", ours.handshakes,
                ours.seconds, ours.per_second());
    std::printf("ratio getcert / gRPC default: %.2f\n",
                base.per_second() > 0 ? ours.per_second() / base.per_second() : 0.0);
    std::printf("getcert verifications: %llu for %ld handshakes\n",
                static_cast<unsigned long long>(verifications), ours.handshakes);
    if (base.failures + ours.failures > 0) {
      std::fprintf(stderr, "failed calls: %ld (gRPC default), %ld (getcert)\n", base.failures,
                   ours.failures);
      return 1;
    }
    // Exactly one verification per handshake: fewer means handshakes went unjudged, more means
    // the verifier costs more than it should.
    if (verifications != static_cast<unsigned long long>(ours.handshakes)) {
      std::fprintf(stderr, "expected one getcert verification per handshake\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "getcert-bench-grpc-handshakes: %s\n", e.what());
    return 1;
  }
}
