#include "http/http.hpp"
#include "net/proxy.hpp"

#include <openssl/http.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "getcert/text.hpp"
#include "internal/host_port.hpp"
#include "internal/ossl.hpp"
#include "internal/try.hpp"

namespace getcert::detail {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = kKiB * 1024;
// How much of a peer's line a message quotes.
constexpr std::size_t kQuoteChars = 60;

std::string size_text(std::size_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::string_view kHttpPrefix = "HTTP/";

}  // namespace

// ---- the response parser --------------------------------------------------------------------

Result<void> HttpResponseParser::error(Errc code, std::string message) {
  state_ = State::failed;
  error_ = Error(code, std::move(message));
  return tl::unexpected(error_);
}

std::optional<std::string> HttpResponseParser::header(std::string_view name) const {
  const std::string key = lower(name);
  for (const auto& [field, value] : headers_) {
    if (field == key) return value;
  }
  return std::nullopt;
}

Result<void> HttpResponseParser::feed(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::string_view rest = bytes.substr(i);
    switch (state_) {
      case State::done:
        return {};
      case State::failed:
        return tl::unexpected(error_);
      case State::fixed_body:
      case State::chunk_data: {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left_, rest.size()));
        if (auto ok = append_body(rest.substr(0, n)); !ok) return ok;
        left_ -= n;
        i += n;
        if (left_ == 0) state_ = state_ == State::fixed_body ? State::done : State::chunk_data_end;
        break;
      }
      case State::until_close_body:
        if (auto ok = append_body(rest); !ok) return ok;
        i = bytes.size();
        break;
      default:
        if (auto ok = feed_line_byte(rest.front()); !ok) return ok;
        ++i;
        break;
    }
  }
  return {};
}

Result<void> HttpResponseParser::finish() {
  switch (state_) {
    case State::done:
      return {};
    case State::failed:
      return tl::unexpected(error_);
    case State::until_close_body:
      state_ = State::done;
      return {};
    case State::status_line:
      if (line_.empty()) {
        return error(Errc::network_error, "closed the connection without answering");
      }
      [[fallthrough]];
    default:
      return error(Errc::network_error, "closed the connection before the response was complete");
  }
}

Result<void> HttpResponseParser::feed_line_byte(char c) {
  const bool framing = state_ == State::chunk_size_line || state_ == State::chunk_data_end;
  if (framing) {
    // Chunk framing is not head, but is not free either: a peer sending one-byte chunks with
    // long extensions would otherwise stream forever under the body cap.
    if (++framing_bytes_ > max_body_) {
      return error(Errc::limit_exceeded,
                   "sent more than " + size_text(max_body_) + " of chunk framing");
    }
  } else if (++head_bytes_ > kMaxHttpHeadBytes) {
    return error(Errc::limit_exceeded,
                 "sent more than " + size_text(kMaxHttpHeadBytes) + " of headers");
  }
  if (c == '\n') {
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    std::string line = std::move(line_);
    line_.clear();
    return on_line(line);
  }
  line_.push_back(c);
  if (line_.size() > kMaxHttpLine) {
    const char* what = state_ == State::status_line ? "status line"
                       : framing                    ? "chunk-size line"
                                                    : "header line";
    return error(Errc::limit_exceeded,
                 std::string("sent a ") + what + " longer than " + size_text(kMaxHttpLine));
  }
  // Refuse a peer that is not speaking HTTP as soon as that shows, not at its first newline.
  if (state_ == State::status_line && line_.size() <= kHttpPrefix.size() &&
      kHttpPrefix.substr(0, line_.size()) != line_) {
    return error(Errc::malformed_input,
                 "did not answer with HTTP (it sent " + quote_untrusted(line_, kQuoteChars) + ")");
  }
  return {};
}

Result<void> HttpResponseParser::on_line(const std::string& line) {
  switch (state_) {
    case State::status_line:
      return on_status_line(line);
    case State::header_line:
      return on_header_line(line);
    case State::chunk_size_line:
      return on_chunk_size_line(line);
    case State::chunk_data_end:
      if (!line.empty()) {
        return error(Errc::malformed_input, "sent a chunk longer than its announced size");
      }
      state_ = State::chunk_size_line;
      return {};
    case State::trailer_line:
      if (line.empty()) {
        state_ = State::done;
        return {};
      }
      if (++header_count_ > kMaxHttpHeaders) {
        return error(Errc::limit_exceeded,
                     "sent more than " + std::to_string(kMaxHttpHeaders) + " header fields");
      }
      return {};  // trailers carry nothing a certificate download needs
    default:
      return error(Errc::internal, "HTTP parser in an impossible state");
  }
}

