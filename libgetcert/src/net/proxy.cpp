#include "net/proxy.hpp"

#include <utility>
#include <vector>

#include "internal/encoding.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"
#include "net/line_channel.hpp"
#include "net/replies.hpp"
#include "net/socks5.hpp"
#include "net/timings.hpp"

namespace getcert::detail {

Result<ProxyUrl> parse_proxy_url(const std::string& url) {
  ProxyUrl proxy;
  std::string rest;
  std::uint16_t default_port = 80;
  for (const auto& [scheme, kind] :
       {std::pair<std::string_view, ProxyKind>{"http://", ProxyKind::http},
        {"socks5://", ProxyKind::socks5},
        {"socks5h://", ProxyKind::socks5h}}) {
    if (url.rfind(scheme, 0) == 0) {
      proxy.kind = kind;
      rest = url.substr(scheme.size());
      default_port = kind == ProxyKind::http ? 80 : 1080;
      break;
    }
  }
  if (rest.empty()) {
    return fail(Errc::invalid_argument,
                "--proxy takes http://, socks5:// or socks5h://[user:password@]host[:port], not '" +
                    url + "'");
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string credentials = rest.substr(0, at);
    proxy.authorization =
        "Basic " + internal::base64(reinterpret_cast<const unsigned char*>(credentials.data()),
                                    credentials.size());
    const auto colon = credentials.find(':');
    proxy.username = credentials.substr(0, colon);
    if (colon != std::string::npos) proxy.password = credentials.substr(colon + 1);
    rest = rest.substr(at + 1);
  }
  auto where = parse_endpoint(rest, default_port);
  if (!where) {
    return fail(Errc::invalid_argument, "bad proxy address in --proxy: " + where.error().message);
  }
  proxy.host = where->host;
  proxy.port = where->port;
  proxy.display = where->to_string();
  return proxy;
}

namespace {

Result<Connection> dial_proxy(const ProxyUrl& proxy, Clock::time_point deadline,
                              std::chrono::milliseconds connect_timeout,
                              const std::optional<DnsServer>& resolver) {
  auto conn = dial_tcp(proxy.host, proxy.port, deadline, connect_timeout, resolver);
  if (!conn) {
    Error e = conn.error();
    e.message = "proxy " + proxy.display + ": " + e.message;
    return tl::unexpected(e);
  }
  return conn;
}

Result<Connection> dial_via_socks5(const ProxyUrl& proxy, const Endpoint& target,
                                   Clock::time_point deadline,
                                   std::chrono::milliseconds connect_timeout,
                                   const std::optional<DnsServer>& resolver) {
  // socks5h hands the name to the proxy; socks5 resolves here and offers each address in turn,
  // as a direct connection would.
  std::vector<std::string> hosts{target.host};
  if (proxy.kind == ProxyKind::socks5 && !target.is_ip) {
    GETCERT_TRY_ASSIGN(auto addresses,
                       resolve_numeric(target.host, target.port, deadline, resolver));
    hosts = std::move(addresses);
  }
  std::string tried;
  for (const auto& host : hosts) {
    if (Clock::now() >= deadline) break;
    auto conn = dial_proxy(proxy, deadline, connect_timeout, resolver);
    if (!conn) return tl::unexpected(conn.error());
    StepTimer exchange(Step::proxy, "SOCKS5 " + proxy.display + " to " + host + " port " +
                                        std::to_string(target.port));
    GETCERT_TRY_ASSIGN(auto reply, socks5_connect(conn->fd.get(), deadline,
                                                  {proxy.display, proxy.username, proxy.password,
                                                   host, target.port}));
    exchange.finish(reply == 0, reply == 0 ? std::string() : socks5_reply_text(reply));
    if (reply == 0) return conn;
    // Any refusal may be about this address only (a rule for one address family, an unreachable
    // network), so the next address gets its turn.
    const std::string why = socks5_reply_text(reply);
    if (hosts.size() == 1) {
      return fail(Errc::connect_failed, "proxy " + proxy.display + " refused to connect to " +
                                            target.to_string() + ": " + why);
    }
    tried += (tried.empty() ? "" : ", ") + host + ": " + why;
  }
  if (Clock::now() >= deadline) {
    return fail(Errc::timeout, "connecting to " + target.to_string() + " through proxy " +
                                   proxy.display + " ran out of time" +
                                   (tried.empty() ? "" : " (" + tried + ")"));
  }
  return fail(Errc::connect_failed, "proxy " + proxy.display +
                                        " refused to connect to every address of " +
                                        target.to_string() + " (" + tried + ")");
}

}  // namespace

Result<Connection> dial_via_proxy(const ProxyUrl& proxy, const Endpoint& target,
                                  Clock::time_point deadline,
                                  std::chrono::milliseconds connect_timeout,
                                  const std::optional<DnsServer>& resolver) {
  if (proxy.kind != ProxyKind::http) {
    return dial_via_socks5(proxy, target, deadline, connect_timeout, resolver);
  }
  auto conn = dial_proxy(proxy, deadline, connect_timeout, resolver);
  if (!conn) return tl::unexpected(conn.error());
  StepTimer exchange(Step::proxy, "CONNECT " + target.to_string() + " via " + proxy.display);
  LineChannel ch(conn->fd.get(), deadline, "proxy " + proxy.display, "the CONNECT request",
                 Errc::connect_failed);
  const std::string where = target.to_string();
  std::string request =
      "CONNECT " + where + " HTTP/1.1\r\nHost: " + where + "\r\nUser-Agent: getcert\r\n";
  if (!proxy.authorization.empty())
    request += "Proxy-Authorization: " + proxy.authorization + "\r\n";
  request += "\r\n";
  GETCERT_TRY(ch.send(request));

  ProxyReply reply;
  GETCERT_TRY(read_reply(ch, reply));
  if (!reply.established()) {
    const std::string hint = reply.code() == "407"
                                 ? " (it wants credentials: --proxy http://user:password@host:port)"
                                 : "";
    return fail(Errc::connect_failed,
                "proxy " + proxy.display + " refused to connect to " + where + ": " +
                    quote_untrusted(reply.status_line(), kPeerQuoteMax) + hint);
  }
  exchange.finish(true);
  return conn;
}

}  // namespace getcert::detail
