#include "fleet.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "exit_codes.hpp"
#include "getcert/text.hpp"
#include "internal/owners.hpp"
#include "render_prometheus.hpp"
#include "report.hpp"
#include "step_log.hpp"

namespace {

// Set by SIGINT during a fleet run. A lock-free atomic is safe to store from a signal handler.
std::atomic<bool> fleet_interrupted{false};

}  // namespace

extern "C" void getcert_fleet_note_interrupt(int /*signal*/) { fleet_interrupted.store(true); }

namespace getcert::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The exit code of a run stopped by Ctrl-C, as a shell reports an interrupted command.
constexpr int kExitInterrupted = 128 + SIGINT;

// For the length of a fleet run, the first Ctrl-C stops taking new targets (those in flight
// finish within their timeout, and the summary still comes); SA_RESETHAND makes a second
// Ctrl-C end the process at once, as usual.
class InterruptHandler {
 public:
  InterruptHandler() {
    fleet_interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = getcert_fleet_note_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = static_cast<int>(SA_RESETHAND);
    installed_ = ::sigaction(SIGINT, &action, &previous_) == 0;
  }
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
  ~InterruptHandler() {
    if (installed_) ::sigaction(SIGINT, &previous_, nullptr);
  }
  static bool interrupted() noexcept { return fleet_interrupted.load(); }

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

// Longer lines are cut here (and then fail to parse as a target): a file with no newline in
// gigabytes must not make the list's memory grow.
constexpr std::size_t kMaxLineBytes = 4096;
// The rest of an over-long line is skipped up to here; a "line" longer still (-f /dev/zero, a
// binary file given by mistake) is no list of targets, and skipping it could take forever.
constexpr std::size_t kMaxSkipBytes = std::size_t{1} << 20;
// Unusable baseline lines reported one by one; the rest as a count.
constexpr std::size_t kMaxBaselineProblemLines = 20;
// How often a read that waits for a slow producer (a pipe on stdin) looks at Ctrl-C.
constexpr int kPollMillis = 100;

// File descriptors besides the workers' sockets: stdio, targets files, trust store reads.
constexpr rlim_t kSpareFds = 64;
// Sockets one in-flight target may hold at once (the server, plus an AIA/OCSP/CRL download).
constexpr rlim_t kFdsPerTarget = 2;

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\v\f");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\v\f");
  return s.substr(first, last - first + 1);
}

// The target on a list line: "" for blank and comment lines; a `#` after whitespace starts a
// comment (a `#` inside a URL, as in https://host/#frag, is kept).
std::string target_on_line(const std::string& line) {
  std::string text = trim(line);
  if (text.empty() || text[0] == '#') return {};
  for (auto hash = text.find('#', 1); hash != std::string::npos; hash = text.find('#', hash + 1)) {
    if (text[hash - 1] == ' ' || text[hash - 1] == '\t') return trim(text.substr(0, hash));
  }
  return text;
}

// Raises the soft RLIMIT_NOFILE (up to the hard limit) so `concurrency` targets fit; when even
// the hard limit is too low, returns the concurrency that fits and says so.
std::size_t fit_concurrency_to_fd_limit(Terminal& term, std::size_t concurrency) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return concurrency;
  const rlim_t wanted = kSpareFds + kFdsPerTarget * static_cast<rlim_t>(concurrency);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    rlimit raised = limit;
    raised.rlim_cur =
        limit.rlim_max == RLIM_INFINITY ? wanted : std::min<rlim_t>(wanted, limit.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= wanted) return concurrency;
  const auto fits = static_cast<std::size_t>(std::max<rlim_t>(
      1, (limit.rlim_cur > kSpareFds ? limit.rlim_cur - kSpareFds : 0) / kFdsPerTarget));
  report_warning(term, "--concurrency " + std::to_string(concurrency) + " needs about " +
                           std::to_string(wanted) + " open files but the limit is " +
                           std::to_string(limit.rlim_cur) + "; running " + std::to_string(fits) +
                           " at a time (raise it with 'ulimit -n')");
  return fits;
}

// What became of one target, as the summary counts it; listed in this order.
enum class Outcome {
  valid,
  expiring,
  invalid,
  timeout,
  refused,
  unresolved,
  tls_error,
  not_tls,
  bad_target,
  output_error,
  error,
};
constexpr std::size_t kOutcomeCount = static_cast<std::size_t>(Outcome::error) + 1;

