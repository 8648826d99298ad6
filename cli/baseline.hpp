#pragma once

// `--baseline FILE` in fleet mode: a previous `-o json` run, read once into a compact map, and
// what changed since for each target of this run (docs/fleet.md "What changed").

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/error.hpp"
#include "getcert/fetch_many.hpp"

namespace getcert::cli {

// The change classes; when several apply to one target the first in this order wins (the
// precedence docs/fleet.md documents). `failed`: in the baseline with a certificate, but this
// run got none (an error).
enum class ChangeKind {
  new_target,
  gone,
  failed,
  rekeyed,
  issuer_changed,
  names_changed,
  chain_changed,
  renewed,
  unchanged,
};
inline constexpr std::size_t kChangeKindCount = static_cast<std::size_t>(ChangeKind::unchanged) + 1;

// "new", "gone", "renewed", ... as JSON, CSV and Prometheus spell them.
std::string_view to_string(ChangeKind kind) noexcept;

struct Change {
  ChangeKind kind = ChangeKind::new_target;
  std::string previous_sha256;  // the baseline leaf's fingerprint; empty when it had none
  std::string previous_input;   // set when matched by certificate (a renamed target)
};

// A baseline entry no target of this run matched.
struct GoneEntry {
  std::string input;
  std::string previous_sha256;
};

// A baseline line that could not be used, with its 1-based line number.
struct BaselineProblem {
  std::uint64_t line = 0;
  std::string reason;
};

class Baseline {
 public:
  // Reads `path` once. Unreadable: io_error; larger than kMaxBytes, more than kMaxEntries
  // entries, or without a single usable entry: malformed_input. Unusable lines do not fail the
  // load: they are listed in problems().
  static Result<Baseline> load(const std::string& path);

  static constexpr std::uint64_t kMaxBytes = std::uint64_t{4} << 30;
  static constexpr std::size_t kMaxEntries = 1000000;
  static constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;
  // What one line may hold for getcert to read it (a line of `getcert -o json` is far below
  // each): JSON nesting, certificates in presented_chain, names in each SAN list of the leaf.
  // Only the fields the change classes compare are kept while a line is parsed, so a 16 MiB
  // line costs the line and a few KiB, whatever it holds.
  static constexpr std::size_t kMaxNesting = 32;
  static constexpr std::size_t kMaxChainLength = 64;
  static constexpr std::size_t kMaxNamesPerKind = 10000;

  Baseline(Baseline&& other) noexcept;
  Baseline& operator=(Baseline&& other) noexcept;
  Baseline(const Baseline&) = delete;
  Baseline& operator=(const Baseline&) = delete;
  ~Baseline();

  const std::vector<BaselineProblem>& problems() const noexcept { return problems_; }
  std::size_t size() const noexcept;

  // Marks `input` as a target of this run, so that its baseline entry is never taken by a
  // renamed target. Thread-safe.
  void note_in_run(const std::string& input);
  // What changed for one result of this run. Thread-safe.
  Change classify(const ManyResult& result);
  // Calls `visit` with each entry no target matched (by input or by certificate), in baseline
  // order.
  void for_each_gone(const std::function<void(const GoneEntry&)>& visit) const;

  struct Entry;  // one usable line (defined in baseline.cpp)

 private:
  Baseline();

  struct Keyed {
    std::uint64_t key;
    std::uint32_t entry;
    bool operator<(const Keyed& o) const { return key != o.key ? key < o.key : entry < o.entry; }
  };
  // Indices into entries_ at 16 bytes an entry, sorted by key: a hash of the input, and a hash
  // of the leaf's SPKI pin + TBS hash (its fingerprint for entries of a baseline older than
  // tbs_sha256). A hit is confirmed against the entry itself.
  const Entry* find_input(const std::string& input) const;
  void build_indices();
  std::deque<Entry> entries_;  // a deque: no reallocation that doubles the peak while loading
  std::vector<Keyed> by_input_;
  std::vector<Keyed> by_certificate_;
  std::size_t usable_ = 0;
  std::vector<BaselineProblem> problems_;
  std::unique_ptr<std::mutex> mutex_;
};

}  // namespace getcert::cli
