#include "render_format.hpp"

#include <map>

#include "command.hpp"

namespace getcert::cli {

const char* to_string(OutputFormat format) noexcept {
  switch (format) {
    case OutputFormat::pem:
      return "pem";
    case OutputFormat::der:
      return "der";
    case OutputFormat::json:
      return "json";
    case OutputFormat::text:
      return "text";
    case OutputFormat::prometheus:
      return "prometheus";
    case OutputFormat::csv:
      return "csv";
  }
  return "pem";
}

CLI::Option* add_output_option(CLI::App* cmd, OutputFormat& target,
                               const std::vector<OutputFormat>& allowed, const std::string& help) {
  std::map<std::string, OutputFormat> names;
  for (const OutputFormat format : allowed) names.emplace(to_string(format), format);
  return with_choices(cmd->add_option("-o,--output", target, help), names);
}

}  // namespace getcert::cli
