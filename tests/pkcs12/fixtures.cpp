#include "fixtures.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "getcert/certificate.hpp"

namespace getcert::pkcs12::test {

fs::path vectors_dir() {
  const fs::path dir = GETCERT_VECTORS_DIR;
  // The vectors are part of the repository: a missing manifest is a broken checkout, and the
  // tests that read them fail (Catch reports the exception) instead of skipping.
  if (!fs::exists(dir / "MANIFEST.tsv")) {
    throw std::runtime_error("PKCS#12 vectors missing: no MANIFEST.tsv in " + dir.string());
  }
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
  std::vector<std::string> argv{"openssl",  "pkey", "-in",  dir / "key.pem",
                                "-outform", "DER",  "-out", dir / "key.der"};
  if (!passphrase.empty()) {
    write_file(dir / "pass", passphrase);
    argv.push_back("-passin");
    argv.push_back("file:" + (dir / "pass"));
  }
  if (run(argv).exit_code != 0) return {};
  return read_bytes(dir / "key.der");
}

OpensslContents openssl_extract(const fs::path& p12, const std::string& password_bytes,
                                const std::vector<std::string>& extra_flags) {
  OpensslContents out;
  TempDir dir;
  write_file(dir / "pass", password_bytes);
  std::vector<std::string> argv{
      "openssl", "pkcs12", "-in", p12.string(), "-nodes", "-passin", "file:" + (dir / "pass")};
  if (password_bytes.empty()) argv.back() = "pass:";
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  const RunResult r = run(argv);
  if (r.exit_code != 0) {
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

std::string concat(const std::vector<fs::path>& files) {
  std::string out;
  for (const auto& f : files) out += read_file(f);
  return out;
}

std::vector<std::string> openssl_export_argv(const TestLeaf& leaf, const fs::path& certfile,
                                             const std::string& name, const fs::path& out,
                                             const std::string& pass_arg) {
  return {"openssl",
          "pkcs12",
          "-export",
          "-inkey",
          leaf.key.string(),
          "-in",
          leaf.cert.string(),
          "-certfile",
          certfile.string(),
          "-name",
          name,
          "-out",
          out.string(),
          "-passout",
          pass_arg};
}

}  // namespace getcert::pkcs12::test
