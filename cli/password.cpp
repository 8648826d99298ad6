#include "password.hpp"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <CLI/CLI.hpp>

#include <openssl/crypto.h>

#include "internal/owners.hpp"
#include "internal/read_file.hpp"
#include "report.hpp"

namespace {

// Set by a signal that arrives at the password prompt; a sig_atomic_t store is signal-safe.
volatile std::sig_atomic_t prompt_signal = 0;

}  // namespace

extern "C" void getcert_prompt_note_signal(int sig) { prompt_signal = sig; }

namespace getcert::cli {
namespace {

void drop_newline(pkcs12::SecureString& s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  if (!s.empty() && s.back() == '\r') s.pop_back();
}

// The signals a user sends to a prompt (Ctrl-C, Ctrl-\\, a closed terminal, kill), caught for
// as long as echo is off. Installed without SA_RESTART, so the read at the prompt returns.
class PromptSignals {
 public:
  PromptSignals() {
    prompt_signal = 0;
    struct sigaction action {};
    action.sa_handler = getcert_prompt_note_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      installed_[i] = ::sigaction(kSignals[i], &action, &previous_[i]) == 0;
    }
  }
  PromptSignals(const PromptSignals&) = delete;
  PromptSignals& operator=(const PromptSignals&) = delete;
  ~PromptSignals() { restore(); }

  // Puts the previous dispositions back (safe to call twice).
  void restore() const {
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      if (installed_[i]) (void)::sigaction(kSignals[i], &previous_[i], nullptr);
    }
  }
  // The signal caught at the prompt, 0 when none.
  static int caught() noexcept { return prompt_signal; }

 private:
  static constexpr std::array<int, 4> kSignals{SIGINT, SIGQUIT, SIGHUP, SIGTERM};
  std::array<struct sigaction, 4> previous_{};
  std::array<bool, 4> installed_{};
};

constexpr std::size_t kMaxPasswordBytes = std::size_t{64} * 1024;

// A NUL would end the password early where it reaches OpenSSL or a key-store KDF as a C string
// (a different password than the one in the file): refused rather than cut.
Error nul_in_password(const std::string& name) {
  return {Errc::invalid_argument,
          name + " holds a NUL byte in its first line; a password cannot contain one"};
}

Result<pkcs12::SecureString> first_line(std::istream& in, const std::string& name) {
  pkcs12::SecureString line;
  char c = 0;
  while (in.get(c)) {
    if (c == '\0') return tl::unexpected(nul_in_password(name));
    line.push_back(c);
    if (c == '\n') break;
    if (line.size() > kMaxPasswordBytes)
      return fail(Errc::invalid_argument, name + " is not a password");
  }
  if (in.bad()) return fail(Errc::io_error, "cannot read " + name);
  drop_newline(line);
  return line;
}

// The first line of a password file's bytes, which are wiped here once copied.
Result<pkcs12::SecureString> first_line_of(std::string& bytes, const std::string& name) {
  const std::size_t end = std::min(bytes.find('\n'), bytes.size());
  const bool nul = bytes.find('\0') < end;
  pkcs12::SecureString line;
  if (!nul) {
    for (std::size_t i = 0; i < end; ++i) line.push_back(bytes[i]);
  }
  OPENSSL_cleanse(bytes.data(), bytes.size());
  if (nul) return tl::unexpected(nul_in_password(name));
  drop_newline(line);  // a lone '\r' before the end of the line
  return line;
}

}  // namespace

void add_password_options(CLI::App* cmd, PasswordArgs& args, const std::string& what) {
  auto* file = cmd->add_option("--password-file", args.file, "Read " + what + " from this file");
  auto* env = cmd->add_option("--password-env", args.env,
                              "Read " + what + " from this environment variable");
  auto* in = cmd->add_flag("--password-stdin", args.from_stdin, "Read " + what + " from stdin");
  auto* lit = cmd->add_option("--password", args.literal,
                              what +
                                  " on the command line (visible to other users in `ps`; "
                                  "prefer the options above)");
  auto* none = cmd->add_flag("--no-password", args.none, "Use no password (empty)");
  file->excludes(env)->excludes(in)->excludes(lit)->excludes(none);
  env->excludes(in)->excludes(lit)->excludes(none);
  in->excludes(lit)->excludes(none);
  lit->excludes(none);
}

