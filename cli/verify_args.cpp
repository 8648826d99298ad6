#include "verify_args.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

#include "command.hpp"
#include "exit_codes.hpp"
#include "getcert/endpoint.hpp"
#include "internal/try.hpp"
#include "report.hpp"
#include "time_args.hpp"

namespace getcert::cli {

void add_verify_options(CLI::App* cmd, VerifyArgs& args, bool online) {
  cmd->add_option("--ca-file", args.ca_file,
                  "Trust these PEM certificates instead of the system store");
  cmd->add_option("--ca-dir", args.ca_dir,
                  "Trust this hashed directory (openssl rehash) instead of the system store");
  // `--at ""` must be an error, not "no --at": each() runs whenever the option is given.
  cmd->add_option("--at", args.at, "Verify as of this time, e.g. 2027-03-01T00:00:00Z")
      ->each([&args](const std::string&) { args.at_given = true; });
  if (online) {
    auto* no_fetch =
        cmd->add_flag("--no-fetch-missing", args.no_fetch_missing,
                      "Do not download an intermediate the server omitted from its AIA URL");
    // Accepted for symmetry with `show`, so scripts can say what they rely on.
    cmd->add_flag("--fetch-missing", args.fetch_missing,
                  "Download an intermediate the server omitted from its AIA URL (the default)")
        ->excludes(no_fetch);
  } else {
    cmd->add_flag("--fetch-missing", args.fetch_missing,
                  "Download a missing intermediate from its AIA URL (network)");
  }
  cmd->add_flag("--check-revocation", args.check_revocation,
                "Ask each certificate's OCSP responder (else its CRL); unreachable = warning");
  cmd->add_flag("--require-revocation", args.require_revocation,
                "Like --check-revocation, but fail when revocation status cannot be established");
  cmd->add_option("--pin", args.pins,
                  "sha256/BASE64 SPKI pin (repeatable); fail unless a chain certificate matches");
  cmd->add_option("--expires-in", args.expires_in,
                  "Exit 6 when a certificate of the chain expires within this window "
                  "(e.g. 30d, 12h, 2w; a bare number is days)")
      ->each([&args](const std::string&) { args.expires_in_given = true; });
  with_choices(
      cmd->add_option("--purpose", args.purpose, "Purpose to check: server (default), client, any"),
      std::map<std::string, Purpose>{
          {"server", Purpose::server}, {"client", Purpose::client}, {"any", Purpose::any}});
  cmd->add_option("--key-usage", args.key_usages,
                  "keyUsage bits the leaf must also assert, as RFC 5280 names them "
                  "(digitalSignature, keyEncipherment, keyAgreement, ...; repeatable or "
                  "comma-separated)")
      ->delimiter(',');
  cmd->add_option("--profile", args.profile,
                  "Rules that decide the verdict: webpki (default; fails what Chromium, "
                  "Firefox, Go or rustls-webpki refuse), openssl (what gRPC C++, curl and Python "
                  "accept: CN fallback), rfc5280 (RFC 5280's MUSTs only), cabf (RFC 5280 plus "
                  "the Baseline Requirements' certificate profile, what a CA must issue)");
  if (online) {
    cmd->add_option("--host", args.hosts,
                    "Verify the leaf for this DNS name or IP instead of the target's "
                    "(repeatable: any one must match)");
  }
  cmd->add_option("--email", args.email,
                  "The email address a client certificate must hold (rfc822Name SAN)")
      ->each([&args](const std::string&) { args.email_given = true; });
  cmd->add_option("--max-depth", args.max_depth,
                  "At most N intermediate CAs between the leaf and the trust anchor")
      ->each([&args](const std::string&) { args.max_depth_given = true; });
  cmd->add_option("--crl-file", args.crl_files,
                  "Check revocation offline against the CRLs in FILE (PEM or DER; repeatable)");
}

Result<VerifySettings> build_verify_settings(const VerifyArgs& args, bool online) {
  VerifySettings s;
  VerifyOptions& o = s.options;
  o.trust.ca_file = args.ca_file;
  o.trust.ca_dir = args.ca_dir;
  o.fetch_missing = online ? !args.no_fetch_missing : args.fetch_missing;
  o.check_revocation = args.check_revocation || args.require_revocation;
  o.require_revocation = args.require_revocation;
  o.purpose = args.purpose;
  for (const auto& name : args.key_usages) {
    const auto usage = key_usage_from_string(name);
    if (!usage) {
      return fail(Errc::invalid_argument,
                  "--key-usage takes RFC 5280's names (digitalSignature, nonRepudiation, "
                  "keyEncipherment, dataEncipherment, keyAgreement, keyCertSign, cRLSign, "
                  "encipherOnly, decipherOnly), not '" +
                      name + "'");
    }
    o.key_usages.push_back(*usage);
  }
  const auto profile = profile_from_string(args.profile);
  if (!profile) {
    return fail(Errc::invalid_argument,
                "--profile takes webpki, openssl, rfc5280 or cabf, not '" + args.profile + "'");
  }
  o.profile = *profile;
  auto base64_sha256 = [](std::string_view b64) {
    // 32 bytes encode to 43 base64 characters and one '=' of padding.
    constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    return b64.size() == 44 && b64.back() == '=' &&
           b64.substr(0, 43).find_first_not_of(kAlphabet) == std::string_view::npos &&
           kAlphabet.find(b64[42]) % 4 == 0;  // the last character carries 2 zero bits
  };
  for (const auto& pin : args.pins) {
    if (pin.rfind("sha256/", 0) != 0 || !base64_sha256(std::string_view(pin).substr(7))) {
      return fail(Errc::invalid_argument,
                  "--pin takes sha256/ followed by 44 base64 characters, not '" + pin + "'");
    }
  }
  o.pins = args.pins;
  for (const auto& host : args.hosts) {
    if (!is_ip_literal(host) && !normalize_hostname(host)) {
      return fail(Errc::invalid_argument,
                  "--host takes a DNS name or an IP address, not '" + host + "'");
    }
  }
  o.names = args.hosts;
  if (args.email_given || !args.email.empty()) {
    const auto at = args.email.find('@');
    if (at == std::string::npos || at == 0 || at + 1 == args.email.size() ||
        args.email.find('@', at + 1) != std::string::npos) {
      return fail(Errc::invalid_argument,
                  "--email takes an address like user@example.com, not '" + args.email + "'");
    }
    o.email = args.email;
  }
  if (args.max_depth_given || !args.max_depth.empty()) {
    // Any count is the caller's to choose (Go and webpki take any): the path builder's own
    // budget (signature checks, build calls) still bounds the work a deep chain can cost.
    int depth = -1;
    const auto* end = args.max_depth.data() + args.max_depth.size();
    const auto [ptr, ec] = std::from_chars(args.max_depth.data(), end, depth);
    if (ec != std::errc() || ptr != end || depth < 0) {
      return fail(Errc::invalid_argument,
                  "--max-depth takes a number of intermediate CAs, 0 or more, not '" +
                      args.max_depth + "'");
    }
    o.max_depth = depth;
  }
  for (const auto& file : args.crl_files) {
    struct stat st {};
    if (file.empty() || ::stat(file.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) {
      return fail(Errc::invalid_argument, "--crl-file '" + file + "': " +
                                              (file.empty()          ? "no file named"
                                               : S_ISDIR(st.st_mode) ? "is a directory"
                                                                     : std::strerror(errno)));
    }
  }
  o.crl_files = args.crl_files;
  if (args.at_given || !args.at.empty()) {
    GETCERT_TRY_ASSIGN(auto at, parse_instant("--at", args.at));
    o.at_time = at;
  }
  if (args.expires_in_given || !args.expires_in.empty()) {
    GETCERT_TRY_ASSIGN(auto window,
                       parse_duration("--expires-in", args.expires_in, std::chrono::hours(24)));
    s.expires_window = window.count() / 1000;
  }
  return s;
}

void print_verdict_messages(Terminal& term, const std::string& where, const Verification& v,
                            bool insecure, bool verbose) {
  for (const auto& w : v.warnings) report_warning(term, where + ": " + w.message);
  if (verbose) {
    // The paths path building tried and set aside, each with the first reason against it.
    for (const auto& r : v.rejected_paths) {
      std::string names;
      for (const auto& c : r.chain) names += (names.empty() ? "" : " -> ") + c.display_name();
      const std::string why = r.problems.empty()
                                  ? std::string()
                                  : ": " + std::string(to_string(r.problems.front().code)) + ": " +
                                        r.problems.front().reason;
      report_line(term, "note", where + ": rejected path " + names + why);
    }
  }
  if (v.ok) return;
  for (const auto& e : v.errors) {
    report_line(term, insecure ? "warning" : "error", where + ": verification failed: " + e.reason);
  }
  for (const auto& a : v.accepted_by) report_line(term, "note", where + ": " + a.reason);
}

int check_expiry(Terminal& term, const std::string& where, const std::vector<Certificate>& chain,
                 std::int64_t now, const VerifySettings& settings, const std::string& window_text) {
  if (!settings.expires_window) return kExitOk;
  const std::int64_t limit = now + *settings.expires_window;
  int rc = kExitOk;
  for (const auto& c : chain) {
    if (c.not_after > limit) continue;
    const auto days = c.days_left(now);
    report_warning(
        term, where + ": certificate '" + c.display_name() + "' " +
                  (c.not_after < now
                       ? std::string("has expired")
                       : "expires in " + std::to_string(days) + (days == 1 ? " day" : " days")) +
                  " (" + format_utc(c.not_after) + "), within --expires-in " + window_text);
    rc = kExitExpiring;
  }
  return rc;
}

}  // namespace getcert::cli
