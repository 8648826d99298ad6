// Files made at test time by independent producers: OpenSSL 3 (default and -legacy), GnuTLS
// certtool, Java keytool, python3 cryptography, NSS pk12util and node-forge (pure JavaScript).
// Each must decode into the right identity with the chain ordered leaf -> root.

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "getcert/pkcs12.hpp"
#include "support/skip.hpp"

namespace getcert::pkcs12::test {
namespace {

Certificate load_cert(const fs::path& p) {
  auto certs = parse_certificates_pem(read_file(p));
  REQUIRE(certs.has_value());
  return certs->at(0);
}

std::string key_der_of(const PrivateKey& key) {
  const auto pem = key.pem();
  return to_hex(normalized_key_der(std::string(pem.begin(), pem.end())));
}

// The common expectation: one identity, the leaf with its key, chain = `chain` (in order).
void check_identity(const Result<Bundle>& decoded, const TestLeaf& leaf,
                    const std::vector<fs::path>& chain) {
  INFO((decoded ? std::string("decoded") : decoded.error().message));
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->identities.size() == 1);
  const auto& id = decoded->identities[0];
  REQUIRE(id.leaf.has_value());
  CHECK(id.leaf->der == load_cert(leaf.cert).der);
  REQUIRE(id.chain.size() == chain.size());
  for (std::size_t i = 0; i < chain.size(); ++i) CHECK(id.chain[i].der == load_cert(chain[i]).der);
  CHECK(key_der_of(id.key) == to_hex(normalized_key_der(read_file(leaf.key))));
}

Result<Bundle> decode_path(const fs::path& p, const std::optional<std::string>& password) {
  DecodeOptions options;
  options.password = password;
  return decode(read_bytes(p), options);
}

}  // namespace

