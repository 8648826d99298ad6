#pragma once

#include <string>

namespace getcert::cli {

// Asks OpenSSL to decode and verify RSA and EC public keys with its built-in code instead of
// through the provider decoders, for the rest of this process. OpenSSL 3.0 builds a provider
// decoder context for every public key it decodes (every certificate a server sends, every
// certificate of a trust store), with no cache until 3.1: measured here, decoding and checking
// one RSA certificate costs 127 us through the providers and 33 us with the built-in code, an
// EC one 161 and 82 us. The results are the same code's (OpenSSL 1.1.1's, still in 3.0).
// It exists for OpenSSL 3.0 only: compiled when the headers are 3.0 with ENGINE support, and
// installed when the library loaded at run time is 3.0 too (3.1 caches its decoders).
//
// Only the commands that dial call it (a fetch, the exporter's probes), never the library: a
// program that embeds libgetcert keeps its own OpenSSL set-up. It does nothing when OpenSSL's
// configuration loads any provider other than default, base or legacy (a FIPS provider, a
// PKCS#11 or TPM provider): everything then stays with the providers, as configured.
// The first call decides, once per process; make it before starting threads. Every call returns
// what decodes keys now.
struct KeyMethods {
  bool builtin = false;
  // For -v: "OpenSSL's built-in RSA and EC code", or "OpenSSL's providers" and why.
  std::string description;
};
const KeyMethods& use_builtin_key_methods();

}  // namespace getcert::cli
