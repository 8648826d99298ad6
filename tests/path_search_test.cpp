// Path building: verify_chain walks the paths (issuers from the peer, the trust store and AIA),
// pruning candidates that fail the checks made before a signature, and reports the one it chose
// and the ones it judged and rejected; hostile sets of certificates (hundreds of same-name issuers,
// cycles, cross-sign meshes) end with a clear verdict within the work budget. Every certificate is
// made at test time (support/cert_builder.hpp): P-256 keys, so hundreds of them cost milliseconds.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/verify.hpp"
#include "internal/owners.hpp"
#include "support/cert_builder.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/verdicts.hpp"

using getcert::Certificate;
using getcert::ProblemCode;
using getcert::Verification;
using getcert::VerifyOptions;
using getcert::internal::EvpPkeyPtr;
using getcert::internal::X509Ptr;
using getcert::test::cert_spec;
using getcert::test::CertSpec;
using getcert::test::codes;
using getcert::test::has_code;
using getcert::test::kDay;
using getcert::test::kNow;
using getcert::test::make_cert;
using getcert::test::model;
using getcert::test::new_key;
using getcert::test::TempDir;
using Json = nlohmann::json;

namespace {

// A self-signed root and a server leaf for host.test issued under the CN `issuer` by `signer`.
struct Pki {
  EvpPkeyPtr root_key = new_key();
  X509Ptr root = make_cert(cert_spec("Path Root", "Path Root", root_key.get(), root_key.get()));
  EvpPkeyPtr leaf_key = new_key();
};

X509Ptr leaf_under(const Pki& pki, const std::string& issuer, EVP_PKEY* signer) {
  CertSpec s = cert_spec("host.test", issuer, pki.leaf_key.get(), signer);
  s.ca = false;
  s.san = "DNS:host.test";
  return make_cert(s);
}

X509Ptr intermediate(const std::string& subject, EVP_PKEY* key, const std::string& issuer,
                     EVP_PKEY* signer, const std::string& name_constraints = "") {
  CertSpec s = cert_spec(subject, issuer, key, signer);
  s.name_constraints = name_constraints;
  return make_cert(s);
}

// Two copies of the leaf's issuer "Path CA" with the same name, key and issuer: `bad`, a
// re-issue constrained away from the leaf's name, and `good`.
struct ReissuedCa {
  TempDir dir;
  Pki pki;
  EvpPkeyPtr int_key = new_key();
  X509Ptr bad = intermediate("Path CA", int_key.get(), "Path Root", pki.root_key.get(),
                             "permitted;DNS:other.test");
  X509Ptr good = intermediate("Path CA", int_key.get(), "Path Root", pki.root_key.get());
  X509Ptr leaf = leaf_under(pki, "Path CA", int_key.get());
};

std::string write_store(const TempDir& dir, const std::string& file,
                        const std::vector<const X509Ptr*>& certs) {
  std::vector<Certificate> models;
  models.reserve(certs.size());
  for (const auto* c : certs) models.push_back(model(*c));
  getcert::test::write_file(dir / file, getcert::to_pem(models));
  return dir / file;
}

VerifyOptions options_for(const std::string& ca_file) {
  VerifyOptions o;
  o.trust.ca_file = ca_file;
  o.name = "host.test";
  o.fetch_missing = false;
  return o;
}

Verification verify(const std::vector<const X509Ptr*>& presented, const VerifyOptions& o) {
  std::vector<Certificate> chain;
  chain.reserve(presented.size());
  for (const auto* c : presented) chain.push_back(model(*c));
  const auto started = std::chrono::steady_clock::now();
  auto v = getcert::verify_chain(chain, o);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  REQUIRE(v);
  // Printed, not asserted: the budget counters below are what bounds the work.
  WARN("verify_chain took " << took.count() << " ms; path search: " << v->path_search.build_calls
                            << " build calls, " << v->path_search.signature_checks
                            << " signature checks, " << v->path_search.candidate_paths
                            << " candidate paths");
  return *v;
}

}  // namespace

