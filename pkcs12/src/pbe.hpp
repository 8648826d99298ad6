#pragma once

// Password-based encryption of safes and shrouded keys: PKCS#12 PBES1 (RC2/RC4/3DES keyed with
// the PKCS#12 KDF) and PBES2 (PBKDF2 + AES/3DES). Parsing is separate from decrypting so that
// iteration limits and unsupported algorithms are reported before any work is done.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms.hpp"
#include "ber.hpp"
#include "password.hpp"

namespace getcert::pkcs12::detail {

struct PbeAlgorithm {
  std::string description;  // for Info: "pbeWithSHA1And3-KeyTripleDES-CBC", "PBES2/PBKDF2-..."
  std::uint64_t iterations = 0;
  std::vector<std::uint8_t> salt;
  const Pbes1Scheme* pbes1 = nullptr;  // set for PBES1
  const Pbes2Cipher* pbes2 = nullptr;  // set for PBES2
  const HashAlgorithm* prf = nullptr;  // PBES2 PBKDF2 PRF
  std::vector<std::uint8_t> iv;        // PBES2

  // PBES1 derives keys from the BMPString password, PBES2 from raw bytes.
  bool uses_bmp_password() const noexcept { return pbes1 != nullptr; }
};

// Parses an encryption AlgorithmIdentifier. Errors: malformed_input, unsupported (names the
// OID), limit_exceeded (iterations above `max_iterations`).
Result<PbeAlgorithm> parse_pbe(const Element& algorithm_identifier, std::uint64_t max_iterations,
                               const char* where);

// The work budget cost of one decryption attempt (one password form): PBES1 derives key and
// IV with the PKCS#12 KDF over SHA-1, PBES2 the key with PBKDF2 over its PRF.
std::uint64_t attempt_cost(const PbeAlgorithm& alg) noexcept;

// Decrypts with one password variant; nullopt when the padding check fails (wrong password).
Result<std::optional<SecureBytes>> pbe_decrypt(const PbeAlgorithm& alg,
                                               const PasswordVariant& password, Bytes ciphertext,
                                               bool& legacy_used);

// PBKDF2-params (RFC 8018 A.2), as PBES2 and PBMAC1 (RFC 9579) both carry them.
struct Pbkdf2Params {
  std::vector<std::uint8_t> salt;
  std::uint64_t iterations = 0;             // not yet checked against a limit
  std::optional<std::uint64_t> key_length;  // absent: the caller's scheme decides
  const HashAlgorithm* prf = nullptr;       // hmacWithSHA1 when the PRF is absent
};

// Reads a keyDerivationFunc AlgorithmIdentifier, which must name PBKDF2. `scheme` ("PBES2",
// "PBMAC1") names the structure holding it, `label` ("PBKDF2", "PBMAC1 PBKDF2") its fields in
// error messages. Errors: malformed_input; unsupported for another KDF, a salt that is not
// "specified", or an unknown PRF.
Result<Pbkdf2Params> parse_pbkdf2(const Element& kdf, std::string_view scheme,
                                  std::string_view label);

// Rejects an iteration count of zero or above the limit; `where` says which structure.
Result<void> check_iterations(std::uint64_t iterations, std::uint64_t max_iterations,
                              const std::string& where);

}  // namespace getcert::pkcs12::detail
