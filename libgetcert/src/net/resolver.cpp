#include "net/resolver.hpp"

#include <ares.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "getcert/endpoint.hpp"
#include "internal/owners.hpp"
#include "internal/try.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

namespace {

constexpr std::string_view kOption = "--resolver";

Error bad_server(std::string_view text, const std::string& why) {
  return {Errc::invalid_argument,
          std::string(kOption) + " '" + std::string(text) + "': " + why +
              " (expected an IP address, optionally with a port: 192.0.2.53:5353, [::1]:53)"};
}

// ares_library_init() sets up process-wide state once; it is not thread-safe itself.
bool library_ready() {
  static std::once_flag once;
  static int status = ARES_SUCCESS;
  std::call_once(once, [] { status = ares_library_init(ARES_LIB_INIT_ALL); });
  return status == ARES_SUCCESS;
}

// What the c-ares callback leaves for the poll loop.
struct Outcome {
  bool done = false;
  int status = ARES_SUCCESS;
  internal::AresAddrinfoPtr result;
};

void on_addrinfo(void* arg, int status, int /*timeouts*/, ares_addrinfo* res) {
  auto* outcome = static_cast<Outcome*>(arg);
  outcome->done = true;
  outcome->status = status;
  outcome->result.reset(res);
}

// A first query waits this long for an answer before c-ares retransmits it (to the next server,
// then with the wait doubled each round). An eighth of the budget keeps four tries (1 + 2 + 4 +
// 8 = 15 eighths) inside it, so a lost datagram is retried instead of eating the whole budget;
// the bounds keep retransmits off a loopback server's back and retries coming on a long budget.
// Rounded to 50 ms, so that lookups under the same --timeout share one channel (see
// ChannelPool) though each starts a few microseconds further into its budget.
std::chrono::milliseconds first_try_wait(std::chrono::milliseconds budget) {
  const auto wait = std::clamp<std::chrono::milliseconds>(
      budget / 8, std::chrono::milliseconds(100), std::chrono::milliseconds(2000));
  return wait - wait % 50;
}
constexpr int kTries = 4;

// How long c-ares waits for each try, and how many it makes.
struct Tries {
  std::chrono::milliseconds wait;
  int count;
};

Result<internal::AresChannelPtr> init_channel(Tries tries, int flags) {
  if (!library_ready()) return fail(Errc::internal, "cannot initialise c-ares");
  ares_options options{};
  options.timeout = static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(
      tries.wait.count(), 1, std::numeric_limits<int>::max()));
  options.tries = tries.count;
  options.flags = flags;
  ares_channel raw = nullptr;
  // Reads /etc/resolv.conf (servers, search domains, ndots) and the lookup order (files first).
  const int rc =
      ares_init_options(&raw, &options, ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS);
  internal::AresChannelPtr channel(raw);
  if (rc != ARES_SUCCESS) {
    return fail(Errc::resolve_failed,
                std::string("cannot set up the resolver: ") + ares_strerror(rc));
  }
  return channel;
}

std::size_t server_count(ares_channel channel) {
  ares_addr_port_node* raw = nullptr;
  if (ares_get_servers_ports(channel, &raw) != ARES_SUCCESS) return 0;
  const internal::AresServersPtr servers(raw);
  std::size_t n = 0;
  for (const ares_addr_port_node* s = servers.get(); s != nullptr; s = s->next) ++n;
  return n;
}

Result<internal::AresChannelPtr> open_channel(const std::optional<DnsServer>& server, Tries tries) {
  // c-ares answers a SERVFAIL or REFUSED by asking the next server, and with no other server
  // left it reports "connection refused" once its tries are spent: with a single server, the
  // answer itself (ARES_FLAG_NOCHECKRESP) is the truer and faster result.
  auto channel = init_channel(tries, server ? ARES_FLAG_NOCHECKRESP : 0);
  if (channel && !server && server_count(channel->get()) <= 1) {
    channel = init_channel(tries, ARES_FLAG_NOCHECKRESP);
  }
  if (!channel || !server) return channel;
  ares_addr_port_node node{};
  node.family = server->family;
  if (server->family == AF_INET) {
    std::memcpy(&node.addr.addr4, server->address, 4);
  } else {
    std::memcpy(&node.addr.addr6, server->address, 16);
  }
  node.udp_port = server->port;
  node.tcp_port = server->port;
  if (const int set = ares_set_servers_ports(channel->get(), &node); set != ARES_SUCCESS) {
    return fail(Errc::resolve_failed,
                "cannot use DNS server " + server->display + ": " + ares_strerror(set));
  }
  return channel;
}

