#pragma once

// Path building: when OpenSSL's first path fails, enumerate the other paths from the leaf to a
// trust anchor, depth first, as Go's crypto/x509 (buildChains) and rustls-webpki
// (build_chain_inner) do, and hand each complete one to a judge until one is accepted. Issuers
// come from the certificates the peer sent, those downloaded through AIA, and the trust store.
// The work is bounded by a budget modelled on rustls-webpki's Budget (RUSTSEC-2023-0053), so a
// hostile set of certificates ends with a clear verdict instead of a hang.

#include <openssl/x509.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "internal/ossl.hpp"

namespace getcert::detail {

// Which bound stopped a search.
enum class BudgetLimit { none, signatures, build_calls, candidate_paths };

struct PathBudget {
  // 100 signature checks: rustls-webpki's and Go's (maxChainSignatureChecks) figure. A real PKI
  // needs a handful (one per link, a few links per cross-sign); a hundred same-name issuers
  // with different keys is an attack on the verifier, and each RSA check costs ~50 us.
  static constexpr std::size_t kSignatureChecks = 100;
  // 200,000 build calls: rustls-webpki's bound on recursion steps, which caps the walk over
  // issuers that never reach a signature check (cycles, names that repeat, depth cut-offs).
  static constexpr std::size_t kBuildCalls = 200000;
  // 16 candidate paths judged: each is a full OpenSSL verification plus the profile rules
  // (about a millisecond). Real cross-signed PKIs offer two to four paths; 16 keeps the worst
  // case in tens of milliseconds.
  static constexpr std::size_t kCandidatePaths = 16;

  std::size_t signatures_left = kSignatureChecks;
  std::size_t build_calls_left = kBuildCalls;
  std::size_t candidate_paths_left = kCandidatePaths;
  BudgetLimit exhausted = BudgetLimit::none;

  // Each takes one unit; false (and `exhausted` set) once none is left.
  bool take_signature() { return take(signatures_left, BudgetLimit::signatures); }
  bool take_build_call() { return take(build_calls_left, BudgetLimit::build_calls); }
  // A path is judged only while one is left; judged() then takes it (a path the judge had
  // already seen costs nothing).
  bool may_judge() {
    if (candidate_paths_left > 0) return true;
    exhausted = BudgetLimit::candidate_paths;
    return false;
  }
  void judged() {
    if (candidate_paths_left > 0) --candidate_paths_left;
  }

  std::size_t signatures_used() const { return kSignatureChecks - signatures_left; }
  std::size_t build_calls_used() const { return kBuildCalls - build_calls_left; }
  std::size_t candidate_paths_used() const { return kCandidatePaths - candidate_paths_left; }

 private:
  bool take(std::size_t& left, BudgetLimit which) {
    if (left == 0) {
      exhausted = which;
      return false;
    }
    --left;
    return true;
  }
};

struct IssuerSources {
  std::vector<X509*> untrusted;  // sent by the peer or downloaded through AIA (borrowed)
  X509_STORE* store = nullptr;   // the trust store
  // Every store certificate is an anchor (--ca-file, --ca-dir); otherwise only self-signed
  // ones are, and the others are intermediates the store happens to hold.
  bool explicit_anchors = false;
  std::int64_t now = 0;                 // prefers issuers valid at this time
  std::size_t max_intermediates = 100;  // VerifyOptions::max_depth, else OpenSSL's limit
};

enum class Judgement { accepted, rejected, already_judged };

// Told each complete path (leaf first, anchor last); `accepted` stops the search.
using PathJudge = std::function<Judgement(const std::vector<X509*>& path)>;

enum class SearchEnd { accepted, exhausted, no_more_paths };

// Walks the paths from `leaf`, best candidates first: issuers whose key identifier matches the
// child's authority key identifier, then those valid now, then anchors before intermediates
// (shorter paths), then the newest. A certificate never appears twice in a path (nor another
// with the same subject and key), so cycles end. The store certificates it looks up are kept
// in `keep` so the judge's paths stay valid afterwards.
SearchEnd search_paths(X509* leaf, const IssuerSources& sources, PathBudget& budget,
                       const PathJudge& judge, std::vector<internal::X509Ptr>& keep);

}  // namespace getcert::detail
