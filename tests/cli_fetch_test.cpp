// The built `getcert` binary as a user runs it, against real TLS servers on loopback:
// stdout must carry exactly the PEM `openssl s_client -showcerts` sees, exit codes must be the
// documented ones, and failures must be explained on stderr with nothing on stdout.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/endpoint.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/net.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using Json = nlohmann::json;
using namespace std::chrono_literals;

using namespace getcert::test;  // the harness: pki(), run_getcert(), exit codes, explain()

namespace {

// One kind of server setup from the PKI, and what a user must see for it.
struct LeafKind {
  std::string name;
  ServedChain served;
  std::string host;  // what the user types before ":PORT"
  std::string sni;   // --sni, or "" for the default (the host, never an IP)
  int exit_code;
  // Part of the stderr explanation when verification fails; when it passes, part of the one
  // warning line a passing chain may print (empty: stderr stays empty).
  std::string reason;
};

std::vector<LeafKind> leaf_kinds() {
  using getcert::test::pki_chain;
  using getcert::test::pki_leaf_only;
  return {
      {"rsa", pki_chain("rsa"), "localhost", "", kExitOk, ""},
      {"ecdsa", pki_chain("ecdsa"), "localhost", "", kExitOk, ""},
      // Valid, and a warning: browsers cannot sign a handshake with an Ed25519 key.
      {"ed25519", pki_chain("ed25519"), "localhost", "", kExitOk,
       "neither Chromium nor Firefox offers a TLS signature scheme"},
      {"wildcard", pki_chain("wildcard"), "localhost", "x.wild.test", kExitOk, ""},
      {"ipsan", pki_chain("ipsan"), "127.0.0.1", "", kExitOk, ""},
      {"wronghost", pki_chain("wronghost"), "localhost", "", kExitVerify,
       "name mismatch: certificate is for other.example, not localhost"},
      {"expired", pki_chain("expired"), "localhost", "", kExitVerify, "expired"},
      {"notyet", pki_chain("notyet"), "localhost", "", kExitVerify, "is not valid until"},
      {"selfsigned", pki_chain("selfsigned"), "localhost", "", kExitVerify, "self-signed"},
      {"untrusted", pki_chain("untrusted"), "localhost", "", kExitVerify,
       "'getcert Untrusted Root'"},
      {"missing intermediate", pki_leaf_only("ecdsa"), "localhost", "", kExitVerify,
       "'getcert Test Intermediate CA'"},
  };
}

std::string target(const std::string& host, std::uint16_t port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

std::vector<std::string> args_for(const LeafKind& kind, std::uint16_t port,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args{target(kind.host, port), "--ca-file", pki("ca-bundle.pem")};
  if (!kind.sni.empty()) args.insert(args.end(), {"--sni", kind.sni});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Runs getcert for every kind against servers[i] and compares with openssl s_client.
void check_every_kind(const std::vector<LeafKind>& kinds, const std::vector<std::uint16_t>& ports) {
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const LeafKind& kind = kinds[i];
    INFO("leaf kind: " << kind.name);
    const std::string servername =
        !kind.sni.empty() ? kind.sni : (getcert::is_ip_literal(kind.host) ? "" : kind.host);
    const std::string oracle = getcert::test::s_client_chain(ports[i], servername);
    CHECK(oracle == read_file(kind.served.chain_pem_file));

    const RunResult r = run_getcert(args_for(kind, ports[i]));
    INFO(explain(r));
    CHECK(r.exit_code == kind.exit_code);
    if (kind.exit_code == kExitOk) {
      CHECK(r.out == oracle);
      if (kind.reason.empty()) {
        CHECK(r.err.empty());
      } else {
        CHECK_THAT(r.err, Contains("getcert: warning: ") && Contains(kind.reason));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      }
    } else {
      CHECK(r.out.empty());
      CHECK_THAT(r.err, Contains("verification failed") && Contains(kind.reason));
      const RunResult insecure = run_getcert(args_for(kind, ports[i], {"--insecure"}));
      INFO("with --insecure: " << explain(insecure));
      CHECK(insecure.exit_code == kExitOk);
      CHECK(insecure.out == oracle);
      CHECK_THAT(insecure.err, Contains(kind.reason));
    }
  }
}

TlsServer nginx_serving(const std::vector<ServedChain>& chains) {
  getcert::test::NginxOptions config;
  for (std::size_t i = 0; i < chains.size(); ++i) config.vhosts.push_back({"", chains[i], i});
  return getcert::test::start_nginx(config);
}

std::vector<std::string> ok_args(std::uint16_t port, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{target("localhost", port), "--ca-file", pki("ca-bundle.pem")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("every leaf kind via openssl s_server", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const auto kinds = leaf_kinds();
  std::vector<TlsServer> servers;
  std::vector<std::uint16_t> ports;
  for (const auto& k : kinds) {
    servers.push_back(getcert::test::start_openssl_server(k.served));
    ports.push_back(servers.back().port());
  }
  check_every_kind(kinds, ports);
}

TEST_CASE("keys are checked by OpenSSL's built-in code unless the configuration loads others",
          "[cli]") {
  // A fetch routes RSA and EC keys to OpenSSL's built-in code (cli/builtin_key_methods.hpp),
  // unless OpenSSL's configuration loads a provider of its own or asks for FIPS. Both ways
  // must give the same answers, byte for byte, for every kind of chain.
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const TempDir dir;
  write_file(dir / "null.cnf",
             "openssl_conf = init\n[init]\nproviders = provs\n[provs]\ndefault = def\n"
             "null = nul\n[def]\nactivate = 1\n[nul]\nactivate = 1\n");
  write_file(dir / "fips.cnf",
             "openssl_conf = init\n[init]\nalg_section = algs\n[algs]\n"
             "default_properties = fips=yes\n");
  // The static build's test wrapper hides OpenSSL's files, but passes this variable on.
  const auto config = [&](const std::string& name) {
    return std::vector<std::string>{"OPENSSL_CONF=" + (dir / name),
                                    "GETCERT_TEST_OPENSSL_CONF=" + (dir / name)};
  };
  for (const auto& kind : leaf_kinds()) {
    INFO("leaf kind: " << kind.name);
    const TlsServer server = getcert::test::start_openssl_server(kind.served);
    const RunResult builtin = run_getcert(args_for(kind, server.port()));
    const RunResult providers = run_getcert_with(args_for(kind, server.port()), config("null.cnf"));
    INFO(explain(builtin));
    INFO(explain(providers));
    CHECK(builtin.exit_code == kind.exit_code);
    CHECK(providers.exit_code == builtin.exit_code);
    CHECK(providers.out == builtin.out);
    CHECK(providers.err == builtin.err);
  }
  // -v says which, and why.
  const TlsServer server = getcert::test::start_openssl_server(pki_chain("rsa"));
  const std::vector<std::string> args{"-v", target("localhost", server.port()), "--ca-file",
                                      pki("ca-bundle.pem")};
  const RunResult builtin = run_getcert(args);
  INFO(explain(builtin));
  CHECK(builtin.exit_code == kExitOk);
  CHECK_THAT(builtin.err, Contains("keys are decoded and checked by OpenSSL's built-in RSA and "
                                   "EC code"));
  const RunResult null = run_getcert_with(args, config("null.cnf"));
  INFO(explain(null));
  CHECK(null.exit_code == kExitOk);
  CHECK_THAT(null.err, Contains("by OpenSSL's providers (the configuration loads 'null')"));
  const RunResult fips = run_getcert_with(args, config("fips.cnf"));
  INFO(explain(fips));
  CHECK_THAT(fips.err, Contains("by OpenSSL's providers (the configuration asks for FIPS "
                                "implementations)"));
}

TEST_CASE("every leaf kind via nginx", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx() && getcert::test::have_openssl(), "nginx or openssl");
  const auto kinds = leaf_kinds();
  getcert::test::NginxOptions config;
  for (std::size_t i = 0; i < kinds.size(); ++i) config.vhosts.push_back({"", kinds[i].served, i});
  const auto nginx = getcert::test::start_nginx(config);
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < kinds.size(); ++i) ports.push_back(nginx.port(i));
  check_every_kind(kinds, ports);
}

TEST_CASE("every leaf kind via gnutls-serv", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_gnutls_serv() && getcert::test::have_openssl(),
               "gnutls-serv or openssl");
  const auto kinds = leaf_kinds();
  std::vector<TlsServer> servers;
  std::vector<std::uint16_t> ports;
  for (const auto& k : kinds) {
    servers.push_back(getcert::test::start_gnutls_server(k.served));
    ports.push_back(servers.back().port());
  }
  check_every_kind(kinds, ports);
}

TEST_CASE("network and protocol failures: exit 3 or 4, explained, nothing on stdout", "[cli]") {
  SECTION("refused port: 3") {
    const auto r = run_getcert({target("127.0.0.1", getcert::test::closed_port())});
    INFO(explain(r));
    CHECK(r.exit_code == kExitNetwork);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("cannot connect"));
  }
  SECTION("stalled server: 3 once --timeout passes") {
    HostilePeer peer(HostilePeer::Behavior::silent);
    const auto r = run_getcert({target("127.0.0.1", peer.port()), "--timeout", "1s"});
    INFO(explain(r) << "elapsed ms: " << r.elapsed.count());
    CHECK(r.exit_code == kExitNetwork);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("within 1 s"));
    CHECK(r.elapsed >= 950ms);
    CHECK(r.elapsed <= 2500ms);  // limit + 1 s + process start-up; a bound, not a speed test
  }
  SECTION("plain HTTP: 4") {
    HostilePeer peer(HostilePeer::Behavior::plain_http);
    const auto r = run_getcert({target("127.0.0.1", peer.port())});
    INFO(explain(r));
    CHECK(r.exit_code == kExitTls);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("plain HTTP"));
  }
  SECTION("handshake aborted: 4") {
    HostilePeer peer(HostilePeer::Behavior::close_after_hello);
    const auto r = run_getcert({target("127.0.0.1", peer.port())});
    INFO(explain(r));
    CHECK(r.exit_code == kExitTls);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("getcert: error:"));
  }
  SECTION("garbage: 4") {
    HostilePeer peer(HostilePeer::Behavior::garbage);
    const auto r = run_getcert({target("127.0.0.1", peer.port())});
    CHECK(r.exit_code == kExitTls);
    CHECK(r.out.empty());
  }
}