TEST_CASE("producer: OpenSSL 3 pkcs12 -export (default and -legacy)", "[pkcs12]") {
  const TestPki& pki = test_pki();
  TempDir tmp;
  write_file(tmp / "pass", std::string("open-pass"));
  write_file(tmp / "chain.pem", concat({pki.inter_cert, pki.root_cert}));
  write_file(tmp / "reversed.pem", concat({pki.root_cert, pki.inter_cert}));
  auto export_p12 = [&](const TestLeaf& leaf, const std::string& out, const std::string& certfile,
                        std::vector<std::string> extra, const std::string& pass_arg) {
    auto argv = openssl_export_argv(leaf, tmp / certfile, "n", tmp / out, pass_arg);
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto r = run(argv);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return tmp / out;
  };
  const std::string pass_file = "file:" + (tmp / "pass");
  for (const auto& leaf : pki.leaves) {
    DYNAMIC_SECTION("default " << leaf.name) {
      const auto f = export_p12(leaf, "d-" + leaf.name + ".p12", "chain.pem", {}, pass_file);
      const auto decoded = decode_path(f, std::string("open-pass"));
      check_identity(decoded, leaf, {pki.inter_cert, pki.root_cert});
      CHECK_FALSE(decoded->info.legacy_provider_used);
    }
    DYNAMIC_SECTION("legacy " << leaf.name) {
      const auto f =
          export_p12(leaf, "l-" + leaf.name + ".p12", "chain.pem", {"-legacy"}, pass_file);
      const auto decoded = decode_path(f, std::string("open-pass"));
      check_identity(decoded, leaf, {pki.inter_cert, pki.root_cert});
      // RC2-40 is decrypted by getcert itself, without loading OpenSSL's legacy provider.
      CHECK_FALSE(decoded->info.legacy_provider_used);
      CHECK(decoded->info.safes.at(0).encryption == "pbeWithSHA1And40BitRC2-CBC");
    }
  }
  const TestLeaf& leaf = pki.leaves.at(1);
  SECTION("every PBE scheme OpenSSL can write, with every MAC digest") {
    const std::vector<std::pair<std::string, std::string>> schemes{
        {"PBE-SHA1-RC4-128", "pbeWithSHA1And128BitRC4"},
        {"PBE-SHA1-RC4-40", "pbeWithSHA1And40BitRC4"},
        {"PBE-SHA1-2DES", "pbeWithSHA1And2-KeyTripleDES-CBC"},
        {"PBE-SHA1-3DES", "pbeWithSHA1And3-KeyTripleDES-CBC"},
        {"PBE-SHA1-RC2-128", "pbeWithSHA1And128BitRC2-CBC"},
        {"PBE-SHA1-RC2-40", "pbeWithSHA1And40BitRC2-CBC"},
        {"aes-128-cbc", "PBES2/PBKDF2-HMAC-SHA256/AES-128-CBC"},
        {"aes-192-cbc", "PBES2/PBKDF2-HMAC-SHA256/AES-192-CBC"},
        {"des-ede3-cbc", "PBES2/PBKDF2-HMAC-SHA256/DES-EDE3-CBC"},
        {"camellia-256-cbc", "PBES2/PBKDF2-HMAC-SHA256/CAMELLIA-256-CBC"},
    };
    const std::vector<std::pair<std::string, std::string>> macs{{"sha1", "SHA-1"},
                                                                {"sha224", "SHA-224"},
                                                                {"sha256", "SHA-256"},
                                                                {"sha384", "SHA-384"},
                                                                {"sha512", "SHA-512"}};
    for (std::size_t i = 0; i < schemes.size(); ++i) {
      const auto& [pbe, description] = schemes[i];
      const auto& [macalg, mac_name] = macs[i % macs.size()];
      INFO(pbe << " / " << macalg);
      const auto f =
          export_p12(leaf, "pbe-" + pbe + ".p12", "chain.pem",
                     {"-legacy", "-keypbe", pbe, "-certpbe", pbe, "-macalg", macalg}, pass_file);
      const auto decoded = decode_path(f, std::string("open-pass"));
      check_identity(decoded, leaf, {pki.inter_cert, pki.root_cert});
      CHECK(decoded->info.mac.algorithm == mac_name);
      CHECK(decoded->info.safes.at(0).encryption == description);
    }
  }
  SECTION("chain given in reversed order") {
    const auto f = export_p12(leaf, "rev.p12", "reversed.pem", {}, pass_file);
    check_identity(decode_path(f, std::string("open-pass")), leaf, {pki.inter_cert, pki.root_cert});
  }
  SECTION("intermediate missing: the root is an extra certificate") {
    write_file(tmp / "root-only.pem", read_file(pki.root_cert));
    const auto f = export_p12(leaf, "noint.p12", "root-only.pem", {}, pass_file);
    const auto decoded = decode_path(f, std::string("open-pass"));
    check_identity(decoded, leaf, {});
    REQUIRE(decoded->extra_certs.size() == 1);
    CHECK(decoded->extra_certs[0].der == load_cert(pki.root_cert).der);
  }
  SECTION("empty password, given as nothing or as empty") {
    const auto f = export_p12(leaf, "empty.p12", "chain.pem", {}, "pass:");
    check_identity(decode_path(f, std::nullopt), leaf, {pki.inter_cert, pki.root_cert});
    const auto decoded = decode_path(f, std::string(""));
    REQUIRE(decoded.has_value());
    CHECK(decoded->info.password_used != PasswordKind::given);
  }
  SECTION("non-ASCII password") {
    const std::string pw = "gr\xC3\xBC\xC3\x9F \xE2\x98\xBA";
    write_file(tmp / "utf8pass", pw);
    const auto f = export_p12(leaf, "utf8.p12", "chain.pem", {}, "file:" + (tmp / "utf8pass"));
    check_identity(decode_path(f, pw), leaf, {pki.inter_cert, pki.root_cert});
    const auto wrong = decode_path(f, std::string("gr\xC3\xBC\xC3\x9F"));
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().code == Errc::wrong_password);
  }
  SECTION("certificates only (trust store) and key only") {
    const std::vector<std::string> certs_only{
        "openssl",         "pkcs12", "-export",         "-nokeys",  "-in",
        tmp / "chain.pem", "-out",   tmp / "trust.p12", "-passout", pass_file};
    REQUIRE(run(certs_only).exit_code == 0);
    const auto trust = decode_path(tmp / "trust.p12", std::string("open-pass"));
    REQUIRE(trust.has_value());
    CHECK(trust->identities.empty());
    CHECK(trust->extra_certs.size() == 2);

    const std::vector<std::string> key_only{
        "openssl",         "pkcs12", "-export",       "-nocerts", "-inkey",
        leaf.key.string(), "-out",   tmp / "key.p12", "-passout", pass_file};
    REQUIRE(run(key_only).exit_code == 0);
    const auto key = decode_path(tmp / "key.p12", std::string("open-pass"));
    REQUIRE(key.has_value());
    REQUIRE(key->identities.size() == 1);
    CHECK_FALSE(key->identities[0].leaf.has_value());
  }
}

