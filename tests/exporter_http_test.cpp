// The exporter's HTTP/1.1 server (cli/exporter/http_server.cpp) and its request reader
// (http_request.cpp), in process, over real loopback sockets: request framing as RFC 9112
// says (the smuggling cases), a head bounded as a whole, deadlines per request rather than per
// read (dripping clients, on plain and TLS listeners), pipelining, the connection cap, a stop
// with slow clients connected, and probes answered while 1,000 slow clients are connected.
//
// Deadlines here are short (the server takes them as options), and no check depends on how
// fast the machine is: a dropped client is recognised by how much it managed to send, and an
// answer by arriving at all within a generous bound.

#include <crypt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "exporter/http_request.hpp"
#include "exporter/http_server.hpp"
#include "exporter/web_config.hpp"
#include "support/files.hpp"

using namespace getcert::cli::exporter::http;  // NOLINT(google-build-using-namespace)
using namespace std::chrono_literals;

namespace {

ParseResult parse_all(const std::string& wire, Request& request) {
  RequestReader reader;
  auto result = reader.parse(wire);
  if (result.state == Parse::complete) request = reader.take();
  return result;
}

int status_of(const std::string& wire) {
  Request request;
  const auto r = parse_all(wire, request);
  if (r.state == Parse::need_more) return 0;
  return r.state == Parse::complete ? 200 : r.status;
}

// A raw TCP client.
class Raw {
 public:
  explicit Raw(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    const int one = 1;
    (void)setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
  Raw(Raw&& other) noexcept : fd_(other.fd_), ok_(other.ok_) { other.fd_ = -1; }
  ~Raw() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }
  // Sends all of `data`; false once the server closed or reset the connection.
  bool send(const std::string& data) {
    std::size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }
  // What arrives until the server closes, or `limit` passes; `closed` says which.
  std::string read_until_close(std::chrono::milliseconds limit, bool* closed = nullptr) {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        if (closed != nullptr) *closed = true;
        return out;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
    if (closed != nullptr) *closed = false;
    return out;
  }
  // Reads until `count` answers have arrived (counted by their status lines).
  std::string read_answers(int count, std::chrono::milliseconds limit = 20s) {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (answers_in(out) < count) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
  static int answers_in(const std::string& text) {
    int n = 0;
    for (auto at = text.find("HTTP/1.1 "); at != std::string::npos;
         at = text.find("HTTP/1.1 ", at + 1)) {
      ++n;
    }
    return n;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
  bool ok_ = false;
};

// A server on a kernel-chosen loopback port, running on its own thread; the handler answers
// "PATH\n" and counts what it ran.
class Running {
 public:
  explicit Running(ServerOptions options = fast(), Handler handler = {}) : server_(options) {
    REQUIRE(server_.bind("127.0.0.1", 0));
    port_ = server_.port();
    if (!handler) {
      handler = [this](const Request& r) {
        ++handled_;
        if (r.path == "/throw") throw std::runtime_error("secret detail");
        if (r.path == "/slow") std::this_thread::sleep_for(300ms);
        return Response{200, "text/plain", r.method + " " + r.path + "\n", {}};
      };
    }
    thread_ = std::thread([this, handler] { server_.run(handler, {}); });
  }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  ~Running() { stop(); }
  // Stops, and says whether run() returned within `limit`.
  bool stop(std::chrono::milliseconds limit = 10s) {
    if (!thread_.joinable()) return true;
    server_.stop();
    auto joined = std::async(std::launch::async, [this] { thread_.join(); });
    return joined.wait_for(limit) == std::future_status::ready;
  }
  int port() const { return port_; }
  int handled() const { return handled_.load(); }
  Server& server() { return server_; }

  static ServerOptions fast() {
    ServerOptions o;
    o.workers = 4;
    o.request_timeout = 500ms;
    o.idle_timeout = 2000ms;
    o.write_timeout = 2000ms;
    return o;
  }

 private:
  Server server_;
  int port_ = 0;
  std::atomic<int> handled_{0};
  std::thread thread_;
};

const std::string kGet = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";

void raise_descriptor_limit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

TEST_CASE("requests are framed as RFC 9112 says, and every ambiguity is refused", "[http]") {
  Request r;
  // A GET with a body: the body is read and dropped, never taken for the next request (CL.0).
  const std::string inner = "GET /-/reload HTTP/1.1\r\n\r\n\r\n";
  const std::string smuggle =
      "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(inner.size()) + "\r\n\r\n" +
      inner;
  auto res = parse_all(smuggle + "GET /b HTTP/1.1\r\nHost: x\r\n\r\n", r);
  REQUIRE(res.state == Parse::complete);
  CHECK(r.path == "/a");
  CHECK(r.body.rfind("GET /-/reload", 0) == 0);
  CHECK(res.consumed == smuggle.size());

  // Two lengths, a length and a coding, a length that is not digits: 400.
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na") ==
        400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1,1\r\n\r\na") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: "
                  "chunked\r\n\r\n0\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: "
                  "3\r\n\r\n0\r\n\r\n") == 400);
  for (const char* length : {"+5", "0x5", "-1", "5.0", "", "5 5", "1e3"}) {
    INFO(length);
    CHECK(status_of(std::string("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: ") + length +
                    "\r\n\r\n12345") == 400);
  }
  // A space before the colon, obs-fold, bare LF, bare CR, a control character: 400.
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\nHost: x\n\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n") == 400);
  CHECK(status_of(std::string("GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n", 35)) == 400);
  CHECK(status_of("GET  / HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1 \r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("GET /a#frag HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  // Host: exactly one in HTTP/1.1, at most one in HTTP/1.0.
  CHECK(status_of("GET / HTTP/1.1\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.0\r\n\r\n") == 200);
  // Codings: chunked alone is understood; anything else is 501; chunked not last is 400.
  CHECK(status_of("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n") == 501);
  CHECK(status_of("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 501);
  CHECK(status_of("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n") == 400);
  CHECK(status_of("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == 400);
  res = parse_all(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "3;name=v\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\nNEXT",
      r);
  REQUIRE(res.state == Parse::complete);
  CHECK(r.body == "abcde");
  CHECK(
      status_of("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n") ==
      400);
  CHECK(status_of("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n") == 400);
  CHECK(status_of("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "2000\r\n") == 413);
  // Versions.
  CHECK(status_of("GET / HTTP/2.0\r\nHost: x\r\n\r\n") == 505);
  CHECK(status_of("GET / HTTP/1.1x\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("GET / http/1.1\r\nHost: x\r\n\r\n") == 400);
}

TEST_CASE("the head is bounded as a whole, the target and the body each on their own", "[http]") {
  // 16 MiB of small header lines: refused once the head passes 16 KiB, not read to the end.
  std::string flood = "GET / HTTP/1.1\r\nHost: x\r\n";
  while (flood.size() < 17000) flood += "X-A: b\r\n";
  CHECK(status_of(flood) == 431);
  std::string many = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 101; ++i) many += "X: y\r\n";
  CHECK(status_of(many + "\r\n") == 431);
  CHECK(status_of("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n") == 414);
  // Refused before the line ends: a client cannot make the server wait for an endless line.
  CHECK(status_of("GET /" + std::string(9000, 'a')) == 414);
  CHECK(status_of("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4097\r\n\r\n") == 413);
  CHECK(status_of("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n") ==
        400);
  // Empty lines before a request are skipped (RFC 9112 2.2), but count against the bound.
  CHECK(status_of("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n") == 200);
  std::string blank;
  while (blank.size() < 17000) blank += "\r\n";
  CHECK(status_of(blank) == 431);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\n") == 0);  // not yet whole
}

TEST_CASE("targets: paths and queries are percent-decoded, absolute URLs accepted", "[http]") {
  Request r;
  REQUIRE(
      parse_all(
          "GET /probe?target=a.example%3A443&module=t+ls&empty&=x HTTP/1.1\r\nHost: x\r\n\r\n", r)
          .state == Parse::complete);
  CHECK(r.path == "/probe");
  REQUIRE(r.param("target") != nullptr);
  CHECK(*r.param("target") == "a.example:443");
  CHECK(*r.param("module") == "t ls");
  REQUIRE(r.param("empty") != nullptr);
  CHECK(r.param("empty")->empty());
  REQUIRE(parse_all("GET http://host:9798/metrics?x=1 HTTP/1.1\r\nHost: host\r\n\r\n", r).state ==
          Parse::complete);
  CHECK(r.path == "/metrics");
  CHECK(status_of("GET /probe?target=%zz HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("GET /%4 HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("GET example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(percent_encode("a b/é") == "a%20b%2F%C3%A9");
  CHECK(percent_decode(percent_encode("file:///x/*.pem?&="), true) == "file:///x/*.pem?&=");
}

TEST_CASE("a request's bytes decide its framing, not how the network cut them", "[http]") {
  const std::string wire =
      "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
      "POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n"
      "GET /c HTTP/1.1\r\nHost: x\r\nContent-Length : 1\r\n\r\n";
  for (std::size_t piece = 1; piece <= 7; ++piece) {
    INFO(piece);
    RequestReader reader;
    std::string buffer;
    std::vector<std::string> seen;
    std::size_t off = 0;
    while (off < wire.size()) {
      buffer += wire.substr(off, piece);
      off += piece;
      for (;;) {
        const auto res = reader.parse(buffer);
        if (res.state == Parse::need_more) break;
        if (res.state == Parse::error) {
          seen.push_back(std::to_string(res.status));
          off = wire.size();
          break;
        }
        const Request r = reader.take();
        seen.push_back(r.path + ":" + r.body);
        buffer.erase(0, res.consumed);
      }
    }
    CHECK(seen == std::vector<std::string>{"/a:abc", "/b:z", "400"});
  }
}

TEST_CASE("smuggled requests never run: 400 and the connection is closed", "[http]") {
  Running s;
  for (const std::string& bad :
       {std::string(
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 40\r\n\r\n"),
        std::string("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: "
                    "chunked\r\n\r\n"),
        std::string("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0x28\r\n\r\n")}) {
    INFO(bad);
    Raw c(s.port());
    REQUIRE(c.ok());
    const int before = s.handled();
    (void)c.send(bad + "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n");
    bool closed = false;
    const std::string answer = c.read_until_close(5s, &closed);
    CHECK(answer.rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK_THAT(answer, Catch::Contains("Connection: close"));
    CHECK(Raw::answers_in(answer) == 1);
    CHECK(closed);
    CHECK(s.handled() == before);
  }
  // CL.0: the GET's body is consumed as its body; the request after it is the one that runs.
  Raw c(s.port());
  const std::string body = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  (void)c.send("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n\r\n" + body + "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string answers = c.read_until_close(5s);
  CHECK(Raw::answers_in(answers) == 2);
  CHECK_THAT(answers, Catch::Contains("GET /a\n") && Catch::Contains("GET /b\n"));
  CHECK_THAT(answers, !Catch::Contains("smuggled"));
}

TEST_CASE("pipelined requests are all answered, in order", "[http]") {
  Running s;
  Raw c(s.port());
  (void)c.send(
      "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
      "HEAD /3 HTTP/1.1\r\nHost: x\r\n\r\nGET /4 HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string answers = c.read_answers(4);
  REQUIRE(Raw::answers_in(answers) == 4);
  const auto one = answers.find("GET /1\n");
  const auto two = answers.find("GET /slow\n");
  const auto four = answers.find("GET /4\n");
  CHECK(one < two);
  CHECK(two < four);
  CHECK(four != std::string::npos);
  CHECK_THAT(answers, !Catch::Contains("HEAD /3\n"));  // a HEAD answer has no body
  // HTTP/1.0 without keep-alive: one answer, then the server closes.
  Raw old(s.port());
  (void)old.send("GET /x HTTP/1.0\r\n\r\n");
  bool closed = false;
  CHECK(Raw::answers_in(old.read_until_close(5s, &closed)) == 1);
  CHECK(closed);
}

TEST_CASE("a request's deadline holds however its bytes are dripped, TLS handshakes included",
          "[http]") {
  Running s;
  // One byte every 50 ms: the 500 ms deadline passes after about ten of the request's bytes,
  // while each read alone is quick.
  Raw c(s.port());
  const std::string request =
      "GET /a-rather-long-path-that-takes-a-while HTTP/1.1\r\nHost: x\r\n\r\n";
  std::size_t sent = 0;
  for (; sent < request.size(); ++sent) {
    if (!c.send(request.substr(sent, 1))) break;
    pollfd p{c.fd(), POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) break;  // the server closed it
  }
  CHECK(sent < request.size());
  CHECK(s.handled() == 0);

  // The same on a TLS listener, before the handshake is done.
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  REQUIRE(SSL_CTX_use_certificate_chain_file(ctx, getcert::test::pki("rsa-chain.pem").c_str()) ==
          1);
  REQUIRE(SSL_CTX_use_PrivateKey_file(ctx, getcert::test::pki("rsa.key").c_str(),
                                      SSL_FILETYPE_PEM) == 1);
  auto options = Running::fast();
  options.tls = ctx;
  {
    Running tls(options);
    Raw d(tls.port());
    // A handshake record's header announcing 16 KiB, then its bytes one at a time: the server
    // waits for the whole record before it can judge it.
    const std::string hello = std::string("\x16\x03\x01\x40\x00", 5) + std::string(200, '\x01');
    std::size_t dripped = 0;
    for (; dripped < hello.size(); ++dripped) {
      if (!d.send(hello.substr(dripped, 1))) break;
      pollfd p{d.fd(), POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) break;
    }
    CHECK(dripped < hello.size());
    CHECK(tls.server().connections() == 0);
    // And a stop while a dripping client is connected returns at once.
    Raw e(tls.port());
    (void)e.send("\x16\x03");
    CHECK(tls.stop(5s));
  }
  SSL_CTX_free(ctx);
}

TEST_CASE("a stop with slow and idle clients connected returns, after the answers in flight",
          "[http]") {
  auto options = Running::fast();
  options.request_timeout = 60s;
  options.idle_timeout = 60s;
  Running s(options);
  Raw slow(s.port());
  (void)slow.send("GET /never-fin");
  Raw idle(s.port());
  (void)idle.send(kGet);
  CHECK(Raw::answers_in(idle.read_answers(1)) == 1);
  Raw busy(s.port());
  (void)busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  std::this_thread::sleep_for(50ms);  // the request has reached a worker
  auto stopped = std::async(std::launch::async, [&] { return s.stop(10s); });
  bool closed = false;
  const std::string last = busy.read_until_close(10s, &closed);
  CHECK(Raw::answers_in(last) == 1);  // finished, not cut
  CHECK_THAT(last, Catch::Contains("Connection: close"));
  CHECK(closed);
  CHECK(stopped.get());
}

TEST_CASE("1,000 slow clients and a full connection cap leave the answers flowing", "[http]") {
  raise_descriptor_limit();
  auto options = Running::fast();
  options.request_timeout = 60s;
  Running s(options);
  std::vector<Raw> slow;
  for (int i = 0; i < 1000; ++i) {
    slow.emplace_back(s.port());
    REQUIRE(slow.back().ok());
    (void)slow.back().send("GET /probe?target=half");
  }
  for (int i = 0; i < 20; ++i) {
    Raw c(s.port());
    (void)c.send("GET /answered HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK_THAT(c.read_until_close(10s), Catch::Contains("GET /answered"));
  }
  slow.clear();

  // At the cap, a new connection takes the place of the oldest idle one.
  auto capped = Running::fast();
  capped.max_connections = 8;
  Running small(capped);
  std::vector<Raw> idle;
  for (int i = 0; i < 8; ++i) {
    idle.emplace_back(small.port());
    (void)idle.back().send(kGet);
    REQUIRE(Raw::answers_in(idle.back().read_answers(1)) == 1);
  }
  Raw fresh(small.port());
  (void)fresh.send("GET /fresh HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK_THAT(fresh.read_answers(1), Catch::Contains("GET /fresh"));
  bool closed = false;
  (void)idle.front().read_until_close(5s, &closed);
  CHECK(closed);  // the oldest idle one made room
  CHECK(small.server().connections() <= 8);
}

TEST_CASE("a handler that throws answers 500 without its message", "[http]") {
  Running s;
  Raw c(s.port());
  (void)c.send("GET /throw HTTP/1.1\r\nHost: x\r\n\r\n" + kGet);
  const std::string answers = c.read_answers(2);
  CHECK(answers.rfind("HTTP/1.1 500 ", 0) == 0);
  CHECK_THAT(answers, !Catch::Contains("secret detail"));
  CHECK_THAT(answers, Catch::Contains("GET /a\n"));  // and the connection goes on
}

namespace {

// A bcrypt hash of `password` at `cost`, by libxcrypt (what htpasswd -B makes).
std::string bcrypt(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  REQUIRE(crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt,
                           sizeof(salt)) != nullptr);
  crypt_data data{};
  const char* hashed = crypt_r(password.c_str(), salt, &data);
  REQUIRE(hashed != nullptr);
  return hashed;
}

std::string basic(const std::string& user, const std::string& password) {
  const std::string pair = user + ":" + password;
  std::string out(4 * ((pair.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(pair.data()),
                                static_cast<int>(pair.size()));
  out.resize(static_cast<std::size_t>(n));
  return "Basic " + out;
}

// CPU time this thread spent in `fn`: work done, whatever else the machine is doing.
template <class F>
double thread_cpu_seconds(F&& fn) {
  timespec a{};
  timespec b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  fn();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return static_cast<double>(b.tv_sec - a.tv_sec) +
         static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e9;
}

}  // namespace

TEST_CASE("basic auth: a success is remembered briefly, and an unknown user costs a bcrypt too",
          "[http]") {
  using getcert::cli::exporter::BasicAuth;
  using getcert::cli::exporter::WebConfig;
  WebConfig web;
  web.users["prometheus"] = bcrypt("right-password", 10);
  web.users["cheap"] = bcrypt("other", 4);
  BasicAuth auth(web, std::chrono::seconds(60));
  REQUIRE(auth.enabled());

  CHECK_FALSE(auth.check(basic("prometheus", "wrong-password")));
  CHECK_FALSE(auth.check("Bearer x"));
  CHECK_FALSE(auth.check("Basic ===="));
  CHECK(auth.cached() == 0);

  // The first success costs a bcrypt and is remembered; the next is a lookup.
  const double first =
      thread_cpu_seconds([&] { CHECK(auth.check(basic("prometheus", "right-password"))); });
  CHECK(auth.cached() == 1);
  const double again =
      thread_cpu_seconds([&] { CHECK(auth.check(basic("prometheus", "right-password"))); });
  CHECK(auth.cached() == 1);
  CHECK(again < first / 10);
  // A wrong password is never answered from the cache, and is not remembered.
  CHECK_FALSE(auth.check(basic("prometheus", "right-passwordx")));
  CHECK(auth.cached() == 1);

  // An unknown name is checked against a dummy of the costliest hash: it takes a bcrypt's
  // work, as a known name with a wrong password does, so the time does not tell names apart.
  const double known =
      thread_cpu_seconds([&] { CHECK_FALSE(auth.check(basic("prometheus", "guess"))); });
  const double unknown =
      thread_cpu_seconds([&] { CHECK_FALSE(auth.check(basic("nobody", "guess"))); });
  INFO("known user " << known << " s, unknown user " << unknown << " s of CPU");
  CHECK(unknown > known / 3);
  CHECK(unknown < known * 3);
  // The dummy never matches, whatever the password.
  CHECK_FALSE(auth.check(basic("nobody", "right-password")));
  CHECK_FALSE(auth.check(basic("nobody", "")));

  // A success expires: with a TTL of 0 every check is a bcrypt.
  BasicAuth uncached(web, std::chrono::seconds(0));
  CHECK(uncached.check(basic("cheap", "other")));
  CHECK(uncached.check(basic("cheap", "other")));

  // No user configured: every request passes (the web config's default).
  BasicAuth open(WebConfig{}, std::chrono::seconds(60));
  CHECK_FALSE(open.enabled());
  CHECK(open.check(""));
}