Result<void> HttpResponseParser::on_status_line(const std::string& line) {
  // HTTP/1.1 200 OK  (the reason phrase may be empty or missing)
  const bool shaped = line.size() >= 12 && line.compare(0, kHttpPrefix.size(), kHttpPrefix) == 0 &&
                      is_digit(line[5]) && line[6] == '.' && is_digit(line[7]) && line[8] == ' ' &&
                      is_digit(line[9]) && is_digit(line[10]) && is_digit(line[11]) &&
                      (line.size() == 12 || line[12] == ' ');
  if (!shaped) {
    return error(Errc::malformed_input,
                 "sent a malformed HTTP status line " + quote_untrusted(line, kQuoteChars));
  }
  status_ = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  reason_ = line.size() > 13 ? line.substr(13) : std::string();
  if (status_ < 100)
    return error(Errc::malformed_input, "sent the status code " + line.substr(9, 3));
  if (status_ == 101) {
    return error(Errc::malformed_input, "switched protocols, which getcert never asks for");
  }
  headers_.clear();
  state_ = State::header_line;
  return {};
}

Result<void> HttpResponseParser::on_header_line(const std::string& line) {
  if (line.empty()) return start_body();
  if (line.front() == ' ' || line.front() == '\t') {  // obsolete folding: continues the last field
    if (headers_.empty())
      return error(Errc::malformed_input, "sent a header that starts with a blank");
    headers_.back().second += " " + std::string(trim(line));
    return {};
  }
  if (++header_count_ > kMaxHttpHeaders) {
    return error(Errc::limit_exceeded,
                 "sent more than " + std::to_string(kMaxHttpHeaders) + " header fields");
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos || colon == 0) {
    return error(Errc::malformed_input,
                 "sent a malformed header line " + quote_untrusted(line, kQuoteChars));
  }
  headers_.emplace_back(lower(trim(std::string_view(line).substr(0, colon))),
                        std::string(trim(std::string_view(line).substr(colon + 1))));
  return {};
}

Result<void> HttpResponseParser::start_body() {
  if (status_ < 200) {  // an interim answer (100 Continue, 103 Early Hints): the real one follows
    state_ = State::status_line;
    return {};
  }
  if (status_ == 204 || status_ == 304) {
    state_ = State::done;
    return {};
  }
  if (const auto coding = header("transfer-encoding")) {
    // Only the last coding frames the message; anything else is delimited by the close.
    const std::string codings = lower(*coding);
    const auto comma = codings.rfind(',');
    const std::string_view last =
        trim(comma == std::string::npos ? std::string_view(codings)
                                        : std::string_view(codings).substr(comma + 1));
    state_ = last == "chunked" ? State::chunk_size_line : State::until_close_body;
    return {};
  }
  std::optional<std::uint64_t> length;
  for (const auto& [field, value] : headers_) {
    if (field != "content-length") continue;
    if (value.empty() || value.size() > 19 || !std::all_of(value.begin(), value.end(), is_digit)) {
      return error(Errc::malformed_input,
                   "sent a malformed Content-Length " + quote_untrusted(value, kQuoteChars));
    }
    const std::uint64_t n = std::stoull(value);
    if (length && *length != n) {
      return error(Errc::malformed_input, "sent two different Content-Length headers");
    }
    length = n;
  }
  if (!length) {
    state_ = State::until_close_body;
    return {};
  }
  if (*length > max_body_) {
    return error(Errc::limit_exceeded, "announced " + std::to_string(*length) +
                                           " bytes, more than getcert's limit of " +
                                           size_text(max_body_));
  }
  left_ = *length;
  state_ = left_ == 0 ? State::done : State::fixed_body;
  return {};
}

Result<void> HttpResponseParser::on_chunk_size_line(const std::string& line) {
  // 1a2b;name=value  (extensions are allowed and ignored)
  const std::string_view size = trim(std::string_view(line).substr(0, line.find(';')));
  if (size.empty())
    return error(Errc::malformed_input,
                 "sent a malformed chunk size " + quote_untrusted(line, kQuoteChars));
  std::uint64_t n = 0;
  for (const char c : size) {
    const int v = hex_value(c);
    if (v < 0)
      return error(Errc::malformed_input,
                   "sent a malformed chunk size " + quote_untrusted(line, kQuoteChars));
    n = n * 16 + static_cast<std::uint64_t>(v);
    if (n > max_body_) {
      return error(Errc::limit_exceeded, "sent more than " + size_text(max_body_));
    }
  }
  if (n == 0) {
    state_ = State::trailer_line;
    return {};
  }
  if (body_.size() + n > max_body_) {
    return error(Errc::limit_exceeded, "sent more than " + size_text(max_body_));
  }
  left_ = n;
  state_ = State::chunk_data;
  return {};
}

