#pragma once

// Opening a PKCS#12 file the way a user expects: the password from the options, else the
// empty and absent passwords, else (on a terminal) a prompt.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "getcert/pkcs12.hpp"
#include "password.hpp"
#include "terminal.hpp"

namespace getcert::cli {

struct P12Args {
  PasswordArgs password;
  std::uint64_t max_iterations = pkcs12::kDefaultMaxIterations;
  // The password once open_p12() has read it: every input of a run shares it, and stdin or a
  // pipe given to --password-file can be read only once.
  std::optional<std::optional<pkcs12::SecureString>> password_read;
};

// Adds the password options and --max-iterations.
void add_p12_input_options(CLI::App* cmd, P12Args& args);

// Decodes `bytes` (read from `name`); messages name the file and say what to do. Reads the
// password on the first call and keeps it in `args` for the next inputs.
Result<pkcs12::Bundle> open_p12(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                P12Args& args, Terminal& term);

// True when bytes look like a PKCS#12 PFX (a SEQUENCE starting with INTEGER 3).
bool looks_like_p12(const std::vector<std::uint8_t>& bytes);

}  // namespace getcert::cli
