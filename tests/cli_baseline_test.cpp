// `--baseline FILE` as a user runs it: one fleet run against real TLS servers (one nginx, a
// listener per target) gives the baseline; the servers then change what they serve (renewed,
// rekeyed, reissued by another CA, new names, another chain) and reload, and a second run must
// name each change, the targets that are gone or new, and a renamed target by its certificate.

#include <catch2/catch.hpp>

#include <csignal>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/cert_builder.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using Json = nlohmann::json;
using namespace std::chrono_literals;
using namespace getcert::test;

namespace {

std::string local(std::uint16_t port) { return "localhost:" + std::to_string(port); }

// Certificates made for this test by openssl from the test PKI's CAs.
class Issuer {
 public:
  explicit Issuer(const TempDir& dir) : dir_(dir) {}

  std::string key(const std::string& name) const {
    const std::string path = dir_ / (name + ".key");
    openssl({"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path});
    return path;
  }

  // A leaf for `key` named CN=cn with SANs localhost and `sans`, signed by the PKI's CA `ca` (e.g.
  // "intermediate", "untrusted-root"), serial `serial`; returns the leaf's PEM file.
  std::string leaf(const std::string& name, const std::string& key, const std::string& cn,
                   const std::string& sans, const std::string& ca, int serial) const {
    const std::string csr = dir_ / (name + ".csr");
    const std::string pem = dir_ / (name + ".pem");
    openssl({"req", "-new", "-key", key, "-subj", "/CN=" + cn, "-addext",
             "subjectAltName=DNS:localhost," + sans, "-addext", "extendedKeyUsage=serverAuth",
             "-out", csr});
    openssl({"x509", "-req", "-in", csr, "-CA", pki(ca + ".pem"), "-CAkey", pki(ca + ".key"),
             "-set_serial", std::to_string(serial), "-days", "30", "-copy_extensions", "copy",
             "-out", pem});
    return pem;
  }

 private:
  const TempDir& dir_;
};

// Writes what listener `slot` serves: the leaf, then `chain` (PKI file names), and its key.
void serve(const TempDir& dir, int slot, const std::string& leaf_pem, const std::string& key,
           const std::vector<std::string>& chain) {
  std::string text = read_file(leaf_pem);
  for (const auto& c : chain) text += read_file(pki(c));
  write_file(dir / ("slot" + std::to_string(slot) + ".pem"), text);
  write_file(dir / ("slot" + std::to_string(slot) + ".key"), read_file(key));
}

std::map<std::string, Json> by_input(const std::string& out) {
  std::map<std::string, Json> objects;
  for (const auto& line : lines_of(out)) {
    const Json j = parse_json(line);
    REQUIRE(j.contains("input"));
    REQUIRE(objects.emplace(j.at("input").get<std::string>(), j).second);
  }
  return objects;
}

// A field of the leaf a result's server presented ("sha256", "tbs_sha256", "serial").
std::string leaf_field(const Json& j, const char* field) {
  return j.at("presented_chain").at(0).at(field).get<std::string>();
}

std::string leaf_sha256(const Json& j) { return leaf_field(j, "sha256"); }

// nginx virtual hosts for slots 0..count-1, each serving the slotN.pem and slotN.key serve()
// wrote into `dir`.
std::vector<NginxVhost> slot_vhosts(const TempDir& dir, std::size_t count) {
  std::vector<NginxVhost> vhosts;
  for (std::size_t slot = 0; slot < count; ++slot) {
    vhosts.push_back({"",
                      ServedChain{dir / ("slot" + std::to_string(slot) + ".pem"),
                                  dir / ("slot" + std::to_string(slot) + ".key")},
                      slot});
  }
  return vhosts;
}

}  // namespace

TEST_CASE("a baseline run names every change class, gone, new and renamed targets",
          "[cli][fleet]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  if (!have_nginx()) GETCERT_SKIP("nginx is not installed");
  REQUIRE_TOOL(!run({"sh", "-c", "command -v promtool"}).out.empty(),
               "promtool (Debian package prometheus)");
  const TempDir dir;
  const Issuer ca(dir);
  // Slots: 0 unchanged, 1 renewed, 2 rekeyed, 3 issuer_changed, 4 names_changed,
  // 5 chain_changed, 6 renamed (listed by another name the second time), 7 gone, 8 new.
  const std::string key = ca.key("shared");
  const std::string a = ca.leaf("a", key, "a.test", "DNS:a.test", "intermediate", 100);
  const std::string rename_key = ca.key("rename");
  const std::string r =
      ca.leaf("r", rename_key, "rename.test", "DNS:rename.test", "intermediate", 200);
  const std::string new_key = ca.key("new");
  const std::string n = ca.leaf("n", new_key, "new.test", "DNS:new.test", "intermediate", 300);
  for (int slot = 0; slot <= 8; ++slot) {
    if (slot == 6) {
      serve(dir, slot, r, rename_key, {"intermediate.pem"});
    } else if (slot == 8) {
      serve(dir, slot, n, new_key, {"intermediate.pem"});
    } else {
      serve(dir, slot, a, key, {"intermediate.pem"});
    }
  }
  NginxOptions options;
  options.reloadable = true;
  options.vhosts = slot_vhosts(dir, 9);
  const TlsServer nginx = start_nginx(options);
  const auto port = [&](int slot) { return nginx.port(static_cast<std::size_t>(slot)); };

  std::vector<std::string> first_targets;
  for (int slot = 0; slot <= 7; ++slot) first_targets.push_back(local(port(slot)));
  const std::string list1 = dir / "first.txt";
  std::string text;
  for (const auto& t : first_targets) text += t + "\n";
  write_file(list1, text);
  const auto first = run_getcert({"-f", list1, "--ca-file", pki("ca-bundle.pem"), "-o", "json"});
  INFO(explain(first));
  REQUIRE(first.exit_code == kExitOk);
  const auto before = by_input(first.out);
  REQUIRE(before.size() == 8);

  // What changed: each slot gets its new material, then nginx reloads.
  const std::string a_renewed =
      ca.leaf("a-renewed", key, "a.test", "DNS:a.test", "intermediate", 101);
  const std::string other_key = ca.key("other");
  const std::string a_rekeyed =
      ca.leaf("a-rekeyed", other_key, "a.test", "DNS:a.test", "intermediate", 102);
  const std::string a_untrusted =
      ca.leaf("a-untrusted", key, "a.test", "DNS:a.test", "untrusted-root", 103);
  const std::string a_renamed =
      ca.leaf("a-names", key, "a.test", "DNS:a.test,DNS:b.test", "intermediate", 104);
  serve(dir, 1, a_renewed, key, {"intermediate.pem"});
  serve(dir, 2, a_rekeyed, other_key, {"intermediate.pem"});
  serve(dir, 3, a_untrusted, key, {});
  serve(dir, 4, a_renamed, key, {"intermediate.pem"});
  serve(dir, 5, a, key, {"intermediate.pem", "root.pem"});
  REQUIRE(::kill(nginx.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] {
    return first_certificate_block(s_client_chain(port(1), "")) ==
               first_certificate_block(read_file(a_renewed)) &&
           first_certificate_block(s_client_chain(port(2), "")) ==
               first_certificate_block(read_file(a_rekeyed)) &&
           certificate_block_list(s_client_chain(port(5), "")).size() == 3;
  }));

