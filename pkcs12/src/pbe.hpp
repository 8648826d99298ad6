#pragma once

// Password-based encryption of safes and shrouded keys: PKCS#12 PBES1 (RC2/RC4/3DES keyed with
// the PKCS#12 KDF) and PBES2 (PBKDF2 + AES/3DES). Parsing is separate from decrypting so that
// iteration limits and unsupported algorithms are reported before any work is done.

#include <cstdint>
#include <optional>
#include <string>
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

// Rejects an iteration count of zero or above the limit; `where` says which structure.
Result<void> check_iterations(std::uint64_t iterations, std::uint64_t max_iterations,
                              const std::string& where);

}  // namespace getcert::pkcs12::detail
