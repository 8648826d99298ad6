// read_keystore(): key stores in the forms they arrive in. JKS and JCEKS stores are made by
// Debian's keytool and read back against python3-pyjks as a second reader; PKCS#12 files from
// the producers the other tests use are wrapped in base64 (by coreutils) and PEM armour; hostile
// stores are built byte by byte.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "fixtures.hpp"
#include "getcert/keystore.hpp"
#include "support/skip.hpp"

namespace getcert::pkcs12::test {
namespace {

// Debian's interpreter: python3-pyjks is installed for it, not for any other python3 on PATH.
const char* const kDebianPython = "/usr/bin/python3";

std::string text_of(const std::vector<std::uint8_t>& b) { return {b.begin(), b.end()}; }
std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

std::string hex_of(const SecureBytes& b) {
  return to_hex(std::vector<std::uint8_t>(b.begin(), b.end()));
}

void run_ok(const std::vector<std::string>& argv) {
  const auto r = run(argv, kJavaLimit);
  INFO(argv.at(0) << ": " << r.out << r.err);
  REQUIRE(r.exit_code == 0);
}

Result<Keystore> read_path(const fs::path& p, std::optional<std::string> password,
                           std::optional<std::string> key_password = std::nullopt,
                           bool list = false) {
  KeystoreOptions options;
  options.password = std::move(password);
  options.key_password = std::move(key_password);
  options.list_without_password = list;
  return read_keystore(read_bytes(p), options);
}

std::string message_of(const Result<Keystore>& r) { return r ? "ok" : r.error().message; }

// ---- keytool stores ---------------------------------------------------------------------------

const std::string kStorePass = "store-pass";
const std::string kKeyPass = "other-key-pass";

void keytool(std::vector<std::string> args) {
  args.insert(args.begin(), "keytool");
  run_ok(args);
}

// The stores the tests read, made once per test process (keytool starts a JVM each time).
struct Stores {
  TempDir dir;
  // type -> file: "one.jks"/"one.jceks" (one key, key password = store password) and
  // "many.jks"/"many.jceks" (a key with the PKI chain, a generated EC key, two trusted
  // certificates, key password != store password; JCEKS also a secret key).
  std::map<std::string, fs::path> files;
  fs::path other_cert;  // the trusted certificate outside the PKI

