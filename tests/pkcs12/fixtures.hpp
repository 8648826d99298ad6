#pragma once

// What only the PKCS#12 tests need, on top of the shared harness in tests/support (processes
// with deadlines, temporary directories, the generated test PKI, DER builders): the shared
// third-party vectors, `openssl pkcs12` as an oracle, and files made by `openssl pkcs12 -export`.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/asn1.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/test_pki.hpp"

namespace getcert::pkcs12::test {

namespace fs = std::filesystem;

using getcert::test::have_tool;
using getcert::test::read_bytes;
using getcert::test::read_file;
using getcert::test::run;
using getcert::test::run_with_input;
using getcert::test::RunResult;
using getcert::test::SpawnOptions;
using getcert::test::TempDir;
using getcert::test::test_pki;
using getcert::test::TestLeaf;
using getcert::test::TestPki;
using getcert::test::write_file;
using getcert::test::asn1::to_hex;

// keytool starts a JVM per call: slow on a loaded machine, so its runs get a longer deadline.
inline constexpr std::chrono::seconds kJavaLimit{120};

// The shared vector directory (GETCERT_VECTORS_DIR), or nullopt if it is not there.
fs::path vectors_dir();

struct VectorRow {
  std::string file;
  std::optional<std::string> password;  // nullopt for <none>/<empty>
  std::string password_spec;            // as written in the manifest
  std::string contents;
  std::string notes;
  bool negative = false;
};
std::vector<VectorRow> load_manifest(const fs::path& dir);

// What `openssl pkcs12 -nodes` extracts, normalised: keys as `openssl pkey -outform DER` (one
// canonical encoding per key, whatever PEM form it came in), certs as DER in output order.
// `password_bytes` is written to a file for -passin (exact bytes).
struct OpensslContents {
  bool ok = false;
  std::string error;
  std::vector<std::vector<std::uint8_t>> keys;
  std::vector<std::vector<std::uint8_t>> certs;
};
OpensslContents openssl_extract(const fs::path& p12, const std::string& password_bytes,
                                const std::vector<std::string>& extra_flags);

// `openssl pkey -outform DER` of a PEM private key (OpenSSL's canonical DER for the key, so two
// encodings of the same key compare equal); empty on failure.
std::vector<std::uint8_t> normalized_key_der(const std::string& pem,
                                             const std::string& passphrase = "");

// The PEM files' contents, one after the other.
std::string concat(const std::vector<fs::path>& files);

// The argv of `openssl pkcs12 -export` for `leaf` with the certificates of `certfile` added,
// friendlyName `name`, written to `out` with -passout `pass_arg`; append flags as needed.
std::vector<std::string> openssl_export_argv(const TestLeaf& leaf, const fs::path& certfile,
                                             const std::string& name, const fs::path& out,
                                             const std::string& pass_arg);

}  // namespace getcert::pkcs12::test
