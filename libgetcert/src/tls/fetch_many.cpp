#include "getcert/fetch_many.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "getcert/text.hpp"

namespace getcert {
namespace {

// State the workers share. Two locks, so that pulling the next target never waits for a
// callback that is rendering a result, and a fetch never holds either.
class Pool {
 public:
  Pool(const TargetSource& next_target, const ResultCallback& on_result, FetchManyOptions options)
      : next_target_(next_target), on_result_(on_result), options_(std::move(options)) {}

  void work() {
    for (;;) {
      auto job = take();
      if (!job) return;
      ManyResult done = run(std::move(job->first), job->second);
      deliver(std::move(done));
    }
  }

  FetchManyStats stats() const {
    return {completed_.load(), options_.cancel.cancelled() || stopped_by_error_};
  }

  void rethrow_first_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // The next target and its index, or nullopt when the run is over for this worker.
  std::optional<std::pair<std::string, std::uint64_t>> take() {
    const std::lock_guard<std::mutex> lock(source_mutex_);
    if (exhausted_ || options_.cancel.cancelled()) return std::nullopt;
    try {
      auto input = next_target_();
      if (!input) {
        exhausted_ = true;
        return std::nullopt;
      }
      return std::make_pair(std::move(*input), next_index_++);
    } catch (...) {
      stop_with(std::current_exception());
      exhausted_ = true;
      return std::nullopt;
    }
  }

  ManyResult run(std::string input, std::uint64_t index) const {
    ManyResult out;
    out.index = index;
    out.input = std::move(input);
    const auto started = std::chrono::steady_clock::now();
    auto endpoint = parse_endpoint(out.input, options_.default_port);
    if (!endpoint) {
      out.result = fail(Errc::invalid_argument, "cannot parse target " + quote_name(out.input) +
                                                    ": " + endpoint.error().message);
    } else {
      out.endpoint = *endpoint;
      // The steps of a fetch that fails are known only to the callback: collect them there.
      FetchOptions fetch_options = options_.fetch;
      fetch_options.on_step = [&out, &given = options_.fetch.on_step](const StepTiming& step) {
        out.timings.push_back(step);
        if (given) given(step);
      };
      // A throw inside a worker thread would end the whole process (std::terminate): the
      // embedding host gets this target's error result instead, and the run goes on. What
      // throws here is the caller's on_step or an allocation, never the peer's bytes.
      try {
        out.result = fetch(out.endpoint, fetch_options);
      } catch (const std::exception& e) {
        out.result = fail(Errc::internal, "fetching " + quote_name(out.input) +
                                              " raised an exception: " + e.what());
      } catch (...) {
        out.result = fail(Errc::internal,
                          "fetching " + quote_name(out.input) + " raised an unknown exception");
      }
    }
    out.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    return out;
  }

  void deliver(ManyResult&& done) {
    std::unique_lock<std::mutex> lock(result_mutex_, std::defer_lock);
    if (options_.serialize_results) lock.lock();
    if (stopped_by_error_) return;
    try {
      on_result_(std::move(done));
      ++completed_;
    } catch (...) {
      stop_with(std::current_exception());
    }
  }

  void stop_with(std::exception_ptr e) {
    const std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::move(e);
    stopped_by_error_ = true;
    options_.cancel.cancel();
  }

  const TargetSource& next_target_;
  const ResultCallback& on_result_;
  FetchManyOptions options_;  // a copy: the token inside is shared with the caller's

  std::mutex source_mutex_;
  bool exhausted_ = false;
  std::uint64_t next_index_ = 0;

  std::mutex result_mutex_;
  std::atomic<std::uint64_t> completed_{0};

  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::atomic<bool> stopped_by_error_{false};
};

}  // namespace

FetchManyStats fetch_many(const TargetSource& next_target, const ResultCallback& on_result,
                          const FetchManyOptions& options) {
  Pool pool(next_target, on_result, options);
  const std::size_t workers = std::max<std::size_t>(1, options.concurrency);
  std::vector<std::thread> threads;
  threads.reserve(workers);
  try {
    for (std::size_t i = 0; i < workers; ++i) threads.emplace_back([&pool] { pool.work(); });
  } catch (const std::system_error&) {
    // The system refused more threads: run with the ones it gave (at least this one).
    if (threads.empty()) pool.work();
  }
  for (auto& t : threads) t.join();
  pool.rethrow_first_error();
  return pool.stats();
}

}  // namespace getcert