  // The baseline: the first run, plus a target that answered then and is refused now, and
  // lines that cannot be used (each must be reported with its line number).
  const std::string refused = "127.0.0.1:" + std::to_string(closed_port());
  Json was_up = before.at(local(port(0)));
  was_up["input"] = refused;
  std::string baseline = first.out + was_up.dump() + "\n";
  baseline += "this is not json\n";             // line 10
  baseline += "{\"schema\":\"getcert/v1\"}\n";  // line 11: no input
  Json no_spki = before.at(local(port(0)));
  no_spki["input"] = "no-spki.example:443";
  no_spki["presented_chain"][0].erase("spki_sha256");
  baseline += no_spki.dump() + "\n";                          // line 12
  baseline += first.out.substr(0, first.out.find('\n') + 1);  // line 13: a repeated input
  write_file(dir / "baseline.jsonl", baseline);

  std::vector<std::string> second_targets;
  for (int slot : {0, 1, 2, 3, 4, 5}) second_targets.push_back(local(port(slot)));
  const std::string renamed = "127.0.0.1:" + std::to_string(port(6));
  second_targets.push_back(renamed);
  second_targets.push_back(local(port(8)));
  second_targets.push_back(refused);
  text.clear();
  for (const auto& t : second_targets) text += t + "\n";
  const std::string list2 = dir / "second.txt";
  write_file(list2, text);
  const std::vector<std::string> common{
      "-f",        list2, "--ca-file", pki("ca-bundle.pem"), "--baseline", dir / "baseline.jsonl",
      "--timeout", "10s"};

