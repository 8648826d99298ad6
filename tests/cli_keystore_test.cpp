// `p12 topem`, `p12 info` and `show` on key stores in the forms CI hands them out: JKS and
// JCEKS from keytool, PKCS#12 as base64 text or PEM armour, from a file or a pipe. Checked: the
// files written and their content against the test PKI, the reports' "format" and "alias", and
// the exit codes that tell a wrong store password, a wrong key password and a malformed store
// apart.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;

using namespace getcert::test;  // the harness: pki(), run_getcert(), exit codes, explain()

namespace {

const std::string kStorePass = "st0re \"pass\" $x";
const std::string kKeyPass = "k3y-pass-differs";

RunResult getcert_run(const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {},
                      const std::string& stdin_path = "/dev/null") {
  return run_getcert_with(args, env, stdin_path);
}

const std::vector<std::string> kEnv{"STORE_PW=" + kStorePass, "KEY_PW=" + kKeyPass};

void run_ok(const std::vector<std::string>& argv) {
  const auto r = run(argv, std::chrono::seconds(120));
  INFO(explain(r));
  REQUIRE(r.exit_code == 0);
}

void keytool(std::vector<std::string> args) {
  args.insert(args.begin(), "keytool");
  run_ok(args);
}

// Made once per test process: keytool starts a JVM per call.
struct Stores {
  TempDir dir;
  std::string p12 = dir / "web.p12";
  std::string many_jks = dir / "many.jks";    // "web" (PKI chain), "gen-ec", trusted "outside";
                                              // key password != store password
  std::string one_jceks = dir / "one.jceks";  // "web" only, key password = store password

  Stores() {
    write_file(dir / "chain.pem", read_file(pki("intermediate.pem")) + read_file(pki("root.pem")));
    openssl({"pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa.pem"), "-certfile",
             dir / "chain.pem", "-name", "web", "-passout", "pass:src-pass", "-out", p12});
    auto import = [&](const std::string& store, const std::string& type,
                      const std::string& key_pass) {
      keytool({"-importkeystore", "-srckeystore", p12, "-srcstoretype", "PKCS12", "-srcstorepass",
               "src-pass", "-srcalias", "web", "-destkeystore", store, "-deststoretype", type,
               "-deststorepass", kStorePass, "-destkeypass", key_pass, "-noprompt"});
    };
    import(many_jks, "JKS", kKeyPass);
    keytool({"-genkeypair", "-keystore", many_jks, "-storetype", "JKS", "-storepass", kStorePass,
             "-keypass", kKeyPass, "-alias", "gen-ec", "-keyalg", "EC", "-groupname", "secp256r1",
             "-dname", "CN=ec.test", "-validity", "30"});
    keytool({"-importcert", "-noprompt", "-keystore", many_jks, "-storetype", "JKS", "-storepass",
             kStorePass, "-alias", "outside", "-file", pki("selfsigned.pem")});
    import(one_jceks, "JCEKS", kStorePass);
  }
};

const Stores& stores() {
  static const Stores s;
  return s;
}

std::string key_der(const std::string& pem_path) {
  return openssl({"pkey", "-in", pem_path, "-outform", "DER"});
}

std::string base64_of(const std::string& path, TempDir& tmp, const std::string& name) {
  const auto r = run_shell("base64 < '" + path + "' > '" + (tmp / name) + "'");
  REQUIRE(r.exit_code == 0);
  return tmp / name;
}

}  // namespace

TEST_CASE("topem writes every identity of a JKS, trusted entries go to ca.pem",
          "[cli][pkcs12][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const Stores& s = stores();
  TempDir tmp;
  const std::string out = tmp / "out";
  const auto r = getcert_run({"p12", "topem", s.many_jks, "--password-env", "STORE_PW",
                              "--key-password-env", "KEY_PW", "--out-dir", out},
                             kEnv);
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  // Only the PKI key has an intermediate: chain-N.pem exists for it alone.
  const auto listing = directory_listing(out);
  CHECK(listing.size() == 8);
  for (const char* f : {"ca.pem", "cert-1.pem", "cert-2.pem", "fullchain-1.pem", "fullchain-2.pem",
                        "key-1.pem", "key-2.pem"}) {
    CHECK(std::count(listing.begin(), listing.end(), f) == 1);
  }
  // keytool stores entries in hash order: find which number the PKI key got.
  const std::string rsa_der = key_der(pki("rsa.key"));
  const std::string n = key_der(out + "/key-1.pem") == rsa_der ? "1" : "2";
  CHECK(key_der(out + "/key-" + n + ".pem") == rsa_der);
  CHECK(read_file(out + "/cert-" + n + ".pem") == read_file(pki("rsa.pem")));
  CHECK(read_file(out + "/chain-" + n + ".pem") == read_file(pki("intermediate.pem")));
  CHECK(read_file(out + "/fullchain-" + n + ".pem") == read_file(pki("rsa-chain.pem")));
  CHECK((fs::status(out + "/key-1.pem").permissions() & fs::perms::others_read) == fs::perms::none);
  const std::string ca = read_file(out + "/ca.pem");
  CHECK_THAT(ca, Contains(read_file(pki("root.pem"))));
  CHECK_THAT(ca, Contains(read_file(pki("selfsigned.pem"))));
  CHECK(r.err.find(kStorePass) == std::string::npos);
  CHECK(r.err.find(kKeyPass) == std::string::npos);
}

