#pragma once

// The PEM strings a TLS client library wants, taken from getcert results: the trust anchor a
// verified fetch established, and the key + certificate chain of a PKCS#12 identity.
// Public header: C++17, no OpenSSL and no gRPC types, so code that configures some other TLS
// client (libcurl, Boost.Beast, a config file) can use it too. In target getcert::pkcs12, which
// needs no gRPC; getcert/grpc.hpp (getcert::grpc) turns it into grpc::SslCredentialsOptions.
//
//   auto fetched = getcert::fetch("svc.internal:443");                 // network errors: !fetched
//   auto p12 = getcert::pkcs12::decode(bytes, {password});
//   auto material = getcert::tls_material(*fetched, p12->identities.front());
//   // material->root_pem, material->key_pem, material->cert_chain_pem
//
// Every call here is pure: no network, no files, no logging, no exceptions for expected
// failures. Results are owned by the caller (plain values, no references into the arguments).

#include <cstdint>
#include <string>
#include <vector>

#include "getcert/error.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert {

// Only named here: a key-store header does not pull in the TLS side. Code that has a FetchResult
// has already included getcert/fetch.hpp.
struct FetchResult;

// What a TLS client needs, as PEM text. Field names follow gRPC's SslCredentialsOptions
// (pem_root_certs, pem_private_key, pem_cert_chain).
struct TlsMaterial {
  // Trust anchors for verifying the server, "-----BEGIN CERTIFICATE-----" blocks. Empty means
  // "not chosen by getcert": gRPC then uses its default roots.
  std::string root_pem;
  // The client's private key as unencrypted PKCS#8 ("-----BEGIN PRIVATE KEY-----"); empty
  // without a client identity. Held in memory that is wiped when freed; copy it into a plain
  // std::string only where an API demands one.
  pkcs12::SecureString key_pem;
  // The client's certificate chain: leaf first, then its intermediates, never a self-signed
  // root (peers must not be sent their own anchor). Empty without a client identity.
  std::string cert_chain_pem;
};

// PEM of the trust anchor (last certificate of verification.verified_chain) of a fetch, the
// same certificate `getcert --select root` prints: what a client should trust to reach exactly
// this endpoint. Fails with Errc::verification_failed, a message that names the endpoint and
// why, and every verification problem (one per line, "depth N code: reason") in Error::detail,
// whenever verification.ok is false -- nothing was established, so nothing is guessed:
//   - the chain did not verify (untrusted, wrong name, expired, pin mismatch, revoked, ...);
//   - it was trusted only with help a TLS client library does not give: verdict
//     "valid_only_with_aia_fetch" (an intermediate downloaded via AIA) or "incomplete_chain"
//     (an intermediate found only in the local trust store). Trusting the anchor would still
//     fail the handshake, because the server does not send that intermediate; the message
//     says so, so the server's configuration gets fixed.
Result<std::string> trust_anchor_pem(const FetchResult& result);

// Key and certificate chain of a PKCS#12 identity (as pkcs12::decode assembled it), for
// mutual TLS. root_pem is left empty. Fails with Errc::invalid_argument when the identity
// has no private key or no certificate for its key (a key-only .p12).
Result<TlsMaterial> identity_material(const pkcs12::Identity& identity);

// Server TLS: root_pem = trust_anchor_pem(result); key and chain empty. Same errors.
Result<TlsMaterial> tls_material(const FetchResult& result);

// Mutual TLS: the anchor of `result` plus the identity's key and chain. Errors as in
// trust_anchor_pem and identity_material (the trust anchor is checked first).
Result<TlsMaterial> tls_material(const FetchResult& result, const pkcs12::Identity& identity);

// Decodes a .p12/.pfx and returns its one client identity: the only private key that has a
// matching certificate, with the chain the file carried. Errors: those of pkcs12::decode
// (wrong_password, malformed_input, unsupported, limit_exceeded), and invalid_argument when
// the file holds no key with a certificate, or several (then pick one yourself from
// pkcs12::decode(...)->identities). The password in `options` is only read.
Result<pkcs12::Identity> single_identity(const std::vector<std::uint8_t>& pfx,
                                         const pkcs12::DecodeOptions& options = {});

}  // namespace getcert
