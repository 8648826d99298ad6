// `getcert fetch HOST[:PORT]...` (also `getcert HOST[:PORT]...`): dial, capture, verify, render.

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>

#include "builtin_key_methods.hpp"
#include "command.hpp"
#include "exit_codes.hpp"
#include "fleet.hpp"
#include "getcert/fetch.hpp"
#include "getcert/starttls.hpp"
#include "getcert/text.hpp"
#include "input_file.hpp"
#include "internal/try.hpp"
#include "p12_input.hpp"
#include "render.hpp"
#include "render_csv.hpp"
#include "render_format.hpp"
#include "report.hpp"
#include "safe_file.hpp"
#include "step_log.hpp"
#include "time_args.hpp"
#include "verify_args.hpp"

namespace getcert::cli {
namespace {

enum class Select { presented, leaf, intermediates, root, verified, fullchain };
using Format = OutputFormat;

struct FetchArgs {
  std::vector<std::string> targets;
  std::string timeout = "10s";
  std::string connect_timeout = "5s";
  std::string sni;
  bool no_sni = false;
  std::string alpn;
  VerifyArgs verify;
  bool insecure = false;
  Select select = Select::presented;
  Format format = Format::pem;
  std::string out_dir;
  bool force = false;
  StartTls starttls = StartTls::none;
  std::string starttls_name;
  std::string proxy;
  std::string resolver;
  std::string tls_min;
  std::string tls_max;
  std::string client_cert;
  std::string client_key;
  std::string client_p12;
  P12Args client_p12_args;  // only its password options are offered
  FleetArgs fleet;
};

const std::map<std::string, TlsVersion>& tls_version_names() {
  static const std::map<std::string, TlsVersion> names{{"1.0", TlsVersion::tls1_0},
                                                       {"1.1", TlsVersion::tls1_1},
                                                       {"1.2", TlsVersion::tls1_2},
                                                       {"1.3", TlsVersion::tls1_3}};
  return names;
}

std::optional<TlsVersion> tls_version_arg(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return tls_version_names().at(text);  // CLI11 admitted only the names in the map
}

// The STARTTLS option, its help and its checks read the library's table (getcert/starttls.hpp).

// Default port of each STARTTLS protocol, used when the target names none.
std::uint16_t default_port(StartTls protocol) {
  const StartTlsProtocol* p = find_starttls(protocol);
  return p != nullptr ? p->default_port : 443;
}

// The protocols whose preamble announces a name (--starttls-name).
bool announces_name(StartTls protocol) {
  const StartTlsProtocol* p = find_starttls(protocol);
  return p != nullptr && p->announces_name;
}

// "smtp, lmtp, xmpp and xmpp-server": the protocols that announce a name, for messages.
std::string name_announcing_protocols() {
  std::vector<std::string> names;
  for (const auto& p : starttls_protocols()) {
    if (p.announces_name) names.emplace_back(p.spelling);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return out;
}

// --starttls's help: every protocol with its default port.
std::string starttls_help() {
  std::string ports;
  for (const auto& p : starttls_protocols()) {
    if (!ports.empty()) ports += ", ";
    ports += std::string(p.spelling) + " " + std::to_string(p.default_port);
    if (!p.aka.empty()) ports += " (" + std::string(p.aka) + ")";
  }
  return "Speak this protocol in plain text first, then switch to TLS (default port: " + ports +
         ")";
}

// --starttls's choices, by the spelling the table gives.
std::map<std::string, StartTls> starttls_choices() {
  std::map<std::string, StartTls> choices;
  for (const auto& p : starttls_protocols()) choices.emplace(p.spelling, p.protocol);
  return choices;
}

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const auto end = comma == std::string::npos ? list.size() : comma;
    if (end > start) out.push_back(list.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The certificates --select asks for, or an error when they cannot be known.
Result<std::vector<Certificate>> select_certificates(const FetchResult& r, Select select) {
  const auto& verified = r.verification.verified_chain;
  auto need_verified = [&]() -> Result<void> {
    if (!verified.empty()) return {};
    std::string why = r.verification.errors.empty() ? std::string("verification failed")
                                                    : r.verification.errors.front().reason;
    return fail(Errc::verification_failed,
                "no verified chain, so no trust anchor can be named (" + why + ")");
  };
  switch (select) {
    case Select::presented:
      return r.presented_chain;
    case Select::leaf:
      return std::vector<Certificate>{r.presented_chain.front()};
    case Select::intermediates:
      if (r.presented_chain.empty()) return std::vector<Certificate>{};
      return intermediates_only({r.presented_chain.begin() + 1, r.presented_chain.end()});
    case Select::root:
      GETCERT_TRY(need_verified());
      return std::vector<Certificate>{verified.back()};
    case Select::verified:
      GETCERT_TRY(need_verified());
      return verified;
    case Select::fullchain:
      GETCERT_TRY(need_verified());
      return full_chain(r.verification);
  }
  return r.presented_chain;
}

std::string role_of(const Certificate& c) {
  if (!c.is_ca) return "leaf";
  return c.self_signed ? "root" : "intermediate";
}

std::vector<PendingFile> out_dir_files(const std::string& dir,
                                       const std::vector<Certificate>& certs) {
  std::vector<PendingFile> files;
  for (std::size_t i = 0; i < certs.size(); ++i) {
    std::string index = (i < 10 ? "0" : "") + std::to_string(i);
    files.push_back(
        {join_path(dir, index + "-" + role_of(certs[i]) + ".pem"), certs[i].pem(), 0644});
  }
  files.push_back({join_path(dir, "chain.pem"), to_pem(certs), 0644});
  return files;
}

class FetchCommand final : public Command {
 public:
  std::string_view name() const override { return "fetch"; }
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(std::string(name()),
                                       "Fetch and verify the chain a TLS server presents "
                                       "(the default: 'getcert HOST' = 'getcert fetch HOST')");
    cmd->add_option("targets", args_.targets,
                    "HOST, HOST:PORT, [IPv6]:PORT, bare IP, or https://HOST[:PORT]/path "
                    "(port defaults to 443)");
    add_fleet_options(cmd, args_.fleet);
    add_output_option(
        cmd, args_.format,
        {Format::pem, Format::der, Format::json, Format::text, Format::prometheus, Format::csv},
        "Output format: pem (default), der, json, text, prometheus, csv (a header "
        "row, then one row per target: input, host, port, address, ok, verdict, "
        "problems, tls_version, cipher, subject_cn, issuer_cn, not_before, "
        "not_after, days_left, sha256, error)");
    with_choices(
        cmd->add_option("--select", args_.select,
                        "Which certificates: presented (default, as sent), leaf, intermediates, "
                        "root (trust anchor of the verified chain), verified (leaf..anchor), "
                        "fullchain (leaf + intermediates: what the server should send)"),
        std::map<std::string, Select>{{"presented", Select::presented},
                                      {"leaf", Select::leaf},
                                      {"intermediates", Select::intermediates},
                                      {"root", Select::root},
                                      {"verified", Select::verified},
                                      {"fullchain", Select::fullchain}});
    cmd->add_option("--timeout", args_.timeout,
                    "Overall limit for resolve + connect + handshake (default 10s)");
    cmd->add_option("--connect-timeout", args_.connect_timeout,
                    "Limit per address tried (default 5s)");
    cmd->add_option("--sni", args_.sni, "Server name to send (default: the host, never an IP)");
    cmd->add_flag("--no-sni", args_.no_sni, "Send no server name")->excludes("--sni");
    cmd->add_option("--alpn", args_.alpn, "Offer ALPN protocols, e.g. h2,http/1.1");
    cmd->add_option(
        "--proxy", args_.proxy,
        "Connect through this proxy: http://[user:password@]host:port (HTTP CONNECT), "
        "socks5://[user:password@]host:port (SOCKS5, getcert resolves the target) or socks5h://... "
        "(the proxy resolves it); AIA/OCSP/CRL downloads use it too (environment variables are "
        "not used)");
    resolver_ = cmd->add_option(
        "--resolver", args_.resolver,
        "Send the name lookups of the target and the proxy to this DNS server: ADDR[:PORT] "
        "(192.0.2.53, 192.0.2.53:5353, [2001:db8::53]:53; port 53 by default); /etc/hosts is "
        "still read first (default: the servers of /etc/resolv.conf; AIA/OCSP/CRL downloads "
        "always use those)");
    cmd->add_option("--tls-min", args_.tls_min,
                    "Lowest TLS version to accept: 1.0, 1.1, 1.2 or 1.3 (default 1.0)")
        ->check(CLI::IsMember(std::vector<std::string>{"1.0", "1.1", "1.2", "1.3"}));
    cmd->add_option("--tls-max", args_.tls_max,
                    "Highest TLS version to offer: 1.0, 1.1, 1.2 or 1.3 (default 1.3)")
        ->check(CLI::IsMember(std::vector<std::string>{"1.0", "1.1", "1.2", "1.3"}));
    auto* client_cert = cmd->add_option(
        "--client-cert", args_.client_cert,
        "Offer this client certificate (PEM, optionally followed by its chain) when the server "
        "asks for one; needs --client-key");
    auto* client_key = cmd->add_option("--client-key", args_.client_key,
                                       "The --client-cert's private key (unencrypted PEM)");
    auto* client_p12 = cmd->add_option(
        "--client-p12", args_.client_p12,
        "Offer the certificate, chain and key of this PKCS#12 file when the server asks for a "
        "client certificate (password: --password-file, --password-env, --password-stdin, or "
        "a prompt)");
    client_cert->needs(client_key);
    client_key->needs(client_cert);
    client_p12->excludes(client_cert)->excludes(client_key);
    add_password_options(cmd, args_.client_p12_args.password, "the --client-p12 password");
    with_choices(cmd->add_option("--starttls", args_.starttls, starttls_help()),
                 starttls_choices());
    starttls_name_ =
        cmd->add_option(
               "--starttls-name", args_.starttls_name,
               "The name the STARTTLS preamble announces: the XMPP domain (default: the "
               "host; needed for an IP address) and the SMTP EHLO / LMTP LHLO name (default: the "
               "local "
               "address, e.g. [192.0.2.1]); changes neither SNI nor the verified name (--sni does)")
            ->needs("--starttls");
    add_verify_options(cmd, args_.verify, /*online=*/true);
    cmd->add_flag("-k,--insecure", args_.insecure,
                  "Output the chain even when verification fails (exit 0; the verdict is still "
                  "reported on stderr and in JSON)");
    cmd->add_option("--out-dir", args_.out_dir,
                    "Also write NN-leaf.pem, NN-intermediate.pem, ... and chain.pem here");
    cmd->add_flag("--force", args_.force, "Replace existing files in --out-dir");
    cmd->footer(
        "Examples:\n"
        "  getcert example.com                      PEM chain as presented\n"
        "  getcert example.com:8443 -o text         readable report\n"
        "  getcert --select root grpc.internal:443 > roots.pem   gRPC pem_root_certs\n"
        "  getcert https://[::1]:8443/ --ca-file ca.pem -o json\n"
        "  getcert --starttls smtp mail.example.com:587 -o text");
    return cmd;
  }

  int run(Terminal& term, const GlobalOptions& global) override {
    // Before any key is decoded, and before threads start.
    const KeyMethods& keys = use_builtin_key_methods();
    spdlog::debug("keys are decoded and checked by {}", keys.description);
    auto options = build_options();
    if (!options) return report_error(term, global, options.error());
    auto identity = load_client_identity(term);
    if (!identity) return report_error(term, global, identity.error());
    options->connect.client_identity = std::move(*identity);
    if (args_.targets.empty() && args_.fleet.target_files.empty()) {
      return report_error(
          term, global,
          Error(Errc::invalid_argument, "no target: name HOST[:PORT] or give --targets-file FILE"));
    }
    if (args_.format == Format::der && args_.select != Select::leaf &&
        args_.select != Select::root) {
      return report_error(term, global,
                          Error(Errc::invalid_argument,
                                "-o der holds exactly one certificate: add --select leaf or "
                                "--select root (or use -o pem)"));
    }
    if (args_.format == Format::der && term.stdout_is_tty && args_.out_dir.empty()) {
      return report_error(term, global,
                          Error(Errc::invalid_argument,
                                "refusing to write binary DER to a terminal; redirect stdout"));
    }
    // Every target is parsed before the first packet is sent.
    std::vector<Endpoint> endpoints;
    for (const auto& t : args_.targets) {
      auto ep = parse_endpoint(t, default_port(args_.starttls));
      if (!ep) return report_error(term, global, ep.error());
      endpoints.push_back(*ep);
    }
    // --out-dir is created with the first files written into it, so that a run that writes
    // nothing (an unreachable host, a full disk) leaves no empty folder behind.
    if (auto ok = check_out_dir(); !ok) return report_error(term, global, ok.error());
    const bool several = is_fleet_run(args_.fleet, endpoints.size());
    if (args_.fleet.baseline && args_.format != Format::json && args_.format != Format::csv &&
        args_.format != Format::prometheus) {
      return report_error(term, global,
                          Error(Errc::invalid_argument,
                                "--baseline reports changes in -o json, -o csv or -o prometheus"));
    }
    if (several && !args_.out_dir.empty()) {
      for (std::size_t i = 0; i < endpoints.size(); ++i) {
        if (auto ok = claim_folder(args_.targets[i], endpoints[i], i); !ok) {
          return report_error(term, global, ok.error());
        }
      }
    }
    // Prometheus and CSV are whole documents (families, a header row), so even one target goes
    // through the fleet run that writes them.
    if (several || args_.format == Format::prometheus || args_.format == Format::csv) {
      FleetRun fleet{
          args_.targets,
          args_.fleet,
          *options,
          default_port(args_.starttls),
          args_.format == Format::prometheus                            ? FleetOutput::prometheus
          : args_.format == Format::pem || args_.format == Format::text ? FleetOutput::blocks
                                                                        : FleetOutput::stream,
          [&](Terminal& out, const ManyResult& r, const Change* change) {
            return render_one(out, global, r.input, r.endpoint, r.result, *options, true, r.index,
                              change);
          },
          // --out-dir files are checked for existence, then written: one target at a time.
          args_.out_dir.empty(),
          {},
          args_.format == Format::csv ? csv_header(args_.fleet.baseline.has_value())
                                      : std::string(),
          [this](Terminal& out, const GoneEntry& gone) {
            if (args_.format == Format::csv) {
              out.out << csv_gone_row(gone);
            } else if (args_.format == Format::json) {
              Json j{{"schema", kJsonSchema}, {"input", gone.input}, {"change", "gone"}};
              if (!gone.previous_sha256.empty()) j["previous_sha256"] = gone.previous_sha256;
              out.out << json_text(j, false) << "\n";
            }
          }};
      if (!args_.out_dir.empty()) {
        // Targets from lists claim their folder in input order, as they are taken: of two that
        // need one folder, the later always fails (exit 2), whichever finishes first.
        fleet.on_next = [this](std::uint64_t index, const std::string& target) {
          if (index < args_.targets.size()) return;  // claimed above
          auto endpoint = parse_endpoint(target, default_port(args_.starttls));
          if (endpoint) (void)claim_folder(target, *endpoint, index);
        };
      }
      return run_fleet(term, global, fleet);
    }

    int exit_code = kExitOk;
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
      const int rc = run_one_contained(term, global, args_.targets[i], endpoints[i], *options,
                                       endpoints.size() > 1);
      if (exit_code == kExitOk) exit_code = rc;
    }
    return exit_code;
  }

 private:
  Result<FetchOptions> build_options() {
    GETCERT_TRY_ASSIGN(auto settings, build_verify_settings(args_.verify, /*online=*/true));
    settings_ = settings;
    FetchOptions o;
    o.verify = settings_.options;
    GETCERT_TRY_ASSIGN(auto timeout,
                       parse_duration("--timeout", args_.timeout, std::chrono::seconds(1)));
    auto connect =
        parse_duration("--connect-timeout", args_.connect_timeout, std::chrono::seconds(1));
    if (!connect) return tl::unexpected(connect.error());
    if (timeout.count() == 0 || connect->count() == 0) {
      return fail(Errc::invalid_argument, "timeouts must be greater than zero");
    }
    o.connect.timeout = timeout;
    o.connect.connect_timeout = *connect;
    if (!args_.sni.empty()) o.connect.sni = args_.sni;
    o.connect.send_sni = !args_.no_sni;
    o.connect.alpn = split_commas(args_.alpn);
    o.connect.starttls = args_.starttls;
    if (starttls_name_->count() > 0 && args_.starttls_name.empty()) {
      return fail(Errc::invalid_argument, "--starttls-name needs a name");
    }
    if (!args_.starttls_name.empty() && !announces_name(args_.starttls)) {
      return fail(Errc::invalid_argument,
                  "--starttls-name is used only by --starttls " + name_announcing_protocols());
    }
    o.connect.starttls_name = args_.starttls_name;
    o.connect.proxy = args_.proxy;
    if (resolver_->count() > 0 && args_.resolver.empty()) {
      // Empty means "the system's servers" to the library: given on purpose, it is a mistake
      // (an unset variable in `--resolver "$DNS"`), not a wish for the default.
      return fail(Errc::invalid_argument,
                  "--resolver needs a DNS server (ADDR[:PORT]); leave it out to use the servers "
                  "of /etc/resolv.conf");
    }
    GETCERT_TRY(check_resolver(args_.resolver));
    o.connect.resolver = args_.resolver;
    o.connect.tls_min = tls_version_arg(args_.tls_min);
    o.connect.tls_max = tls_version_arg(args_.tls_max);
    return o;
  }

  // The identity --client-cert/--client-key or --client-p12 name, read once for every target.
  Result<std::optional<ClientIdentity>> load_client_identity(Terminal& term) {
    auto text_of = [&term](const std::string& path) -> Result<std::string> {
      GETCERT_TRY_ASSIGN(auto bytes, read_input(path, term));
      return std::string(bytes.begin(), bytes.end());
    };
    if (!args_.client_cert.empty()) {
      GETCERT_TRY_ASSIGN(auto cert, text_of(args_.client_cert));
      GETCERT_TRY_ASSIGN(auto key_bytes, read_input(args_.client_key, term));
      Secret key(
          std::string_view(reinterpret_cast<const char*>(key_bytes.data()), key_bytes.size()));
      secure_wipe(key_bytes.data(), key_bytes.size());
      return ClientIdentity{std::move(cert), std::move(key)};
    }
    if (args_.client_p12.empty()) return std::nullopt;
    GETCERT_TRY_ASSIGN(auto bytes, read_input(args_.client_p12, term));
    GETCERT_TRY_ASSIGN(auto bundle, open_p12(bytes, args_.client_p12, args_.client_p12_args, term));
    for (const auto& id : bundle.identities) {
      if (!id.leaf) continue;
      // The server has the root already; sending it only costs bytes.
      return ClientIdentity{to_pem(leaf_plus_intermediates(*id.leaf, id.chain)), id.key.pem()};
    }
    return fail(Errc::malformed_input,
                args_.client_p12 +
                    ": holds no private key with its certificate, so it cannot "
                    "serve as a client identity");
  }

  // One target's failure, however unexpected, is that target's error: the others still run.
  int run_one_contained(Terminal& term, const GlobalOptions& global, const std::string& input,
                        const Endpoint& endpoint, const FetchOptions& options, bool several) {
    try {
      return run_one(term, global, input, endpoint, options, several);
    } catch (const std::exception& e) {
      const Error error(Errc::internal, std::string("cannot report this target: ") + e.what());
      const int rc = exit_code_for(error.code);
      if (args_.format == Format::json) {
        term.out << json_text(error_json(input, error, rc), false) << "\n";
      }
      return report_error(term, global, error, endpoint.to_string());
    }
  }

  int run_one(Terminal& term, const GlobalOptions& global, const std::string& input,
              const Endpoint& endpoint, const FetchOptions& options, bool several) {
    const auto started = std::chrono::steady_clock::now();
    const std::string where = endpoint.to_string();
    FetchOptions logged = options;
    if (global.verbosity > 0) {
      logged.on_step = [&where](const StepTiming& step) { log_step(where, step); };
    }
    auto result = fetch(endpoint, logged);
    spdlog::debug("{}: fetch took {} ms", where,
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count());
    return render_one(term, global, input, endpoint, result, options, several);
  }

  // Everything a run shows for one target's result; returns that target's exit code.
  int render_one(Terminal& term, const GlobalOptions& global, const std::string& input,
                 const Endpoint& endpoint, const Result<FetchResult>& result,
                 const FetchOptions& options, bool several,
                 std::optional<std::uint64_t> index = std::nullopt,
                 const Change* change = nullptr) {
    const std::int64_t now = options.verify.at_time.value_or(std::time(nullptr));
    if (args_.format == Format::csv) term.out << csv_row(input, endpoint, result, now, change);
    if (!result) {
      const int rc = exit_code_for(result.error().code);
      if (args_.format == Format::json) {
        Json report = error_json(input, result.error(), rc);
        add_change(report, change);
        term.out << json_text(report, false) << "\n";
      }
      return report_error(term, global, result.error());
    }
    const bool verified = result->verification.ok;
    // The chain a server should send is known when only the server's chain was at fault
    // (completed via AIA or from the store): that is when its admin needs it most.
    const Verdict verdict = result->verification.verdict;
    const bool fix_known =
        args_.select == Select::fullchain &&
        (verdict == Verdict::valid_only_with_aia_fetch || verdict == Verdict::incomplete_chain);
    const bool deliver = verified || args_.insecure || fix_known;
    const std::string where = endpoint.to_string();

    if (term.stderr_is_tty && !global.quiet) term.err << verdict_line(*result, now) << "\n";
    print_verdict_messages(term, where, result->verification, args_.insecure, global.verbosity > 0);
    if (!verified && !fix_known) {
      if (!args_.insecure && args_.format != Format::json && args_.format != Format::text &&
          args_.format != Format::prometheus && args_.format != Format::csv) {
        term.err << "getcert: hint: nothing was written; use --insecure to get the chain "
                    "anyway, or --ca-file if the server uses a private CA\n";
      }
    }

    // Reports always go out: they carry the verdict.
    if (args_.format == Format::json) {
      const bool pretty = term.stdout_is_tty && !several;
      Json report = fetch_json(*result, now, global.verbosity > 0);
      report["input"] = input;  // the target as written, as error objects carry it
      add_change(report, change);
      term.out << json_text(report, pretty) << "\n";
    } else if (args_.format == Format::text) {
      term.out << fetch_text(*result, now) << (several ? "\n" : "");
    }

    const bool wants_certs =
        args_.format == Format::pem || args_.format == Format::der || !args_.out_dir.empty();
    if (wants_certs && deliver) {
      auto selected = select_certificates(*result, args_.select);
      if (!selected) {
        report_error(term, global, selected.error(), where);
        return kExitVerify;
      }
      if (args_.format == Format::pem) {
        term.out << to_pem(*selected);
      } else if (args_.format == Format::der && !selected->empty()) {
        const auto& der = selected->front().der;
        term.out.write(reinterpret_cast<const char*>(der.data()),
                       static_cast<std::streamsize>(der.size()));
      }
      if (!args_.out_dir.empty()) {
        std::vector<std::string> directories{args_.out_dir};
        if (several) {
          if (auto ok = owns_folder(input, endpoint, index); !ok) {
            return report_error(term, global, ok.error());
          }
          directories.push_back(folder_of(endpoint));
        }
        if (auto ok = write_files_atomically(out_dir_files(directories.back(), *selected),
                                             args_.force, directories);
            !ok) {
          return report_error(term, global, ok.error());
        }
      }
    }
    term.out.flush();
    if (!deliver || (!verified && !args_.insecure)) return kExitVerify;
    const auto& chain = result->verification.verified_chain.empty()
                            ? result->presented_chain
                            : result->verification.verified_chain;
    return check_expiry(term, where, chain, now, settings_, args_.verify.expires_in);
  }

  // --baseline: what changed, and the baseline's leaf when it had one.
  static void add_change(Json& report, const Change* change) {
    if (change == nullptr) return;
    report["change"] = std::string(to_string(change->kind));
    if (!change->previous_sha256.empty()) report["previous_sha256"] = change->previous_sha256;
    if (!change->previous_input.empty()) report["previous_input"] = change->previous_input;
  }

  // --out-dir, when it exists already, must be a folder: found before any packet is sent.
  Result<void> check_out_dir() const {
    if (args_.out_dir.empty()) return {};
    struct stat st {};
    if (::stat(args_.out_dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      return fail(Errc::io_error, "'" + args_.out_dir + "' exists and is not a directory");
    }
    return {};
  }

  // The subfolder of --out-dir for one of several targets.
  std::string folder_of(const Endpoint& endpoint) const {
    return join_path(args_.out_dir, endpoint.host + "_" + std::to_string(endpoint.port));
  }

  // Records that the target at `index` (input order) needs its folder; a usage error when an
  // earlier target needs the same one (localhost:8443 and https://localhost:8443/x).
  Result<void> claim_folder(const std::string& input, const Endpoint& endpoint,
                            std::uint64_t index) {
    const std::lock_guard<std::mutex> lock(folders_mutex_);
    const auto [it, fresh] = folder_owner_.emplace(folder_of(endpoint), Claim{index, input});
    if (fresh || it->second.index == index) return {};
    return folder_clash(it->second.input, input, it->first);
  }

  // Whether the target at `index` is the one its folder was claimed for.
  Result<void> owns_folder(const std::string& input, const Endpoint& endpoint,
                           std::optional<std::uint64_t> index) {
    const std::lock_guard<std::mutex> lock(folders_mutex_);
    const auto found = folder_owner_.find(folder_of(endpoint));
    if (!index || found == folder_owner_.end() || found->second.index == *index) return {};
    return folder_clash(found->second.input, input, found->first);
  }

  static Result<void> folder_clash(const std::string& first, const std::string& second,
                                   const std::string& folder) {
    return fail(Errc::invalid_argument,
                "'" + first + "' and '" + second + "' would both be written to '" + folder +
                    "'; nothing was written for '" + second + "' (list each server once)");
  }

  struct Claim {
    std::uint64_t index;
    std::string input;
  };

  FetchArgs args_;
  VerifySettings settings_;
  std::mutex folders_mutex_;
  std::map<std::string, Claim> folder_owner_;  // --out-dir subfolder -> first target needing it
  CLI::Option* starttls_name_ = nullptr;
  CLI::Option* resolver_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> make_fetch_command() { return std::make_unique<FetchCommand>(); }

}  // namespace getcert::cli