TEST_CASE("producer: GnuTLS certtool --to-p12", "[pkcs12]") {
  if (!have_tool("certtool")) {
    GETCERT_SKIP("certtool (gnutls-bin) not installed");
  }
  const TestPki& pki = test_pki();
  TempDir tmp;
  write_file(tmp / "all.pem", concat({pki.leaves.at(0).cert, pki.inter_cert, pki.root_cert}));
  for (const char* cipher : {"aes-256", "aes-128", "3des-pkcs12", "rc2-40"}) {
    DYNAMIC_SECTION(cipher) {
      const TestLeaf& leaf = pki.leaves.at(0);
      const fs::path out = tmp / (std::string(cipher) + ".p12");
      const auto r =
          run({"certtool", "--to-p12", "--load-privkey", leaf.key.string(), "--load-certificate",
               tmp / "all.pem", "--p12-name", "gnutls", "--password", "gnu-pass", "--pkcs-cipher",
               cipher, "--outder", "--outfile", out.string()});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      check_identity(decode_path(out, std::string("gnu-pass")), leaf,
                     {pki.inter_cert, pki.root_cert});
    }
  }
  SECTION("empty and NULL passwords") {
    const TestLeaf& leaf = pki.leaves.at(1);
    write_file(tmp / "ec.pem", concat({leaf.cert, pki.inter_cert, pki.root_cert}));
    for (const char* flag : {"--empty-password", "--null-password"}) {
      const fs::path out = tmp / (std::string(flag + 2) + ".p12");
      const auto r =
          run({"certtool", "--to-p12", "--load-privkey", leaf.key.string(), "--load-certificate",
               tmp / "ec.pem", "--p12-name", "g", flag, "--outder", "--outfile", out.string()});
      INFO(flag << r.err);
      REQUIRE(r.exit_code == 0);
      check_identity(decode_path(out, std::nullopt), leaf, {pki.inter_cert, pki.root_cert});
    }
  }
  SECTION("PEM-armoured certtool output is refused as PEM") {
    const fs::path out = tmp / "armoured.p12";
    REQUIRE(run({"certtool", "--to-p12", "--load-privkey", pki.leaves.at(0).key.string(),
                 "--load-certificate", tmp / "all.pem", "--p12-name", "g", "--password", "x",
                 "--outfile", out.string()})
                .exit_code == 0);
    const auto decoded = decode_path(out, std::string("x"));
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().code == Errc::malformed_input);
    CHECK(decoded.error().message.find("PEM") != std::string::npos);
  }
}