const char* to_string(Outcome outcome) noexcept {
  switch (outcome) {
    case Outcome::valid:
      return "valid";
    case Outcome::expiring:
      return "expiring";
    case Outcome::invalid:
      return "invalid";
    case Outcome::timeout:
      return "timeout";
    case Outcome::refused:
      return "refused";
    case Outcome::unresolved:
      return "unresolved";
    case Outcome::tls_error:
      return "tls error";
    case Outcome::not_tls:
      return "not tls";
    case Outcome::bad_target:
      return "bad target";
    case Outcome::output_error:
      return "output error";
    case Outcome::error:
      return "error";
  }
  return "error";
}

Outcome outcome_of(const ManyResult& r, int exit_code) {
  if (!r.result) {
    switch (r.result.error().code) {
      case Errc::timeout:
        return Outcome::timeout;
      case Errc::connect_failed:
        return Outcome::refused;
      case Errc::resolve_failed:
        return Outcome::unresolved;
      case Errc::tls_handshake_failed:
        return Outcome::tls_error;
      case Errc::not_tls:
        return Outcome::not_tls;
      case Errc::invalid_argument:
        return Outcome::bad_target;
      default:
        return Outcome::error;
    }
  }
  if (!r.result->verification.ok) return Outcome::invalid;
  if (exit_code == kExitExpiring) return Outcome::expiring;
  if (exit_code == kExitOk) return Outcome::valid;
  return Outcome::output_error;  // verified, but --out-dir or --select could not deliver
}

std::string duration_text(double seconds) {
  std::ostringstream out;
  if (seconds < 60) {
    out.precision(seconds < 10 ? 1 : 0);
    out << std::fixed << seconds << " s";
  } else if (seconds < 3600) {
    out << static_cast<long>(seconds / 60) << " min " << static_cast<long>(seconds) % 60 << " s";
  } else {
    out << static_cast<long>(seconds / 3600) << " h " << static_cast<long>(seconds / 60) % 60
        << " min";
  }
  return out.str();
}

// Counts, the exit-code rule and the earliest expiry, updated once per result.
struct Tally {
  std::uint64_t done = 0;
  bool with_changes = false;                              // --baseline
  std::array<std::uint64_t, kChangeKindCount> changes{};  // by ChangeKind
  std::size_t baseline_problems = 0;
  std::uint64_t failed = 0;
  std::array<std::uint64_t, kOutcomeCount> outcomes{};  // by Outcome
  std::optional<std::uint64_t> first_failure_index;
  int exit_code = kExitOk;
  std::optional<std::int64_t> earliest_expiry;
  std::string earliest_input;

  void add(const ManyResult& r, int rc) {
    ++done;
    ++outcomes[static_cast<std::size_t>(outcome_of(r, rc))];
    if (rc != kExitOk) {
      ++failed;
      // The documented rule: the code of the first failing target in input order, so the exit
      // code does not depend on which target happened to finish first.
      if (!first_failure_index || r.index < *first_failure_index) {
        first_failure_index = r.index;
        exit_code = rc;
      }
    }
    if (!r.result) return;
    const auto& v = r.result->verification;
    const auto& chain = v.verified_chain.empty() ? r.result->presented_chain : v.verified_chain;
    for (const auto& c : chain) {
      if (!earliest_expiry || c.not_after < *earliest_expiry) {
        earliest_expiry = c.not_after;
        earliest_input = r.input;
      }
    }
  }

