#include "p12_watch.hpp"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <optional>
#include <string_view>
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
// output goes where getcert's goes. Its environment is getcert's less `hidden` (the variables
// that hold the store's passwords: the hook has no use for them). A stop signal while it runs is
// passed on to it (SIGTERM), and after kHookGrace it is killed: the loop's own stop stays bounded.
int run_hook(const std::string& command, const std::vector<std::string>& hidden) {
  constexpr auto kHookGrace = std::chrono::seconds(5);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool hide = std::any_of(hidden.begin(), hidden.end(), [&](const std::string& name) {
      return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
             entry[name.size()] == '=';
    });
    if (!hide) env.push_back(*e);
  }
  env.push_back(nullptr);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  // posix_spawn takes char* const[]; the strings are not modified.
  if (::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv),
                    env.data()) != 0) {
    return -1;
  }
  int status = 0;
  std::optional<std::chrono::steady_clock::time_point> stopping;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return -1;
    if (StopSignals::requested() && !stopping) {
      ::kill(pid, SIGTERM);
      stopping = std::chrono::steady_clock::now();
    } else if (stopping && std::chrono::steady_clock::now() - *stopping > kHookGrace) {
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
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
  // After an update that failed on a file (exit 11): when to try again regardless of changes.
  constexpr std::chrono::milliseconds kMinRetryDelay{1000};
  constexpr std::chrono::milliseconds kMaxRetryDelay{60000};
  std::optional<std::chrono::milliseconds> retry_in;
  for (;;) {
    const int rc = update();
    if (rc == kExitOk) {
      if (!options.quiet) report_line(term, "info", "PEM files updated from the key store");
      if (!options.exec.empty()) {
        const int hook = run_hook(options.exec, options.hidden_env);
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
    } else if (rc == kExitIo) {
      // A file could not be read or written (a read-only or full output folder): the store may
      // be fine, so the update is tried again without waiting for it to change, backing off.
      retry_in = retry_in ? std::min(*retry_in * 2, kMaxRetryDelay)
                          : std::max<std::chrono::milliseconds>(options.interval, kMinRetryDelay);
      report_line(
          term, "warning",
          "update failed; the previous PEM files are kept, retrying in " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(*retry_in).count()) +
              " s (or when a watched file changes)");
    } else {
      report_line(term, "warning", "update rejected; the previous PEM files are kept");
    }
    if (rc != kExitIo) retry_in.reset();
    first = false;
    const auto waiting_since = std::chrono::steady_clock::now();
    // Wait for a change that has settled: a writer that is not atomic (cp, an editor) makes
    // several changes in a row, and decoding the first one would only report a torn file.
    for (;;) {
      pause_for(options.interval);
      if (StopSignals::requested()) {
        if (!options.quiet) report_line(term, "info", "stopping (signal received)");
        return kExitOk;
      }
      if (retry_in && std::chrono::steady_clock::now() - waiting_since >= *retry_in) break;
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
