#include "budget.hpp"

#include <limits>

namespace getcert::pkcs12::detail {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// The library names its own knob; the CLI rewrites this phrase into its flag.
constexpr const char* kRaise = "raise DecodeOptions::max_iterations to accept it";

}  // namespace

std::uint64_t derivation_cost(std::uint64_t iterations, std::size_t output_length,
                              std::size_t block_length) noexcept {
  if (block_length == 0) return kMax;
  const std::uint64_t blocks =
      output_length == 0 ? 1 : (output_length + block_length - 1) / block_length;
  if (iterations > kMax / blocks) return kMax;
  return iterations * blocks;
}

std::uint64_t add_cost(std::uint64_t a, std::uint64_t b) noexcept {
  return a > kMax - b ? kMax : a + b;
}

Result<void> WorkBudget::reserve(std::uint64_t cost, const std::string& what) {
  const std::uint64_t total = add_cost(add_cost(spent_, reserved_), cost);
  if (total > limit_) {
    const std::string so_far =
        spent_ + reserved_ > 0
            ? ", on top of " + std::to_string(spent_ + reserved_) + " spent or needed elsewhere"
            : "";
    return fail(Errc::limit_exceeded,
                "this file needs at least " + std::to_string(cost) +
                    " iterations of key derivation for " + what +
                    " (iterations x hash blocks, one password guess each" + so_far +
                    "), more than the limit of " + std::to_string(limit_) +
                    " for the whole file; nothing was derived (" + kRaise + ")");
  }
  reserved_ += cost;
  return {};
}

Result<void> WorkBudget::spend(std::uint64_t cost, bool first_guess, const std::string& what) {
  if (first_guess && reserved_ >= cost) {
    reserved_ -= cost;
    spent_ += cost;
    return {};
  }
  const std::uint64_t total = add_cost(add_cost(spent_, reserved_), cost);
  if (total > limit_) {
    return fail(Errc::limit_exceeded,
                (first_guess ? "deriving the key for " : "trying another password form on ") +
                    what + " would bring the key derivation work for this file to " +
                    std::to_string(total) + " iterations, more than the limit of " +
                    std::to_string(limit_) + " (" + kRaise + ")");
  }
  spent_ += cost;
  return {};
}

Result<void> SignatureBudget::spend() {
  if (spent_ >= limit_) {
    return fail(Errc::limit_exceeded,
                "pairing keys with their certificates needs more than " + std::to_string(limit_) +
                    " signature checks: the file holds too many certificates that name the same "
                    "issuer (raise DecodeOptions::max_signature_checks to accept it)");
  }
  ++spent_;
  return {};
}

}  // namespace getcert::pkcs12::detail
