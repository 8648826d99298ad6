// AnchorWatcher: the trust anchor of a getcert fetch, kept in a private file that getcert's
// verification reads, and fetched again (bounded) when a handshake's chain no longer reaches it.

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string_view>
#include <utility>

#include "getcert/grpc_reloading.hpp"
#include "getcert/tls_material.hpp"
#include "internal/try.hpp"
#include "peer_verifier.hpp"
#include "private_dir.hpp"

namespace getcert::grpc_tls {
namespace {

constexpr auto kMinRefetchInterval = std::chrono::milliseconds(1000);

constexpr std::string_view kPemName = "anchor.pem";

struct Established {
  std::string pem;
  Certificate anchor;
};

// One fetch of the endpoint, and the anchor of its verified chain.
Result<Established> fetch_anchor(const AnchorSource& source) {
  FetchOptions options = source.fetch;
  if (options.connect.alpn.empty()) options.connect.alpn = {"h2"};
  GETCERT_TRY_ASSIGN(auto fetched, fetch(detail::without_dns_scheme(source.endpoint), options));
  GETCERT_TRY_ASSIGN(auto pem, trust_anchor_pem(fetched));
  auto certs = parse_certificates_pem(pem);
  if (!certs || certs->empty()) {
    return fail(Errc::internal, "the anchor of " + source.endpoint + " is no certificate");
  }
  return Established{std::move(pem), std::move(certs->front())};
}

}  // namespace

struct AnchorWatcher::State {
  AnchorSource source;
  detail::PrivateDir dir;  // removed with the state
  std::string pem_path;    // dir/anchor.pem

  std::mutex fetch_mutex;  // one fetch at a time; guards last_fetch and wait
  std::chrono::steady_clock::time_point last_fetch;
  std::chrono::milliseconds wait{0};  // before the next fetch: doubles while nothing changes

  mutable std::mutex mutex;  // guards anchor, generation, fetches
  Certificate anchor;
  std::uint64_t generation = 0;
  std::uint64_t fetches = 0;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Temp file + rename: a verification that loads the trust store while it is replaced reads
  // the old anchor or the new one, never a part. The new inode is what tells getcert's trust
  // store cache to load it again.
  Result<void> write(const std::string& pem) const { return dir.replace(kPemName, pem); }

  // Fetches and, when the anchor is new, writes and adopts it. Called with fetch_mutex held.
  std::optional<ReloadEvent> fetch_once() {
    last_fetch = std::chrono::steady_clock::now();
    {
      const std::lock_guard<std::mutex> lock(mutex);
      ++fetches;
    }
    ReloadEvent event;
    event.path = source.endpoint;
    auto established = fetch_anchor(source);
    if (established) {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (generation > 0 && established->anchor.sha256 == anchor.sha256) {
          wait = std::min(wait * 2, source.max_refetch_interval);
          return std::nullopt;
        }
      }
      if (auto written = write(established->pem); !written) {
        established = tl::unexpected(std::move(written.error()));
      }
    }
    if (!established) {
      wait = std::min(wait * 2, source.max_refetch_interval);
      event.outcome = ReloadOutcome::rejected;
      event.error = std::move(established.error());
      const std::lock_guard<std::mutex> lock(mutex);
      event.generation = generation;
      return event;
    }
    wait = source.min_refetch_interval;
    const std::lock_guard<std::mutex> lock(mutex);
    anchor = established->anchor;
    event.generation = ++generation;
    event.outcome = ReloadOutcome::loaded;
    event.leaf = std::move(established->anchor);
    return event;
  }
};

Result<std::shared_ptr<AnchorWatcher>> AnchorWatcher::establish(AnchorSource source) {
  if (source.endpoint.empty()) return fail(Errc::invalid_argument, "no endpoint given");
  auto state = std::make_shared<State>();
  state->source = std::move(source);
  auto& bounds = state->source;
  bounds.min_refetch_interval = std::max(bounds.min_refetch_interval, kMinRefetchInterval);
  bounds.max_refetch_interval = std::max(bounds.max_refetch_interval, bounds.min_refetch_interval);
  state->wait = bounds.min_refetch_interval;
  auto dir = detail::PrivateDir::create(state->source.work_dir, "getcert-anchor");
  if (!dir) return tl::unexpected(std::move(dir.error()));
  state->dir = std::move(*dir);
  state->pem_path = state->dir.file(kPemName);
  const std::lock_guard<std::mutex> lock(state->fetch_mutex);
  auto first = state->fetch_once();
  if (first && first->outcome == ReloadOutcome::rejected) {
    return tl::unexpected(std::move(first->error));
  }
  return std::shared_ptr<AnchorWatcher>(new AnchorWatcher(std::move(state)));
}

AnchorWatcher::AnchorWatcher(std::shared_ptr<State> state) : state_(std::move(state)) {}

AnchorWatcher::~AnchorWatcher() = default;

void AnchorWatcher::refresh() {
  std::optional<ReloadEvent> event;
  {
    const std::lock_guard<std::mutex> lock(state_->fetch_mutex);
    if (std::chrono::steady_clock::now() - state_->last_fetch < state_->wait) {
      return;
    }
    event = state_->fetch_once();
  }
  if (event && state_->source.on_change) state_->source.on_change(*event);
}

Certificate AnchorWatcher::current() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->anchor;
}

std::uint64_t AnchorWatcher::generation() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->generation;
}

std::uint64_t AnchorWatcher::fetches() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->fetches;
}

std::string AnchorWatcher::pem_path() const { return state_->pem_path; }

}  // namespace getcert::grpc_tls
