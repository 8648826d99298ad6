#pragma once

// Reading the exporter's YAML files (the config and the web config): one bound on their size,
// one wording for their errors.

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "getcert/error.hpp"

namespace getcert::cli::exporter {

// A config is a page of YAML; anything far larger is a mistake (or an attack on the parser).
inline constexpr std::size_t kMaxYamlFileBytes = std::size_t{1} << 20;

// The parsed document of `path`. `what` names the file in errors ("config file"). Errors:
// io_error when it cannot be read; invalid_argument when it is over 1 MiB or not YAML, with
// "path:line: not valid YAML: ...", or when a mapping gives one key twice ("path:line: KEY:
// given twice (first on line N)"). Only regular files are read (a FIFO is an io_error).
Result<YAML::Node> load_yaml_file(const std::string& path, std::string_view what);

}  // namespace getcert::cli::exporter
