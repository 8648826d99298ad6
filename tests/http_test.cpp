// The HTTP/1.1 client that downloads AIA issuers, OCSP answers and CRLs: its response parser
// fed every way a server may split its writes, its caps, and the client against scripted
// servers on loopback (statuses, redirects, deadlines).

#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "http/http.hpp"
#include "support/hostile_peer.hpp"

namespace {

using Catch::Matchers::Contains;
using getcert::Errc;
using getcert::detail::Clock;
using getcert::detail::HttpResponseParser;
using getcert::test::HostilePeer;
using Step = HostilePeer::Step;
using Kind = HostilePeer::Step::Kind;
using namespace std::chrono_literals;

std::string body_of(const HttpResponseParser& p) { return {p.body().begin(), p.body().end()}; }

// Feeds `wire` in pieces of `piece` bytes, then the close when `close` is set.
getcert::Result<void> feed_in_pieces(HttpResponseParser& p, const std::string& wire,
                                     std::size_t piece, bool close = false) {
  for (std::size_t off = 0; off < wire.size(); off += piece) {
    if (auto ok = p.feed(std::string_view(wire).substr(off, piece)); !ok) return ok;
  }
  if (close) return p.finish();
  return {};
}

// Binary, with a NUL and a CR LF inside: a body is bytes, never lines.
const std::string kBody =
    std::string("\x30\x82\x01\x0a", 4) + std::string(300, 'x') + std::string("\r\n\0end", 6);

std::string hex(std::size_t n) {
  std::ostringstream out;
  out << std::uppercase << std::hex << n;
  return out.str();
}

}  // namespace

TEST_CASE("HTTP parser: Content-Length, chunked and read-until-close bodies, split anywhere",
          "[http]") {
  const std::string body = kBody;
  std::string chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, Chunked\r\n\r\n";
  chunked += "a;name=value;x\r\n" + body.substr(0, 10) + "\r\n";
  chunked += "  " + hex(body.size() - 10) + " \r\n" + body.substr(10) + "\r\n";
  chunked += "0;last\r\nX-Trailer: t\r\nChecksum: 1\r\n\r\n";
  struct Case {
    const char* name;
    std::string wire;
    bool needs_close;
  };
  const std::vector<Case> cases = {
      {"Content-Length",
       "HTTP/1.1 200 OK\r\nServer: x\r\nCONTENT-LENGTH: " + std::to_string(body.size()) +
           "\r\n\r\n" + body,
       false},
      {"chunked with extensions and trailers", chunked, false},
      {"read until close (HTTP/1.0, bare LF lines)",
       "HTTP/1.0 200 OK\nContent-Type: application/pkix-cert\n\n" + body, true},
      {"interim 100 Continue first",
       "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body,
       false},
  };
  for (const auto& c : cases) {
    for (const std::size_t piece :
         {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64}, c.wire.size()}) {
      INFO(c.name << ", pieces of " << piece);
      HttpResponseParser p;
      REQUIRE(feed_in_pieces(p, c.wire, piece));
      CHECK(p.done() == !c.needs_close);
      if (c.needs_close) REQUIRE(p.finish());
      CHECK(p.done());
      CHECK(p.status() == 200);
      CHECK(body_of(p) == body);
    }
  }
}

TEST_CASE("HTTP parser: headers are found in any case, bytes after the body are ignored",
          "[http]") {
  HttpResponseParser p;
  REQUIRE(p.feed("HTTP/1.1 404 Not Found\r\nLocation:  /x \r\nContent-Length: 2\r\n\r\nokEXTRA"));
  CHECK(p.done());
  CHECK(p.status() == 404);
  CHECK(p.reason() == "Not Found");
  CHECK(p.header("LOCATION") == std::optional<std::string>("/x"));
  CHECK_FALSE(p.header("etag"));
  CHECK(body_of(p) == "ok");
  CHECK(p.feed("more"));
}

