// `getcert serve`: a Prometheus exporter. /probe?target=T&module=M answers the metric families
// of `-o prometheus` for one target, as blackbox_exporter's /probe does (see
// docs/exporter.md). The server itself lives in exporter/ and runs in getcert-serve; this file
// is its command line, which both executables parse (serve.hpp).

#include <utility>

#include "command.hpp"
#include "exit_codes.hpp"
#include "report.hpp"
#include "serve.hpp"

namespace getcert::cli {
namespace {

// The default port: see docs/exporter.md ("Port") for why this one.
constexpr const char* kDefaultListen = ":9798";

class ServeCommand final : public Command {
 public:
  explicit ServeCommand(ServeRunner runner) : runner_(std::move(runner)) {}
  std::string_view name() const override { return "serve"; }
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        std::string(name()),
        "Run a Prometheus exporter: GET /probe?target=HOST:PORT&module=NAME answers the "
        "certificate metrics of that target (blackbox_exporter's contract)");
    cmd->add_option("--config", config_,
                    "YAML file of modules and the target allow list (default: one module, "
                    "'default', and no allow list)");
    cmd->add_option("--listen", listen_,
                    std::string("Address to listen on: HOST:PORT, [IPv6]:PORT or :PORT (default ") +
                        kDefaultListen + ")");
    cmd->add_flag("--check-config", check_only_,
                  "Check the config (and --web-config-file) and exit: 0 when good, 2 with the "
                  "file, line and key of the first problem");
    cmd->add_option("--max-concurrent-probes", max_probes_,
                    "Probes run at once; past this a probe request gets 503 (default 64)")
        ->check(CLI::Range(1, 4096));
    cmd->add_option("--log-format", log_format_, "Log lines on stderr: text (default) or json")
        ->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("--web-config-file,--web.config.file", web_config_,
                    "exporter-toolkit web config: listener TLS (tls_server_config) and basic "
                    "auth with bcrypt hashes (basic_auth_users)");
    cmd->add_flag("--web.enable-lifecycle,--enable-lifecycle", enable_lifecycle_,
                  "Allow POST /-/reload (off by default, as in Prometheus: each reload re-reads "
                  "every key store, so anyone who can reach the port could keep the CPU busy); "
                  "SIGHUP reloads either way");
    cmd->footer(
        "Endpoints: /probe?target=T&module=M, /metrics (the exporter's own), / (modules and "
        "recent probes),\n  POST /-/reload (with --web.enable-lifecycle; SIGHUP always), "
        "/-/healthy. SIGTERM finishes the "
        "probes in flight, then exits.\n"
        "Targets: HOST[:PORT], [IPv6]:PORT, or file:///path/glob* (PEM, DER, PKCS#12, JKS).\n"
        "Exit codes: 0 stopped, 2 bad config or option, 3 cannot listen, 12 not in this build.\n"
        "Examples:\n"
        "  getcert serve --config /etc/getcert/exporter.yml\n"
        "  getcert serve --config exporter.yml --check-config\n"
        "  curl 'http://localhost:9798/probe?target=example.com:443&module=default'");
    return cmd;
  }

  int run(Terminal& term, [[maybe_unused]] const GlobalOptions& global) override {
    if (!runner_) {
      report_line(term, "error",
                  "this getcert was built without 'serve' (the static build cannot link "
                  "libsystemd); use the distribution package or a regular build");
      return kExitUnavailable;
    }
    ServeOptions options;
    options.config_path = config_;
    options.listen = listen_;
    options.max_concurrent_probes = max_probes_;
    options.log_json = log_format_ == "json";
    options.web_config_path = web_config_;
    options.check_only = check_only_;
    options.enable_lifecycle = enable_lifecycle_;
    return runner_(options, term);
  }

 private:
  ServeRunner runner_;
  std::string config_;
  std::string listen_ = kDefaultListen;
  bool check_only_ = false;
  bool enable_lifecycle_ = false;
  std::size_t max_probes_ = 64;
  std::string log_format_ = "text";
  std::string web_config_;
};

}  // namespace

std::unique_ptr<Command> make_serve_command(ServeRunner runner) {
  return std::make_unique<ServeCommand>(std::move(runner));
}

}  // namespace getcert::cli
