// Hostile and broken input: truncation, random bytes, PEM, absurd iteration counts, a missing
// legacy provider.

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <random>

#include "ber.hpp"
#include "getcert/pkcs12.hpp"
#include "support.hpp"
#include "support/skip.hpp"

namespace getcert::pkcs12::test {
namespace {

std::vector<std::uint8_t> tlv(std::uint8_t tag, const std::vector<std::uint8_t>& content) {
  std::vector<std::uint8_t> out{tag};
  const std::size_t n = content.size();
  if (n < 0x80) {
    out.push_back(static_cast<std::uint8_t>(n));
  } else if (n < 0x100) {
    out.insert(out.end(), {0x81, static_cast<std::uint8_t>(n)});
  } else {
    out.insert(out.end(),
               {0x82, static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n & 0xFF)});
  }
  out.insert(out.end(), content.begin(), content.end());
  return out;
}

void append(std::vector<std::uint8_t>& out, detail::Bytes b) {
  out.insert(out.end(), b.begin(), b.end());
}

}  // namespace

TEST_CASE("truncated vectors never decode and never crash", "[pkcs12]") {
  const auto dir = vectors_dir();
  if (!dir) {
    GETCERT_SKIP("shared PKCS#12 vectors not found");
  }
  int files = 0;
  for (const auto& row : load_manifest(*dir)) {
    const auto full = read_file(*dir / row.file);
    const std::size_t n = full.size();
    for (std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{10}, n / 4,
                            n / 2, 3 * n / 4, n - 20, n - 2, n - 1}) {
      if (cut >= n) continue;
      const std::vector<std::uint8_t> part(full.begin(), full.begin() + static_cast<long>(cut));
      DecodeOptions options;
      options.password = row.password;
      const auto result = decode(part, options);
      INFO(row.file << " cut at " << cut);
      REQUIRE_FALSE(result.has_value());
      const Errc code = result.error().code;
      CHECK((code == Errc::malformed_input || code == Errc::wrong_password));
    }
    ++files;
  }
  CHECK(files >= 40);
}

TEST_CASE("random bytes are malformed_input", "[pkcs12]") {
  std::mt19937 rng(12345);
  for (int i = 0; i < 300; ++i) {
    std::vector<std::uint8_t> data(rng() % 2000);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    if (i % 2 == 0 && data.size() > 4) {
      // Make it look like a PFX header so the walk gets further.
      data[0] = 0x30;
      data[1] = 0x80;
    }
    const auto result = decode(data);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::malformed_input);
  }
}

TEST_CASE("a PEM file is refused with a helpful message", "[pkcs12]") {
  const std::string pem = "\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const auto result = decode(std::vector<std::uint8_t>(pem.begin(), pem.end()));
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == Errc::malformed_input);
  CHECK(result.error().message.find("PEM") != std::string::npos);
  CHECK_FALSE(decode({}).has_value());
}

TEST_CASE("inputs larger than kMaxInputSize are refused", "[pkcs12]") {
  std::vector<std::uint8_t> huge(kMaxInputSize + 1, 0x30);
  const auto result = decode(huge);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == Errc::limit_exceeded);
}

TEST_CASE("absurd iteration counts are refused before any work", "[pkcs12]") {
  const auto dir = vectors_dir();
  if (!dir) {
    GETCERT_SKIP("shared PKCS#12 vectors not found");
  }
  SECTION("the caller's limit") {
    DecodeOptions options;
    options.password = "cryptography";
    options.max_iterations = 1000;
    const auto result = decode(read_file(*dir / "pyca-cert-key-aes256cbc.p12"), options);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::limit_exceeded);
    CHECK(result.error().message.find("max_iterations") != std::string::npos);
    options.max_iterations = 2048;
    CHECK(decode(read_file(*dir / "pyca-cert-key-aes256cbc.p12"), options).has_value());
  }
  SECTION("a MAC iteration count edited to 50,000,000 hits the default limit") {
    const auto good = read_file(*dir / "pyca-cert-key-aes256cbc.p12");
    auto pfx = detail::parse_single(detail::Bytes(good.data(), good.size()), "t");
    REQUIRE(pfx.has_value());
    auto r = detail::children(*pfx, "t");
    auto version = r->next("v");
    auto auth_safe = r->next("a");
    auto mac_data = r->next("m");
    REQUIRE(mac_data.has_value());
    auto mr = detail::children(*mac_data, "m");
    auto digest_info = mr->next("d");
    auto salt = mr->next("s");
    REQUIRE(salt.has_value());
    std::vector<std::uint8_t> mac_content;
    append(mac_content, digest_info->encoding);
    append(mac_content, salt->encoding);
    const std::vector<std::uint8_t> iterations{0x02, 0x04, 0x02, 0xFA, 0xF0, 0x80};  // 50,000,000
    mac_content.insert(mac_content.end(), iterations.begin(), iterations.end());
    std::vector<std::uint8_t> pfx_content;
    append(pfx_content, version->encoding);
    append(pfx_content, auth_safe->encoding);
    const auto mac = tlv(0x30, mac_content);
    pfx_content.insert(pfx_content.end(), mac.begin(), mac.end());
    const auto crafted = tlv(0x30, pfx_content);

    DecodeOptions options;
    options.password = "cryptography";
    const auto start = std::chrono::steady_clock::now();
    const auto result = decode(crafted, options);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::limit_exceeded);
    CHECK(result.error().message.find("50000000") != std::string::npos);
    CHECK(result.error().message.find("max_iterations") != std::string::npos);
    CHECK(elapsed < std::chrono::seconds(1));
    // Raising the limit lets it through to the MAC check (which then fails: wrong MAC).
    options.max_iterations = 100'000'000;
    CHECK(kDefaultMaxIterations < 50'000'000);
  }
}

// Runs in a child process (see below) with OPENSSL_MODULES pointing nowhere.
TEST_CASE("legacy provider missing (child)", "[.][legacy_missing_child]") {
  const auto dir = vectors_dir();
  REQUIRE(dir.has_value());
  DecodeOptions options;
  options.password = "cryptography";
  const auto result = decode(read_file(*dir / "pyca-cert-rc2-key-3des.p12"), options);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == Errc::unsupported);
  CHECK(result.error().message ==
        "this file uses RC2-40 (legacy algorithm); OpenSSL's legacy provider could not be "
        "loaded: install libssl3 / set OPENSSL_MODULES");
  // Files without legacy algorithms still work.
  CHECK(decode(read_file(*dir / "pyca-cert-key-aes256cbc.p12"), options).has_value());
}

TEST_CASE("a missing legacy provider is a clear unsupported error", "[pkcs12]") {
  if (!vectors_dir()) {
    GETCERT_SKIP("shared PKCS#12 vectors not found");
  }
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const auto r =
      run({self, "[legacy_missing_child]"}, std::nullopt,
          {{"OPENSSL_MODULES", "/nonexistent-getcert-test"}, {"OPENSSL_CONF", "/dev/null"}});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("All tests passed") != std::string::npos);
}

}  // namespace getcert::pkcs12::test
