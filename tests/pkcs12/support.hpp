#pragma once

// Helpers shared by the PKCS#12 tests: files, temp dirs, subprocesses (openssl, certtool,
// keytool, python3, pk12util) and the shared vector manifest.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace getcert::pkcs12::test {

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_file(const fs::path& path);
void write_file(const fs::path& path, const std::string& data);
void write_file(const fs::path& path, const std::vector<std::uint8_t>& data);
std::string read_text(const fs::path& path);

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

struct RunResult {
  int status = -1;  // exit status, or -1 if it did not exit normally
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH) without a shell; stdin is /dev/null unless `input` is given.
// `env` entries are added to the environment.
RunResult run(const std::vector<std::string>& argv, const std::optional<std::string>& input = {},
              const std::map<std::string, std::string>& env = {});

// True if `tool` is found in PATH.
bool have_tool(const std::string& tool);

// The shared vector directory (GETCERT_VECTORS_DIR), or nullopt if it is not there.
std::optional<fs::path> vectors_dir();

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

// Hex of bytes for failure messages.
std::string to_hex(const std::vector<std::uint8_t>& data);

}  // namespace getcert::pkcs12::test

namespace getcert::pkcs12::test {

// A small PKI made with the openssl CLI once per test run: root -> intermediate -> leaves with
// RSA-2048, ECDSA P-256 and Ed25519 keys. Paths are PEM files.
struct TestLeaf {
  std::string name;  // "rsa", "ec", "ed25519"
  fs::path key;
  fs::path cert;
};
struct TestPki {
  fs::path root_cert, root_key, inter_cert, inter_key;
  std::vector<TestLeaf> leaves;
};
// Throws std::runtime_error if openssl fails.
const TestPki& test_pki();

}  // namespace getcert::pkcs12::test
