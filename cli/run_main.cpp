#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "app.hpp"
#include "fd_output.hpp"

// Whether the build carries a sanitizer runtime that does its own work at exit (LeakSanitizer's
// leak check): such builds leave through exit().
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GETCERT_EXIT_HOOKS_NEEDED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define GETCERT_EXIT_HOOKS_NEEDED 1
#endif
#endif

namespace getcert::cli {

int run_main(const std::vector<std::string>& args, const ServeRunner& serve) {
  // A closed pipe (getcert host | head -1) must not kill us mid-write with SIGPIPE.
  (void)std::signal(SIGPIPE, SIG_IGN);
  std::ios::sync_with_stdio(false);
  FdOutputBuffer out_buffer(STDOUT_FILENO);
  std::ostream out(&out_buffer);
  Terminal term{std::cin,
                out,
                std::cerr,
                isatty(STDIN_FILENO) == 1,
                isatty(STDOUT_FILENO) == 1,
                isatty(STDERR_FILENO) == 1,
                &out_buffer,
                STDIN_FILENO};
  const int rc = run(args, term, serve);
  out.flush();
  std::cerr.flush();
#ifndef GETCERT_EXIT_HOOKS_NEEDED
  // Every output is written and every file closed (run() returns only then). What exit() would
  // add is destructors and OpenSSL's atexit cleanup freeing its tables one by one: 4% of a
  // fetch's CPU time, for memory the kernel takes back anyway.
  (void)std::fflush(nullptr);
  ::_exit(rc);
#else
  return rc;
#endif
}

}  // namespace getcert::cli
