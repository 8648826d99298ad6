# Installation: libraries, headers, a relocatable CMake package (find_package(getcert CONFIG))
# and a pkg-config file; the CLI installs itself from cli/.
include(CMakePackageConfigHelpers)

set(GETCERT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/getcert)

install(TARGETS getcert_getcert getcert_pkcs12
  EXPORT getcertTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libgetcert/model/include/
  ${PROJECT_SOURCE_DIR}/libgetcert/include/ ${PROJECT_SOURCE_DIR}/pkcs12/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT getcertTargets NAMESPACE getcert:: DESTINATION ${GETCERT_CMAKE_DIR})

if(TARGET getcert_grpc)
  install(TARGETS getcert_grpc
    EXPORT getcertGrpcTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/grpc/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT getcertGrpcTargets NAMESPACE getcert:: DESTINATION ${GETCERT_CMAKE_DIR})
  install(FILES ${PROJECT_SOURCE_DIR}/grpc/cmake/getcert-grpc-dependencies.cmake
    DESTINATION ${GETCERT_CMAKE_DIR})
endif()

configure_package_config_file(cmake/getcertConfig.cmake.in
  ${PROJECT_BINARY_DIR}/getcertConfig.cmake
  INSTALL_DESTINATION ${GETCERT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/getcertConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/getcertConfig.cmake ${PROJECT_BINARY_DIR}/getcertConfigVersion.cmake
  DESTINATION ${GETCERT_CMAKE_DIR})

# ${pcfiledir} relative to the prefix keeps the .pc file relocatable.
file(RELATIVE_PATH GETCERT_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(cmake/getcert.pc.in ${PROJECT_BINARY_DIR}/getcert.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/getcert.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# `cpack -G DEB` (or `cmake --build … --target package`) builds a Debian package of it all.
set(CPACK_PACKAGE_NAME getcert)
set(CPACK_PACKAGE_VENDOR "getcert")
set(CPACK_PACKAGE_CONTACT "getcert maintainers <getcert@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libssl-dev, libidn2-dev, libc-ares-dev, libpsl-dev, publicsuffix, libexpected-dev")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