TEST_CASE_METHOD(
    ReissuedCa,
    "an intermediate that breaks a name constraint gives way to a good one of the same key",
    "[verify]") {
  const auto o = options_for(write_store(dir, "root.pem", {&pki.root}));

  SECTION("with the good one also sent, the chosen path runs through it") {
    // OpenSSL takes the first issuer that is valid now, the constrained one. The walk holds
    // each candidate to its name constraints before its signature: the constrained copy is
    // pruned, never judged, and its signature never checked.
    const auto v = verify({&leaf, &bad, &good}, o);
    INFO(codes(v));
    CHECK(v.ok);
    CHECK(v.path_search.ran);
    REQUIRE(v.verified_chain.size() == 3);
    CHECK(v.verified_chain[1].sha256 == model(good).sha256);
    CHECK(v.rejected_paths.empty());
    CHECK(v.path_search.pruned_candidates == 1);
    CHECK(v.path_search.candidate_paths == 1);
    CHECK(v.path_search.signature_checks == 2);  // leaf by good, good by the root
  }
  SECTION("with the constrained one alone, the report shows its path and the reason") {
    const auto v = verify({&leaf, &bad}, o);
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK(v.path_search.pruned_candidates == 1);
    CHECK(v.path_search.candidate_paths == 1);  // judged in the second walk, for the report
    REQUIRE(v.rejected_paths.size() == 1);
    const auto& rejected = v.rejected_paths.front();
    REQUIRE(rejected.chain.size() == 3);
    CHECK(rejected.chain[1].sha256 == model(bad).sha256);
    CHECK(has_code(rejected.problems, ProblemCode::name_constraint_violation));
  }
  SECTION("under the openssl profile, OpenSSL's first path is the answer: no search") {
    auto first_only = o;
    first_only.profile = getcert::Profile::openssl;
    const auto v = verify({&leaf, &bad, &good}, first_only);
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.path_search.ran);
    CHECK(has_code(v.errors, ProblemCode::name_constraint_violation));
  }
  SECTION("without it, invalid, for the constraint") {
    const auto v = verify({&leaf, &bad}, o);
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK(v.path_search.ran);
    CHECK_FALSE(v.path_search.budget_exhausted);
    CHECK(has_code(v.errors, ProblemCode::name_constraint_violation));
    CHECK(v.verified_chain.empty());
  }
}

TEST_CASE("an expired copy of the intermediate in the trust store gives way to the peer's good one",
          "[verify]") {
  TempDir dir;
  Pki pki;
  const EvpPkeyPtr int_key = new_key();
  CertSpec old = cert_spec("Path CA", "Path Root", int_key.get(), pki.root_key.get());
  old.not_before = kNow - 400 * kDay;
  old.not_after = kNow - 10 * kDay;
  const X509Ptr expired = make_cert(old);
  const X509Ptr good = intermediate("Path CA", int_key.get(), "Path Root", pki.root_key.get());
  const X509Ptr leaf = leaf_under(pki, "Path CA", int_key.get());

  // OpenSSL looks in the trust store first and keeps the expired copy it finds there; the
  // walk tries issuers valid now first, so the expired copy costs no signature.
  const auto v =
      verify({&leaf, &good}, options_for(write_store(dir, "ca.pem", {&pki.root, &expired})));
  INFO(codes(v));
  CHECK(v.ok);
  REQUIRE(v.verified_chain.size() == 3);
  CHECK(v.verified_chain[1].sha256 == model(good).sha256);
  CHECK(v.verified_chain[2].sha256 == model(pki.root).sha256);
  CHECK(v.rejected_paths.empty());
  CHECK(v.path_search.signature_checks == 2);

  SECTION("without the good one, invalid: expired, on the path through the expired copy") {
    const auto alone =
        verify({&leaf}, options_for(write_store(dir, "ca2.pem", {&pki.root, &expired})));
    INFO(codes(alone));
    CHECK_FALSE(alone.ok);
    CHECK(has_code(alone.errors, ProblemCode::expired));
    // Through the expired copy to the root, then the copy itself as the anchor --ca-file makes
    // it: both judged, both expired.
    REQUIRE_FALSE(alone.rejected_paths.empty());
    for (const auto& r : alone.rejected_paths) {
      CHECK(r.chain[1].sha256 == model(expired).sha256);
      CHECK(has_code(r.problems, ProblemCode::expired));
    }
  }
}

