// `getcert p12 topem|info|create`: PKCS#12 files in and out, on top of getcert::pkcs12.

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "command.hpp"
#include "exit_codes.hpp"
#include "getcert/pkcs12.hpp"
#include "getcert/text.hpp"
#include "input_file.hpp"
#include "internal/try.hpp"
#include "p12_input.hpp"
#include "p12_watch.hpp"
#include "parallel_for.hpp"
#include "render_format.hpp"
#include "render_keystore.hpp"
#include "render_p12.hpp"
#include "report.hpp"
#include "safe_file.hpp"

namespace getcert::cli {
namespace {

// The subfolder for one of several inputs: the file name without its last extension, with
// every byte outside ASCII letters, digits, '-', '_' and '.' turned into '_', and leading dots
// turned into '_' as well. So the name is never empty, ".", ".." or hidden, never holds a
// separator or a control character, and the folder stays inside --out-dir.
std::string folder_name_for(const std::string& input) {
  const auto slash = input.rfind('/');
  std::string name = slash == std::string::npos ? input : input.substr(slash + 1);
  const auto dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) name.resize(dot);
  bool leading = true;
  for (char& c : name) {
    if (leading && c == '.') {
      c = '_';
      continue;
    }
    leading = false;
    const auto u = static_cast<unsigned char>(c);
    const bool safe = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
                      c == '-' || c == '_' || c == '.';
    if (!safe) c = '_';
  }
  return name.empty() ? "p12" : name;
}

// True when `path`, normalised, lies strictly inside `base`.
bool is_inside(const std::string& base, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path rel =
      fs::path(path).lexically_normal().lexically_relative(fs::path(base).lexically_normal());
  return !rel.empty() && *rel.begin() != ".." && rel != ".";
}

// Where each input's files go: `base` itself for one input, else base/<folder_name_for(input)>.
// Two inputs that would share a folder are a usage error naming both (with or without --force:
// the second would silently replace the first's files), found before anything is decoded.
Result<std::vector<std::string>> plan_directories(const std::vector<std::string>& inputs,
                                                  const std::string& base) {
  if (inputs.size() == 1) return std::vector<std::string>{base};
  std::vector<std::string> dirs;
  std::map<std::string, std::string> owner;  // folder -> input
  for (const auto& input : inputs) {
    const std::string path = join_path(base, folder_name_for(input));
    if (!is_inside(base, path)) {
      return fail(Errc::internal,
                  "output folder for " + quote_name(input) + " would leave " + quote_name(base));
    }
    const auto [it, fresh] = owner.emplace(path, input);
    if (!fresh) {
      return fail(Errc::invalid_argument,
                  quote_name(it->second) + " and " + quote_name(input) +
                      " would both be written to " + quote_name(path) +
                      "; nothing was written (rename one, or convert them in separate runs)");
    }
    dirs.push_back(path);
  }
  return dirs;
}

std::vector<Certificate> ca_certs_of(const pkcs12::Bundle& b) {
  std::vector<Certificate> out;
  std::set<std::string> seen;
  auto add = [&](const Certificate& c) {
    if (seen.insert(c.sha256).second) out.push_back(c);
  };
  for (const auto& id : b.identities) {
    for (const auto& c : id.chain) {
      if (c.self_signed) add(c);
    }
  }
  for (const auto& c : b.extra_certs) add(c);
  return out;
}

struct Converted {
  std::string input;
  pkcs12::Bundle bundle;
};

class P12Command final : public Command {
 public:
  std::string_view name() const override { return "p12"; }
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* p12 =
        app.add_subcommand(std::string(name()), "Convert, inspect and create PKCS#12 (.p12/.pfx)");
    p12->require_subcommand(1);
    p12->footer(
        "Examples:\n"
        "  getcert p12 topem bundle.p12 --password-env P12_PASSWORD --out-dir tls/\n"
        "  getcert p12 info bundle.p12 --password-file pw.txt\n"
        "  getcert p12 create --key key.pem --cert fullchain.pem -o out.p12 --password-stdin");
    add_topem(p12);
    add_info(p12);
    add_create(p12);
    return p12;
  }

