#include "support/commands.hpp"

#include <stdexcept>

#include "support/files.hpp"

namespace getcert::test {

RunResult run_getcert(const std::vector<std::string>& args, std::chrono::milliseconds limit) {
  std::vector<std::string> argv{GETCERT_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, limit);
}

RunResult run_getcert_with(const std::vector<std::string>& args,
                           const std::vector<std::string>& env, const std::string& stdin_path,
                           std::chrono::milliseconds limit) {
  std::vector<std::string> argv{GETCERT_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions options;
  options.extra_env = env;
  options.stdin_path = stdin_path;
  return run(argv, limit, options);
}

std::string s_client_chain(std::uint16_t port, const std::string& servername,
                           const std::string& host) {
  const bool v6 = host.find(':') != std::string::npos;
  std::vector<std::string> argv{GETCERT_TEST_OPENSSL, "s_client", "-showcerts", "-connect",
                                (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port)};
  if (servername.empty()) {
    argv.emplace_back("-noservername");
  } else {
    argv.insert(argv.end(), {"-servername", servername});
  }
  const RunResult r = run(argv, std::chrono::seconds(20));
  const std::string blocks = certificate_blocks(r.out);
  if (r.exit_code != 0 || blocks.empty()) {
    throw std::runtime_error("openssl s_client failed (exit " + std::to_string(r.exit_code) +
                             "):\n" + r.err);
  }
  return blocks;
}

std::string openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{GETCERT_TEST_OPENSSL};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = run(argv);
  if (r.exit_code != 0) throw std::runtime_error("openssl failed: " + r.err);
  return r.out;
}

}  // namespace getcert::test