TEST_CASE_METHOD(ReissuedCa,
                 "a peer's bad intermediate with a good copy in the trust store: the store's copy",
                 "[verify]") {
  // The walk looks in the trust store first, so its first path already runs through the good
  // copy: the peer's copy (same name and key) counts as sent, and is never tried.
  const auto v = verify({&leaf, &bad}, options_for(write_store(dir, "ca.pem", {&pki.root, &good})));
  INFO(codes(v));
  CHECK(v.ok);
  CHECK(v.path_search.candidate_paths == 1);
  CHECK(v.rejected_paths.empty());
  REQUIRE(v.verified_chain.size() == 3);
  CHECK(v.verified_chain[1].sha256 == model(good).sha256);
}

TEST_CASE("hundreds of intermediates with the leaf's issuer name: the signature budget ends it",
          "[verify]") {
  TempDir dir;
  Pki pki;
  std::vector<EvpPkeyPtr> keys;
  std::vector<X509Ptr> decoys;
  for (int i = 0; i < 300; ++i) {
    keys.push_back(new_key());
    decoys.push_back(
        intermediate("Same Name CA", keys.back().get(), "Path Root", pki.root_key.get()));
  }
  // Signed by a key none of them holds: every one is a candidate by name, and only a
  // signature check tells it is not the issuer.
  const EvpPkeyPtr other = new_key();
  CertSpec s = cert_spec("host.test", "Same Name CA", pki.leaf_key.get(), pki.leaf_key.get());
  s.ca = false;
  s.san = "DNS:host.test";
  s.signer = other.get();
  const X509Ptr leaf = make_cert(s);
  std::vector<const X509Ptr*> presented{&leaf};
  for (const auto& d : decoys) presented.push_back(&d);

  const auto v = verify(presented, options_for(write_store(dir, "root.pem", {&pki.root})));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(v.path_search.ran);
  CHECK(v.path_search.budget_exhausted);
  CHECK(v.path_search.signature_checks == 100);
  CHECK(v.path_search.candidate_paths == 0);
  CHECK(has_code(v.errors, ProblemCode::budget_exhausted));
}

TEST_CASE("a cycle (A signs B, B signs A) ends at once with the missing issuer", "[verify]") {
  TempDir dir;
  Pki pki;
  const EvpPkeyPtr a_key = new_key();
  const EvpPkeyPtr b_key = new_key();
  const X509Ptr a = intermediate("Loop A", a_key.get(), "Loop B", b_key.get());
  const X509Ptr b = intermediate("Loop B", b_key.get(), "Loop A", a_key.get());
  const X509Ptr leaf = leaf_under(pki, "Loop A", a_key.get());

  const auto v = verify({&leaf, &a, &b}, options_for(write_store(dir, "root.pem", {&pki.root})));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(v.path_search.ran);
  CHECK_FALSE(v.path_search.budget_exhausted);
  CHECK(v.path_search.candidate_paths == 0);
  CHECK(v.path_search.signature_checks <= 4);
  CHECK(v.rejected_paths.empty());  // no path reaches an anchor
  CHECK_FALSE(v.errors.empty());
}

