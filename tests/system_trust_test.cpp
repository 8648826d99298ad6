// The system trust store's search list (verify/system_trust.hpp): distribution layouts built
// under a temporary root, SSL_CERT_FILE / SSL_CERT_DIR overriding the list, and a verification
// that trusts a root found through SSL_CERT_DIR's colon-separated list.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/verify.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/scoped_env.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"
#include "verify/system_trust.hpp"

using getcert::detail::find_system_trust;
using getcert::detail::SystemTrustSources;
using getcert::test::pki;
using getcert::test::read_file;
using getcert::test::ScopedEnv;
using getcert::test::TempDir;
using getcert::test::write_file;
namespace fs = std::filesystem;

namespace {

// Creates root/relative (and its parent directories) holding `content`.
std::string place(const TempDir& root, const std::string& relative, const std::string& content) {
  const fs::path p = root.path() / relative.substr(1);
  fs::create_directories(p.parent_path());
  write_file(p, content);
  return p.string();
}

std::string root_of(const TempDir& t) { return t.path().string(); }

}  // namespace

TEST_CASE("system trust: the search list names every distribution's bundle and directory",
          "[verify]") {
  const auto& files = getcert::detail::system_bundle_files();
  for (const char* f : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
                        "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem", "/etc/pki/tls/cacert.pem"}) {
    CHECK(std::find(files.begin(), files.end(), f) != files.end());
  }
  CHECK(files.front() == "/etc/ssl/certs/ca-certificates.crt");
  const auto& dirs = getcert::detail::system_certificate_dirs();
  CHECK(dirs == std::vector<std::string_view>{"/etc/ssl/certs", "/etc/pki/tls/certs",
                                              "/system/etc/security/cacerts"});
}

