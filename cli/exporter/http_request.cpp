#include "exporter/http_request.hpp"

#include <algorithm>
#include <cstdint>

namespace getcert::cli::exporter::http {
namespace {

constexpr std::string_view kCrlf = "\r\n";
// A chunk-size line (size and extensions) longer than this is refused, not buffered.
constexpr std::size_t kMaxChunkLine = 1024;
// Chunked framing of a bounded body: sizes, extensions and trailers add at most this much.
constexpr std::size_t kMaxChunkOverhead = 8192;

ParseResult error(int status, std::string reason) {
  return {Parse::error, 0, status, std::move(reason)};
}

// RFC 9110 5.6.2: tchar.
bool is_tchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return is_tchar(static_cast<unsigned char>(c)); });
}

// RFC 9110 5.5: field-vchar, SP and HTAB; obs-text (0x80-0xFF) is allowed as opaque.
bool is_field_value_char(unsigned char c) { return c == '\t' || c >= 0x20 ? c != 0x7f : false; }

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits a comma-separated field value into trimmed elements (empty ones kept, so that a
// caller can refuse them).
std::vector<std::string_view> split_list(std::string_view value) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto comma = value.find(',');
    out.push_back(trim_ows(value.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    value.remove_prefix(comma + 1);
  }
}

// The length of a line whose CRLF has not arrived, as far as it is known: a CR at the end may
// be the start of its CRLF, so it is not counted yet (the verdict must not depend on where the
// network cut the bytes).
std::size_t partial_line(std::string_view body, std::size_t pos) {
  std::size_t n = body.size() - pos;
  if (n > 0 && body.back() == '\r') --n;
  return n;
}

// Leading empty lines before a request line are ignored (RFC 9112 2.2).
std::size_t leading_crlfs(std::string_view input) {
  std::size_t n = 0;
  while (input.substr(n, 2) == kCrlf) n += 2;
  return n;
}

}  // namespace

const std::string* Request::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

const std::string* Request::param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

Request RequestReader::take() {
  Request out = std::move(request_);
  reset();
  return out;
}

void RequestReader::reset() {
  request_ = Request{};
  scanned_ = 0;
  line_end_.reset();
  head_.reset();
  length_.reset();
  chunked_ = false;
}

ParseResult RequestReader::parse(std::string_view input) {
  Request& request = request_;
  if (!head_) {
    const std::size_t start = leading_crlfs(input);
    // Lines end in CRLF only: a bare LF, or a CR before anything but LF, is refused as soon as
    // it arrives rather than waited on. Every check is made at the byte it concerns, so the
    // verdict depends on the bytes alone, never on how the network cut them.
    if (start > limits_.max_head) {
      return error(
          431, "the request head is longer than " + std::to_string(limits_.max_head) + " bytes");
    }
    const std::size_t from = std::max(scanned_, start);
    std::optional<std::size_t> end;
    for (std::size_t i = from; i < input.size(); ++i) {
      if (i >= limits_.max_head) {  // leading empty lines count too
        return error(
            431, "the request head is longer than " + std::to_string(limits_.max_head) + " bytes");
      }
      if (!line_end_ && i - start > limits_.max_target + 32) {
        // The request line alone: method, target, version and two spaces.
        return error(414, "the request target is longer than " +
                              std::to_string(limits_.max_target) + " bytes");
      }
      const char c = input[i];
      if (c == '\n' && (i == 0 || input[i - 1] != '\r')) {
        return error(400, "a line ends in a bare LF (HTTP lines end in CRLF)");
      }
      if (c == '\r' && i + 1 < input.size() && input[i + 1] != '\n') {
        return error(400, "a bare CR in the request head");
      }
      if (c == '\n' && !line_end_) line_end_ = i - 1;
      if (c == '\n' && i >= start + 3 && input.substr(i - 3, 4) == "\r\n\r\n") {
        end = i + 1;
        break;
      }
    }
    if (!end) {
      // A CR at the end is looked at again with the byte that follows it.
      scanned_ = input.empty() || input.back() != '\r' ? input.size() : input.size() - 1;
      return {};
    }
    request = Request{};
    auto parsed = parse_head(input.substr(start, *end - start), request);
    if (parsed.state == Parse::error) return parsed;
    head_ = *end;
  }
  const std::string_view body = input.substr(*head_);
  if (chunked_) {
    auto result = parse_chunked(body, request);
    if (result.state == Parse::complete) result.consumed += *head_;
    return result;
  }
  const std::size_t length = length_.value_or(0);
  if (body.size() < length) return {};
  request.body = std::string(body.substr(0, length));
  return {Parse::complete, *head_ + length, 0, {}};
}

