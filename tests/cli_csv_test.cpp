// `-o csv` as a spreadsheet reads it: the built getcert against real TLS servers on loopback,
// its output read back with Python's csv module (RFC 4180 dialect), a certificate whose subject
// CN is a formula, and a target that fails.

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/issued_leaf.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using namespace getcert::test;

namespace {

using Row = std::map<std::string, std::string>;

// The rows Python's csv.DictReader reads from `csv_text` (strict: a malformed quote fails it),
// and the header it found.
std::vector<Row> read_back(const TempDir& dir, const std::string& csv_text,
                           std::vector<std::string>& header) {
  write_file(dir / "out.csv", csv_text);
  const auto r = run({"python3", "-c",
                      "import csv, json, sys\n"
                      "with open(sys.argv[1], newline='') as f:\n"
                      "    reader = csv.DictReader(f, strict=True)\n"
                      "    rows = list(reader)\n"
                      "print(json.dumps({'header': reader.fieldnames, 'rows': rows}))\n",
                      dir / "out.csv"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto doc = parse_json(r.out);
  header = doc["header"].get<std::vector<std::string>>();
  std::vector<Row> rows;
  for (const auto& row : doc["rows"]) rows.push_back(row.get<Row>());
  return rows;
}

}  // namespace

TEST_CASE("-o csv: one row per target, formulas neutralised, read back by Python's csv", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir tmp;
  // CN: =SUM(1+2),"q" (the backslash keeps openssl -subj from reading + as an RDN separator).
  LeafSpec spec;
  spec.cn = "=SUM(1\\+2),\"q\"";
  spec.san = "DNS:localhost";
  const auto server = start_openssl_server(issue_leaf(tmp, "formula", spec));
  const std::string good = "localhost:" + std::to_string(server.port());
  const std::string failing = "127.0.0.1:" + std::to_string(closed_port());

  const auto r = run_getcert({good, failing, "-o", "csv", "--ca-file", pki("root.pem")});
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);  // the failing target's code
  CHECK_THAT(r.out, StartsWith("input,host,port,address,ok,verdict,problems,tls_version,cipher,"
                               "subject_cn,issuer_cn,not_before,not_after,days_left,sha256,"
                               "error\r\n"));

  std::vector<std::string> header;
  const auto rows = read_back(tmp, r.out, header);
  CHECK(header.size() == 16);
  REQUIRE(rows.size() == 2);
  std::map<std::string, Row> by_input;
  for (const auto& row : rows) {
    CHECK(row.size() == header.size());
    by_input[row.at("input")] = row;
  }
  REQUIRE(by_input.count(good) == 1);
  REQUIRE(by_input.count(failing) == 1);

  const Row& ok = by_input[good];
  CHECK(ok.at("host") == "localhost");
  CHECK(ok.at("port") == std::to_string(server.port()));
  CHECK(ok.at("address") == "127.0.0.1");
  CHECK(ok.at("ok") == "true");
  CHECK(ok.at("verdict") == "valid");
  CHECK(ok.at("problems").empty());
  CHECK_THAT(ok.at("tls_version"), StartsWith("TLSv1."));
  // What a spreadsheet shows as text, never evaluates: the quote OWASP recommends, then the CN.
  CHECK(ok.at("subject_cn") == "'=SUM(1+2),\"q\"");
  CHECK_FALSE(ok.at("issuer_cn").empty());
  CHECK(ok.at("not_before").size() == 20);  // 2026-01-31T12:00:00Z
  CHECK(ok.at("not_after").size() == 20);
  CHECK((ok.at("days_left") == "29" || ok.at("days_left") == "30"));
  CHECK(ok.at("sha256").size() == 64);
  CHECK(ok.at("error").empty());

  const Row& bad = by_input[failing];
  CHECK(bad.at("host") == "127.0.0.1");
  CHECK(bad.at("ok") == "false");
  CHECK(bad.at("verdict").empty());
  CHECK(bad.at("subject_cn").empty());
  CHECK_THAT(bad.at("error"), StartsWith("cannot connect to " + failing));
}

TEST_CASE("-o csv: a failed verification names its problems, and a list has one header", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir tmp;
  const auto server = start_openssl_server(pki_chain("rsa"));
  const std::string target = "127.0.0.1:" + std::to_string(server.port());
  // Three lines of a list: the same server, an unparseable line (a formula itself), and the
  // server again; no --ca-file, so the test root is not trusted.
  write_file(tmp / "targets.txt", target + "\n=cmd|x:1:2\n" + target + "\n");
  const auto r = run_getcert({"--targets-file", tmp / "targets.txt", "-o", "csv"});
  INFO(explain(r));
  std::vector<std::string> header;
  const auto rows = read_back(tmp, r.out, header);
  CHECK(header.size() == 16);
  REQUIRE(rows.size() == 3);
  int unverified = 0;
  int unparsed = 0;
  for (const auto& row : rows) {
    if (row.at("input") == target) {
      ++unverified;
      CHECK(row.at("ok") == "false");
      CHECK_FALSE(row.at("verdict").empty());
      CHECK_FALSE(row.at("problems").empty());
      CHECK(row.at("sha256").size() == 64);
    } else {
      ++unparsed;
      CHECK(row.at("input") == "'=cmd|x:1:2");
      CHECK(row.at("ok") == "false");
      CHECK_FALSE(row.at("error").empty());
    }
  }
  CHECK(unverified == 2);
  CHECK(unparsed == 1);
}