Result<void> HttpResponseParser::append_body(std::string_view bytes) {
  if (body_.size() + bytes.size() > max_body_) {
    return error(Errc::limit_exceeded, "sent more than " + size_text(max_body_));
  }
  body_.insert(body_.end(), bytes.begin(), bytes.end());
  return {};
}

// ---- the client -------------------------------------------------------------------------------

namespace {

struct HttpTarget {
  std::string host;
  std::uint16_t port = 80;
  std::string host_header;
  std::string path;  // with the query
};

Result<HttpTarget> parse_http_url(const std::string& url) {
  if (lower(url.substr(0, 7)) != "http://") {
    return fail(Errc::unsupported,
                "only http:// URLs are fetched, not " + quote_untrusted(url, kQuoteChars));
  }
  int use_ssl = 0;
  char* host = nullptr;
  char* port = nullptr;
  int port_num = 0;
  char* path = nullptr;
  char* query = nullptr;
  char* fragment = nullptr;
  internal::clear_errors();
  if (OSSL_HTTP_parse_url(url.c_str(), &use_ssl, nullptr, &host, &port, &port_num, &path, &query,
                          &fragment) != 1) {
    return fail(Errc::invalid_argument, "cannot parse the URL " + quote_untrusted(url, kQuoteChars),
                internal::drain_errors());
  }
  const internal::OpensslString host_owner(host), port_owner(port), path_owner(path),
      query_owner(query), fragment_owner(fragment);
  HttpTarget t;
  t.host = host;
  if (t.host.size() > 2 && t.host.front() == '[') t.host = t.host.substr(1, t.host.size() - 2);
  if (port_num <= 0 || port_num > 65535) {
    return fail(Errc::invalid_argument, "bad port in the URL " + quote_untrusted(url, kQuoteChars));
  }
  t.port = static_cast<std::uint16_t>(port_num);
  t.host_header = internal::bracketed_host(t.host);
  if (t.port != 80) t.host_header += ":" + std::to_string(t.port);
  t.path = path != nullptr && *path != '\0' ? path : "/";
  if (query != nullptr && *query != '\0') t.path += std::string("?") + query;
  // The request line and Host header are built from these: no byte may end a line early.
  const auto unsafe = [](const std::string& s) {
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7F; });
  };
  if (unsafe(t.path) || unsafe(t.host)) {
    return fail(Errc::invalid_argument,
                "the URL " + quote_untrusted(url, kQuoteChars) + " contains blanks or controls");
  }
  return t;
}

