#pragma once

// Many targets in one call: a bounded pool of worker threads pulls targets from a source (so a
// list of any length is streamed, never held whole), runs fetch() on each under its own
// deadline, and hands every result to a callback. Public header: C++17, no OpenSSL types.
//
//   getcert::CancelToken cancel;
//   std::ifstream list("targets.txt");
//   getcert::fetch_many(
//       [&]() -> std::optional<std::string> {
//         std::string line;
//         if (std::getline(list, line)) return line;
//         return std::nullopt;
//       },
//       [&](getcert::ManyResult&& r) {
//         if (!r.result) std::cerr << r.input << ": " << r.result.error().message << "\n";
//       },
//       {/*fetch=*/{}, /*concurrency=*/50, /*default_port=*/443, cancel});

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "getcert/endpoint.hpp"
#include "getcert/error.hpp"
#include "getcert/fetch.hpp"

namespace getcert {

// Stops a fetch_many() run: no new target is started once cancel() was called; fetches in
// flight finish within their own FetchOptions::timeout. Copies share one flag, so the result
// callback, another thread or a signal-driven loop can hold a copy. cancel() is lock-free.
class CancelToken {
 public:
  void cancel() noexcept { flag_->store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return flag_->load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_ = std::make_shared<std::atomic<bool>>(false);
};

// The outcome of one target.
struct ManyResult {
  std::uint64_t index = 0;  // position of the target in the order the source gave it (0-based)
  std::string input;        // the target exactly as the source gave it
  Endpoint endpoint;        // as parsed; default-constructed when `input` did not parse
  // What fetch() returned; invalid_argument (message naming the input) when it did not parse.
  Result<FetchResult> result;
  std::chrono::milliseconds duration{0};  // wall time of this target's fetch
  // Every step of this target's fetch (FetchResult::timings), also when the fetch failed.
  std::vector<StepTiming> timings;
};

struct FetchManyOptions {
  // Applied to every target; timeout is per target. fetch.on_step is called from the worker
  // threads, for several targets at the same time: it must be thread-safe.
  FetchOptions fetch;
  // Targets in flight at once (worker threads). 0 is treated as 1. Each in-flight target
  // holds one socket (two during an AIA or revocation download, a few more while a DNS name
  // is looked up on the worker itself): keep concurrency well under the process's
  // RLIMIT_NOFILE. Nothing of a target outlives its deadline.
  std::size_t concurrency = 50;
  std::uint16_t default_port = 443;  // for targets that name none
  CancelToken cancel;
  // true: the result callback is never called concurrently (see ResultCallback).
  // false: each worker calls it as soon as its target is done, possibly at the same time as
  // others, for callbacks that do real work per result (rendering) and lock only their output.
  bool serialize_results = true;
};

struct FetchManyStats {
  std::uint64_t completed = 0;  // results delivered to the callback
  bool cancelled = false;       // the run stopped early because of the cancel token
};

// Yields the next target, or nullopt when there are no more. Called by one thread at a time
// (the workers take turns), never after it returned nullopt.
using TargetSource = std::function<std::optional<std::string>()>;
// Receives each result once, in completion order. Called from the worker threads; with
// FetchManyOptions::serialize_results (the default) never concurrently, so it may write to a
// stream without its own lock. A worker starts its next target once its callback returned.
using ResultCallback = std::function<void(ManyResult&&)>;

// Runs until the source is exhausted (or the token is cancelled) and every started target has
// been delivered; returns after all worker threads have finished. Exceptions thrown by the
// source or the callback stop the run and are rethrown here once the workers are joined; one
// thrown while a target is fetched (FetchOptions::on_step, an allocation) becomes that target's
// result (Errc::internal, the exception's text in the message), and the run goes on.
FetchManyStats fetch_many(const TargetSource& next_target, const ResultCallback& on_result,
                          const FetchManyOptions& options = {});

}  // namespace getcert
