#pragma once

// The generated test PKI (testcerts/make-test-pki.sh, GETCERT_TESTCERTS_DIR) as the parts tests
// pick from, and the options that make the library trust its root. File by file access is
// pki(NAME) in support/files.hpp.

#include <filesystem>
#include <string>
#include <vector>

#include "getcert/fetch.hpp"
#include "getcert/verify.hpp"

namespace getcert::test {

// A leaf of the PKI with its key, both PEM: issued by the intermediate, SAN localhost.
struct TestLeaf {
  std::string name;  // its key type and file stem: "rsa", "ecdsa", "ed25519"
  std::filesystem::path key;
  std::filesystem::path cert;  // the leaf alone
};

struct TestPki {
  std::filesystem::path root_cert, root_key;    // the only trust anchor (P-256)
  std::filesystem::path inter_cert, inter_key;  // issues every leaf below
  std::vector<TestLeaf> leaves;                 // RSA-2048, P-256, Ed25519, in this order
};

// Throws std::runtime_error when the PKI is missing or incomplete (see pki()).
const TestPki& test_pki();

// Verification that trusts only the PKI's root, as `--ca-file ca-bundle.pem` does, checking
// `name`. Offline: a case that wants a missing intermediate downloaded turns fetch_missing on,
// and such downloads give up after 5 s.
VerifyOptions verify_trusting_test_root(const std::string& name = "localhost");

// A fetch that trusts only `ca_file` (a PEM bundle), within a 10 s connect budget; by default
// the PKI's root. The name checked is the target's, as for `getcert HOST:PORT`.
FetchOptions fetch_trusting(const std::string& ca_file);
FetchOptions fetch_trusting_test_root();

}  // namespace getcert::test