  Stores() {
    const TestPki& pki = test_pki();
    const TestLeaf& leaf = pki.leaves.at(0);
    write_file(dir / "chain.pem", concat({pki.inter_cert, pki.root_cert}));
    run_ok(openssl_export_argv(leaf, dir / "chain.pem", "web", dir / "web.p12", "pass:src-pass"));
    other_cert = dir / "other.pem";
    run_ok({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-keyout", dir / "other.key", "-out", other_cert.string(), "-subj",
            "/CN=outside trust anchor", "-days", "30"});
    for (const std::string type : {"jks", "jceks"}) {
      const std::string one = (dir / ("one." + type));
      keytool({"-genkeypair", "-keystore", one, "-storetype", type, "-storepass", kStorePass,
               "-keypass", kStorePass, "-alias", "solo", "-keyalg", "RSA", "-keysize", "2048",
               "-dname", "CN=solo.test", "-validity", "30"});
      files["one." + type] = one;
      const std::string many = (dir / ("many." + type));
      keytool({"-importkeystore", "-srckeystore", dir / "web.p12", "-srcstoretype", "PKCS12",
               "-srcstorepass", "src-pass", "-srcalias", "web", "-destkeystore", many,
               "-deststoretype", type, "-deststorepass", kStorePass, "-destkeypass", kKeyPass,
               "-noprompt"});
      keytool({"-genkeypair", "-keystore", many, "-storetype", type, "-storepass", kStorePass,
               "-keypass", kKeyPass, "-alias", "gen-ec", "-keyalg", "EC", "-groupname", "secp256r1",
               "-dname", "CN=ec.test", "-validity", "30"});
      keytool({"-importcert", "-noprompt", "-keystore", many, "-storetype", type, "-storepass",
               kStorePass, "-alias", "root-ca", "-file", pki.root_cert.string()});
      keytool({"-importcert", "-noprompt", "-keystore", many, "-storetype", type, "-storepass",
               kStorePass, "-alias", "outside", "-file", other_cert.string()});
      if (type == "jceks") {
        keytool({"-genseckey", "-keystore", many, "-storetype", type, "-storepass", kStorePass,
                 "-keypass", kKeyPass, "-alias", "aes-secret", "-keyalg", "AES", "-keysize",
                 "128"});
      }
      files["many." + type] = many;
    }
  }
};

const Stores& stores() {
  static const Stores s;
  return s;
}

// What pyjks reads from a store: per alias, its type and the hex of its key and certificates.
struct PyjksEntry {
  std::string type;  // "key", "trusted", "secret"
  std::string pkcs8;
  std::vector<std::string> certs;
};
struct PyjksStore {
  std::string type;  // "jks", "jceks"
  std::map<std::string, PyjksEntry> entries;
};

bool have_pyjks() {
  return fs::exists(kDebianPython) && run({kDebianPython, "-c", "import jks"}).exit_code == 0;
}

PyjksStore pyjks_read(const fs::path& store, const std::string& store_pass,
                      const std::string& key_pass) {
  const std::string script = R"PY(
import sys, jks
path, store_pass, key_pass = sys.argv[1:4]
ks = jks.KeyStore.load(path, store_pass, try_decrypt_keys=False)
print("type", ks.store_type)
for alias, pk in ks.private_keys.items():
    pk.decrypt(key_pass)
    print("key", alias, pk.pkey_pkcs8.hex().upper())
    for _, der in pk.cert_chain:
        print("cert", alias, der.hex().upper())
for alias, c in ks.certs.items():
    print("trusted", alias, c.cert.hex().upper())
for alias in ks.secret_keys:
    print("secret", alias, "-")
)PY";
  const auto r = run({kDebianPython, "-c", script, store.string(), store_pass, key_pass});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  PyjksStore out;
  std::istringstream lines(r.out);
  std::string kind;
  std::string alias;
  std::string value;
  while (lines >> kind >> alias) {
    if (kind == "type") {
      out.type = alias;
      continue;
    }
    lines >> value;
    auto& e = out.entries[alias];
    if (kind == "key" || kind == "trusted" || kind == "secret") e.type = kind;
    if (kind == "key") e.pkcs8 = value;
    if (kind == "cert" || kind == "trusted") e.certs.push_back(value);
  }
  return out;
}

// Everything getcert read, compared entry by entry with pyjks.
void check_against_pyjks(const Keystore& ks, const PyjksStore& py) {
  CHECK(to_string(ks.format) == py.type);
  REQUIRE(ks.entries.size() == py.entries.size());
  // Every certificate getcert returned, wherever assembly put it.
  std::set<std::string> all_certs;
  for (const auto& id : ks.bundle.identities) {
    if (id.leaf) all_certs.insert(to_hex(id.leaf->der));
    for (const auto& c : id.chain) all_certs.insert(to_hex(c.der));
  }
  for (const auto& c : ks.bundle.extra_certs) all_certs.insert(to_hex(c.der));
  for (const auto& e : ks.entries) {
    INFO("alias " << e.alias);
    REQUIRE(py.entries.count(e.alias) == 1);
    const PyjksEntry& p = py.entries.at(e.alias);
    if (p.type == "key") {
      CHECK(e.type == KeystoreEntryType::private_key);
      CHECK(e.key_decrypted);
      const auto id = std::find_if(ks.bundle.identities.begin(), ks.bundle.identities.end(),
                                   [&](const Identity& i) { return i.alias == e.alias; });
      REQUIRE(id != ks.bundle.identities.end());
      CHECK(hex_of(id->key.pkcs8_der()) == p.pkcs8);
      REQUIRE(id->leaf.has_value());
      std::vector<std::string> chain{to_hex(id->leaf->der)};
      for (const auto& c : id->chain) chain.push_back(to_hex(c.der));
      CHECK(chain == p.certs);
      CHECK(e.certificates == p.certs.size());
    } else if (p.type == "trusted") {
      CHECK(e.type == KeystoreEntryType::trusted_certificate);
      CHECK(all_certs.count(p.certs.at(0)) == 1);
    } else {
      CHECK(e.type == KeystoreEntryType::secret_key);
    }
  }
}

// ---- byte-built stores -------------------------------------------------------------------------

// A JKS/JCEKS written field by field, for inputs keytool would never produce.
struct StoreBuilder {
  std::vector<std::uint8_t> b;

