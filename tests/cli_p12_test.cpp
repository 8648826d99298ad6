// `getcert p12 topem|info|create` as a user runs them in CI: the files and modes written, their
// content compared with what `openssl pkcs12` extracts, every password source (and the secret
// never echoed), failures that leave nothing behind, files other tools can read back (openssl,
// keytool), the work budget against crafted files, and output paths planned before writing.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "pkcs12/crafted.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using Catch::Matchers::Contains;
using Json = nlohmann::json;
namespace fs = std::filesystem;

using namespace getcert::test;  // the harness: pki(), run_getcert(), exit codes, explain()

namespace {

// Distinctive, with shell and JSON metacharacters, so an echo of it cannot go unnoticed.
const std::string kPassword = "Tr0ub4dor&3 \"p12\" $pw";

struct Env {
  std::vector<std::string> vars;
  std::string stdin_path = "/dev/null";
};

// getcert p12 ARGS..., with extra environment and stdin.
RunResult p12(std::vector<std::string> args, const Env& env = {}) {
  args.insert(args.begin(), "p12");
  return run_getcert_with(args, env.vars, env.stdin_path);
}

unsigned mode_of(const std::string& path) {
  return static_cast<unsigned>(fs::status(path).permissions()) & 0777U;
}

std::string key_der(const std::string& pem_path, const std::string& passphrase_file = "") {
  std::vector<std::string> args{"pkey", "-in", pem_path, "-outform", "DER"};
  if (!passphrase_file.empty()) args.insert(args.end(), {"-passin", "file:" + passphrase_file});
  return openssl(args);
}

std::string cert_der(const std::string& pem_text, TempDir& tmp) {
  write_file(tmp / "one.pem", pem_text);
  return openssl({"x509", "-in", tmp / "one.pem", "-outform", "DER"});
}

// A PKCS#12 made by openssl from rsa.key + rsa.pem with the chain added root first (the
// reverse of the order a server sends), and what openssl extracts from it.
struct Fixture {
  TempDir dir;
  std::string pw_file = dir / "pw.txt";
  std::string p12 = dir / "bundle.p12";
  std::string oracle_key_der;

  Fixture() {
    write_file(pw_file, kPassword + "\n");
    write_file(dir / "reversed.pem",
               read_file(pki("root.pem")) + read_file(pki("intermediate.pem")));
    openssl({"pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa.pem"), "-certfile",
             dir / "reversed.pem", "-passout", "file:" + pw_file, "-out", p12});
    openssl({"pkcs12", "-in", p12, "-passin", "file:" + pw_file, "-nodes", "-nocerts", "-out",
             dir / "oracle-key.pem"});
    oracle_key_der = key_der(dir / "oracle-key.pem");
  }
};

void check_no_secret(const RunResult& r) {
  CHECK(r.err.find(kPassword) == std::string::npos);
  CHECK(r.out.find(kPassword) == std::string::npos);
}

// The five files of one identity, checked against the PKI and the openssl extraction.
void check_topem_files(const std::string& dir, const std::string& oracle_key_der) {
  INFO("output directory " << dir);
  CHECK(getcert::test::directory_listing(dir) ==
        std::vector<std::string>{"ca.pem", "cert.pem", "chain.pem", "fullchain.pem", "key.pem"});
  CHECK(mode_of(dir + "/key.pem") == 0600U);
  CHECK(read_file(dir + "/key.pem").rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
  CHECK(key_der(dir + "/key.pem") == oracle_key_der);
  CHECK(read_file(dir + "/cert.pem") == read_file(pki("rsa.pem")));
  CHECK(read_file(dir + "/chain.pem") == read_file(pki("intermediate.pem")));
  CHECK(read_file(dir + "/fullchain.pem") == read_file(pki("rsa-chain.pem")));
  CHECK(read_file(dir + "/ca.pem") == read_file(pki("root.pem")));
  for (const char* name : {"cert.pem", "chain.pem", "fullchain.pem", "ca.pem"}) {
    INFO(name);
    CHECK(mode_of(dir + "/" + name) == 0644U);
  }
}

}  // namespace

