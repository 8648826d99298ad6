#include "fleet.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

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
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "exit_codes.hpp"
#include "getcert/text.hpp"
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

// One line without its '\n', at most kMaxLineBytes of it (the rest of a longer line is
// skipped); false at the end of the stream.
bool read_line(std::istream& in, std::string& line) {
  std::array<char, kMaxLineBytes + 1> buf{};
  in.getline(buf.data(), static_cast<std::streamsize>(buf.size()));
  const auto got = static_cast<std::size_t>(in.gcount());
  if (in.bad() || (got == 0 && in.eof())) return false;
  if (in.eof()) {  // a last line without '\n'
    line.assign(buf.data(), got);
  } else if (in.fail()) {  // too long: keep the start, drop the rest
    line.assign(buf.data(), got);
    in.clear();
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  } else {
    line.assign(buf.data(), got - 1);  // gcount() counted the '\n'
  }
  return true;
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

// The outcome names of the summary, in the order they are listed.
constexpr std::array<const char*, 11> kOutcomes{
    "valid",     "expiring", "invalid",    "timeout",      "refused", "unresolved",
    "tls error", "not tls",  "bad target", "output error", "error"};

const char* outcome_of(const ManyResult& r, int exit_code) {
  if (!r.result) {
    switch (r.result.error().code) {
      case Errc::timeout:
        return "timeout";
      case Errc::connect_failed:
        return "refused";
      case Errc::resolve_failed:
        return "unresolved";
      case Errc::tls_handshake_failed:
        return "tls error";
      case Errc::not_tls:
        return "not tls";
      case Errc::invalid_argument:
        return "bad target";
      default:
        return "error";
    }
  }
  if (!r.result->verification.ok) return "invalid";
  if (exit_code == kExitExpiring) return "expiring";
  if (exit_code == kExitOk) return "valid";
  return "output error";  // verified, but --out-dir or --select could not deliver
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
  std::uint64_t failed = 0;
  std::map<std::string, std::uint64_t> outcomes;
  std::optional<std::uint64_t> first_failure_index;
  int exit_code = kExitOk;
  std::optional<std::int64_t> earliest_expiry;
  std::string earliest_input;

  void add(const ManyResult& r, int rc) {
    ++done;
    ++outcomes[outcome_of(r, rc)];
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
    for (const char* name : kOutcomes) {
      const auto found = outcomes.find(name);
      if (found == outcomes.end()) continue;
      line += (first ? " " : ", ") + std::to_string(found->second) + " " + name;
      first = false;
    }
    if (earliest_expiry) {
      const std::int64_t days = (*earliest_expiry - now) / 86400;
      line += "; earliest expiry " + format_utc(*earliest_expiry) +
              (*earliest_expiry < now ? " (expired)" : " (in " + std::to_string(days) + " days)") +
              " at " + escape_untrusted(earliest_input);
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
    if (total_ && rate > 0 && *total_ >= tally.done) {
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
}

bool is_fleet_run(const FleetArgs& args, std::size_t positional_targets) {
  return !args.target_files.empty() || positional_targets > 1 || !args.shard.empty();
}

Result<Shard> parse_shard(const std::string& text) {
  const auto bad = [&] {
    return fail(Errc::invalid_argument, "--shard '" + escape_untrusted(text) +
                                            "' is not I/N with 1 <= I <= N (e.g. --shard 2/5)");
  };
  if (text.empty()) return Shard{};
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

struct TargetList::Source {
  std::string path;
  std::ifstream file;
  std::istream* stream = nullptr;
};

TargetList::TargetList(TargetList&&) noexcept = default;
TargetList& TargetList::operator=(TargetList&&) noexcept = default;
TargetList::~TargetList() = default;

Result<TargetList> TargetList::open(std::vector<std::string> positional,
                                    const std::vector<std::string>& files, Shard shard,
                                    std::istream& stdin_stream) {
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
      source->stream = &stdin_stream;
    } else {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) {
        return fail(Errc::io_error, "cannot read targets file '" + escape_untrusted(path) +
                                        "': " + std::strerror(errno));
      }
      if (S_ISDIR(st.st_mode)) {
        return fail(Errc::io_error, "targets file '" + escape_untrusted(path) + "' is a directory");
      }
      source->file.open(path, std::ios::binary);
      if (!source->file) {
        return fail(Errc::io_error, "cannot read targets file '" + escape_untrusted(path) +
                                        "': " + std::strerror(errno));
      }
      source->stream = &source->file;
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
  while (current_file_ < files_.size()) {
    if (!read_line(*files_[current_file_]->stream, line)) {
      ++current_file_;
      continue;
    }
    std::string target = target_on_line(line);
    if (!target.empty()) return target;
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
  auto shard = parse_shard(run.args.shard);
  if (!shard) return report_error(term, global, shard.error());
  auto list = TargetList::open(run.positional, run.args.target_files, *shard, term.in);
  if (!list) return report_error(term, global, list.error());

  const bool show_progress = term.stderr_is_tty && !global.quiet;
  Progress progress(term, show_progress);
  if (show_progress && list->rereadable()) {
    // Counting first costs one more pass over the files, never more memory.
    auto counter = TargetList::open(run.positional, run.args.target_files, *shard, term.in);
    if (counter) {
      std::uint64_t total = 0;
      while (counter->next()) ++total;
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
  Tally tally;
  PrometheusReport prometheus;
  const auto started = Clock::now();

  std::optional<Ticker> ticker;
  if (show_progress) ticker.emplace(screen, [&] { progress.draw(tally); });

  const auto on_result = [&](ManyResult&& r) {
    std::ostringstream out;
    std::ostringstream err;
    Terminal buffered{term.in, out, err, false, term.stdout_is_tty, term.stderr_is_tty};
    const int rc = run.render(buffered, r);
    const std::lock_guard<std::mutex> lock(screen);
    if (run.output == FleetOutput::prometheus) prometheus.add(r);
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
    }
    tally.add(r, rc);
    progress.draw(tally);
  };
  const InterruptHandler interrupt;
  const auto next_target = [&]() -> std::optional<std::string> {
    if (InterruptHandler::interrupted()) return std::nullopt;
    return list->next();
  };
  if (!run.header.empty()) {
    const std::lock_guard<std::mutex> lock(screen);
    term.out << run.header;
    term.out.flush();
  }
  fetch_many(next_target, on_result, options);
  ticker.reset();
  progress.clear();

  if (run.output == FleetOutput::prometheus) {
    term.out << prometheus.text();
    term.out.flush();
  }
  const bool interrupted = InterruptHandler::interrupted();
  if ((tally.done > 1 || interrupted) && !global.quiet) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    term.err << tally.summary(elapsed, run.fetch.verify.at_time.value_or(std::time(nullptr)))
             << (interrupted ? " (interrupted: the rest of the list was not tried)" : "") << "\n";
  }
  return interrupted ? kExitInterrupted : tally.exit_code;
}

}  // namespace getcert::cli
