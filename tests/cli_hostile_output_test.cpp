// Bytes from outside never break getcert's output. Certificates whose CN carries ESC, BEL, NUL
// and CR-LF (with a forged "getcert: error:" line after it), whose DNS SANs carry a 0xff byte
// and a right-to-left override, a PKCS#12 whose friendlyName is not UTF-8, file names with
// control characters, and STARTTLS servers and proxies that answer with escape sequences: the
// real binary must still print valid JSON, terminal-safe text and one-line messages, with the
// documented exit codes, and one hostile target must not cost the others their result.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "getcert/text.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using getcert::test::RunResult;
using getcert::test::TempDir;
using Json = nlohmann::json;

using namespace getcert::test;  // exit codes, explain(), parse_json(), run_getcert()

namespace {

// Self-signed RSA certificates made with python3-cryptography, then patched (same length, so
// only the TBS bytes change) and re-signed: cryptography itself refuses to write these bytes.
constexpr const char* kCraftScript = R"PY(
import base64, datetime, sys
from cryptography import x509
from cryptography.x509.oid import NameOID
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa, padding

def craft(out, cn, dns, patches):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), False)
            .sign(key, hashes.SHA256()))
    der = cert.public_bytes(serialization.Encoding.DER)
    tbs = cert.tbs_certificate_bytes
    patched = tbs
    for old, new in patches:
        assert len(old) == len(new) and old in patched, old
        patched = patched.replace(old, new)
    signature = key.sign(patched, padding.PKCS1v15(), hashes.SHA256())
    der = der.replace(tbs, patched).replace(cert.signature, signature)
    b64 = base64.b64encode(der)
    with open(out + ".pem", "wb") as f:
        f.write(b"-----BEGIN CERTIFICATE-----\n")
        f.write(b"\n".join(b64[i:i + 64] for i in range(0, len(b64), 64)))
        f.write(b"\n-----END CERTIFICATE-----\n")
    with open(out + ".key", "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))

d = sys.argv[1]
craft(d + "/hostile", "evil\x1b[31mred\x07\r\ngetcert: error: forged\x00end",
      ["localhost", "badQname.test", "RLOevil.test"],
      [(b"badQname", b"bad\xffname"), (b"RLOevil", b"\xe2\x80\xaeevil")])
# A UTF8String CN that is not UTF-8 (both subject and issuer).
craft(d + "/badcn", "cnZZZZ", ["localhost"], [(b"cnZZZZ", b"cn\xff\xfe\x1b!")])
)PY";

// Answers every connection with fixed bytes at once (a STARTTLS greeting, a proxy's status
// line), then reads until the client goes away.
constexpr const char* kAnswerScript = R"PY(
import socket, sys
port, payload = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(16)
while True:
    c, _ = s.accept()
    try:
        c.sendall(payload)
        c.settimeout(10)
        while c.recv(4096):
            pass
    except OSError:
        pass
    c.close()
)PY";

// Runs argv[1:] on a new pseudo-terminal (its controlling terminal, so /dev/tty works), types
// "pw" once a password prompt has appeared, and prints everything the terminal showed.
constexpr const char* kTypePasswordScript = R"PY(
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
def read():
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""
seen = b""
while True:
    chunk = read()
    if not chunk:
        break
    seen += chunk
    at = seen.find(b"Password for ")
    if at >= 0 and b": " in seen[at:]:
        os.write(fd, b"pw\n")
        break
while True:
    chunk = read()
    if not chunk:
        break
    seen += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
)PY";

// What a terminal showed, with its "\r\n" line ends turned back into the "\n" getcert wrote.
std::string without_terminal_crlf(const std::string& shown) {
  std::string out;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (!(shown[i] == '\r' && i + 1 < shown.size() && shown[i + 1] == '\n')) out += shown[i];
  }
  return out;
}

bool have_python_cryptography() {
  return run({"python3", "-c", "import cryptography"}).exit_code == 0;
}

struct HostileFiles {
  TempDir dir;
  std::string cert = dir / "hostile.pem";
  std::string key = dir / "hostile.key";
  std::string bad_cn = dir / "badcn.pem";

