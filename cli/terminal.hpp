#pragma once

#include <iostream>

namespace getcert::cli {

// The process's streams, injectable so the whole CLI runs in tests with in-memory streams.
struct Terminal {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  bool stdin_is_tty = false;
  bool stdout_is_tty = false;
  bool stderr_is_tty = false;
};

}  // namespace getcert::cli
