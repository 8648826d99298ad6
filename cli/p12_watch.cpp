#include "p12_watch.hpp"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <thread>

#include "exit_codes.hpp"
#include "report.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawn

namespace {

// Set by SIGTERM/SIGINT while the loop runs. A lock-free atomic is safe to store from a handler.
std::atomic<bool> watch_stop_requested{false};

}  // namespace

extern "C" void getcert_watch_note_stop(int /*signal*/) { watch_stop_requested.store(true); }

namespace getcert::cli {
namespace {

// For the length of the loop, SIGTERM (what systemd and Kubernetes send) and SIGINT end it
// after the current update, never in the middle of writing files.
class StopSignals {
 public:
  StopSignals() {
    watch_stop_requested.store(false);
    struct sigaction action {};
    action.sa_handler = getcert_watch_note_stop;
    sigemptyset(&action.sa_mask);
    term_installed_ = ::sigaction(SIGTERM, &action, &previous_term_) == 0;
    int_installed_ = ::sigaction(SIGINT, &action, &previous_int_) == 0;
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals() {
    if (term_installed_) ::sigaction(SIGTERM, &previous_term_, nullptr);
    if (int_installed_) ::sigaction(SIGINT, &previous_int_, nullptr);
  }
  static bool requested() noexcept { return watch_stop_requested.load(); }

 private:
  struct sigaction previous_term_ {};
  struct sigaction previous_int_ {};
  bool term_installed_ = false;
  bool int_installed_ = false;
};

// What identifies a version of a file without reading it; empty when it cannot be stat'ed.
std::string stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec);
}

std::vector<std::string> stamps_of(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  out.reserve(paths.size());
  for (const auto& p : paths) out.push_back(stamp_of(p));
  return out;
}

// Sleeps `total` in short steps so that a stop signal is noticed quickly.
void pause_for(std::chrono::milliseconds total) {
  constexpr auto kStep = std::chrono::milliseconds(50);
  const auto until = std::chrono::steady_clock::now() + total;
  while (!StopSignals::requested() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        kStep, until - std::chrono::steady_clock::now()));
  }
}

// The --exec hook through the shell, as systemd's ExecReload= and cron take commands; its
// output goes where getcert's goes.
int run_hook(const std::string& command) {
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  // posix_spawn takes char* const[]; the strings are not modified.
  if (::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv), environ) !=
      0) {
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

int run_watch_loop(Terminal& term, const WatchLoopOptions& options,
                   const std::function<int()>& update) {
  const StopSignals signals;
  std::vector<std::string> seen = stamps_of(options.watched);
  bool first = true;
  for (;;) {
    const int rc = update();
    if (rc == kExitOk) {
      if (!options.quiet) report_line(term, "info", "PEM files updated from the key store");
      if (!options.exec.empty()) {
        const int hook = run_hook(options.exec);
        if (hook != 0) {
          report_line(term, "warning",
                      "--exec '" + options.exec + "' " +
                          (hook < 0 ? std::string("could not be started")
                                    : "exited with status " + std::to_string(hook)));
        } else if (!options.quiet) {
          report_line(term, "info", "--exec '" + options.exec + "' succeeded");
        }
      }
    } else if (first) {
      return rc;
    } else {
      report_line(term, "warning", "update rejected; the previous PEM files are kept");
    }
    first = false;
    // Wait for a change that has settled: a writer that is not atomic (cp, an editor) makes
    // several changes in a row, and decoding the first one would only report a torn file.
    for (;;) {
      pause_for(options.interval);
      if (StopSignals::requested()) {
        if (!options.quiet) report_line(term, "info", "stopping (signal received)");
        return kExitOk;
      }
      auto now = stamps_of(options.watched);
      if (now == seen) continue;
      pause_for(std::chrono::milliseconds(100));
      if (StopSignals::requested()) continue;
      auto settled = stamps_of(options.watched);
      if (settled != now) continue;
      seen = std::move(settled);
      break;
    }
  }
}

}  // namespace getcert::cli