  std::string summary(double elapsed_seconds, std::int64_t now) const {
    std::string line = "getcert: " + std::to_string(done) + (done == 1 ? " target" : " targets") +
                       " in " + duration_text(elapsed_seconds) + ":";
    bool first = true;
    for (std::size_t i = 0; i < kOutcomeCount; ++i) {
      if (outcomes[i] == 0) continue;
      line += (first ? " " : ", ") + std::to_string(outcomes[i]) + " " +
              to_string(static_cast<Outcome>(i));
      first = false;
    }
    if (earliest_expiry) {
      const std::int64_t days = (*earliest_expiry - now) / 86400;
      line += "; earliest expiry " + format_utc(*earliest_expiry) +
              (*earliest_expiry < now ? " (expired)" : " (in " + std::to_string(days) + " days)") +
              " at " + escape_untrusted(earliest_input);
    }
    if (!with_changes) return line;
    line += "; changes:";
    first = true;
    for (std::size_t i = 0; i < kChangeKindCount; ++i) {
      if (changes[i] == 0) continue;
      line += (first ? " " : ", ") + std::to_string(changes[i]) + " " +
              std::string(to_string(static_cast<ChangeKind>(i)));
      first = false;
    }
    if (first) line += " none";
    if (baseline_problems > 0) {
      line += " (" + std::to_string(baseline_problems) + " baseline " +
              (baseline_problems == 1 ? "line" : "lines") + " not used)";
    }
    return line;
  }
};

// The live line on a terminal's stderr: done/total, rate, failures, ETA. Drawn over itself
// with \r and erased before anything else is written to the terminal.
class Progress {
 public:
  Progress(Terminal& term, bool enabled) : term_(term), enabled_(enabled) {}

  void set_total(std::optional<std::uint64_t> total) { total_ = total; }

  void clear() {
    if (!enabled_ || !drawn_) return;
    term_.err << "\r\x1b[K" << std::flush;
    drawn_ = false;
  }

  void draw(const Tally& tally) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
    const double rate = elapsed > 0 ? static_cast<double>(tally.done) / elapsed : 0.0;
    std::ostringstream line;
    line << "\r\x1b[Kgetcert: " << tally.done << "/"
         << (total_ ? std::to_string(*total_) : std::string("?")) << " done, ";
    line.precision(1);
    line << std::fixed << rate << "/s, " << tally.failed << " failed";
    if (total_ && rate > 0 && *total_ > tally.done) {  // nothing left: no ETA
      line << ", ETA " << duration_text(static_cast<double>(*total_ - tally.done) / rate);
    }
    term_.err << line.str() << std::flush;
    drawn_ = true;
  }

 private:
  Terminal& term_;
  bool enabled_;
  bool drawn_ = false;
  std::optional<std::uint64_t> total_;
  Clock::time_point started_ = Clock::now();
};

// Redraws the progress line while nothing completes (the rate and ETA still move), under the
// same lock as the results; stopped and joined when it goes away, however the run ends.
class Ticker {
 public:
  Ticker(std::mutex& screen, std::function<void()> draw) : screen_(screen) {
    thread_ = std::thread([this, redraw = std::move(draw)] {
      std::unique_lock<std::mutex> lock(screen_);
      while (!stop_.wait_for(lock, std::chrono::milliseconds(250), [this] { return finished_; })) {
        redraw();
      }
    });
  }
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;
  ~Ticker() {
    {
      const std::lock_guard<std::mutex> lock(screen_);
      finished_ = true;
    }
    stop_.notify_all();
    thread_.join();
  }

 private:
  std::mutex& screen_;
  std::condition_variable stop_;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace

void add_fleet_options(CLI::App* cmd, FleetArgs& args) {
  cmd->add_option("-f,--targets-file", args.target_files,
                  "Read targets from FILE, one per line ('-' = stdin; '#' comments and blank "
                  "lines are skipped); repeatable, combines with targets on the command line")
      ->allow_extra_args(false);
  cmd->add_option("--concurrency", args.concurrency,
                  "Targets in flight at once with several targets (default 50); each keeps "
                  "its own --timeout")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--shard", args.shard,
                  "Take every N-th target starting at the I-th (I/N, 1 <= I <= N), so N runs "
                  "split one list without coordination");
  cmd->add_option("--baseline", args.baseline,
                  "Compare with FILE, the output of an earlier -o json run: each result gets a "
                  "change (new, gone, failed, rekeyed, issuer_changed, names_changed, "
                  "chain_changed, renewed, unchanged); with -o json, csv or prometheus")
      ->type_name("FILE");
}

bool is_fleet_run(const FleetArgs& args, std::size_t positional_targets) {
  return !args.target_files.empty() || positional_targets > 1 || args.shard.has_value() ||
         args.baseline.has_value();
}

