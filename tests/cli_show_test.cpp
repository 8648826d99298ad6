// `getcert show FILE...` as a user runs it on local files: every container openssl produces
// (PEM, DER, PKCS#7, PKCS#12, stdin), each rendering, and --verify giving the same verdict and
// codes as `getcert fetch` gives for the same chain served over TLS. Offline: fetch runs with
// --no-fetch-missing, so nothing here contacts the PKI's fixed AIA port.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "getcert/certificate.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using Json = nlohmann::json;

using namespace getcert::test;  // the harness: pki(), run_getcert(), exit codes, explain()

namespace {

// getcert show ARGS... with stdin read from `stdin_path`.
RunResult show_with_stdin(std::vector<std::string> args, const std::string& stdin_path) {
  args.insert(args.begin(), "show");
  return run_getcert_with(args, {}, stdin_path, std::chrono::seconds(30));
}

RunResult show(std::vector<std::string> args) {
  args.insert(args.begin(), "show");
  return run_getcert(args);
}

// rsa-chain.pem (leaf + intermediate) in every container a user may hold it in.
struct Containers {
  TempDir dir;
  std::string der;      // the leaf alone
  std::string p7b;      // PKCS#7 DER, leaf + intermediate
  std::string p7c_pem;  // PKCS#7 PEM
  std::string p12;      // leaf + key + intermediate, password "pw"
  std::string pem = pki("rsa-chain.pem");

  Containers() {
    using getcert::test::openssl;
    der = dir / "rsa.der";
    openssl({"x509", "-in", pki("rsa.pem"), "-outform", "DER", "-out", der});
    p7b = dir / "chain.p7b";
    openssl(
        {"crl2pkcs7", "-nocrl", "-certfile", pki("rsa-chain.pem"), "-outform", "DER", "-out", p7b});
    p7c_pem = dir / "chain.p7c";
    openssl({"crl2pkcs7", "-nocrl", "-certfile", pki("rsa-chain.pem"), "-out", p7c_pem});
    p12 = dir / "rsa.p12";
    openssl({"pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa.pem"), "-certfile",
             pki("intermediate.pem"), "-passout", "pass:pw", "-out", p12});
  }
};

std::vector<std::pair<int, std::string>> depth_codes(const Json& verification) {
  std::vector<std::pair<int, std::string>> out;
  for (const auto& e : verification.at("errors")) {
    out.emplace_back(e.at("depth").get<int>(), e.at("code").get<std::string>());
  }
  return out;
}

}  // namespace

TEST_CASE("show reads PEM, DER, PKCS#7 and PKCS#12, from files and from stdin", "[cli]") {
  REQUIRE(getcert::test::have_openssl());
  const Containers files;
  const std::string leaf_pem = read_file(pki("rsa.pem"));
  const std::string chain_pem = read_file(pki("rsa-chain.pem"));
  struct Case {
    std::string path;
    std::vector<std::string> extra;
    std::string format;
    std::string pem;  // what -o pem must print
  };
  const std::vector<Case> cases = {
      {files.pem, {}, "pem", chain_pem},
      {files.der, {}, "der", leaf_pem},
      {files.p7b, {}, "pkcs7", chain_pem},
      {files.p7c_pem, {}, "pem", chain_pem},
      {files.p12, {"--password-file", files.dir / "pw"}, "pkcs12", chain_pem},
  };
  getcert::test::write_file(files.dir / "pw", "pw\n");
  for (const auto& c : cases) {
    INFO("file: " << c.path);
    auto args = c.extra;
    args.insert(args.begin(), c.path);
    const auto j = show(plus(args, {"-o", "json"}));
    INFO(explain(j));
    REQUIRE(j.exit_code == kExitOk);
    const Json doc = parse_json(j.out);
    CHECK(doc.at("schema") == "getcert/v1");
    CHECK(doc.at("file") == c.path);
    CHECK(doc.at("format") == c.format);
    CHECK(doc.at("verification").is_null());  // nothing asked, nothing judged
    const auto blocks = getcert::test::certificate_block_list(c.pem);
    REQUIRE(doc.at("certificates").size() == blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      CHECK(doc.at("certificates")[i].at("pem") == blocks[i]);
    }
    CHECK(doc.at("certificates")[0].at("subject") == "CN=rsa.test");

    const auto p = show(plus(args, {"-o", "pem"}));
    INFO(explain(p));
    CHECK(p.exit_code == kExitOk);
    CHECK(p.out == c.pem);
    CHECK(p.out.find("PRIVATE KEY") == std::string::npos);  // a .p12's key never leaks here

    const auto t = show(args);
    INFO(explain(t));
    CHECK(t.exit_code == kExitOk);
    CHECK_THAT(t.out, Contains("File:       " + c.path + " (" + c.format) &&
                          Contains("Subject:    CN=rsa.test"));
  }
  SECTION("'-' reads standard input, whatever the container") {
    for (const std::string& path : {files.der, files.p7b, files.pem}) {
      INFO("stdin from " << path);
      const auto r = show_with_stdin({"-", "-o", "pem"}, path);
      INFO(explain(r));
      CHECK(r.exit_code == kExitOk);
      CHECK(r.out == (path == files.der ? leaf_pem : chain_pem));
    }
    const auto j = show_with_stdin({"-", "-o", "json"}, files.der);
    CHECK(parse_json(j.out).at("file") == "-");
  }
}

