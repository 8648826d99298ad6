#pragma once

// PFX integrity: the classic HMAC keyed with the PKCS#12 KDF (RFC 7292) and PBMAC1 (RFC 9579),
// which OpenSSL 3.0 cannot verify.

#include <cstdint>
#include <optional>
#include <vector>

#include "algorithms.hpp"
#include "ber.hpp"
#include "budget.hpp"
#include "password.hpp"

namespace getcert::pkcs12::detail {

struct MacData {
  MacInfo info;  // what Info reports
  std::vector<std::uint8_t> digest;
  std::vector<std::uint8_t> salt;       // classic: MacData.macSalt; PBMAC1: the PBKDF2 salt
  std::uint64_t iterations = 1;         // classic: MacData.iterations; PBMAC1: PBKDF2's
  const HashAlgorithm* hash = nullptr;  // classic: digest; PBMAC1: HMAC hash
  bool pbmac1 = false;
  const HashAlgorithm* prf = nullptr;  // PBMAC1: PBKDF2 PRF
  std::size_t key_length = 0;          // PBMAC1: PBKDF2 keyLength
};

// Parses MacData. Errors: malformed_input (including a PBMAC1 keyLength that is absent or not
// one a producer writes), unsupported (unknown digest; names the OID), limit_exceeded.
Result<MacData> parse_mac_data(const Element& mac_data, std::uint64_t max_iterations);

// The work budget cost of one MAC attempt (one password form).
std::uint64_t attempt_cost(const MacData& mac) noexcept;

// Checks the MAC over `auth_safe` with each form of each candidate password, paying each
// attempt from `budget` (the first one was reserved). Returns the index of the candidate that
// matched and sets `variant` to the variant index; nullopt if none did.
Result<std::optional<std::size_t>> verify_mac(const MacData& mac,
                                              const std::vector<PasswordForms>& candidates,
                                              Bytes auth_safe, WorkBudget& budget,
                                              std::size_t& variant);

}  // namespace getcert::pkcs12::detail
