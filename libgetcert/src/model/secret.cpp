#include "getcert/secret.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <functional>
#include <utility>

namespace getcert {
namespace {

// True when the characters live in an allocated block, not in the small-string buffer inside
// the string object.
bool on_heap(const SecureString& text) noexcept {
  // The bytes the string object itself occupies (its small-string buffer is among them).
  constexpr std::size_t kObjectBytes = sizeof(SecureString);
  const auto* object = reinterpret_cast<const char*>(&text);
  const std::less<> before;
  return before(text.data(), object) || !before(text.data(), object + kObjectBytes);
}

}  // namespace

void secure_wipe(void* p, std::size_t len) noexcept {
  if (p != nullptr && len > 0) OPENSSL_cleanse(p, len);
}

Secret::Secret(std::string_view text) { assign(text); }
Secret::Secret(const char* text) { assign(text == nullptr ? std::string_view() : text); }
Secret::Secret(const std::string& text) { assign(text); }
Secret::Secret(const SecureString& text) { assign({text.data(), text.size()}); }
Secret::Secret(SecureString&& text) {
  if (on_heap(text)) {
    text_.swap(text);  // already on the heap: the block changes hands, nothing is copied
    return;
  }
  assign({text.data(), text.size()});
  secure_wipe(text.data(), text.size());  // the source may have kept it inline
  text.clear();
}
Secret::Secret(const Secret& other) { assign(other.view()); }

// A heap block changes hands as a pointer; the source is left empty (and never held the text
// inline, see kMinCapacity).
Secret::Secret(Secret&& other) noexcept : text_(std::move(other.text_)) { other.clear(); }

Secret& Secret::operator=(const Secret& other) {
  if (this != &other) assign(other.view());
  return *this;
}

Secret& Secret::operator=(Secret&& other) noexcept {
  if (this != &other) {
    clear();
    text_.swap(other.text_);
  }
  return *this;
}

Secret::~Secret() { clear(); }

void Secret::clear() noexcept {
  secure_wipe(text_.data(), text_.size());
  text_.clear();
}

void Secret::assign(std::string_view text) {
  clear();
  // Reserving past the small-string buffer keeps the text on the heap, where the allocator
  // wipes it; an existing block large enough is reused (and was wiped by clear()).
  text_.reserve(std::max(text.size(), kMinCapacity));
  text_.assign(text.data(), text.size());
}

}  // namespace getcert
