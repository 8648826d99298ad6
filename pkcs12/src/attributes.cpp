#include "attributes.hpp"

#include "algorithms.hpp"
#include "internal/try.hpp"
#include "password.hpp"

namespace getcert::pkcs12::detail {
namespace {

// Windows writes friendlyName BMPStrings with a terminating U+0000; it is not part of the name.
std::string strip_trailing_nuls(std::string s) {
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

std::string format_attribute_value(const Element& value) {
  if (value.cls != TagClass::universal) return hex(value.encoding);
  switch (value.tag) {
    case kTagBmpString: {
      auto bytes = string_value(value, "attribute");
      if (!bytes) return hex(value.encoding);
      return strip_trailing_nuls(bmp_to_utf8(*bytes));
    }
    case kTagUtf8String:
    case kTagPrintableString:
    case kTagIa5String:
    case kTagVisibleString:
    case kTagT61String: {
      auto bytes = string_value(value, "attribute");
      if (!bytes) return hex(value.encoding);
      return strip_trailing_nuls(std::string(bytes->begin(), bytes->end()));
    }
    case kTagOctetString: {
      auto bytes = string_value(value, "attribute");
      return bytes ? hex(*bytes) : hex(value.encoding);
    }
    case kTagBitString:
      return value.constructed || value.content.empty() ? hex(value.encoding)
                                                        : hex(value.content.subspan(1));
    case kTagOid: {
      auto text = oid(value, "attribute");
      return text ? describe_oid(*text) : hex(value.encoding);
    }
    case kTagNull:
      return "NULL";
    case kTagBoolean:
      return value.content.size() == 1 ? (value.content[0] != 0 ? "true" : "false")
                                       : hex(value.encoding);
    case kTagInteger: {
      auto v = small_uint(value, "attribute");
      return v ? std::to_string(*v) : hex(value.content);
    }
    default:
      return hex(value.encoding);
  }
}

Result<BagAttributes> parse_bag_attributes(const Element& set) {
  BagAttributes out;
  GETCERT_TRY_ASSIGN(auto r, children(set, "bag attributes"));
  while (!r.empty()) {
    // PKCS12Attribute ::= SEQUENCE { attrId OID, attrValues SET OF ANY }
    GETCERT_TRY_ASSIGN(auto attr, r.expect(kTagSequence, "bag attribute"));
    GETCERT_TRY_ASSIGN(auto ar, children(attr, "bag attribute"));
    GETCERT_TRY_ASSIGN(auto id_el, ar.expect(kTagOid, "bag attribute type"));
    GETCERT_TRY_ASSIGN(auto id, oid(id_el, "bag attribute type"));
    GETCERT_TRY_ASSIGN(auto values, ar.expect(kTagSet, "bag attribute values"));
    GETCERT_TRY_ASSIGN(auto vr, children(values, "bag attribute values"));
    Attribute a;
    a.oid = id;
    a.name = attribute_name(id);
    bool first_value = true;
    while (!vr.empty()) {
      GETCERT_TRY_ASSIGN(auto v, vr.next("bag attribute value"));
      if (!a.value.empty() || !first_value) a.value += ", ";
      a.value += format_attribute_value(v);
      if (first_value && id == oids::kFriendlyName && out.friendly_name.empty()) {
        out.friendly_name = format_attribute_value(v);
      }
      if (first_value && id == oids::kLocalKeyId && out.local_key_id.empty() &&
          v.is_universal(kTagOctetString)) {
        out.local_key_id = format_attribute_value(v);
      }
      first_value = false;
    }
    out.all.push_back(std::move(a));
  }
  return out;
}

}  // namespace getcert::pkcs12::detail
