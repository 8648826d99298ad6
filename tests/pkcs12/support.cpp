#include "support.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>

#include "getcert/certificate.hpp"

namespace getcert::pkcs12::test {

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

void write_file(const fs::path& path, const std::vector<std::uint8_t>& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base != nullptr ? base : "/tmp") + "/getcert-p12-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

RunResult run(const std::vector<std::string>& argv, const std::optional<std::string>& input,
              const std::map<std::string, std::string>& env) {
  TempDir io;
  const fs::path out_path = io / "stdout";
  const fs::path err_path = io / "stderr";
  const fs::path in_path = io / "stdin";
  if (input) write_file(in_path, *input);
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    const int in = open(input ? in_path.c_str() : "/dev/null", O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  RunResult r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

bool have_tool(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (access((fs::path(dir) / tool).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::optional<fs::path> vectors_dir() {
  const fs::path dir = GETCERT_VECTORS_DIR;
  if (!fs::exists(dir / "MANIFEST.tsv")) return std::nullopt;
  return dir;
}

std::vector<VectorRow> load_manifest(const fs::path& dir) {
  std::vector<VectorRow> rows;
  std::ifstream in(dir / "MANIFEST.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() < 9) continue;
    VectorRow row;
    row.file = cols[0];
    row.password_spec = cols[3];
    if (cols[3] != "<none>" && cols[3] != "<empty>") row.password = cols[3];
    row.contents = cols[7];
    row.notes = cols[8];
    row.negative = row.notes.find("NEGATIVE") != std::string::npos;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::uint8_t> normalized_key_der(const std::string& pem,
                                             const std::string& passphrase) {
  TempDir dir;
  write_file(dir / "key.pem", pem);
  std::vector<std::string> argv{"openssl",  "pkey", "-in",  (dir / "key.pem").string(),
                                "-outform", "DER",  "-out", (dir / "key.der").string()};
  if (!passphrase.empty()) {
    write_file(dir / "pass", passphrase);
    argv.push_back("-passin");
    argv.push_back("file:" + (dir / "pass").string());
  }
  if (run(argv).status != 0) return {};
  return read_file(dir / "key.der");
}

OpensslContents openssl_extract(const fs::path& p12, const std::string& password_bytes,
                                const std::vector<std::string>& extra_flags) {
  OpensslContents out;
  TempDir dir;
  write_file(dir / "pass", password_bytes);
  std::vector<std::string> argv{"openssl",
                                "pkcs12",
                                "-in",
                                p12.string(),
                                "-nodes",
                                "-passin",
                                "file:" + (dir / "pass").string()};
  if (password_bytes.empty()) argv.back() = "pass:";
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  const RunResult r = run(argv);
  if (r.status != 0) {
    out.error = r.err;
    return out;
  }
  // Keys: each "-----BEGIN PRIVATE KEY-----" block through openssl pkey.
  std::size_t pos = 0;
  static const std::string kBegin = "-----BEGIN PRIVATE KEY-----";
  static const std::string kEnd = "-----END PRIVATE KEY-----";
  while ((pos = r.out.find(kBegin, pos)) != std::string::npos) {
    const std::size_t end = r.out.find(kEnd, pos);
    if (end == std::string::npos) break;
    out.keys.push_back(normalized_key_der(r.out.substr(pos, end + kEnd.size() - pos) + "\n"));
    pos = end;
  }
  if (r.out.find("-----BEGIN CERTIFICATE-----") != std::string::npos) {
    auto certs = parse_certificates_pem(r.out);
    if (!certs) {
      out.error = "cannot parse openssl's certificates: " + certs.error().message;
      return out;
    }
    for (auto& c : *certs) out.certs.push_back(c.der);
  }
  out.ok = true;
  return out;
}

std::string to_hex(const std::vector<std::uint8_t>& data) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string s;
  for (auto b : data) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

}  // namespace getcert::pkcs12::test

namespace getcert::pkcs12::test {
namespace {

void must(const RunResult& r, const std::string& what) {
  if (r.status != 0) throw std::runtime_error(what + " failed: " + r.err);
}

TestPki make_pki(const fs::path& dir) {
  TestPki pki;
  write_file(dir / "ca.ext", std::string("basicConstraints=critical,CA:TRUE\n"
                                         "keyUsage=critical,keyCertSign,cRLSign\n"
                                         "subjectKeyIdentifier=hash\n"
                                         "authorityKeyIdentifier=keyid\n"));
  write_file(dir / "leaf.ext", std::string("basicConstraints=CA:FALSE\n"
                                           "subjectAltName=DNS:leaf.test\n"
                                           "authorityKeyIdentifier=keyid\n"));
  pki.root_key = dir / "root.key";
  pki.root_cert = dir / "root.pem";
  must(run({"openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            pki.root_key.string(),
            "-out",
            pki.root_cert.string(),
            "-subj",
            "/CN=getcert Test Root",
            "-days",
            "30",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign"}),
       "root CA");
  auto issue = [&](const fs::path& key, const fs::path& out, const std::string& subject,
                   const fs::path& ca_cert, const fs::path& ca_key, const std::string& ext) {
    const fs::path csr = dir / (out.stem().string() + ".csr");
    must(run({"openssl", "req", "-new", "-key", key.string(), "-out", csr.string(), "-subj",
              subject}),
         "csr " + subject);
    must(run({"openssl", "x509", "-req", "-in", csr.string(), "-CA", ca_cert.string(), "-CAkey",
              ca_key.string(), "-CAcreateserial", "-out", out.string(), "-days", "30", "-extfile",
              (dir / ext).string()}),
         "issue " + subject);
  };
  pki.inter_key = dir / "inter.key";
  pki.inter_cert = dir / "inter.pem";
  must(run({"openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
            pki.inter_key.string()}),
       "intermediate key");
  issue(pki.inter_key, pki.inter_cert, "/CN=getcert Test Intermediate", pki.root_cert, pki.root_key,
        "ca.ext");
  const std::vector<std::pair<std::string, std::vector<std::string>>> kinds{
      {"rsa", {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"}},
      {"ec", {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"}},
      {"ed25519", {"-algorithm", "ED25519"}},
  };
  for (const auto& [name, args] : kinds) {
    TestLeaf leaf{name, dir / ("leaf-" + name + ".key"), dir / ("leaf-" + name + ".pem")};
    std::vector<std::string> argv{"openssl", "genpkey"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-out", leaf.key.string()});
    must(run(argv), "leaf key " + name);
    issue(leaf.key, leaf.cert, "/CN=leaf-" + name + ".test", pki.inter_cert, pki.inter_key,
          "leaf.ext");
    pki.leaves.push_back(leaf);
  }
  return pki;
}

}  // namespace

const TestPki& test_pki() {
  static TempDir dir;
  static const TestPki pki = make_pki(dir.path());
  return pki;
}

}  // namespace getcert::pkcs12::test
