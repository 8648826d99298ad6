#pragma once

// A bounded pool for independent, CPU-bound jobs over an indexed list (decoding many PKCS#12
// files: key derivation dominates and each file is independent).

#include <cstddef>
#include <functional>

namespace getcert::cli {

// Runs task(i) for i = 0, 1, ... count - 1 on at most std::thread::hardware_concurrency()
// threads (the caller's included), each index once, handed out in increasing order. When a task
// returns false, indices above it that have not started are skipped: callers that stop at their
// first failure in input order still get every index below it. Tasks must not throw.
void parallel_for(std::size_t count, const std::function<bool(std::size_t)>& task);

}  // namespace getcert::cli
