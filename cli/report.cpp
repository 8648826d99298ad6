#include "report.hpp"

#include "exit_codes.hpp"
#include "getcert/text.hpp"

namespace getcert::cli {

void report_line(Terminal& term, std::string_view level, std::string_view text) {
  term.err << "getcert: " << level << ": " << escape_untrusted(text) << "\n";
}

int report_error(Terminal& term, const GlobalOptions& global, const Error& error,
                 const std::string& context) {
  report_line(term, "error", context.empty() ? error.message : context + ": " + error.message);
  if (global.verbosity > 0 && !error.detail.empty()) report_line(term, "detail", error.detail);
  return exit_code_for(error.code);
}

void report_warning(Terminal& term, const std::string& message) {
  report_line(term, "warning", message);
}

}  // namespace getcert::cli
