#pragma once

// How the CLI tells the user about failures: one line on stderr, detail only with -v.
// Every message may carry text from outside (a certificate field, a peer's answer, a file
// name), so each line is escaped here, in the one place that writes it: no control character,
// invalid UTF-8 or bidi override reaches the terminal, and an embedded newline cannot start a
// second, forged "getcert:" line.

#include <string>
#include <string_view>

#include "getcert/error.hpp"
#include "global_options.hpp"
#include "terminal.hpp"

namespace getcert::cli {

// Prints "getcert: <level>: <text>" with text escaped (getcert::escape_untrusted); one line.
void report_line(Terminal& term, std::string_view level, std::string_view text);

// Prints "getcert: error: <context>: <message>" (+ detail under -v); returns the exit code.
int report_error(Terminal& term, const GlobalOptions& global, const Error& error,
                 const std::string& context = {});

void report_warning(Terminal& term, const std::string& message);

// True once a write to term.out has failed (a full disk, a closed pipe): what was meant for
// stdout is incomplete, and writing more cannot repair it.
bool output_failed(const Terminal& term);

// Flushes term.out. When any write to it failed, says so in one line and returns the I/O exit
// code (11), whatever `rc` was: a script must not take cut-short output for a result.
int finish_output(Terminal& term, const GlobalOptions& global, int rc);

}  // namespace getcert::cli