TEST_CASE("show --verify gives the verdict and codes fetch gives for the same chain", "[cli]") {
  REQUIRE(getcert::test::have_openssl());
  struct Case {
    std::string name;
    std::string file;  // what the server presents, and what show reads
    int exit_code;
    std::string code;  // first error code; "" = ok
  };
  const std::vector<Case> cases = {
      {"rsa chain", "rsa-chain.pem", kExitOk, ""},
      {"expired", "expired-chain.pem", kExitVerify, "expired"},
      {"wronghost", "wronghost-chain.pem", kExitVerify, "hostname_mismatch"},
      {"untrusted", "untrusted-chain.pem", kExitVerify, "untrusted_root"},
      {"selfsigned", "selfsigned-chain.pem", kExitVerify, "self_signed"},
      {"leaf only", "rsa.pem", kExitVerify, "missing_intermediate"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string key = pki(c.file.substr(0, c.file.find_first_of("-.")) + ".key");
    const auto server =
        getcert::test::start_openssl_server(getcert::test::ServedChain{pki(c.file), key});
    const auto fetched = run_getcert({"localhost:" + std::to_string(server.port()), "--ca-file",
                                      pki("root.pem"), "--no-fetch-missing", "-o", "json"});
    INFO("fetch: " << explain(fetched));
    const auto shown = show({pki(c.file), "--verify", "--host", "localhost", "--ca-file",
                             pki("root.pem"), "-o", "json"});
    INFO("show: " << explain(shown));
    CHECK(fetched.exit_code == c.exit_code);
    CHECK(shown.exit_code == c.exit_code);
    const Json fv = parse_json(fetched.out).at("verification");
    const Json sv = parse_json(shown.out).at("verification");
    for (const char* key_name : {"ok", "verdict", "trusted", "hostname_ok", "trust_store"}) {
      INFO("key: " << key_name);
      CHECK(sv.at(key_name) == fv.at(key_name));
    }
    CHECK(depth_codes(sv) == depth_codes(fv));
    if (c.code.empty()) {
      CHECK(sv.at("ok") == true);
      CHECK(parse_json(shown.out).at("verified_chain").size() == 3);
    } else {
      REQUIRE_FALSE(sv.at("errors").empty());
      CHECK(sv.at("errors")[0].at("code") == c.code);
      // The human reasons match too, line for line on stderr.
      CHECK_THAT(shown.err, Contains(sv.at("errors")[0].at("reason").get<std::string>()));
      CHECK_THAT(fetched.err, Contains(fv.at("errors")[0].at("reason").get<std::string>()));
    }
  }
}

TEST_CASE("show --purpose: the client certificate is fine for clients only", "[cli]") {
  const std::vector<std::string> base{pki("client-chain.pem"), "--verify", "--ca-file",
                                      pki("root.pem"),         "-o",       "json"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return show(args);
  };
  const auto client = with({"--purpose", "client"});
  INFO(explain(client));
  CHECK(client.exit_code == kExitOk);
  CHECK(parse_json(client.out).at("verification").at("verdict") == "valid");

  const auto server = with({});
  INFO(explain(server));
  CHECK(server.exit_code == kExitVerify);
  const Json v = parse_json(server.out).at("verification");
  CHECK(v.at("verdict") == "invalid");
  REQUIRE_FALSE(v.at("errors").empty());
  CHECK(v.at("errors")[0].at("code") == "wrong_purpose");
  CHECK_THAT(server.err, Contains("'getcert test client'") && Contains("not allowed"));

  CHECK(with({"--purpose", "any"}).exit_code == kExitOk);
  CHECK(with({"--purpose", "server"}).exit_code == kExitVerify);
  SECTION("a server certificate is wrong for a client") {
    const auto r = show({pki("rsa-chain.pem"), "--verify", "--ca-file", pki("root.pem"),
                         "--purpose", "client", "-o", "json"});
    CHECK(r.exit_code == kExitVerify);
    CHECK(parse_json(r.out).at("verification").at("errors")[0].at("code") == "wrong_purpose");
  }
}

TEST_CASE("show --expires-in and --at work offline on files", "[cli]") {
  const auto soon = show({pki("expiring-chain.pem"), "--ca-file", pki("root.pem"), "--host",
                          "localhost", "--expires-in", "30d", "-o", "pem"});
  INFO(explain(soon));
  CHECK(soon.exit_code == kExitExpiring);
  CHECK(soon.out == read_file(pki("expiring-chain.pem")));
  CHECK_THAT(soon.err, Contains("certificate 'expiring.test' expires in"));
  CHECK(show({pki("expiring-chain.pem"), "--ca-file", pki("root.pem"), "--expires-in", "1d", "-o",
              "pem"})
            .exit_code == kExitOk);
  const auto far = show({pki("rsa-chain.pem"), "--ca-file", pki("root.pem"), "--at",
                         "2100-01-01T00:00:00Z", "-o", "pem"});
  CHECK(far.exit_code == kExitVerify);
  CHECK_THAT(far.err, Contains("certificate 'rsa.test' expired"));
}

TEST_CASE("files that are not certificates: exit 8 or 11 with one line of explanation", "[cli]") {
  TempDir tmp;
  SECTION("text that is no certificate: 8") {
    getcert::test::write_file(tmp / "notes.txt", "hello, this is not a certificate\n");
    const auto r = show({tmp / "notes.txt"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitMalformed);
    CHECK(r.out.empty());
    REQUIRE(lines_of(r.err).size() == 1);
    CHECK_THAT(r.err, Contains("getcert: error:") && Contains(tmp / "notes.txt") &&
                          Contains("not a certificate file"));
    const auto j = show({tmp / "notes.txt", "-o", "json"});
    CHECK(j.exit_code == kExitMalformed);
    const Json doc = parse_json(j.out);
    CHECK(doc.at("error").at("code") == "malformed_input");
    CHECK(doc.at("error").at("exit_code") == kExitMalformed);
  }
  SECTION("a private key is not a certificate either: 8, and the key is not echoed") {
    const auto r = show({pki("rsa.key"), "-o", "pem"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitMalformed);
    CHECK(r.out.empty());
    CHECK(r.err.find("PRIVATE KEY") == std::string::npos);
  }
  SECTION("a missing file: 11") {
    const auto r = show({tmp / "absent.pem"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitIo);
    CHECK(r.out.empty());
    REQUIRE(lines_of(r.err).size() == 1);
    CHECK_THAT(r.err, Contains(tmp / "absent.pem") && Contains("No such file"));
  }
  SECTION("a directory: 11") {
    const auto r = show({tmp.path().string()});
    CHECK(r.exit_code == kExitIo);
    CHECK_THAT(r.err, Contains("is a directory"));
  }
  SECTION("several files: each is shown, the exit code is the first failure's") {
    const auto r = show({pki("rsa.pem"), tmp / "absent.pem", pki("ecdsa.pem"), "-o", "pem"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitIo);
    CHECK(r.out == read_file(pki("rsa.pem")) + read_file(pki("ecdsa.pem")));
  }
}

TEST_CASE("a global option before 'show' keeps the subcommand", "[cli]") {
  // `getcert -q show FILE` must not become `getcert fetch -q show FILE`.
  const auto r = run_getcert({"-q", "show", pki("rsa.pem"), "-o", "pem"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  CHECK(r.out == read_file(pki("rsa.pem")));
}
