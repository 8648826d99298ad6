#pragma once

// Verification options shared by `fetch` and `show --verify`: one definition of the flags,
// their parsing, and the messages and exit codes that follow from a verdict.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli11_fwd.hpp"

#include "getcert/verify.hpp"
#include "terminal.hpp"

namespace getcert::cli {

struct VerifyArgs {
  std::string ca_file;
  std::string ca_dir;
  std::string at;
  bool at_given = false;  // set while parsing, so that an empty --at is an error, not absent
  bool no_fetch_missing = false;  // fetch: on by default
  bool fetch_missing = false;     // show: off by default (offline)
  bool check_revocation = false;
  bool require_revocation = false;
  std::vector<std::string> pins;
  std::string expires_in;
  bool expires_in_given = false;
  Purpose purpose = Purpose::server;
  std::vector<std::string> key_usages;  // --key-usage, RFC 5280 names
  std::string profile = "webpki";       // a string: CLI11 would format Profile with our to_string
  std::vector<std::string> hosts;       // --host: any one must match (fetch: instead of the target)
  std::string email;
  bool email_given = false;
  std::string max_depth;
  bool max_depth_given = false;
  std::vector<std::string> crl_files;
};

struct VerifySettings {
  VerifyOptions options;
  std::optional<std::int64_t> expires_window;  // seconds, from --expires-in
};

// `online`: the command talks to the network anyway (fetch), so fetching missing
// intermediates is on by default and switched off with --no-fetch-missing.
void add_verify_options(CLI::App* cmd, VerifyArgs& args, bool online);

Result<VerifySettings> build_verify_settings(const VerifyArgs& args, bool online);

// Warnings and (unless `insecure`) errors of a verdict, one line each on stderr; `verbose`
// (-v) adds the paths that path building rejected, each with its reason.
void print_verdict_messages(Terminal& term, const std::string& where, const Verification& v,
                            bool insecure, bool verbose);

// --expires-in: exit 6 (after a warning per certificate) when a certificate of `chain`
// expires before now + window; 0 otherwise.
int check_expiry(Terminal& term, const std::string& where, const std::vector<Certificate>& chain,
                 std::int64_t now, const VerifySettings& settings, const std::string& window_text);

}  // namespace getcert::cli
