// Secret (pkcs12::Password) and the wiping allocator: a secret's bytes are zero by the time its
// memory goes back to the heap, whichever way the secret was copied, moved or replaced.
//
// What is observed: this executable replaces the global operator new/delete (a replacement
// the language allows) so that, while a test watches, every block handed back to the heap is
// searched for the secret's text before it is freed. A control case proves the search finds
// a secret freed from a plain std::string.

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "getcert/keystore.hpp"
#include "getcert/pkcs12.hpp"
#include "getcert/secret.hpp"

namespace {

std::atomic<bool> g_watching{false};
std::string_view g_needle;  // set only while not watching
std::atomic<int> g_freed_with_needle{0};
std::atomic<int> g_freed_blocks{0};

void inspect(void* p) noexcept {
  if (p == nullptr || !g_watching.load()) return;
  const auto* bytes = static_cast<const char*>(p);
  const std::size_t size = malloc_usable_size(p);
  g_freed_blocks.fetch_add(1);
  if (std::search(bytes, bytes + size, g_needle.begin(), g_needle.end()) != bytes + size) {
    g_freed_with_needle.fetch_add(1);
  }
}

// Counts, for the duration of `body`, the freed heap blocks that still hold `needle`.
struct FreedBlocks {
  int total = 0;
  int holding_needle = 0;
};
// Only the second half of `needle` is searched: a cleared std::string overwrites its first
// character with the terminator, which must not count as wiping.
FreedBlocks watch_frees(std::string_view needle, const std::function<void()>& body) {
  g_needle = needle.substr(needle.size() / 2);
  g_freed_with_needle = 0;
  g_freed_blocks = 0;
  g_watching = true;
  body();
  g_watching = false;
  return {g_freed_blocks.load(), g_freed_with_needle.load()};
}

// True when the secret's characters live outside the object itself, i.e. in a heap block that
// the wiping allocator owns, not in a small-string buffer that nothing wipes.
bool stored_outside(const getcert::Secret& s) {
  const auto* object = reinterpret_cast<const char*>(&s);
  std::less<const char*> before;
  return before(s.data(), object) || !before(s.data(), object + sizeof(s));
}

constexpr const char* kLong = "getcert-secret-test: correct horse battery staple 7f3a9c";
constexpr const char* kShort = "pw-Xq9";  // fits any small-string buffer

std::string* volatile g_sink = nullptr;

}  // namespace

// Under AddressSanitizer, blocks that its runtime allocated before or around this replacement
// reach the operator delete below, which frees them with free(): ASan would report that as an
// alloc-dealloc mismatch, though replacing the global allocator this way is well-defined. Only
// this executable turns that one check off (ASan reads this hook; other builds ignore it).
extern "C" __attribute__((used)) const char* __asan_default_options() {  // NOLINT
  return "alloc_dealloc_mismatch=0";
}

void* operator new(std::size_t size) {
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  inspect(p);
  std::free(p);
}
void operator delete(void* p, std::size_t /*size*/) noexcept {
  inspect(p);
  std::free(p);
}

using getcert::Secret;

TEST_CASE("control: a secret freed from a plain std::string is seen", "[pkcs12][secret]") {
  const auto freed = watch_frees(kLong, [] {
    g_sink = new std::string(kLong);
    delete g_sink;
  });
  CHECK(freed.total >= 1);
  CHECK(freed.holding_needle >= 1);
}

TEST_CASE("a Secret is wiped before its memory is freed", "[pkcs12][secret]") {
  bool held = false;
  const auto freed = watch_frees(kLong, [&] {
    Secret s(kLong);
    held = s.view() == kLong;
  });
  CHECK(held);
  CHECK(freed.total >= 1);
  CHECK(freed.holding_needle == 0);
}

TEST_CASE("a short password is kept on the heap, where it is wiped", "[pkcs12][secret]") {
  getcert::pkcs12::Password pw = kShort;
  CHECK(pw.view() == kShort);
  CHECK(stored_outside(pw));
  Secret copy = pw;
  CHECK(stored_outside(copy));
  Secret moved = std::move(copy);
  CHECK(stored_outside(moved));
  CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from Secret is empty
  Secret assigned;
  assigned = moved;
  CHECK(stored_outside(assigned));
  const auto freed = watch_frees(kShort, [&] {
    pw.clear();
    moved.clear();
    assigned.clear();
  });
  CHECK(freed.holding_needle == 0);
  CHECK(pw.empty());
}

TEST_CASE("copies, moves and replaced values of a Secret are all wiped", "[pkcs12][secret]") {
  bool held = false;
  const auto freed = watch_frees(kLong, [&] {
    Secret a(std::string_view{kLong});
    Secret b = a;             // copy
    Secret c = std::move(a);  // move: the block changes hands
    Secret d("something else, long enough to need its own heap block");
    d = b;  // copy-assign over an existing value
    Secret e("and another one, also long enough for a heap block here");
    e = std::move(c);  // move-assign: e's old block is freed
    b.clear();
    held = d.view() == kLong && e.view() == kLong && b.empty();
  });
  CHECK(held);
  CHECK(freed.total >= 3);
  CHECK(freed.holding_needle == 0);
}

TEST_CASE("a Secret built from a SecureString takes its block", "[pkcs12][secret]") {
  getcert::SecureString text(kLong);
  const char* block = text.data();
  Secret s(std::move(text));
  CHECK(s.data() == block);
  CHECK(s.view() == kLong);
}

TEST_CASE("SecureString growth wipes the blocks it leaves behind", "[pkcs12][secret]") {
  const auto freed = watch_frees(kLong, [] {
    getcert::SecureString text(kLong);
    for (int i = 0; i < 64; ++i) text += " more text so the buffer is reallocated";
  });
  CHECK(freed.total >= 2);
  CHECK(freed.holding_needle == 0);
}

TEST_CASE("library options hold passwords as Password", "[pkcs12][secret]") {
  bool held = false;
  const auto freed = watch_frees(kLong, [&] {
    getcert::pkcs12::DecodeOptions decode{kLong};
    decode.key_password = kLong;
    getcert::pkcs12::KeystoreOptions keystore;
    keystore.password = decode.password;
    getcert::pkcs12::CreateOptions create;
    create.password = kLong;
    create.key_passphrase = std::string_view(kLong);
    held = decode.password->view() == kLong && keystore.password->view() == kLong;
  });
  CHECK(held);
  CHECK(freed.total >= 5);
  CHECK(freed.holding_needle == 0);
}
