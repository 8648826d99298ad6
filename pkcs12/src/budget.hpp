#pragma once

// The work budget of one decode(). Each key derivation costs its iteration count times the
// number of hash-output blocks it derives (PBKDF2 and the PKCS#12 KDF both run every iteration
// once per block), and a file pays for every derivation: each MAC attempt, each encrypted safe
// and shrouded key, once per password guess. A per-derivation cap alone let a small file
// multiply it (long PBMAC1 keys, many bags, several guesses) into minutes of CPU.

#include <cstddef>
#include <cstdint>
#include <string>

#include "getcert/error.hpp"

namespace getcert::pkcs12::detail {

// iterations × ceil(output_length / block_length), saturating instead of wrapping.
std::uint64_t derivation_cost(std::uint64_t iterations, std::size_t output_length,
                              std::size_t block_length) noexcept;

// a + b, saturating.
std::uint64_t add_cost(std::uint64_t a, std::uint64_t b) noexcept;

class WorkBudget {
 public:
  explicit WorkBudget(std::uint64_t limit) noexcept : limit_(limit) {}

  // Sets `cost` aside for work known to lie ahead (one password guess for each item the walk
  // has seen), so that a file which cannot fit is refused before the work starts and a wrong
  // guess cannot eat what the remaining items need. `what` says what the cost is for.
  Result<void> reserve(std::uint64_t cost, const std::string& what);

  // Accounts for one derivation about to run. `first_guess`: the item's first attempt, which
  // reserve() already set aside; other attempts must fit into what is left. Fails, spending
  // nothing, when they do not.
  Result<void> spend(std::uint64_t cost, bool first_guess, const std::string& what);

  std::uint64_t limit() const noexcept { return limit_; }
  std::uint64_t spent() const noexcept { return spent_; }

 private:
  std::uint64_t limit_;
  std::uint64_t spent_ = 0;
  std::uint64_t reserved_ = 0;  // invariant: spent_ + reserved_ <= limit_
};

// The signature checks of chain assembly. A file can hold thousands of certificates that all
// name the same issuer; each wrong candidate costs a signature check, so assembly pays for each
// from this budget and a hostile file fails fast instead of running for minutes.
class SignatureBudget {
 public:
  explicit SignatureBudget(std::uint64_t limit) noexcept : limit_(limit) {}

  // Accounts for one signature check about to run; limit_exceeded (spending nothing) when the
  // budget is used up.
  Result<void> spend();

  std::uint64_t limit() const noexcept { return limit_; }
  std::uint64_t spent() const noexcept { return spent_; }

 private:
  std::uint64_t limit_;
  std::uint64_t spent_ = 0;
};

}  // namespace getcert::pkcs12::detail
