#include "support/cli_checks.hpp"

#include <catch2/catch.hpp>

#include <sstream>

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

std::vector<std::string> plus(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace getcert::test
