#pragma once

// A small, tolerant BER reader for the structures PKCS#12 producers actually emit: definite and
// indefinite lengths, constructed OCTET STRINGs split into segments, non-minimal lengths and
// explicitly encoded DEFAULT values. OpenSSL's d2i templates reject some real files (and would
// hide where they fail), so the PFX skeleton is walked with this instead.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "getcert/error.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12::detail {

using Bytes = std::span<const std::uint8_t>;

// Universal tags used by PKCS#12.
inline constexpr std::uint32_t kTagBoolean = 1;
inline constexpr std::uint32_t kTagInteger = 2;
inline constexpr std::uint32_t kTagBitString = 3;
inline constexpr std::uint32_t kTagOctetString = 4;
inline constexpr std::uint32_t kTagNull = 5;
inline constexpr std::uint32_t kTagOid = 6;
inline constexpr std::uint32_t kTagUtf8String = 12;
inline constexpr std::uint32_t kTagSequence = 16;
inline constexpr std::uint32_t kTagSet = 17;
inline constexpr std::uint32_t kTagPrintableString = 19;
inline constexpr std::uint32_t kTagT61String = 20;
inline constexpr std::uint32_t kTagIa5String = 22;
inline constexpr std::uint32_t kTagUtcTime = 23;
inline constexpr std::uint32_t kTagGeneralizedTime = 24;
inline constexpr std::uint32_t kTagVisibleString = 26;
inline constexpr std::uint32_t kTagUniversalString = 28;
inline constexpr std::uint32_t kTagBmpString = 30;

enum class TagClass : std::uint8_t { universal = 0, application = 1, context = 2, priv = 3 };

// One decoded TLV. `content` excludes the end-of-contents octets of an indefinite length;
// `encoding` is the whole element (header, content and EOC).
struct Element {
  TagClass cls = TagClass::universal;
  bool constructed = false;
  std::uint32_t tag = 0;
  bool indefinite = false;
  Bytes content;
  Bytes encoding;

  bool is(TagClass c, std::uint32_t t) const noexcept { return cls == c && tag == t; }
  bool is_universal(std::uint32_t t) const noexcept { return is(TagClass::universal, t); }
  bool is_context(std::uint32_t t) const noexcept { return is(TagClass::context, t); }
};

// Reads consecutive elements from a byte range (the content of a constructed element, or a
// whole buffer). Every failure is Errc::malformed_input naming `what` was being read.
class BerReader {
 public:
  explicit BerReader(Bytes data) : data_(data) {}

  bool empty() const noexcept { return pos_ >= data_.size(); }
  std::size_t remaining() const noexcept { return data_.size() - pos_; }

  // The next element, whatever it is.
  Result<Element> next(const char* what);
  // The next element, which must have universal tag `tag` (any constructed form).
  Result<Element> expect(std::uint32_t tag, const char* what);
  // The next element if it has class/tag (cls, tag); nullopt (nothing consumed) otherwise.
  Result<std::optional<Element>> optional(TagClass cls, std::uint32_t tag, const char* what);

 private:
  Bytes data_;
  std::size_t pos_ = 0;
};

// Parses exactly one element spanning all of `data` (trailing bytes are an error unless
// `trailing` is non-null, which then receives their count).
Result<Element> parse_single(Bytes data, const char* what, std::size_t* trailing = nullptr);

// Reader over the children of a constructed element.
Result<BerReader> children(const Element& e, const char* what);

// OCTET STRING value: primitive content, or the concatenation of a constructed string's
// segments (nested at most a few levels, as BER allows).
Result<std::vector<std::uint8_t>> octet_string(const Element& e, const char* what);
// Same, for [n] IMPLICIT OCTET STRING where the tag is not universal 4.
Result<std::vector<std::uint8_t>> string_value(const Element& e, const char* what);

// OBJECT IDENTIFIER in dotted form.
Result<std::string> oid(const Element& e, const char* what);

// A non-negative INTEGER that fits into 64 bits (iteration counts, versions, key lengths).
Result<std::uint64_t> small_uint(const Element& e, const char* what);

// Uppercase hex, no separators.
std::string hex(Bytes data);

}  // namespace getcert::pkcs12::detail
