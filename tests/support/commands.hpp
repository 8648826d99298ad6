#pragma once

// The command-line tools the tests run: the built getcert binary and openssl as an oracle.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace getcert::test {

// Runs the built getcert executable (GETCERT_BINARY) with `args` (without argv[0]).
RunResult run_getcert(const std::vector<std::string>& args,
                      std::chrono::milliseconds limit = std::chrono::seconds(30));

// The same with extra environment entries ("NAME=value") and stdin read from `stdin_path`: how
// the password sources (--password-env, --password-stdin) and `-` for stdin are exercised.
RunResult run_getcert_with(const std::vector<std::string>& args,
                           const std::vector<std::string>& env,
                           const std::string& stdin_path = "/dev/null",
                           std::chrono::milliseconds limit = std::chrono::seconds(60));

// The PEM blocks `openssl s_client -showcerts` prints for 127.0.0.1:port (or host:port),
// sending `servername` as SNI when not empty. Throws when s_client fails.
std::string s_client_chain(std::uint16_t port, const std::string& servername,
                           const std::string& host = "127.0.0.1");

// `openssl ARGS...` to completion; throws on a non-zero exit, returns stdout.
std::string openssl(const std::vector<std::string>& args);

}  // namespace getcert::test
