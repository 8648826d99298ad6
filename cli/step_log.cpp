#include "step_log.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace getcert::cli {

std::string step_line(const std::string& target, const StepTiming& step) {
  const double ms = static_cast<double>(step.duration.count()) / 1000.0;
  std::string out = target + ": " + std::string(to_string(step.step));
  out += step.ok ? " " : " failed after ";
  out += fmt::format("{:.3f} ms", ms);
  if (!step.detail.empty()) out += ": " + step.detail;
  return out;
}

void log_step(const std::string& target, const StepTiming& step) {
  // Formatting is skipped entirely without -v.
  if (spdlog::should_log(spdlog::level::debug)) spdlog::debug("{}", step_line(target, step));
}

}  // namespace getcert::cli
