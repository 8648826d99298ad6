#include "exporter/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "internal/owners.hpp"

namespace getcert::cli::exporter::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kListenerId = 0;
constexpr std::uint64_t kWakeId = 1;
constexpr std::size_t kReadChunk = 16384;
// Descriptors kept for what is not a client connection: probes' sockets, files, the resolver.
constexpr std::size_t kReservedDescriptors = 256;
// After an error answer, the client's remaining bytes are read and dropped this long, so that
// closing with unread input does not reset the connection before the answer is read.
constexpr std::chrono::milliseconds kDrainTime{2000};
// Accepts per wake-up, so that a flood of connections does not starve the answers.
constexpr int kAcceptBurst = 256;

enum class State { handshake, reading, working, writing, draining };
enum class Timer { none, request, idle, write, drain };

struct Conn {
  std::uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  State state = State::reading;
  std::string in;
  std::string out;
  std::size_t out_pos = 0;
  RequestReader reader;
  bool close_after_write = false;
  bool peer_closed = false;
  std::size_t served = 0;
  std::uint32_t interest = 0;
  bool registered = false;
  Timer timer = Timer::none;
  Clock::time_point deadline;
  std::list<Conn*>::iterator timer_pos;

  explicit Conn(Limits limits) : reader(limits) {}
};

struct Done {
  std::uint64_t id;
  std::unique_ptr<Request> request;
  Response response;
};

std::string http_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 64> buf{};
  const auto n = std::strftime(buf.data(), buf.size(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return {buf.data(), n};
}

std::size_t raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit wanted = limit;
    wanted.rlim_cur = limit.rlim_max == RLIM_INFINITY ? rlim_t{1} << 20 : limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) limit = wanted;
  }
  return static_cast<std::size_t>(limit.rlim_cur);
}

}  // namespace

struct Server::Impl {
  explicit Impl(ServerOptions o, std::atomic<std::size_t>& open) : options(o), open_count(open) {}

  ServerOptions options;
  std::atomic<std::size_t>& open_count;
  int listener = -1;
  int epoll = -1;
  int wake = -1;
  std::atomic<bool> stop_requested{false};
  bool stopping = false;
  std::size_t max_connections = 0;
  Clock::time_point listener_paused_until{};
  bool listener_paused = false;

  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns;
  std::uint64_t next_id = 2;
  std::array<std::list<Conn*>, 5> timers;  // by Timer; each list is in deadline order

  Handler handler;
  AnswerLog log;

  // The worker pool.
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::pair<std::uint64_t, std::unique_ptr<Request>>> jobs;
  std::vector<Done> done;
  std::vector<std::thread> workers;
  bool workers_stop = false;

  std::chrono::milliseconds timeout_of(Timer t) const {
    switch (t) {
      case Timer::request:
        return options.request_timeout;
      case Timer::idle:
        return options.idle_timeout;
      case Timer::write:
        return options.write_timeout;
      case Timer::drain:
        return kDrainTime;
      case Timer::none:
        break;
    }
    return {};
  }

  void set_timer(Conn& c, Timer t) {
    if (c.timer != Timer::none) timers[static_cast<std::size_t>(c.timer)].erase(c.timer_pos);
    c.timer = t;
    if (t == Timer::none) return;
    auto& list = timers[static_cast<std::size_t>(t)];
    c.deadline = Clock::now() + timeout_of(t);
    c.timer_pos = list.insert(list.end(), &c);
  }

