#pragma once

// The Echo service of examples/proto/echo.proto: replies with the request's message and the
// common name of the client certificate the TLS layer authenticated (empty without mTLS).
// Shared by echo-server and the in-process server of tests/grpc.

#include <string>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"

namespace getcert::examples {

class EchoService final : public Echo::Service {
 public:
  ::grpc::Status Echo(::grpc::ServerContext* context, const EchoRequest* request,
                      EchoReply* reply) override {
    reply->set_message(request->message());
    const auto auth = context->auth_context();
    if (auth) {
      const auto names = auth->FindPropertyValues("x509_common_name");
      if (!names.empty()) {
        reply->set_client_common_name(std::string(names.front().data(), names.front().size()));
      }
    }
    return ::grpc::Status::OK;
  }
};

}  // namespace getcert::examples
