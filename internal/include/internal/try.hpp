#pragma once

// Error propagation, written once: GETCERT_TRY(expr) and GETCERT_TRY_ASSIGN(decl, expr) stand for
//
//   auto r = expr;
//   if (!r) return tl::unexpected(r.error());
//
// They work for any tl::expected<T, E> whose E converts to the error type of the calling
// function's expected (getcert::Result<T>, whose E is getcert::Error, everywhere in this project).
// The error is moved out, never copied or rewrapped: the caller returns exactly the failure it got.
// A site that adds context to the error, maps it, or still needs the expected afterwards writes its
// check by hand.
//
// Why macros: returning from the *calling* function is what they are for, and only a macro can do
// that. A function could test the expected but not return on the caller's behalf, and GNU
// statement expressions (`({ ... })`) are not standard C++ (-Wpedantic rejects them).
//
// Header-only, private: libgetcert and pkcs12 see it through getcert_internal, the CLI and
// getcert::grpc through a private include directory. It is never installed.

#include <tl/expected.hpp>
#include <utility>

// GETCERT_TRY(expr): evaluates expr, a tl::expected (of any T, void included); on failure returns
// its error from the calling function. The value, if any, is dropped: for a call made only for
// its success, e.g. `GETCERT_TRY(write_all(fd, bytes));`.
#define GETCERT_TRY(...)                                               \
  do {                                                                 \
    auto&& getcert_try_result_ = (__VA_ARGS__);                        \
    if (!getcert_try_result_) {                                        \
      return ::tl::unexpected(std::move(getcert_try_result_).error()); \
    }                                                                  \
  } while (false)

// GETCERT_TRY_ASSIGN(decl, expr): evaluates expr, a tl::expected<T, E> with a value type T; on
// failure returns its error from the calling function, else initialises decl with the value moved
// out of it. decl declares a variable (`auto trust`, `const auto n`, `std::string text`) or names
// an existing one:
//
//   GETCERT_TRY_ASSIGN(auto trust, load_trust_store(options));  // trust is the store, not a Result
//   use(trust.anchors);
//
// It expands to statements in the enclosing scope (so decl stays visible after it): use it where
// a declaration may stand, never as the lone body of an unbraced if/for. The expected lives in a
// hidden variable named uniquely per use (__COUNTER__), so several may share a scope.
#define GETCERT_TRY_ASSIGN(decl, ...) \
  GETCERT_TRY_ASSIGN_IMPL_(GETCERT_TRY_CONCAT_(getcert_try_value_, __COUNTER__), decl, __VA_ARGS__)

// Implementation details of GETCERT_TRY_ASSIGN: the two-step concatenation expands __COUNTER__
// before pasting it.
#define GETCERT_TRY_CONCAT_(a, b) GETCERT_TRY_CONCAT_IMPL_(a, b)
#define GETCERT_TRY_CONCAT_IMPL_(a, b) a##b
#define GETCERT_TRY_ASSIGN_IMPL_(tmp, decl, ...)     \
  auto tmp = (__VA_ARGS__);                          \
  if (!tmp) {                                        \
    return ::tl::unexpected(std::move(tmp).error()); \
  }                                                  \
  decl = *std::move(tmp)
