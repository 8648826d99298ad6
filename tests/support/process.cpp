#include "support/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace getcert::test {
namespace {

using Clock = std::chrono::steady_clock;

std::string read_all(int fd) {
  std::string out;
  if (fd < 0) return out;
  char buf[8192];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    offset += n;
  }
  return out;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& x : extra) overridden = overridden || x.substr(0, x.find('=')) == name;
    if (!overridden) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// Writes all of `data` at the start of fd (a fresh memory file), leaving its offset at 0 so
// the child reads it from the beginning.
bool write_all_at_start(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Process Process::spawn(const std::vector<std::string>& argv_in, const SpawnOptions& options) {
  if (argv_in.empty()) throw std::runtime_error("spawn: empty argv");
  std::vector<std::string> argv;
  if (options.die_with_parent && ::access("/usr/bin/setpriv", X_OK) == 0) {
    argv = {"/usr/bin/setpriv", "--pdeathsig", "KILL", "--"};
  }
  argv.insert(argv.end(), argv_in.begin(), argv_in.end());
  std::vector<std::string> env = merged_environment(options.extra_env);
  auto c_argv = c_strings(argv);
  auto c_env = c_strings(env);

  Process p;
  p.out_fd_ = ::memfd_create("child-stdout", MFD_CLOEXEC);
  p.err_fd_ = ::memfd_create("child-stderr", MFD_CLOEXEC);
  if (p.out_fd_ < 0 || p.err_fd_ < 0) throw std::runtime_error("memfd_create failed");

  // The child's stdin: a memory file holding stdin_text (read from offset 0), or a path.
  int in_fd = -1;
  if (options.stdin_text) {
    in_fd = ::memfd_create("child-stdin", MFD_CLOEXEC);
    if (in_fd < 0 || !write_all_at_start(in_fd, *options.stdin_text)) {
      if (in_fd >= 0) ::close(in_fd);
      throw std::runtime_error("cannot prepare stdin for " + argv_in[0]);
    }
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, options.stdin_path.c_str(), O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, p.out_fd_, 1);
  posix_spawn_file_actions_adddup2(&actions, p.err_fd_, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The test runner may ignore SIGPIPE; children start with default dispositions.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGDEF;
  if (options.own_process_group) {
    flags = static_cast<short>(flags | POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  const int rc = ::posix_spawnp(&p.pid_, c_argv[0], &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (in_fd >= 0) ::close(in_fd);
  p.own_group_ = options.own_process_group;
  if (rc != 0) {
    p.pid_ = -1;
    throw std::runtime_error("cannot start " + argv_in[0] + ": " + std::strerror(rc));
  }
  return p;
}

Process::Process(Process&& other) noexcept
    : pid_(other.pid_),
      own_group_(other.own_group_),
      status_(other.status_),
      out_fd_(other.out_fd_),
      err_fd_(other.err_fd_) {
  other.pid_ = -1;
  other.out_fd_ = -1;
  other.err_fd_ = -1;
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    kill();
    release_fds();
    pid_ = other.pid_;
    own_group_ = other.own_group_;
    status_ = other.status_;
    out_fd_ = other.out_fd_;
    err_fd_ = other.err_fd_;
    other.pid_ = -1;
    other.out_fd_ = -1;
    other.err_fd_ = -1;
  }
  return *this;
}

Process::~Process() {
  kill();
  release_fds();
}

void Process::release_fds() noexcept {
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
  out_fd_ = err_fd_ = -1;
}

bool Process::running() {
  if (pid_ < 0 || status_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = decode_status(status);
    return false;
  }
  return r == 0;
}

std::optional<int> Process::wait_for(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  auto pause = std::chrono::microseconds(200);
  while (running()) {
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(10));
  }
  return status_;
}

void Process::kill() {
  if (pid_ < 0 || status_) return;
  ::kill(own_group_ ? -pid_ : pid_, SIGKILL);
  int status = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  status_ = r == pid_ ? decode_status(status) : -1;
}

std::string Process::stdout_text() const { return read_all(out_fd_); }
std::string Process::stderr_text() const { return read_all(err_fd_); }

RunResult run(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
              const SpawnOptions& options) {
  const auto start = Clock::now();
  Process p = Process::spawn(argv, options);
  RunResult r;
  const auto code = p.wait_for(limit);
  r.ended = Clock::now();
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(r.ended - start);
  if (code) {
    r.exit_code = *code;
  } else {
    r.timed_out = true;
    p.kill();
  }
  r.out = p.stdout_text();
  r.err = p.stderr_text();
  return r;
}

RunResult run_with_input(const std::vector<std::string>& argv, const std::string& input,
                         std::chrono::milliseconds limit) {
  SpawnOptions options;
  options.stdin_text = input;
  return run(argv, limit, options);
}

bool have_tool(const std::string& tool) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end - start);
    if (::access(((dir.empty() ? "." : dir) + "/" + tool).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) return false;
    start = end + 1;
  }
}

RunResult run_shell(const std::string& script, std::chrono::milliseconds limit) {
  return run({"/bin/sh", "-c", script}, limit);
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

}  // namespace getcert::test
