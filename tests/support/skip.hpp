#pragma once

// Visible skips. Catch2 v2 has no SKIP, so a test that cannot run here (a missing tool, data
// set or network feature) says why after a marker, notes the skip and returns. The test main
// (catch_main.cpp) then exits with GETCERT_SKIP_CODE, which CMake registers as every test's
// SKIP_RETURN_CODE, so ctest reports the test as skipped, never as passed -- but only when
// nothing failed: a skipped section never hides a failing sibling.

#include <catch2/catch.hpp>

#include <iostream>

#define GETCERT_SKIP_MARKER "GETCERT-TEST-SKIPPED"
#define GETCERT_SKIP_CODE 77

namespace getcert::test {

// Set by GETCERT_SKIP: something in this process did not run.
inline bool& skipped() {
  static bool flag = false;
  return flag;
}

// 1 in a test case's body, 2 and more inside a SECTION: kept by the listener in catch_main.cpp.
inline int& section_depth() {
  static int depth = 0;
  return depth;
}

}  // namespace getcert::test

// Use as a statement in a TEST_CASE, before its first SECTION: reports why and leaves the test.
// Inside a SECTION it fails instead: leaving there would end the run before Catch has seen the
// SECTIONs after it, and a failing one would go unnoticed. Check tools before the first SECTION,
// or give the SECTION that needs one a TEST_CASE of its own.
#define GETCERT_SKIP(why)                                                                 \
  do {                                                                                    \
    if (::getcert::test::section_depth() > 1) {                                           \
      FAIL(                                                                               \
          "GETCERT_SKIP inside a SECTION would hide the SECTIONs after it; check before " \
          "the first SECTION ("                                                           \
          << why << ")");                                                                 \
    }                                                                                     \
    std::cout << GETCERT_SKIP_MARKER ": " << why << std::endl; /* NOLINT */               \
    ::getcert::test::skipped() = true;                                                    \
    return;                                                                               \
  } while (false)

// Skips a test whose external tool is missing.
#define REQUIRE_TOOL(have, tool)                         \
  do {                                                   \
    if (!(have)) GETCERT_SKIP(tool " is not installed"); \
  } while (false)
