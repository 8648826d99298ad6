#pragma once

// Path building, the one path builder of every profile but openssl: enumerate the paths from the
// leaf to a trust anchor, depth first, as rustls-webpki (build_chain_inner) and Go's crypto/x509
// (buildChains) do, and hand each complete one to a judge until one is accepted. Issuers come
// from the certificates the peer sent, those downloaded through AIA, and the trust store.
// Each candidate issuer is first held to the checks that need no signature (validity, CA status,
// keyUsage, EKU, pathLen, the name constraints it puts on the path below): one that fails them
// is pruned, and its signature never checked, while another candidate may still lead to a valid
// path. Only when none does is the walk repeated with the pruned candidates, so the report can
// show the path that came closest and every reason against it. The work is bounded by a budget
// modelled on rustls-webpki's Budget (RUSTSEC-2023-0053): signature checks and name-constraint
// comparisons are counted before they are made, so a hostile set of certificates ends with a
// clear verdict instead of a hang.

#include <openssl/x509.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "internal/ossl.hpp"
#include "verify/rules.hpp"

namespace getcert::detail {

// Which bound stopped a search.
enum class BudgetLimit { none, signatures, build_calls, candidate_paths, name_constraints };

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
  std::int64_t now = 0;                 // candidates must be valid at this time
  Purpose purpose = Purpose::server;    // an issuer's EKU must allow it
  std::size_t max_intermediates = 100;  // the walk's bound (the rules judge --max-depth)
  // Name-constraint comparisons, shared with the rules (RuleBudget): the walk makes RFC 5280's.
  RuleBudget* constraint_budget = nullptr;
};

// `final_rejection`: rejected for a reason every other path shares (the leaf's own), so the
// search ends.
enum class Judgement { accepted, rejected, final_rejection, already_judged };

// Told each complete path (leaf first, anchor last); `accepted` stops the search.
using PathJudge = std::function<Judgement(const std::vector<X509*>& path)>;

enum class SearchEnd { accepted, exhausted, no_more_paths, stopped };

struct SearchOutcome {
  SearchEnd end = SearchEnd::no_more_paths;
  // The longest path the walk built that reached no anchor (leaf first): what the report shows
  // when no complete path exists. Borrowed like the judge's paths.
  std::vector<X509*> dead_end;
  std::size_t pruned = 0;  // candidates set aside by the checks before the signature
  // An issuer was left out because the path would pass max_intermediates: with no other path,
  // the chain is too long.
  bool too_deep = false;
};

// Walks the paths from `leaf`, best candidates first: issuers whose key identifier matches the
// child's authority key identifier, then those valid now, then anchors before intermediates
// (shorter paths), then the newest. A certificate never appears twice in a path (nor another
// with the same subject and key), so cycles end. A leaf the store holds is a path by itself.
// An anchor ends a path, except that an anchor which is not self-signed (an intermediate named
// in --ca-file) is first continued to a self-signed root the store holds, if one signs it. The
// store certificates it looks up are kept in `keep` so the judge's paths stay valid afterwards.
SearchOutcome search_paths(X509* leaf, const IssuerSources& sources, PathBudget& budget,
                           const PathJudge& judge, std::vector<internal::X509Ptr>& keep);

}  // namespace getcert::detail
