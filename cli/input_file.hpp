#pragma once

// Reading user-named input files ("-" = stdin) with a size limit and clear errors.

#include <cstdint>
#include <string>
#include <vector>

#include "getcert/error.hpp"
#include "internal/read_file.hpp"
#include "terminal.hpp"

namespace getcert::cli {

inline constexpr std::size_t kMaxInputBytes = std::size_t{64} * 1024 * 1024;

// Reads the whole file (or the terminal's stdin for "-"); io_error names the path and why.
// `kinds`: what a path may name besides a regular file (a pipe, for `<(...)`, by default; a
// watch loop takes regular files only, so a store replaced by a FIFO cannot hang it).
Result<std::vector<std::uint8_t>> read_input(
    const std::string& path, Terminal& term,
    internal::FileKinds kinds = internal::FileKinds::regular_or_stream);

}  // namespace getcert::cli