TEST_CASE("topem writes key, cert, chain, fullchain and ca as openssl extracts them",
          "[cli][pkcs12]") {
  Fixture f;
  const std::string out = f.dir / "out";
  const auto r = p12({"topem", f.p12, "--password-file", f.pw_file, "--out-dir", out});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  check_no_secret(r);
  check_topem_files(out, f.oracle_key_der);
  CHECK_THAT(r.err, Contains("wrote " + out + "/key.pem (0600)"));
  CHECK(r.out.empty());

  // The certificate openssl calls the client certificate is cert.pem, byte for byte.
  const std::string oracle_cert =
      openssl({"pkcs12", "-in", f.p12, "-passin", "file:" + f.pw_file, "-nokeys", "-clcerts"});
  CHECK(cert_der(oracle_cert, f.dir) == cert_der(read_file(out + "/cert.pem"), f.dir));
}

TEST_CASE("topem --out-dir DIR/ prints its paths without a doubled slash", "[cli][pkcs12]") {
  Fixture f;
  const std::string out = f.dir / "out";
  const auto r = p12({"topem", f.p12, "--password-file", f.pw_file, "--out-dir", out + "/"});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  CHECK_THAT(r.err, Contains("wrote " + out + "/key.pem (0600)"));
  CHECK_THAT(r.err, !Contains("//"));
}

TEST_CASE("topem with two files writes one subdirectory per file", "[cli][pkcs12]") {
  Fixture f;
  fs::copy_file(f.p12, f.dir / "alpha.p12");
  fs::copy_file(f.p12, f.dir / "beta.pfx");
  const std::string out = f.dir / "out";
  const auto r = p12({"topem", f.dir / "alpha.p12", f.dir / "beta.pfx", "--password-file",
                      f.pw_file, "--out-dir", out});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  CHECK(getcert::test::directory_listing(out) == std::vector<std::string>{"alpha", "beta"});
  check_topem_files(out + "/alpha", f.oracle_key_der);
  check_topem_files(out + "/beta", f.oracle_key_der);
}

TEST_CASE("several inputs share the password, read once from stdin", "[cli][pkcs12]") {
  Fixture f;
  fs::copy_file(f.p12, f.dir / "alpha.p12");
  fs::copy_file(f.p12, f.dir / "beta.p12");
  write_file(f.dir / "stdin.txt", kPassword + "\n");
  const std::string out = f.dir / "out";
  const auto r =
      p12({"topem", f.dir / "alpha.p12", f.dir / "beta.p12", "--password-stdin", "--out-dir", out},
          {{}, f.dir / "stdin.txt"});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  check_topem_files(out + "/alpha", f.oracle_key_der);
  check_topem_files(out + "/beta", f.oracle_key_der);
}

