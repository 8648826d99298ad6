#pragma once

// Opening a PKCS#12 file the way a user expects: the password from the options, else the
// empty and absent passwords, else (on a terminal) a prompt.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "getcert/keystore.hpp"
#include "getcert/pkcs12.hpp"
#include "password.hpp"
#include "terminal.hpp"

namespace getcert::cli {

struct P12Args {
  PasswordArgs password;
  std::uint64_t max_iterations = pkcs12::kDefaultMaxIterations;
  PasswordArgs key_password;  // --key-password-*: JKS/JCEKS key entries, PKCS#12 key bags
  // The passwords once open_keystore() has read them: every input of a run shares them, and
  // stdin or a pipe given to --password-file can be read only once.
  std::optional<std::optional<pkcs12::SecureString>> password_read;
  std::optional<std::optional<pkcs12::SecureString>> key_password_read;
};

// Adds the password options, the key password options and --max-iterations.
void add_p12_input_options(CLI::App* cmd, P12Args& args);

// Reads the passwords the options name (files, environment, stdin) into `args`, once.
Result<void> read_p12_passwords(P12Args& args, Terminal& term);

// True when open_p12() may still ask for a password on the terminal (no password given and
// stdin is one): such calls must run one at a time, on the caller's thread. Otherwise, once
// read_p12_passwords() succeeded, open_p12() only reads `args` and never touches `term`.
bool may_prompt(const P12Args& args, const Terminal& term);

// Decodes `bytes` (read from `name`); messages name the file and say what to do. Reads the
// passwords on the first call and keeps them in `args` for the next inputs.
Result<pkcs12::Bundle> open_p12(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                P12Args& args, Terminal& term);

// Reads any key store read_keystore() knows (PKCS#12 as DER, base64 or PEM, JKS, JCEKS).
// `list_without_password`: a JKS/JCEKS without a password is listed unverified (info, show)
// instead of failing (topem, which needs the keys).
Result<pkcs12::Keystore> open_keystore(const std::vector<std::uint8_t>& bytes,
                                       const std::string& name, P12Args& args, Terminal& term,
                                       bool list_without_password);

// True when read_keystore() would recognise the bytes (possibly inside base64 text).
bool looks_like_keystore(const std::vector<std::uint8_t>& bytes);

// The format as the reports name it: to_string(format), plus "-base64" when the store came
// wrapped in base64 text (pkcs12-base64 is that rule's most common case).
std::string keystore_format_name(const pkcs12::Keystore& store);

// True when bytes look like a PKCS#12 PFX (a SEQUENCE starting with INTEGER 3).
bool looks_like_p12(const std::vector<std::uint8_t>& bytes);

}  // namespace getcert::cli
