// echo-client: calls Echo on a gRPC server, with channel credentials configured by getcert.
//
//   echo-client --target localhost:50051 [--ca-file root.pem]
//               [--p12 client.p12 [--p12-password-file FILE]] MESSAGE
//
// The server's trust anchor is what getcert's verification of --target establishes (against
// --ca-file, else the system trust store); nothing is trusted blindly. With --p12 the client
// presents the identity in the .p12 (mutual TLS).
//
// Exit codes: 0 reply printed on stdout; 2 usage; 3 getcert could not establish the
// credentials (network, verification, .p12); 4 the RPC failed (gRPC status on stderr).

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"
#include "getcert/fetch.hpp"
#include "getcert/grpc.hpp"
#include "getcert/pkcs12.hpp"
#include "getcert/tls_material.hpp"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitCredentials = 3;
constexpr int kExitRpc = 4;

constexpr std::string_view kUsage =
    "usage: echo-client --target HOST:PORT [--ca-file ROOTS.pem]\n"
    "                   [--p12 CLIENT.p12 [--p12-password-file FILE]] MESSAGE\n";

struct Args {
  std::string target;
  std::string ca_file;
  std::string p12;
  std::string p12_password_file;
  std::string message;
};

std::optional<Args> parse_args(int argc, char** argv) {
  Args args;
  bool have_message = false;
  const std::vector<std::string_view> argl(argv + 1, argv + argc);
  for (std::size_t i = 0; i < argl.size(); ++i) {
    const std::string_view arg = argl[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argl.size()) return false;
      out = std::string(argl[++i]);
      return true;
    };
    bool ok = true;
    if (arg == "--target") {
      ok = value(args.target);
    } else if (arg == "--ca-file") {
      ok = value(args.ca_file);
    } else if (arg == "--p12") {
      ok = value(args.p12);
    } else if (arg == "--p12-password-file") {
      ok = value(args.p12_password_file);
    } else if (!arg.empty() && arg[0] != '-' && !have_message) {
      args.message = std::string(arg);
      have_message = true;
    } else {
      ok = false;
    }
    if (!ok) return std::nullopt;
  }
  if (args.target.empty() || !have_message) return std::nullopt;
  if (!args.p12_password_file.empty() && args.p12.empty()) return std::nullopt;
  return args;
}

std::optional<std::vector<std::uint8_t>> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// The first line of a password file, without its line ending.
std::optional<std::string> read_password(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::string status_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    default:
      return "code " + std::to_string(static_cast<int>(code));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = parse_args(argc, argv);
  if (!args) {
    std::cerr << kUsage;
    return kExitUsage;
  }

  getcert::FetchOptions fetch_options;
  fetch_options.verify.trust.ca_file = args->ca_file;  // empty: the system trust store

  std::optional<getcert::pkcs12::Identity> identity;
  if (!args->p12.empty()) {
    const auto bytes = read_bytes(args->p12);
    if (!bytes) {
      std::cerr << "echo-client: cannot read " << args->p12 << "\n";
      return kExitCredentials;
    }
    getcert::pkcs12::DecodeOptions decode_options;
    if (!args->p12_password_file.empty()) {
      decode_options.password = read_password(args->p12_password_file);
      if (!decode_options.password) {
        std::cerr << "echo-client: cannot read " << args->p12_password_file << "\n";
        return kExitCredentials;
      }
    }
    auto loaded = getcert::single_identity(*bytes, decode_options);
    if (!loaded) {
      std::cerr << "echo-client: " << args->p12 << ": " << loaded.error().message << "\n";
      return kExitCredentials;
    }
    identity = std::move(*loaded);
  }

  // Fetch the target, verify it, and trust the anchor verification established.
  auto credentials =
      identity ? getcert::grpc_tls::channel_credentials_for(args->target, *identity, fetch_options)
               : getcert::grpc_tls::channel_credentials_for(args->target, fetch_options);
  if (!credentials) {
    const getcert::Error& error = credentials.error();
    std::cerr << "echo-client: " << error.message << "\n";
    // Several verification problems: the message names the first, detail lists them all.
    if (error.detail.find('\n') != std::string::npos) std::cerr << error.detail << "\n";
    return kExitCredentials;
  }

  auto channel = grpc::CreateChannel(args->target, *credentials);
  auto stub = getcert::examples::Echo::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  getcert::examples::EchoRequest request;
  request.set_message(args->message);
  getcert::examples::EchoReply reply;
  const grpc::Status status = stub->Echo(&context, request, &reply);
  if (!status.ok()) {
    std::cerr << "echo-client: RPC failed: " << status_name(status.error_code()) << ": "
              << status.error_message() << "\n";
    return kExitRpc;
  }
  std::cout << reply.message() << "\n";
  if (!reply.client_common_name().empty()) {
    std::cerr << "echo-client: server authenticated us as CN=" << reply.client_common_name()
              << "\n";
  }
  return 0;
}
