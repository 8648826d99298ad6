#include "exporter/self_metrics.hpp"

#include <dirent.h>
#include <unistd.h>

#include <ctime>
#include <fstream>

#include "render_prometheus.hpp"

#ifndef GETCERT_VERSION
#define GETCERT_VERSION "unknown"
#endif

namespace getcert::cli::exporter {
namespace {

// Handlers outside this set are counted as "other", so that a scanner probing random paths
// cannot grow the label set (and our memory) without bound.
std::string handler_label(const std::string& path) {
  for (const char* known : {"/probe", "/metrics", "/", "/-/reload", "/-/healthy"}) {
    if (path == known) return path;
  }
  return "other";
}

std::size_t open_fds() {
  std::size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n >= 3 ? n - 3 : 0;  // ".", ".." and the descriptor of the listing itself
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

void head(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

SelfMetrics::SelfMetrics() : start_time_(std::time(nullptr)) { last_reload_success_ = start_time_; }

void SelfMetrics::request(const std::string& handler, int status) {
  const std::lock_guard lock(mutex_);
  ++requests_[{handler_label(handler), status}];
}

void SelfMetrics::probe(const std::string& module, bool success, double seconds) {
  const std::lock_guard lock(mutex_);
  ++probes_[{module, success}];
  auto& d = durations_[module];
  ++d.count;
  d.sum += seconds;
}

void SelfMetrics::rejected() {
  const std::lock_guard lock(mutex_);
  ++rejected_;
}

void SelfMetrics::reload(bool ok) {
  const std::lock_guard lock(mutex_);
  last_reload_ok_ = ok;
  if (ok) last_reload_success_ = std::time(nullptr);
}

std::string SelfMetrics::text(std::size_t in_flight) const {
  const std::lock_guard lock(mutex_);
  std::string out;
  head(out, "getcert_exporter_build_info", "gauge", "The getcert version (value 1).");
  out += "getcert_exporter_build_info{version=\"" + prometheus_label_value(GETCERT_VERSION) +
         "\"} 1\n";
  head(out, "getcert_exporter_http_requests_total", "counter",
       "HTTP requests answered, by handler and status code.");
  for (const auto& [key, n] : requests_) {
    out += "getcert_exporter_http_requests_total{handler=\"" + key.first + "\",code=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  }
  head(out, "getcert_exporter_probes_in_flight", "gauge", "Probes running now.");
  out += "getcert_exporter_probes_in_flight " + std::to_string(in_flight) + "\n";
  head(out, "getcert_exporter_probes_total", "counter", "Probes run, by module and outcome.");
  for (const auto& [key, n] : probes_) {
    out += "getcert_exporter_probes_total{module=\"" + prometheus_label_value(key.first) +
           "\",success=\"" + (key.second ? "true" : "false") + "\"} " + std::to_string(n) + "\n";
  }
  head(out, "getcert_exporter_probe_duration_seconds", "summary",
       "Wall time of the probes, by module.");
  for (const auto& [module, d] : durations_) {
    const std::string l = "{module=\"" + prometheus_label_value(module) + "\"}";
    out += "getcert_exporter_probe_duration_seconds_sum" + l + " " + std::to_string(d.sum) + "\n";
    out +=
        "getcert_exporter_probe_duration_seconds_count" + l + " " + std::to_string(d.count) + "\n";
  }
  head(out, "getcert_exporter_probes_rejected_total", "counter",
       "Probes answered 503 because --max-concurrent-probes were already running.");
  out += "getcert_exporter_probes_rejected_total " + std::to_string(rejected_) + "\n";
  head(out, "getcert_exporter_config_last_reload_successful", "gauge",
       "1 when the last config (re)load succeeded.");
  out += std::string("getcert_exporter_config_last_reload_successful ") +
         (last_reload_ok_ ? "1" : "0") + "\n";
  head(out, "getcert_exporter_config_last_reload_success_timestamp_seconds", "gauge",
       "When the config was last loaded successfully, as a Unix time.");
  out += "getcert_exporter_config_last_reload_success_timestamp_seconds " +
         std::to_string(last_reload_success_) + "\n";
  head(out, "process_open_fds", "gauge", "Open file descriptors.");
  out += "process_open_fds " + std::to_string(open_fds()) + "\n";
  head(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  out += "process_resident_memory_bytes " + std::to_string(resident_bytes()) + "\n";
  head(out, "process_start_time_seconds", "gauge", "Start time of the process as a Unix time.");
  out += "process_start_time_seconds " + std::to_string(start_time_) + "\n";
  return out;
}

}  // namespace getcert::cli::exporter