TEST_CASE("p12 info reports the format, the entries and each identity's alias",
          "[cli][pkcs12][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const Stores& s = stores();
  SECTION("JKS, JSON") {
    const auto r = getcert_run({"p12", "info", s.many_jks, "--password-env", "STORE_PW",
                                "--key-password-env", "KEY_PW", "-o", "json"},
                               kEnv);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    const auto j = parse_json(r.out);
    CHECK(j.at("format") == "jks");
    CHECK(j.at("integrity_checked") == true);
    CHECK(j.at("pkcs12").is_null());
    std::set<std::string> aliases;
    for (const auto& id : j.at("identities")) aliases.insert(id.at("alias").get<std::string>());
    CHECK(aliases == std::set<std::string>{"web", "gen-ec"});
    REQUIRE(j.at("extra_certs").size() == 1);
    CHECK(j.at("extra_certs")[0].at("alias") == "outside");
    std::multiset<std::string> types;
    for (const auto& e : j.at("keystore").at("entries")) types.insert(e.at("type"));
    CHECK(types ==
          std::multiset<std::string>{"PrivateKeyEntry", "PrivateKeyEntry", "trustedCertEntry"});
  }
  SECTION("JCEKS, text") {
    const auto r = getcert_run({"p12", "info", s.one_jceks, "--password-env", "STORE_PW"}, kEnv);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    CHECK_THAT(r.out, Contains("Format:     jceks"));
    CHECK_THAT(r.out, Contains("PrivateKeyEntry \"web\""));
    CHECK_THAT(r.out, Contains("PBEWithMD5AndTripleDES"));
    CHECK_THAT(r.out, Contains("SHA-1 digest verified"));
  }
  SECTION("without a password: listed, with a warning that integrity was not checked") {
    const auto r = getcert_run({"p12", "info", s.many_jks, "-o", "json"});
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    const auto j = parse_json(r.out);
    CHECK(j.at("integrity_checked") == false);
    CHECK(j.at("identities").empty());
    CHECK(j.at("keystore").at("entries").size() == 3);
    CHECK_THAT(j.at("keystore").at("warnings").dump(), Contains("NOT checked"));
  }
  SECTION("PKCS#12 as base64 and as PEM: the format says which, the alias is the friendlyName") {
    TempDir tmp;
    const std::string b64 = base64_of(s.p12, tmp, "web.b64");
    write_file(tmp / "web.pem",
               "-----BEGIN PKCS12-----\n" + read_file(b64) + "-----END PKCS12-----\n");
    for (const auto& [file, format] : std::vector<std::pair<std::string, std::string>>{
             {s.p12, "pkcs12"}, {b64, "pkcs12-base64"}, {tmp / "web.pem", "pkcs12-pem"}}) {
      const auto r = getcert_run({"p12", "info", file, "--password", "src-pass", "-o", "json"});
      INFO(explain(r));
      REQUIRE(r.exit_code == kExitOk);
      const auto j = parse_json(r.out);
      CHECK(j.at("format") == format);
      CHECK(j.at("identities").at(0).at("alias") == "web");
      CHECK(j.at("keystore").is_null());
      CHECK(j.at("pkcs12").at("mac").at("verified") == true);
    }
  }
}

