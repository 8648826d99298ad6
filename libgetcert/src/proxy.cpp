#include "detail/proxy.hpp"

#include "detail/line_channel.hpp"
#include "detail/replies.hpp"
#include "detail/x509_util.hpp"

namespace getcert::detail {

Result<ProxyUrl> parse_proxy_url(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) {
    return fail(Errc::invalid_argument,
                "--proxy takes http://[user:password@]host[:port], not '" + url + "'");
  }
  std::string rest = url.substr(kScheme.size());
  if (const auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  ProxyUrl proxy;
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string credentials = rest.substr(0, at);
    proxy.authorization =
        "Basic " +
        base64(reinterpret_cast<const unsigned char*>(credentials.data()), credentials.size());
    rest = rest.substr(at + 1);
  }
  auto where = parse_endpoint(rest, 80);
  if (!where) {
    return fail(Errc::invalid_argument, "bad proxy address in --proxy: " + where.error().message);
  }
  proxy.host = where->host;
  proxy.port = where->port;
  proxy.display = where->to_string();
  return proxy;
}

Result<Connection> dial_via_proxy(const ProxyUrl& proxy, const Endpoint& target,
                                  Clock::time_point deadline,
                                  std::chrono::milliseconds connect_timeout) {
  auto conn = dial_tcp(proxy.host, proxy.port, deadline, connect_timeout);
  if (!conn) {
    Error e = conn.error();
    e.message = "proxy " + proxy.display + ": " + e.message;
    return tl::unexpected(e);
  }
  LineChannel ch(conn->fd.get(), deadline, "proxy " + proxy.display, "the CONNECT request",
                 Errc::connect_failed);
  const std::string where = target.to_string();
  std::string request =
      "CONNECT " + where + " HTTP/1.1\r\nHost: " + where + "\r\nUser-Agent: getcert\r\n";
  if (!proxy.authorization.empty())
    request += "Proxy-Authorization: " + proxy.authorization + "\r\n";
  request += "\r\n";
  if (auto sent = ch.send(request); !sent) return tl::unexpected(sent.error());

  ProxyReply reply;
  for (;;) {
    auto line = ch.read_line();
    if (!line) return tl::unexpected(line.error());
    auto complete = reply.add(std::move(*line));
    if (!complete) return tl::unexpected(ch.peer_fault(complete.error()));
    if (*complete) break;
  }
  if (!reply.established()) {
    const std::string hint = reply.code() == "407"
                                 ? " (it wants credentials: --proxy http://user:password@host:port)"
                                 : "";
    return fail(Errc::connect_failed, "proxy " + proxy.display + " refused to connect to " + where +
                                          ": " + quote_peer(reply.status_line()) + hint);
  }
  return conn;
}

}  // namespace getcert::detail
