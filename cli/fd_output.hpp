#pragma once

// The stream behind the CLI's stdout: writes a file descriptor with write(2) and remembers the
// first failure (its errno), so a full disk (> /dev/full) or a closed pipe (| head -1) becomes
// one error message and exit 11 instead of output silently cut short. std::cout only sets
// badbit, and by the time anyone looks, errno has long been overwritten.

#include <array>
#include <streambuf>

namespace getcert::cli {

class FdOutputBuffer final : public std::streambuf {
 public:
  explicit FdOutputBuffer(int fd) noexcept;
  FdOutputBuffer(const FdOutputBuffer&) = delete;
  FdOutputBuffer& operator=(const FdOutputBuffer&) = delete;
  // Flushes what is left, then wipes the buffer: it may have held a private key (p12 --stdout).
  ~FdOutputBuffer() override;

  // errno of the first failed write; 0 while every write succeeded.
  int error() const noexcept { return error_; }

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* data, std::streamsize count) override;
  int sync() override;

 private:
  // Writes [data, data + size) completely; false (error_ set) when the descriptor refuses.
  bool write_all(const char* data, std::size_t size) noexcept;
  bool flush_buffer() noexcept;

  int fd_;
  int error_ = 0;
  std::array<char, 65536> buffer_{};
};

}  // namespace getcert::cli
