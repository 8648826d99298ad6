#pragma once

// The exporter's log: one line per event on stderr, as text ("getcert: info: probe
// target=... success=false") or JSON (--log-format json, one object per line). Every value is
// escaped: targets and reasons come from outside. No secret is ever passed here: the callers
// log targets, modules and outcomes, never a config's passwords, keys or proxy URLs.

#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace getcert::cli::exporter {

using LogFields = std::vector<std::pair<std::string, std::string>>;

class Logger {
 public:
  Logger(std::ostream& out, bool json) : out_(out), json_(json) {}
  void info(const std::string& message, const LogFields& fields) { write("info", message, fields); }
  void warn(const std::string& message, const LogFields& fields) { write("warn", message, fields); }
  void error(const std::string& message, const LogFields& fields = {}) {
    write("error", message, fields);
  }

 private:
  void write(const char* level, const std::string& message, const LogFields& fields);

  std::mutex mutex_;
  std::ostream& out_;
  bool json_;
};

}  // namespace getcert::cli::exporter
