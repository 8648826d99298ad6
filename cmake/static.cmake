# GETCERT_STATIC (cmake --preset static): one getcert executable whose only dynamic dependencies
# are glibc's, for CI images and systems without our packages. OpenSSL comes from libssl.a and
# libcrypto.a (OPENSSL_USE_STATIC_LIBS, set before find_package), libidn2, libunistring and
# c-ares from their archives, libstdc++ and libgcc via the compiler's -static-* flags. glibc itself
# stays dynamic: the system's glibc is the one that matches its kernel and NSS set-up.

# libidn2's pkg-config target lists the shared library; the archive needs libunistring.a too
# (pkg-config's Libs.private). Same target name, so libgetcert links it unchanged.
find_path(GETCERT_IDN2_INCLUDE_DIR idn2.h REQUIRED)
find_library(GETCERT_IDN2_ARCHIVE NAMES libidn2.a REQUIRED)
find_library(GETCERT_UNISTRING_ARCHIVE NAMES libunistring.a REQUIRED
  DOC "libunistring.a (Debian: libunistring-dev)")
add_library(PkgConfig::IDN2 INTERFACE IMPORTED)
set_target_properties(PkgConfig::IDN2 PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${GETCERT_IDN2_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${GETCERT_IDN2_ARCHIVE};${GETCERT_UNISTRING_ARCHIVE}")

# c-ares (Debian ships libcares.a in libc-ares-dev); the archive needs nothing more than libc.
find_path(GETCERT_CARES_INCLUDE_DIR ares.h REQUIRED)
find_library(GETCERT_CARES_ARCHIVE NAMES libcares.a REQUIRED DOC "libcares.a (Debian: libc-ares-dev)")
add_library(PkgConfig::CARES INTERFACE IMPORTED)
set_target_properties(PkgConfig::CARES PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${GETCERT_CARES_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${GETCERT_CARES_ARCHIVE}")

# libpsl (wildcard SAN rules): the archive needs libidn2 and libunistring, linked above.
find_path(GETCERT_PSL_INCLUDE_DIR libpsl.h REQUIRED)
find_library(GETCERT_PSL_ARCHIVE NAMES libpsl.a REQUIRED DOC "libpsl.a (Debian: libpsl-dev)")
add_library(PkgConfig::PSL INTERFACE IMPORTED)
set_target_properties(PkgConfig::PSL PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${GETCERT_PSL_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${GETCERT_PSL_ARCHIVE};${GETCERT_IDN2_ARCHIVE};${GETCERT_UNISTRING_ARCHIVE}")

# --as-needed: libdl and libpthread are part of libc since glibc 2.34; their stubs (which static
# OpenSSL's link line still names) are then not recorded as dependencies.
add_link_options(-static-libstdc++ -static-libgcc LINKER:--as-needed)

# The static build is the CLI only: no getcert::grpc, no examples, no install tree or package.
# Normal variables, so the option() calls that follow keep them (policy CMP0077).
set(GETCERT_BUILD_GRPC OFF)
set(GETCERT_BUILD_EXAMPLES OFF)
set(GETCERT_INSTALL OFF)
