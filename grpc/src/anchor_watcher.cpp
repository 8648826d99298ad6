// AnchorWatcher: the trust anchor of a getcert fetch, kept in a private file that getcert's
// verification reads, and fetched again (bounded) when a handshake's chain no longer reaches it.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>

#include "getcert/grpc_reloading.hpp"
#include "getcert/tls_material.hpp"
#include "internal/try.hpp"
#include "peer_verifier.hpp"

namespace getcert::grpc_tls {
namespace {

constexpr auto kMinRefetchInterval = std::chrono::milliseconds(1000);

std::string private_parent(const std::string& configured) {
  if (!configured.empty()) return configured;
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

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
  std::string dir;       // private 0700 directory
  std::string pem_path;  // dir/anchor.pem

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
  ~State() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }

  // Temp file + rename: a verification that loads the trust store while it is replaced reads
  // the old anchor or the new one, never a part. The new inode is what tells getcert's trust
  // store cache to load it again.
  Result<void> write(const std::string& pem) const {
    std::string tmp = dir + "/.anchor.pem.XXXXXX";
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) {
      return fail(Errc::io_error, "cannot create a file in " + dir + ": " + std::strerror(errno));
    }
    bool ok = ::fchmod(fd, 0600) == 0;
    std::size_t done = 0;
    while (ok && done < pem.size()) {
      const ssize_t wrote = ::write(fd, pem.data() + done, pem.size() - done);
      if (wrote < 0 && errno == EINTR) continue;
      ok = wrote > 0;
      if (ok) done += static_cast<std::size_t>(wrote);
    }
    ok = ok && ::fsync(fd) == 0;
    const int err = errno;
    ::close(fd);
    if (ok && ::rename(tmp.c_str(), pem_path.c_str()) == 0) return {};
    const int rename_err = ok ? errno : err;
    ::unlink(tmp.c_str());
    return fail(Errc::io_error, "cannot write " + pem_path + ": " + std::strerror(rename_err));
  }

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
  const std::string parent = private_parent(state->source.work_dir);
  std::string dir = parent + "/getcert-anchor-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    return fail(Errc::io_error,
                "cannot create a private directory in " + parent + ": " + std::strerror(errno));
  }
  state->dir = dir;  // mkdtemp made it 0700; removed with the state
  state->pem_path = dir + "/anchor.pem";
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
