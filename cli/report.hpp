#pragma once

// How the CLI tells the user about failures: one line on stderr, detail only with -v.

#include <string>

#include "command.hpp"
#include "getcert/error.hpp"

namespace getcert::cli {

// Prints "getcert: error: <context>: <message>" (+ detail under -v); returns the exit code.
int report_error(Terminal& term, const GlobalOptions& global, const Error& error,
                 const std::string& context = {});

void report_warning(Terminal& term, const std::string& message);

}  // namespace getcert::cli
