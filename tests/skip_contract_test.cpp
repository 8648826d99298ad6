// The skip contract itself (tests/support/skip.hpp, catch_main.cpp): the hidden cases below are
// run by ctest entries of their own (tests/CMakeLists.txt) that check the exit status, because
// ctest must see a skip only when nothing failed.
#include <catch2/catch.hpp>

#include "support/skip.hpp"

TEST_CASE("a skipped section does not hide a failing sibling", "[.skip-contract-mixed]") {
  SECTION("skips") { GETCERT_SKIP("this section cannot run here"); }
  SECTION("fails") { CHECK(1 + 1 == 3); }
}

TEST_CASE("a case that only skips is a skip", "[.skip-contract-skip]") {
  GETCERT_SKIP("nothing here can run");
}

TEST_CASE("a case that passes is a pass", "[.skip-contract-pass]") { CHECK(1 + 1 == 2); }