TEST_CASE("usage errors exit 2", "[cli]") {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--bogus-option", "localhost"},
      {"localhost", "-o", "yaml"},
      {"localhost", "--select", "everything"},
      {"localhost", "--timeout", "soon"},
      {"localhost", "--timeout", "0s"},
      {"localhost", "--at", "tomorrow"},
      {"host:99999"},
      {"localhost", "--sni", "a.test", "--no-sni"},
  };
  for (const auto& args : cases) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    INFO("getcert " << shown);
    const auto r = run_getcert(args);
    INFO(explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK_FALSE(r.err.empty());
  }
}

TEST_CASE("JSON output has the getcert/v1 keys, false booleans included", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx = nginx_serving({getcert::test::pki_chain("ecdsa")});
  const auto r = run_getcert(ok_args(nginx.port(), {"-o", "json"}));
  INFO(explain(r));
  REQUIRE(r.exit_code == kExitOk);
  REQUIRE(lines_of(r.out).size() == 1);
  const Json j = parse_json(r.out);

  CHECK(j.at("schema") == "getcert/v1");
  CHECK(j.at("target").at("host") == "localhost");
  CHECK(j.at("target").at("port") == nginx.port());
  CHECK(j.at("target").at("sni") == "localhost");
  CHECK(j.at("target").at("address") == "127.0.0.1");
  const Json& tls = j.at("tls");
  CHECK(tls.at("version") == "TLSv1.3");
  CHECK(tls.at("cipher").get<std::string>().rfind("TLS_", 0) == 0);
  CHECK(tls.contains("alpn"));
  CHECK(tls.at("ocsp_stapled") == false);

  const Json& v = j.at("verification");
  CHECK(v.at("ok") == true);
  CHECK(v.at("hostname_ok") == true);
  CHECK(v.at("trusted") == true);
  CHECK(v.at("errors") == Json::array());
  CHECK(v.at("trust_store") == "file:" + pki("ca-bundle.pem"));

  REQUIRE(j.at("presented_chain").size() == 2);
  REQUIRE(j.at("verified_chain").size() == 3);
  const auto files = getcert::test::certificate_block_list(read_file(pki("ecdsa-chain.pem")));
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("presented_chain[" << i << "]");
    const Json& c = j.at("presented_chain").at(i);
    for (const char* key : {"subject", "issuer", "serial", "not_before", "not_after", "days_left",
                            "sans", "key", "signature_algorithm", "is_ca", "self_signed", "sha256",
                            "sha1", "spki_sha256", "tbs_sha256", "pem"}) {
      INFO("key: " << key);
      CHECK(c.contains(key));
    }
    for (const char* key : {"dns", "ip", "uri", "email"}) CHECK(c.at("sans").at(key).is_array());
    for (const char* key : {"type", "bits", "curve"}) CHECK(c.at("key").contains(key));
    CHECK(c.at("pem") == files.at(i));
    CHECK(c.at("is_ca").is_boolean());
    CHECK(c.at("self_signed") == false);
  }
  const Json& leaf = j.at("presented_chain").at(0);
  const auto model = getcert::parse_certificates_pem(read_file(pki("ecdsa.pem")));
  REQUIRE(model);
  CHECK(leaf.at("subject") == "CN=ecdsa.test");
  CHECK(leaf.at("issuer") == "CN=getcert Test Intermediate CA,O=getcert tests");
  CHECK(leaf.at("is_ca") == false);
  CHECK(leaf.at("sha256") == model->front().sha256);
  CHECK(leaf.at("spki_sha256") == model->front().spki_sha256);
  CHECK(leaf.at("tbs_sha256") == model->front().tbs_sha256);
  CHECK(leaf.at("sans").at("dns") == Json::array({"localhost", "ecdsa.test"}));
  CHECK(leaf.at("sans").at("ip") == Json::array({"127.0.0.1", "::1"}));
  CHECK(leaf.at("key").at("type") == "EC");
  CHECK(leaf.at("key").at("curve") == "P-256");
  CHECK(leaf.at("days_left").get<long>() >= 360);
  CHECK(leaf.at("not_after") == getcert::format_utc(model->front().not_after));
  const Json& root = j.at("verified_chain").at(2);
  CHECK(root.at("is_ca") == true);
  CHECK(root.at("self_signed") == true);
  CHECK(root.at("pem") == read_file(pki("root.pem")));
}

