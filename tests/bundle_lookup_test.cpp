// The system store when SSL_CERT_FILE names a PEM bundle: the bundle is indexed by subject and
// a certificate is decoded only when a chain needs it. Verdicts must be those of a bundle
// parsed whole; a corrupt block costs only the chains that would have needed it.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/verify.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/scoped_env.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

using getcert::Certificate;
using getcert::Verification;
using getcert::VerifyOptions;
using getcert::test::pki;
using getcert::test::read_file;
using getcert::test::ScopedEnv;
using getcert::test::TempDir;

namespace {

std::vector<Certificate> chain(const std::string& file) {
  auto certs = getcert::parse_certificates_pem(read_file(pki(file)));
  if (!certs) FAIL(file << ": " << certs.error().message);
  return *certs;
}

// Verifies `presented` for `name` with the system store, the store being `bundle` alone
// (SSL_CERT_DIR names an empty directory, so no hashed directory answers instead).
Verification verify_with_bundle(const TempDir& tmp, const std::string& bundle,
                                const std::vector<Certificate>& presented,
                                const std::string& name) {
  const std::string path = tmp / "bundle.pem";
  getcert::test::write_file(path, bundle);
  std::filesystem::create_directories(tmp / "empty-dir");
  const ScopedEnv file("SSL_CERT_FILE", path);
  const ScopedEnv dir("SSL_CERT_DIR", tmp / "empty-dir");
  VerifyOptions o;
  o.name = name;
  o.fetch_missing = false;
  auto v = getcert::verify_chain(presented, o);
  if (!v) FAIL("verify_chain failed: " << v.error().message);
  CHECK(v->trust_store == "system (" + path + ")");
  return *v;
}

// The same for the ECDSA test chain.
Verification verify_with_bundle(const TempDir& tmp, const std::string& bundle) {
  return verify_with_bundle(tmp, bundle, chain("ecdsa-chain.pem"), "ecdsa.test");
}

std::vector<std::string> subjects(const std::vector<Certificate>& certs) {
  std::vector<std::string> out;
  out.reserve(certs.size());
  for (const auto& c : certs) out.push_back(c.subject_cn);
  return out;
}

// The test root with its outer signatureAlgorithm tag broken: the subject can still be found
// (it is inside tbsCertificate), but the certificate no longer decodes.
std::string undecodable_root() {
  Certificate root = chain("root.pem").front();
  auto& der = root.der;
  REQUIRE(der.size() > 8);
  REQUIRE(der[4] == 0x30);
  REQUIRE(der[5] == 0x82);  // tbsCertificate longer than 255 bytes, as every real one is
  const std::size_t tbs_len = (std::size_t{der[6]} << 8U) | der[7];
  const std::size_t sigalg = 8 + tbs_len;
  REQUIRE(sigalg < der.size());
  REQUIRE(der[sigalg] == 0x30);
  der[sigalg] = 0x31;
  return root.pem();
}

const char* const kBadBase64 =
    "-----BEGIN CERTIFICATE-----\nMIIB!!notbase64!!\n-----END CERTIFICATE-----\n";
// Valid base64 of bytes that are no certificate ("hello world, not DER").
const char* const kNotDer =
    "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQsIG5vdCBERVI=\n-----END CERTIFICATE-----\n";

}  // namespace

TEST_CASE("a bundle of many certificates verifies as the same file given as --ca-file does",
          "[verify]") {
  // Every PEM file of the test PKI (leaves, keys, CRLs and chains mixed in, the root among
  // them), after the machine's own bundle when it has one.
  std::string bundle;
  if (std::filesystem::exists("/etc/ssl/certs/ca-certificates.crt")) {
    bundle = read_file("/etc/ssl/certs/ca-certificates.crt");
  }
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(pki("root.pem")).parent_path())) {
    if (entry.path().extension() == ".pem") bundle += read_file(entry.path());
  }
  TempDir tmp;
  const auto lazy = verify_with_bundle(tmp, bundle);
  CHECK(lazy.ok);
  CHECK(lazy.errors.empty());

  VerifyOptions whole;
  whole.trust.ca_file = tmp / "bundle.pem";
  whole.name = "ecdsa.test";
  whole.fetch_missing = false;
  const auto eager = getcert::verify_chain(chain("ecdsa-chain.pem"), whole);
  REQUIRE(eager);
  CHECK(eager->ok == lazy.ok);
  CHECK(subjects(lazy.verified_chain) == subjects(eager->verified_chain));
  REQUIRE(lazy.verified_chain.size() == 3);
  CHECK(lazy.verified_chain[2].subject_cn == "getcert Test Root CA");
}

