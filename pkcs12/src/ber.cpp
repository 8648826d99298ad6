#include "ber.hpp"

#include <string>

#include "internal/encoding.hpp"
#include "internal/try.hpp"

namespace getcert::pkcs12::detail {
namespace {

// Indefinite lengths nest inside each other; real files need a handful of levels, a hostile
// one could otherwise exhaust the stack.
constexpr int kMaxBerDepth = 32;

std::string what_msg(const char* what, const char* problem) {
  return std::string("malformed PKCS#12: ") + what + ": " + problem;
}

// Parses one element starting at data[pos]; on success advances pos past it.
Result<Element> parse_at(Bytes data, std::size_t& pos, const char* what, int depth) {
  if (depth > kMaxBerDepth)
    return fail(Errc::malformed_input, what_msg(what, "BER nesting too deep"));
  const std::size_t start = pos;
  auto need = [&](std::size_t n) { return data.size() - pos >= n; };
  if (!need(1)) return fail(Errc::malformed_input, what_msg(what, "truncated (missing tag)"));
  Element e;
  const std::uint8_t first = data[pos++];
  e.cls = static_cast<TagClass>(first >> 6);
  e.constructed = (first & 0x20) != 0;
  e.tag = first & 0x1FU;
  if (e.tag == 0x1F) {
    e.tag = 0;
    for (int i = 0;; ++i) {
      if (!need(1) || i == 4) return fail(Errc::malformed_input, what_msg(what, "bad tag"));
      const std::uint8_t b = data[pos++];
      e.tag = (e.tag << 7) | (b & 0x7FU);
      if ((b & 0x80) == 0) break;
    }
  }
  if (!need(1)) return fail(Errc::malformed_input, what_msg(what, "truncated (missing length)"));
  const std::uint8_t len0 = data[pos++];
  if (len0 == 0x80) {
    if (!e.constructed) {
      return fail(Errc::malformed_input, what_msg(what, "indefinite length on a primitive"));
    }
    e.indefinite = true;
    const std::size_t content_start = pos;
    for (;;) {
      if (!need(2)) return fail(Errc::malformed_input, what_msg(what, "truncated (missing EOC)"));
      if (data[pos] == 0 && data[pos + 1] == 0) break;
      GETCERT_TRY(parse_at(data, pos, what, depth + 1));
    }
    e.content = data.subspan(content_start, pos - content_start);
    pos += 2;
  } else {
    std::size_t len = len0;
    if ((len0 & 0x80) != 0) {
      const std::size_t n = len0 & 0x7FU;
      // Non-minimal long forms are tolerated (BER), but lengths beyond 4 GiB are not real.
      if (n == 0 || n > 4) return fail(Errc::malformed_input, what_msg(what, "bad length"));
      if (!need(n)) return fail(Errc::malformed_input, what_msg(what, "truncated length"));
      len = 0;
      for (std::size_t i = 0; i < n; ++i) len = (len << 8) | data[pos++];
    }
    if (!need(len)) {
      return fail(Errc::malformed_input, what_msg(what, "truncated (length exceeds the data)"));
    }
    e.content = data.subspan(pos, len);
    pos += len;
  }
  e.encoding = data.subspan(start, pos - start);
  return e;
}

Result<void> append_string(const Element& e, std::vector<std::uint8_t>& out, const char* what,
                           int depth) {
  if (!e.constructed) {
    out.insert(out.end(), e.content.begin(), e.content.end());
    return {};
  }
  if (depth > 4)
    return fail(Errc::malformed_input, what_msg(what, "string segments nest too deep"));
  BerReader r(e.content);
  while (!r.empty()) {
    GETCERT_TRY_ASSIGN(auto seg, r.next(what));
    // Segments of a constructed OCTET STRING are OCTET STRINGs themselves.
    if (!seg.is_universal(kTagOctetString)) {
      return fail(Errc::malformed_input, what_msg(what, "bad segment in a constructed string"));
    }
    auto ok = append_string(seg, out, what, depth + 1);
    if (!ok) return ok;
  }
  return {};
}

}  // namespace

Result<Element> BerReader::next(const char* what) {
  if (empty()) return fail(Errc::malformed_input, what_msg(what, "missing element"));
  return parse_at(data_, pos_, what, 0);
}

Result<Element> BerReader::expect(std::uint32_t tag, const char* what) {
  auto e = next(what);
  if (!e) return e;
  if (!e->is_universal(tag)) return fail(Errc::malformed_input, what_msg(what, "unexpected tag"));
  return e;
}

Result<std::optional<Element>> BerReader::optional(TagClass cls, std::uint32_t tag,
                                                   const char* what) {
  if (empty()) return std::optional<Element>{};
  const std::size_t saved = pos_;
  GETCERT_TRY_ASSIGN(auto e, next(what));
  if (!e.is(cls, tag)) {
    pos_ = saved;
    return std::optional<Element>{};
  }
  return std::optional<Element>{e};
}

Result<Element> parse_single(Bytes data, const char* what, std::size_t* trailing) {
  std::size_t pos = 0;
  auto e = parse_at(data, pos, what, 0);
  if (!e) return e;
  if (pos != data.size()) {
    if (trailing == nullptr) {
      return fail(Errc::malformed_input, what_msg(what, "trailing bytes after the structure"));
    }
    *trailing = data.size() - pos;
  } else if (trailing != nullptr) {
    *trailing = 0;
  }
  return e;
}

Result<BerReader> children(const Element& e, const char* what) {
  if (!e.constructed)
    return fail(Errc::malformed_input, what_msg(what, "expected a constructed element"));
  return BerReader(e.content);
}

Result<std::vector<std::uint8_t>> string_value(const Element& e, const char* what) {
  std::vector<std::uint8_t> out;
  GETCERT_TRY(append_string(e, out, what, 0));
  return out;
}

Result<std::vector<std::uint8_t>> octet_string(const Element& e, const char* what) {
  if (!e.is_universal(kTagOctetString)) {
    return fail(Errc::malformed_input, what_msg(what, "expected an OCTET STRING"));
  }
  return string_value(e, what);
}

Result<std::string> oid(const Element& e, const char* what) {
  if (!e.is_universal(kTagOid) || e.constructed || e.content.empty()) {
    return fail(Errc::malformed_input, what_msg(what, "expected an OBJECT IDENTIFIER"));
  }
  std::string out;
  std::uint64_t value = 0;
  bool first = true;
  for (std::size_t i = 0; i < e.content.size(); ++i) {
    const std::uint8_t b = e.content[i];
    if (value > (UINT64_MAX >> 7))
      return fail(Errc::malformed_input, what_msg(what, "OID arc too large"));
    value = (value << 7) | (b & 0x7FU);
    if ((b & 0x80) != 0) {
      if (i + 1 == e.content.size())
        return fail(Errc::malformed_input, what_msg(what, "truncated OID"));
      continue;
    }
    if (first) {
      const std::uint64_t top = value < 40 ? 0 : (value < 80 ? 1 : 2);
      out = std::to_string(top) + "." + std::to_string(value - top * 40);
      first = false;
    } else {
      out += "." + std::to_string(value);
    }
    value = 0;
  }
  return out;
}

Result<std::uint64_t> small_uint(const Element& e, const char* what) {
  if (!e.is_universal(kTagInteger) || e.constructed || e.content.empty()) {
    return fail(Errc::malformed_input, what_msg(what, "expected an INTEGER"));
  }
  if ((e.content[0] & 0x80) != 0)
    return fail(Errc::malformed_input, what_msg(what, "negative INTEGER"));
  std::uint64_t v = 0;
  for (std::uint8_t b : e.content) {
    if (v > (UINT64_MAX >> 8))
      return fail(Errc::malformed_input, what_msg(what, "INTEGER too large"));
    v = (v << 8) | b;
  }
  return v;
}

std::string hex(Bytes data) { return internal::hex_upper(data.data(), data.size()); }

}  // namespace getcert::pkcs12::detail