TEST_CASE("JSON output for a failed verification still reports, and exits 5", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx = nginx_serving({getcert::test::pki_chain("wronghost")});
  const auto r = run_getcert(ok_args(nginx.port(), {"-o", "json"}));
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  const Json j = parse_json(r.out);
  const Json& v = j.at("verification");
  CHECK(v.at("ok") == false);
  CHECK(v.at("hostname_ok") == false);
  CHECK(v.at("trusted") == true);
  REQUIRE(v.at("errors").size() >= 1);
  CHECK(v.at("errors").at(0).at("depth") == 0);
  CHECK(v.at("errors").at(0).at("code") == "hostname_mismatch");
  CHECK_THAT(v.at("errors").at(0).at("reason").get<std::string>(),
             Contains("certificate is for other.example"));
  CHECK(j.at("presented_chain").size() == 2);
}

TEST_CASE("JSON output with two targets is JSON Lines, one object per target", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx =
      nginx_serving({getcert::test::pki_chain("ecdsa"), getcert::test::pki_chain("rsa")});
  SECTION("both succeed") {
    const auto r =
        run_getcert({target("localhost", nginx.port(0)), target("localhost", nginx.port(1)),
                     "--ca-file", pki("ca-bundle.pem"), "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    const auto lines = lines_of(r.out);
    REQUIRE(lines.size() == 2);
    // Several targets run concurrently: lines come in completion order, each names its input.
    std::map<std::string, Json> by_input;
    for (const auto& line : lines) {
      const Json j = parse_json(line);
      by_input[j.at("input").get<std::string>()] = j;
    }
    const Json& ecdsa = by_input.at(target("localhost", nginx.port(0)));
    const Json& rsa = by_input.at(target("localhost", nginx.port(1)));
    CHECK(ecdsa.at("presented_chain").at(0).at("subject") == "CN=ecdsa.test");
    CHECK(rsa.at("presented_chain").at(0).at("subject") == "CN=rsa.test");
    CHECK(rsa.at("target").at("port") == nginx.port(1));
  }
  SECTION("a failing target gets an error object and sets the exit code") {
    const auto refused = target("127.0.0.1", getcert::test::closed_port());
    const auto r = run_getcert({refused, target("localhost", nginx.port(0)), "--ca-file",
                                pki("ca-bundle.pem"), "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitNetwork);
    auto lines = lines_of(r.out);
    REQUIRE(lines.size() == 2);
    // Completion order: the error object is whichever line carries "error".
    if (!parse_json(lines[0]).contains("error")) std::swap(lines[0], lines[1]);
    const Json error = parse_json(lines[0]);
    CHECK(error.at("schema") == "getcert/v1");
    CHECK(error.at("input") == refused);
    CHECK(error.at("error").at("code") == "connect_failed");
    CHECK(error.at("error").at("exit_code") == kExitNetwork);
    CHECK(parse_json(lines[1]).at("verification").at("ok") == true);
  }
}

TEST_CASE("text output shows subject, days left, SANs, fingerprints and the verdict", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx = nginx_serving({getcert::test::pki_chain("ecdsa")});
  const auto r = run_getcert(ok_args(nginx.port(), {"-o", "text"}));
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  const auto model = getcert::parse_certificates_pem(read_file(pki("ecdsa.pem")));
  REQUIRE(model);
  std::string colon_fp;
  for (std::size_t i = 0; i < model->front().sha256.size(); i += 2) {
    colon_fp += (i == 0 ? "" : ":") + model->front().sha256.substr(i, 2);
  }
  CHECK_THAT(r.out, Contains("CN=ecdsa.test") && Contains("days left") &&
                        Contains("DNS:localhost, DNS:ecdsa.test, IP:127.0.0.1, IP:::1") &&
                        Contains(colon_fp) && Contains("Verdict:    OK"));
  CHECK(r.out.find("-----BEGIN CERTIFICATE-----") == std::string::npos);

  const auto far =
      run_getcert(ok_args(nginx.port(), {"-o", "text", "--at", "2100-01-01T00:00:00Z"}));
  CHECK(far.exit_code == kExitVerify);
  CHECK_THAT(far.out, Contains("FAILED") && Contains("EXPIRED"));
}

TEST_CASE("select option picks the certificates written", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx =
      nginx_serving({getcert::test::pki_chain("ecdsa"), getcert::test::pki_chain("untrusted")});
  auto select = [&](const std::string& what, std::size_t slot = 0,
                    std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), {"--select", what});
    return run_getcert(ok_args(nginx.port(slot), extra));
  };
  const std::string leaf = read_file(pki("ecdsa.pem"));
  const std::string intermediate = read_file(pki("intermediate.pem"));
  const std::string root = read_file(pki("root.pem"));

  CHECK(select("leaf").out == leaf);
  CHECK(select("intermediates").out == intermediate);
  const auto r = select("root");
  CHECK(r.exit_code == kExitOk);
  CHECK(r.out == root);
  CHECK(select("verified").out == leaf + intermediate + root);
  CHECK(select("presented").out == leaf + intermediate);
  const auto der = select("leaf", 0, {"-o", "der"});
  CHECK(der.exit_code == kExitOk);
  CHECK(der.out == getcert::test::openssl({"x509", "-in", pki("ecdsa.pem"), "-outform", "DER"}));

  SECTION("root of an unverified chain: exit 5, explained, nothing on stdout") {
    const auto bad = select("root", 1);
    INFO(explain(bad));
    CHECK(bad.exit_code == kExitVerify);
    CHECK(bad.out.empty());
    CHECK_THAT(bad.err, Contains("'getcert Untrusted Root'"));
    const auto insecure = select("root", 1, {"--insecure"});
    INFO(explain(insecure));
    CHECK(insecure.exit_code == kExitVerify);
    CHECK(insecure.out.empty());
    CHECK_THAT(insecure.err, Contains("no verified chain"));
  }
}

TEST_CASE("out-dir writes the chain files and never clobbers without --force", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx = nginx_serving({getcert::test::pki_chain("ecdsa")});
  getcert::test::TempDir tmp;
  const std::string dir = tmp / "out";
  const std::vector<std::string> expected_names{"00-leaf.pem", "01-intermediate.pem", "chain.pem"};

  const auto first = run_getcert(ok_args(nginx.port(), {"--out-dir", dir}));
  INFO(explain(first));
  REQUIRE(first.exit_code == kExitOk);
  CHECK(getcert::test::directory_listing(dir) == expected_names);
  CHECK(read_file(dir + "/00-leaf.pem") == read_file(pki("ecdsa.pem")));
  CHECK(read_file(dir + "/01-intermediate.pem") == read_file(pki("intermediate.pem")));
  CHECK(read_file(dir + "/chain.pem") == read_file(pki("ecdsa-chain.pem")));
  CHECK(first.out == read_file(pki("ecdsa-chain.pem")));  // still prints the PEM

  getcert::test::write_file(dir + "/00-leaf.pem", "mine\n");
  const auto again = run_getcert(ok_args(nginx.port(), {"--out-dir", dir}));
  INFO(explain(again));
  CHECK(again.exit_code == kExitOutputExists);
  CHECK_THAT(again.err, Contains("already exists") && Contains("--force"));
  CHECK(read_file(dir + "/00-leaf.pem") == "mine\n");
  CHECK(getcert::test::directory_listing(dir) == expected_names);  // no temp files left

  const auto forced = run_getcert(ok_args(nginx.port(), {"--out-dir", dir, "--force"}));
  INFO(explain(forced));
  CHECK(forced.exit_code == kExitOk);
  CHECK(read_file(dir + "/00-leaf.pem") == read_file(pki("ecdsa.pem")));
  CHECK(getcert::test::directory_listing(dir) == expected_names);
}

TEST_CASE("out-dir writes nothing when verification fails", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx = nginx_serving({getcert::test::pki_chain("wronghost")});
  getcert::test::TempDir tmp;
  const auto r = run_getcert(ok_args(nginx.port(), {"--out-dir", tmp / "out"}));
  CHECK(r.exit_code == kExitVerify);
  CHECK(getcert::test::directory_listing(tmp.path()).size() <= 1);
  if (std::filesystem::exists(tmp / "out")) {
    CHECK(getcert::test::directory_listing(tmp / "out").empty());
  }
}

TEST_CASE("trust store choices: ca-dir, and the system store by default", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx = nginx_serving({getcert::test::pki_chain("ecdsa")});
  const auto dir = run_getcert({target("localhost", nginx.port()), "--ca-dir", pki("ca-dir")});
  INFO(explain(dir));
  CHECK(dir.exit_code == kExitOk);
  CHECK(dir.out == read_file(pki("ecdsa-chain.pem")));

  // The test root is in no system store: the default trust refuses it.
  const auto system = run_getcert({target("localhost", nginx.port())});
  INFO(explain(system));
  CHECK(system.exit_code == kExitVerify);
  CHECK(system.out.empty());

  const auto missing =
      run_getcert({target("localhost", nginx.port()), "--ca-file", "/nonexistent/getcert/ca.pem"});
  CHECK(missing.exit_code == 11);
  CHECK_THAT(missing.err, Contains("/nonexistent/getcert/ca.pem"));
}

TEST_CASE("verifying at a time far in the future gives an expired verdict", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx(), "nginx");
  const auto nginx = nginx_serving({getcert::test::pki_chain("ecdsa")});
  const auto r = run_getcert(ok_args(nginx.port(), {"--at", "2100-01-01T00:00:00Z"}));
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("expired"));
  const auto now = run_getcert(ok_args(nginx.port()));
  CHECK(now.exit_code == kExitOk);
}

TEST_CASE("IPv6 and URL targets through the CLI", "[cli]") {
  REQUIRE_TOOL(getcert::test::have_nginx() && getcert::test::have_openssl(), "nginx or openssl");
  if (!getcert::test::ipv6_loopback_available()) {
    GETCERT_SKIP("::1 is not configured");
  }
  getcert::test::NginxOptions config;
  config.vhosts = {{"", getcert::test::pki_chain("rsa"), 0}};
  config.ipv6 = true;
  const auto nginx = getcert::test::start_nginx(config);
  const std::string oracle = getcert::test::s_client_chain(nginx.port(), "", "::1");
  for (const std::string& t : {"[::1]:" + std::to_string(nginx.port()),
                               "https://[::1]:" + std::to_string(nginx.port()) + "/path"}) {
    INFO("target: " << t);
    const auto r = run_getcert({t, "--ca-file", pki("ca-bundle.pem")});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK(r.out == oracle);
  }
}