  HostileFiles() {
    const auto r = run({"python3", "-c", kCraftScript, dir.path().string()});
    if (r.exit_code != 0) throw std::runtime_error("crafting certificates failed: " + r.err);
  }
};

std::string hex_of(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (const char ch : bytes) {
    const auto byte = static_cast<unsigned char>(ch);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

enum class Kind { text, json };

// What the user's terminal would receive: valid UTF-8 (an invalid byte could start a C1
// sequence on some terminals), no C0 control other than "\n" (a tab included: our output has
// none, so a tab would have come from outside) and no DEL. Text also shows no raw bidi
// override; JSON keeps one, as it keeps any valid UTF-8, for the program that reads it.
void check_terminal_safe(const std::string& stream, const char* which, Kind kind) {
  INFO(which << ": " << stream);
  CHECK(getcert::is_valid_utf8(stream));
  bool clean = true;
  for (const char ch : stream) {
    const auto byte = static_cast<unsigned char>(ch);
    if ((byte < 0x20 && byte != '\n') || byte == 0x7f) clean = false;
  }
  CHECK(clean);
  if (kind == Kind::text) CHECK(stream.find("\xe2\x80\xae") == std::string::npos);
}

// Every stderr line is one whole getcert message: an embedded newline from outside would have
// started a line of its own (and could forge "getcert: error: ..." at its start).
void check_one_line_messages(const std::string& err) {
  INFO("stderr: " << err);
  std::istringstream in(err);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    CHECK(line.rfind("getcert: ", 0) == 0);
    CHECK(line.rfind("getcert: error: forged", 0) == std::string::npos);
  }
  CHECK((err.empty() || err.back() == '\n'));
}

void check_clean(const RunResult& r, Kind stdout_kind = Kind::text) {
  INFO(explain(r));
  check_terminal_safe(r.out, "stdout", stdout_kind);
  check_terminal_safe(r.err, "stderr", Kind::text);
  check_one_line_messages(r.err);
}

std::vector<Json> json_lines(const std::string& text) {
  std::vector<Json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(parse_json(line));
  }
  return out;
}

std::string target(std::uint16_t port) { return "localhost:" + std::to_string(port); }

}  // namespace

