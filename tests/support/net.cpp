#include "support/net.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/process.hpp"

namespace getcert::test {
namespace {

// Binds a fresh socket to addr:port (0 = any port); returns the fd (or -1) and the port.
int bind_loopback(int family, std::uint16_t port, std::uint16_t* bound_port) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(sockaddr_in);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    sin6->sin6_addr = in6addr_loopback;
    len = sizeof(sockaddr_in6);
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    ::close(fd);
    return -1;
  }
  if (bound_port != nullptr) {
    socklen_t slen = sizeof ss;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &slen);
    *bound_port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                          : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  }
  return fd;
}

// The text of a /proc file, empty when it cannot be read. Plain read(2): a process that exits
// while its /proc/PID/stat is read makes read() fail with ESRCH, which std::ifstream turns into
// an exception ("basic_filebuf::underflow error reading the file").
std::string read_proc_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  std::array<char, 4096> buf{};
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// Inodes of the sockets listening on `port` (any address, IPv4 and IPv6), from /proc/net.
std::set<std::string> listening_inodes(std::uint16_t port) {
  std::set<std::string> inodes;
  // The local address ends in ":PPPP", the port in upper-case hex.
  std::string port_hex = ":";
  for (int shift = 12; shift >= 0; shift -= 4)
    port_hex += "0123456789ABCDEF"[(port >> shift) & 0xF];
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream in(read_proc_file(table));
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      const bool on_port = local.ends_with(port_hex);
      if (on_port && state == "0A") inodes.insert(inode);  // 0A: TCP_LISTEN
    }
  }
  return inodes;
}

// pid and every process descended from it (a server's workers may hold the socket too).
std::vector<pid_t> process_tree(pid_t root) {
  std::vector<std::pair<pid_t, pid_t>> parent_of;  // (pid, ppid)
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      const std::string_view name(e->d_name);
      pid_t pid = 0;
      const auto parsed = std::from_chars(name.data(), name.data() + name.size(), pid);
      if (parsed.ec != std::errc() || parsed.ptr != name.data() + name.size()) continue;
      const std::string text = read_proc_file("/proc/" + std::string(e->d_name) + "/stat");
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the
      // last ')'.
      const auto close = text.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(text.substr(close + 1));
      std::string state;
      pid_t ppid = 0;
      rest >> state >> ppid;
      parent_of.emplace_back(pid, ppid);
    }
    ::closedir(proc);
  }
  std::vector<pid_t> tree{root};
  for (std::size_t i = 0; i < tree.size(); ++i)
    for (const auto& [pid, ppid] : parent_of)
      if (ppid == tree[i]) tree.push_back(pid);
  return tree;
}

// Whether the socket listening on `port` belongs to `server` or its descendants: a port
// taken by another test's server between free_port() and the bind must not pass for ours.
bool listener_owned_by(pid_t server, std::uint16_t port) {
  const auto inodes = listening_inodes(port);
  if (inodes.empty()) return false;
  for (const pid_t pid : process_tree(server)) {
    const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* dir = ::opendir(fd_dir.c_str());
    if (dir == nullptr) continue;
    bool found = false;
    while (const dirent* e = ::readdir(dir)) {
      char target[64] = {};
      const std::string link = fd_dir + "/" + e->d_name;
      const auto n = ::readlink(link.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      const std::string t(target, static_cast<std::size_t>(n));
      // "socket:[12345]"
      if (t.rfind("socket:[", 0) == 0 && inodes.contains(t.substr(8, t.size() - 9))) {
        found = true;
        break;
      }
    }
    ::closedir(dir);
    if (found) return true;
  }
  return false;
}

}  // namespace

std::uint16_t free_port() {
  const bool v6 = ipv6_loopback_available();
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::uint16_t port = 0;
    const int fd = bind_loopback(AF_INET, 0, &port);
    if (fd < 0) continue;
    bool ok = true;
    if (v6) {
      const int fd6 = bind_loopback(AF_INET6, port, nullptr);
      ok = fd6 >= 0;
      if (fd6 >= 0) ::close(fd6);
    }
    ::close(fd);
    if (ok) return port;
  }
  throw std::runtime_error("no free loopback port");
}

std::uint16_t closed_port() { return free_port(); }

