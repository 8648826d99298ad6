// Password encodings: BMPString for the PKCS#12 KDF, raw bytes for PBKDF2, and the candidate
// list decode() tries.

#include <catch2/catch.hpp>

#include "password.hpp"

namespace getcert::pkcs12::detail {
namespace {

std::vector<std::uint8_t> plain(const SecureBytes& s) { return {s.begin(), s.end()}; }

}  // namespace

TEST_CASE("UTF-8 passwords become UTF-16BE BMPStrings with a terminator", "[pkcs12]") {
  CHECK(plain(utf8_to_bmp("").value()) == std::vector<std::uint8_t>{0, 0});
  CHECK(plain(utf8_to_bmp("Ab").value()) == std::vector<std::uint8_t>{0, 'A', 0, 'b', 0, 0});
  // U+00E4 and U+263A
  CHECK(plain(utf8_to_bmp("\xC3\xA4\xE2\x98\xBA").value()) ==
        std::vector<std::uint8_t>{0x00, 0xE4, 0x26, 0x3A, 0, 0});
  // U+1F600 outside the BMP: a surrogate pair
  CHECK(plain(utf8_to_bmp("\xF0\x9F\x98\x80").value()) ==
        std::vector<std::uint8_t>{0xD8, 0x3D, 0xDE, 0x00, 0, 0});
  // Invalid UTF-8: lone continuation, overlong, surrogate, truncated
  CHECK_FALSE(utf8_to_bmp("\x80").has_value());
  CHECK_FALSE(utf8_to_bmp("\xC0\xAF").has_value());
  CHECK_FALSE(utf8_to_bmp("\xED\xA0\x80").has_value());
  CHECK_FALSE(utf8_to_bmp("\xE2\x98").has_value());
}

TEST_CASE("BMPString attribute values decode to UTF-8", "[pkcs12]") {
  CHECK(bmp_to_utf8({0x00, 'h', 0x00, 'i'}) == "hi");
  CHECK(bmp_to_utf8({0x26, 0x3A}) == "\xE2\x98\xBA");
  CHECK(bmp_to_utf8({0xD8, 0x3D, 0xDE, 0x00}) == "\xF0\x9F\x98\x80");
  CHECK(bmp_to_utf8({0xD8, 0x3D}) == "\xEF\xBF\xBD");  // unpaired surrogate -> U+FFFD
  CHECK(bmp_to_utf8({0x00}) == "\xEF\xBF\xBD");        // odd length
}

TEST_CASE("password candidates: none or empty -> absent and empty. non-ASCII -> Latin-1 too",
          "[pkcs12]") {
  for (const auto& pw : {std::optional<std::string>{}, std::optional<std::string>{""}}) {
    const auto c = password_candidates(pw);
    REQUIRE(c.size() == 2);
    CHECK(c[0].kind == PasswordKind::absent);
    CHECK(c[0].bmp.at(0).bytes.empty());
    CHECK(c[1].kind == PasswordKind::empty);
    CHECK(plain(c[1].bmp.at(0).bytes) == std::vector<std::uint8_t>{0, 0});
    CHECK(c[1].raw.at(0).bytes.empty());
  }
  const auto ascii = password_candidates(std::string("abc"));
  REQUIRE(ascii.size() == 1);
  CHECK(ascii[0].bmp.size() == 1);
  CHECK(ascii[0].raw.size() == 1);

  const auto latin = password_candidates(std::string("M\xC3\xB6tley"));
  REQUIRE(latin.size() == 1);
  REQUIRE(latin[0].raw.size() == 2);
  CHECK(plain(latin[0].raw[0].bytes) ==
        std::vector<std::uint8_t>{'M', 0xC3, 0xB6, 't', 'l', 'e', 'y'});
  CHECK(plain(latin[0].raw[1].bytes) == std::vector<std::uint8_t>{'M', 0xF6, 't', 'l', 'e', 'y'});
  CHECK(latin[0].raw[1].reinterpreted);
  REQUIRE(latin[0].bmp.size() == 2);
  CHECK(latin[0].bmp[1].reinterpreted);
}

}  // namespace getcert::pkcs12::detail
