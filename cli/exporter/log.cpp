#include "exporter/log.hpp"

#include <nlohmann/json.hpp>

#include <ctime>

#include "getcert/certificate.hpp"
#include "getcert/text.hpp"

namespace getcert::cli::exporter {

void Logger::write(const char* level, const std::string& message, const LogFields& fields) {
  std::string line;
  if (json_) {
    nlohmann::ordered_json j;
    j["time"] = format_utc(std::time(nullptr));
    j["level"] = level;
    j["msg"] = valid_utf8(message);
    for (const auto& [key, value] : fields) j[key] = valid_utf8(value);
    line = j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  } else {
    line = std::string("getcert: ") + level + ": " + escape_untrusted(message);
    for (const auto& [key, value] : fields) {
      line += " " + key + "=" + escape_untrusted(value);
    }
  }
  const std::lock_guard lock(mutex_);
  out_ << line << '\n';
  out_.flush();
}

}  // namespace getcert::cli::exporter
