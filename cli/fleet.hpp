#pragma once

// Fleet mode of `getcert fetch`: many targets (positional and from --targets-file lists, read as
// a stream), fetched concurrently, rendered in completion order exactly as single-target runs
// are, with a progress line and a summary on stderr. --shard I/N splits one list across N runs.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli11_fwd.hpp"

#include "baseline.hpp"
#include "getcert/fetch_many.hpp"
#include "global_options.hpp"
#include "terminal.hpp"

namespace getcert::cli {

struct FleetArgs {
  std::vector<std::string> target_files;  // "-" = stdin
  std::size_t concurrency = 50;
  std::optional<std::string> shard;     // "I/N"; unset = all (an empty --shard is an error)
  std::optional<std::string> baseline;  // a previous -o json run: report what changed
};

void add_fleet_options(CLI::App* cmd, FleetArgs& args);

// True when the run is a fleet run: a targets file, or more than one positional target.
bool is_fleet_run(const FleetArgs& args, std::size_t positional_targets);

// --shard I/N: this run takes target k (0-based, in input order) when k % count == index.
// An empty text is an error, not "no shard": in a CI matrix an unset variable would otherwise
// make every job fetch the whole list.
struct Shard {
  std::size_t index = 0;  // I - 1
  std::size_t count = 1;  // N
  bool takes(std::uint64_t k) const noexcept { return k % count == index; }
};
Result<Shard> parse_shard(const std::string& text);

// The targets of a run, one at a time: positional targets first, then each targets file in
// order, line by line (a line at a time is all it holds). Blank lines and `#` comments (a
// whole line, or after whitespace) are skipped; the shard keeps every N-th remaining line.
class TargetList {
 public:
  // Opens every file now, so a missing file fails before any packet is sent. `-` reads
  // `stdin_fd` when it is given (>= 0), else `stdin_stream`.
  static Result<TargetList> open(std::vector<std::string> positional,
                                 const std::vector<std::string>& files, Shard shard,
                                 std::istream& stdin_stream, int stdin_fd = -1);
  TargetList(TargetList&& other) noexcept;
  TargetList& operator=(TargetList&& other) noexcept;
  TargetList(const TargetList&) = delete;
  TargetList& operator=(const TargetList&) = delete;
  ~TargetList();

  // The next target of this shard as written (trimmed), or nullopt at the end, when `stop`
  // says so while waiting for input, or after error() was set.
  std::optional<std::string> next();
  // Asked while a read waits for more input; true ends the list.
  void set_stop(std::function<bool()> stop) { stop_ = std::move(stop); }
  // Why the list ended before its end (an unreadable file, a line beyond any limit).
  const std::optional<Error>& error() const noexcept { return error_; }
  // True when every source can be read twice (no stdin), so the total can be counted upfront.
  bool rereadable() const noexcept { return !uses_stdin_; }

 private:
  struct Source;
  TargetList() = default;
  std::optional<std::string> next_line();

  std::vector<std::string> positional_;
  std::size_t next_positional_ = 0;
  std::vector<std::unique_ptr<Source>> files_;
  std::size_t current_file_ = 0;
  bool uses_stdin_ = false;
  Shard shard_;
  std::uint64_t seen_ = 0;  // targets before sharding
  std::function<bool()> stop_;
  std::optional<Error> error_;
};

enum class FleetOutput {
  blocks,      // PEM and text: each target's output under a "# target: INPUT" header line
  stream,      // JSON Lines and DER: each target's output as the single-target run writes it
  prometheus,  // one text exposition for the whole run, written at the end
};

struct FleetRun {
  std::vector<std::string> positional;
  FleetArgs args;
  FetchOptions fetch;
  std::uint16_t default_port = 443;
  FleetOutput output = FleetOutput::stream;
  // Renders one result into term exactly as a single-target run would; returns its exit code.
  // `change` is set when there is a baseline.
  std::function<int(Terminal& term, const ManyResult& result, const Change* change)> render;
  // True when render may run for several results at once (it writes only into `term`).
  bool render_is_reentrant = false;
  // Called with each target as it is taken, in input order (index as in ManyResult::index),
  // before it is fetched; optional.
  std::function<void(std::uint64_t index, const std::string& target)> on_next;
  // Written to stdout once, before the first result (CSV's header row); may be empty.
  std::string header;
  // With --baseline, renders an entry of the baseline that no target matched (after the last
  // result; Prometheus needs none: its report carries them).
  std::function<void(Terminal& term, const GoneEntry& gone)> render_gone;
};

// Runs every target; returns the exit code of the first failing target in input order (0 when
// all succeeded), or the code of a problem that stopped the run before it started.
int run_fleet(Terminal& term, const GlobalOptions& global, const FleetRun& run);

}  // namespace getcert::cli