// Setting up a channel is costly: c-ares reads resolv.conf and allocates its query tables, about
// a hundred KiB touched page by page (in a loopback fleet, a fifth of getcert's CPU went there
// when every lookup made one). So the channels of completed lookups are kept, process-wide, for
// later lookups with the same server and timing: there are then as many channels as lookups
// ever ran at once, not one per thread (each of a 50-thread fleet's workers used to keep its
// own, 40% of the run's page faults). A kept channel holds nothing of the lookup: re-setting its
// servers once every query has ended closes its sockets. A lookup that missed its deadline
// still destroys its channel, and its query with it. Kept channels expire, so that a
// long-running process sees a changed resolv.conf, and there are at most kMaxIdle of them.
class ChannelPool {
 public:
  static std::string key_of(const std::optional<DnsServer>& server,
                            std::chrono::milliseconds budget) {
    return (server ? server->display : std::string("system")) + "/" +
           std::to_string(first_try_wait(budget).count());
  }

  // A kept channel for `key` that is still fresh, or none.
  internal::AresChannelPtr take(const std::string& key) {
    const std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    std::erase_if(idle_, [now](const Idle& idle) { return now - idle.kept_at > kMaxAge; });
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {  // the most recently kept first
      if (it->key != key) continue;
      internal::AresChannelPtr out = std::move(it->channel);
      idle_.erase(std::next(it).base());
      return out;
    }
    return nullptr;
  }

  // Keeps `channel`, whose queries have all ended, after closing its sockets.
  void keep(internal::AresChannelPtr channel, std::string key) {
    ares_addr_port_node* raw = nullptr;
    if (ares_get_servers_ports(channel.get(), &raw) != ARES_SUCCESS) return;
    const internal::AresServersPtr servers(raw);
    // With no query pending, c-ares closes every server socket and opens them again on demand.
    if (ares_set_servers_ports(channel.get(), servers.get()) != ARES_SUCCESS) return;
    const std::lock_guard lock(mutex_);
    if (idle_.size() >= kMaxIdle) idle_.erase(idle_.begin());  // the oldest goes
    idle_.push_back({std::move(channel), std::move(key), Clock::now()});
  }

 private:
  struct Idle {
    internal::AresChannelPtr channel;
    std::string key;
    Clock::time_point kept_at;
  };
  static constexpr std::chrono::seconds kMaxAge{30};
  static constexpr std::size_t kMaxIdle = 64;
  std::mutex mutex_;
  std::vector<Idle> idle_;
};

// Never destroyed: a lookup on a thread the host program did not join may still hand back its
// channel while the process exits. What it holds stays reachable, so no leak is reported.
ChannelPool& channel_pool() {
  static auto* pool = new ChannelPool;
  return *pool;
}

// Runs the channel's queries until the callback has run or the deadline passes; false on the
// deadline. Only poll() waits, on at most ARES_GETSOCK_MAXNUM sockets (no FD_SETSIZE limit).
bool drive(ares_channel channel, const Outcome& outcome, Clock::time_point deadline) {
  while (!outcome.done) {
    const int left = millis_until(deadline);
    if (left == 0) return false;
    std::array<ares_socket_t, ARES_GETSOCK_MAXNUM> socks{};
    const int bits = ares_getsock(channel, socks.data(), static_cast<int>(socks.size()));
    std::array<pollfd, ARES_GETSOCK_MAXNUM> fds{};
    nfds_t count = 0;
    for (std::size_t i = 0; i < socks.size(); ++i) {
      const int n = static_cast<int>(i);
      short events = 0;
      if (ARES_GETSOCK_READABLE(bits, n)) events |= POLLIN;
      if (ARES_GETSOCK_WRITABLE(bits, n)) events |= POLLOUT;
      if (events != 0) fds[count++] = pollfd{socks[i], events, 0};
    }
    timeval max_wait{left / 1000, static_cast<suseconds_t>((left % 1000) * 1000)};
    timeval wait{};
    const timeval* next = ares_timeout(channel, &max_wait, &wait);
    const auto wait_ms = static_cast<int>(next->tv_sec * 1000 + (next->tv_usec + 999) / 1000);
    const int rc = ::poll(fds.data(), count, std::min(wait_ms, left));
    if (rc < 0 && errno != EINTR) return false;
    if (rc <= 0) {
      // Nothing ready: let c-ares act on its own timeouts (retransmit, next server, give up).
      ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
      continue;
    }
    for (nfds_t i = 0; i < count && !outcome.done; ++i) {
      const short got = fds[i].revents;
      if (got == 0) continue;
      const bool readable = (got & (POLLIN | POLLERR | POLLHUP)) != 0;
      const bool writable = (got & POLLOUT) != 0;
      ares_process_fd(channel, readable ? fds[i].fd : ARES_SOCKET_BAD,
                      writable ? fds[i].fd : ARES_SOCKET_BAD);
    }
  }
  return true;
}

