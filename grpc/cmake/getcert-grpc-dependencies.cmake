# getcert_find_grpc_dependencies(): finds gRPC C++ and protobuf and makes sure these targets
# exist in the calling directory, whichever way they were found:
#
#   gRPC::grpc++            the gRPC C++ library (what getcert::grpc links PUBLIC)
#   gRPC::grpc_cpp_plugin   protoc plugin that generates *.grpc.pb.{h,cc}
#   protobuf::libprotobuf   the protobuf runtime
#   protobuf::protoc        the protobuf compiler
#
# and sets GETCERT_GRPC_DEPENDENCIES_FOUND (TRUE/FALSE) and GETCERT_GRPC_DEPENDENCIES_MISSING
# (what was not found) in the caller's scope.
#
# Order: gRPC's own CMake package (gRPCConfig.cmake: upstream installs, Debian 12's
# libgrpc++-dev) and CMake's FindProtobuf first; pkg-config (grpc++.pc, protobuf.pc) plus
# find_program for the two generators as the fallback for distributions that ship no CMake
# package. The fallback defines the same target names, so everything that links them (and
# getcert's exported getcert::grpc) reads the same whichever way they were found.
#
# Safe to call from several directories: imported targets are directory-scoped, so each
# directory that links them directly calls this once; an existing target is never redefined.
# Installed next to getcertConfig.cmake so find_package(getcert COMPONENTS grpc) can run it.
macro(getcert_find_grpc_dependencies)
  set(GETCERT_GRPC_DEPENDENCIES_MISSING "")

  if(NOT TARGET gRPC::grpc++)
    find_package(gRPC CONFIG QUIET)
  endif()
  if(NOT TARGET protobuf::libprotobuf OR NOT TARGET protobuf::protoc)
    find_package(Protobuf QUIET)
  endif()

  if(NOT TARGET gRPC::grpc++ OR NOT TARGET protobuf::libprotobuf)
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      if(NOT TARGET gRPC::grpc++)
        pkg_check_modules(GETCERT_PC_GRPCPP QUIET IMPORTED_TARGET grpc++)
        if(GETCERT_PC_GRPCPP_FOUND)
          add_library(gRPC::grpc++ INTERFACE IMPORTED)
          set_target_properties(gRPC::grpc++ PROPERTIES
            INTERFACE_LINK_LIBRARIES PkgConfig::GETCERT_PC_GRPCPP)
        endif()
      endif()
      if(NOT TARGET protobuf::libprotobuf)
        pkg_check_modules(GETCERT_PC_PROTOBUF QUIET IMPORTED_TARGET protobuf)
        if(GETCERT_PC_PROTOBUF_FOUND)
          add_library(protobuf::libprotobuf INTERFACE IMPORTED)
          set_target_properties(protobuf::libprotobuf PROPERTIES
            INTERFACE_LINK_LIBRARIES PkgConfig::GETCERT_PC_PROTOBUF)
        endif()
      endif()
    endif()
  endif()

  if(NOT TARGET protobuf::protoc)
    find_program(GETCERT_PROTOC_EXECUTABLE protoc)
    if(GETCERT_PROTOC_EXECUTABLE)
      add_executable(protobuf::protoc IMPORTED)
      set_target_properties(protobuf::protoc PROPERTIES
        IMPORTED_LOCATION "${GETCERT_PROTOC_EXECUTABLE}")
    endif()
  endif()
  if(NOT TARGET gRPC::grpc_cpp_plugin)
    find_program(GETCERT_GRPC_CPP_PLUGIN_EXECUTABLE grpc_cpp_plugin)
    if(GETCERT_GRPC_CPP_PLUGIN_EXECUTABLE)
      add_executable(gRPC::grpc_cpp_plugin IMPORTED)
      set_target_properties(gRPC::grpc_cpp_plugin PROPERTIES
        IMPORTED_LOCATION "${GETCERT_GRPC_CPP_PLUGIN_EXECUTABLE}")
    endif()
  endif()

  foreach(_getcert_dep gRPC::grpc++ gRPC::grpc_cpp_plugin protobuf::libprotobuf protobuf::protoc)
    if(NOT TARGET ${_getcert_dep})
      list(APPEND GETCERT_GRPC_DEPENDENCIES_MISSING ${_getcert_dep})
    endif()
  endforeach()
  unset(_getcert_dep)
  if(GETCERT_GRPC_DEPENDENCIES_MISSING)
    set(GETCERT_GRPC_DEPENDENCIES_FOUND FALSE)
  else()
    set(GETCERT_GRPC_DEPENDENCIES_FOUND TRUE)
  endif()
endmacro()
