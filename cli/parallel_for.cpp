#include "parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace getcert::cli {

void parallel_for(std::size_t count, const std::function<bool(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> stop_after{count};  // lowest index whose task returned false
  const auto work = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count || i > stop_after.load()) return;
      if (!task(i)) {
        std::size_t seen = stop_after.load();
        while (i < seen && !stop_after.compare_exchange_weak(seen, i)) {
        }
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(count, std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running (and this one) do the rest
    }
  }
  work();
  for (auto& h : helpers) h.join();
}

}  // namespace getcert::cli