ParseResult RequestReader::parse_head(std::string_view head, Request& request) {
  head.remove_suffix(4);  // the CRLFCRLF
  std::vector<std::string_view> lines;
  for (;;) {
    const auto crlf = head.find(kCrlf);
    lines.push_back(head.substr(0, crlf));
    if (crlf == std::string_view::npos) break;
    head.remove_prefix(crlf + 2);
  }
  if (lines.size() - 1 > limits_.max_headers) {
    return error(431, "more than " + std::to_string(limits_.max_headers) + " header lines");
  }
  for (const auto line : lines) {
    if (line.find('\r') != std::string_view::npos) return error(400, "a bare CR in the head");
  }

  // The request line.
  const std::string_view line = lines.front();
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return error(400, "the request line is not METHOD TARGET HTTP/1.x, single-spaced");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return error(400, "the method is not a token");
  if (target.empty()) return error(400, "the request target is empty");
  if (target.size() > limits_.max_target) {
    return error(
        414, "the request target is longer than " + std::to_string(limits_.max_target) + " bytes");
  }
  for (const char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f)
      return error(400, "the request target holds a control, space or non-ASCII byte");
  }
  if (version == "HTTP/1.1") {
    request.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    request.minor_version = 0;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[6] == '.' &&
             hex_value(version[5]) >= 0 && hex_value(version[5]) <= 9 &&
             hex_value(version[7]) >= 0 && hex_value(version[7]) <= 9) {
    return {Parse::error, 0, 505, "only HTTP/1.0 and HTTP/1.1 are served"};
  } else {
    return error(400, "the request line does not end in HTTP/1.x");
  }
  request.method = std::string(method);
  request.target = std::string(target);

  // origin-form; absolute-form (RFC 9112 3.2.2: a server must accept it); "*" for OPTIONS.
  std::string_view path_and_query = target;
  if (target.front() != '/') {
    const std::string scheme = lower(target.substr(0, std::min<std::size_t>(target.size(), 8)));
    std::size_t after = 0;
    if (scheme.rfind("http://", 0) == 0) after = 7;
    if (scheme.rfind("https://", 0) == 0) after = 8;
    if (after != 0) {
      const auto slash = target.find_first_of("/?", after);
      if (slash == after) return error(400, "an absolute request target without a host");
      path_and_query =
          slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
      if (!path_and_query.empty() && path_and_query.front() == '?') {
        return error(400, "an absolute request target without a path");
      }
    } else if (target != "*" || method != "OPTIONS") {
      return error(400, "the request target is not a path ('/...') or an absolute URL");
    }
  }
  if (path_and_query.find('#') != std::string_view::npos) {
    return error(400, "a request target does not carry a fragment ('#')");
  }
  const auto question = path_and_query.find('?');
  auto path = percent_decode(path_and_query.substr(0, question), false);
  if (!path) return error(400, "a bad percent-escape in the path");
  request.path = std::move(*path);
  if (question != std::string_view::npos) {
    std::string_view query = path_and_query.substr(question + 1);
    while (!query.empty()) {
      const auto amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      if (pair.empty()) continue;
      const auto eq = pair.find('=');
      auto key = percent_decode(pair.substr(0, eq), true);
      auto value = percent_decode(
          eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
      if (!key || !value) return error(400, "a bad percent-escape in the query");
      request.params.emplace_back(std::move(*key), std::move(*value));
    }
  }

  // The header lines.
  std::size_t hosts = 0;
  std::size_t lengths = 0;
  std::string codings;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view field = lines[i];
    if (!field.empty() && is_ows(field.front())) {
      return error(400, "a header line starts with white space (obsolete line folding)");
    }
    const auto colon = field.find(':');
    if (colon == std::string_view::npos) return error(400, "a header line without a colon");
    const std::string_view name = field.substr(0, colon);
    if (!is_token(name)) {
      return error(400, "a header name that is not a token (white space before the colon?)");
    }
    const std::string_view value = trim_ows(field.substr(colon + 1));
    for (const char c : value) {
      if (!is_field_value_char(static_cast<unsigned char>(c))) {
        return error(400, "a header value holds a control character");
      }
    }
    std::string key = lower(name);
    if (key == "host") ++hosts;
    if (key == "content-length") {
      if (++lengths > 1) return error(400, "more than one Content-Length header");
      if (value.empty() || value.size() > 18 ||
          value.find_first_not_of("0123456789") != std::string_view::npos) {
        return error(400, "Content-Length is not a decimal number");
      }
      length_ = std::stoull(std::string(value));
    }
    if (key == "transfer-encoding") {
      if (!codings.empty()) codings += ',';
      codings += value;
    }
    if (key == "connection") {
      for (const auto option : split_list(value)) {
        const std::string o = lower(option);
        if (o == "close") request.keep_alive = false;
      }
    }
    request.headers.emplace_back(std::move(key), std::string(value));
  }
  if (request.minor_version == 0) {
    request.keep_alive = false;
    if (const auto* connection = request.header("connection")) {
      for (const auto option : split_list(*connection)) {
        if (lower(option) == "keep-alive") request.keep_alive = true;
      }
    }
  }
  if (request.minor_version == 1 && hosts != 1) {
    return error(400, hosts == 0 ? "an HTTP/1.1 request without a Host header"
                                 : "more than one Host header");
  }
  if (hosts > 1) return error(400, "more than one Host header");
  if (request.header("transfer-encoding") != nullptr) {
    if (lengths != 0) {
      return error(400, "both Content-Length and Transfer-Encoding: the body's end is ambiguous");
    }
    if (request.minor_version == 0) return error(400, "Transfer-Encoding in an HTTP/1.0 request");
    const auto list = split_list(codings);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string coding = lower(list[i]);
      if (coding.empty()) return error(400, "an empty transfer coding");
      if (coding == "chunked" && i + 1 != list.size()) {
        return error(400, "chunked is not the last transfer coding");
      }
      if (coding != "chunked") {
        return {Parse::error, 0, 501,
                "transfer coding '" + std::string(list[i].substr(0, 40)) + "' is not implemented"};
      }
    }
    chunked_ = true;
  }
  if (length_ && *length_ > limits_.max_body) {
    return error(413,
                 "the request body is larger than " + std::to_string(limits_.max_body) + " bytes");
  }
  return {Parse::complete, 0, 0, {}};
}

