#include "report.hpp"

#include <cstring>

#include "exit_codes.hpp"
#include "fd_output.hpp"
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

bool output_failed(const Terminal& term) {
  return term.out.fail() || (term.out_buffer != nullptr && term.out_buffer->error() != 0);
}

int finish_output(Terminal& term, const GlobalOptions& global, int rc) {
  term.out.flush();
  if (!output_failed(term)) return rc;
  const int why = term.out_buffer != nullptr ? term.out_buffer->error() : 0;
  return report_error(term, global,
                      Error(Errc::io_error, std::string("cannot write to standard output") +
                                                (why != 0 ? std::string(": ") + std::strerror(why)
                                                          : std::string()) +
                                                "; the output is incomplete"));
}

}  // namespace getcert::cli
