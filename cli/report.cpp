#include "report.hpp"

#include "exit_codes.hpp"

namespace getcert::cli {

int report_error(Terminal& term, const GlobalOptions& global, const Error& error,
                 const std::string& context) {
  term.err << "getcert: error: " << (context.empty() ? "" : context + ": ") << error.message
           << "\n";
  if (global.verbosity > 0 && !error.detail.empty()) {
    term.err << "getcert: detail: " << error.detail << "\n";
  }
  return exit_code_for(error.code);
}

void report_warning(Terminal& term, const std::string& message) {
  term.err << "getcert: warning: " << message << "\n";
}

}  // namespace getcert::cli