TEST_CASE("a bundle without our root trusts nothing of ours, not even its intermediate",
          "[verify]") {
  TempDir tmp;
  const auto v = verify_with_bundle(
      tmp, read_file(pki("untrusted-root.pem")) + read_file(pki("intermediate.pem")));
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.errors.empty());
}

TEST_CASE("corrupt blocks elsewhere in a bundle do not break an unrelated chain", "[verify]") {
  TempDir tmp;
  const std::string root = read_file(pki("root.pem"));
  std::string truncated = read_file(pki("untrusted-root.pem"));
  truncated.erase(truncated.find("-----END"));  // a block that never ends, at the very end
  SECTION("before and after the root") {
    const auto v = verify_with_bundle(
        tmp, std::string(kBadBase64) + kNotDer + undecodable_root() + root + kNotDer + truncated);
    INFO(v.errors.size());
    CHECK(v.ok);
  }
  SECTION("a certificate with our root's subject that does not decode is passed over") {
    CHECK(verify_with_bundle(tmp, undecodable_root() + root).ok);
    CHECK_FALSE(verify_with_bundle(tmp, undecodable_root()).ok);
  }
}

TEST_CASE("a root whose subject ends far into its DER is found, and breakage past it is not fatal",
          "[verify]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  using getcert::test::openssl;
  TempDir tmp;
  // Six 60-character OUs in both the issuer and the subject put the subject's end near byte
  // 900: past the start of each block that the index decodes first.
  std::string dn = "/CN=getcert Long Name Root";
  for (char c = 'a'; c < 'g'; ++c) dn += "/OU=" + std::string(60, c);
  const std::string root_pem = tmp / "root.pem";
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
           "-keyout", tmp / "root.key", "-out", root_pem, "-subj", dn, "-days", "30", "-addext",
           "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"});
  openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
           "-keyout", tmp / "leaf.key", "-out", tmp / "leaf.csr", "-subj", "/CN=long.test"});
  getcert::test::write_file(tmp / "leaf.ext",
                            "subjectAltName = DNS:long.test\nextendedKeyUsage = serverAuth\n");
  openssl({"x509", "-req", "-in", tmp / "leaf.csr", "-CA", root_pem, "-CAkey", tmp / "root.key",
           "-set_serial", "7", "-days", "30", "-extfile", tmp / "leaf.ext", "-out",
           tmp / "leaf.pem"});
  const std::string root = read_file(root_pem);
  auto root_cert = getcert::parse_certificates_pem(root);
  REQUIRE(root_cert);
  REQUIRE(root_cert->front().der.size() > 900);
  auto leaf = getcert::parse_certificates_pem(read_file(tmp / "leaf.pem"));
  REQUIRE(leaf);

  const auto v = verify_with_bundle(tmp, std::string(kNotDer) + root + kNotDer, *leaf, "long.test");
  INFO(v.errors.size());
  CHECK(v.ok);
  REQUIRE(v.verified_chain.size() == 2);
  CHECK(v.verified_chain[1].subject_cn == "getcert Long Name Root");

  // The test root with its last base64 line broken: the start still indexes under its subject,
  // but the certificate no longer decodes, so it is passed over and the chain has no anchor.
  std::string broken = read_file(pki("root.pem"));
  const std::size_t last_line = broken.rfind('\n', broken.find("-----END") - 2) + 1;
  broken[last_line] = '!';
  CHECK_FALSE(verify_with_bundle(tmp, broken).ok);
  CHECK(verify_with_bundle(tmp, broken + read_file(pki("root.pem"))).ok);
}
