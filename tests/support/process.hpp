#pragma once

// Child processes for tests: spawned with posix_spawn, stdout/stderr captured in memory files,
// waited for with a deadline, and always killed and reaped when the handle goes away.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace getcert::test {

struct SpawnOptions {
  std::vector<std::string> extra_env;  // "NAME=value", added to (or overriding) ours
  std::string stdin_path = "/dev/null";
  // When set, the child reads these bytes as its stdin instead of stdin_path.
  std::optional<std::string> stdin_text;
  // Ask the kernel to SIGKILL the child when this process dies, even by a crash, so a
  // crashed test never leaves a server behind (uses setpriv --pdeathsig when installed).
  bool die_with_parent = false;
  // Start the child in a process group of its own and kill the whole group: for servers that
  // fork workers which outlive a killed parent (danted).
  bool own_process_group = false;
};

class Process {
 public:
  // Starts argv[0] (searched in PATH). Throws std::runtime_error when it cannot be started.
  static Process spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills (SIGKILL) and reaps a child that is still running

  pid_t pid() const noexcept { return pid_; }
  // True while the child has not exited.
  bool running();
  // Waits up to `limit`; returns the exit code (128 + signal when killed), nullopt on timeout.
  std::optional<int> wait_for(std::chrono::milliseconds limit);
  // SIGKILL and reap; safe to call more than once.
  void kill();

  std::string stdout_text() const;
  std::string stderr_text() const;

 private:
  Process() = default;
  void release_fds() noexcept;

  pid_t pid_ = -1;
  bool own_group_ = false;
  std::optional<int> status_;
  int out_fd_ = -1;
  int err_fd_ = -1;
};

struct RunResult {
  int exit_code = -1;  // -1 when the run timed out (the child was killed)
  bool timed_out = false;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
  // When the process was seen to end: for bounds that start at an event the test observed (a
  // connection accepted), not at the spawn, whose cost under a sanitizer and load is not the
  // program's deadline.
  std::chrono::steady_clock::time_point ended{};
};

// Runs a command to completion (bounded by `limit`) and returns what it printed.
RunResult run(const std::vector<std::string>& argv,
              std::chrono::milliseconds limit = std::chrono::seconds(30),
              const SpawnOptions& options = {});

// Runs a command with `input` as its stdin.
RunResult run_with_input(const std::vector<std::string>& argv, const std::string& input,
                         std::chrono::milliseconds limit = std::chrono::seconds(30));

// True when `tool` names an executable file in a directory of PATH (what spawn would find).
bool have_tool(const std::string& tool);

// Runs a shell pipeline through /bin/sh -c.
RunResult run_shell(const std::string& script,
                    std::chrono::milliseconds limit = std::chrono::seconds(30));

// Polls `condition` every 100 ms until it holds or `limit` has passed; its last answer.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds limit = std::chrono::seconds(15));

}  // namespace getcert::test
