#include "getcert/text.hpp"

#include <catch2/catch.hpp>
#include <string>

using getcert::escape_untrusted;
using getcert::is_valid_utf8;
using getcert::valid_utf8;
using namespace std::string_literals;

TEST_CASE("escape_untrusted shows controls and stray bytes as escapes", "[text]") {
  CHECK(escape_untrusted("plain.example.com") == "plain.example.com");
  CHECK(escape_untrusted("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // é ✓ kept
  CHECK(escape_untrusted("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(escape_untrusted("a\r\nb\tc\x07") == "a\\x0d\\x0ab\\x09c\\x07");
  CHECK(escape_untrusted("nul\0x"s) == "nul\\x00x");
  CHECK(escape_untrusted("del\x7f") == "del\\x7f");
  CHECK(escape_untrusted("\xff\xfe") == "\\xff\\xfe");
  CHECK(escape_untrusted("\xc2\x9b"
                         "2J") == "\\u009b2J");  // C1 CSI
  CHECK(escape_untrusted("abc\xe2\x80\xae"
                         "fdp.exe") == "abc\\u202efdp.exe");     // RLO
  CHECK(escape_untrusted("\xc3") == "\\xc3");                    // truncated
  CHECK(escape_untrusted("\xc0\xaf") == "\\xc0\\xaf");           // overlong
  CHECK(escape_untrusted("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // surrogate
  CHECK(escape_untrusted("back\\slash") == "back\\slash");
}

TEST_CASE("valid_utf8 keeps UTF-8 and escapes only what is not", "[text]") {
  CHECK(is_valid_utf8("caf\xc3\xa9"));
  CHECK(is_valid_utf8("\xf0\x9f\x94\x92"));
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xe0\x80\x80"));      // overlong
  CHECK_FALSE(is_valid_utf8("a\xff"));
  CHECK(valid_utf8("caf\xc3\xa9\n") == "caf\xc3\xa9\n");
  CHECK(valid_utf8("a\xff"
                   "b\xc3") == "a\\xffb\\xc3");
  CHECK(is_valid_utf8(valid_utf8("\x80\x81\xfe\xf0\x9f")));
}
