#pragma once

// Reading user-named input files ("-" = stdin) with a size limit and clear errors.

#include <cstdint>
#include <string>
#include <vector>

#include "getcert/error.hpp"
#include "terminal.hpp"

namespace getcert::cli {

inline constexpr std::size_t kMaxInputBytes = std::size_t{64} * 1024 * 1024;

// Reads the whole file (or the terminal's stdin for "-"); io_error names the path and why.
Result<std::vector<std::uint8_t>> read_input(const std::string& path, Terminal& term);

}  // namespace getcert::cli