  explicit StoreBuilder(std::uint32_t magic = 0xFEEDFEED, std::uint32_t version = 2,
                        std::uint32_t count = 1) {
    u32(magic);
    u32(version);
    u32(count);
  }
  StoreBuilder& u16(std::uint32_t v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8U));
    b.push_back(static_cast<std::uint8_t>(v));
    return *this;
  }
  StoreBuilder& u32(std::uint32_t v) {
    u16(v >> 16U);
    return u16(v & 0xFFFFU);
  }
  StoreBuilder& u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v >> 32U));
    return u32(static_cast<std::uint32_t>(v));
  }
  StoreBuilder& raw(const std::string& s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  StoreBuilder& raw(const std::vector<std::uint8_t>& s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  StoreBuilder& utf(const std::string& s) {
    u16(static_cast<std::uint32_t>(s.size()));
    return raw(s);
  }
  // A trusted-certificate entry (version 2 layout).
  StoreBuilder& trusted(const std::string& alias_bytes, const std::vector<std::uint8_t>& der) {
    u32(2).utf(alias_bytes).u64(1700000000000ULL).utf("X.509");
    u32(static_cast<std::uint32_t>(der.size()));
    return raw(der);
  }
  // The integrity digest keytool would write for an ASCII `password` (computed by openssl).
  std::vector<std::uint8_t> sealed(const std::string& password) const {
    std::string input;
    for (const char c : password) input += std::string{'\0', c};
    input += "Mighty Aphrodite" + text_of(b);
    const auto r = run_with_input({"openssl", "dgst", "-sha1", "-binary"}, input);
    REQUIRE(r.exit_code == 0);
    auto out = b;
    out.insert(out.end(), r.out.begin(), r.out.end());
    return out;
  }
};

std::vector<std::uint8_t> der_of(const fs::path& pem) {
  auto certs = parse_certificates_pem(read_file(pem));
  REQUIRE(certs.has_value());
  return certs->at(0).der;
}

void check_malformed(const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  for (const char* pw : {"right", "wrong"}) {
    KeystoreOptions options;
    options.password = pw;
    const auto r = read_keystore(bytes, options);
    INFO(message_of(r));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::malformed_input);
    CHECK(r.error().message.find(needle) != std::string::npos);
  }
}

// ---- PKCS#12 wrappings ----------------------------------------------------------------------

