# Generates C++ for examples/proto/echo.proto with protoc + grpc_cpp_plugin and compiles it into
# the static library `getcert_example_echo_proto` (headers: "echo.pb.h", "echo.grpc.pb.h").
# Needs the targets protobuf::protoc, gRPC::grpc_cpp_plugin, protobuf::libprotobuf and
# gRPC::grpc++ in the including directory (getcert_find_grpc_dependencies() provides them).
# Defines the target once; including this file again (examples/ and tests/grpc/) reuses it.
if(NOT TARGET getcert_example_echo_proto)
  set(_echo_proto_dir "${CMAKE_CURRENT_LIST_DIR}/../proto")
  get_filename_component(_echo_proto_dir "${_echo_proto_dir}" ABSOLUTE)
  set(_echo_out "${CMAKE_CURRENT_BINARY_DIR}/echo_proto")
  file(MAKE_DIRECTORY "${_echo_out}")
  add_custom_command(
    OUTPUT "${_echo_out}/echo.pb.cc" "${_echo_out}/echo.pb.h"
           "${_echo_out}/echo.grpc.pb.cc" "${_echo_out}/echo.grpc.pb.h"
    COMMAND protobuf::protoc
            --proto_path=${_echo_proto_dir}
            --cpp_out=${_echo_out}
            --grpc_out=${_echo_out}
            --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>
            ${_echo_proto_dir}/echo.proto
    DEPENDS "${_echo_proto_dir}/echo.proto" protobuf::protoc gRPC::grpc_cpp_plugin
    COMMENT "protoc: echo.proto -> C++ (protobuf + gRPC)"
    VERBATIM)
  add_library(getcert_example_echo_proto STATIC
    "${_echo_out}/echo.pb.cc" "${_echo_out}/echo.grpc.pb.cc")
  # Generated code: the compiler's own defaults only, not the project's -Werror set.
  target_include_directories(getcert_example_echo_proto PUBLIC "${_echo_out}")
  target_link_libraries(getcert_example_echo_proto PUBLIC gRPC::grpc++ protobuf::libprotobuf)
  target_compile_features(getcert_example_echo_proto PUBLIC cxx_std_17)
  unset(_echo_proto_dir)
  unset(_echo_out)
endif()