TEST_CASE("HTTP parser: every cap is named, and hit before the bytes are held", "[http]") {
  using getcert::detail::kMaxHttpBody;
  using getcert::detail::kMaxHttpHeaders;
  using getcert::detail::kMaxHttpLine;
  struct Case {
    const char* name;
    std::string wire;
    const char* says;
  };
  std::string many_headers = "HTTP/1.1 200 OK\r\n";
  for (std::size_t i = 0; i <= kMaxHttpHeaders; ++i) many_headers += "X-A: b\r\n";
  std::string head_bytes = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 90; ++i) head_bytes += "X-A: " + std::string(1000, 'b') + "\r\n";
  std::string interim;
  for (int i = 0; i < 10000; ++i) interim += "HTTP/1.1 100 Continue\r\n\r\n";
  const std::vector<Case> cases = {
      {"long status line", "HTTP/1.1 200 " + std::string(kMaxHttpLine, 'x'),
       "sent a status line longer than 8 KiB"},
      {"long header line", "HTTP/1.1 200 OK\r\nX: " + std::string(kMaxHttpLine, 'x'),
       "sent a header line longer than 8 KiB"},
      {"too many headers", many_headers, "sent more than 100 header fields"},
      {"too many head bytes", head_bytes, "sent more than 64 KiB of headers"},
      {"endless interim answers", interim, "sent more than 64 KiB of headers"},
      {"huge Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
       "announced 99999999999 bytes, more than getcert's limit of 10 MiB"},
      {"huge chunk",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n",
       "sent more than 10 MiB"},
      {"endless body", "HTTP/1.1 200 OK\r\n\r\n" + std::string(kMaxHttpBody + 1, 'x'),
       "sent more than 10 MiB"},
      {"long chunk-size line",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + std::string(kMaxHttpLine, 'e'),
       "sent a chunk-size line longer than 8 KiB"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    HttpResponseParser p;
    auto ok = feed_in_pieces(p, c.wire, 4096);
    REQUIRE_FALSE(ok);
    CHECK(ok.error().code == Errc::limit_exceeded);
    CHECK(ok.error().message == c.says);
    CHECK(p.body().size() <= kMaxHttpBody);
    CHECK_FALSE(p.feed("HTTP/1.1 200 OK\r\n\r\n"));  // a failed parser stays failed
  }
}

TEST_CASE("HTTP parser: what is not HTTP is refused at once and quoted safely", "[http]") {
  struct Case {
    std::string wire;
    const char* says;
  };
  const std::vector<Case> cases = {
      {std::string("\x16\x03\x01\x00\x05garbage", 12),
       R"(did not answer with HTTP (it sent "\x16")"},
      {"SSH-2.0-OpenSSH", "did not answer with HTTP (it sent \"S\")"},
      {"HTTP/1.1 2x0 OK\r\n", "sent a malformed HTTP status line \"HTTP/1.1 2x0 OK\""},
      {"HTTP/1.1 200 OK\r\nno colon here\r\n", "sent a malformed header line"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "sent a malformed Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       "sent two different Content-Length headers"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       "sent a malformed chunk size \"zz\""},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n",
       "sent a chunk longer than its announced size"},
      {"HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"},
  };
  for (const auto& c : cases) {
    INFO(c.wire);
    HttpResponseParser p;
    auto ok = feed_in_pieces(p, c.wire, 1);
    REQUIRE_FALSE(ok);
    CHECK(ok.error().code == Errc::malformed_input);
    CHECK_THAT(ok.error().message, Contains(c.says));
  }
}

