#pragma once

// HTTP/1.1 requests as RFC 9112 frames them, read strictly: the exporter answers Prometheus,
// browsers and curl, none of which sends anything this refuses, and every leniency is a way
// for a front proxy and this server to disagree on where a request ends (request smuggling).
//
// - The request line is METHOD SP TARGET SP HTTP/1.x, single spaces, CRLF; lines end in CRLF
//   only (a bare LF or CR is refused), and there is no obs-fold.
// - A field name is a token followed at once by ':' (a space before the colon is refused).
// - A body is framed by one Content-Length of digits only, or by Transfer-Encoding: chunked;
//   both at once, two Content-Lengths, "+5" or "0x5" are 400; any other coding is 501.
// - The whole head is bounded (431), the target within it (414), the body too (413).
//
// RequestReader is fed the connection's input as it grows and says when a whole request is
// there; it keeps what it has scanned, so a client that drips its bytes costs linear work.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace getcert::cli::exporter::http {

struct Limits {
  std::size_t max_target = 8192;  // the request line's target, as sent (414 past it)
  std::size_t max_head = 16384;   // request line and every header line, CRLFs included (431)
  std::size_t max_headers = 100;  // header lines (431)
  std::size_t max_body = 4096;    // the decoded body (413)
};

struct Request {
  std::string method;
  std::string target;  // as sent
  std::string path;    // percent-decoded, without the query
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::vector<std::pair<std::string, std::string>> params;   // the query, decoded, in order
  std::string body;
  bool keep_alive = true;  // what the client asked for (Connection, and the version's default)

  // The first header or parameter of that name, or nullptr.
  const std::string* header(std::string_view lower_name) const;
  const std::string* param(std::string_view name) const;
};

enum class Parse {
  need_more,  // no whole request yet: read more
  complete,   // `request` is filled; `consumed` bytes of the input were this request
  error,      // answer `status` with `reason` and close: what follows cannot be framed
};

struct ParseResult {
  Parse state = Parse::need_more;
  std::size_t consumed = 0;
  int status = 0;
  std::string reason;  // one line, for the answer's body and the log
};

class RequestReader {
 public:
  explicit RequestReader(Limits limits = {}) : limits_(limits) {}

  // `input` is everything the connection sent since the previous complete request, and only
  // grows between calls. After `complete`, take() the request and drop `consumed` bytes.
  ParseResult parse(std::string_view input);
  // The complete request; the reader is then ready for the next one.
  Request take();
  void reset();
  // Whether any byte of a request has arrived (an idle keep-alive connection has none).
  static bool started(std::string_view input) { return !input.empty(); }

 private:
  ParseResult parse_head(std::string_view head, Request& request);
  ParseResult parse_chunked(std::string_view body, Request& request) const;

  Limits limits_;
  std::size_t scanned_ = 0;              // bytes known not to end the head
  std::optional<std::size_t> line_end_;  // where the request line's CRLF starts
  std::optional<std::size_t> head_;      // the head's length, CRLFCRLF included, once parsed
  std::optional<std::size_t> length_;    // Content-Length, when the body is framed by one
  bool chunked_ = false;
  Request request_;
};

// RFC 3986 percent-decoding; '+' is a space in a query (HTML forms). nullopt for a bad escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);
// The inverse for a query parameter's value: unreserved characters stay, the rest is %XX.
std::string percent_encode(std::string_view text);

// The reason phrase of the statuses the exporter sends ("Unknown" for others).
const char* status_text(int status);

}  // namespace getcert::cli::exporter::http