void add_key_password_options(CLI::App* cmd, PasswordArgs& args) {
  const std::string what =
      "the key password (JKS/JCEKS key entries, PKCS#12 key bags; default: "
      "the store password)";
  auto* file =
      cmd->add_option("--key-password-file", args.file, "Read " + what + " from this file");
  auto* env = cmd->add_option("--key-password-env", args.env,
                              "Read " + what + " from this environment variable");
  auto* in = cmd->add_flag("--key-password-stdin", args.from_stdin,
                           "Read " + what + " from stdin (after the store password's line)");
  file->excludes(env)->excludes(in);
  env->excludes(in);
}

Result<pkcs12::SecureString> read_secret_file(const std::string& path, internal::FileKinds kinds) {
  const std::string name = "'" + path + "'";
  auto bytes = internal::read_bounded_file(path, kMaxPasswordBytes, name, kinds);
  if (!bytes) {
    if (bytes.error().code == Errc::limit_exceeded) {
      return fail(Errc::invalid_argument, name + " is not a password (over 64 KiB)");
    }
    return tl::unexpected(bytes.error());
  }
  return first_line_of(*bytes, name);
}

Result<std::optional<pkcs12::SecureString>> read_password(const PasswordArgs& args,
                                                          Terminal& term) {
  using Out = std::optional<pkcs12::SecureString>;
  if (!args.file.empty()) {
    auto s = read_secret_file(args.file, args.regular_file_only
                                             ? internal::FileKinds::regular
                                             : internal::FileKinds::regular_or_stream);
    if (!s) return tl::unexpected(s.error());
    return Out(std::move(*s));
  }
  if (!args.env.empty()) {
    const char* value = std::getenv(args.env.c_str());
    if (value == nullptr) {
      return fail(Errc::invalid_argument, "environment variable " + args.env +
                                              " (from a --*password-env option) is not set");
    }
    return Out(pkcs12::SecureString(value));
  }
  if (args.from_stdin) {
    auto s = first_line(term.in, "standard input");
    if (!s) return tl::unexpected(s.error());
    return Out(std::move(*s));
  }
  if (args.literal) {
    report_warning(term,
                   "--password puts the secret in the process list and shell history; "
                   "prefer --password-file, --password-env or --password-stdin");
    return Out(pkcs12::SecureString(args.literal->data(), args.literal->size()));
  }
  if (args.none) return Out(pkcs12::SecureString());
  return Out();
}

Result<pkcs12::SecureString> prompt_password(const std::string& prompt, Terminal& term) {
  const internal::UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC));
  const int fd = tty.get();
  if (fd < 0 || !term.stdin_is_tty) {
    return fail(Errc::invalid_argument,
                "a password is needed and there is no terminal to ask on: use --password-file, "
                "--password-env or --password-stdin");
  }
  termios old{};
  const bool restore = ::tcgetattr(fd, &old) == 0;
  // A signal that ends the process while echo is off (Ctrl-C at the prompt) would leave the
  // user's shell without echo: it is caught here, echo restored, and then it is raised again
  // with its previous disposition, so the process still ends the way it would have.
  const PromptSignals signals;
  if (restore) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  (void)::write(fd, prompt.data(), prompt.size());
  pkcs12::SecureString line;
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n == 1 && c != '\n') {
      line.push_back(c);
      continue;
    }
    if (n < 0 && errno == EINTR && PromptSignals::caught() == 0) continue;
    break;
  }
  if (restore) ::tcsetattr(fd, TCSAFLUSH, &old);
  (void)::write(fd, "\n", 1);
  drop_newline(line);
  if (const int sig = PromptSignals::caught(); sig != 0) {
    signals.restore();
    (void)::raise(sig);
    return fail(Errc::invalid_argument, "interrupted at the password prompt");
  }
  return line;
}

}  // namespace getcert::cli
