#pragma once

// -v: each step of a fetch (resolve, connect, proxy, starttls, handshake, verify, and the AIA,
// OCSP and CRL downloads) as one debug line on the CLI's logger, which escapes it.

#include <string>
#include <vector>

#include "getcert/verify.hpp"

namespace getcert::cli {

// "TARGET: STEP 1.234 ms: DETAIL", "TARGET: STEP failed after 1.234 ms: DETAIL".
std::string step_line(const std::string& target, const StepTiming& step);

// Logs one step at debug level (shown with -v).
void log_step(const std::string& target, const StepTiming& step);

}  // namespace getcert::cli