TEST_CASE("HTTP parser: a close before the end is an error, not a short body", "[http]") {
  for (const std::string wire :
       {"", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"}) {
    INFO(wire);
    HttpResponseParser p;
    REQUIRE(p.feed(wire));
    auto end = p.finish();
    REQUIRE_FALSE(end);
    CHECK_THAT(end.error().message, Contains("closed the connection"));
    CHECK(end.error().code == getcert::Errc::network_error);
  }
}

// ---- the client against scripted servers -------------------------------------------------------

namespace {

std::string url_of(const HostilePeer& peer, const std::string& path = "/ca.der") {
  return "http://127.0.0.1:" + std::to_string(peer.port()) + path;
}

getcert::Result<std::vector<std::uint8_t>> get(const std::string& url,
                                               std::chrono::milliseconds budget = 3s) {
  return getcert::detail::http_fetch({url, "AIA server", {}, {}, {}, {}}, Clock::now() + budget);
}

}  // namespace

TEST_CASE("HTTP client: the request is well formed, and a POST carries its body", "[http]") {
  HostilePeer peer(
      HostilePeer::Script{{Kind::read_until, "\r\n\r\nBODY", 0ms},
                          {Kind::send, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0ms}});
  auto answer = getcert::detail::http_fetch({url_of(peer, "/ocsp?x=1"),
                                             "OCSP responder",
                                             "application/ocsp-request",
                                             {'B', 'O', 'D', 'Y'},
                                             {},
                                             {}},
                                            Clock::now() + 3s);
  REQUIRE(answer);
  CHECK(std::string(answer->begin(), answer->end()) == "ok");
  const auto sent = peer.client_hellos();
  REQUIRE(sent.size() == 1);
  const std::string host = "127.0.0.1:" + std::to_string(peer.port());
  CHECK(sent[0] == "POST /ocsp?x=1 HTTP/1.1\r\nHost: " + host +
                       "\r\nUser-Agent: getcert\r\nAccept: */*\r\n"
                       "Content-Type: application/ocsp-request\r\nContent-Length: 4\r\n"
                       "Connection: close\r\n\r\nBODY");
}

TEST_CASE("HTTP client: a server that pauses or writes byte by byte still delivers the body",
          "[http]") {
  const std::string response =
      "HTTP/1.0 200 OK\r\nContent-Length: " + std::to_string(kBody.size()) + "\r\n\r\n";
  HostilePeer peer(HostilePeer::Script{{Kind::read_until, "\r\n\r\n", 0ms},
                                       {Kind::send_bytewise, response, 0ms},
                                       {Kind::send, kBody.substr(0, 3), 150ms},
                                       {Kind::send_bytewise, kBody.substr(3), 0ms}});
  for (int run = 0; run < 5; ++run) {
    auto answer = get(url_of(peer));
    REQUIRE(answer);
    CHECK(std::string(answer->begin(), answer->end()) == kBody);
  }
}

TEST_CASE("HTTP client: an error status is named with the URL, its reason quoted safely",
          "[http]") {
  HostilePeer peer(HostilePeer::Script{
      {Kind::read_until, "\r\n\r\n", 0ms},
      {Kind::send, "HTTP/1.1 404 Not\x1b[31m Found\r\nContent-Length: 0\r\n\r\n", 0ms}});
  auto answer = get(url_of(peer));
  REQUIRE_FALSE(answer);
  CHECK(answer.error().message ==
        "the AIA server at " + url_of(peer) + " answered HTTP 404 \"Not\\x1b[31m Found\"");
  // A network failure, not a local file's (io_error, exit 11).
  CHECK(answer.error().code == getcert::Errc::network_error);
}

TEST_CASE("HTTP client: redirects are followed a few times, http:// only", "[http]") {
  HostilePeer target(
      HostilePeer::Script{{Kind::read_until, "\r\n\r\n", 0ms},
                          {Kind::send, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nhere", 0ms}});
  HostilePeer moved(HostilePeer::Script{
      {Kind::read_until, "\r\n\r\n", 0ms},
      {Kind::send, "HTTP/1.1 301 Moved\r\nLocation: " + url_of(target, "/new") + "\r\n\r\n", 0ms}});
  auto answer = get(url_of(moved));
  REQUIRE(answer);
  CHECK(std::string(answer->begin(), answer->end()) == "here");
  REQUIRE(target.client_hellos().size() == 1);
  CHECK(target.client_hellos()[0].rfind("GET /new HTTP/1.1\r\n", 0) == 0);

  HostilePeer loop(HostilePeer::Script{
      {Kind::read_until, "\r\n\r\n", 0ms},
      {Kind::send, "HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n", 0ms}});
  auto looped = get(url_of(loop));
  REQUIRE_FALSE(looped);
  CHECK_THAT(looped.error().message, Contains("redirected more than 3 times"));
  CHECK(loop.client_hellos().size() == 4);

  HostilePeer to_https(HostilePeer::Script{
      {Kind::read_until, "\r\n\r\n", 0ms},
      {Kind::send, "HTTP/1.1 301 Moved\r\nLocation: https://example.test/ca.der\r\n\r\n", 0ms}});
  auto refused = get(url_of(to_https));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::unsupported);
  CHECK_THAT(refused.error().message,
             Contains("answered HTTP 301") && Contains("only http:// URLs"));
}

TEST_CASE("HTTP client: a download policy judges host, port and addresses, redirects included",
          "[http]") {
  HostilePeer target(
      HostilePeer::Script{{Kind::read_until, "\r\n\r\n", 0ms},
                          {Kind::send, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nhere", 0ms}});
  HostilePeer moved(HostilePeer::Script{
      {Kind::read_until, "\r\n\r\n", 0ms},
      {Kind::send, "HTTP/1.1 301 Moved\r\nLocation: " + url_of(target, "/new") + "\r\n\r\n", 0ms}});
  std::vector<getcert::DownloadTarget> asked;
  // Allows the first server's port only: the redirect to another port is refused before any
  // connection to it is made.
  const auto only = [&](std::uint16_t port) {
    return [&asked, port](const getcert::DownloadTarget& t) -> std::optional<std::string> {
      asked.push_back(t);
      if (t.port != port) return "port " + std::to_string(t.port) + " is not allowed";
      return std::nullopt;
    };
  };
  getcert::detail::HttpRequest request{url_of(moved), "AIA server", {}, {}, {}, only(moved.port())};
  auto refused = getcert::detail::http_fetch(request, Clock::now() + 3s);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::invalid_argument);
  CHECK_THAT(
      refused.error().message,
      Contains(url_of(target, "/new")) &&
          Contains("not downloaded: port " + std::to_string(target.port()) + " is not allowed"));
  REQUIRE(asked.size() == 2);
  CHECK(asked[0].host == "127.0.0.1");
  CHECK(asked[0].port == moved.port());
  CHECK(asked[0].addresses == std::vector<std::string>{"127.0.0.1"});
  CHECK(asked[1].url == url_of(target, "/new"));
  CHECK(target.connections_settled() == 0);

  // Allowed, the same download goes through; a name is resolved and its addresses shown.
  asked.clear();
  request.url = "http://localhost:" + std::to_string(target.port()) + "/ca.der";
  request.policy = only(target.port());
  auto answer = getcert::detail::http_fetch(request, Clock::now() + 3s);
  REQUIRE(answer);
  CHECK(std::string(answer->begin(), answer->end()) == "here");
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].host == "localhost");
  CHECK_FALSE(asked[0].addresses.empty());
}

TEST_CASE("HTTP client: floods, drips and stalls end at the deadline or a named cap", "[http]") {
  struct Case {
    const char* name;
    HostilePeer::Script script;
    Errc code;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"stall",
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::hold, "", 0ms}},
       Errc::timeout,
       "timed out after"},
      {"drip",
       {{Kind::read_until, "\r\n\r\n", 0ms}, {Kind::drip, "HTTP/1.1 200 OK\r\nX: y\r\n", 100ms}},
       Errc::timeout,
       "timed out after"},
      {"endless headers",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, "HTTP/1.1 200 OK\r\n", 0ms},
        {Kind::flood, "X-Flood: 1\r\n", 0ms}},
       Errc::limit_exceeded,
       "sent more than 100 header fields"},
      {"endless body",
       {{Kind::read_until, "\r\n\r\n", 0ms},
        {Kind::send, "HTTP/1.1 200 OK\r\n\r\n", 0ms},
        {Kind::flood, std::string(65536, 'z'), 0ms}},
       Errc::limit_exceeded,
       "sent more than 10 MiB"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    HostilePeer peer(c.script);
    const auto start = Clock::now();
    auto answer = get(url_of(peer), 1500ms);
    const auto elapsed = Clock::now() - start;
    REQUIRE_FALSE(answer);
    CHECK(answer.error().code == c.code);
    CHECK_THAT(answer.error().message,
               Catch::Matchers::StartsWith("the AIA server at " + url_of(peer) + " " + c.says));
    CHECK(elapsed < 2500ms);  // the deadline plus slack; a bound, not a speed test
  }
}
