#pragma once

// Where a secret comes from: --password-file, --password-env, --password-stdin, an interactive
// prompt, or (discouraged, visible in `ps`) --password. Secrets never reach logs or errors.

#include <optional>
#include <string>

#include "cli11_fwd.hpp"

#include "getcert/error.hpp"
#include "getcert/pkcs12.hpp"
#include "global_options.hpp"
#include "internal/read_file.hpp"
#include "terminal.hpp"

namespace getcert::cli {

struct PasswordArgs {
  std::string file;
  std::string env;
  bool from_stdin = false;
  std::optional<std::string> literal;
  bool none = false;  // --no-password: explicitly no password
  // The file must be a regular file (a watch loop, which a FIFO put in its place would hang).
  bool regular_file_only = false;
};

// Adds --password-file/--password-env/--password-stdin/--password (mutually exclusive).
// `what` names the secret in help texts ("the PKCS#12 password").
void add_password_options(CLI::App* cmd, PasswordArgs& args, const std::string& what);

// Adds --key-password-file/--key-password-env/--key-password-stdin (mutually exclusive): a key
// store's key password when it differs from the store password. With --password-stdin as well,
// the store password is stdin's first line and the key password its second.
void add_key_password_options(CLI::App* cmd, PasswordArgs& args);

// The secret the options name, or nullopt when none was given. Reads files/env/stdin now.
// A file's or stdin's single trailing newline (\n or \r\n) is dropped.
Result<std::optional<pkcs12::SecureString>> read_password(const PasswordArgs& args, Terminal& term);

// Reads a line from the controlling terminal with echo off. Fails when there is no terminal.
Result<pkcs12::SecureString> prompt_password(const std::string& prompt, Terminal& term);

// Reads a secret from a file (first line), for --key-passphrase-file.
Result<pkcs12::SecureString> read_secret_file(
    const std::string& path, internal::FileKinds kinds = internal::FileKinds::regular_or_stream);

}  // namespace getcert::cli