bool ipv6_loopback_available() {
  const int fd = bind_loopback(AF_INET6, 0, nullptr);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool wait_for_port(const std::string& host, std::uint16_t port, std::chrono::milliseconds limit,
                   Process* server) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const bool v6 = host.find(':') != std::string::npos;
  for (;;) {
    const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    int rc = -1;
    if (v6) {
      sockaddr_in6 sin6{};
      sin6.sin6_family = AF_INET6;
      sin6.sin6_port = htons(port);
      ::inet_pton(AF_INET6, host.c_str(), &sin6.sin6_addr);
      rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sin6), sizeof sin6);
    } else {
      sockaddr_in sin{};
      sin.sin_family = AF_INET;
      sin.sin_port = htons(port);
      ::inet_pton(AF_INET, host.c_str(), &sin.sin_addr);
      rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
    }
    ::close(fd);
    // A connection alone is not proof: another process may have taken the port first (then
    // ours fails to bind and exits, and the next check notices), or the probe may have
    // connected to itself. Wait until the server process holds the listening socket.
    if (rc == 0 && (server == nullptr || listener_owned_by(server->pid(), port))) return true;
    if (server != nullptr && !server->running()) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool wait_readable_unless_woken(int fd, int wake_fd, int timeout_ms) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
  int rc = 0;
  do {
    rc = ::poll(fds, 2, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  if (rc <= 0 || (fds[1].revents & POLLIN) != 0) return false;
  return (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

void AcceptLog::record(std::uint16_t client_port) {
  const std::lock_guard<std::mutex> lock(mutex_);
  client_ports_.push_back(client_port);
}

int AcceptLog::settle(std::uint16_t server_port, const char* server_name) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(server_port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(std::string(server_name) + ": probe connection failed");
  }
  sockaddr_in local{};
  socklen_t len = sizeof local;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  const std::uint16_t probe_port = ntohs(local.sin_port);
  ::close(fd);
  // Connections queued before the probe are accepted before it (accept is FIFO).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < client_ports_.size(); ++i) {
        if (client_ports_[i] == probe_port) {
          const int earlier = static_cast<int>(i) - probes_;
          ++probes_;
          return earlier;
        }
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error(std::string(server_name) + ": probe connection was never accepted");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

LoopbackListener::LoopbackListener(const char* server_name, std::uint16_t port)
    : server_name_(server_name) {
  if (::pipe2(wake_fds_, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string(server_name) + ": pipe2 failed");
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (listen_fd_ >= 0 && port != 0) {
      ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    }
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    if (listen_fd_ >= 0 && ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sin), len) == 0 &&
        ::listen(listen_fd_, 16) == 0 &&
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sin), &len) == 0) {
      port_ = ntohs(sin.sin_port);
      return;
    }
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    if (port == 0 || std::chrono::steady_clock::now() >= give_up) {
      ::close(wake_fds_[0]);
      ::close(wake_fds_[1]);
      wake_fds_[0] = wake_fds_[1] = -1;
      throw std::runtime_error(
          std::string(server_name) + ": cannot listen on 127.0.0.1:" + std::to_string(port) + " (" +
          why + ")" +
          (port == 0 ? ""
                     : "; is a test without the pki_fixed_ports lock, or a stray server, "
                       "using it?"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

LoopbackListener::~LoopbackListener() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fds_[0] >= 0) ::close(wake_fds_[0]);
  if (wake_fds_[1] >= 0) ::close(wake_fds_[1]);
}

void LoopbackListener::start(std::function<void(int fd)> on_accept) {
  thread_ = std::thread([this, on_accept = std::move(on_accept)] {
    while (wait_readable(listen_fd_, -1)) {
      sockaddr_in peer{};
      socklen_t len = sizeof peer;
      const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
      if (fd < 0) continue;
      accepted_.record(ntohs(peer.sin_port));
      on_accept(fd);
    }
  });
}

void LoopbackListener::stop() {
  if (stopped_) return;
  stopped_ = true;
  const char byte = 'x';
  (void)!::write(wake_fds_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  const std::lock_guard<std::mutex> lock(held_mutex_);
  for (const int fd : held_) ::close(fd);
  held_.clear();
}

bool LoopbackListener::wait_readable(int fd, int timeout_ms) {
  return wait_readable_unless_woken(fd, wake_fds_[0], timeout_ms);
}

void LoopbackListener::hold(int fd) {
  const std::lock_guard<std::mutex> lock(held_mutex_);
  held_.push_back(fd);
}

}  // namespace getcert::test