ParseResult RequestReader::parse_chunked(std::string_view body, Request& request) const {
  std::string decoded;
  std::size_t pos = 0;
  const auto too_large = [this] {
    return error(413,
                 "the request body is larger than " + std::to_string(limits_.max_body) + " bytes");
  };
  for (;;) {
    if (pos > limits_.max_body + kMaxChunkOverhead) return too_large();
    const auto line_end = body.find(kCrlf, pos);
    if (line_end == std::string_view::npos) {
      if (partial_line(body, pos) > kMaxChunkLine) {
        return error(400, "a chunk-size line is too long");
      }
      return {};
    }
    const std::string_view line = body.substr(pos, line_end - pos);
    if (line.size() > kMaxChunkLine) return error(400, "a chunk-size line is too long");
    std::size_t digits = 0;
    std::uint64_t size = 0;
    while (digits < line.size() && hex_value(line[digits]) >= 0) {
      if (digits == 8) return too_large();
      size = size * 16 + static_cast<std::uint64_t>(hex_value(line[digits]));
      ++digits;
    }
    if (digits == 0) return error(400, "a chunk size is not hexadecimal");
    const std::string_view rest = line.substr(digits);
    if (!rest.empty() && trim_ows(rest).front() != ';') {
      return error(400, "junk after a chunk size");
    }
    for (const char c : rest) {
      if (!is_field_value_char(static_cast<unsigned char>(c))) {
        return error(400, "a control character in a chunk extension");
      }
    }
    pos = line_end + 2;
    if (size == 0) {
      // Trailer fields, then the empty line.
      for (;;) {
        if (pos > limits_.max_body + kMaxChunkOverhead) return too_large();
        const auto end = body.find(kCrlf, pos);
        if (end == std::string_view::npos) {
          if (partial_line(body, pos) > kMaxChunkLine) {
            return error(400, "a trailer line is too long");
          }
          return {};
        }
        const std::string_view trailer = body.substr(pos, end - pos);
        // Checked whether its end has arrived or not, so that how the bytes were cut never
        // decides the verdict.
        if (trailer.size() > kMaxChunkLine) return error(400, "a trailer line is too long");
        pos = end + 2;
        if (trailer.empty()) break;
        const auto colon = trailer.find(':');
        if (colon == std::string_view::npos || !is_token(trailer.substr(0, colon))) {
          return error(400, "a trailer line is not NAME: value");
        }
      }
      request.body = std::move(decoded);
      return {Parse::complete, pos, 0, {}};
    }
    if (decoded.size() + size > limits_.max_body) return too_large();
    if (body.size() - pos < size + 2) return {};
    decoded.append(body.substr(pos, size));
    pos += size;
    if (body.substr(pos, 2) != kCrlf) return error(400, "a chunk's data is not followed by CRLF");
    pos += 2;
  }
}

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int hi = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

const char* status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

}  // namespace getcert::cli::exporter::http
