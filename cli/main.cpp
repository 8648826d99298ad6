#include <unistd.h>

#include <csignal>
#include <iostream>

#include "app.hpp"

int main(int argc, char** argv) {
  // A closed pipe (getcert host | head -1) must not kill us mid-write with SIGPIPE.
  (void)std::signal(SIGPIPE, SIG_IGN);
  std::ios::sync_with_stdio(false);
  getcert::cli::Terminal term{std::cin,
                              std::cout,
                              std::cerr,
                              isatty(STDIN_FILENO) == 1,
                              isatty(STDOUT_FILENO) == 1,
                              isatty(STDERR_FILENO) == 1};
  const int rc = getcert::cli::run(std::vector<std::string>(argv, argv + argc), term);
  std::cout.flush();
  return rc;
}