TEST_CASE("a cross-sign mesh: every path judged is rejected with its reason, within the budget",
          "[verify]") {
  TempDir dir;
  Pki pki;
  constexpr std::size_t kWidth = 4;
  std::vector<EvpPkeyPtr> upper_keys;
  std::vector<EvpPkeyPtr> lower_keys;
  std::vector<X509Ptr> certs;
  for (std::size_t i = 0; i < kWidth; ++i) {
    upper_keys.push_back(new_key());
    lower_keys.push_back(new_key());
  }
  for (std::size_t i = 0; i < kWidth; ++i) {
    certs.push_back(
        intermediate("Mesh Upper", upper_keys[i].get(), "Path Root", pki.root_key.get()));
    // Every lower CA is cross-signed by every upper one, and each copy is constrained away from
    // the leaf's name: every path fails the same way.
    for (std::size_t j = 0; j < kWidth; ++j) {
      certs.push_back(intermediate("Mesh Lower", lower_keys[i].get(), "Mesh Upper",
                                   upper_keys[j].get(), "permitted;DNS:other.test"));
    }
  }
  const X509Ptr leaf = leaf_under(pki, "Mesh Lower", lower_keys[0].get());
  std::vector<const X509Ptr*> presented{&leaf};
  for (const auto& c : certs) presented.push_back(&c);

  const auto v = verify(presented, options_for(write_store(dir, "root.pem", {&pki.root})));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(has_code(v.errors, ProblemCode::name_constraint_violation));
  // The leaf's key identifier picks the four copies of its issuer; each has one upper issuer.
  // Each of the 16 "Mesh Lower" copies fails its constraints before its signature is checked
  // (pruned), so the second walk, for the report, judges the four paths.
  CHECK(v.path_search.pruned_candidates == kWidth * kWidth);
  CHECK(v.path_search.candidate_paths == kWidth);
  REQUIRE(v.rejected_paths.size() == kWidth);
  for (const auto& r : v.rejected_paths) {
    CHECK(r.chain.size() == 4);
    CHECK(has_code(r.problems, ProblemCode::name_constraint_violation));
  }
}

TEST_CASE("a mesh of more failing paths than the budget judges ends at 16 candidate paths",
          "[verify]") {
  TempDir dir;
  Pki pki;
  constexpr std::size_t kWidth = 5;
  // The leaf's issuer exists in five copies (one key), each signed by another CA "Middle I",
  // and each of those in five re-issued copies under one upper CA: 25 complete paths, each
  // through a lower copy constrained away from the leaf's name. Names and key identifiers
  // single out the real issuers, so the signature checks go to the paths themselves.
  const EvpPkeyPtr lower_key = new_key();
  const EvpPkeyPtr upper_key = new_key();
  std::vector<EvpPkeyPtr> middle_keys;
  std::vector<X509Ptr> certs;
  certs.push_back(intermediate("Upper", upper_key.get(), "Path Root", pki.root_key.get()));
  for (std::size_t i = 0; i < kWidth; ++i) {
    middle_keys.push_back(new_key());
    const std::string middle = "Middle " + std::to_string(i);
    certs.push_back(intermediate("Lower", lower_key.get(), middle, middle_keys[i].get(),
                                 "permitted;DNS:other.test"));
    for (std::size_t j = 0; j < kWidth; ++j) {
      certs.push_back(intermediate(middle, middle_keys[i].get(), "Upper", upper_key.get()));
    }
  }
  const X509Ptr leaf = leaf_under(pki, "Lower", lower_key.get());
  std::vector<const X509Ptr*> presented{&leaf};
  for (const auto& c : certs) presented.push_back(&c);

  const auto v = verify(presented, options_for(write_store(dir, "root.pem", {&pki.root})));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(v.path_search.budget_exhausted);
  CHECK(v.path_search.signature_checks < 100);
  CHECK(v.path_search.candidate_paths == 16);
  CHECK(v.rejected_paths.size() == 16);
  CHECK(has_code(v.errors, ProblemCode::budget_exhausted));
  CHECK(has_code(v.errors, ProblemCode::name_constraint_violation));
}

