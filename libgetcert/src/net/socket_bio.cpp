#include "net/socket_bio.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <memory>
#include <string>

#include "internal/owners.hpp"

namespace getcert::detail {
namespace {

struct Socket {
  int fd = -1;
};

Socket* socket_of(BIO* b) { return static_cast<Socket*>(BIO_get_data(b)); }

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

int socket_write(BIO* b, const char* data, std::size_t len, std::size_t* written) {
  BIO_clear_retry_flags(b);
  const Socket* s = socket_of(b);
  if (s == nullptr) return 0;
  // MSG_NOSIGNAL: a reset peer gives EPIPE here, never SIGPIPE to the host process.
  const ssize_t n = ::send(s->fd, data, len, MSG_NOSIGNAL);
  if (n >= 0) {
    *written = static_cast<std::size_t>(n);
    return 1;
  }
  if (would_block(errno)) BIO_set_retry_write(b);
  return 0;
}

int socket_read(BIO* b, char* out, std::size_t size, std::size_t* read) {
  BIO_clear_retry_flags(b);
  const Socket* s = socket_of(b);
  if (s == nullptr) return 0;
  const ssize_t n = ::recv(s->fd, out, size, 0);
  if (n > 0) {
    *read = static_cast<std::size_t>(n);
    return 1;
  }
  if (n == 0) {
    // As OpenSSL's socket BIO does: libssl asks BIO_eof() to tell a peer's close from an error.
    if (size > 0) BIO_set_flags(b, BIO_FLAGS_IN_EOF);
    return 0;
  }
  if (would_block(errno)) BIO_set_retry_read(b);
  return 0;
}

int socket_puts(BIO* b, const char* text) {
  std::size_t written = 0;
  if (socket_write(b, text, std::char_traits<char>::length(text), &written) != 1) return -1;
  return static_cast<int>(written);
}

long socket_ctrl(BIO* b, int cmd, long /*num*/, void* ptr) {
  const Socket* s = socket_of(b);
  switch (cmd) {
    case BIO_C_GET_FD:  // SSL_get_fd()
      if (s == nullptr) return -1;
      if (ptr != nullptr) *static_cast<int*>(ptr) = s->fd;
      return s->fd;
    case BIO_CTRL_GET_CLOSE:
      return BIO_NOCLOSE;  // the connection's owner closes the socket
    case BIO_CTRL_SET_CLOSE:
    case BIO_CTRL_FLUSH:  // nothing is buffered here
    case BIO_CTRL_DUP:
      return 1;
    case BIO_CTRL_EOF:
      return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0 ? 1 : 0;
    default:
      // Pending counts are 0, and kernel TLS stays off (its ctrls answer 0), as for a plain
      // socket BIO without kTLS.
      return 0;
  }
}

int socket_create(BIO* b) {
  BIO_set_data(b, nullptr);
  BIO_set_init(b, 0);  // until new_socket_bio() gives it a socket
  return 1;
}

int socket_destroy(BIO* b) {
  const std::unique_ptr<Socket> owned(socket_of(b));  // handed over in new_socket_bio()
  BIO_set_data(b, nullptr);
  BIO_set_init(b, 0);
  return 1;
}

// Made once and kept for the life of the process, as OpenSSL's own methods are.
const BIO_METHOD* socket_method() {
  static const BIO_METHOD* const method = []() -> const BIO_METHOD* {
    const int index = BIO_get_new_index();
    if (index < 0) return nullptr;
    // A descriptor type, so SSL_get_fd() and BIO_find_type() find it as they find a socket BIO.
    internal::BioMethodPtr m(
        BIO_meth_new(index | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "getcert socket"));
    if (m && (BIO_meth_set_write_ex(m.get(), socket_write) != 1 ||
              BIO_meth_set_read_ex(m.get(), socket_read) != 1 ||
              BIO_meth_set_puts(m.get(), socket_puts) != 1 ||
              BIO_meth_set_ctrl(m.get(), socket_ctrl) != 1 ||
              BIO_meth_set_create(m.get(), socket_create) != 1 ||
              BIO_meth_set_destroy(m.get(), socket_destroy) != 1)) {
      m.reset();
    }
    return m.release();
  }();
  return method;
}

}  // namespace

BIO* new_socket_bio(int fd) {
  const BIO_METHOD* method = socket_method();
  if (method == nullptr) return nullptr;
  internal::BioPtr bio(BIO_new(method));
  if (!bio) return nullptr;
  auto state = std::make_unique<Socket>();
  state->fd = fd;
  BIO_set_data(bio.get(), state.release());  // socket_destroy() takes it back
  BIO_set_init(bio.get(), 1);
  return bio.release();
}

}  // namespace getcert::detail
