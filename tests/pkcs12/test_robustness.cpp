// Hostile and broken input: truncation, random bytes, PEM, absurd iteration counts and work that
// adds up past the budget, PBMAC1 key lengths no producer writes, a missing legacy provider.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>

#include <openssl/evp.h>

#include "ber.hpp"
#include "crafted.hpp"
#include "crypto.hpp"
#include "fixtures.hpp"
#include "getcert/pkcs12.hpp"
#include "internal/ossl.hpp"
#include "support/skip.hpp"

namespace getcert::pkcs12::test {
namespace {

void append(std::vector<std::uint8_t>& out, detail::Bytes b) {
  out.insert(out.end(), b.begin(), b.end());
}

namespace craft = getcert::test::crafted;

// A decode and the key derivation work it ran, counted in iterations (not timed: a loaded
// machine makes any wall-clock bound either flaky or too loose to catch anything).
struct Counted {
  Result<Bundle> result;
  std::uint64_t derived = 0;
};

Counted counted_decode(const std::vector<std::uint8_t>& pfx, const DecodeOptions& options) {
  const std::uint64_t before = detail::derivation_iterations_run();
  auto result = decode(pfx, options);
  return {std::move(result), detail::derivation_iterations_run() - before};
}

// Checks a refusal for cost: limit_exceeded, naming the knob and the computed cost, and
// refused before the work it would have cost (seconds to minutes) ran: at most `allowed`
// iterations of derivation, for what had to run to find the work at all.
void check_refused_for_cost(const Counted& t, const std::string& cost, std::uint64_t allowed = 0) {
  REQUIRE_FALSE(t.result.has_value());
  INFO(t.result.error().message);
  CHECK(t.result.error().code == Errc::limit_exceeded);
  CHECK(t.result.error().message.find("max_iterations") != std::string::npos);
  CHECK(t.result.error().message.find(cost) != std::string::npos);
  CHECK(t.derived <= allowed);
}

// AES-256-CBC with the PBKDF2-HMAC-SHA256 key of the empty password, as craft::pbes2_aes256()
// (1 iteration) announces it: an encrypted safe decode() can open without a password.
craft::Der encrypt_for_empty_password(const craft::Der& plain) {
  const craft::Der salt(8, 0x5A);
  const craft::Der iv(16, 0x1F);
  unsigned char key[32];
  REQUIRE(PKCS5_PBKDF2_HMAC("", 0, salt.data(), static_cast<int>(salt.size()), 1, EVP_sha256(),
                            sizeof key, key) == 1);
  getcert::internal::EvpCipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  REQUIRE(ctx);
  REQUIRE(EVP_EncryptInit_ex2(ctx.get(), EVP_aes_256_cbc(), key, iv.data(), nullptr) == 1);
  craft::Der out(plain.size() + 32);
  int n1 = 0;
  int n2 = 0;
  REQUIRE(EVP_EncryptUpdate(ctx.get(), out.data(), &n1, plain.data(),
                            static_cast<int>(plain.size())) == 1);
  REQUIRE(EVP_EncryptFinal_ex(ctx.get(), out.data() + n1, &n2) == 1);
  out.resize(static_cast<std::size_t>(n1) + static_cast<std::size_t>(n2));
  return out;
}

}  // namespace

TEST_CASE("truncated vectors never decode and never crash", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  int files = 0;
  for (const auto& row : load_manifest(dir)) {
    const auto full = read_bytes(dir / row.file);
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
  std::mt19937 rng(12345);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible on failure
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
  const fs::path dir = vectors_dir();
  SECTION("the caller's limit is a budget for the whole file") {
    // MAC: SHA-1, 2048 iterations, one block. Certificate safe and shrouded key: PBKDF2-HMAC-SHA1
    // for an AES-256 key, 2048 iterations, two 20-octet blocks each. 2048 + 2 * 4096.
    constexpr std::uint64_t kCost = 2048 + 2 * 4096;
    DecodeOptions options;
    options.password = "cryptography";
    const auto file = read_bytes(dir / "pyca-cert-key-aes256cbc.p12");
    const auto within = decode(file, options);
    REQUIRE(within.has_value());
    CHECK(within->info.work_spent == kCost);
    options.max_iterations = kCost;
    CHECK(decode(file, options).has_value());
    options.max_iterations = kCost - 1;
    const auto result = decode(file, options);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::limit_exceeded);
    CHECK(result.error().message.find("max_iterations") != std::string::npos);
    CHECK(result.error().message.find(std::to_string(kCost)) != std::string::npos);
    options.max_iterations = 1000;  // below a single derivation's count
    CHECK(decode(file, options).error().code == Errc::limit_exceeded);
  }
  SECTION("a MAC iteration count edited to 50,000,000 hits the default limit") {
    const auto good = read_bytes(dir / "pyca-cert-key-aes256cbc.p12");
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
    const auto mac = craft::tlv(0x30, mac_content);
    pfx_content.insert(pfx_content.end(), mac.begin(), mac.end());
    const auto crafted = craft::tlv(0x30, pfx_content);

    DecodeOptions options;
    options.password = "cryptography";
    const auto counted = counted_decode(crafted, options);
    const auto& result = counted.result;
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::limit_exceeded);
    CHECK(result.error().message.find("50000000") != std::string::npos);
    CHECK(result.error().message.find("max_iterations") != std::string::npos);
    CHECK(counted.derived == 0);
    // Raising the limit lets it through to the MAC check (which then fails: wrong MAC).
    options.max_iterations = 100'000'000;
    CHECK(kDefaultMaxIterations < 50'000'000);
  }
}

