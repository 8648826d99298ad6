#include "exporter/server.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <csignal>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "builtin_key_methods.hpp"
#include "exit_codes.hpp"
#include "exporter/config.hpp"
#include "exporter/http_server.hpp"
#include "exporter/log.hpp"
#include "exporter/probe.hpp"
#include "exporter/self_metrics.hpp"
#include "exporter/web_config.hpp"
#include "getcert/certificate.hpp"
#include "getcert/text.hpp"
#include "internal/try.hpp"
#include "render_prometheus_probe.hpp"

#ifdef GETCERT_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace getcert::cli::exporter {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kExposition = "text/plain; version=0.0.4; charset=utf-8";
// Threads beyond the probe bound: /metrics, /, reloads and the 503 answers keep flowing while
// every probe slot is taken.
constexpr std::size_t kSpareThreads = 8;
// glibc's malloc gives a thread that finds its arena locked another one, up to 8 per core, and
// each arena keeps the pages of what its threads freed: with 32 clients, resident memory crept
// by 4.6 MiB over 9,000 probes and had not levelled off (no leak: with one arena it stayed
// flat). A few arenas level off within the first thousand probes; more than one per core buys
// nothing, as no more threads than cores allocate at once.
constexpr unsigned kMaxMallocArenas = 4;

void bound_malloc_arenas() {
#ifdef __GLIBC__
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr) return;  // the operator's choice stands
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  (void)mallopt(M_ARENA_MAX, static_cast<int>(std::min(cores, kMaxMallocArenas)));
#endif
}

void notify_systemd([[maybe_unused]] const char* state) {
#ifdef GETCERT_HAVE_SYSTEMD
  (void)sd_notify(0, state);
#endif
}

struct RecentProbe {
  std::int64_t when = 0;
  std::string module;
  std::string target;
  bool success = false;
  std::string reason;
  double seconds = 0;
};

std::string html_escape(const std::string& text) {
  std::string out;
  for (const char c : valid_utf8(text)) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// "HOST:PORT", ":PORT" (every address) or "[V6]:PORT".
Result<std::pair<std::string, int>> parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    return fail(Errc::invalid_argument, "--listen takes HOST:PORT or :PORT, not '" + text + "'");
  }
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port_text) > 65535) {
    return fail(Errc::invalid_argument, "--listen: '" + port_text + "' is not a port number");
  }
  return std::make_pair(host, std::stoi(port_text));
}

class Exporter {
 public:
  Exporter(const ServeOptions& options, Logger& log, Config config, WebConfig web)
      : options_(options),
        log_(log),
        config_(std::make_shared<const Config>(std::move(config))),
        web_(std::move(web)) {}

  int run() {
    auto listen = parse_listen(options_.listen);
    if (!listen) {
      log_.error(listen.error().message);
      return kExitUsage;
    }
    http::ServerOptions http_options;
    http_options.workers = options_.max_concurrent_probes + kSpareThreads;
    if (web_.tls) {
      auto tls = listener_tls(web_);
      if (!tls) {
        log_.error(tls.error().message);
        return kExitUsage;
      }
      tls_.reset(*tls);
      http_options.tls = tls_.get();
    }
    server_ = std::make_unique<http::Server>(http_options);
    if (auto bound = server_->bind(listen->first, listen->second); !bound) {
      log_.error("cannot listen on " + options_.listen + ": " + bound.error().message);
      return kExitNetwork;
    }
    log_.info("listening", {{"address", options_.listen},
                            {"config", config()->path},
                            {"modules", std::to_string(config()->modules.size())},
                            {"tls", web_.tls ? "true" : "false"},
                            {"keys", use_builtin_key_methods().builtin ? "builtin" : "providers"}});
    warn_without_allow_list(*config());
    std::thread signals([this] { handle_signals(); });
    notify_systemd("READY=1");
    server_->run([this](const http::Request& req) { return route(req); },
                 [this](const http::Request* req, int status) {
                   metrics_.request(req != nullptr ? req->path : std::string(), status);
                 });
    stop_signals_.store(true);
    pthread_kill(signals.native_handle(), SIGUSR1);
    signals.join();
    log_.info("stopped", {});
    return kExitOk;
  }