  auto args = common;
  args.insert(args.end(), {"-o", "json"});
  const auto second = run_getcert(args);
  INFO(explain(second));
  const auto after = by_input(second.out);
  REQUIRE(after.size() == second_targets.size() + 1);  // + the gone line
  const auto change = [&](const std::string& input) {
    return after.at(input).at("change").get<std::string>();
  };
  CHECK(change(local(port(0))) == "unchanged");
  CHECK(change(local(port(1))) == "renewed");
  CHECK(change(local(port(2))) == "rekeyed");
  CHECK(change(local(port(3))) == "issuer_changed");
  CHECK(change(local(port(4))) == "names_changed");
  CHECK(change(local(port(5))) == "chain_changed");
  CHECK(change(renamed) == "unchanged");
  CHECK(after.at(renamed).at("previous_input") == local(port(6)));
  CHECK(change(local(port(8))) == "new");
  CHECK_FALSE(after.at(local(port(8))).contains("previous_sha256"));
  CHECK(change(refused) == "failed");
  CHECK(after.at(refused).at("error").at("code") == "connect_failed");
  CHECK(change(local(port(7))) == "gone");
  CHECK(after.at(local(port(7))).at("previous_sha256") == leaf_sha256(before.at(local(port(7)))));
  // The previous fingerprint is the baseline's; the new one differs where the leaf changed.
  CHECK(after.at(local(port(1))).at("previous_sha256") == leaf_sha256(before.at(local(port(1)))));
  CHECK(leaf_sha256(after.at(local(port(1)))) != leaf_sha256(before.at(local(port(1)))));
  CHECK(leaf_sha256(after.at(local(port(5)))) == leaf_sha256(before.at(local(port(5)))));

  // Unusable baseline lines, each with its number; the summary counts every change.
  CHECK_THAT(second.err, Contains("line 10: not JSON"));
  CHECK_THAT(second.err, Contains("line 11: no \"input\" string"));
  CHECK_THAT(second.err, Contains("line 12: the leaf has no \"spki_sha256\" string"));
  CHECK_THAT(second.err, Contains("line 13: input '"));
  CHECK_THAT(second.err, Contains("(first on line 1)"));
  CHECK_THAT(second.err, Contains("changes: 1 new, 1 gone, 1 failed, 1 rekeyed, 1 issuer_changed, "
                                  "1 names_changed, 1 chain_changed, 1 renewed, 2 unchanged "
                                  "(4 baseline lines not used)"));

  SECTION("CSV: change and previous_sha256 columns, a row for the gone target") {
    auto csv_args = common;
    csv_args.insert(csv_args.end(), {"-o", "csv"});
    const auto csv = run_getcert(csv_args);
    INFO(explain(csv));
    const auto rows = lines_of(csv.out);
    REQUIRE(rows.size() == second_targets.size() + 2);  // header + gone
    CHECK_THAT(rows.front(), Contains(",error,change,previous_sha256"));
    CHECK_THAT(csv.out, Contains(local(port(7)) + ",,,,false" + std::string(12, ',') + "gone," +
                                 leaf_sha256(before.at(local(port(7))))));
    CHECK_THAT(csv.out, Contains(",renewed," + leaf_sha256(before.at(local(port(1))))));
  }