// Where a failed lookup went: "" for the system's servers.
std::string asked(const std::optional<DnsServer>& server) {
  return server ? " at " + server->display : std::string();
}

Error lookup_failed(const std::string& host, int status, const std::optional<DnsServer>& server) {
  const std::string start = "cannot resolve '" + host + "': ";
  switch (status) {
    case ARES_ENOTFOUND:
    case ARES_ENONAME:
      return {Errc::resolve_failed, start + "no such host (check the name, or your DNS)"};
    case ARES_ENODATA:
      return {Errc::resolve_failed, start + "the name has no address (no A or AAAA record)"};
    case ARES_ESERVFAIL:
      return {Errc::resolve_failed,
              start + "the DNS server" + asked(server) + " failed to answer (SERVFAIL)"};
    case ARES_EREFUSED:
      return {Errc::resolve_failed,
              start + "the DNS server" + asked(server) + " refused the query (REFUSED)"};
    case ARES_EFORMERR:
    case ARES_EBADRESP:
      return {Errc::resolve_failed,
              start + "the DNS server" + asked(server) + " sent a malformed answer"};
    case ARES_ECONNREFUSED:
      return {Errc::resolve_failed,
              start + "cannot reach the DNS server" + asked(server) + " (connection refused)"};
    case ARES_EBADNAME:
      return {Errc::resolve_failed, start + "not a valid host name"};
    default:
      break;
  }
  return {Errc::resolve_failed, start + ares_strerror(status)};
}

Result<std::vector<ResolvedAddress>> numeric_host(const std::string& host, std::uint16_t port) {
  // AI_NUMERICHOST never touches the network or NSS; it also reads a v6 scope ("fe80::1%eth0").
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    return fail(Errc::invalid_argument, "bad address '" + host + "': " + gai_strerror(rc));
  }
  const internal::AddrinfoPtr owned(res);
  std::vector<ResolvedAddress> out;
  for (const addrinfo* ai = owned.get(); ai != nullptr; ai = ai->ai_next) {
    ResolvedAddress a;
    a.length = std::min<socklen_t>(ai->ai_addrlen, sizeof a.storage);
    std::memcpy(&a.storage, ai->ai_addr, a.length);
    out.push_back(a);
  }
  return out;
}

void set_port(ResolvedAddress& a, std::uint16_t port) {
  if (a.family() == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&a.storage)->sin_port = htons(port);
  } else if (a.family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_port = htons(port);
  }
}

}  // namespace

Result<std::optional<DnsServer>> parse_dns_server(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string address(text);
  std::string port_text;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return tl::unexpected(bad_server(text, "missing ']'"));
    address = std::string(text.substr(1, close - 1));
    const auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return tl::unexpected(bad_server(text, "junk after ']'"));
      port_text = std::string(rest.substr(1));
      if (port_text.empty()) return tl::unexpected(bad_server(text, "empty port"));
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    const auto colon = text.find(':');
    address = std::string(text.substr(0, colon));
    port_text = std::string(text.substr(colon + 1));
    if (port_text.empty()) return tl::unexpected(bad_server(text, "empty port"));
  }
  DnsServer server;
  if (inet_pton(AF_INET, address.c_str(), server.address) == 1) {
    server.family = AF_INET;
    if (text.front() == '[') {
      return tl::unexpected(bad_server(text, "brackets are for IPv6 addresses"));
    }
  } else if (inet_pton(AF_INET6, address.c_str(), server.address) == 1) {
    server.family = AF_INET6;
  } else {
    return tl::unexpected(bad_server(text, "not an IP address"));
  }
  if (!port_text.empty()) {
    unsigned long value = 0;
    const bool digits =
        port_text.size() <= 5 && std::all_of(port_text.begin(), port_text.end(),
                                             [](char c) { return c >= '0' && c <= '9'; });
    if (digits) value = std::stoul(port_text);
    if (!digits || value == 0 || value > 65535) {
      return tl::unexpected(bad_server(text, "the port must be a number from 1 to 65535"));
    }
    server.port = static_cast<std::uint16_t>(value);
  }
  server.display = (server.family == AF_INET6 ? "[" + address + "]" : address) + ":" +
                   std::to_string(server.port);
  return server;
}

