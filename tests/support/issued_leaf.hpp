#pragma once

// Leaf certificates made at test time for names the generated PKI lacks (IDN, odd SANs),
// issued by the PKI's intermediate so they chain to its root like every other leaf.

#include <string>

#include "support/files.hpp"
#include "support/tls_servers.hpp"

namespace getcert::test {

// Writes STEM.key, STEM.pem and STEM-chain.pem (leaf + intermediate) into dir: a P-256 leaf
// with CN=cn, EKU serverAuth and subjectAltName `san` (openssl syntax, e.g.
// "DNS:xn--bcher-kva.example, IP:127.0.0.1"), valid from now for 30 days.
ServedChain issue_leaf(const TempDir& dir, const std::string& stem, const std::string& cn,
                       const std::string& san);

}  // namespace getcert::test