TEST_CASE("show reads key stores from files and from a pipe", "[cli][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const Stores& s = stores();
  TempDir tmp;
  SECTION("a JKS without its password lists its certificates with a warning") {
    const auto r = getcert_run({"show", s.many_jks});
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    CHECK_THAT(r.out, Contains("(jks, 5 certificates)"));
    CHECK_THAT(r.err, Contains("integrity NOT checked"));
  }
  SECTION("a base64 PKCS#12 on stdin, as a CI secret is piped") {
    const std::string b64 = base64_of(s.p12, tmp, "web.b64");
    const auto r =
        getcert_run({"show", "-", "--password-env", "P", "-o", "json"}, {"P=src-pass"}, b64);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    const auto j = parse_json(r.out);
    CHECK(j.at("format") == "pkcs12-base64");
    REQUIRE(j.at("certificates").size() == 3);
    CHECK(j.at("certificates")[0].at("pem") == read_file(pki("rsa.pem")));
  }
  SECTION("a Kubernetes TLS Secret's tls.crt: base64 of PEM certificates") {
    const std::string b64 = base64_of(pki("rsa-chain.pem"), tmp, "tls.crt");
    const auto r = getcert_run({"show", "-", "-o", "pem"}, {}, b64);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    CHECK(r.out == read_file(pki("rsa-chain.pem")));
    const auto j = getcert_run({"show", b64, "-o", "json"});
    CHECK(parse_json(j.out).at("format") == "pem-base64");
  }
  SECTION("a JCEKS as base64") {
    const std::string b64 = base64_of(s.one_jceks, tmp, "store.b64");
    const auto r = getcert_run({"show", b64, "--password-env", "STORE_PW", "-o", "json"}, kEnv);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    CHECK(parse_json(r.out).at("format") == "jceks-base64");
  }
}

TEST_CASE("wrong store password, wrong key password and a malformed store exit distinctly",
          "[cli][pkcs12][keystore]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const Stores& s = stores();
  TempDir tmp;
  // topem of the JKS with the store password from `env` only: refused, nothing written.
  auto topem_refused = [&](const char* env, const std::string& why) {
    const auto r = getcert_run(
        {"p12", "topem", s.many_jks, "--password-env", env, "--out-dir", tmp / "o"}, kEnv);
    INFO(explain(r));
    CHECK(r.exit_code == kExitWrongPassword);
    CHECK_THAT(r.err, Contains(why));
    CHECK_FALSE(fs::exists(tmp / "o/key-1.pem"));
    return r;
  };
  SECTION("wrong store password: 7") { topem_refused("KEY_PW", "wrong store password"); }
  SECTION("right store password, key password not given and different: 7, its own message") {
    const auto r = topem_refused("STORE_PW", "wrong key password");
    CHECK_THAT(r.err, Contains("--key-password-env"));
  }
  SECTION("both passwords on stdin, one a line") {
    write_file(tmp / "pw", kStorePass + "\n" + kKeyPass + "\n");
    const auto r = getcert_run(
        {"p12", "topem", s.many_jks, "--password-stdin", "--key-password-stdin", "--stdout"}, {},
        tmp / "pw");
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK_THAT(r.out, Contains("-----BEGIN PRIVATE KEY-----"));
  }
  SECTION("no password for topem: 7 and what to give") {
    const auto r = getcert_run({"p12", "topem", s.many_jks, "--stdout"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitWrongPassword);
    CHECK_THAT(r.err, Contains("--password-env"));
  }
  SECTION("malformed beats wrong password: 8") {
    const std::string full = read_file(s.many_jks);
    write_file(tmp / "cut.jks", full.substr(0, full.size() / 2));
    for (const char* env : {"STORE_PW", "KEY_PW"}) {
      const auto r = getcert_run({"p12", "info", tmp / "cut.jks", "--password-env", env}, kEnv);
      INFO(explain(r));
      CHECK(r.exit_code == kExitMalformed);
      CHECK_THAT(r.err, Contains("malformed JKS"));
    }
  }
}

TEST_CASE("CI recipe: a base64 .p12 from a secret becomes PEM files", "[cli][pkcs12][keystore]") {
  TempDir tmp;
  openssl({"pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa.pem"), "-certfile",
           pki("intermediate.pem"), "-passout", "pass:ci-secret", "-out", tmp / "bundle.p12"});
  // What a CI secret holds: one line of base64, as `base64 -w0 bundle.p12` prints it.
  const auto encoded = run({"base64", "-w0", tmp / "bundle.p12"});
  REQUIRE(encoded.exit_code == 0);
  write_file(tmp / "secret.txt", encoded.out);
  const auto r =
      getcert_run({"p12", "topem", "-", "--password-env", "P12_PASSWORD", "--out-dir", tmp / "tls"},
                  {"P12_PASSWORD=ci-secret"}, tmp / "secret.txt");
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  CHECK(key_der(tmp / "tls/key.pem") == key_der(pki("rsa.key")));
  CHECK(read_file(tmp / "tls/fullchain.pem") == read_file(pki("rsa-chain.pem")));
}