Result<std::vector<ResolvedAddress>> resolve_host(const std::string& host, std::uint16_t port,
                                                  const std::optional<DnsServer>& server,
                                                  Clock::time_point deadline) {
  if (is_ip_literal(host)) return numeric_host(host, port);
  const auto started = Clock::now();
  const auto budget = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started);
  ares_addrinfo_hints hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = ARES_AI_NUMERICSERV;
  const std::string service = std::to_string(port);
  // Declared before the channel, so it outlives ares_destroy(), which calls back with
  // ARES_EDESTRUCTION for a lookup still running.
  Outcome outcome;
  bool answered = false;
  // The first round retries lost datagrams quickly (first_try_wait). c-ares may still give up
  // before the deadline: an answer too large for UDP is asked again over TCP, and c-ares does
  // not retry a TCP query that timed out, so a server slow over TCP ended the lookup after one
  // short wait (605 ms of a 5 s budget). A second round then waits for whatever is left.
  for (int round = 0; round < 2; ++round) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (round == 1 && left < std::chrono::milliseconds(50)) break;
    const Tries tries = round == 0 ? Tries{first_try_wait(budget), kTries} : Tries{left, 1};
    std::string key = round == 0 ? ChannelPool::key_of(server, budget) : std::string();
    internal::AresChannelPtr channel = round == 0 ? channel_pool().take(key) : nullptr;
    if (!channel) {
      GETCERT_TRY_ASSIGN(auto opened, open_channel(server, tries));
      channel = std::move(opened);
    }
    outcome = Outcome{};
    ares_getaddrinfo(channel.get(), host.c_str(), service.c_str(), &hints, on_addrinfo, &outcome);
    answered = drive(channel.get(), outcome, deadline);
    // Nothing of a lookup outlives this call: a finished channel of the first round is kept
    // with its sockets closed; an unfinished one (or a second round's, made for one budget) is
    // destroyed, which ends its query and closes its sockets now.
    if (answered && round == 0) {
      channel_pool().keep(std::move(channel), std::move(key));
    } else {
      channel.reset();
    }
    if (!answered || outcome.status != ARES_ETIMEOUT) break;
  }
  if (!answered || outcome.status == ARES_ETIMEOUT) {
    // The time really waited: c-ares may give up on its own before the deadline.
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    return fail(Errc::timeout, "resolving '" + host + "' timed out after " + duration_text(waited) +
                                   " (no answer from the DNS server" + asked(server) + ")");
  }
  if (outcome.status != ARES_SUCCESS) {
    return tl::unexpected(lookup_failed(host, outcome.status, server));
  }
  std::vector<ResolvedAddress> out;
  for (const ares_addrinfo_node* node = outcome.result ? outcome.result->nodes : nullptr;
       node != nullptr; node = node->ai_next) {
    if (node->ai_family != AF_INET && node->ai_family != AF_INET6) continue;
    ResolvedAddress a;
    a.length = std::min<socklen_t>(node->ai_addrlen, sizeof a.storage);
    std::memcpy(&a.storage, node->ai_addr, a.length);
    set_port(a, port);
    const bool seen = std::any_of(out.begin(), out.end(), [&](const ResolvedAddress& b) {
      return b.length == a.length && std::memcmp(&b.storage, &a.storage, a.length) == 0;
    });
    if (!seen) out.push_back(a);
  }
  if (out.empty()) return tl::unexpected(lookup_failed(host, ARES_ENODATA, server));
  return out;
}

std::string numeric_text(const ResolvedAddress& address) {
  std::array<char, NI_MAXHOST> buf{};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address.storage), address.length, buf.data(),
                  buf.size(), nullptr, 0, NI_NUMERICHOST) != 0) {
    return "?";
  }
  return buf.data();
}

}  // namespace getcert::detail