Result<Shard> parse_shard(const std::string& text) {
  const auto bad = [&] {
    return fail(Errc::invalid_argument,
                "--shard " + quote_name(text) + " is not I/N with 1 <= I <= N (e.g. --shard 2/5)");
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return bad();
  const auto digits = [](const std::string& s) {
    return s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  const std::string i = text.substr(0, slash);
  const std::string n = text.substr(slash + 1);
  if (!digits(i) || !digits(n)) return bad();
  const auto index = std::stoul(i);
  const auto count = std::stoul(n);
  if (index < 1 || count < 1 || index > count) return bad();
  return Shard{index - 1, count};
}

// One targets file: a descriptor read in chunks (so that a wait for a producer that keeps a
// pipe open can be interrupted), or a stream (stdin in tests).
struct TargetList::Source {
  enum class Got { line, end, too_long_to_skip, failed, stopped };

  std::string path;
  int fd = -1;               // what is read: stdin's, or `owned`
  internal::UniqueFd owned;  // a file this list opened, closed with it
  std::istream* stream = nullptr;
  std::string pending;  // read but not yet returned
  bool eof = false;
  bool skipping = false;  // the previous line was cut: its rest comes first
  std::size_t skipped = 0;
  int error = 0;

  Source() = default;
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;
  ~Source() = default;

  // Reads more into `pending`; false at the end, on an error or when stopped.
  bool fill(const std::function<bool()>& stop, Got& why) {
    std::array<char, 65536> chunk{};
    for (;;) {
      if (stop && stop()) {
        why = Got::stopped;
        return false;
      }
      if (stream != nullptr) {
        stream->read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        const auto got = static_cast<std::size_t>(stream->gcount());
        if (got == 0) {
          eof = true;
          why = stream->bad() ? Got::failed : Got::end;
          return false;
        }
        pending.append(chunk.data(), got);
        return true;
      }
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, kPollMillis);
      if (ready < 0 && errno != EINTR) {
        error = errno;
        why = Got::failed;
        return false;
      }
      if (ready <= 0) continue;
      const ssize_t n = ::read(fd, chunk.data(), chunk.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) {
        error = errno;
        why = Got::failed;
        return false;
      }
      if (n == 0) {
        eof = true;
        why = Got::end;
        return false;
      }
      pending.append(chunk.data(), static_cast<std::size_t>(n));
      return true;
    }
  }

  // One line without its '\n', at most kMaxLineBytes of it (the rest of a longer line is
  // skipped as the next line is read, up to kMaxSkipBytes).
  Got read_line(std::string& line, const std::function<bool()>& stop) {
    for (;;) {
      if (skipping) {
        const auto newline = pending.find('\n');
        if (newline != std::string::npos) {
          pending.erase(0, newline + 1);
          skipping = false;
          continue;
        }
        skipped += pending.size();
        pending.clear();
        if (skipped > kMaxSkipBytes) return Got::too_long_to_skip;
      } else {
        const auto newline = pending.find('\n');
        if (newline != std::string::npos && newline <= kMaxLineBytes) {
          line.assign(pending, 0, newline);
          pending.erase(0, newline + 1);
          return Got::line;
        }
        if (pending.size() > kMaxLineBytes) {  // too long: keep the start, skip the rest
          line.assign(pending, 0, kMaxLineBytes);
          pending.erase(0, kMaxLineBytes);
          skipping = true;
          skipped = 0;
          return Got::line;
        }
        if (eof) {
          if (pending.empty()) return Got::end;
          line = std::move(pending);  // a last line without '\n'
          pending.clear();
          return Got::line;
        }
      }
      if (eof) return Got::end;
      Got why = Got::end;
      if (!fill(stop, why)) {
        if (why != Got::end) return why;
      }
    }
  }
};

TargetList::TargetList(TargetList&&) noexcept = default;
TargetList& TargetList::operator=(TargetList&&) noexcept = default;
TargetList::~TargetList() = default;

Result<TargetList> TargetList::open(std::vector<std::string> positional,
                                    const std::vector<std::string>& files, Shard shard,
                                    std::istream& stdin_stream, int stdin_fd) {
  TargetList list;
  list.positional_ = std::move(positional);
  list.shard_ = shard;
  for (const auto& path : files) {
    auto source = std::make_unique<Source>();
    source->path = path;
    if (path == "-") {
      if (list.uses_stdin_) {
        return fail(Errc::invalid_argument, "--targets-file - (stdin) can be given only once");
      }
      list.uses_stdin_ = true;
      if (stdin_fd >= 0) {
        source->fd = stdin_fd;
      } else {
        source->stream = &stdin_stream;
      }
    } else {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) {
        return fail(Errc::io_error,
                    "cannot read targets file " + quote_name(path) + ": " + std::strerror(errno));
      }
      if (S_ISDIR(st.st_mode)) {
        return fail(Errc::io_error, "targets file " + quote_name(path) + " is a directory");
      }
      source->owned.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
      source->fd = source->owned.get();
      if (source->fd < 0) {
        return fail(Errc::io_error,
                    "cannot read targets file " + quote_name(path) + ": " + std::strerror(errno));
      }
    }
    list.files_.push_back(std::move(source));
  }
  return list;
}

