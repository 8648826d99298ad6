// `getcert show FILE...`: inspect local certificates (PEM, DER, PKCS#7, PKCS#12) with the same
// model, renderings and verdicts as fetch, offline unless asked otherwise.

#include <ctime>

#include "command.hpp"
#include "exit_codes.hpp"
#include "getcert/text.hpp"
#include "input_file.hpp"
#include "internal/try.hpp"
#include "p12_input.hpp"
#include "render.hpp"
#include "render_format.hpp"
#include "report.hpp"
#include "verify_args.hpp"

namespace getcert::cli {
namespace {

struct Loaded {
  std::string format;              // "pem", "der", "pkcs7", "pkcs12"
  std::vector<Certificate> certs;  // leaf first when the format says which one it is
};

class ShowCommand final : public Command {
 public:
  std::string_view name() const override { return "show"; }
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        std::string(name()),
        "Inspect local certificate files: PEM, DER, PKCS#7, PKCS#12, JKS or JCEKS, also as "
        "base64 ('-' = stdin)");
    cmd->add_option("files", files_, "Files to inspect")->required();
    add_output_option(cmd, format_, {OutputFormat::text, OutputFormat::json, OutputFormat::pem},
                      "text (default), json or pem");
    cmd->add_flag("--verify", verify_, "Verify the chain (first certificate = leaf), offline");
    cmd->add_option("--host", verify_args_.hosts,
                    "With --verify: a DNS name or IP the leaf must match (repeatable: any one)");
    add_verify_options(cmd, verify_args_, /*online=*/false);
    add_p12_input_options(cmd, p12_args_);
    cmd->footer(
        "Examples:\n"
        "  getcert show cert.pem\n"
        "  getcert show fullchain.pem --verify --host api.example.com --ca-file ca.pem\n"
        "  getcert show bundle.p12 --password-env P12_PASSWORD -o json\n"
        "  kubectl get secret tls -o jsonpath='{.data.tls\\.crt}' | base64 -d | "
        "getcert show -");
    return cmd;
  }

  int run(Terminal& term, const GlobalOptions& global) override {
    auto settings = build_verify_settings(verify_args_, /*online=*/false);
    if (!settings) return report_error(term, global, settings.error());
    const bool verifying = verify_ || !verify_args_.hosts.empty() ||
                           !verify_args_.ca_file.empty() || !verify_args_.ca_dir.empty() ||
                           !verify_args_.pins.empty() || settings->expires_window.has_value();
    const std::int64_t now = settings->options.at_time.value_or(std::time(nullptr));
    int rc = kExitOk;
    for (const auto& f : files_) {
      const int one = show_one_contained(term, global, f, *settings, verifying, now);
      if (rc == kExitOk) rc = one;
    }
    return rc;
  }

 private:
  Result<Loaded> load(const std::string& file, Terminal& term) {
    GETCERT_TRY_ASSIGN(auto bytes, read_input(file, term));
    const std::string name = file == "-" ? "standard input" : file;
    if (looks_like_keystore(bytes)) {
      GETCERT_TRY_ASSIGN(
          auto store, open_keystore(bytes, name, p12_args_, term, /*list_without_password=*/true));
      // "Integrity not checked" is what a user listing a JKS without its password must see.
      if (!store.integrity_checked) {
        for (const auto& w : store.bundle.info.warnings) report_warning(term, name + ": " + w);
      }
      const auto* bundle = &store.bundle;
      Loaded out{keystore_format_name(store), {}};
      for (const auto& id : bundle->identities) {
        if (!id.leaf) continue;
        out.certs.push_back(*id.leaf);
        out.certs.insert(out.certs.end(), id.chain.begin(), id.chain.end());
      }
      out.certs.insert(out.certs.end(), bundle->extra_certs.begin(), bundle->extra_certs.end());
      if (out.certs.empty()) return fail(Errc::malformed_input, name + ": holds no certificate");
      return out;
    }
    // Base64 of a certificate file: a Kubernetes Secret's tls.crt, an Azure Key Vault secret.
    std::string wrapped;
    if (auto decoded = pkcs12::decode_base64_text(bytes)) {
      bytes = std::move(*decoded);
      wrapped = "-base64";
    }
    const bool pem =
        std::string(bytes.begin(), bytes.end()).find("-----BEGIN") != std::string::npos;
    auto certs = parse_certificates(bytes);
    if (!certs) {
      return fail(Errc::malformed_input,
                  name + ": not a certificate file (expected PEM, DER, PKCS#7 or PKCS#12)",
                  certs.error().message);
    }
    const bool single_der = !pem && certs->size() == 1;
    return Loaded{(pem ? "pem" : (single_der ? "der" : "pkcs7")) + wrapped, std::move(*certs)};
  }

  // One file's failure, however unexpected, is that file's error: the others are still shown.
  int show_one_contained(Terminal& term, const GlobalOptions& global, const std::string& file,
                         const VerifySettings& settings, bool verifying, std::int64_t now) {
    try {
      return show_one(term, global, file, settings, verifying, now);
    } catch (const std::exception& e) {
      const Error error(Errc::internal, file + ": cannot show this file: " + e.what());
      const int code = report_error(term, global, error);
      if (format_ == OutputFormat::json)
        term.out << json_text(error_json(file, error, code), false) << "\n";
      return code;
    }
  }

  int show_one(Terminal& term, const GlobalOptions& global, const std::string& file,
               const VerifySettings& settings, bool verifying, std::int64_t now) {
    auto loaded = load(file, term);
    if (!loaded) {
      const int code = report_error(term, global, loaded.error());
      if (format_ == OutputFormat::json)
        term.out << json_text(error_json(file, loaded.error(), code), false) << "\n";
      return code;
    }
    std::optional<Verification> verdict;
    if (verifying) {
      auto v = verify_chain(loaded->certs, settings.options);
      if (!v) return report_error(term, global, v.error());
      verdict = std::move(*v);
    }

    if (format_ == OutputFormat::pem) {
      term.out << to_pem(loaded->certs);
    } else if (format_ == OutputFormat::json) {
      term.out << json_text(show_json(file, loaded->format, loaded->certs, verdict, now),
                            term.stdout_is_tty && files_.size() == 1)
               << "\n";
    } else {
      term.out << show_text(file, loaded->format, loaded->certs, verdict, now);
      if (files_.size() > 1) term.out << "\n";
    }
    if (!verdict) return kExitOk;
    print_verdict_messages(term, file, *verdict, false, global.verbosity > 0);
    if (!verdict->ok) return kExitVerify;
    return check_expiry(term, file, verdict->verified_chain, now, settings,
                        verify_args_.expires_in);
  }

  std::vector<std::string> files_;
  OutputFormat format_ = OutputFormat::text;
  bool verify_ = false;
  VerifyArgs verify_args_;
  P12Args p12_args_;
};

}  // namespace

std::unique_ptr<Command> make_show_command() { return std::make_unique<ShowCommand>(); }

}  // namespace getcert::cli