TEST_CASE("producer: Java keytool (PKCS12 store, JKS conversion, legacy, trust store)",
          "[pkcs12]") {
  if (!have_tool("keytool")) {
    GETCERT_SKIP("keytool (JDK) not installed");
  }
  TempDir tmp;
  auto keytool = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "keytool");
    const auto r = run(args, kJavaLimit);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  };
  auto genkey = [&](const std::string& store, const std::string& type, const std::string& alg,
                    std::vector<std::string> extra) {
    std::vector<std::string> args{
        "-genkeypair", "-keystore", (tmp / store),  "-storetype", type,    "-storepass",
        "java-pass",   "-keypass",  "java-pass",    "-alias",     "mykey", "-keyalg",
        alg,           "-dname",    "CN=java.test", "-validity",  "30"};
    args.insert(args.end(), extra.begin(), extra.end());
    keytool(args);
  };
  SECTION("PKCS12 keystore, RSA and EC") {
    genkey("rsa.p12", "pkcs12", "RSA", {"-keysize", "2048"});
    genkey("ec.p12", "pkcs12", "EC", {"-groupname", "secp256r1"});
    for (const char* f : {"rsa.p12", "ec.p12"}) {
      const auto decoded = decode_path(tmp / f, std::string("java-pass"));
      INFO(f << ": " << (decoded ? "" : decoded.error().message));
      REQUIRE(decoded.has_value());
      REQUIRE(decoded->identities.size() == 1);
      REQUIRE(decoded->identities[0].leaf.has_value());
      CHECK(decoded->identities[0].leaf->subject_cn == "java.test");
      CHECK(decoded->identities[0].key.attributes().friendly_name == "mykey");
      CHECK(decoded->info.mac.present);
    }
  }
  SECTION("legacy algorithms (-Dkeystore.pkcs12.legacy)") {
    keytool({"-J-Dkeystore.pkcs12.legacy", "-genkeypair", "-keystore", tmp / "legacy.p12",
             "-storetype", "pkcs12", "-storepass", "java-pass", "-alias", "old", "-keyalg", "RSA",
             "-keysize", "2048", "-dname", "CN=legacy.test", "-validity", "30"});
    const auto decoded = decode_path(tmp / "legacy.p12", std::string("java-pass"));
    REQUIRE(decoded.has_value());
    REQUIRE(decoded->identities.size() == 1);
    CHECK(decoded->identities[0].leaf.has_value());
    CHECK(decoded->info.mac.algorithm == "SHA-1");
  }
  SECTION("JKS converted with -importkeystore") {
    genkey("store.jks", "JKS", "EC", {"-groupname", "secp384r1"});
    keytool({"-importkeystore", "-srckeystore", tmp / "store.jks", "-srcstoretype", "JKS",
             "-srcstorepass", "java-pass", "-destkeystore", tmp / "conv.p12", "-deststoretype",
             "pkcs12", "-deststorepass", "java-pass", "-noprompt"});
    const auto decoded = decode_path(tmp / "conv.p12", std::string("java-pass"));
    REQUIRE(decoded.has_value());
    REQUIRE(decoded->identities.size() == 1);
    CHECK(decoded->identities[0].key.info().curve == "P-384");
  }
  SECTION("trust store made with -importcert") {
    const TestPki& pki = test_pki();
    keytool({"-importcert", "-noprompt", "-alias", "root", "-file", pki.root_cert.string(),
             "-keystore", tmp / "trust.p12", "-storetype", "pkcs12", "-storepass", "java-pass"});
    const auto decoded = decode_path(tmp / "trust.p12", std::string("java-pass"));
    REQUIRE(decoded.has_value());
    CHECK(decoded->identities.empty());
    REQUIRE(decoded->extra_certs.size() == 1);
    CHECK(decoded->extra_certs[0].der == load_cert(pki.root_cert).der);
    const auto& attrs = decoded->extra_cert_attributes.at(0).all;
    CHECK(std::any_of(attrs.begin(), attrs.end(),
                      [](const Attribute& a) { return a.oid == "2.16.840.1.113894.746875.1.1"; }));
  }
}

