#pragma once

// Invariant checks for the fuzz targets: a broken invariant aborts, so libFuzzer keeps the input
// as a finding and the replay test ("fuzz-replay: TARGET") fails on it.

#include <cstdio>
#include <cstdlib>

namespace getcert::fuzz {

inline void require(bool ok, const char* what) {
  if (!ok) {
    static_cast<void>(std::fprintf(stderr, "fuzz: invariant broken: %s\n", what));
    std::abort();
  }
}

}  // namespace getcert::fuzz
