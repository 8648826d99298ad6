// IdentityWatcher: inotify (plus a bounded poll) on the key store's directory; each new version
// of the file is decoded and checked as a key + certificate pair before gRPC's copy is
// replaced, so gRPC never sees a half-updated or mismatched identity.

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>

#include "getcert/grpc_reloading.hpp"
#include "keystore_identity.hpp"
#include "private_dir.hpp"

namespace getcert::grpc_tls {

std::string_view to_string(ReloadOutcome outcome) noexcept {
  switch (outcome) {
    case ReloadOutcome::loaded:
      return "loaded";
    case ReloadOutcome::rejected:
      return "rejected";
  }
  return "rejected";
}

namespace {

// A file being replaced while read is read again after this pause, this many times, before
// the watcher waits for the next change (a writer that never settles is not worth spinning on).
constexpr auto kSettlePause = std::chrono::milliseconds(20);
constexpr int kSettleAttempts = 5;
constexpr auto kMinPollInterval = std::chrono::milliseconds(50);

constexpr std::string_view kPemName = "identity.pem";

bool same_secret(const std::optional<Secret>& a, const std::optional<Secret>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || a->view() == b->view();
}

}  // namespace

struct IdentityWatcher::State {
  KeystoreSource source;
  WatchOptions options;
  detail::PrivateDir dir;  // removed with the state, after the provider that reads it
  std::string pem_path;    // dir/identity.pem, what gRPC reads
  std::shared_ptr<::grpc::experimental::CertificateProviderInterface> provider;

  mutable std::mutex mutex;  // guards leaf and generation
  Certificate leaf;
  std::uint64_t generation = 0;

  // Watcher thread only: the version last judged, to report each version once.
  std::optional<detail::FileStamp> judged_stamp;  // nullopt: nothing judged yet
  detail::FileStamp judged_password_stamp;
  std::vector<std::uint8_t> judged_bytes;
  std::optional<Secret> judged_password;
  std::optional<Secret> judged_key_password;
  std::int64_t written_mtime = 0;  // seconds, of gRPC's copy

  int inotify_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::thread thread;

