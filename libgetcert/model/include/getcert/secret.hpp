#pragma once

// Memory for secrets (passwords, private keys) that is wiped before it is given back, and
// `Secret`, the type the public API takes passwords and key PEM in. Public header: C++17.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace getcert {

// Overwrites `len` bytes at `p` in a way the compiler cannot optimise away (OPENSSL_cleanse).
void secure_wipe(void* p, std::size_t len) noexcept;

// std::allocator that wipes every block it frees, so key material and passwords held in
// SecureBytes / SecureString do not linger in freed heap memory. (Short strings that fit the
// small-string buffer live inside the object; `Secret` never keeps its text there.)
template <class T>
struct CleansingAllocator {
  using value_type = T;
  CleansingAllocator() noexcept = default;
  template <class U>
  CleansingAllocator(const CleansingAllocator<U>& /*other*/) noexcept {}  // NOLINT
  T* allocate(std::size_t n) { return std::allocator<T>{}.allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept {
    secure_wipe(p, n * sizeof(T));
    std::allocator<T>{}.deallocate(p, n);
  }
  template <class U>
  bool operator==(const CleansingAllocator<U>& /*other*/) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const CleansingAllocator<U>& /*other*/) const noexcept {
    return false;
  }
};

using SecureBytes = std::vector<std::uint8_t, CleansingAllocator<std::uint8_t>>;
using SecureString = std::basic_string<char, std::char_traits<char>, CleansingAllocator<char>>;

// A secret text (a password, a private key in PEM) that is wiped from memory when it is
// cleared, overwritten or destroyed, including every copy and the source of a move. It is
// built implicitly from the usual string types, so `options.password = "pw"` or
// `decode(bytes, {password_string})` compiles, but it never turns back into a std::string by
// itself: read it through view() (or data()/size()) where it is used, without copying.
//
// The text always lives on the heap (a block of at least kMinCapacity bytes when the Secret
// allocates it), never in the small-string buffer inside the object: a moved or destroyed
// std::string leaves that buffer's bytes behind where no allocator can wipe them.
class Secret {
 public:
  static constexpr std::size_t kMinCapacity = 64;

  Secret() noexcept = default;
  Secret(std::string_view text);     // NOLINT(google-explicit-constructor): a password literal
  Secret(const char* text);          // NOLINT(google-explicit-constructor)
  Secret(const std::string& text);   // NOLINT(google-explicit-constructor)
  Secret(const SecureString& text);  // NOLINT(google-explicit-constructor)
  Secret(SecureString&& text);       // NOLINT(google-explicit-constructor): takes its block
  Secret(const Secret& other);
  Secret(Secret&& other) noexcept;
  Secret& operator=(const Secret& other);
  Secret& operator=(Secret&& other) noexcept;
  ~Secret();

  std::string_view view() const noexcept { return {text_.data(), text_.size()}; }
  const char* data() const noexcept { return text_.data(); }
  // NUL-terminated, for C APIs that take a password as `const char*`.
  const char* c_str() const noexcept { return text_.c_str(); }
  std::size_t size() const noexcept { return text_.size(); }
  bool empty() const noexcept { return text_.empty(); }

  // Wipes the text; the secret is then empty.
  void clear() noexcept;

 private:
  void assign(std::string_view text);

  SecureString text_;
};

// Compares contents (not in constant time: for tests and options, not for authentication).
inline bool operator==(const Secret& a, const Secret& b) noexcept { return a.view() == b.view(); }
inline bool operator!=(const Secret& a, const Secret& b) noexcept { return !(a == b); }

}  // namespace getcert
