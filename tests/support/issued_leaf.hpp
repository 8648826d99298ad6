#pragma once

// Leaf certificates made at test time for names and properties the generated PKI lacks (IDN,
// odd SANs, weak keys and digests, TLS features, SCT lists), issued by the PKI's intermediate
// so they chain to its root like every other leaf.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/tls_servers.hpp"

namespace getcert::test {

struct LeafSpec {
  std::string cn;
  // subjectAltName in openssl syntax ("DNS:a.test, IP:127.0.0.1"); empty = no SAN extension.
  std::string san;
  // `openssl genpkey` arguments for the leaf's key.
  std::vector<std::string> key_args{"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"};
  std::string digest = "sha256";  // the intermediate signs with this
  std::string extra_extensions;   // more extension lines, e.g. "tlsfeature = status_request\n"
  int days = 30;                  // valid from now for this many days
};

// Writes STEM.key, STEM.pem and STEM-chain.pem (leaf + intermediate) into dir: a leaf with
// CN=spec.cn, EKU serverAuth and the extensions of `spec`.
ServedChain issue_leaf(const TempDir& dir, const std::string& stem, const LeafSpec& spec);

// A P-256 leaf with CN=cn and subjectAltName `san`, valid from now for 30 days.
ServedChain issue_leaf(const TempDir& dir, const std::string& stem, const std::string& cn,
                       const std::string& san);

// One v1 Signed Certificate Timestamp (RFC 6962 3.2) with an ECDSA/SHA-256 signature field
// that only has the right shape: parsers read it, nobody can verify it.
struct TestSct {
  std::array<std::uint8_t, 32> log_id{};
  std::uint64_t timestamp_ms = 0;
};

// The DER value of a precertificate SCT list extension (1.3.6.1.4.1.11129.2.4.2) embedding
// `scts`: an OCTET STRING holding their TLS encoding.
std::vector<std::uint8_t> sct_list_der(const std::vector<TestSct>& scts);

// The extension line for LeafSpec::extra_extensions that embeds `scts` as a precertificate
// SCT list: "1.3.6.1.4.1.11129.2.4.2 = DER:04:..".
std::string sct_list_extension(const std::vector<TestSct>& scts);

// A must-staple leaf (TLS Feature status_request) for `name`, its CN and only SAN (DNS), that
// embeds `scts`; written as issue_leaf() writes STEM.*.
ServedChain issue_must_staple_leaf(const TempDir& dir, const std::string& stem,
                                   const std::string& name, const std::vector<TestSct>& scts);

}  // namespace getcert::test