std::optional<std::string> TargetList::next_line() {
  while (next_positional_ < positional_.size()) {
    std::string target = trim(positional_[next_positional_++]);
    if (!target.empty()) return target;
  }
  std::string line;
  while (current_file_ < files_.size() && !error_) {
    Source& source = *files_[current_file_];
    const std::string name = source.path == "-" ? std::string("standard input")
                                                : "targets file " + quote_name(source.path);
    switch (source.read_line(line, stop_)) {
      case Source::Got::line: {
        std::string target = target_on_line(line);
        if (!target.empty()) return target;
        continue;
      }
      case Source::Got::end:
        ++current_file_;
        continue;
      case Source::Got::stopped:
        return std::nullopt;
      case Source::Got::too_long_to_skip:
        error_ = Error(Errc::limit_exceeded,
                       name + " has a line longer than " + std::to_string(kMaxSkipBytes) +
                           " bytes: not a list of targets; the rest of it was not read");
        return std::nullopt;
      case Source::Got::failed:
        error_ = Error(Errc::io_error,
                       "cannot read " + name +
                           (source.error != 0 ? std::string(": ") + std::strerror(source.error)
                                              : std::string()));
        return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::string> TargetList::next() {
  while (auto target = next_line()) {
    if (shard_.takes(seen_++)) return target;
  }
  return std::nullopt;
}

int run_fleet(Terminal& term, const GlobalOptions& global, const FleetRun& run) {
  auto shard = run.args.shard ? parse_shard(*run.args.shard) : Result<Shard>(Shard{});
  if (!shard) return report_error(term, global, shard.error());
  auto list = TargetList::open(run.positional, run.args.target_files, *shard, term.in, term.in_fd);
  if (!list) return report_error(term, global, list.error());

  std::optional<Baseline> baseline;
  Tally tally;
  if (run.args.baseline) {
    auto loaded = Baseline::load(*run.args.baseline);
    if (!loaded) return report_error(term, global, loaded.error());
    baseline.emplace(std::move(*loaded));
    tally.with_changes = true;
    tally.baseline_problems = baseline->problems().size();
    // One line each, so nothing is dropped unseen; a file of junk gives a count, not a flood.
    std::size_t shown = 0;
    for (const auto& problem : baseline->problems()) {
      if (shown++ == kMaxBaselineProblemLines) {
        report_warning(term, "baseline '" + *run.args.baseline +
                                 "': " + std::to_string(baseline->problems().size() - shown + 1) +
                                 " more lines not used");
        break;
      }
      report_warning(term, "baseline '" + *run.args.baseline + "' line " +
                               std::to_string(problem.line) + ": " + problem.reason + "; not used");
    }
  }

  const bool show_progress = term.stderr_is_tty && !global.quiet;
  Progress progress(term, show_progress);
  if ((show_progress || baseline) && list->rereadable()) {
    // Counting first costs one more pass over the files, never more memory. With a baseline
    // the same pass marks which of its entries are in this run, so a renamed target is never
    // matched to an entry whose own target is still to come.
    auto counter = TargetList::open(run.positional, run.args.target_files, *shard, term.in);
    if (counter) {
      std::uint64_t total = 0;
      while (auto target = counter->next()) {
        ++total;
        if (baseline) baseline->note_in_run(*target);
      }
      progress.set_total(total);
    }
  }

  FetchManyOptions options;
  options.fetch = run.fetch;
  options.default_port = run.default_port;
  options.concurrency = fit_concurrency_to_fd_limit(term, run.args.concurrency);
  // Rendering (JSON of every certificate) costs as much CPU as the fetch: done by each worker
  // for its own result, only the writing below is serialized.
  options.serialize_results = !run.render_is_reentrant;

  std::mutex screen;  // the terminal: results and the progress ticker take turns
  PrometheusReport prometheus;
  if (baseline) prometheus.track_changes();
  const auto started = Clock::now();

  std::optional<Ticker> ticker;
  if (show_progress) ticker.emplace(screen, [&] { progress.draw(tally); });

  std::atomic<bool> output_lost{false};
  const auto on_result = [&](ManyResult&& r) {
    std::ostringstream out;
    std::ostringstream err;
    Terminal buffered{term.in, out, err, false, term.stdout_is_tty, term.stderr_is_tty};
    std::optional<Change> change;
    if (baseline) change = baseline->classify(r);
    const int rc = run.render(buffered, r, change ? &*change : nullptr);
    const std::lock_guard<std::mutex> lock(screen);
    if (run.output == FleetOutput::prometheus) prometheus.add(r, change ? &*change : nullptr);
    if (change) ++tally.changes[static_cast<std::size_t>(change->kind)];
    progress.clear();
    // Logged here, under the screen lock, because the logger writes to the terminal itself.
    if (global.verbosity > 0) {
      const std::string where = r.endpoint.host.empty() ? r.input : r.endpoint.to_string();
      for (const auto& step : r.timings) log_step(where, step);
    }
    term.err << err.str();
    term.err.flush();
    const std::string data = out.str();
    if (!data.empty()) {
      if (run.output == FleetOutput::blocks) {
        term.out << "# target: " << escape_untrusted(r.input) << "\n";
      }
      term.out << data;
      term.out.flush();
      // Nobody reads the rest (| head -1, a full disk): stop taking targets.
      if (output_failed(term)) output_lost.store(true);
    }
    tally.add(r, rc);
    progress.draw(tally);
  };
  const InterruptHandler interrupt;
  // A list read from a pipe may wait for its producer for ever: Ctrl-C ends the wait.
  list->set_stop([] { return InterruptHandler::interrupted(); });
  std::uint64_t taken = 0;  // next_target is called from one thread at a time
  const auto next_target = [&]() -> std::optional<std::string> {
    if (InterruptHandler::interrupted() || output_lost.load()) return std::nullopt;
    auto target = list->next();
    if (target && baseline) baseline->note_in_run(*target);
    if (target && run.on_next) run.on_next(taken, *target);
    ++taken;
    return target;
  };
  if (!run.header.empty()) {
    const std::lock_guard<std::mutex> lock(screen);
    term.out << run.header;
    term.out.flush();
  }
  fetch_many(next_target, on_result, options);
  ticker.reset();
  progress.clear();

  // Gone: only once the whole list was tried; after Ctrl-C, a failed stdout or an unreadable
  // list, an entry not matched may just not have been reached.
  if (baseline && !InterruptHandler::interrupted() && !output_lost.load() && !list->error()) {
    baseline->for_each_gone([&](const GoneEntry& gone) {
      ++tally.changes[static_cast<std::size_t>(ChangeKind::gone)];
      if (run.output == FleetOutput::prometheus) {
        prometheus.add_gone(gone);
      } else if (run.render_gone) {
        run.render_gone(term, gone);
      }
    });
    term.out.flush();
  }

  if (run.output == FleetOutput::prometheus && !output_lost.load()) {
    term.out << prometheus.text();
    term.out.flush();
  }
  const bool interrupted = InterruptHandler::interrupted();
  const bool lost = output_lost.load();
  if ((tally.done > 1 || interrupted || lost || baseline) && !global.quiet) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    term.err << tally.summary(elapsed, run.fetch.verify.at_time.value_or(std::time(nullptr)))
             << (interrupted ? " (interrupted: the rest of the list was not tried)"
                 : lost      ? " (standard output failed: the rest of the list was not tried)"
                             : "")
             << "\n";
  }
  if (interrupted) return kExitInterrupted;
  // A list that could not be read to its end fails the run: some targets were never tried.
  if (list->error()) return report_error(term, global, *list->error());
  // A failed stdout becomes exit 11 in finish_output(), with its reason.
  return tally.exit_code;
}

}  // namespace getcert::cli