 private:
  struct FreeContext {
    void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
  };

  // The listener's TLS: the web config's certificate chain and key, and with client_ca_file a
  // client certificate that chains to it is required. TLS 1.2 and later.
  static Result<SSL_CTX*> listener_tls(const WebConfig& web) {
    std::unique_ptr<SSL_CTX, FreeContext> ctx(SSL_CTX_new(TLS_server_method()));
    const auto failed = [](const std::string& what) {
      ERR_clear_error();
      return fail(Errc::invalid_argument, "web config: " + what);
    };
    if (!ctx) return failed("cannot make a TLS context");
    (void)SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
    SSL_CTX_set_options(ctx.get(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE |
                                    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), web.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx.get(), web.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx.get()) != 1) {
      return failed("cannot load the listener's certificate or key");
    }
    if (!web.client_ca_file.empty()) {
      if (SSL_CTX_load_verify_locations(ctx.get(), web.client_ca_file.c_str(), nullptr) != 1) {
        return failed("cannot load client_ca_file " + web.client_ca_file);
      }
      if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(web.client_ca_file.c_str())) {
        SSL_CTX_set_client_CA_list(ctx.get(), names);
      }
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    return ctx.release();
  }

  std::shared_ptr<const Config> config() const {
    const std::lock_guard lock(config_mutex_);
    return config_;
  }

  void warn_without_allow_list(const Config& c) {
    if (!c.allow.present) {
      log_.warn(
          "no allow list in the config: anyone who reaches this exporter can make it connect to "
          "any host and port",
          {});
    }
  }

  // SIGHUP reloads; SIGTERM and SIGINT stop after the requests in flight. The signals are
  // blocked in every thread (serve() did it before any thread started) and taken here.
  void handle_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    while (!stop_signals_.load()) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGHUP) {
        reload("SIGHUP");
      } else if (sig == SIGTERM || sig == SIGINT) {
        log_.info("stopping: finishing the probes in flight", {{"signal", strsignal(sig)}});
        notify_systemd("STOPPING=1");
        server_->stop();
      }
    }
  }

  Result<void> reload(const std::string& why) {
    notify_systemd("RELOADING=1");
    Result<Config> fresh = options_.config_path.empty() ? Result<Config>(default_config())
                                                        : load_config(options_.config_path);
    notify_systemd("READY=1");
    if (!fresh) {
      metrics_.reload(false);
      log_.error("reload failed, keeping the running config: " + fresh.error().message,
                 {{"trigger", why}});
      return tl::unexpected(fresh.error());
    }
    {
      const std::lock_guard lock(config_mutex_);
      config_ = std::make_shared<const Config>(std::move(*fresh));
    }
    metrics_.reload(true);
    log_.info("config reloaded", {{"trigger", why}});
    warn_without_allow_list(*config());
    return {};
  }

  // One answer per request, on a worker thread. Authentication comes first, for every path.
  http::Response route(const http::Request& req) {
    if (auth_.enabled()) {
      const std::string* authorization = req.header("authorization");
      if (authorization == nullptr || !auth_.check(*authorization)) {
        return {401,
                "text/plain; charset=utf-8",
                "Unauthorized\n",
                {{"WWW-Authenticate", "Basic realm=\"getcert\""}}};
      }
    }
    const bool get = req.method == "GET" || req.method == "HEAD";
    const auto allowed = [](const char* methods) {
      return http::Response{
          405, "text/plain; charset=utf-8", "Method Not Allowed\n", {{"Allow", methods}}};
    };
    if (req.path == "/probe") return get ? probe(req) : allowed("GET, HEAD");
    if (req.path == "/metrics") {
      return get ? http::Response{200, kExposition, metrics_.text(in_flight_.load()), {}}
                 : allowed("GET, HEAD");
    }
    if (req.path == "/") {
      return get ? http::Response{200, "text/html; charset=utf-8", home_page(), {}}
                 : allowed("GET, HEAD");
    }
    if (req.path == "/-/healthy") {
      return get ? http::Response{200, "text/plain; charset=utf-8", "Healthy\n", {}}
                 : allowed("GET, HEAD");
    }
    if (req.path == "/-/reload") {
      if (req.method != "POST" && req.method != "PUT") return allowed("POST, PUT");
      // Each reload re-reads every key store (up to 10 M KDF iterations each): like
      // Prometheus's, the endpoint is off unless the operator turns it on.
      if (!options_.enable_lifecycle) {
        return {403,
                "text/plain; charset=utf-8",
                "the lifecycle API is off: start getcert serve with --web.enable-lifecycle "
                "(SIGHUP reloads either way)\n",
                {}};
      }
      auto ok = reload("POST /-/reload");
      return {ok ? 200 : 500,
              "text/plain; charset=utf-8",
              ok ? "config reloaded\n"
                 : "reload failed, keeping the running config: " + ok.error().message + "\n",
              {}};
    }
    return {404, "text/plain; charset=utf-8", "Not Found\n", {}};
  }

  http::Response probe(const http::Request& req) {
    const auto text = [](int status, std::string body) {
      return http::Response{status, "text/plain; charset=utf-8", std::move(body), {}};
    };
    const auto cfg = config();
    const std::string* target_param = req.param("target");
    const std::string target = target_param != nullptr ? *target_param : std::string();
    const std::string* module_param = req.param("module");
    const std::string module_name = module_param != nullptr ? *module_param : "default";
    const auto module = cfg->modules.find(module_name);
    if (module == cfg->modules.end()) {
      return text(400, "unknown module " + quote_untrusted(module_name) + "\n");
    }
    if (auto refused = check_allowed(target, module->second, cfg->allow)) {
      log_.warn("probe refused: " + refused->message,
                {{"target", target}, {"module", module_name}});
      return text(refused->http_status, refused->message + "\n");
    }
    std::optional<double> scrape_timeout;
    if (const std::string* value = req.header("x-prometheus-scrape-timeout-seconds")) {
      char* end = nullptr;
      const double seconds = std::strtod(value->c_str(), &end);
      if (end != value->c_str() && *end == '\0') scrape_timeout = seconds;
    }
    // The bound: a slot is taken before any work, and given back whatever happens.
    if (in_flight_.fetch_add(1) >= options_.max_concurrent_probes) {
      in_flight_.fetch_sub(1);
      metrics_.rejected();
      return text(503, "too many probes in flight (--max-concurrent-probes " +
                           std::to_string(options_.max_concurrent_probes) + ")\n");
    }
    struct Slot {
      std::atomic<std::size_t>& n;
      ~Slot() { n.fetch_sub(1); }
    } slot{in_flight_};
    const auto timeout = probe_timeout(module->second, scrape_timeout);
    const ProbeOutcome outcome = run_probe(target, module->second, timeout, &cfg->allow);
    const double seconds = static_cast<double>(outcome.duration.count()) / 1e6;
    metrics_.probe(module_name, outcome.success, seconds);
    remember({std::time(nullptr), module_name, target, outcome.success, outcome.reason, seconds});
    log_.info("probe", {{"target", target},
                        {"module", module_name},
                        {"success", outcome.success ? "true" : "false"},
                        {"reason", outcome.reason},
                        {"duration_seconds", std::to_string(seconds)}});
    return {200, kExposition, render_probe_metrics(outcome), {}};
  }

  void remember(RecentProbe probe) {
    // Enough to see what happened lately; old entries go, so memory stays flat.
    constexpr std::size_t kRecent = 100;
    const std::lock_guard lock(recent_mutex_);
    recent_.push_front(std::move(probe));
    if (recent_.size() > kRecent) recent_.pop_back();
  }

  std::string home_page() {
    const auto cfg = config();
    std::string page =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>getcert exporter</title>"
        "</head><body>\n<h1>getcert exporter</h1>\n"
        "<p><a href=\"/metrics\">Exporter metrics</a> · config <code>" +
        html_escape(cfg->path) + "</code></p>\n<h2>Modules</h2>\n<table id=\"modules\">\n" +
        "<tr><th>Module</th><th>Protocol</th><th>Timeout</th><th>Client identity</th></tr>\n";
    for (const auto& [name, m] : cfg->modules) {
      page += "<tr><td class=\"module\">" + html_escape(name) + "</td><td>" +
              (m.fetch.connect.starttls == StartTls::none ? std::string("tls")
                                                          : std::string("starttls")) +
              "</td><td>" + std::to_string(m.fetch.connect.timeout.count()) + " ms</td><td>" +
              (m.identity ? "yes" : "no") + "</td></tr>\n";
    }
    page +=
        "</table>\n<h2>Recent probes</h2>\n<table id=\"recent\">\n"
        "<tr><th>Time</th><th>Module</th><th>Target</th><th>Result</th><th>Reason</th>"
        "<th>Seconds</th><th>Debug</th></tr>\n";
    const std::lock_guard lock(recent_mutex_);
    for (const auto& p : recent_) {
      page += "<tr class=\"probe\"><td>" + format_utc(p.when) + "</td><td>" +
              html_escape(p.module) + "</td><td class=\"target\">" + html_escape(p.target) +
              "</td><td class=\"result\">" + (p.success ? "Success" : "Failure") +
              "</td><td class=\"reason\">" + html_escape(p.reason) + "</td><td>" +
              std::to_string(p.seconds) +
              "</td><td><a href=\"/probe?target=" + html_escape(http::percent_encode(p.target)) +
              "&amp;module=" + html_escape(http::percent_encode(p.module)) +
              "\">probe again</a></td></tr>\n";
    }
    page += "</table>\n</body></html>\n";
    return page;
  }

  const ServeOptions& options_;
  Logger& log_;
  mutable std::mutex config_mutex_;
  std::shared_ptr<const Config> config_;
  WebConfig web_;
  BasicAuth auth_{web_};
  std::unique_ptr<SSL_CTX, FreeContext> tls_;
  std::unique_ptr<http::Server> server_;
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<bool> stop_signals_{false};
  SelfMetrics metrics_;
  std::mutex recent_mutex_;
  std::deque<RecentProbe> recent_;
};

