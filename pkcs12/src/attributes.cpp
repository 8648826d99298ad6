#include "attributes.hpp"

#include "algorithms.hpp"
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
  auto r = children(set, "bag attributes");
  if (!r) return tl::unexpected(r.error());
  while (!r->empty()) {
    // PKCS12Attribute ::= SEQUENCE { attrId OID, attrValues SET OF ANY }
    auto attr = r->expect(kTagSequence, "bag attribute");
    if (!attr) return tl::unexpected(attr.error());
    auto ar = children(*attr, "bag attribute");
    if (!ar) return tl::unexpected(ar.error());
    auto id_el = ar->expect(kTagOid, "bag attribute type");
    if (!id_el) return tl::unexpected(id_el.error());
    auto id = oid(*id_el, "bag attribute type");
    if (!id) return tl::unexpected(id.error());
    auto values = ar->expect(kTagSet, "bag attribute values");
    if (!values) return tl::unexpected(values.error());
    auto vr = children(*values, "bag attribute values");
    if (!vr) return tl::unexpected(vr.error());
    Attribute a;
    a.oid = *id;
    a.name = attribute_name(*id);
    bool first_value = true;
    while (!vr->empty()) {
      auto v = vr->next("bag attribute value");
      if (!v) return tl::unexpected(v.error());
      if (!a.value.empty() || !first_value) a.value += ", ";
      a.value += format_attribute_value(*v);
      if (first_value && *id == oids::kFriendlyName && out.friendly_name.empty()) {
        out.friendly_name = format_attribute_value(*v);
      }
      if (first_value && *id == oids::kLocalKeyId && out.local_key_id.empty() &&
          v->is_universal(kTagOctetString)) {
        out.local_key_id = format_attribute_value(*v);
      }
      first_value = false;
    }
    out.all.push_back(std::move(a));
  }
  return out;
}

}  // namespace getcert::pkcs12::detail