TEST_CASE("producer: python3 cryptography serialize_key_and_certificates", "[pkcs12]") {
  if (!have_tool("python3") ||
      run({"python3", "-c", "import cryptography.hazmat.primitives.serialization.pkcs12"})
              .exit_code != 0) {
    GETCERT_SKIP("python3 cryptography not installed");
  }
  const TestPki& pki = test_pki();
  TempDir tmp;
  const std::string script = R"PY(
import sys
from cryptography import x509
from cryptography.hazmat.primitives import serialization, hashes
from cryptography.hazmat.primitives.serialization import pkcs12
key_path, leaf_path, inter_path, root_path, mode, out = sys.argv[1:]
key = serialization.load_pem_private_key(open(key_path, 'rb').read(), None)
leaf = x509.load_pem_x509_certificate(open(leaf_path, 'rb').read())
cas = [x509.load_pem_x509_certificate(open(p, 'rb').read()) for p in (root_path, inter_path)]
if mode == 'best':
    enc = serialization.BestAvailableEncryption(b'py-pass')
elif mode == 'none':
    enc = serialization.NoEncryption()
else:
    enc = (serialization.PrivateFormat.PKCS12.encryption_builder().kdf_rounds(2048)
           .key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)
           .hmac_hash(hashes.SHA1()).build(b'py-pass'))
open(out, 'wb').write(pkcs12.serialize_key_and_certificates(b'py', key, leaf, cas, enc))
)PY";
  write_file(tmp / "make.py", script);
  for (const auto& leaf : pki.leaves) {
    for (const char* mode : {"best", "none", "legacy"}) {
      DYNAMIC_SECTION(leaf.name << " " << mode) {
        const fs::path out = tmp / (leaf.name + "-" + mode + ".p12");
        const auto r = run({"python3", tmp / "make.py", leaf.key.string(), leaf.cert.string(),
                            pki.inter_cert.string(), pki.root_cert.string(), mode, out.string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const bool none = std::string(mode) == "none";
        const auto decoded =
            decode_path(out, none ? std::nullopt : std::optional<std::string>("py-pass"));
        // The CAs were passed root first: the chain must still come out intermediate first.
        check_identity(decoded, leaf, {pki.inter_cert, pki.root_cert});
        CHECK(decoded->identities[0].key.attributes().friendly_name == "py");
      }
    }
  }
}

TEST_CASE("producer: NSS pk12util export", "[pkcs12]") {
  if (!have_tool("pk12util") || !have_tool("certutil")) {
    GETCERT_SKIP("pk12util/certutil (libnss3-tools) not installed");
  }
  const TestPki& pki = test_pki();
  const TestLeaf& leaf = pki.leaves.at(0);
  TempDir tmp;
  const std::string db = "sql:" + (tmp / "db");
  fs::create_directory(tmp / "db");
  REQUIRE(run({"certutil", "-N", "-d", db, "--empty-password"}).exit_code == 0);
  write_file(tmp / "chain.pem", concat({pki.inter_cert, pki.root_cert}));
  REQUIRE(
      run(openssl_export_argv(leaf, tmp / "chain.pem", "nsskey", tmp / "in.p12", "pass:in-pass"))
          .exit_code == 0);
  const auto imported =
      run({"pk12util", "-i", tmp / "in.p12", "-d", db, "-W", "in-pass", "-K", ""});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);
  SECTION("default algorithms") {
    const auto exported = run(
        {"pk12util", "-o", tmp / "out.p12", "-n", "nsskey", "-d", db, "-W", "nss-pass", "-K", ""});
    INFO(exported.out << exported.err);
    REQUIRE(exported.exit_code == 0);
    check_identity(decode_path(tmp / "out.p12", std::string("nss-pass")), leaf,
                   {pki.inter_cert, pki.root_cert});
  }
  SECTION("legacy 3DES / RC2-40") {
    const auto exported =
        run({"pk12util", "-o", tmp / "legacy.p12", "-n", "nsskey", "-d", db, "-W", "nss-pass", "-K",
             "", "-c", "PKCS #12 V2 PBE With SHA-1 And 3KEY Triple DES-CBC", "-C",
             "PKCS #12 V2 PBE With SHA-1 And 40 Bit RC2 CBC"});
    INFO(exported.out << exported.err);
    REQUIRE(exported.exit_code == 0);
    const auto decoded = decode_path(tmp / "legacy.p12", std::string("nss-pass"));
    check_identity(decoded, leaf, {pki.inter_cert, pki.root_cert});
    CHECK_FALSE(decoded->info.legacy_provider_used);  // RC2-40 is built in
  }
}

}  // namespace getcert::pkcs12::test

