#include <openssl/http.h>

#include <array>

#include "detail/dial.hpp"
#include "detail/http.hpp"
#include "detail/ossl.hpp"

namespace getcert::detail {
namespace {

int whole_seconds(std::chrono::milliseconds timeout) {
  const auto s = (timeout.count() + 999) / 1000;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(s, 3600)));
}

Result<std::vector<std::uint8_t>> read_body(BIO* body) {
  std::vector<std::uint8_t> out;
  std::array<unsigned char, 16384> buf{};
  for (;;) {
    const int n = BIO_read(body, buf.data(), static_cast<int>(buf.size()));
    if (n <= 0) break;
    out.insert(out.end(), buf.data(), buf.data() + n);
    if (out.size() > kMaxHttpBody) return fail(Errc::limit_exceeded, "HTTP response too large");
  }
  return out;
}

Error transfer_error(const std::string& verb, const std::string& url,
                     std::chrono::milliseconds timeout) {
  const std::string detail = drain_errors();
  if (detail.find("timeout") != std::string::npos ||
      detail.find("timed out") != std::string::npos) {
    return {Errc::timeout,
            verb + " " + url + " timed out after " + std::to_string(whole_seconds(timeout)) + " s",
            detail};
  }
  if (detail.find("connect") != std::string::npos) {
    return {Errc::connect_failed, "cannot connect to " + url, detail};
  }
  if (detail.find("status code") != std::string::npos || detail.find("HTTP") != std::string::npos) {
    return {Errc::io_error, verb + " " + url + " failed: the server answered with an error",
            detail};
  }
  return {Errc::io_error, verb + " " + url + " failed", detail};
}

struct ParsedUrl {
  std::string host;
  std::string port;
  std::string path;
};

Result<ParsedUrl> parse_http_url(const std::string& url) {
  if (url.rfind("http://", 0) != 0) {
    return fail(Errc::unsupported, "only http:// URLs are fetched, not '" + url + "'");
  }
  int use_ssl = 0;
  char* host = nullptr;
  char* port = nullptr;
  char* path = nullptr;
  if (OSSL_HTTP_parse_url(url.c_str(), &use_ssl, nullptr, &host, &port, nullptr, &path, nullptr,
                          nullptr) != 1) {
    return fail(Errc::invalid_argument, "cannot parse URL '" + url + "'", drain_errors());
  }
  const OpensslString host_owner(host), port_owner(port), path_owner(path);
  return ParsedUrl{host, port, path};
}

// OpenSSL's own connect retries a refused connection until the timeout; dialing ourselves
// makes "nothing listens there" fail at once and keeps one deadline for the whole exchange.
Result<Connection> connect_for(const ParsedUrl& url, std::chrono::milliseconds timeout) {
  std::string host = url.host;
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const auto port = static_cast<std::uint16_t>(std::stoul(url.port));
  return dial_tcp(host, port, Clock::now() + timeout, timeout);
}

// A connected socket wrapped for OpenSSL's HTTP client (which must not close it).
struct HttpLink {
  ParsedUrl url;
  Connection conn;
  BioPtr bio;
};

Result<HttpLink> open_link(const std::string& url, std::chrono::milliseconds timeout) {
  auto parsed = parse_http_url(url);
  if (!parsed) return tl::unexpected(parsed.error());
  auto conn = connect_for(*parsed, timeout);
  if (!conn) return tl::unexpected(conn.error());
  clear_errors();
  BioPtr bio(BIO_new_socket(conn->fd.get(), BIO_NOCLOSE));
  if (!bio) return fail(Errc::internal, "out of memory", drain_errors());
  return HttpLink{std::move(*parsed), std::move(*conn), std::move(bio)};
}

}  // namespace

Result<std::vector<std::uint8_t>> http_get(const std::string& url,
                                           std::chrono::milliseconds timeout) {
  auto link = open_link(url, timeout);
  if (!link) return tl::unexpected(link.error());
  BIO* sock = link->bio.get();
  BioPtr body(OSSL_HTTP_get(url.c_str(), nullptr, nullptr, sock, sock, nullptr, nullptr, 0, nullptr,
                            nullptr, 0, kMaxHttpBody, whole_seconds(timeout)));
  if (!body) return tl::unexpected(transfer_error("GET", url, timeout));
  return read_body(body.get());
}

Result<std::vector<std::uint8_t>> http_post(const std::string& url, const std::string& content_type,
                                            const std::vector<std::uint8_t>& body,
                                            std::chrono::milliseconds timeout) {
  auto link = open_link(url, timeout);
  if (!link) return tl::unexpected(link.error());
  BIO* sock = link->bio.get();
  BioPtr request(BIO_new_mem_buf(body.data(), static_cast<int>(body.size())));
  BioPtr response(OSSL_HTTP_transfer(
      nullptr, link->url.host.c_str(), link->url.port.c_str(), link->url.path.c_str(), 0, nullptr,
      nullptr, sock, sock, nullptr, nullptr, 0, nullptr, content_type.c_str(), request.get(),
      nullptr, 0, kMaxHttpBody, whole_seconds(timeout), 0));
  if (!response) return tl::unexpected(transfer_error("POST", url, timeout));
  return read_body(response.get());
}

}  // namespace getcert::detail