// Every way a PFX arrives as text, made by coreutils and openssl: format name, bytes.
std::vector<std::pair<std::string, std::vector<std::uint8_t>>> wrappings(const fs::path& p12) {
  const std::string der = text_of(read_bytes(p12));
  auto tool = [&](const std::vector<std::string>& argv, const std::string& input) {
    const auto r = run_with_input(argv, input);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  const std::string wrapped76 = tool({"base64"}, der);
  const std::string one_line = tool({"base64", "-w0"}, der);
  std::string url_unpadded = tool({"basenc", "--base64url", "-w0"}, der);
  url_unpadded.erase(std::remove(url_unpadded.begin(), url_unpadded.end(), '='),
                     url_unpadded.end());
  std::string crlf;
  for (const char c : tool({"openssl", "base64", "-e"}, der)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const std::string pem = "-----BEGIN PKCS12-----\n" + tool({"openssl", "base64", "-e"}, der) +
                          "-----END PKCS12-----\n";
  return {
      {"pkcs12", bytes_of(der)},
      {"pkcs12-base64", bytes_of(wrapped76)},
      {"pkcs12-base64", bytes_of("\n\t  " + one_line + "  \n\n")},
      {"pkcs12-base64", bytes_of(url_unpadded)},
      {"pkcs12-base64", bytes_of(crlf)},
      {"pkcs12-pem", bytes_of(pem)},
      {"pkcs12-pem+base64", bytes_of(tool({"base64"}, pem))},
  };
}

// Each wrapping reads exactly as decode() reads the DER.
void check_wrappings(const fs::path& p12, const std::optional<std::string>& password) {
  DecodeOptions decode_options;
  decode_options.password = password;
  const auto expected = decode(read_bytes(p12), decode_options);
  INFO(p12.filename().string() << ": " << (expected ? "" : expected.error().message));
  REQUIRE(expected.has_value());
  for (const auto& [format, bytes] : wrappings(p12)) {
    INFO("as " << format);
    KeystoreOptions options;
    options.password = password;
    const auto ks = read_keystore(bytes, options);
    INFO(message_of(ks));
    REQUIRE(ks.has_value());
    const bool base64 = format == "pkcs12-base64" || format == "pkcs12-pem+base64";
    CHECK(std::string(to_string(ks->format)) + (format == "pkcs12-pem+base64" ? "+base64" : "") ==
          format);
    CHECK(ks->base64_wrapped == base64);
    const auto& got = ks->bundle;
    REQUIRE(got.identities.size() == expected->identities.size());
    for (std::size_t i = 0; i < got.identities.size(); ++i) {
      const auto& a = got.identities[i];
      const auto& b = expected->identities[i];
      CHECK(hex_of(a.key.pkcs8_der()) == hex_of(b.key.pkcs8_der()));
      CHECK(a.leaf.has_value() == b.leaf.has_value());
      if (a.leaf && b.leaf) CHECK(a.leaf->der == b.leaf->der);
      REQUIRE(a.chain.size() == b.chain.size());
      for (std::size_t k = 0; k < a.chain.size(); ++k) CHECK(a.chain[k].der == b.chain[k].der);
      const std::string name = b.key.attributes().friendly_name.empty()
                                   ? b.leaf_attributes.friendly_name
                                   : b.key.attributes().friendly_name;
      CHECK(a.alias == (name.empty() ? std::nullopt : std::optional<std::string>(name)));
    }
    REQUIRE(got.extra_certs.size() == expected->extra_certs.size());
    CHECK(got.extra_cert_aliases.size() == got.extra_certs.size());
    for (std::size_t k = 0; k < got.extra_certs.size(); ++k) {
      CHECK(got.extra_certs[k].der == expected->extra_certs[k].der);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("keystore: JKS and JCEKS from keytool read as pyjks reads them", "[pkcs12][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  REQUIRE_TOOL(have_pyjks(), "python3-pyjks");
  const Stores& s = stores();
  for (const std::string type : {"jks", "jceks"}) {
    DYNAMIC_SECTION(type << ", one key entry, key password = store password") {
      const auto ks = read_path(s.files.at("one." + type), kStorePass);
      INFO(message_of(ks));
      REQUIRE(ks.has_value());
      CHECK(ks->version == 2);
      CHECK(ks->integrity_checked);
      CHECK_FALSE(ks->base64_wrapped);
      REQUIRE(ks->bundle.identities.size() == 1);
      CHECK(ks->bundle.identities[0].alias == std::optional<std::string>("solo"));
      CHECK(ks->bundle.identities[0].leaf->subject_cn == "solo.test");
      CHECK(ks->entries.at(0).protection ==
            (type == "jks" ? "JKS SHA-1 keystream" : "PBEWithMD5AndTripleDES, 200000 iterations"));
      check_against_pyjks(*ks, pyjks_read(s.files.at("one." + type), kStorePass, kStorePass));
    }
    DYNAMIC_SECTION(type << ", several key entries, trusted entries, other key password") {
      const auto& file = s.files.at("many." + type);
      const auto ks = read_path(file, kStorePass, kKeyPass);
      INFO(message_of(ks));
      REQUIRE(ks.has_value());
      CHECK(ks->integrity_checked);
      check_against_pyjks(*ks, pyjks_read(file, kStorePass, kKeyPass));
      REQUIRE(ks->bundle.identities.size() == 2);
      // The imported key keeps its whole chain, leaf -> intermediate -> root.
      const TestPki& pki = test_pki();
      const auto web = std::find_if(ks->bundle.identities.begin(), ks->bundle.identities.end(),
                                    [](const Identity& i) { return i.alias == "web"; });
      REQUIRE(web != ks->bundle.identities.end());
      REQUIRE(web->chain.size() == 2);
      CHECK(web->chain[0].der == der_of(pki.inter_cert));
      CHECK(web->chain[1].der == der_of(pki.root_cert));
      // The trusted certificate outside any chain is an extra certificate with its alias.
      REQUIRE(ks->bundle.extra_certs.size() == 1);
      CHECK(ks->bundle.extra_certs[0].der == der_of(s.other_cert));
      CHECK(ks->bundle.extra_cert_aliases.at(0) == std::optional<std::string>("outside"));
      const auto secrets = std::count_if(ks->entries.begin(), ks->entries.end(), [](const auto& e) {
        return e.type == KeystoreEntryType::secret_key;
      });
      CHECK(secrets == (type == "jceks" ? 1 : 0));
    }
  }
}

TEST_CASE("keystore: store password and key password failures are told apart",
          "[pkcs12][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const Stores& s = stores();
  for (const std::string type : {"jks", "jceks"}) {
    const auto& file = s.files.at("many." + type);
    DYNAMIC_SECTION(type << ": wrong store password") {
      const auto r = read_path(file, std::string("not-it"), kKeyPass);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == Errc::wrong_password);
      CHECK(r.error().message.rfind("wrong store password", 0) == 0);
    }
    DYNAMIC_SECTION(type << ": key password defaults to the store password, which is wrong") {
      const auto r = read_path(file, kStorePass);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == Errc::wrong_key_password);
      CHECK(r.error().message.rfind("wrong key password", 0) == 0);
      CHECK(r.error().message.find("key password differs") != std::string::npos);
    }
    DYNAMIC_SECTION(type << ": wrong key password given") {
      const auto r = read_path(file, kStorePass, std::string("nope"));
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == Errc::wrong_key_password);
      CHECK(r.error().message.rfind("wrong key password", 0) == 0);
    }
    DYNAMIC_SECTION(type << ": no password lists unverified, or fails when keys are needed") {
      const auto listed = read_path(file, std::nullopt, std::nullopt, /*list=*/true);
      INFO(message_of(listed));
      REQUIRE(listed.has_value());
      CHECK_FALSE(listed->integrity_checked);
      CHECK(listed->bundle.identities.empty());
      CHECK(listed->entries.size() == (type == "jceks" ? 5U : 4U));
      CHECK(std::none_of(listed->entries.begin(), listed->entries.end(),
                         [](const auto& e) { return e.key_decrypted; }));
      // leaf + intermediate + root of "web", the EC self-signed leaf, the outside anchor.
      CHECK(listed->bundle.extra_certs.size() == 5);
      CHECK(std::any_of(listed->bundle.info.warnings.begin(), listed->bundle.info.warnings.end(),
                        [](const auto& w) { return w.find("NOT checked") != std::string::npos; }));
      const auto needed = read_path(file, std::nullopt);
      REQUIRE_FALSE(needed.has_value());
      CHECK(needed.error().code == Errc::wrong_password);
      CHECK(needed.error().message.find("password is required") != std::string::npos);
    }
    DYNAMIC_SECTION(type << ": an iteration count above the limit is refused before any work") {
      KeystoreOptions options;
      options.password = kStorePass;
      options.key_password = kKeyPass;
      options.max_iterations = 1000;
      const auto r = read_keystore(read_bytes(file), options);
      INFO(message_of(r));
      // JKS key protection has no iteration count.
      CHECK(r.has_value() == (type == "jks"));
      if (!r) CHECK(r.error().code == Errc::limit_exceeded);
    }
  }
}

TEST_CASE("keystore: base64 and PEM-wrapped Java stores", "[pkcs12][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const Stores& s = stores();
  const auto r = run_with_input({"base64"}, text_of(read_bytes(s.files.at("many.jceks"))));
  REQUIRE(r.exit_code == 0);
  KeystoreOptions options;
  options.password = kStorePass;
  options.key_password = kKeyPass;
  const auto ks = read_keystore(bytes_of(r.out), options);
  INFO(message_of(ks));
  REQUIRE(ks.has_value());
  CHECK(ks->format == KeystoreFormat::jceks);
  CHECK(ks->base64_wrapped);
  CHECK(ks->bundle.identities.size() == 2);
}

TEST_CASE("keystore: Debian's ca-certificates-java trust store", "[pkcs12][keystore]") {
  const fs::path cacerts = "/etc/ssl/certs/java/cacerts";
  if (!fs::exists(cacerts)) GETCERT_SKIP("ca-certificates-java is not installed");
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  REQUIRE_TOOL(have_pyjks(), "python3-pyjks");
  const auto listed = run(
      {"keytool", "-list", "-keystore", cacerts.string(), "-storepass", "changeit"}, kJavaLimit);
  REQUIRE(listed.exit_code == 0);
  std::size_t trusted = 0;
  for (std::size_t at = listed.out.find("trustedCertEntry"); at != std::string::npos;
       at = listed.out.find("trustedCertEntry", at + 1)) {
    ++trusted;
  }
  REQUIRE(trusted > 0);
  const auto ks = read_path(cacerts, std::string("changeit"));
  INFO(message_of(ks));
  REQUIRE(ks.has_value());
  // JKS up to Debian 12's package, PKCS#12 in later ones: whichever it is, found by content.
  const auto magic = read_bytes(cacerts);
  CHECK((ks->format == KeystoreFormat::jks) == (magic.at(0) == 0xFE && magic.at(1) == 0xED));
  CHECK(ks->integrity_checked);
  CHECK(ks->bundle.identities.empty());
  CHECK(ks->bundle.extra_certs.size() == trusted);
  for (const auto& alias : ks->bundle.extra_cert_aliases) CHECK(alias.has_value());
  if (ks->format == KeystoreFormat::jks) {
    const auto unverified = read_path(cacerts, std::nullopt, std::nullopt, /*list=*/true);
    REQUIRE(unverified.has_value());
    CHECK_FALSE(unverified->integrity_checked);
    CHECK(unverified->bundle.extra_certs.size() == trusted);
  }
  if (ks->format == KeystoreFormat::jks) {
    check_against_pyjks(*ks, pyjks_read(cacerts, "changeit", "changeit"));
  }
}

TEST_CASE("keystore: base64 and PEM wrappings of OpenSSL, GnuTLS, keytool, pyca and NSS files",
          "[pkcs12][keystore]") {
  const TestPki& pki = test_pki();
  const TestLeaf& leaf = pki.leaves.at(1);
  // Every producer's tool is checked before the first SECTION: a skip inside a SECTION would end
  // the run before Catch has seen the sections after it (tests/support/skip.hpp).
  REQUIRE_TOOL(have_tool("certtool"), "certtool (gnutls-bin)");
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  REQUIRE_TOOL(
      have_tool("python3") &&
          run({"python3", "-c", "import cryptography.hazmat.primitives.serialization"}).exit_code ==
              0,
      "python3 cryptography");
  REQUIRE_TOOL(have_tool("pk12util") && have_tool("certutil"), "pk12util (libnss3-tools)");
  TempDir tmp;
  write_file(tmp / "chain.pem", concat({pki.inter_cert, pki.root_cert}));
  SECTION("OpenSSL 3, default and -legacy") {
    for (const std::string extra : {"", "-legacy"}) {
      const fs::path out = tmp / ("openssl" + extra + ".p12");
      auto argv = openssl_export_argv(leaf, tmp / "chain.pem", "ossl", out, "pass:pw");
      if (!extra.empty()) argv.push_back(extra);
      run_ok(argv);
      check_wrappings(out, std::string("pw"));
    }
  }
  SECTION("GnuTLS certtool") {
    write_file(tmp / "all.pem", concat({leaf.cert, pki.inter_cert, pki.root_cert}));
    run_ok({"certtool", "--to-p12", "--load-privkey", leaf.key.string(), "--load-certificate",
            tmp / "all.pem", "--p12-name", "gnutls", "--password", "pw", "--outder", "--outfile",
            tmp / "gnutls.p12"});
    check_wrappings(tmp / "gnutls.p12", std::string("pw"));
  }
  SECTION("Java keytool PKCS12 store") {
    keytool({"-genkeypair", "-keystore", tmp / "java.p12", "-storetype", "pkcs12", "-storepass",
             "java-pass", "-alias", "mykey", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
             "CN=java.test", "-validity", "30"});
    check_wrappings(tmp / "java.p12", std::string("java-pass"));
  }
  SECTION("python3 cryptography") {
    const std::string script = R"PY(
import sys
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
key_path, leaf_path, out = sys.argv[1:]
key = serialization.load_pem_private_key(open(key_path, 'rb').read(), None)
leaf = x509.load_pem_x509_certificate(open(leaf_path, 'rb').read())
open(out, 'wb').write(pkcs12.serialize_key_and_certificates(
    b'py', key, leaf, None, serialization.BestAvailableEncryption(b'pw')))
)PY";
    run_ok({"python3", "-c", script, leaf.key.string(), leaf.cert.string(), tmp / "pyca.p12"});
    check_wrappings(tmp / "pyca.p12", std::string("pw"));
  }
  SECTION("NSS pk12util") {
    const std::string db = "sql:" + (tmp / "db");
    fs::create_directory(tmp / "db");
    run_ok({"certutil", "-N", "-d", db, "--empty-password"});
    run_ok(openssl_export_argv(leaf, tmp / "chain.pem", "nsskey", tmp / "in.p12", "pass:in-pass"));
    run_ok({"pk12util", "-i", tmp / "in.p12", "-d", db, "-W", "in-pass", "-K", ""});
    run_ok({"pk12util", "-o", tmp / "nss.p12", "-n", "nsskey", "-d", db, "-W", "pw", "-K", ""});
    check_wrappings(tmp / "nss.p12", std::string("pw"));
  }
}

TEST_CASE("keystore: base64 and PEM wrappings of the public third-party vectors",
          "[pkcs12][keystore]") {
  const fs::path dir = vectors_dir();
  std::size_t checked = 0;
  for (const auto& row : load_manifest(dir)) {
    if (row.negative) continue;
    DecodeOptions options;
    options.password = row.password;
    // Vectors getcert cannot decode at all (GOST, ...) have nothing to compare against.
    if (!decode(read_bytes(dir / row.file), options)) continue;
    check_wrappings(dir / row.file, row.password);
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("keystore: a PKCS#12 whose key has a password of its own", "[pkcs12][keystore]") {
  // `openssl pkcs12 -export -twopass` asks for the MAC and the encryption password on the
  // terminal only, so it runs under a pseudo-terminal. Certificates stay unencrypted
  // (-certpbe NONE): the file password protects the MAC, the key password the key bag.
  REQUIRE_TOOL(have_tool("python3"), "python3");
  const std::string script = R"PY(
import os, pty, sys
key, cert, out, mac_pass, key_pass = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("openssl", ["openssl", "pkcs12", "-export", "-twopass", "-inkey", key, "-in", cert,
                          "-certpbe", "NONE", "-out", out])
answers = [mac_pass, mac_pass, key_pass, key_pass]
seen = b""
while True:
    try:
        data = os.read(fd, 1024)
    except OSError:
        break
    if not data:
        break
    seen += data
    while answers and seen.count(b"Password:") > 4 - len(answers):
        os.write(fd, answers.pop(0).encode() + b"\n")
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
)PY";
  const TestPki& pki = test_pki();
  const TestLeaf& leaf = pki.leaves.at(1);
  TempDir tmp;
  const fs::path file = tmp / "twopass.p12";
  run_ok({"python3", "-c", script, leaf.key.string(), leaf.cert.string(), file.string(), "mac-pass",
          "key-pass"});
  const auto without = read_path(file, std::string("mac-pass"));
  REQUIRE_FALSE(without.has_value());
  CHECK(without.error().code == Errc::wrong_password);

  const auto with = read_path(file, std::string("mac-pass"), std::string("key-pass"));
  INFO(message_of(with));
  REQUIRE(with.has_value());
  CHECK(with->integrity_checked);
  REQUIRE(with->bundle.identities.size() == 1);
  const auto pem = with->bundle.identities[0].key.pem();
  CHECK(to_hex(normalized_key_der(std::string(pem.begin(), pem.end()))) ==
        to_hex(normalized_key_der(read_file(leaf.key))));

  const auto wrong = read_path(file, std::string("mac-pass"), std::string("not-it"));
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().code == Errc::wrong_key_password);
  CHECK(wrong.error().message.rfind("wrong key password", 0) == 0);
  // The key password does not open the MAC.
  const auto swapped = read_path(file, std::string("key-pass"), std::string("key-pass"));
  REQUIRE_FALSE(swapped.has_value());
  CHECK(swapped.error().code == Errc::wrong_password);
}

TEST_CASE("keystore: what is not a key store", "[pkcs12][keystore]") {
  const TestPki& pki = test_pki();
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::vector<std::uint8_t>>>{
           {"PEM certificate", read_bytes(pki.root_cert)},
           {"base64 of a PEM certificate",
            bytes_of(run_with_input({"base64"}, read_file(pki.root_cert)).out)},
           {"empty", {}},
           {"base64 of nonsense", bytes_of("aGVsbG8gd29ybGQ=")},
           {"base64 with a bad digit", bytes_of("MIIB*AAA")},
           {"base64 with padding in the middle", bytes_of("MII=BAAA")},
       }) {
    INFO(name);
    const auto r = read_keystore(bytes, {});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::malformed_input);
  }
  CHECK(decode_base64_text(bytes_of("aGVsbG8")) == bytes_of("hello"));
  CHECK(decode_base64_text(bytes_of(" aGVs\r\nbG8= ")) == bytes_of("hello"));
  CHECK(decode_base64_text(bytes_of("-_8")) == std::vector<std::uint8_t>{0xFB, 0xFF});
  CHECK_FALSE(decode_base64_text(bytes_of("aGVsbG8==")).has_value());
  CHECK_FALSE(decode_base64_text(read_bytes(pki.root_cert)).has_value());
}

