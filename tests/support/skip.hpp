#pragma once

// Visible skips. Catch2 v2 has no SKIP, so a test that cannot run here (a missing tool, data
// set or network feature) prints this marker and returns; CMake registers every test with
// SKIP_REGULAR_EXPRESSION on it, so ctest reports the test as skipped, never as passed.

#include <iostream>

#define GETCERT_SKIP_MARKER "GETCERT-TEST-SKIPPED"

// Use as a statement inside a TEST_CASE (or a SECTION): reports why and leaves the test.
#define GETCERT_SKIP(why)                                                   \
  do {                                                                      \
    std::cout << GETCERT_SKIP_MARKER ": " << why << std::endl; /* NOLINT */ \
    return;                                                                 \
  } while (false)

// Skips a test whose external tool is missing.
#define REQUIRE_TOOL(have, tool)                         \
  do {                                                   \
    if (!(have)) GETCERT_SKIP(tool " is not installed"); \
  } while (false)