  ~State() {
    if (inotify_fd >= 0) ::close(inotify_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  std::string password_file() const { return source.password.file; }

  // gRPC's FileWatcherCertificateProvider compares modification times in whole seconds before
  // and after reading, so each version gets a later second than the one before: a read that
  // straddles a replacement is then always seen and retried by gRPC.
  Result<void> write_for_grpc(const SecureString& pem) {
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    written_mtime = std::max(now, written_mtime + 1);
    return dir.replace(kPemName, {pem.data(), pem.size()}, written_mtime);
  }

  void publish(detail::LoadedIdentity loaded) {
    const std::lock_guard<std::mutex> lock(mutex);
    leaf = std::move(loaded.leaf);
    ++generation;
  }

  // Judges the current version of the key store if it is a new one. Returns the event to
  // report (nullopt: nothing new, or a version still being written).
  std::optional<ReloadEvent> check() {
    const detail::FileStamp stamp = detail::stamp_of(source.path);
    const detail::FileStamp password_stamp = detail::stamp_of(password_file());
    if (judged_stamp && stamp == *judged_stamp && password_stamp == judged_password_stamp) {
      return std::nullopt;
    }
    ReloadEvent event;
    event.path = source.path;
    event.outcome = ReloadOutcome::rejected;

    std::optional<detail::SettledRead> read;
    for (int attempt = 0; attempt < kSettleAttempts && !stopping; ++attempt) {
      auto got = detail::read_settled(source.path);
      if (!got) {
        // An unreadable or missing file is a version too: reported once, until it changes.
        judged_stamp = stamp;
        judged_password_stamp = password_stamp;
        judged_bytes.clear();
        event.error = got.error();
        const std::lock_guard<std::mutex> lock(mutex);
        event.generation = generation;
        return event;
      }
      if (!got->changed_during_read) {
        read = std::move(*got);
        break;
      }
      std::this_thread::sleep_for(kSettlePause);
    }
    if (!read) return std::nullopt;  // still changing: the next wake-up reads it again

    auto password = detail::read_password(source.password);
    std::optional<Secret> key_password;
    Result<void> passwords_ok;
    if (!password) passwords_ok = tl::unexpected(password.error());
    if (passwords_ok && source.key_password) {
      auto got = detail::read_password(*source.key_password);
      if (got) {
        key_password = std::move(*got);
      } else {
        passwords_ok = tl::unexpected(got.error());
      }
    }
    const std::optional<Secret> password_value = password ? *password : std::optional<Secret>();
    const bool same_version = read->bytes == judged_bytes &&
                              same_secret(password_value, judged_password) &&
                              same_secret(key_password, judged_key_password);
    judged_stamp = read->stamp;
    judged_password_stamp = password_stamp;
    if (same_version) return std::nullopt;  // touched, or swapped in again unchanged
    judged_bytes = read->bytes;
    judged_password = password_value;
    judged_key_password = key_password;

    if (!passwords_ok) {
      event.error = passwords_ok.error();
    } else {
      auto loaded = detail::load_identity(read->bytes, password_value, key_password, source.alias);
      if (!loaded) {
        event.error = loaded.error();
      } else if (auto written = write_for_grpc(loaded->pem); !written) {
        event.error = written.error();
      } else {
        event.outcome = ReloadOutcome::loaded;
        event.leaf = loaded->leaf;
        publish(std::move(*loaded));
      }
    }
    std::fill(read->bytes.begin(), read->bytes.end(), std::uint8_t{0});
    {
      const std::lock_guard<std::mutex> lock(mutex);
      event.generation = generation;
    }
    return event;
  }

  void run() {
    const auto interval = std::max(options.poll_interval, kMinPollInterval);
    while (!stopping) {
      struct pollfd fds[2] = {{wake_fd, POLLIN, 0}, {inotify_fd, POLLIN, 0}};
      const nfds_t count = inotify_fd >= 0 ? 2 : 1;
      const int ready = ::poll(fds, count, static_cast<int>(interval.count()));
      if (stopping) break;
      if (ready > 0 && count == 2 && (fds[1].revents & POLLIN) != 0) {
        alignas(struct inotify_event) char buffer[4096];
        while (::read(inotify_fd, buffer, sizeof buffer) > 0) {
        }
        // A writer usually makes several events (create, write, rename): let it finish.
        std::this_thread::sleep_for(kSettlePause);
      }
      if (auto event = check(); event && options.on_reload) options.on_reload(*event);
    }
  }
};

Result<std::shared_ptr<IdentityWatcher>> IdentityWatcher::start(KeystoreSource source,
                                                                WatchOptions options) {
  auto state = std::make_shared<State>();
  state->source = std::move(source);
  state->options = std::move(options);
  if (state->source.path.empty()) return fail(Errc::invalid_argument, "no key store path given");

  auto dir = detail::PrivateDir::create(state->options.work_dir, "getcert-grpc");
  if (!dir) return tl::unexpected(std::move(dir.error()));
  state->dir = std::move(*dir);
  state->pem_path = state->dir.file(kPemName);

  // The first version: failing here is the caller's error, there is no identity to keep.
  auto event = state->check();
  if (!event) {
    return fail(Errc::io_error, "'" + state->source.path + "' kept changing while it was read");
  }
  if (event->outcome == ReloadOutcome::rejected) {
    Error error = event->error;
    error.message = state->source.path + ": " + error.message;
    return tl::unexpected(std::move(error));
  }
  state->provider = std::make_shared<::grpc::experimental::FileWatcherCertificateProvider>(
      state->pem_path, state->pem_path, std::max(1U, state->options.grpc_refresh_seconds));

  state->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state->wake_fd < 0) {
    return fail(Errc::internal, std::string("eventfd: ") + std::strerror(errno));
  }
  // Watch the directory, not the file: a rename over the file or Kubernetes' swap of the
  // "..data" symlink replaces the file, and a watch on the old inode would see nothing.
  // Without inotify (limits reached, unsupported file system) the poll alone finds changes.
  state->inotify_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (state->inotify_fd >= 0) {
    const auto parent = std::filesystem::absolute(state->source.path).parent_path().string();
    if (::inotify_add_watch(
            state->inotify_fd, parent.c_str(),
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY) < 0) {
      ::close(state->inotify_fd);
      state->inotify_fd = -1;
    }
  }
  state->thread = std::thread([raw = state.get()] { raw->run(); });
  return std::shared_ptr<IdentityWatcher>(new IdentityWatcher(std::move(state)));
}

IdentityWatcher::IdentityWatcher(std::shared_ptr<State> state) : state_(std::move(state)) {}

IdentityWatcher::~IdentityWatcher() {
  state_->stopping = true;
  if (state_->wake_fd >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto wrote = ::write(state_->wake_fd, &one, sizeof one);
  }
  if (state_->thread.joinable()) state_->thread.join();
}

std::shared_ptr<::grpc::experimental::CertificateProviderInterface> IdentityWatcher::provider()
    const {
  return state_->provider;
}

Certificate IdentityWatcher::current_leaf() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->leaf;
}

std::uint64_t IdentityWatcher::generation() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->generation;
}

std::string IdentityWatcher::pem_path() const { return state_->pem_path; }

}  // namespace getcert::grpc_tls