namespace getcert::pkcs12::test {

// node-forge: a pure-JavaScript PKCS#12 writer (npm), installed by tools/bootstrap into
// GETCERT_NODE_MODULES. It handles RSA only, so it builds its own RSA root -> intermediate ->
// leaf chain (keys from openssl) and writes it with 3DES (PBES1) and AES (PBES2/PBKDF2).
TEST_CASE("producer: node-forge (pure JavaScript)", "[pkcs12]") {
  const fs::path modules = GETCERT_NODE_MODULES;
  if (!have_tool("node") || !have_tool("openssl") || !fs::exists(modules / "node-forge")) {
    GETCERT_SKIP("node, openssl or node-forge (tools/bootstrap installs it) not found");
  }
  TempDir tmp;
  for (const char* name : {"root", "inter", "leaf"}) {
    const auto r = run({"openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", tmp / (std::string(name) + ".key")});
    REQUIRE(r.exit_code == 0);
  }
  const std::string script = R"JS(
const forge = require('node-forge');
const fs = require('fs');
const dir = process.argv[2];
const key = n => forge.pki.privateKeyFromPem(fs.readFileSync(`${dir}/${n}.key`, 'utf8'));
function cert(subjectCn, issuerCn, pubKey, signKey, ca, serial) {
  const c = forge.pki.createCertificate();
  c.publicKey = pubKey;
  c.serialNumber = serial;
  c.validity.notBefore = new Date(Date.now() - 86400e3);
  c.validity.notAfter = new Date(Date.now() + 365 * 86400e3);
  c.setSubject([{name: 'commonName', value: subjectCn}]);
  c.setIssuer([{name: 'commonName', value: issuerCn}]);
  c.setExtensions([{name: 'basicConstraints', cA: ca, critical: true}]);
  c.sign(signKey, forge.md.sha256.create());
  return c;
}
const [rk, ik, lk] = [key('root'), key('inter'), key('leaf')];
const pub = k => forge.pki.setRsaPublicKey(k.n, k.e);
const root = cert('forge root', 'forge root', pub(rk), rk, true, '01');
const inter = cert('forge intermediate', 'forge root', pub(ik), rk, true, '02');
const leaf = cert('forge leaf', 'forge intermediate', pub(lk), ik, false, '03');
for (const [n, c] of [['root', root], ['inter', inter], ['leaf', leaf]]) {
  fs.writeFileSync(`${dir}/${n}.pem`, forge.pki.certificateToPem(c));
}
for (const algorithm of ['3des', 'aes128', 'aes256']) {
  for (const password of ['forge-pass', '']) {
    // Certificates in the file: root first, leaf in the middle.
    const asn1 = forge.pkcs12.toPkcs12Asn1(lk, [root, leaf, inter], password,
        {algorithm, generateLocalKeyId: true, friendlyName: 'forge'});
    fs.writeFileSync(`${dir}/${algorithm}-${password ? 'pw' : 'empty'}.p12`,
                     Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary'));
  }
}
)JS";
  write_file(tmp / "make.js", script);
  const auto r =
      run({"env", "NODE_PATH=" + modules.string(), "node", tmp / "make.js", tmp.path().string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const TestLeaf leaf{"forge-rsa", tmp / "leaf.key", tmp / "leaf.pem"};
  for (const char* algorithm : {"3des", "aes128", "aes256"}) {
    for (const char* password : {"forge-pass", ""}) {
      DYNAMIC_SECTION(algorithm << " password '" << password << "'") {
        const fs::path file =
            tmp / (std::string(algorithm) + (*password != 0 ? "-pw" : "-empty") + ".p12");
        const auto decoded = decode_path(file, std::string(password));
        check_identity(decoded, leaf, {tmp / "inter.pem", tmp / "root.pem"});
        CHECK(decoded->identities[0].key.attributes().friendly_name == "forge");
      }
    }
  }
}

}  // namespace getcert::pkcs12::test
