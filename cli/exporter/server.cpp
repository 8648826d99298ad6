#include "exporter/server.hpp"

// TLS for the listener (web config): cpp-httplib's SSLServer (Debian's build has OpenSSL).
#include <httplib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
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
// Requests are a line and a few headers; a body is never needed (POST /-/reload has none).
constexpr std::size_t kMaxPayload = 4096;
// A client that sends its request slower than this (slow loris) loses its connection.
constexpr time_t kReadTimeoutSeconds = 5;
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

// cpp-httplib's own pool queues without limit; this one holds at most `capacity` accepted
// connections waiting for a thread and blocks the accept loop beyond that, so the kernel's
// listen backlog (bounded) absorbs a flood instead of our memory and descriptors.
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(std::size_t threads, std::size_t capacity) : capacity_(capacity) {
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  BoundedPool(const BoundedPool&) = delete;
  BoundedPool& operator=(const BoundedPool&) = delete;
  ~BoundedPool() override { BoundedPool::shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [this] { return jobs_.size() < capacity_ || stopping_; });
    jobs_.push_back(std::move(fn));
    ready_.notify_one();
  }
  // Finishes every queued and running request, then joins: a graceful stop.
  void shutdown() override {
    {
      const std::lock_guard lock(mutex_);
      if (stopping_ && workers_.empty()) return;
      stopping_ = true;
    }
    ready_.notify_all();
    space_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      space_.notify_one();
      job();
    }
  }

  std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable space_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

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
    if (web_.tls) {
      server_ = std::make_unique<httplib::SSLServer>(
          web_.cert_file.c_str(), web_.key_file.c_str(),
          web_.client_ca_file.empty() ? nullptr : web_.client_ca_file.c_str());
      if (!server_->is_valid()) {
        log_.error("web config: cannot load the listener's certificate or key");
        return kExitUsage;
      }
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    const std::size_t threads = options_.max_concurrent_probes + kSpareThreads;
    server_->new_task_queue = [threads] { return new BoundedPool(threads, threads * 2); };
    server_->set_payload_max_length(kMaxPayload);
    server_->set_read_timeout(kReadTimeoutSeconds);
    server_->set_keep_alive_max_count(100);
    // httplib writes a response's head and body in separate sends: with Nagle's algorithm on,
    // the body of a keep-alive answer waits for the client's delayed ACK (about 40 ms).
    server_->set_tcp_nodelay(true);
    install_routes();
    if (!server_->bind_to_port(listen->first, listen->second)) {
      log_.error("cannot listen on " + options_.listen + ": " + std::strerror(errno));
      return kExitNetwork;
    }
    widen_backlog(listen->second);
    log_.info("listening", {{"address", options_.listen},
                            {"config", config()->path},
                            {"modules", std::to_string(config()->modules.size())},
                            {"tls", web_.tls ? "true" : "false"},
                            {"keys", use_builtin_key_methods().builtin ? "builtin" : "providers"}});
    warn_without_allow_list(*config());
    std::thread signals([this] { handle_signals(); });
    notify_systemd("READY=1");
    const bool ok = server_->listen_after_bind();
    listen_returned_.store(true);
    stop_signals_.store(true);
    pthread_kill(signals.native_handle(), SIGUSR1);
    signals.join();
    log_.info("stopped", {});
    return ok || stopping_.load() ? kExitOk : kExitNetwork;
  }

 private:
  std::shared_ptr<const Config> config() const {
    const std::lock_guard lock(config_mutex_);
    return config_;
  }

  // cpp-httplib listens with a backlog of 5, compiled into Debian's shared library: a burst of
  // scrapes (Prometheus starts every target's scrape at once after a restart) would have its
  // connections dropped and retried a second later. listen() again on the listening socket only
  // changes its backlog; the socket is the one bound to our port that accepts connections.
  static void widen_backlog(int port) {
    for (int fd = 0; fd < 1024; ++fd) {
      int accepting = 0;
      socklen_t len = sizeof(accepting);
      if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0) {
        continue;
      }
      sockaddr_storage addr{};
      socklen_t addr_len = sizeof(addr);
      if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0) continue;
      const auto bound_port = addr.ss_family == AF_INET6
                                  ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                  : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
      if (bound_port == port) (void)::listen(fd, SOMAXCONN);
    }
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
        stopping_.store(true);
        // cpp-httplib's stop() does nothing until listen_after_bind() has started its loop: a
        // SIGTERM right after READY=1 (systemctl stop just after start) was lost, and the
        // exporter never stopped.
        while (!server_->is_running() && !listen_returned_.load()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
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

  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (web_.users.empty()) return true;
    if (check_basic_auth(web_, req.get_header_value("Authorization"))) return true;
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"getcert\"");
    res.set_content("Unauthorized\n", "text/plain");
    return false;
  }

  void install_routes() {
    // Every answer is counted once, where it is written: routed ones, 401s, and what no route
    // takes (404, and 400 for a request that does not parse), under handler="other".
    server_->set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      metrics_.request(req.path, res.status);
    });
    server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (authorized(req, res)) return httplib::Server::HandlerResponse::Unhandled;
      return httplib::Server::HandlerResponse::Handled;
    });
    server_->Get("/probe",
                 [this](const httplib::Request& req, httplib::Response& res) { probe(req, res); });
    server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_.text(in_flight_.load()), kExposition);
    });
    server_->Get("/", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(home_page(), "text/html; charset=utf-8");
    });
    server_->Post("/-/reload", [this](const httplib::Request&, httplib::Response& res) {
      auto ok = reload("POST /-/reload");
      res.status = ok ? 200 : 500;
      res.set_content(
          ok ? "config reloaded\n"
             : "reload failed, keeping the running config: " + ok.error().message + "\n",
          "text/plain; charset=utf-8");
    });
    server_->Get("/-/healthy", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("Healthy\n", "text/plain");
    });
  }

  void probe(const httplib::Request& req, httplib::Response& res) {
    const auto cfg = config();
    const std::string target = req.get_param_value("target");
    const std::string module_name =
        req.has_param("module") ? req.get_param_value("module") : std::string("default");
    const auto module = cfg->modules.find(module_name);
    if (module == cfg->modules.end()) {
      res.status = 400;
      res.set_content("unknown module " + quote_untrusted(module_name) + "\n", "text/plain");
      return;
    }
    if (auto refused = check_allowed(target, module->second, cfg->allow)) {
      res.status = refused->http_status;
      res.set_content(refused->message + "\n", "text/plain");
      log_.warn("probe refused: " + refused->message,
                {{"target", target}, {"module", module_name}});
      return;
    }
    std::optional<double> scrape_timeout;
    if (req.has_header("X-Prometheus-Scrape-Timeout-Seconds")) {
      const std::string value = req.get_header_value("X-Prometheus-Scrape-Timeout-Seconds");
      char* end = nullptr;
      const double seconds = std::strtod(value.c_str(), &end);
      if (end != value.c_str() && *end == '\0') scrape_timeout = seconds;
    }
    // The bound: a slot is taken before any work, and given back whatever happens.
    if (in_flight_.fetch_add(1) >= options_.max_concurrent_probes) {
      in_flight_.fetch_sub(1);
      metrics_.rejected();
      res.status = 503;
      res.set_content("too many probes in flight (--max-concurrent-probes " +
                          std::to_string(options_.max_concurrent_probes) + ")\n",
                      "text/plain");
      return;
    }
    struct Slot {
      std::atomic<std::size_t>& n;
      ~Slot() { n.fetch_sub(1); }
    } slot{in_flight_};
    const auto timeout = probe_timeout(module->second, scrape_timeout);
    const ProbeOutcome outcome = run_probe(target, module->second, timeout, &cfg->allow);
    res.set_content(render_probe_metrics(outcome), kExposition);
    const double seconds = static_cast<double>(outcome.duration.count()) / 1e6;
    metrics_.probe(module_name, outcome.success, seconds);
    remember({std::time(nullptr), module_name, target, outcome.success, outcome.reason, seconds});
    log_.info("probe", {{"target", target},
                        {"module", module_name},
                        {"success", outcome.success ? "true" : "false"},
                        {"reason", outcome.reason},
                        {"duration_seconds", std::to_string(seconds)}});
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
              std::to_string(p.seconds) + "</td><td><a href=\"/probe?target=" +
              html_escape(httplib::detail::encode_query_param(p.target)) +
              "&amp;module=" + html_escape(httplib::detail::encode_query_param(p.module)) +
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
  std::unique_ptr<httplib::Server> server_;
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> stop_signals_{false};
  std::atomic<bool> listen_returned_{false};  // listen_after_bind() is over
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