TEST_CASE("PBMAC1 key lengths no producer writes are malformed, refused before any work",
          "[pkcs12]") {
  const auto safe = craft::data_safe({craft::cert_bag({0x30, 0x00})});
  DecodeOptions options;
  options.password = "1234";
  SECTION("1024 octets: 32 PBKDF2 runs per attempt") {
    const auto t = counted_decode(craft::pfx({safe}, craft::pbmac1_mac(9'000'000, 1024)), options);
    REQUIRE_FALSE(t.result.has_value());
    CHECK(t.result.error().code == Errc::malformed_input);
    CHECK(t.result.error().message.find("keyLength 1024") != std::string::npos);
    CHECK(t.derived == 0);
  }
  SECTION("33 octets, and 20 for HMAC-SHA256: no HMAC output length, or too short") {
    for (const std::uint64_t length : {33U, 20U, 1000U}) {
      INFO("keyLength " << length);
      const auto r = decode(craft::pfx({safe}, craft::pbmac1_mac(1, length)), options);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == Errc::malformed_input);
      CHECK(r.error().message.find("keyLength") != std::string::npos);
    }
  }
  SECTION("the lengths producers write get as far as the MAC check") {
    // The MAC value is zeros, so a well-formed file is a wrong password, not malformed.
    for (const std::uint64_t length : {32U, 48U, 64U}) {
      INFO("keyLength " << length);
      const auto r = decode(craft::pfx({safe}, craft::pbmac1_mac(1, length)), options);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == Errc::wrong_password);
    }
  }
}

TEST_CASE("work that adds up past the budget is refused before it starts", "[pkcs12]") {
  DecodeOptions options;
  options.password = "pw";
  SECTION("40 shrouded keys at 9,999,999 iterations each") {
    const auto key = craft::shrouded_key_bag(craft::pbes2_aes256(9'999'999));
    const auto t =
        counted_decode(craft::pfx({craft::data_safe(craft::repeated(key, 40))}), options);
    check_refused_for_cost(t, "399999960");
    CHECK(t.result.error().message.find("40 shrouded keys") != std::string::npos);
  }
  SECTION("12 encrypted safes, 3DES at 3,000,000 iterations (3 KDF blocks each)") {
    const auto safe = craft::encrypted_safe(craft::pbes1_3des(3'000'000), craft::Der(64, 0xEE));
    const auto t = counted_decode(craft::pfx(craft::repeated(safe, 12)), options);
    check_refused_for_cost(t, "108000000");
    CHECK(t.result.error().message.find("12 encrypted safes") != std::string::npos);
  }
  SECTION("a MAC and a safe each just under the per-derivation cap") {
    const auto safe = craft::encrypted_safe(craft::pbes2_aes256(9'999'999), craft::Der(64, 0xEE));
    const auto t = counted_decode(craft::pfx({safe}, craft::classic_mac(9'999'999)), options);
    check_refused_for_cost(t, "19999998");
  }
  SECTION("a PBMAC1 key of 64 octets from HMAC-SHA1 blocks costs 4 runs per attempt") {
    const auto safe = craft::data_safe({craft::cert_bag({0x30, 0x00})});
    const auto t = counted_decode(
        craft::pfx({safe}, craft::pbmac1_mac(3'000'000, 64, craft::kHmacSha1)), options);
    check_refused_for_cost(t, "12000000");
  }
  SECTION("shrouded keys hidden inside an encrypted safe, once it is open") {
    const auto key = craft::shrouded_key_bag(craft::pbes2_aes256(9'000'000));
    const auto inner = craft::safe_contents(craft::repeated(key, 20));
    const auto safe =
        craft::encrypted_safe(craft::pbes2_aes256(1), encrypt_for_empty_password(inner));
    const auto t = counted_decode(craft::pfx({safe}), DecodeOptions{});
    // Opening the outer safe (1 iteration, per password form tried) is the only work that ran.
    check_refused_for_cost(t, "180000000", 2);
    CHECK(t.result.error().message.find("20 shrouded keys in safe 1") != std::string::npos);
  }
  SECTION("every password form is paid for") {
    // No password: the MAC is tried with the absent and the empty password (two PKCS#12 KDF
    // inputs). 4000 (first MAC guess) + 3000 (3DES safe, reserved) + 4000 (second MAC guess).
    const auto safe = craft::encrypted_safe(craft::pbes1_3des(1000), craft::Der(64, 0xEE));
    const auto file = craft::pfx({safe}, craft::classic_mac(4000));
    DecodeOptions none;
    none.max_iterations = 10'999;
    const auto short_one = decode(file, none);
    REQUIRE_FALSE(short_one.has_value());
    CHECK(short_one.error().code == Errc::limit_exceeded);
    CHECK(short_one.error().message.find("another password form on the MAC") != std::string::npos);
    CHECK(short_one.error().message.find("11000") != std::string::npos);
    none.max_iterations = 11'000;
    const auto enough = decode(file, none);
    REQUIRE_FALSE(enough.has_value());
    CHECK(enough.error().code == Errc::wrong_password);  // both guesses ran; the MAC is junk
  }
}

