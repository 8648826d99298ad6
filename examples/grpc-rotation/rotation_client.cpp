// rotation-client: calls Echo again and again through one channel (or, with
// --fresh-connections, a new channel and connection per call) whose server certificate is
// judged by getcert (trust, name, pins, expiry window) and whose client identity, if any,
// follows a key store that gets rotated. The roots are a CA file (--ca-file), or the anchor a
// getcert fetch of the target establishes from ROOTS.pem (--anchor-from), established again
// when the server moves to another CA.
//
//   rotation-client --target localhost:50051 (--ca-file | --anchor-from) ROOTS.pem [--pin ...]
//                   [--expires-within-days N] [--keystore client.p12 [--password-file FILE]]
//                   [--every-ms 500] [--count N] [--fresh-connections]
//
// Logs every call, every handshake verdict and every key store reload with spdlog.
// Exit codes: 0 every call succeeded; 2 usage; 3 the key store or the anchor cannot be used;
// 4 a call failed.

#include <chrono>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "echo.grpc.pb.h"
#include "getcert/grpc_reloading.hpp"

namespace {

constexpr std::string_view kUsage =
    "usage: rotation-client --target HOST:PORT (--ca-file | --anchor-from) ROOTS.pem\n"
    "                       [--pin sha256/BASE64]\n"
    "                       [--expires-within-days N] [--keystore FILE [--password-file FILE]]\n"
    "                       [--every-ms MS] [--count N] [--fresh-connections]\n";

}  // namespace

int main(int argc, char** argv) {
  std::string target;
  int every_ms = 500;
  long count = -1;
  getcert::grpc_tls::ReloadingChannelOptions options;
  getcert::grpc_tls::KeystoreSource keystore;
  std::string anchor_from;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  bool fresh_connections = false;  // a channel (and a handshake) per call
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--fresh-connections") {
      fresh_connections = true;
      continue;
    }
    const bool has_value = i + 1 < args.size();
    const std::string value = has_value ? std::string(args[i + 1]) : std::string();
    try {
      if (args[i] == "--target" && has_value) {
        target = value;
      } else if (args[i] == "--ca-file" && has_value) {
        options.peer.verify.trust.ca_file = value;
      } else if (args[i] == "--anchor-from" && has_value) {
        anchor_from = value;
      } else if (args[i] == "--pin" && has_value) {
        options.peer.verify.pins.push_back(value);
      } else if (args[i] == "--expires-within-days" && has_value) {
        options.peer.expires_within = std::chrono::hours(24 * std::stol(value));
      } else if (args[i] == "--keystore" && has_value) {
        keystore.path = value;
      } else if (args[i] == "--password-file" && has_value) {
        keystore.password.file = value;
      } else if (args[i] == "--every-ms" && has_value) {
        every_ms = std::stoi(value);
      } else if (args[i] == "--count" && has_value) {
        count = std::stol(value);
      } else {
        std::cerr << kUsage;
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << kUsage;
      return 2;
    }
    ++i;
  }
  if (target.empty() || (!anchor_from.empty() && !options.peer.verify.trust.ca_file.empty())) {
    std::cerr << kUsage;
    return 2;
  }
  if (!anchor_from.empty()) {
    getcert::grpc_tls::AnchorSource anchor;
    anchor.endpoint = target;
    anchor.fetch.verify.trust.ca_file = anchor_from;
    anchor.on_change = [](const getcert::grpc_tls::ReloadEvent& event) {
      if (event.outcome == getcert::grpc_tls::ReloadOutcome::loaded) {
        spdlog::info("anchor of {} established again (anchor #{}): now trusting '{}'", event.path,
                     event.generation, event.leaf->display_name());
      } else {
        spdlog::warn("anchor of {}: fetch established nothing, keeping anchor #{}: {}", event.path,
                     event.generation, event.error.message);
      }
    };
    options.anchor = std::move(anchor);
  }
  if (!keystore.path.empty()) options.identity = keystore;
  options.watch.on_reload = [](const getcert::grpc_tls::ReloadEvent& event) {
    if (event.outcome == getcert::grpc_tls::ReloadOutcome::loaded) {
      spdlog::info("client key store reloaded (identity #{}): presenting '{}'", event.generation,
                   event.leaf->display_name());
    } else {
      spdlog::warn("client key store: new version rejected, keeping identity #{}: {}",
                   event.generation, event.error.message);
    }
  };

  auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
  if (!creds) {
    spdlog::error("{}", creds.error().message);
    return 3;
  }
  if (creds->anchor) {
    spdlog::info("trusting '{}', the anchor a getcert fetch of {} established",
                 creds->anchor->current().display_name(), target);
  }
  // One line per handshake: what the server presented and what getcert decided.
  creds->verdicts->set_callback([](const getcert::grpc_tls::PeerVerdict& verdict) {
    const std::string leaf =
        verdict.presented.empty() ? "" : verdict.presented.front().display_name();
    if (verdict.accepted) {
      spdlog::info("handshake: '{}' verified by getcert for {}", leaf, verdict.name);
    } else {
      spdlog::warn("handshake refused: {}", verdict.reason);
    }
  });

  const auto new_channel = [&] {
    // Its own subchannel pool: a new connection, never one shared with an earlier channel.
    grpc::ChannelArguments arguments;
    if (fresh_connections) arguments.SetInt("grpc.use_local_subchannel_pool", 1);
    return grpc::CreateCustomChannel(target, creds->credentials, arguments);
  };
  auto stub = getcert::examples::Echo::NewStub(new_channel());
  bool all_ok = true;
  for (long n = 1; count < 0 || n <= count; ++n) {
    if (fresh_connections && n > 1) stub = getcert::examples::Echo::NewStub(new_channel());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    getcert::examples::EchoRequest request;
    request.set_message("call " + std::to_string(n));
    getcert::examples::EchoReply reply;
    const auto status = stub->Echo(&context, request, &reply);
    if (status.ok()) {
      spdlog::info("call {}: ok{}", n,
                   reply.client_common_name().empty()
                       ? std::string()
                       : " (server saw client '" + reply.client_common_name() + "')");
    } else {
      all_ok = false;
      spdlog::error("call {}: {}", n, status.error_message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
  }
  return all_ok ? 0 : 4;
}