TEST_CASE("system trust: distribution layouts under a fake root", "[verify]") {
  const TempDir root;
  const std::string r = root_of(root);
  SECTION("nothing there: an empty store") {
    const SystemTrustSources s = find_system_trust(r, nullptr, nullptr);
    CHECK(s.dirs.empty());
    CHECK(s.file.empty());
  }
  SECTION("Debian: the hashed directory, not the bundle next to it") {
    place(root, "/etc/ssl/certs/ca-certificates.crt", "bundle");
    place(root, "/etc/ssl/certs/5db8f40a.0", "root");
    const SystemTrustSources s = find_system_trust(r, nullptr, nullptr);
    CHECK(s.dirs == std::vector<std::string>{r + "/etc/ssl/certs"});
    CHECK(s.file.empty());
  }
  SECTION("Fedora/RHEL: /etc/pki/tls/certs has no hash links, its bundle is used") {
    place(root, "/etc/pki/tls/certs/ca-bundle.crt", "bundle");
    place(root, "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "bundle");
    const SystemTrustSources s = find_system_trust(r, nullptr, nullptr);
    CHECK(s.dirs.empty());
    CHECK(s.file == r + "/etc/pki/tls/certs/ca-bundle.crt");  // first found wins
  }
  SECTION("RHEL 7+ without the compatibility link") {
    place(root, "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "bundle");
    CHECK(find_system_trust(r, nullptr, nullptr).file ==
          r + "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem");
  }
  SECTION("openSUSE") {
    place(root, "/etc/ssl/ca-bundle.pem", "bundle");
    CHECK(find_system_trust(r, nullptr, nullptr).file == r + "/etc/ssl/ca-bundle.pem");
  }
  SECTION("Alpine: cert.pem, and a certs directory without hash links") {
    place(root, "/etc/ssl/cert.pem", "bundle");
    place(root, "/etc/ssl/certs/README", "not a certificate");
    const SystemTrustSources s = find_system_trust(r, nullptr, nullptr);
    CHECK(s.dirs.empty());
    CHECK(s.file == r + "/etc/ssl/cert.pem");
  }
  SECTION("Android: the hashed cacerts directory") {
    place(root, "/system/etc/security/cacerts/a1b2c3d4.0", "root");
    CHECK(find_system_trust(r, nullptr, nullptr).dirs ==
          std::vector<std::string>{r + "/system/etc/security/cacerts"});
  }
  SECTION("a directory reached twice through a symlink is used once") {
    place(root, "/etc/ssl/certs/5db8f40a.0", "root");
    fs::create_directories(root.path() / "etc/pki/tls");
    fs::create_directory_symlink(root.path() / "etc/ssl/certs", root.path() / "etc/pki/tls/certs");
    CHECK(find_system_trust(r, nullptr, nullptr).dirs ==
          std::vector<std::string>{r + "/etc/ssl/certs"});
  }
  SECTION("a bundle that is a directory is passed over") {
    fs::create_directories(root.path() / "etc/ssl/certs/ca-certificates.crt");
    place(root, "/etc/ssl/cert.pem", "bundle");
    CHECK(find_system_trust(r, nullptr, nullptr).file == r + "/etc/ssl/cert.pem");
  }
}

TEST_CASE("system trust: SSL_CERT_FILE and SSL_CERT_DIR override the search list", "[verify]") {
  const TempDir root;
  const std::string r = root_of(root);
  place(root, "/etc/ssl/certs/ca-certificates.crt", "bundle");
  place(root, "/etc/ssl/certs/5db8f40a.0", "root");
  const TempDir mine;
  const std::string file = place(mine, "/my/bundle.pem", "bundle");
  place(mine, "/a/0123abcd.0", "root");
  place(mine, "/b/README", "no hash links");
  place(mine, "/c/89abcdef.1", "root");
  const std::string m = root_of(mine);
  SECTION("SSL_CERT_FILE is used next to the hashed directory") {
    const SystemTrustSources s = find_system_trust(r, file.c_str(), nullptr);
    CHECK(s.dirs == std::vector<std::string>{r + "/etc/ssl/certs"});
    CHECK(s.file == file);
  }
  SECTION("SSL_CERT_FILE naming nothing gives no bundle, not the well-known one") {
    const std::string missing = m + "/missing.pem";
    const std::string empty = m + "/empty";
    fs::create_directories(empty);
    const SystemTrustSources s = find_system_trust(r, missing.c_str(), empty.c_str());
    CHECK(s.dirs.empty());
    CHECK(s.file.empty());
  }
  SECTION("SSL_CERT_DIR is a colon-separated list; entries without hash links are skipped") {
    const std::string list = m + "/a:" + m + "/b::" + m + "/missing:" + m + "/c";
    const SystemTrustSources s = find_system_trust(r, nullptr, list.c_str());
    CHECK(s.dirs == std::vector<std::string>{m + "/a", m + "/c"});
    CHECK(s.file.empty());  // a directory answered, so the bundle list is not searched
  }
  SECTION("SSL_CERT_DIR without a usable directory falls back to the bundle list") {
    const std::string list = m + "/b";
    const SystemTrustSources s = find_system_trust(r, nullptr, list.c_str());
    CHECK(s.dirs.empty());
    CHECK(s.file == r + "/etc/ssl/certs/ca-certificates.crt");
  }
  SECTION("empty variables count as unset") {
    const SystemTrustSources s = find_system_trust(r, "", "");
    CHECK(s.dirs == std::vector<std::string>{r + "/etc/ssl/certs"});
    CHECK(s.file.empty());
  }
}

TEST_CASE("system trust: a root found through SSL_CERT_DIR's list verifies a chain", "[verify]") {
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const TempDir tmp;
  const std::string hashed = tmp / "hashed";
  fs::create_directories(hashed);
  fs::create_directories(tmp / "empty");
  write_file(fs::path(hashed) / "root.pem", read_file(pki("root.pem")));
  const auto rehash = getcert::test::run({GETCERT_TEST_OPENSSL, "rehash", hashed});
  REQUIRE(rehash.exit_code == 0);
  const ScopedEnv dir("SSL_CERT_DIR", tmp / "empty" + ":" + hashed);
  const ScopedEnv file("SSL_CERT_FILE", tmp / "no-such-bundle.pem");
  auto certs = getcert::parse_certificates_pem(read_file(pki("ecdsa-chain.pem")));
  REQUIRE(certs.has_value());
  getcert::VerifyOptions o;
  o.name = "ecdsa.test";
  o.fetch_missing = false;
  const auto v = getcert::verify_chain(*certs, o);
  REQUIRE(v.has_value());
  CHECK(v->trust_store == "system (" + hashed + ")");
  CHECK(v->trusted);
}
