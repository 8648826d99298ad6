#pragma once

// Minimal HTTP/1.1 for the certificate ecosystem (AIA issuers, OCSP, CRLs): plain http:// URLs,
// one request per connection, one deadline, every size capped. The servers are strangers named
// by certificates, so the response is parsed as hostile input.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "getcert/error.hpp"
#include "getcert/verify.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

// Issuer certificates and OCSP responses are a few KiB; the largest public CRLs are a few MiB.
inline constexpr std::size_t kMaxHttpBody = std::size_t{10} * 1024 * 1024;
// One status, header or chunk-size line. 8 KiB is what nginx and Apache accept for a request
// line; certificate servers send header lines of a few dozen bytes.
inline constexpr std::size_t kMaxHttpLine = std::size_t{8} * 1024;
// Header fields in one response (trailers included). Real responses carry about ten; 100 is
// Apache's default LimitRequestFields, so no working server is refused.
inline constexpr std::size_t kMaxHttpHeaders = 100;
// All head bytes together (status lines, fields, chunk-size lines, trailers): a peer that
// keeps every line short and sends interim 1xx responses forever is still stopped.
inline constexpr std::size_t kMaxHttpHeadBytes = std::size_t{64} * 1024;
// Redirects followed (http:// only): enough for a moved file, too few to make a loop costly.
inline constexpr int kMaxHttpRedirects = 3;

// An HTTP/1.x response parsed incrementally from bytes split however the peer wrote them:
// status line, headers (names case-insensitive), then a Content-Length, chunked (extensions and
// trailers allowed) or read-until-close body. Pure: no I/O, no clock. Errors are phrased to
// follow the name of the peer ("sent a header line longer than 8 KiB"): limit_exceeded for a
// cap, malformed_input for anything that is not HTTP.
class HttpResponseParser {
 public:
  explicit HttpResponseParser(std::size_t max_body = kMaxHttpBody) : max_body_(max_body) {}

  // Consumes bytes. After the response is complete (done()) or an error, bytes are ignored.
  Result<void> feed(std::string_view bytes);
  // The peer closed the connection: completes a read-until-close body, else fails.
  Result<void> finish();

  bool done() const noexcept { return state_ == State::done; }
  int status() const noexcept { return status_; }
  const std::string& reason() const noexcept { return reason_; }
  // The first field called `name` (any case), without surrounding blanks.
  std::optional<std::string> header(std::string_view name) const;
  const std::vector<std::uint8_t>& body() const noexcept { return body_; }
  std::vector<std::uint8_t> take_body() noexcept { return std::move(body_); }

 private:
  enum class State {
    status_line,
    header_line,
    fixed_body,
    until_close_body,
    chunk_size_line,
    chunk_data,
    chunk_data_end,
    trailer_line,
    done,
    failed,
  };

  Result<void> feed_line_byte(char c);
  Result<void> on_line(const std::string& line);
  Result<void> on_status_line(const std::string& line);
  Result<void> on_header_line(const std::string& line);
  Result<void> on_chunk_size_line(const std::string& line);
  Result<void> start_body();
  Result<void> append_body(std::string_view bytes);
  Result<void> error(Errc code, std::string message);

  std::size_t max_body_;
  State state_ = State::status_line;
  std::string line_;
  std::size_t head_bytes_ = 0;
  std::size_t framing_bytes_ = 0;  // chunk-size lines and the CR LF after each chunk
  std::size_t header_count_ = 0;
  int status_ = 0;
  std::string reason_;
  std::vector<std::pair<std::string, std::string>> headers_;  // names lower-cased
  std::uint64_t left_ = 0;                                    // of a fixed body or a chunk
  std::vector<std::uint8_t> body_;
  Error error_;  // repeated by every call after the first failure
};

// One download. `role` names the peer in messages ("AIA server", "OCSP responder", "CRL
// server"); a non-empty content_type makes it a POST of `body` (OCSP), else a GET.
struct HttpRequest {
  std::string url;
  std::string role;
  std::string content_type;
  std::vector<std::uint8_t> body;
  std::string proxy;  // VerifyOptions::proxy: empty, or a URL parse_proxy_url() accepts
  // VerifyOptions::download_policy: asked before each connection (redirects too); the
  // addresses it approved are the only ones dialled.
  DownloadPolicy policy;
};

// Fetches the body of a 2xx answer before `deadline`, following up to kMaxHttpRedirects
// http:// redirects. Errors name the role and URL: connect_failed/resolve_failed, timeout,
// limit_exceeded (a cap; the message names it), malformed_input (not HTTP), network_error (an
// error status "HTTP 404", a reset, a close before the answer ends), unsupported (not http://),
// invalid_argument (the policy refused it; the message gives its reason).
Result<std::vector<std::uint8_t>> http_fetch(const HttpRequest& request,
                                             Clock::time_point deadline);

}  // namespace getcert::detail