TEST_CASE("topem --stdout and -o combined.pem", "[cli][pkcs12]") {
  Fixture f;
  const std::string expected_certs = read_file(pki("rsa-chain.pem")) + read_file(pki("root.pem"));
  SECTION("--stdout prints key and certificates, writes no file") {
    const auto before = getcert::test::directory_listing(f.dir.path());
    const auto r = p12({"topem", f.p12, "--password-file", f.pw_file, "--stdout"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_no_secret(r);
    CHECK(r.out.rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
    CHECK(getcert::test::certificate_blocks(r.out) == expected_certs);
    write_file(f.dir / "stdout.pem", r.out);
    CHECK(key_der(f.dir / "stdout.pem") == f.oracle_key_der);
    CHECK(getcert::test::directory_listing(f.dir.path()).size() == before.size() + 1);
  }
  SECTION("-o writes everything to one 0600 file") {
    const std::string combined = f.dir / "combined.pem";
    const auto r = p12({"topem", f.p12, "--password-file", f.pw_file, "-o", combined});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK(r.out.empty());
    CHECK(mode_of(combined) == 0600U);
    CHECK(key_der(combined) == f.oracle_key_der);
    CHECK(getcert::test::certificate_blocks(read_file(combined)) == expected_certs);
  }
}

TEST_CASE("topem --key-passphrase-file writes a key openssl opens with that passphrase",
          "[cli][pkcs12]") {
  Fixture f;
  const std::string passphrase = f.dir / "key-pass.txt";
  write_file(passphrase, "correct horse battery staple\n");
  const std::string out = f.dir / "out";
  const auto r = p12({"topem", f.p12, "--password-file", f.pw_file, "--key-passphrase-file",
                      passphrase, "--out-dir", out});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  CHECK(r.err.find("correct horse") == std::string::npos);
  const std::string key = read_file(out + "/key.pem");
  CHECK(key.rfind("-----BEGIN ENCRYPTED PRIVATE KEY-----", 0) == 0);
  CHECK(mode_of(out + "/key.pem") == 0600U);
  CHECK(key_der(out + "/key.pem", passphrase) == f.oracle_key_der);
  const auto without = getcert::test::run(
      {GETCERT_TEST_OPENSSL, "pkey", "-in", out + "/key.pem", "-passin", "pass:wrong", "-noout"});
  CHECK(without.exit_code != 0);
}

TEST_CASE("failures write nothing: wrong password 7, truncated 8, existing output 10",
          "[cli][pkcs12]") {
  Fixture f;
  const std::string out = f.dir / "out";
  SECTION("wrong password") {
    write_file(f.dir / "wrong.txt", "not " + kPassword + "\n");
    const auto r = p12({"topem", f.p12, "--password-file", f.dir / "wrong.txt", "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitWrongPassword);
    CHECK_THAT(r.err, Contains("wrong password"));
    CHECK(r.err.find("not " + kPassword) == std::string::npos);
    CHECK((!fs::exists(out) || fs::is_empty(out)));
  }
  SECTION("truncated file") {
    const std::string whole = read_file(f.p12);
    write_file(f.dir / "cut.p12", whole.substr(0, whole.size() / 2));
    const auto r =
        p12({"topem", f.dir / "cut.p12", "--password-file", f.pw_file, "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitMalformed);
    CHECK_THAT(r.err, Contains("cut.p12"));
    CHECK((!fs::exists(out) || fs::is_empty(out)));
  }
  SECTION("one bad file among good ones: nothing at all is written") {
    write_file(f.dir / "cut.p12", read_file(f.p12).substr(0, 100));
    const auto r =
        p12({"topem", f.p12, f.dir / "cut.p12", "--password-file", f.pw_file, "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitMalformed);
    CHECK((!fs::exists(out) || fs::is_empty(out)));
  }
  SECTION("existing output: 10 and unchanged; --force replaces") {
    fs::create_directory(out);
    write_file(out + "/cert.pem", "mine\n");
    const auto r = p12({"topem", f.p12, "--password-file", f.pw_file, "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOutputExists);
    CHECK_THAT(r.err, Contains("already exists") && Contains("--force"));
    CHECK(getcert::test::directory_listing(out) == std::vector<std::string>{"cert.pem"});
    CHECK(read_file(out + "/cert.pem") == "mine\n");

    const auto forced =
        p12({"topem", f.p12, "--password-file", f.pw_file, "--out-dir", out, "--force"});
    INFO(explain(forced));
    CHECK(forced.exit_code == kExitOk);
    check_topem_files(out, f.oracle_key_der);
  }
}

TEST_CASE("every password source works, and the password is never echoed", "[cli][pkcs12]") {
  Fixture f;
  write_file(f.dir / "stdin.txt", kPassword + "\n");
  struct Source {
    std::string name;
    std::vector<std::string> args;
    Env env;
  };
  const std::vector<Source> sources = {
      {"--password-file", {"--password-file", f.pw_file}, {}},
      {"--password-env",
       {"--password-env", "GETCERT_TEST_P12_PW"},
       {{"GETCERT_TEST_P12_PW=" + kPassword}, "/dev/null"}},
      {"--password-stdin", {"--password-stdin"}, {{}, f.dir / "stdin.txt"}},
      {"--password", {"--password", kPassword}, {}},
  };
  SECTION("each source unlocks the file") {
    for (const auto& s : sources) {
      INFO(s.name);
      auto args = std::vector<std::string>{"topem", f.p12, "--stdout"};
      args.insert(args.end(), s.args.begin(), s.args.end());
      const auto r = p12(args, s.env);
      INFO(explain(r));
      CHECK(r.exit_code == kExitOk);
      CHECK(getcert::test::certificate_blocks(r.out) ==
            read_file(pki("rsa-chain.pem")) + read_file(pki("root.pem")));
      CHECK(r.err.find(kPassword) == std::string::npos);
      if (s.name == "--password") {
        CHECK_THAT(r.err, Contains("getcert: warning:") && Contains("--password"));
      } else {
        CHECK(r.err.empty());
      }
    }
  }
  SECTION("a wrong password from each source is refused without echoing it") {
    const std::string wrong = "wr0ng-" + kPassword;
    write_file(f.dir / "wrong.txt", wrong + "\n");
    for (const auto& r :
         {p12({"info", f.p12, "--password-file", f.dir / "wrong.txt"}),
          p12({"info", f.p12, "--password-env", "PW"}, {{"PW=" + wrong}, "/dev/null"}),
          p12({"info", f.p12, "--password-stdin"}, {{}, f.dir / "wrong.txt"}),
          p12({"info", f.p12, "--password", wrong})}) {
      INFO(explain(r));
      CHECK(r.exit_code == kExitWrongPassword);
      CHECK(r.err.find(wrong) == std::string::npos);
      CHECK(r.out.find(wrong) == std::string::npos);
    }
  }
  SECTION("no password and no terminal: exit 7 with a hint, no prompt") {
    const auto r = p12({"info", f.p12});
    INFO(explain(r));
    CHECK(r.exit_code == kExitWrongPassword);
    CHECK_THAT(r.err, Contains("--password-file"));
  }
}

TEST_CASE("p12 info -o json describes MAC, safes, bags and identities, never the key",
          "[cli][pkcs12]") {
  TempDir tmp;
  write_file(tmp / "pw", kPassword + "\n");
  const std::string p12_file = tmp / "ecdsa.p12";
  openssl({"pkcs12", "-export", "-inkey", pki("ecdsa.key"), "-in", pki("ecdsa.pem"), "-certfile",
           pki("intermediate.pem"), "-passout", "file:" + tmp / "pw", "-out", p12_file});
  const auto r = p12({"info", p12_file, "--password-file", tmp / "pw", "-o", "json"});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  const Json j = parse_json(r.out);
  CHECK(j.at("schema") == "getcert/v1");
  const Json& p = j.at("pkcs12");
  CHECK(p.at("mac").at("present") == true);
  CHECK(p.at("mac").at("verified") == true);
  CHECK(p.at("mac").at("algorithm").is_string());
  CHECK(p.at("integrity_protected") == true);
  REQUIRE(p.at("safes").is_array());
  std::vector<std::string> bag_types;
  for (const auto& safe : p.at("safes")) {
    for (const auto& bag : safe.at("bags")) bag_types.push_back(bag.at("type").get<std::string>());
  }
  std::sort(bag_types.begin(), bag_types.end());
  CHECK(bag_types == std::vector<std::string>{"certBag", "certBag", "pkcs8ShroudedKeyBag"});
  REQUIRE(j.at("identities").size() == 1);
  CHECK(j.at("identities")[0].at("key").at("type") == "EC");
  CHECK(j.at("identities")[0].at("leaf").at("subject") == "CN=ecdsa.test");

  // No key material: no PEM key block, not the private scalar in any spelling, and none of
  // the base64 lines of the key file (the first two carry the scalar in a P-256 PKCS#8 key).
  for (const auto& out : {r.out, p12({"info", p12_file, "--password-file", tmp / "pw"}).out}) {
    CHECK(out.find("PRIVATE KEY") == std::string::npos);
    const std::string text = openssl({"pkey", "-in", pki("ecdsa.key"), "-text", "-noout"});
    const auto start = text.find("priv:") + 5;
    std::string scalar;
    for (std::size_t i = start; i < text.find("pub:"); ++i) {
      if (std::isxdigit(static_cast<unsigned char>(text[i])) != 0) scalar += text[i];
    }
    REQUIRE(scalar.size() == 64);
    std::string upper = scalar;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(out.find(scalar) == std::string::npos);
    CHECK(out.find(upper) == std::string::npos);
    const auto key_lines = getcert::test::run_shell(std::string("grep -v -- ----- '") +
                                                    pki("ecdsa.key") + "' | head -n 2");
    std::istringstream lines(key_lines.out);
    for (std::string line; std::getline(lines, line);) {
      REQUIRE(line.size() >= 40);
      CHECK(out.find(line) == std::string::npos);
    }
  }
}

TEST_CASE("p12 create: an encrypted key without its passphrase, or with a wrong one, is exit 7",
          "[cli][pkcs12]") {
  TempDir tmp;
  write_file(tmp / "pw", kPassword + "\n");
  write_file(tmp / "right", "key passphrase\n");
  write_file(tmp / "wrong", "not it\n");
  const auto enc = getcert::test::run({GETCERT_TEST_OPENSSL, "pkey", "-in", pki("rsa.key"),
                                       "-aes256", "-passout", "file:" + tmp / "right"});
  REQUIRE(enc.exit_code == 0);
  write_file(tmp / "enc.key", enc.out);
  const std::vector<std::string> base{"create",       "--key",           tmp / "enc.key", "--cert",
                                      pki("rsa.pem"), "--password-file", tmp / "pw"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return p12(args);
  };
  const auto missing = with({"-o", tmp / "a.p12"});
  INFO(explain(missing));
  CHECK(missing.exit_code == kExitWrongPassword);
  CHECK_THAT(missing.err, Contains("--key-passphrase-file"));
  CHECK_FALSE(std::filesystem::exists(tmp / "a.p12"));
  const auto wrong = with({"-o", tmp / "b.p12", "--key-passphrase-file", tmp / "wrong"});
  INFO(explain(wrong));
  CHECK(wrong.exit_code == kExitWrongPassword);
  CHECK_FALSE(std::filesystem::exists(tmp / "b.p12"));
  const auto right = with({"-o", tmp / "c.p12", "--key-passphrase-file", tmp / "right"});
  INFO(explain(right));
  CHECK(right.exit_code == kExitOk);
}

TEST_CASE("p12 create: modern by default, --legacy for old importers, both read back",
          "[cli][pkcs12]") {
  TempDir tmp;
  write_file(tmp / "pw", kPassword + "\n");
  struct Case {
    std::string name;
    std::vector<std::string> extra;
    std::vector<std::string> openssl_says;
  };
  const std::vector<Case> cases = {
      {"default", {}, {"MAC: sha256", "PBES2, PBKDF2, AES-256-CBC"}},
      {"--legacy", {"--legacy"}, {"MAC: sha1", "pbeWithSHA1And3-KeyTripleDES-CBC"}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string out = tmp / (c.name == "default" ? "modern.p12" : "legacy.p12");
    std::vector<std::string> args{"create",
                                  "--key",
                                  pki("rsa.key"),
                                  "--cert",
                                  pki("rsa.pem"),
                                  "--chain",
                                  pki("root.pem"),
                                  "--chain",
                                  pki("intermediate.pem"),
                                  "-o",
                                  out,
                                  "--password-file",
                                  tmp / "pw"};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const auto r = p12(args);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    check_no_secret(r);
    CHECK(mode_of(out) == 0600U);

    const auto info = getcert::test::run({GETCERT_TEST_OPENSSL, "pkcs12", "-in", out, "-passin",
                                          "file:" + tmp / "pw", "-info", "-noout"});
    INFO("openssl pkcs12 -info: " << info.out << info.err);
    CHECK(info.exit_code == 0);
    for (const auto& s : c.openssl_says) CHECK_THAT(info.out + info.err, Contains(s));

    const std::string dir = tmp / ("back-" + c.name);
    const auto back = p12({"topem", out, "--password-file", tmp / "pw", "--out-dir", dir});
    INFO(explain(back));
    CHECK(back.exit_code == kExitOk);
    CHECK(key_der(dir + "/key.pem") == key_der(pki("rsa.key")));
    CHECK(read_file(dir + "/fullchain.pem") == read_file(pki("rsa-chain.pem")));
    CHECK(read_file(dir + "/ca.pem") == read_file(pki("root.pem")));

    if (::access("/usr/bin/keytool", X_OK) == 0) {
      const auto keytool = getcert::test::run(
          {"keytool", "-list", "-storetype", "pkcs12", "-keystore", out, "-storepass", kPassword},
          std::chrono::seconds(60));
      INFO("keytool: " << keytool.out << keytool.err);
      CHECK(keytool.exit_code == 0);
      CHECK_THAT(keytool.out, Contains("PrivateKeyEntry"));
    } else {
      GETCERT_SKIP("keytool is not installed: Java readability not checked");
    }
  }
  SECTION("without a password source and without a terminal: exit 2, nothing written") {
    const std::string out = tmp / "nopw.p12";
    const auto r = p12({"create", "--key", pki("rsa.key"), "--cert", pki("rsa.pem"), "-o", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK_THAT(r.err, Contains("no terminal") && Contains("--password-file"));
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("an existing output file is not replaced without --force") {
    const std::string out = tmp / "taken.p12";
    write_file(out, "mine");
    const std::vector<std::string> args{"create", "--key",           pki("rsa.key"),
                                        "--cert", pki("rsa.pem"),    "-o",
                                        out,      "--password-file", tmp / "pw"};
    CHECK(p12(args).exit_code == kExitOutputExists);
    CHECK(read_file(out) == "mine");
  }
}

TEST_CASE("a vector OpenSSL 3 reads only with -legacy converts with no extra flag",
          "[cli][pkcs12]") {
  const fs::path vectors = GETCERT_VECTORS_DIR;
  const std::string file = (vectors / "pyca-cert-rc2-key-3des.p12").string();
  REQUIRE(fs::exists(file));  // part of the repository (tests/vectors/pkcs12)
  // The oracle needs -legacy (RC2-40 certificate bag); getcert must not.
  const auto plain = getcert::test::run(
      {GETCERT_TEST_OPENSSL, "pkcs12", "-in", file, "-passin", "pass:cryptography", "-nokeys"});
  CHECK(plain.exit_code != 0);
  const std::string oracle_cert = openssl(
      {"pkcs12", "-legacy", "-in", file, "-passin", "pass:cryptography", "-nokeys", "-clcerts"});
  TempDir tmp;
  const std::string out = tmp / "out";
  write_file(tmp / "pw", "cryptography\n");
  const auto r = p12({"topem", file, "--password-file", tmp / "pw", "--out-dir", out});
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  CHECK(cert_der(read_file(out + "/cert.pem"), tmp) == cert_der(oracle_cert, tmp));
  CHECK(cert_der(read_file(out + "/cert.pem"), tmp) ==
        cert_der(read_file((vectors / "pyca-ca.pem").string()), tmp));
  CHECK(key_der(out + "/key.pem") == key_der((vectors / "pyca-ca_key.pem").string()));
  CHECK(mode_of(out + "/key.pem") == 0600U);
}

namespace {

// Refusing a file over the budget derives nothing; deriving what these files hold (12 to 40 keys
// of 10 million PBKDF2 iterations, about 2.5 s each on a 2-core machine) takes half a minute or
// more. A bound that tells the two apart on a loaded machine, not a speed test.
constexpr auto kRefusedBeforeDeriving = std::chrono::seconds(10);

void write_der(const std::string& path, const getcert::test::crafted::Der& der) {
  write_file(path, std::string(der.begin(), der.end()));
}

}  // namespace

TEST_CASE("files over the work budget are refused fast: exit 8 naming --max-iterations",
          "[cli][pkcs12]") {
  namespace craft = getcert::test::crafted;
  Fixture f;
  const std::string out = f.dir / "out";
  SECTION("40 shrouded keys at 9,999,999 iterations, each under the old per-derivation cap") {
    const auto key = craft::shrouded_key_bag(craft::pbes2_aes256(9'999'999));
    write_der(f.dir / "keys.p12", craft::pfx({craft::data_safe(craft::repeated(key, 40))}));
    for (const std::string command : {"topem", "info"}) {
      std::vector<std::string> args{command, f.dir / "keys.p12", "--password-file", f.pw_file};
      if (command == "topem") args.insert(args.end(), {"--out-dir", out});
      const auto r = p12(args);
      INFO(explain(r));
      CHECK(r.exit_code == kExitMalformed);
      CHECK_THAT(r.err,
                 Contains("--max-iterations") && Contains("399999960") && Contains("keys.p12"));
      CHECK(r.elapsed < kRefusedBeforeDeriving);
      CHECK_FALSE(fs::exists(out));
    }
  }
  SECTION("12 encrypted safes and a MAC, each just under the cap") {
    const auto safe = craft::encrypted_safe(craft::pbes2_aes256(9'999'999), craft::Der(64, 0xEE));
    write_der(f.dir / "safes.p12",
              craft::pfx(craft::repeated(safe, 12), craft::classic_mac(9'999'999)));
    const auto r =
        p12({"topem", f.dir / "safes.p12", "--password-file", f.pw_file, "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitMalformed);
    CHECK_THAT(r.err, Contains("--max-iterations") && Contains("129999987"));
    CHECK(r.elapsed < kRefusedBeforeDeriving);
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("a PBMAC1 key length of 1024 octets is malformed") {
    write_der(f.dir / "pbmac1.p12", craft::pfx({craft::data_safe({craft::cert_bag({0x30, 0x00})})},
                                               craft::pbmac1_mac(9'000'000, 1024)));
    const auto r = p12({"info", f.dir / "pbmac1.p12", "--password-file", f.pw_file});
    INFO(explain(r));
    CHECK(r.exit_code == kExitMalformed);
    CHECK_THAT(r.err, Contains("keyLength 1024"));
    CHECK(r.elapsed < kRefusedBeforeDeriving);
  }
  SECTION("a real file decodes at exactly its cost and is refused one below") {
    // openssl's defaults: SHA-256 MAC, PBES2 (PBKDF2-HMAC-SHA256, AES-256) for the certificate
    // safe and the key, 2048 iterations each, one block each: 3 x 2048.
    const auto fits = p12({"topem", f.p12, "--password-file", f.pw_file, "--max-iterations", "6144",
                           "--out-dir", out});
    INFO(explain(fits));
    CHECK(fits.exit_code == kExitOk);
    check_topem_files(out, f.oracle_key_der);
    const auto over =
        p12({"info", f.p12, "--password-file", f.pw_file, "--max-iterations", "6143"});
    INFO(explain(over));
    CHECK(over.exit_code == kExitMalformed);
    CHECK_THAT(over.err, Contains("6144") && Contains("--max-iterations"));
  }
}

TEST_CASE("topem plans every output path first: clashing inputs are a usage error",
          "[cli][pkcs12]") {
  Fixture f;
  fs::create_directory(f.dir / "a");
  fs::create_directory(f.dir / "b");
  fs::copy_file(f.p12, f.dir / "a/x.p12");
  fs::copy_file(f.p12, f.dir / "b/x.pfx");
  const std::string out = f.dir / "out";
  for (const bool force : {false, true}) {
    INFO("--force " << force);
    std::vector<std::string> args{
        "topem", f.dir / "a/x.p12", f.dir / "b/x.pfx", "--password-file", f.pw_file, "--out-dir",
        out};
    if (force) args.emplace_back("--force");
    const auto r = p12(args);
    INFO(explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK_THAT(r.err, Contains(f.dir / "a/x.p12") && Contains(f.dir / "b/x.pfx") &&
                          Contains(out + "/x") && Contains("nothing was written"));
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("the same file twice, into an existing --out-dir: it stays empty") {
    fs::create_directory(out);
    const auto r = p12({"topem", f.p12, f.p12, "--password-file", f.pw_file, "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK(fs::is_empty(out));
  }
  SECTION("a failure at write time leaves no new folders behind") {
    fs::copy_file(f.p12, f.dir / "alpha.p12");
    fs::create_directory(out);
    fs::create_directory(out + "/x");
    write_file(out + "/x/key.pem", "mine\n");
    const auto r = p12({"topem", f.dir / "alpha.p12", f.dir / "b/x.pfx", "--password-file",
                        f.pw_file, "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOutputExists);
    CHECK(getcert::test::directory_listing(out) == std::vector<std::string>{"x"});
    CHECK(getcert::test::directory_listing(out + "/x") == std::vector<std::string>{"key.pem"});
  }
  SECTION("a folder that cannot be created: the ones made before it are removed again") {
    fs::copy_file(f.p12, f.dir / "alpha.p12");
    fs::create_directory(out);
    write_file(out + "/x", "a file where the folder for x.pfx would go\n");
    const auto r = p12({"topem", f.dir / "alpha.p12", f.dir / "b/x.pfx", "--password-file",
                        f.pw_file, "--out-dir", out});
    INFO(explain(r));
    CHECK(r.exit_code == kExitIo);
    CHECK(getcert::test::directory_listing(out) == std::vector<std::string>{"x"});
  }
}

TEST_CASE("topem folder names from hostile file names stay inside --out-dir", "[cli][pkcs12]") {
  Fixture f;
  fs::create_directory(f.dir / "in");
  const std::vector<std::string> names{"...p12", "..p12",
                                       std::string("a\x01"
                                                   "b\x1b[31m.p12"),
                                       "....", ".hidden.p12"};
  std::vector<std::string> args{"topem"};
  for (const auto& n : names) {
    fs::copy_file(f.p12, f.dir / ("in/" + n));
    args.push_back(f.dir / ("in/" + n));
  }
  const std::string out = f.dir / "out";
  args.insert(args.end(), {"--password-file", f.pw_file, "--out-dir", out});
  const auto before = getcert::test::directory_listing(f.dir.path());
  const auto r = p12(args);
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  CHECK(getcert::test::directory_listing(out) ==
        std::vector<std::string>{"_", "__", "___", "_hidden", "a_b__31m"});
  for (const auto& dir : getcert::test::directory_listing(out)) {
    check_topem_files(out + "/" + dir, f.oracle_key_der);
  }
  // Nothing landed next to --out-dir (what "out/.." would have meant).
  auto after = getcert::test::directory_listing(f.dir.path());
  CHECK(after.size() == before.size() + 1);
  CHECK(getcert::test::directory_listing(f.dir / "in").size() == names.size());
  // The control characters of the input name never reach the terminal raw.
  CHECK(r.err.find('\x1b') == std::string::npos);
}

TEST_CASE("topem with many inputs: decoded in parallel, reported as one after the other",
          "[cli][pkcs12]") {
  // Inputs are decoded on several threads; what the user sees must not depend on which
  // finishes first: the first failing input in input order decides the message and exit code,
  // and a failure anywhere writes nothing.
  Fixture f;
  write_file(f.dir / "other-pw.txt", "not the password\n");
  openssl({"pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa.pem"), "-passout",
           "file:" + f.dir / "other-pw.txt", "-out", f.dir / "other.p12"});
  const std::string bytes = read_file(f.p12);
  write_file(f.dir / "truncated.p12", bytes.substr(0, bytes.size() / 2));
  std::vector<std::string> inputs;
  for (int i = 0; i < 12; ++i) {
    const std::string name = f.dir / ("id" + std::to_string(10 + i) + ".p12");
    fs::copy_file(f.p12, name);
    inputs.push_back(name);
  }
  const std::string out = f.dir / "out";
  auto topem = [&](const std::vector<std::string>& files) {
    std::vector<std::string> args{"topem"};
    args.insert(args.end(), files.begin(), files.end());
    args.insert(args.end(), {"--password-file", f.pw_file, "--out-dir", out});
    return p12(args);
  };
  // topem over `files` fails as a whole: `exit_code`, an error naming `culprit`, no output.
  auto check_fails = [&](const std::vector<std::string>& files, int exit_code,
                         const std::string& culprit) {
    const auto r = topem(files);
    INFO(explain(r));
    CHECK(r.exit_code == exit_code);
    CHECK_THAT(r.err, Contains(culprit));
    CHECK_FALSE(fs::exists(out));
    return r;
  };
  SECTION("all good: every input gets its folder") {
    const auto r = topem(inputs);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    check_topem_files(out + "/id10", f.oracle_key_der);
    check_topem_files(out + "/id21", f.oracle_key_der);
    // "wrote" lines follow input order.
    CHECK(r.err.find("/id10/key.pem") < r.err.find("/id15/key.pem"));
    CHECK(r.err.find("/id15/key.pem") < r.err.find("/id21/key.pem"));
  }
  for (int run = 0; run < 3; ++run) {
    DYNAMIC_SECTION("wrong password at 4, truncated at 7, missing at 9: the wrong password, run "
                    << run) {
      auto files = inputs;
      files[4] = f.dir / "other.p12";
      files[7] = f.dir / "truncated.p12";
      files[9] = f.dir / "missing.p12";
      const auto r = check_fails(files, kExitWrongPassword, "other.p12");
      INFO(explain(r));
      CHECK(r.err.find("truncated.p12") == std::string::npos);
    }
  }
  SECTION("truncated at 7, missing at 9: malformed") {
    auto files = inputs;
    files[7] = f.dir / "truncated.p12";
    files[9] = f.dir / "missing.p12";
    check_fails(files, kExitMalformed, "truncated.p12");
  }
  SECTION("an unreadable input after good ones: the read error") {
    auto files = inputs;
    files[9] = f.dir / "missing.p12";
    check_fails(files, kExitIo, "missing.p12");
  }
}
