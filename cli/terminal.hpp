#pragma once

#include <iostream>

namespace getcert::cli {

class FdOutputBuffer;

// The process's streams, injectable so the whole CLI runs in tests with in-memory streams.
struct Terminal {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  bool stdin_is_tty = false;
  bool stdout_is_tty = false;
  bool stderr_is_tty = false;
  // The buffer behind `out` when it is the process's stdout: it knows why a write failed.
  const FdOutputBuffer* out_buffer = nullptr;
  // The descriptor behind `in` when it is the process's stdin (read directly where a read must
  // be interruptible), else -1.
  int in_fd = -1;
};

}  // namespace getcert::cli