TEST_CASE("a mesh that never reaches an anchor exhausts the signature budget", "[verify]") {
  TempDir dir;
  Pki pki;
  constexpr std::size_t kWidth = 4;
  constexpr std::size_t kLevels = 6;
  // Level k's CAs ("Level k", one key each) are cross-signed by every CA of level k+1; the top
  // level names an issuer nobody holds. 4^6 paths, none complete.
  std::vector<std::vector<EvpPkeyPtr>> keys(kLevels + 1);
  for (auto& level : keys) {
    for (std::size_t i = 0; i < kWidth; ++i) level.push_back(new_key());
  }
  std::vector<X509Ptr> certs;
  for (std::size_t k = 0; k < kLevels; ++k) {
    for (std::size_t i = 0; i < kWidth; ++i) {
      for (std::size_t j = 0; j < kWidth; ++j) {
        certs.push_back(intermediate("Level " + std::to_string(k), keys[k][i].get(),
                                     "Level " + std::to_string(k + 1), keys[k + 1][j].get()));
      }
    }
  }
  const X509Ptr leaf = leaf_under(pki, "Level 0", keys[0][0].get());
  std::vector<const X509Ptr*> presented{&leaf};
  for (const auto& c : certs) presented.push_back(&c);

  const auto v = verify(presented, options_for(write_store(dir, "root.pem", {&pki.root})));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(v.path_search.budget_exhausted);
  CHECK(v.path_search.signature_checks == 100);
  CHECK(has_code(v.errors, ProblemCode::budget_exhausted));
}

TEST_CASE("a chain deeper than max_depth is refused, whatever other paths exist", "[verify]") {
  TempDir dir;
  Pki pki;
  constexpr int kDepth = 5;
  std::vector<EvpPkeyPtr> keys;
  std::vector<X509Ptr> chain;
  std::string issuer = "Path Root";
  EVP_PKEY* signer = pki.root_key.get();
  for (int i = 0; i < kDepth; ++i) {
    keys.push_back(new_key());
    const std::string name = "Deep CA " + std::to_string(i);
    chain.push_back(intermediate(name, keys.back().get(), issuer, signer));
    issuer = name;
    signer = keys.back().get();
  }
  const X509Ptr leaf = leaf_under(pki, issuer, signer);
  std::vector<const X509Ptr*> presented{&leaf};
  // Sent in order: the leaf's issuer first, up to the root's child.
  for (std::size_t i = chain.size(); i > 0; --i) presented.push_back(&chain[i - 1]);
  auto o = options_for(write_store(dir, "root.pem", {&pki.root}));

  o.max_depth = kDepth - 2;
  const auto deep = verify(presented, o);
  INFO(codes(deep));
  CHECK_FALSE(deep.ok);
  CHECK(has_code(deep.errors, ProblemCode::chain_too_long));
  CHECK_FALSE(deep.profile_ok);  // a path exists; the depth rule refuses it

  o.max_depth = kDepth;
  CHECK(verify(presented, o).ok);
}

TEST_CASE("thousands of name constraints over hundreds of SANs: within the budget, or refused",
          "[verify]") {
  TempDir dir;
  Pki pki;
  const auto o = options_for(write_store(dir, "root.pem", {&pki.root}));
  // A leaf with 100 DNS SANs and a CN: 101 names for each subtree to be compared with.
  std::string sans = "DNS:host.test";
  for (int i = 0; i < 99; ++i) sans += ",DNS:h" + std::to_string(i) + ".host.test";
  auto judge = [&](int subtrees) {
    std::string nc;
    for (int i = 0; i < subtrees - 1; ++i) nc += "permitted;DNS:n" + std::to_string(i) + ".test,";
    nc += "permitted;DNS:host.test";
    const EvpPkeyPtr ca_key = new_key();
    const X509Ptr ca = intermediate("Wide CA", ca_key.get(), "Path Root", pki.root_key.get(), nc);
    CertSpec s = cert_spec("host.test", "Wide CA", pki.leaf_key.get(), ca_key.get());
    s.ca = false;
    s.san = sans;
    const X509Ptr leaf = make_cert(s);
    return verify({&leaf, &ca}, o);
  };
  SECTION("2,000 subtrees: 202,000 comparisons, under rustls-webpki's 250,000") {
    const auto v = judge(2000);
    INFO(codes(v));
    CHECK(v.ok);
  }
  SECTION("3,000 subtrees: 303,000 comparisons, refused with budget_exhausted") {
    const auto v = judge(3000);
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    REQUIRE(has_code(v.errors, ProblemCode::budget_exhausted));
    const auto e = std::find_if(v.errors.begin(), v.errors.end(), [](const auto& p) {
      return p.code == ProblemCode::budget_exhausted;
    });
    CHECK_THAT(e->reason, Catch::Matchers::Contains("250,000 name-constraint comparisons"));
  }
}