TEST_CASE("a file just within the budget decodes as before", "[pkcs12]") {
  const auto key = craft::shrouded_key_bag(craft::pbes2_aes256(2500));
  // Three keys at 2500 iterations (one PBKDF2-HMAC-SHA256 block each) and a certificate.
  const auto file = craft::pfx({craft::data_safe({key, key, key})});
  DecodeOptions options;
  options.password = "pw";
  options.max_iterations = 7500;
  const auto r = decode(file, options);
  REQUIRE_FALSE(r.has_value());
  // Within the budget the walk runs: the junk keys then fail to decrypt like a wrong password.
  CHECK(r.error().code == Errc::wrong_password);
  options.max_iterations = 7499;
  CHECK(decode(file, options).error().code == Errc::limit_exceeded);

  const fs::path dir = vectors_dir();
  // Real files: the budget is their exact cost, and each decodes at it and fails one below.
  for (const auto& [name, password] :
       std::vector<std::pair<std::string, std::string>>{{"openssl-test-BER.p12", "12345"},
                                                        {"rfc9579-a3.p12", "1234"},
                                                        {"pkits-DSACACert.p12", "password"}}) {
    INFO(name);
    const auto bytes = read_bytes(dir / name);
    DecodeOptions real;
    real.password = password;
    const auto full = decode(bytes, real);
    REQUIRE(full.has_value());
    real.max_iterations = full->info.work_spent;
    CHECK(decode(bytes, real).has_value());
    real.max_iterations = full->info.work_spent - 1;
    CHECK(decode(bytes, real).error().code == Errc::limit_exceeded);
  }
}

// Runs in a child process (see below) with OPENSSL_MODULES pointing nowhere.
TEST_CASE("legacy provider missing (child)", "[.][legacy_missing_child]") {
  const fs::path dir = vectors_dir();
  DecodeOptions options;
  options.password = "cryptography";
  // RC2-40 needs no provider: getcert decrypts RC2 and RC4 itself.
  const auto rc2 = decode(read_bytes(dir / "pyca-cert-rc2-key-3des.p12"), options);
  REQUIRE(rc2.has_value());
  CHECK_FALSE(rc2->info.legacy_provider_used);
  CHECK(rc2->identities.size() == 1);
  CHECK(rc2->info.safes.at(0).encryption == "pbeWithSHA1And40BitRC2-CBC");
  // Single DES (PBES2) is still only in OpenSSL's legacy provider: a clear unsupported error.
  const craft::Der kdf =
      craft::seq({craft::oid("1.2.840.113549.1.5.12"),
                  craft::seq({craft::octets(craft::Der(8, 0x5A)), craft::integer(1000),
                              craft::seq({craft::oid(craft::kHmacSha256), craft::null_value()})})});
  const craft::Der des_cbc = craft::seq(
      {craft::oid("1.2.840.113549.1.5.13"),
       craft::seq(
           {kdf, craft::seq({craft::oid("1.3.14.3.2.7"), craft::octets(craft::Der(8, 1))})})});
  const auto des =
      decode(craft::pfx({craft::data_safe({craft::shrouded_key_bag(des_cbc)})}), options);
  REQUIRE_FALSE(des.has_value());
  CHECK(des.error().code == Errc::unsupported);
  CHECK(des.error().message ==
        "this file uses DES-CBC (legacy algorithm); OpenSSL's legacy provider could not be "
        "loaded: install libssl3 / set OPENSSL_MODULES");
  // Files without legacy algorithms still work.
  CHECK(decode(read_bytes(dir / "pyca-cert-key-aes256cbc.p12"), options).has_value());
}

TEST_CASE("a missing legacy provider: RC2 still decodes, single DES is a clear error", "[pkcs12]") {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  SpawnOptions child;
  child.extra_env = {"OPENSSL_MODULES=/nonexistent-getcert-test", "OPENSSL_CONF=/dev/null"};
  const auto r = run({self, "[legacy_missing_child]"}, std::chrono::seconds(60), child);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("All tests passed") != std::string::npos);
}

}  // namespace getcert::pkcs12::test