TEST_CASE("keystore: hostile Java stores", "[pkcs12][keystore]") {
  const TestPki& pki = test_pki();
  const auto root = der_of(pki.root_cert);

  SECTION("huge counts and lengths in a tiny file are refused before allocating") {
    StoreBuilder huge_count(0xFEEDFEED, 2, 0xFFFFFFFF);
    huge_count.b.resize(40);
    check_malformed(huge_count.b, "entry count 4294967295");
    StoreBuilder jceks_count(0xCECECECE, 2, 200000);
    jceks_count.b.resize(40);
    check_malformed(jceks_count.b, "entry count");

    StoreBuilder key_length;
    key_length.u32(1).utf("k").u64(0).u32(0x7FFFFFFF);
    key_length.b.resize(60);
    check_malformed(key_length.b, "length 2147483647");

    StoreBuilder cert_length;
    cert_length.u32(2).utf("t").u64(0).utf("X.509").u32(0xFFFFFFF0);
    cert_length.b.resize(60);
    check_malformed(cert_length.b, "beyond the end");
  }
  SECTION("a huge chain count") {
    // A real key entry followed by a chain count of 2^32-1.
    StoreBuilder chain;
    const std::vector<std::uint8_t> epki{0x30, 0x42, 0x30, 0x0E, 0x06, 0x0A, 0x2B,
                                         0x06, 0x01, 0x04, 0x01, 0x2A, 0x02, 0x11,
                                         0x01, 0x01, 0x05, 0x00, 0x04, 0x30};
    chain.u32(1).utf("k").u64(0).u32(static_cast<std::uint32_t>(epki.size() + 0x30)).raw(epki);
    chain.b.resize(chain.b.size() + 0x30);
    chain.u32(0xFFFFFFFF);
    chain.b.resize(chain.b.size() + 40);
    check_malformed(chain.b, "certificate chain length 4294967295");
  }
  SECTION("malformed beats wrong password; a bad digest is a wrong password") {
    StoreBuilder good;
    good.trusted("anchor", root);
    const auto sealed = good.sealed("pw");
    KeystoreOptions options;
    options.password = "pw";
    REQUIRE(read_keystore(sealed, options).has_value());

    auto bad_digest = sealed;
    bad_digest.back() ^= 0x01U;
    const auto r = read_keystore(bad_digest, options);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::wrong_password);

    StoreBuilder bad_cert;
    auto broken = root;
    broken[1] ^= 0x7FU;  // the certificate's outer length no longer fits
    bad_cert.trusted("anchor", broken);
    check_malformed(bad_cert.sealed("pw"), "does not parse");

    StoreBuilder trailing;
    trailing.trusted("anchor", root);
    auto extra = trailing.sealed("pw");
    extra.push_back(0);
    check_malformed(extra, "unexpected bytes");

    StoreBuilder unknown_tag;
    unknown_tag.u32(7).utf("x").u64(0);
    check_malformed(unknown_tag.sealed("pw"), "unknown entry type 7");

    StoreBuilder version(0xFEEDFEED, 3, 0);
    check_malformed(version.sealed("pw"), "unknown version 3");
  }
  SECTION("aliases that are not UTF-8, or modified UTF-8 beyond the BMP") {
    StoreBuilder store(0xFEEDFEED, 2, 2);
    store.trusted("\xFF\xFE\x1B[31mred", root);
    // U+1F600 as Java writes it: two three-byte surrogates.
    store.trusted("smile \xED\xA0\xBD\xED\xB8\x80", der_of(pki.inter_cert));
    KeystoreOptions options;
    options.password = "pw";
    const auto ks = read_keystore(store.sealed("pw"), options);
    INFO(message_of(ks));
    REQUIRE(ks.has_value());
    REQUIRE(ks->entries.size() == 2);
    CHECK(ks->entries[0].alias == "\\xff\\xfe\x1B[31mred");
    CHECK(ks->entries[1].alias == "smile \xF0\x9F\x98\x80");
    REQUIRE(ks->bundle.extra_cert_aliases.size() == 2);
    CHECK(ks->bundle.extra_cert_aliases[0] == std::optional<std::string>(ks->entries[0].alias));
  }
  SECTION("a JCEKS secret-key entry nested beyond the cap") {
    StoreBuilder store(0xCECECECE, 2, 1);
    store.u32(3).utf("deep").u64(0).raw(std::vector<std::uint8_t>{0xAC, 0xED, 0x00, 0x05});
    // An object whose class descriptor's superclass chain is 40 deep.
    store.raw(std::vector<std::uint8_t>{0x73});
    for (int i = 0; i < 40; ++i) {
      store.raw(std::vector<std::uint8_t>{0x72}).utf("C").u64(0);
      store.raw(std::vector<std::uint8_t>{0x02}).u16(0).raw(std::vector<std::uint8_t>{0x78});
    }
    store.raw(std::vector<std::uint8_t>{0x70});
    check_malformed(store.sealed("pw"), "nested too deeply");
  }
}

