#pragma once

// The BIO every TLS connection of the library reads and writes through: a socket BIO of our own
// that sends with send(MSG_NOSIGNAL). OpenSSL's socket BIO writes with write(2), so a peer that
// resets the connection could kill a host program that keeps SIGPIPE's default disposition; a
// library must not change the host's signal handlers, so it must not raise the signal instead.

#include <openssl/bio.h>

namespace getcert::detail {

// A source/sink BIO over the connected socket `fd`, which it does not close. Non-blocking
// sockets work as with OpenSSL's socket BIO: a send or recv that would block sets the retry
// flags, an orderly close reads as 0 with BIO_eof() true, and errno is left as the call set it.
// nullptr when OpenSSL cannot allocate it.
BIO* new_socket_bio(int fd);

}  // namespace getcert::detail