  SECTION("Prometheus: a change series per target and a count per class, promtool-valid") {
    auto prom_args = common;
    prom_args.insert(prom_args.end(), {"-o", "prometheus"});
    const auto prom = run_getcert(prom_args);
    INFO(explain(prom));
    CHECK_THAT(prom.out, Contains("getcert_change_info{target=\"" + local(port(2)) +
                                  "\",change=\"rekeyed\"} 1\n"));
    CHECK_THAT(prom.out, Contains("getcert_change_info{target=\"" + local(port(7)) +
                                  "\",change=\"gone\"} 1\n"));
    CHECK_THAT(prom.out, Contains("getcert_changes{change=\"unchanged\"} 2\n"));
    CHECK_THAT(prom.out, Contains("getcert_changes{change=\"renewed\"} 1\n"));
    write_file(dir / "metrics.prom", prom.out);
    const auto check = run_shell("promtool check metrics < '" + (dir / "metrics.prom") + "'");
    INFO(explain(check));
    CHECK(check.exit_code == 0);
  }

  SECTION("this run's output is the next run's baseline: its gone line is no entry") {
    write_file(dir / "next.jsonl", second.out);
    auto next_args = common;
    next_args[5] = dir / "next.jsonl";
    next_args.insert(next_args.end(), {"-o", "json"});
    const auto next = run_getcert(next_args);
    INFO(explain(next));
    const auto again = by_input(next.out);
    CHECK(again.size() == second_targets.size());
    for (const auto& t : second_targets) CHECK(again.at(t).at("change") == "unchanged");
    CHECK_THAT(next.err, !Contains("not used"));
  }
}

TEST_CASE("a renamed target is found by its key and TBS, in an older baseline by its fingerprint",
          "[cli][fleet]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  if (!have_nginx()) GETCERT_SKIP("nginx is not installed");
  const TempDir dir;
  const Issuer ca(dir);
  // Slot 0 serves R; slot 1 serves S; slot 2 serves S signed again by the same CA: the same
  // TBS (serial, dates, key, extensions) under another ECDSA signature.
  const std::string r_key = ca.key("r");
  const std::string r = ca.leaf("r", r_key, "r.test", "DNS:r.test", "intermediate", 400);
  const std::string s_key = ca.key("s");
  const std::string s = ca.leaf("s", s_key, "s.test", "DNS:s.test", "intermediate", 401);
  const std::string s_again = dir / "s-again.pem";
  write_file(
      s_again,
      model(resign(read_certificate(s), read_private_key(pki("intermediate.key")).get())).pem());
  serve(dir, 0, r, r_key, {"intermediate.pem"});
  serve(dir, 1, s, s_key, {"intermediate.pem"});
  serve(dir, 2, s_again, s_key, {"intermediate.pem"});
  NginxOptions options;
  options.vhosts = slot_vhosts(dir, 3);
  const TlsServer nginx = start_nginx(options);
  const auto port = [&](int slot) { return nginx.port(static_cast<std::size_t>(slot)); };

  write_file(dir / "first.txt", local(port(0)) + "\n" + local(port(1)) + "\n");
  const auto first =
      run_getcert({"-f", dir / "first.txt", "--ca-file", pki("ca-bundle.pem"), "-o", "json"});
  INFO(explain(first));
  REQUIRE(first.exit_code == kExitOk);
  const auto before = by_input(first.out);
  REQUIRE(before.size() == 2);

  // This run lists both by other names; the second serves the certificate signed again.
  const std::string r_renamed = "127.0.0.1:" + std::to_string(port(0));
  const std::string s_renamed = "127.0.0.1:" + std::to_string(port(2));
  write_file(dir / "second.txt", r_renamed + "\n" + s_renamed + "\n");
  const auto compare = [&](const std::string& baseline) {
    return run_getcert({"-f", dir / "second.txt", "--ca-file", pki("ca-bundle.pem"), "--baseline",
                        baseline, "-o", "json"});
  };

  SECTION("a baseline with tbs_sha256: both found, the one signed again is renewed") {
    write_file(dir / "baseline.jsonl", first.out);
    const auto second = compare(dir / "baseline.jsonl");
    INFO(explain(second));
    const auto after = by_input(second.out);
    REQUIRE(after.size() == 2);  // nothing gone
    CHECK(after.at(r_renamed).at("change") == "unchanged");
    CHECK(after.at(r_renamed).at("previous_input") == local(port(0)));
    const Json& was = before.at(local(port(1)));
    const Json& now = after.at(s_renamed);
    CHECK(now.at("previous_input") == local(port(1)));
    CHECK(now.at("change") == "renewed");
    CHECK(now.at("previous_sha256") == leaf_field(was, "sha256"));
    CHECK(leaf_field(now, "sha256") != leaf_field(was, "sha256"));
    CHECK(leaf_field(now, "tbs_sha256") == leaf_field(was, "tbs_sha256"));
    CHECK(leaf_field(now, "serial") == leaf_field(was, "serial"));
    CHECK_THAT(second.err, Contains("1 renewed, 1 unchanged"));
    CHECK_THAT(second.err, !Contains("gone"));
  }

  SECTION("a baseline without tbs_sha256 (an older getcert): only the same certificate") {
    std::string old_baseline;
    for (const auto& line : lines_of(first.out)) {
      Json j = parse_json(line);
      for (const char* chain : {"presented_chain", "verified_chain"}) {
        for (auto& cert : j.at(chain)) REQUIRE(cert.erase("tbs_sha256") == 1);
      }
      old_baseline += j.dump() + "\n";
    }
    // And one whose tbs_sha256 is not a string: reported, not used.
    Json odd = before.at(local(port(0)));
    odd["input"] = "odd.example:443";
    odd["presented_chain"][0]["tbs_sha256"] = 5;
    old_baseline += odd.dump() + "\n";
    write_file(dir / "old.jsonl", old_baseline);
    const auto second = compare(dir / "old.jsonl");
    INFO(explain(second));
    const auto after = by_input(second.out);
    REQUIRE(after.size() == 3);
    CHECK(after.at(r_renamed).at("change") == "unchanged");
    CHECK(after.at(r_renamed).at("previous_input") == local(port(0)));
    CHECK(after.at(s_renamed).at("change") == "new");
    CHECK_FALSE(after.at(s_renamed).contains("previous_input"));
    CHECK(after.at(local(port(1))).at("change") == "gone");
    CHECK_THAT(second.err, Contains("line 3: the leaf's \"tbs_sha256\" is not a string"));
  }
}

TEST_CASE("a missing, empty or useless baseline stops the run before any fetch", "[cli][fleet]") {
  const TempDir dir;
  const std::string target = "127.0.0.1:" + std::to_string(closed_port());
  const auto with = [&](const std::string& file, const std::string& format = "json") {
    return run_getcert({target, "--baseline", file, "-o", format});
  };
  const auto missing = with(dir / "nope.jsonl");
  CHECK(missing.exit_code == kExitIo);
  CHECK_THAT(missing.err, Contains("cannot read baseline"));
  CHECK(missing.out.empty());

  write_file(dir / "empty.jsonl", std::string());
  const auto empty = with(dir / "empty.jsonl");
  CHECK(empty.exit_code == kExitMalformed);
  CHECK_THAT(empty.err, Contains("is empty"));
  CHECK(empty.out.empty());

  write_file(dir / "junk.jsonl", std::string("a\nb\n[1]\n"));
  const auto junk = with(dir / "junk.jsonl");
  CHECK(junk.exit_code == kExitMalformed);
  CHECK_THAT(junk.err, Contains("no usable result line in 3 lines (line 1: not JSON)"));
  CHECK(junk.out.empty());

  // Many bad lines: one message each up to a bound, then a count.
  std::string many = "{\"schema\":\"getcert/v1\",\"input\":\"x:1\",\"error\":{}}\n";
  for (int i = 0; i < 100; ++i) many += "junk\n";
  write_file(dir / "many.jsonl", many);
  const auto flood = with(dir / "many.jsonl");
  INFO(explain(flood));
  CHECK_THAT(flood.err, Contains("line 21: not JSON"));
  CHECK_THAT(flood.err, !Contains("line 22: not JSON"));
  CHECK_THAT(flood.err, Contains("80 more lines not used"));
  CHECK_THAT(flood.err, Contains("gone"));  // x:1 is not in this run

  const auto pem = with(dir / "many.jsonl", "pem");
  CHECK(pem.exit_code == kExitUsage);
  CHECK_THAT(pem.err, Contains("--baseline reports changes in -o json, -o csv or -o prometheus"));
}

TEST_CASE("hostile baseline lines cost their own bytes: nesting, chains and name lists are bounded",
          "[cli][fleet]") {
  const TempDir dir;
  const std::string target = "127.0.0.1:" + std::to_string(closed_port());
  const std::string leaf_fields = R"("sha256":")" + std::string(64, 'A') + R"(","spki_sha256":")" +
                                  std::string(43, 'B') + R"(=","issuer":"CN=ca","subject":"CN=x")";
  const auto chain_of = [&](std::size_t certificates, const std::string& sans) {
    std::string chain = "[{" + leaf_fields + ",\"sans\":" + sans + "}";
    for (std::size_t i = 1; i < certificates; ++i) {
      chain += ",{\"sha256\":\"" + std::string(64, 'C') + "\"}";
    }
    return chain + "]";
  };
  const std::string no_names = R"({"dns":[],"ip":[],"uri":[],"email":[]})";
  std::string flood = R"({"dns":[)";
  for (int i = 0; i < 10001; ++i) flood += (i == 0 ? "" : ",") + std::string("\"a.test\"");
  flood += R"(],"ip":[],"uri":[],"email":[]})";
  // A field no change class reads, holding ~8 MiB of small arrays: skipped as it is parsed.
  std::string big_field = "[";
  for (int i = 0; i < 2 * 1024 * 1024; ++i) big_field += i == 0 ? "[]" : ",[]";
  big_field += "]";

  std::string lines;
  lines += R"({"input":"x:1","error":{}})"
           "\n";
  lines += std::string(1 << 20, '[') + "\n";                                         // line 2
  lines += R"({"input":"c:1","presented_chain":)" + chain_of(65, no_names) + "}\n";  // line 3
  lines += R"({"input":"n:1","presented_chain":)" + chain_of(1, flood) + "}\n";      // line 4
  lines += R"({"input":[1,2,3],"error":{}})"
           "\n";  // line 5
  lines += R"({"input":"y:1","extra":)" + big_field + R"(,"presented_chain":)" +
           chain_of(3, no_names) + "}\n";  // line 6: used
  lines += R"({"input":"z:1","presented_chain":)" +
           chain_of(1, R"({"dns":[{"a":[[[1]]]}],"ip":[],"uri":[],"email":[]})") + "}\n";  // 7
  write_file(dir / "hostile.jsonl", lines);

  const auto r = run_getcert({target, "--baseline", dir / "hostile.jsonl", "-o", "json"});
  INFO(explain(r));
  CHECK_THAT(r.err, Contains("line 2: nested deeper than 32 levels"));
  CHECK_THAT(r.err, Contains("line 3: more than 64 certificates in \"presented_chain\""));
  CHECK_THAT(r.err, Contains("line 4: more than 10000 names in one of the leaf's \"sans\" lists"));
  CHECK_THAT(r.err, Contains("line 5: no \"input\" string"));
  CHECK_THAT(r.err, Contains("line 7: a \"sans.dns\" entry is not a string"));
  CHECK_THAT(r.err, !Contains("line 6"));
  // x:1 and y:1 were usable and are not in this run: both are gone; y:1 with its leaf.
  CHECK_THAT(r.out, Contains(R"("input":"x:1")"));
  CHECK_THAT(r.out, Contains(R"("input":"y:1")") && Contains(std::string(64, 'A')));
}