TEST_CASE("fetch of a certificate with control characters and invalid UTF-8", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_python_cryptography(), "python3-cryptography");
  const HostileFiles files;
  auto server = start_openssl_server(ServedChain{files.cert, files.key});
  const std::string where = target(server.port());

  SECTION("-o json: valid JSON with the documented escape, exit 5 (not trusted)") {
    const auto r = run_getcert({where, "--no-fetch-missing", "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    check_clean(r, Kind::json);
    const auto docs = json_lines(r.out);
    REQUIRE(docs.size() == 1);
    const auto& leaf = docs[0].at("presented_chain").at(0);
    const auto dns = leaf.at("sans").at("dns").get<std::vector<std::string>>();
    // The 0xff byte becomes the four characters \xff; valid UTF-8 (the override) is kept.
    CHECK(dns == std::vector<std::string>{"localhost", "bad\\xffname.test",
                                          "\xe2\x80\xae"
                                          "evil.test"});
    CHECK_THAT(leaf.at("subject").get<std::string>(), Contains("forged"));
  }

  SECTION("-o json with a trust anchor: verified, exit 0") {
    const auto r =
        run_getcert({where, "--no-fetch-missing", "--ca-file", files.cert, "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_clean(r, Kind::json);
    const auto docs = json_lines(r.out);
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].at("verification").at("ok").get<bool>());
    CHECK(docs[0].at("verified_chain").size() == 1);
  }

  SECTION("-o text --insecure: every field escaped, exit 0") {
    const auto r = run_getcert({where, "--no-fetch-missing", "--insecure", "-o", "text"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_clean(r);
    CHECK_THAT(r.out, Contains("DNS:bad\\xffname.test"));
    CHECK_THAT(r.out, Contains("DNS:\\u202eevil.test"));
    CHECK_THAT(r.out, Contains("SANs:"));
  }

  SECTION("PEM (default): the chain on stdout, the verdict as one escaped line, exit 5") {
    const auto r = run_getcert({where, "--no-fetch-missing"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    CHECK(r.out.empty());
    check_clean(r);
    CHECK_THAT(r.err, Contains("verification failed"));
  }

  SECTION("PEM --insecure: the PEM is delivered, untouched") {
    const auto r = run_getcert({where, "--no-fetch-missing", "--insecure"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_clean(r);
    CHECK(r.out == read_file(files.cert));
  }

  SECTION("wrong name: the reason names the hostile CN, escaped") {
    const auto r = run_getcert({"127.0.0.1:" + std::to_string(server.port()), "--no-fetch-missing",
                                "--ca-file", files.cert, "-o", "text"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    check_clean(r);
  }
}

TEST_CASE("the verdict line on a terminal quotes the hostile CN escaped", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_python_cryptography(), "python3-cryptography");
  // script(1) gives getcert a pseudo-terminal, the only place the verdict line is printed.
  REQUIRE_TOOL(run({"script", "--version"}).exit_code == 0, "script (util-linux)");
  const HostileFiles files;
  auto server = start_openssl_server(ServedChain{files.cert, files.key});
  const std::string command =
      std::string(GETCERT_BINARY) + " " + target(server.port()) + " --no-fetch-missing -o text";
  auto r = run({"script", "-qec", command, "/dev/null"});
  r.out = without_terminal_crlf(r.out);
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  check_terminal_safe(r.out, "terminal", Kind::text);
  CHECK_THAT(r.out, Contains(target(server.port()) +
                             ": NOT verified: self-signed certificate "
                             "'evil\\x1b[31mred\\x07\\x0d\\x0agetcert: error: forged\\x00end'"));
}

TEST_CASE("several targets: a hostile one never costs the others their result", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_python_cryptography(), "python3-cryptography");
  const HostileFiles files;
  auto hostile = start_openssl_server(ServedChain{files.cert, files.key});
  auto good = start_openssl_server(pki_chain("rsa"));
  const std::string refused = "127.0.0.1:" + std::to_string(closed_port());

  SECTION("-o json: one parseable line per target, first failure's exit code") {
    const auto r =
        run_getcert({target(hostile.port()), target(good.port()), refused, "--no-fetch-missing",
                     "--ca-file", pki("ca-bundle.pem"), "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    check_clean(r, Kind::json);
    const auto docs = json_lines(r.out);
    REQUIRE(docs.size() == 3);
    // Several targets stream in completion order; each object names its input.
    std::map<std::string, nlohmann::json> by_input;
    for (const auto& d : docs) by_input[d.at("input").get<std::string>()] = d;
    REQUIRE(by_input.size() == 3);
    CHECK_FALSE(by_input.at(target(hostile.port())).at("verification").at("ok").get<bool>());
    CHECK(by_input.at(target(good.port())).at("verification").at("ok").get<bool>());
    CHECK(by_input.at(refused).at("error").at("exit_code").get<int>() == kExitNetwork);
  }

  SECTION("-o text --insecure: every report printed") {
    const auto r = run_getcert({target(hostile.port()), target(good.port()), "--no-fetch-missing",
                                "--ca-file", pki("ca-bundle.pem"), "--insecure", "-o", "text"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_clean(r);
    CHECK_THAT(r.out, Contains("bad\\xffname.test"));
    CHECK_THAT(r.out, Contains("Verdict:    OK"));
  }
}

TEST_CASE("show on hostile files and hostile file names", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_python_cryptography(), "python3-cryptography");
  const HostileFiles files;

  SECTION("text and JSON of the hostile certificate") {
    const auto text = run_getcert({"show", files.cert});
    INFO(explain(text));
    CHECK(text.exit_code == kExitOk);
    check_clean(text);
    CHECK_THAT(text.out, Contains("bad\\xffname.test"));

    const auto json = run_getcert({"show", files.cert, "-o", "json"});
    INFO(explain(json));
    CHECK(json.exit_code == kExitOk);
    check_clean(json, Kind::json);
    const auto docs = json_lines(json.out);
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].at("certificates").at(0).at("sans").at("dns").at(1) == "bad\\xffname.test");
  }

  SECTION("--verify: the verdict lines are escaped one-liners") {
    const auto r = run_getcert(
        {"show", files.cert, "--verify", "--host", "other.test", "--ca-file", files.cert});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    check_clean(r);
    CHECK_THAT(r.err, Contains("verification failed"));
  }

  SECTION("a UTF8String CN that is not UTF-8: malformed input, exit 8, clean error") {
    const auto text = run_getcert({"show", files.bad_cn});
    INFO(explain(text));
    // OpenSSL refuses such a name while parsing, so the file is not a certificate to it.
    CHECK(text.exit_code == kExitMalformed);
    check_clean(text);
    const auto json = run_getcert({"show", files.bad_cn, "-o", "json"});
    INFO(explain(json));
    CHECK(json.exit_code == kExitMalformed);
    check_clean(json, Kind::json);
    REQUIRE(json_lines(json.out).size() == 1);
  }

  SECTION("file names with control characters and invalid UTF-8") {
    const std::string hostile_name = files.dir / "x\x1b[2J\xff\r\ngetcert: error: forged.pem";
    std::filesystem::copy_file(files.cert, hostile_name);

    const auto text = run_getcert({"show", hostile_name});
    INFO(explain(text));
    CHECK(text.exit_code == kExitOk);
    check_clean(text);
    CHECK_THAT(text.out, Contains("x\\x1b[2J\\xff\\x0d\\x0agetcert: error: forged.pem"));

    const auto json = run_getcert({"show", hostile_name, "-o", "json"});
    INFO(explain(json));
    CHECK(json.exit_code == kExitOk);
    check_clean(json, Kind::json);
    const auto docs = json_lines(json.out);
    REQUIRE(docs.size() == 1);
    CHECK_THAT(docs[0].at("file").get<std::string>(),
               Contains("x\x1b[2J\\xff\r\ngetcert: error: forged.pem"));

    const auto missing = run_getcert({"show", hostile_name + ".missing", files.cert, "-o", "json"});
    INFO(explain(missing));
    CHECK(missing.exit_code == kExitIo);
    check_clean(missing, Kind::json);
    CHECK(json_lines(missing.out).size() == 2);  // the error object, then the good file
  }
}

TEST_CASE("p12 info and topem on a friendlyName that is not UTF-8", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_python_cryptography(), "python3-cryptography");
  const HostileFiles files;
  // OpenSSL 3 refuses to write a friendlyName that is not UTF-8, so write a placeholder in
  // a file without MAC and unencrypted bags, then turn its BMPString into a UTF8String of the
  // same length holding 0xff, ESC and 0xfe.
  const std::string placeholder = files.dir / "placeholder.p12";
  openssl({"pkcs12", "-export", "-name", "QZQZ", "-inkey", files.key, "-in", files.cert, "-nomac",
           "-keypbe", "NONE", "-certpbe", "NONE", "-passout", "pass:", "-out", placeholder});
  std::string bytes = read_file(placeholder);
  const std::string bmp("\x1e\x08\x00Q\x00Z\x00Q\x00Z", 10);
  const std::string utf8("\x0c\x08\xff\x1b[31mX\xfe", 10);
  std::size_t patched = 0;
  for (auto at = bytes.find(bmp); at != std::string::npos; at = bytes.find(bmp, at)) {
    bytes.replace(at, bmp.size(), utf8);
    ++patched;
  }
  REQUIRE(patched >= 1);
  const std::string p12 = files.dir / "hostile.p12";
  write_file(p12, bytes);

  SECTION("info -o json: valid JSON, the name with its \\xNN escapes") {
    const auto r = run_getcert({"p12", "info", p12, "--no-password", "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_clean(r, Kind::json);
    const auto docs = json_lines(r.out);
    REQUIRE(docs.size() == 1);
    const auto name =
        docs[0].at("identities").at(0).at("key_attributes").at("friendly_name").get<std::string>();
    CHECK(name == "\\xff\x1b[31mX\\xfe");
  }

  SECTION("info (text): the name escaped") {
    const auto r = run_getcert({"p12", "info", p12, "--no-password"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_clean(r);
    CHECK_THAT(r.out, Contains("\\xff\\x1b[31mX\\xfe"));
  }

  SECTION("topem from a hostile file name: PEM on stdout, messages escaped") {
    const std::string hostile_name = files.dir / "b\x1b]0;pwned\x07\xff.p12";
    std::filesystem::copy_file(p12, hostile_name);
    const auto r = run_getcert({"p12", "topem", hostile_name, "--no-password", "--stdout"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    check_clean(r);
    CHECK_THAT(r.out, Contains("-----BEGIN CERTIFICATE-----"));

    // The "wrote" lines echo the output paths, which hold what the user typed.
    const std::string out_dir = files.dir / "out\x1b[1m\xff";
    const auto written =
        run_getcert({"p12", "topem", hostile_name, "--no-password", "--out-dir", out_dir});
    INFO(explain(written));
    CHECK(written.exit_code == kExitOk);
    check_clean(written);
    CHECK_THAT(written.err, Contains("out\\x1b[1m\\xff/key.pem"));

    const auto missing = run_getcert({"p12", "topem", hostile_name + ".missing", "--no-password"});
    INFO(explain(missing));
    CHECK(missing.exit_code == kExitIo);
    check_clean(missing);
    CHECK_THAT(missing.err, Contains("b\\x1b]0;pwned\\x07\\xff.p12.missing"));
  }
}

TEST_CASE("the password prompt names a hostile file escaped", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_python_cryptography(), "python3-cryptography");
  const HostileFiles files;
  const std::string p12 = files.dir / "pw\x1b[1m\xff.p12";
  openssl({"pkcs12", "-export", "-inkey", files.key, "-in", files.cert, "-passout", "pass:pw",
           "-out", p12});
  auto r = run({"python3", "-c", kTypePasswordScript, GETCERT_BINARY, "p12", "info", p12});
  r.out = without_terminal_crlf(r.out);
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  check_terminal_safe(r.out, "terminal", Kind::text);
  CHECK_THAT(r.out, Contains("Password for " + files.dir / "pw\\x1b[1m\\xff.p12: "));
  CHECK_THAT(r.out, Contains("MAC:        SHA-256"));
}

TEST_CASE("peers' answers in error messages: STARTTLS greeting, proxy status line", "[cli]") {
  const auto answering = [](const std::string& payload) {
    const std::uint16_t port = free_port();
    SpawnOptions options;
    options.die_with_parent = true;
    auto server = Process::spawn(
        {"python3", "-c", kAnswerScript, std::to_string(port), hex_of(payload)}, options);
    REQUIRE(wait_for_port("127.0.0.1", port, std::chrono::seconds(10), &server));
    return std::make_pair(std::move(server), port);
  };
  std::string hostile = "\x1b[31mgo away\x07\x1b]0;pwned\x07\xff";
  hostile += '\0';
  hostile += " getcert: error: forged";

  SECTION("an SMTP server refusing STARTTLS: exit 4, one escaped line") {
    auto [server, port] = answering("554 " + hostile + "\r\n");
    const auto r = run_getcert({"--starttls", "smtp", "127.0.0.1:" + std::to_string(port)});
    INFO(explain(r));
    CHECK(r.exit_code == kExitTls);
    CHECK(r.out.empty());
    check_clean(r);
    CHECK_THAT(r.err, Contains("554 \\x1b[31mgo away\\x07\\x1b]0;pwned\\x07\\xff"));
  }

  SECTION("a proxy refusing CONNECT: exit 3, one escaped line, JSON error object") {
    auto [server, port] = answering("HTTP/1.1 403 " + hostile + "\r\n\r\n");
    const auto r = run_getcert(
        {"--proxy", "http://127.0.0.1:" + std::to_string(port), "localhost:443", "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitNetwork);
    check_clean(r, Kind::json);
    const auto docs = json_lines(r.out);
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].at("error").at("exit_code").get<int>() == kExitNetwork);
    CHECK_THAT(r.err, Contains("403 \\x1b[31mgo away\\x07\\x1b]0;pwned\\x07\\xff"));
  }
}

TEST_CASE("usage errors quoting a hostile argument stay one escaped line", "[cli]") {
  const auto r = run_getcert({"show", "-o", "x\x1b[2J\r\ngetcert: error: forged", "f.pem"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitUsage);
  check_clean(r);
}
