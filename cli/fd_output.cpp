#include "fd_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "getcert/secret.hpp"

namespace getcert::cli {

FdOutputBuffer::FdOutputBuffer(int fd) noexcept : fd_(fd) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

FdOutputBuffer::~FdOutputBuffer() {
  (void)flush_buffer();
  secure_wipe(buffer_.data(), buffer_.size());
}

bool FdOutputBuffer::write_all(const char* data, std::size_t size) noexcept {
  // After one failure nothing more is written: later bytes would leave a hole in the output.
  if (error_ != 0) return false;
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool FdOutputBuffer::flush_buffer() noexcept {
  const auto pending = static_cast<std::size_t>(pptr() - pbase());
  const bool ok = write_all(pbase(), pending);
  secure_wipe(pbase(), pending);
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return ok;
}

FdOutputBuffer::int_type FdOutputBuffer::overflow(int_type ch) {
  if (!flush_buffer()) return traits_type::eof();
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  *pptr() = traits_type::to_char_type(ch);
  pbump(1);
  return ch;
}

std::streamsize FdOutputBuffer::xsputn(const char* data, std::streamsize count) {
  const auto size = static_cast<std::size_t>(count);
  const auto room = static_cast<std::size_t>(epptr() - pptr());
  if (size <= room) {
    std::memcpy(pptr(), data, size);
    pbump(static_cast<int>(size));
    return count;
  }
  // Large writes (a DER file, a long JSON line) go straight out after what is buffered.
  if (!flush_buffer() || !write_all(data, size)) return 0;
  return count;
}

int FdOutputBuffer::sync() { return flush_buffer() ? 0 : -1; }

}  // namespace getcert::cli
