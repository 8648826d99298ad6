#pragma once

// The client side of the gRPC tests: one Echo call on a channel of its own, and a gRPC status
// as readable text for INFO().

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"

namespace getcert::test {

struct Call {
  grpc::Status status;
  getcert::examples::EchoReply reply;
};

// A channel with its own subchannel pool: a new TCP connection and handshake, never one shared
// with an earlier channel (whose handshake result would otherwise be reused).
inline std::shared_ptr<grpc::Channel> fresh_channel(
    const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& creds) {
  grpc::ChannelArguments args;
  args.SetInt("grpc.use_local_subchannel_pool", 1);
  return grpc::CreateCustomChannel(target, creds, args);
}

// One Echo call with a 10 s deadline.
inline Call echo(const std::shared_ptr<grpc::Channel>& channel, const std::string& message = "hi") {
  auto stub = getcert::examples::Echo::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  getcert::examples::EchoRequest request;
  request.set_message(message);
  Call call;
  call.status = stub->Echo(&context, request, &call.reply);
  return call;
}

// One Echo call on a fresh channel to `target`.
inline Call echo(const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& creds,
                 const std::string& message = "hi") {
  return echo(fresh_channel(target, creds), message);
}

inline std::string describe(const grpc::Status& status) {
  return "gRPC status " + std::to_string(static_cast<int>(status.error_code())) + ": " +
         status.error_message();
}

}  // namespace getcert::test