TEST_CASE("a path that verifies at once costs one judged path and a signature per link",
          "[verify]") {
  TempDir dir;
  Pki pki;
  const EvpPkeyPtr int_key = new_key();
  const X509Ptr good = intermediate("Path CA", int_key.get(), "Path Root", pki.root_key.get());
  const X509Ptr leaf = leaf_under(pki, "Path CA", int_key.get());
  const auto v = verify({&leaf, &good}, options_for(write_store(dir, "root.pem", {&pki.root})));
  CHECK(v.ok);
  CHECK(v.path_search.ran);
  CHECK(v.path_search.candidate_paths == 1);
  CHECK(v.path_search.signature_checks == 2);
  CHECK(v.path_search.pruned_candidates == 0);
  CHECK(v.path_search.build_calls <= 6);
  CHECK(v.rejected_paths.empty());

  SECTION("under the openssl profile OpenSSL builds the path: getcert's walk does not run") {
    auto o = options_for(write_store(dir, "root2.pem", {&pki.root}));
    o.profile = getcert::Profile::openssl;
    const auto w = verify({&leaf, &good}, o);
    CHECK(w.ok);
    CHECK_FALSE(w.path_search.ran);
    CHECK(w.path_search.build_calls == 0);
  }
}

TEST_CASE("getcert show: -o json and -v list the rejected path and why", "[cli]") {
  // Two copies of "Path CA" (one key) that pass every check made before a signature: the first
  // sent has a non-critical nameConstraints extension, which the rfc5280 profile refuses once
  // the path is judged, so that path is rejected and the second copy's chosen.
  TempDir dir;
  Pki pki;
  const EvpPkeyPtr int_key = new_key();
  CertSpec lax = cert_spec("Path CA", "Path Root", int_key.get(), pki.root_key.get());
  lax.name_constraints = "permitted;DNS:host.test";
  lax.name_constraints_critical = false;
  const X509Ptr bad = make_cert(lax);
  const X509Ptr good = intermediate("Path CA", int_key.get(), "Path Root", pki.root_key.get());
  const X509Ptr leaf = leaf_under(pki, "Path CA", int_key.get());
  const std::string root = write_store(dir, "root.pem", {&pki.root});
  const std::string chain = write_store(dir, "chain.pem", {&leaf, &bad, &good});

  const auto json =
      getcert::test::run_getcert({"show", chain, "--verify", "--ca-file", root, "--host",
                                  "host.test", "--profile", "rfc5280", "-o", "json"});
  INFO(json.err);
  REQUIRE(json.exit_code == 0);
  const Json doc = Json::parse(json.out);
  const Json& verification = doc.at("verification");
  CHECK(verification.at("verdict") == "valid");
  CHECK(verification.at("path_search").at("ran") == true);
  REQUIRE(verification.at("rejected_paths").size() == 1);
  const Json& rejected = verification.at("rejected_paths").at(0);
  CHECK(rejected.at("chain").at(1).at("sha256") == model(bad).sha256);
  CHECK(rejected.at("problems").at(0).at("code") == "name_constraints_not_critical");
  CHECK(doc.at("verified_chain").at(1).at("sha256") == model(good).sha256);

  const auto verbose =
      getcert::test::run_getcert({"-v", "show", chain, "--verify", "--ca-file", root, "--host",
                                  "host.test", "--profile", "rfc5280", "-o", "text"});
  REQUIRE(verbose.exit_code == 0);
  CHECK_THAT(verbose.out + verbose.err,
             Catch::Matchers::Contains("rejected path") &&
                 Catch::Matchers::Contains("name_constraints_not_critical"));
}