std::string request_text(const HttpRequest& request, const HttpTarget& target) {
  const bool post = !request.content_type.empty();
  std::string text = std::string(post ? "POST " : "GET ") + target.path +
                     " HTTP/1.1\r\nHost: " + target.host_header +
                     "\r\nUser-Agent: getcert\r\nAccept: */*\r\n";
  if (post) {
    text += "Content-Type: " + request.content_type +
            "\r\nContent-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  text += "Connection: close\r\n\r\n";
  if (post) text.append(request.body.begin(), request.body.end());
  return text;
}

// Everything about one connection's exchange; `who` names the peer ("the AIA server at URL").
class Exchange {
 public:
  Exchange(int fd, std::string who, Clock::time_point deadline, std::chrono::milliseconds budget)
      : fd_(fd), who_(std::move(who)), deadline_(deadline), budget_(budget) {}

  Result<void> send_all(const std::string& data) {
    return send_all_until(
        fd_, data, deadline_, [this] { return timed_out(); }, [this] { return io_failure(); });
  }

  // Reads until the parser has a whole response or the peer closes; the deadline is checked
  // before every read, so a peer that never stops sending is cut off on time.
  Result<void> receive(HttpResponseParser& parser) {
    std::array<char, 16384> buf{};
    while (!parser.done()) {
      auto n = recv_some_until(
          fd_, buf.data(), buf.size(), 0, deadline_, [this] { return timed_out(); },
          [this] { return io_failure(); });
      if (!n) return tl::unexpected(n.error());
      if (*n == 0) {
        if (auto ok = parser.finish(); !ok) return tl::unexpected(blamed(ok.error()));
        break;
      }
      if (auto ok = parser.feed(std::string_view(buf.data(), *n)); !ok) {
        return tl::unexpected(blamed(ok.error()));
      }
    }
    return {};
  }

 private:
  Error timed_out() const {
    return {Errc::timeout, who_ + " timed out after " + duration_text(budget_)};
  }
  Error io_failure() const {
    return {Errc::network_error, "reading from " + who_ + " failed: " + std::strerror(errno)};
  }
  Error blamed(Error e) const {
    e.message = who_ + " " + e.message;
    return e;
  }

  int fd_;
  std::string who_;
  Clock::time_point deadline_;
  std::chrono::milliseconds budget_;
};

// Directly, or through the proxy the target was reached by (a user behind one has no other way
// out).
Result<Connection> dial_http_server(const std::string& proxy_url, const HttpTarget& target,
                                    Clock::time_point deadline,
                                    std::chrono::milliseconds connect_timeout) {
  if (proxy_url.empty()) return dial_tcp(target.host, target.port, deadline, connect_timeout);
  GETCERT_TRY_ASSIGN(auto proxy, parse_proxy_url(proxy_url));
  return dial_via_proxy(proxy, Endpoint{target.host, target.port, is_ip_literal(target.host)},
                        deadline, connect_timeout);
}

// With a policy: the name is resolved first (unless a proxy resolves it), the policy judges
// the host, port and every address, and only the addresses it saw are dialled, so that a DNS
// answer that changes between the check and the connection cannot redirect the download.
Result<Connection> dial_if_allowed(const HttpRequest& request, const std::string& url,
                                   const HttpTarget& target, Clock::time_point deadline,
                                   std::chrono::milliseconds connect_timeout) {
  DownloadTarget judged{url, target.host, target.port, {}};
  if (request.proxy.empty()) {
    GETCERT_TRY_ASSIGN(judged.addresses, resolve_numeric(target.host, target.port, deadline));
  }
  if (auto refused = request.policy(judged)) {
    return fail(Errc::invalid_argument, "not downloaded: " + *refused);
  }
  if (!request.proxy.empty()) {
    return dial_http_server(request.proxy, target, deadline, connect_timeout);
  }
  Result<Connection> last = fail(Errc::resolve_failed, "no address");
  for (const auto& address : judged.addresses) {
    last = dial_tcp(address, target.port, deadline, connect_timeout);
    if (last) return last;
  }
  return last;
}

}  // namespace

Result<std::vector<std::uint8_t>> http_fetch(const HttpRequest& request,
                                             Clock::time_point deadline) {
  const auto budget =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  const std::string role = request.role.empty() ? "server" : request.role;
  std::string url = request.url;
  for (int redirects = 0;; ++redirects) {
    const std::string who = "the " + role + " at " + url;
    GETCERT_TRY_ASSIGN(auto target, parse_http_url(url));
    auto conn = request.policy ? dial_if_allowed(request, url, target, deadline,
                                                 std::max(budget, std::chrono::milliseconds(1)))
                               : dial_http_server(request.proxy, target, deadline,
                                                  std::max(budget, std::chrono::milliseconds(1)));
    if (!conn) {
      Error e = conn.error();
      e.message = who + ": " + e.message;
      return tl::unexpected(e);
    }
    Exchange exchange(conn->fd.get(), who, deadline, budget);
    GETCERT_TRY(exchange.send_all(request_text(request, target)));
    HttpResponseParser parser;
    GETCERT_TRY(exchange.receive(parser));

    const int status = parser.status();
    if (status >= 200 && status < 300) return parser.take_body();
    const std::string answered =
        who + " answered HTTP " + std::to_string(status) +
        (parser.reason().empty() ? "" : " " + quote_untrusted(parser.reason(), kQuoteChars));
    const auto location = parser.header("location");
    if (status < 300 || status >= 400 || !location || location->empty()) {
      return fail(Errc::network_error, answered);
    }
    if (redirects == kMaxHttpRedirects) {
      return fail(Errc::network_error,
                  who + " redirected more than " + std::to_string(kMaxHttpRedirects) + " times");
    }
    if (location->front() == '/') {
      url = "http://" + target.host_header + *location;
    } else if (lower(location->substr(0, 7)) == "http://") {
      url = *location;
    } else {
      return fail(Errc::unsupported, answered + " to " + quote_untrusted(*location, kQuoteChars) +
                                         ", which getcert does not follow (only http:// URLs)");
    }
  }
}

}  // namespace getcert::detail