  int run(Terminal& term, const GlobalOptions& global) override {
    if (topem_->parsed()) return watch_ ? run_topem_watch(term, global) : run_topem(term, global);
    if (info_->parsed()) return run_info(term, global);
    return run_create(term, global);
  }

 private:
  // ---- topem ---------------------------------------------------------------------------------
  void add_topem(CLI::App* p12) {
    topem_ = p12->add_subcommand("topem",
                                 "Write key.pem, cert.pem, chain.pem, fullchain.pem and "
                                 "ca.pem from PKCS#12 files");
    topem_
        ->add_option("files", files_,
                     "Key stores: PKCS#12 (DER, base64 or PEM), JKS, JCEKS; '-' = stdin")
        ->required();
    auto* dir = topem_->add_option("--out-dir", out_dir_,
                                   "Directory for the PEM files (default: current directory; "
                                   "one subdirectory per input when several are given)");
    auto* combined = topem_->add_option("-o,--output", combined_,
                                        "Write everything to this one PEM file instead (0600)");
    auto* to_stdout = topem_->add_flag("--stdout", to_stdout_, "Print the PEM bundle to stdout");
    dir->excludes(combined)->excludes(to_stdout);
    combined->excludes(to_stdout);
    topem_->add_option("--key-passphrase-file", key_passphrase_file_,
                       "Encrypt key.pem (PKCS#8, AES-256-CBC) with the passphrase in this file");
    topem_->add_flag("--force", force_, "Replace existing output files");
    add_p12_input_options(topem_, p12_args_);
    add_watch_options();
    topem_->footer(
        "Files (per identity; numbered key-2.pem, ... when a file holds several):\n"
        "  key.pem        private key, PKCS#8, mode 0600\n"
        "  cert.pem       the certificate matching the key\n"
        "  chain.pem      its intermediates (leaf excluded, roots excluded)\n"
        "  fullchain.pem  leaf + intermediates (what a server presents)\n"
        "  ca.pem         roots and every certificate that belongs to no key\n"
        "Examples:\n"
        "  getcert p12 topem bundle.p12 --password-env P12_PASSWORD --out-dir tls/\n"
        "  getcert p12 topem legacy.pfx --password-file pw.txt --stdout\n"
        "  getcert p12 topem tls.p12 --password-file pw --out-dir /etc/nginx/tls --watch \\\n"
        "      --exec 'nginx -s reload'");
  }

  // ---- topem --watch -------------------------------------------------------------------------
  void add_watch_options() {
    auto* watch = topem_->add_flag(
        "--watch", watch_,
        "Keep running: write the PEM files again whenever a key store (or password file) "
        "changes; a bad new version writes nothing and is reported; SIGTERM ends it");
    topem_
        ->add_option("--watch-interval", watch_interval_ms_,
                     "With --watch: how often to check the files, in milliseconds")
        ->default_val(1000)
        ->check(CLI::Range(50, 3'600'000))
        ->needs(watch);
    topem_
        ->add_option("--exec", watch_exec_,
                     "With --watch: run this shell command after each successful update, "
                     "e.g. 'systemctl reload nginx'")
        ->needs(watch);
  }

