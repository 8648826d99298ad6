#pragma once

// The one way every command selects its output: an OutputFormat enum, parsed and validated by
// add_output_option (so a bad `-o` gives the same one-line error and exit 2 everywhere).

#include <string>
#include <vector>

#include "cli11_fwd.hpp"

namespace getcert::cli {

enum class OutputFormat { pem, der, json, text, prometheus, csv };

// The name -o takes for `format` ("pem", "der", ...).
const char* to_string(OutputFormat format) noexcept;

// Adds -o/--output to `cmd`, accepting exactly the formats in `allowed`, into `target` (whose
// current value is the default).
CLI::Option* add_output_option(CLI::App* cmd, OutputFormat& target,
                               const std::vector<OutputFormat>& allowed, const std::string& help);

}  // namespace getcert::cli