  void set_interest(Conn& c, std::uint32_t events) const {
    if (c.registered && c.interest == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    if (!c.registered) {
      (void)epoll_ctl(epoll, EPOLL_CTL_ADD, c.fd, &ev);
      c.registered = true;
    } else {
      (void)epoll_ctl(epoll, EPOLL_CTL_MOD, c.fd, &ev);
    }
    c.interest = events;
  }

  void unregister(Conn& c) const {
    if (!c.registered) return;
    (void)epoll_ctl(epoll, EPOLL_CTL_DEL, c.fd, nullptr);
    c.registered = false;
  }

  void close_conn(Conn& c) {
    set_timer(c, Timer::none);
    unregister(c);
    if (c.ssl != nullptr) SSL_free(c.ssl);
    open_count.fetch_sub(1);  // before the peer can see the close
    ::close(c.fd);
    const auto id = c.id;
    conns.erase(id);  // destroys c
  }

  // --- the worker pool -----------------------------------------------------------------------

  void start_workers() {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, options.workers); ++i) {
      workers.emplace_back([this] { work(); });
    }
  }

  void work() {
    for (;;) {
      std::pair<std::uint64_t, std::unique_ptr<Request>> job;
      {
        std::unique_lock lock(mutex);
        ready.wait(lock, [this] { return !jobs.empty() || workers_stop; });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      Response response;
      try {
        response = handler(*job.second);
      } catch (...) {
        // Whatever went wrong is not the client's to read.
        response = Response{500, "text/plain; charset=utf-8", "internal error\n", {}};
      }
      {
        const std::lock_guard lock(mutex);
        done.push_back({job.first, std::move(job.second), std::move(response)});
      }
      const std::uint64_t one = 1;
      (void)!::write(wake, &one, sizeof(one));
    }
  }

  void stop_workers() {
    {
      const std::lock_guard lock(mutex);
      workers_stop = true;
    }
    ready.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
  }

  // --- connections ---------------------------------------------------------------------------

  void accept_some() {
    for (int i = 0; i < kAcceptBurst; ++i) {
      const int fd = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE) {
          // Out of descriptors: make room from the idle, or stop accepting for a moment.
          auto& idle = timers[static_cast<std::size_t>(Timer::idle)];
          if (!idle.empty()) {
            close_conn(*idle.front());
            continue;
          }
          pause_listener();
        }
        return;
      }
      if (open_count.load() >= max_connections) {
        auto& idle = timers[static_cast<std::size_t>(Timer::idle)];
        if (idle.empty()) {
          ::close(fd);  // every connection is busy: this one waits its turn elsewhere
          continue;
        }
        close_conn(*idle.front());
      }
      const int one = 1;
      (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      auto conn = std::make_unique<Conn>(options.limits);
      Conn& c = *conn;
      c.id = next_id++;
      c.fd = fd;
      conns.emplace(c.id, std::move(conn));
      open_count.fetch_add(1);
      if (options.tls != nullptr) {
        c.ssl = SSL_new(options.tls);
        if (c.ssl == nullptr || SSL_set_fd(c.ssl, fd) != 1) {
          close_conn(c);
          continue;
        }
        SSL_set_accept_state(c.ssl);
        // An EOF without close_notify ends a request stream all the same (ZERO_RETURN).
        SSL_set_options(c.ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
        c.state = State::handshake;
      }
      // A new connection has the request deadline from the start: connecting and sending
      // nothing is a slow client, not an idle one.
      set_timer(c, Timer::request);
      set_interest(c, EPOLLIN);
    }
  }

  void pause_listener() {
    if (listener_paused) return;
    (void)epoll_ctl(epoll, EPOLL_CTL_DEL, listener, nullptr);
    listener_paused = true;
    listener_paused_until = Clock::now() + std::chrono::milliseconds(100);
  }

  void resume_listener() {
    if (!listener_paused || stopping || listener < 0) return;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenerId;
    (void)epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &ev);
    listener_paused = false;
  }

  // One operation's outcome on a non-blocking socket (TLS or not).
  enum class Io { done, again_read, again_write, closed, failed };

  Io tls_result(Conn& c, int ret) {
    switch (SSL_get_error(c.ssl, ret)) {
      case SSL_ERROR_WANT_READ:
        return Io::again_read;
      case SSL_ERROR_WANT_WRITE:
        return Io::again_write;
      case SSL_ERROR_ZERO_RETURN:
        return Io::closed;
      default:
        ERR_clear_error();
        return Io::failed;
    }
  }

  void handshake(Conn& c) {
    ERR_clear_error();
    const int ret = SSL_do_handshake(c.ssl);
    if (ret == 1) {
      c.state = State::reading;
      set_timer(c, Timer::request);  // the request's own deadline starts now
      read(c);
      return;
    }
    switch (tls_result(c, ret)) {
      case Io::again_read:
        set_interest(c, EPOLLIN);
        return;
      case Io::again_write:
        set_interest(c, EPOLLOUT);
        return;
      default:
        close_conn(c);
    }
  }

  // Reads what is there, up to what one request may hold, then looks for a request.
  void read(Conn& c) {
    const std::size_t cap = options.limits.max_head + options.limits.max_body + 16384;
    std::array<char, kReadChunk> buf{};
    Io last = Io::again_read;
    while (c.in.size() < cap) {
      if (c.ssl != nullptr) {
        ERR_clear_error();
        const int n = SSL_read(c.ssl, buf.data(), static_cast<int>(buf.size()));
        if (n > 0) {
          c.in.append(buf.data(), static_cast<std::size_t>(n));
          continue;
        }
        last = tls_result(c, n);
      } else {
        const ssize_t n = ::recv(c.fd, buf.data(), buf.size(), 0);
        if (n > 0) {
          c.in.append(buf.data(), static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0) {
          last = Io::closed;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
          last = Io::again_read;
        } else if (errno == EINTR) {
          continue;
        } else {
          last = Io::failed;
        }
      }
      break;
    }
    if (last == Io::failed) {
      close_conn(c);
      return;
    }
    if (last == Io::closed) c.peer_closed = true;
    process_input(c, last == Io::again_write ? EPOLLOUT : EPOLLIN);
  }

  void process_input(Conn& c, std::uint32_t want) {
    if (c.in.empty()) {
      if (c.peer_closed) {
        close_conn(c);
        return;
      }
      if (c.served > 0 && c.timer != Timer::idle) set_timer(c, Timer::idle);
      c.in.shrink_to_fit();
      set_interest(c, want);
      return;
    }
    if (c.timer == Timer::idle) set_timer(c, Timer::request);  // a request has begun
    const ParseResult parsed = c.reader.parse(c.in);
    switch (parsed.state) {
      case Parse::need_more:
        if (c.peer_closed) {
          close_conn(c);  // half a request and then EOF: nothing to answer
          return;
        }
        set_interest(c, want);
        return;
      case Parse::error:
        log(nullptr, parsed.status);
        answer(c, nullptr,
               Response{parsed.status, "text/plain; charset=utf-8", parsed.reason + "\n", {}},
               false);
        return;
      case Parse::complete:
        break;
    }
    auto request = std::make_unique<Request>(c.reader.take());
    c.in.erase(0, parsed.consumed);
    c.state = State::working;
    set_timer(c, Timer::none);
    unregister(c);  // nothing is read while the request is answered
    {
      const std::lock_guard lock(mutex);
      jobs.emplace_back(c.id, std::move(request));
    }
    ready.notify_one();
  }

  void answer(Conn& c, const Request* request, const Response& response, bool keep_alive) {
    const bool head = request != nullptr && request->method == "HEAD";
    std::string& out = c.out;
    out.clear();
    c.out_pos = 0;
    out +=
        "HTTP/1.1 " + std::to_string(response.status) + " " + status_text(response.status) + "\r\n";
    out += "Date: " + http_date() + "\r\n";
    out += "Content-Type: " + response.content_type + "\r\n";
    out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
    for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
    if (!keep_alive) {
      out += "Connection: close\r\n";
    } else if (request != nullptr && request->minor_version == 0) {
      out += "Connection: keep-alive\r\n";
    }
    out += "\r\n";
    if (!head) out += response.body;
    c.close_after_write = !keep_alive;
    c.state = State::writing;
    set_timer(c, Timer::write);
    write(c);
  }

  void write(Conn& c) {
    while (c.out_pos < c.out.size()) {
      const char* data = c.out.data() + c.out_pos;
      const std::size_t left = c.out.size() - c.out_pos;
      Io io = Io::done;
      if (c.ssl != nullptr) {
        ERR_clear_error();
        const int n =
            SSL_write(c.ssl, data, static_cast<int>(std::min<std::size_t>(left, 1 << 20)));
        if (n > 0) {
          c.out_pos += static_cast<std::size_t>(n);
          continue;
        }
        io = tls_result(c, n);
      } else {
        const ssize_t n = ::send(c.fd, data, left, MSG_NOSIGNAL);
        if (n >= 0) {
          c.out_pos += static_cast<std::size_t>(n);
          continue;
        }
        if (errno == EINTR) continue;
        io = errno == EAGAIN || errno == EWOULDBLOCK ? Io::again_write : Io::failed;
      }
      if (io == Io::again_write || io == Io::again_read) {
        set_interest(c, io == Io::again_write ? EPOLLOUT : EPOLLIN);
        return;
      }
      close_conn(c);
      return;
    }
    c.out.clear();
    c.out.shrink_to_fit();
    if (c.close_after_write) {
      drain(c);
      return;
    }
    ++c.served;
    c.state = State::reading;
    set_timer(c, c.in.empty() ? Timer::idle : Timer::request);
    if (c.ssl != nullptr) {
      // TLS may hold decrypted bytes that epoll cannot see: read them (and parse what is
      // already here, pipelined requests included).
      read(c);
      return;
    }
    if (!c.in.empty()) {
      process_input(c, EPOLLIN);  // pipelined requests are already here
      return;
    }
    set_interest(c, EPOLLIN);
  }

  // Sends our end's close, then reads and drops what the client still sends, briefly.
  void drain(Conn& c) {
    if (c.state != State::draining) {
      c.state = State::draining;
      set_timer(c, Timer::drain);
      if (c.ssl != nullptr) {
        ERR_clear_error();
        (void)SSL_shutdown(c.ssl);
      }
      (void)::shutdown(c.fd, SHUT_WR);
      c.in.clear();
      c.in.shrink_to_fit();
    }
    std::array<char, 4096> buf{};
    for (;;) {
      const ssize_t n = ::recv(c.fd, buf.data(), buf.size(), 0);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        set_interest(c, EPOLLIN);
        return;
      }
      close_conn(c);
      return;
    }
  }

  void on_event(std::uint64_t id, std::uint32_t events) {
    const auto it = conns.find(id);
    if (it == conns.end()) return;
    Conn& c = *it->second;
    if ((events & EPOLLERR) != 0) {
      close_conn(c);
      return;
    }
    switch (c.state) {
      case State::handshake:
        handshake(c);
        return;
      case State::reading:
        read(c);
        return;
      case State::writing:
        write(c);
        return;
      case State::draining:
        drain(c);
        return;
      case State::working:
        return;
    }
  }

  void finish_done() {
    std::vector<Done> ready_answers;
    {
      const std::lock_guard lock(mutex);
      ready_answers.swap(done);
    }
    for (auto& d : ready_answers) {
      const auto it = conns.find(d.id);
      if (it == conns.end()) continue;
      Conn& c = *it->second;
      log(d.request.get(), d.response.status);
      const bool keep =
          d.request->keep_alive && !stopping && c.served + 1 < options.max_requests_per_connection;
      answer(c, d.request.get(), d.response, keep);
    }
  }

  void expire_timers() {
    const auto now = Clock::now();
    for (std::size_t t = 1; t < timers.size(); ++t) {
      auto& list = timers[t];
      while (!list.empty() && list.front()->deadline <= now) {
        Conn& c = *list.front();
        if (static_cast<Timer>(t) == Timer::request && c.state == State::reading && !c.in.empty()) {
          log(nullptr, 408);  // counted; the client is too slow to be worth an answer
        }
        close_conn(c);
      }
    }
  }

  int next_wait_ms() const {
    auto soonest = Clock::now() + std::chrono::seconds(1);
    for (std::size_t t = 1; t < timers.size(); ++t) {
      if (!timers[t].empty()) soonest = std::min(soonest, timers[t].front()->deadline);
    }
    if (listener_paused) soonest = std::min(soonest, listener_paused_until);
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(soonest - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(wait + 1, 0, 1000));
  }

  void begin_stop() {
    stopping = true;
    if (listener >= 0) {
      (void)epoll_ctl(epoll, EPOLL_CTL_DEL, listener, nullptr);
      ::close(listener);
      listener = -1;
    }
    std::vector<Conn*> quiet;
    for (auto& [id, c] : conns) {
      if (c->state != State::working && c->state != State::writing) quiet.push_back(c.get());
    }
    for (Conn* c : quiet) close_conn(*c);
  }

  void loop() {
    std::array<epoll_event, 256> events{};
    while (!(stopping && conns.empty())) {
      if (stop_requested.load() && !stopping) begin_stop();
      if (stopping && conns.empty()) break;
      const int n =
          epoll_wait(epoll, events.data(), static_cast<int>(events.size()), next_wait_ms());
      for (int i = 0; i < n; ++i) {
        const auto id = events[static_cast<std::size_t>(i)].data.u64;
        if (id == kListenerId) {
          if (!stopping) accept_some();
        } else if (id == kWakeId) {
          std::uint64_t count = 0;
          (void)!::read(wake, &count, sizeof(count));
        } else {
          on_event(id, events[static_cast<std::size_t>(i)].events);
        }
      }
      finish_done();
      expire_timers();
      if (listener_paused && Clock::now() >= listener_paused_until) resume_listener();
      if (stopping) {
        // Keep-alive connections that have just been answered are closed, not kept.
        std::vector<Conn*> quiet;
        for (auto& [id, c] : conns) {
          if (c->state == State::reading && c->in.empty()) quiet.push_back(c.get());
        }
        for (Conn* c : quiet) close_conn(*c);
      }
    }
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(options, open_)) {
  impl_->epoll = epoll_create1(EPOLL_CLOEXEC);
  impl_->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

Server::~Server() {
  if (impl_->listener >= 0) ::close(impl_->listener);
  if (impl_->epoll >= 0) ::close(impl_->epoll);
  if (impl_->wake >= 0) ::close(impl_->wake);
}

Result<void> Server::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) return fail(Errc::invalid_argument, std::string(gai_strerror(rc)));
  const internal::AddrinfoPtr owned(found);
  std::string last = "no address";
  for (const addrinfo* a = owned.get(); a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    const int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      last = std::strerror(errno);
      ::close(fd);
      continue;
    }
    impl_->listener = fd;
    break;
  }
  if (impl_->listener < 0) return fail(Errc::io_error, last);
  const std::size_t descriptors = raise_descriptor_limit();
  const std::size_t usable =
      descriptors > kReservedDescriptors * 2 ? descriptors - kReservedDescriptors : descriptors / 2;
  impl_->max_connections = std::min(impl_->options.max_connections, usable);
  return {};
}

int Server::port() const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (impl_->listener < 0 ||
      getsockname(impl_->listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void Server::run(Handler handler, AnswerLog log) {
  Impl& s = *impl_;
  s.handler = std::move(handler);
  s.log = log ? std::move(log) : AnswerLog([](const Request*, int) {});
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeId;
  (void)epoll_ctl(s.epoll, EPOLL_CTL_ADD, s.wake, &ev);
  if (s.listener >= 0) {
    ev.data.u64 = kListenerId;
    (void)epoll_ctl(s.epoll, EPOLL_CTL_ADD, s.listener, &ev);
  }
  s.start_workers();
  s.loop();
  s.stop_workers();
}

void Server::stop() {
  impl_->stop_requested.store(true);
  if (impl_->wake >= 0) {
    const std::uint64_t one = 1;
    (void)!::write(impl_->wake, &one, sizeof(one));
  }
}

}  // namespace getcert::cli::exporter::http