// Real stores (made by keytool) cut at every length and corrupted at every byte. Apart from the
// crafted cases above, so that a machine without keytool skips only these, never a crafted one.
TEST_CASE("keystore: keytool's stores cut and corrupted at every byte", "[pkcs12][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  SECTION("truncated at every length, with the right and a wrong password") {
    for (const std::string name : {"many.jks", "many.jceks"}) {
      const auto full = read_bytes(stores().files.at(name));
      for (std::size_t len = 0; len < full.size(); ++len) {
        const std::vector<std::uint8_t> cut(full.begin(),
                                            full.begin() + static_cast<std::ptrdiff_t>(len));
        for (const std::string& pw : {kStorePass, std::string("wrong")}) {
          KeystoreOptions options;
          options.password = pw;
          options.key_password = kKeyPass;
          const auto r = read_keystore(cut, options);
          if (r || r.error().code != Errc::malformed_input) {
            FAIL(name << " cut at " << len << " of " << full.size() << ": " << message_of(r));
          }
        }
      }
    }
  }
  SECTION("every single-byte corruption is an error or a listing, never a crash") {
    for (const std::string name : {"many.jks", "many.jceks"}) {
      const auto full = read_bytes(stores().files.at(name));
      std::size_t listed = 0;
      for (std::size_t at = 0; at < full.size(); ++at) {
        auto corrupt = full;
        corrupt[at] ^= 0xA5U;
        // Without a password nothing stops at the digest: every field is parsed.
        KeystoreOptions options;
        options.list_without_password = true;
        const auto r = read_keystore(corrupt, options);
        if (r) {
          ++listed;
          CHECK_FALSE(r->integrity_checked);
        } else {
          const Errc code = r.error().code;
          CHECK((code == Errc::malformed_input || code == Errc::unsupported ||
                 code == Errc::limit_exceeded));
        }
      }
      // Certificate bodies and key ciphertext can change without breaking the structure.
      CHECK(listed > 0);
    }
  }
}

}  // namespace getcert::pkcs12::test
