#pragma once

// /metrics: the exporter's own counters (requests, probes, their durations, rejections,
// reloads) and the process's descriptors and memory, which a load test watches for growth.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace getcert::cli::exporter {

class SelfMetrics {
 public:
  SelfMetrics();
  void request(const std::string& handler, int status);
  void probe(const std::string& module, bool success, double seconds);
  void rejected();
  void reload(bool ok);
  std::string text(std::size_t in_flight) const;

 private:
  struct Durations {
    std::uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::pair<std::string, bool>, std::uint64_t> probes_;
  std::map<std::string, Durations> durations_;
  std::uint64_t rejected_ = 0;
  bool last_reload_ok_ = true;
  std::int64_t last_reload_success_ = 0;
  std::int64_t start_time_ = 0;
};

}  // namespace getcert::cli::exporter
