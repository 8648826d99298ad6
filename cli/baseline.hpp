#pragma once

// `--baseline FILE` in fleet mode: a previous `-o json` run, read once into a compact map, and
// what changed since for each target of this run (docs/fleet.md "What changed").

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
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
  // The entries no target matched (by input or by certificate), in baseline order.
  std::vector<GoneEntry> gone() const;

  struct Entry;  // one usable line (defined in baseline.cpp)

 private:
  Baseline();

  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t> by_input_;
  // Leaf SPKI pin + leaf TBS hash (leaf fingerprint for entries of a baseline older than
  // tbs_sha256) -> entries serving that certificate, in baseline order.
  std::unordered_map<std::string, std::vector<std::size_t>> by_certificate_;
  std::vector<BaselineProblem> problems_;
  std::unique_ptr<std::mutex> mutex_;
};

}  // namespace getcert::cli
