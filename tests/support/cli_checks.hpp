#pragma once

// What CLI tests assert on: the documented exit codes (README "Exit codes" — written out here
// on purpose, so renumbering the product's enum fails the tests), and readable failure output.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/skip.hpp"

namespace getcert::test {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitNetwork = 3;
constexpr int kExitTls = 4;
constexpr int kExitVerify = 5;
constexpr int kExitExpiring = 6;
constexpr int kExitWrongPassword = 7;
constexpr int kExitMalformed = 8;
constexpr int kExitUnsupported = 9;
constexpr int kExitOutputExists = 10;
constexpr int kExitIo = 11;

// "exit N after M ms" plus both streams, for INFO() when a check fails.
std::string explain(const RunResult& r);

// Parses JSON, failing the current test (with the text) when it is not JSON.
nlohmann::json parse_json(const std::string& text);

// `args` followed by `more`: one base command line run with several renderings or selections.
std::vector<std::string> plus(std::vector<std::string> args, const std::vector<std::string>& more);

// The lines of a text without their "\n" (JSON Lines output, stderr messages); a last line
// without "\n" counts too.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace getcert::test
