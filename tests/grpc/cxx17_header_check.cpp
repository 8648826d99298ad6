// Compiled as C++17 (see CMakeLists.txt): the public headers of getcert::grpc must stay
// C++17-clean for consumers that pin it, as gRPC projects often do.
#include "getcert/grpc.hpp"
#include "getcert/grpc_reloading.hpp"
#include "getcert/tls_material.hpp"

static_assert(__cplusplus == 201703L, "this translation unit must be compiled as C++17");
