// The tolerant BER reader under the PFX walk.

#include <catch2/catch.hpp>

#include "ber.hpp"

namespace getcert::pkcs12::detail {
namespace {

Bytes bytes(const std::vector<std::uint8_t>& v) { return Bytes(v.data(), v.size()); }

}  // namespace

TEST_CASE("BER: indefinite lengths and constructed OCTET STRINGs", "[pkcs12]") {
  // SEQUENCE (indefinite) { OCTET STRING (constructed, indefinite) { "ab", "c" }, INTEGER 3 }
  const std::vector<std::uint8_t> der{0x30, 0x80, 0x24, 0x80, 0x04, 0x02, 'a',  'b',  0x04,
                                      0x01, 'c',  0x00, 0x00, 0x02, 0x01, 0x03, 0x00, 0x00};
  auto top = parse_single(bytes(der), "test");
  REQUIRE(top.has_value());
  CHECK(top->indefinite);
  CHECK(top->encoding.size() == der.size());
  auto r = children(*top, "test");
  REQUIRE(r.has_value());
  auto s = r->expect(kTagOctetString, "s");
  REQUIRE(s.has_value());
  auto value = octet_string(*s, "s");
  REQUIRE(value.has_value());
  CHECK(std::string(value->begin(), value->end()) == "abc");
  auto i = r->expect(kTagInteger, "i");
  REQUIRE(i.has_value());
  CHECK(small_uint(*i, "i").value() == 3);
  CHECK(r->empty());
}

TEST_CASE("BER: non-minimal lengths are accepted, truncation is malformed_input", "[pkcs12]") {
  const std::vector<std::uint8_t> long_form{0x04, 0x82, 0x00, 0x01, 0x41};
  auto e = parse_single(bytes(long_form), "test");
  REQUIRE(e.has_value());
  CHECK(e->content.size() == 1);

  for (std::size_t cut = 0; cut < long_form.size(); ++cut) {
    const std::vector<std::uint8_t> part(long_form.begin(),
                                         long_form.begin() + static_cast<long>(cut));
    auto t = parse_single(bytes(part), "test");
    REQUIRE_FALSE(t.has_value());
    CHECK(t.error().code == Errc::malformed_input);
  }
  const std::vector<std::uint8_t> no_eoc{0x30, 0x80, 0x05, 0x00};
  CHECK_FALSE(parse_single(bytes(no_eoc), "test").has_value());
  const std::vector<std::uint8_t> primitive_indefinite{0x04, 0x80, 0x00, 0x00};
  CHECK_FALSE(parse_single(bytes(primitive_indefinite), "test").has_value());
}

TEST_CASE("BER: hostile nesting is bounded", "[pkcs12]") {
  std::vector<std::uint8_t> deep;
  for (int i = 0; i < 10000; ++i) {
    deep.push_back(0x30);
    deep.push_back(0x80);
  }
  for (int i = 0; i < 10000; ++i) {
    deep.push_back(0);
    deep.push_back(0);
  }
  auto e = parse_single(bytes(deep), "test");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == Errc::malformed_input);
}

TEST_CASE("BER: OIDs and integers", "[pkcs12]") {
  const std::vector<std::uint8_t> oid_der{0x06, 0x09, 0x2A, 0x86, 0x48, 0x86,
                                          0xF7, 0x0D, 0x01, 0x07, 0x01};
  auto e = parse_single(bytes(oid_der), "oid");
  REQUIRE(e.has_value());
  CHECK(oid(*e, "oid").value() == "1.2.840.113549.1.7.1");
  const std::vector<std::uint8_t> negative{0x02, 0x01, 0xFF};
  auto n = parse_single(bytes(negative), "int");
  REQUIRE(n.has_value());
  CHECK_FALSE(small_uint(*n, "int").has_value());
  const std::vector<std::uint8_t> big{0x02, 0x03, 0x01, 0x86, 0xA0};
  auto b = parse_single(bytes(big), "int");
  REQUIRE(b.has_value());
  CHECK(small_uint(*b, "int").value() == 100000);
}

}  // namespace getcert::pkcs12::detail