  int run_topem_watch(Terminal& term, const GlobalOptions& global) {
    if (to_stdout_) {
      return report_error(term, global,
                          Error(Errc::invalid_argument, "--watch writes files; not with --stdout"));
    }
    WatchLoopOptions loop;
    for (const auto& f : files_) {
      if (f == "-") {
        return report_error(term, global,
                            Error(Errc::invalid_argument, "--watch needs files, not stdin"));
      }
      loop.watched.push_back(f);
    }
    // A watch loop reads its inputs again and again: a FIFO or a device put in a file's place
    // would hang it or feed it without end, so it takes regular files only.
    for (auto* args : {&p12_args_.password, &p12_args_.key_password}) {
      args->regular_file_only = true;
      if (!args->file.empty()) loop.watched.push_back(args->file);
      if (!args->env.empty()) loop.hidden_env.push_back(args->env);
    }
    loop.interval = std::chrono::milliseconds(watch_interval_ms_);
    loop.exec = watch_exec_;
    loop.quiet = global.quiet;
    // The PEM files are this process's to replace from the second update on.
    const bool force_first = force_;
    bool first = true;
    return run_watch_loop(term, loop, [&] {
      force_ = first ? force_first : true;
      first = false;
      // Password files are read again (a re-issued store may come with a new password);
      // stdin can be read only once, so what it gave is kept.
      if (!p12_args_.password.from_stdin) p12_args_.password_read.reset();
      if (!p12_args_.key_password.from_stdin) p12_args_.key_password_read.reset();
      return run_topem(term, global);
    });
  }