struct Loaded {
  Config config;
  WebConfig web;
};

Result<Loaded> load_all(const ServeOptions& options) {
  GETCERT_TRY_ASSIGN(auto config, options.config_path.empty() ? Result<Config>(default_config())
                                                              : load_config(options.config_path));
  WebConfig web;
  if (!options.web_config_path.empty()) {
    GETCERT_TRY_ASSIGN(auto w, load_web_config(options.web_config_path));
    web = std::move(w);
  }
  if (options.max_concurrent_probes == 0) {
    return fail(Errc::invalid_argument, "--max-concurrent-probes must be at least 1");
  }
  return Loaded{std::move(config), std::move(web)};
}

}  // namespace

int check_config(const ServeOptions& options, Terminal& term) {
  auto loaded = load_all(options);
  if (!loaded) {
    term.err << "getcert: error: " << escape_untrusted(loaded.error().message) << "\n";
    return kExitUsage;
  }
  term.out << loaded->config.path << ": ok, " << loaded->config.modules.size() << " module"
           << (loaded->config.modules.size() == 1 ? "" : "s") << ":";
  for (const auto& [name, m] : loaded->config.modules) term.out << " " << name;
  term.out << (loaded->config.allow.present ? "; allow list present" : "; no allow list") << "\n";
  return kExitOk;
}

int serve(const ServeOptions& options, Terminal& term) {
  Logger log(term.err, options.log_json);
  // Before the config's trust files and client identities are read, and before any thread.
  (void)use_builtin_key_methods();
  auto loaded = load_all(options);
  if (!loaded) {
    log.error(loaded.error().message);
    return kExitUsage;
  }
  // Block the signals the signal thread takes before any other thread exists, so that every
  // thread inherits the mask and none of them is interrupted by them.
  sigset_t set;
  sigset_t old;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  bound_malloc_arenas();  // before the threads that would each get an arena
  Exporter exporter(options, log, std::move(loaded->config), std::move(loaded->web));
  const int rc = exporter.run();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return rc;
}

int run(const ServeOptions& options, Terminal& term) {
  return options.check_only ? check_config(options, term) : serve(options, term);
}

}  // namespace getcert::cli::exporter
