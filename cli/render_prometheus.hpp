#pragma once

// `-o prometheus`: the Prometheus text exposition format (for node_exporter's textfile
// collector or a Pushgateway), one series set per target.

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "getcert/fetch_many.hpp"

namespace getcert::cli {

// Collects samples target by target, then writes each metric family once (HELP, TYPE, samples),
// as the format requires. Holds a few short strings per target.
class PrometheusReport {
 public:
  // Adds the samples of one target. A target label seen before is skipped: a series must be
  // unique, and the first occurrence of an input line wins.
  // `change` (with --baseline) adds its getcert_change_info series.
  void add(const ManyResult& result, const Change* change = nullptr);
  // --baseline: the change families are written (every class counted, zeros included).
  void track_changes() { track_changes_ = true; }
  // A baseline entry no target of this run matched: a getcert_change_info series "gone".
  void add_gone(const GoneEntry& gone);
  std::string text() const;

 private:
  void add_change(const std::string& target_label, ChangeKind kind);

  bool track_changes_ = false;
  std::array<std::uint64_t, kChangeKindCount> change_counts_{};
  std::vector<std::string> change_info_;
  std::set<std::string> seen_;
  std::vector<std::string> success_;
  std::vector<std::string> duration_;
  std::vector<std::string> not_after_;
  std::vector<std::string> chain_expiry_;
  std::vector<std::string> tls_version_;
};

// A label value in the exposition format: valid UTF-8 with \\, \" and \n escaped. Distinct
// texts give distinct values: a backslash of the text is doubled, a byte that is not UTF-8 is
// shown as \xNN.
std::string prometheus_label_value(const std::string& text);

}  // namespace getcert::cli
