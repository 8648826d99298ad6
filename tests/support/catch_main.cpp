// The one Catch2 main of the suite. Its exit status is Catch's, except that a run in which a
// test skipped (GETCERT_SKIP) and nothing failed exits GETCERT_SKIP_CODE, which ctest reports as
// skipped. A failure anywhere in the run wins over a skip.
#define CATCH_CONFIG_RUNNER
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include "skip.hpp"

namespace {

// Keeps getcert::test::section_depth(): Catch reports a test case's body as its outermost
// section, so the depth is 1 there and 2 or more inside a SECTION.
struct SectionDepth : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void sectionStarting(Catch::SectionInfo const& info) override {
    ++getcert::test::section_depth();
    TestEventListenerBase::sectionStarting(info);
  }
  void sectionEnded(Catch::SectionStats const& stats) override {
    --getcert::test::section_depth();
    TestEventListenerBase::sectionEnded(stats);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(SectionDepth)

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed == 0 && getcert::test::skipped()) return GETCERT_SKIP_CODE;
  return failed;
}