  Result<std::vector<PendingFile>> files_for(const Converted& c, const std::string& dir,
                                             const std::optional<pkcs12::SecureString>& key_pass) {
    std::vector<PendingFile> out;
    const auto& ids = c.bundle.identities;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::string suffix = ids.size() > 1 ? "-" + std::to_string(i + 1) : "";
      const auto& id = ids[i];
      Secret key;
      if (key_pass) {
        GETCERT_TRY_ASSIGN(
            auto enc, id.key.encrypted_pem(std::string_view(key_pass->data(), key_pass->size())));
        key = std::move(enc);
      } else {
        key = id.key.pem();
      }
      out.push_back({join_path(dir, "key" + suffix + ".pem"), std::move(key), 0600});
      if (id.leaf) {
        // Roots go to ca.pem with the extra certificates.
        const auto inter = intermediates_only(id.chain);
        out.push_back({join_path(dir, "cert" + suffix + ".pem"), id.leaf->pem(), 0644});
        if (!inter.empty())
          out.push_back({join_path(dir, "chain" + suffix + ".pem"), to_pem(inter), 0644});
        out.push_back({join_path(dir, "fullchain" + suffix + ".pem"),
                       to_pem(leaf_plus_intermediates(*id.leaf, id.chain)), 0644});
      }
    }
    const auto cas = ca_certs_of(c.bundle);
    if (!cas.empty()) out.push_back({join_path(dir, "ca.pem"), to_pem(cas), 0644});
    return out;
  }

  // Holds private keys: built in wiping memory, never in a plain std::string. A key that cannot
  // be encrypted fails the whole output: leaving it out would hand over a bundle without it.
  Result<pkcs12::SecureString> combined_pem(const Converted& c,
                                            const std::optional<pkcs12::SecureString>& key_pass) {
    pkcs12::SecureString out;
    for (const auto& id : c.bundle.identities) {
      if (key_pass) {
        auto enc = id.key.encrypted_pem(std::string_view(key_pass->data(), key_pass->size()));
        if (!enc) {
          Error e = enc.error();
          e.message = c.input +
                      ": cannot encrypt a private key with --key-passphrase-file: " + e.message +
                      "; nothing was written";
          return tl::unexpected(std::move(e));
        }
        out.append(enc->data(), enc->size());
      } else {
        const auto pem = id.key.pem();
        out.append(pem.data(), pem.size());
      }
      if (id.leaf) {
        const std::string certs = to_pem(leaf_plus_intermediates(*id.leaf, id.chain));
        out.append(certs.data(), certs.size());
      }
    }
    const std::string cas = to_pem(ca_certs_of(c.bundle));
    out.append(cas.data(), cas.size());
    return out;
  }

  // Every input of topem, decoded, in input order; else the error decoding them one after the
  // other would meet first. Inputs are read in order (one may be stdin), then decoded in
  // parallel: key derivation dominates, and the files are independent. Warnings are printed in
  // input order, for the inputs before the first failure, as a sequential run prints them.
  Result<std::vector<Converted>> decode_inputs(Terminal& term) {
    const std::size_t count = files_.size();
    std::vector<std::vector<std::uint8_t>> bytes;
    std::optional<Error> read_failure;  // of input bytes.size(), when it is below count
    for (const auto& f : files_) {
      auto read = read_input(
          f, term, watch_ ? internal::FileKinds::regular : internal::FileKinds::regular_or_stream);
      if (!read) {
        read_failure = read.error();
        break;
      }
      bytes.push_back(std::move(*read));
    }
    std::vector<std::optional<Result<pkcs12::Bundle>>> bundles(bytes.size());
    if (!bytes.empty()) {
      GETCERT_TRY(read_p12_passwords(p12_args_, term));
      const auto decode_one = [&](std::size_t i) {
        try {
          bundles[i] = open_p12(bytes[i], files_[i], p12_args_, term);
        } catch (const std::exception& e) {
          bundles[i] = fail(Errc::internal, files_[i] + ": " + e.what());
        }
        return bundles[i]->has_value();
      };
      if (may_prompt(p12_args_, term)) {
        for (std::size_t i = 0; i < bytes.size() && decode_one(i); ++i) {
        }
      } else {
        parallel_for(bytes.size(), decode_one);
      }
    }
    std::vector<Converted> out;
    for (std::size_t i = 0; i < count; ++i) {
      if (i == bytes.size()) return tl::unexpected(*read_failure);
      auto& bundle = *bundles[i];
      if (!bundle) return tl::unexpected(bundle.error());
      for (const auto& w : bundle->info.warnings) report_warning(term, files_[i] + ": " + w);
      out.push_back({files_[i], std::move(*bundle)});
    }
    return out;
  }

  int run_topem(Terminal& term, const GlobalOptions& global) {
    if (files_.size() > 1 && !combined_.empty()) {
      return report_error(term, global,
                          Error(Errc::invalid_argument,
                                "-o takes one input file; use --out-dir "
                                "for several"));
    }
    std::optional<pkcs12::SecureString> key_pass;
    if (!key_passphrase_file_.empty()) {
      auto pass = read_secret_file(key_passphrase_file_);
      if (!pass) return report_error(term, global, pass.error());
      if (pass->empty()) {
        return report_error(term, global,
                            Error(Errc::invalid_argument, "the key passphrase file is empty"));
      }
      key_pass = std::move(*pass);
    }
    // Plan every output folder before decoding (a clash is a usage error, found before any
    // password prompt), decode everything before writing: one bad input means nothing is written.
    const std::string base = out_dir_.empty() ? "." : out_dir_;
    std::vector<std::string> dirs;
    if (!to_stdout_ && combined_.empty()) {
      auto planned = plan_directories(files_, base);
      if (!planned) return report_error(term, global, planned.error());
      dirs = std::move(*planned);
    }
    auto decoded = decode_inputs(term);
    if (!decoded) return report_error(term, global, decoded.error());
    std::vector<Converted> converted = std::move(*decoded);

    if (to_stdout_) {
      // Every bundle is built before the first is printed: a failure prints nothing.
      std::vector<pkcs12::SecureString> bundles;
      for (const auto& c : converted) {
        auto pem = combined_pem(c, key_pass);
        if (!pem) return report_error(term, global, pem.error());
        bundles.push_back(std::move(*pem));
      }
      for (const auto& pem : bundles) term.out << pem;
      return kExitOk;
    }
    std::vector<PendingFile> files;
    std::vector<std::string> directories;
    if (!combined_.empty()) {
      auto pem = combined_pem(converted.front(), key_pass);
      if (!pem) return report_error(term, global, pem.error());
      files.push_back({combined_, std::move(*pem), 0600});
    } else {
      directories.push_back(base);
      for (std::size_t i = 0; i < converted.size(); ++i) {
        if (dirs[i] != base) directories.push_back(dirs[i]);
        auto more = files_for(converted[i], dirs[i], key_pass);
        if (!more) return report_error(term, global, more.error());
        files.insert(files.end(), more->begin(), more->end());
      }
    }
    std::set<std::string> paths;
    for (const auto& f : files) {
      if (!paths.insert(f.path).second) {
        return report_error(term, global,
                            Error(Errc::internal, "two outputs planned for " + quote_name(f.path)));
      }
    }
    if (files.empty()) {
      return report_error(term, global,
                          Error(Errc::malformed_input, "the file holds no key and no certificate"));
    }
    if (auto ok = write_files_atomically(files, force_, directories); !ok) {
      return report_error(term, global, ok.error());
    }
    if (!global.quiet) {
      for (const auto& f : files) {
        term.err << "getcert: wrote " << escape_untrusted(f.path)
                 << (f.mode == 0600 ? " (0600)" : "") << "\n";
      }
    }
    return kExitOk;
  }

  // ---- info ----------------------------------------------------------------------------------
  void add_info(CLI::App* p12) {
    info_ = p12->add_subcommand("info",
                                "Show a PKCS#12 file's structure, algorithms and "
                                "certificates (never key material)");
    info_
        ->add_option("files", info_files_,
                     "Key stores: PKCS#12 (DER, base64 or PEM), JKS, JCEKS; '-' = stdin")
        ->required();
    add_output_option(info_, info_format_, {OutputFormat::text, OutputFormat::json},
                      "text (default) or json");
    add_p12_input_options(info_, p12_args_);
    info_->footer(
        "Examples:\n  getcert p12 info bundle.p12 --password-stdin < pw.txt\n"
        "  getcert p12 info trust.p12 --no-password -o json | jq .pkcs12.mac");
  }

  int run_info(Terminal& term, const GlobalOptions& global) {
    const std::int64_t now = std::time(nullptr);
    int rc = kExitOk;
    for (const auto& f : info_files_) {
      auto bytes = read_input(f, term);
      auto store = bytes ? open_keystore(*bytes, f, p12_args_, term, /*list_without_password=*/true)
                         : Result<pkcs12::Keystore>(tl::unexpected(bytes.error()));
      if (!store) {
        const int code = report_error(term, global, store.error());
        if (info_format_ == OutputFormat::json) {
          term.out << json_text(error_json(f, store.error(), code), false) << "\n";
        }
        if (rc == kExitOk) rc = code;
        continue;
      }
      if (info_format_ == OutputFormat::json) {
        term.out << json_text(keystore_json(f, *store, now),
                              term.stdout_is_tty && info_files_.size() == 1)
                 << "\n";
      } else {
        term.out << keystore_text(f, *store, now);
      }
    }
    return rc;
  }

  // ---- create --------------------------------------------------------------------------------
  void add_create(CLI::App* p12) {
    create_ = p12->add_subcommand("create", "Build a PKCS#12 file from a PEM key and certificates");
    create_->add_option("--key", create_key_, "Private key (PEM)")->required();
    create_->add_option("--cert", create_cert_, "Certificate (PEM); more in the file = chain")
        ->required();
    create_->add_option("--chain", create_chain_,
                        "Chain certificates (PEM), any order; repeatable");
    create_->add_option("-o,--output", create_out_, "The .p12 file to write (0600)")->required();
    create_->add_flag("--legacy", create_legacy_,
                      "3DES + SHA-1 MAC for old Windows, Java 8 and macOS importers "
                      "(default: AES-256-CBC, PBKDF2-SHA256, SHA-256 MAC)");
    create_->add_option("--name", create_name_, "friendlyName for the key and certificate");
    create_->add_option("--iterations", create_iterations_,
                        "PBE and MAC iterations (default 10000)");
    create_->add_option("--key-passphrase-file", key_passphrase_file_,
                        "Passphrase of an encrypted --key");
    create_->add_flag("--force", force_, "Replace an existing output file");
    add_password_options(create_, create_password_, "the new file's password");
    create_->footer(
        "Examples:\n"
        "  getcert p12 create --key key.pem --cert fullchain.pem -o out.p12 "
        "--password-env P12_PASSWORD\n"
        "  getcert p12 create --key k.pem --cert c.pem --chain ca.pem --legacy "
        "-o win.pfx --password-file pw");
  }

  int run_create(Terminal& term, const GlobalOptions& global) {
    auto key = read_input(create_key_, term);
    if (!key) return report_error(term, global, key.error());
    std::vector<Certificate> certs;
    std::vector<std::string> cert_files{create_cert_};
    cert_files.insert(cert_files.end(), create_chain_.begin(), create_chain_.end());
    for (const auto& f : cert_files) {
      auto bytes = read_input(f, term);
      if (!bytes) return report_error(term, global, bytes.error());
      auto parsed = parse_certificates(*bytes);
      if (!parsed) {
        Error e = parsed.error();
        e.message = f + ": " + e.message;
        return report_error(term, global, e);
      }
      certs.insert(certs.end(), parsed->begin(), parsed->end());
    }
    auto password = read_password(create_password_, term);
    if (!password) return report_error(term, global, password.error());
    if (!*password) {
      auto first = prompt_password("Password for " + create_out_ + ": ", term);
      if (!first) return report_error(term, global, first.error());
      auto again = prompt_password("Repeat the password: ", term);
      if (!again) return report_error(term, global, again.error());
      if (*first != *again) {
        return report_error(term, global, Error(Errc::invalid_argument, "passwords differ"));
      }
      *password = std::move(*first);
    }
    pkcs12::CreateOptions options;
    options.password = **password;
    options.legacy = create_legacy_;
    options.friendly_name = create_name_;
    options.iterations = create_iterations_;
    if (!key_passphrase_file_.empty()) {
      auto pass = read_secret_file(key_passphrase_file_);
      if (!pass) return report_error(term, global, pass.error());
      options.key_passphrase = *pass;
    }
    const Secret key_pem(std::string_view(reinterpret_cast<const char*>(key->data()), key->size()));
    secure_wipe(key->data(), key->size());
    auto der = pkcs12::create(key_pem, certs, options);
    if (!der) {
      Error e = der.error();
      if (e.code == Errc::wrong_key_password && key_passphrase_file_.empty()) {
        e.message += "; give its passphrase with --key-passphrase-file";
      }
      return report_error(term, global, e);
    }
    const std::string_view bytes(reinterpret_cast<const char*>(der->data()), der->size());
    if (auto ok = write_files_atomically({{create_out_, bytes, 0600}}, force_); !ok) {
      return report_error(term, global, ok.error());
    }
    if (!global.quiet)
      term.err << "getcert: wrote " << escape_untrusted(create_out_) << " (0600)\n";
    return kExitOk;
  }

  CLI::App* topem_ = nullptr;
  CLI::App* info_ = nullptr;
  CLI::App* create_ = nullptr;
  P12Args p12_args_;
  std::vector<std::string> files_;
  std::string out_dir_;
  std::string combined_;
  bool to_stdout_ = false;
  std::string key_passphrase_file_;
  bool force_ = false;
  bool watch_ = false;
  int watch_interval_ms_ = 1000;
  std::string watch_exec_;
  std::vector<std::string> info_files_;
  OutputFormat info_format_ = OutputFormat::text;
  std::string create_key_;
  std::string create_cert_;
  std::vector<std::string> create_chain_;
  std::string create_out_;
  bool create_legacy_ = false;
  std::string create_name_;
  std::uint64_t create_iterations_ = 0;
  PasswordArgs create_password_;
};

}  // namespace

std::unique_ptr<Command> make_p12_command() { return std::make_unique<P12Command>(); }

}  // namespace getcert::cli
