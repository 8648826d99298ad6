#include "support/cli_checks.hpp"

#include <catch2/catch.hpp>

namespace getcert::test {

std::string explain(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") + " after " +
         std::to_string(r.elapsed.count()) + " ms\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

nlohmann::json parse_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    FAIL("not JSON (" << e.what() << "): " << text);
  }
  return {};
}

}  // namespace getcert::test
