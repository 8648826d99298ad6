// A host program that embeds the library and keeps SIGPIPE's default disposition (which kills
// the process) must survive peers that reset or close the connection at every step of the TLS
// handshake, plain and inside SQL Server's TDS PRELOGIN packets: the library sends with
// MSG_NOSIGNAL and never touches the host's signal handlers. If it did raise SIGPIPE, this
// executable would die and ctest would report it.
//
// The server is in-process, driving OpenSSL through memory BIOs so it can stop at an exact
// point: after accepting, after reading the ClientHello, halfway through its own first flight,
// right after that flight with an orderly close (the client's Finished then meets a reset, and
// TLS 1.3 clients still write close_notify), and after the handshake.

#include <catch2/catch.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include "getcert/fetch.hpp"
#include "internal/owners.hpp"
#include "starttls/tds.hpp"
#include "support/files.hpp"
#include "support/net.hpp"

namespace {

using getcert::Errc;
using getcert::test::LoopbackListener;
using getcert::test::pki;
namespace tds = getcert::detail;

enum class Stop {
  reset_after_accept,
  reset_after_client_hello,
  reset_mid_server_flight,
  close_after_server_flight,
  reset_after_handshake,
};

const char* name_of(Stop s) {
  switch (s) {
    case Stop::reset_after_accept:
      return "reset after accept";
    case Stop::reset_after_client_hello:
      return "reset after reading the ClientHello";
    case Stop::reset_mid_server_flight:
      return "reset halfway through the server's flight";
    case Stop::close_after_server_flight:
      return "orderly close right after the server's flight";
    case Stop::reset_after_handshake:
      return "reset after the handshake";
  }
  return "?";
}

// The server side never raises SIGPIPE either: it shares this process.
bool send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

bool read_exact(LoopbackListener& l, int fd, std::size_t n, std::string& out) {
  std::string buf(n, '\0');
  std::size_t have = 0;
  while (have < n) {
    if (!l.wait_readable(fd, 5000)) return false;
    const ssize_t got = ::recv(fd, buf.data() + have, n - have, 0);
    if (got <= 0) return false;
    have += static_cast<std::size_t>(got);
  }
  out += buf;
  return true;
}

// A SO_LINGER 0 close: the kernel sends RST instead of FIN.
void reset(int fd) {
  const linger hard{1, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
}

// One TDS message's payload (packets up to the end-of-message one).
bool read_tds_message(LoopbackListener& l, int fd, std::string& payload) {
  for (;;) {
    std::string header;
    if (!read_exact(l, fd, tds::kTdsHeaderSize, header)) return false;
    auto h = tds::parse_tds_header(header);
    if (!h) return false;
    if (!read_exact(l, fd, h->length - tds::kTdsHeaderSize, payload)) return false;
    if ((h->status & tds::kTdsEndOfMessage) != 0) return true;
  }
}

// TLS bytes in PRELOGIN packets of at most 4096 bytes; the last one ends the message if `end`.
std::string tds_wrap(const std::string& tls, bool end) {
  constexpr std::size_t kRoom = tds::kTdsPreloginPacketSize - tds::kTdsHeaderSize;
  std::string out;
  std::uint8_t id = 1;
  for (std::size_t off = 0; off < tls.size(); off += kRoom, ++id) {
    const bool last = off + kRoom >= tls.size();
    out += tds::tds_packet(tds::kTdsPrelogin, last && end ? tds::kTdsEndOfMessage : 0, id,
                           std::string_view(tls).substr(off, kRoom));
  }
  return out;
}

// The server's PRELOGIN answer: VERSION 15.0.2000.0 and ENCRYPTION = ENCRYPT_ON.
std::string prelogin_answer() {
  const std::string payload(
      "\x00\x00\x0B\x00\x06"
      "\x01\x00\x11\x00\x01"
      "\xFF"
      "\x0F\x00\x07\xD0\x00\x00"
      "\x01",
      18);
  return tds::tds_packet(tds::kTdsTabularResult, tds::kTdsEndOfMessage, 1, payload);
}

class ResettingServer {
 public:
  ResettingServer(Stop stop, bool tds) : stop_(stop), tds_(tds) {
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    if (!ctx_ ||
        SSL_CTX_use_certificate_chain_file(ctx_.get(), pki("rsa-chain.pem").c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx_.get(), pki("rsa.key").c_str(), SSL_FILETYPE_PEM) != 1) {
      throw std::runtime_error("cannot set up the resetting TLS server");
    }
    listener_.start([this](int fd) { serve(fd); });
  }
  ResettingServer(const ResettingServer&) = delete;
  ResettingServer& operator=(const ResettingServer&) = delete;
  ~ResettingServer() { listener_.stop(); }

  std::uint16_t port() const { return listener_.port(); }

 private:
  // TLS bytes the client sent: one record, or one TDS message's worth.
  bool read_tls(int fd, std::string& out) {
    if (tds_) return read_tds_message(listener_, fd, out);
    std::string header;
    if (!read_exact(listener_, fd, 5, header)) return false;
    const std::size_t length = std::size_t{static_cast<std::uint8_t>(header[3])} * 256 +
                               static_cast<std::uint8_t>(header[4]);
    out += header;
    return read_exact(listener_, fd, length, out);
  }

  static std::string take_output(BIO* wbio) {
    std::string out;
    std::array<char, 4096> buf{};
    for (std::size_t n = 0; BIO_read_ex(wbio, buf.data(), buf.size(), &n) == 1;) {
      out.append(buf.data(), n);
    }
    return out;
  }

  void serve(int fd) {
    if (tds_) {
      std::string request;
      if (!read_tds_message(listener_, fd, request)) return reset(fd);
      if (stop_ == Stop::reset_after_accept) return reset(fd);
      if (!send_all(fd, prelogin_answer())) return reset(fd);
    } else if (stop_ == Stop::reset_after_accept) {
      return reset(fd);
    }
    std::string hello;
    if (!read_tls(fd, hello) || stop_ == Stop::reset_after_client_hello) return reset(fd);

    const getcert::internal::SslPtr ssl(SSL_new(ctx_.get()));
    BIO* rbio = BIO_new(BIO_s_mem());
    BIO* wbio = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl.get(), rbio, wbio);  // ssl owns both
    SSL_set_accept_state(ssl.get());
    BIO_write(rbio, hello.data(), static_cast<int>(hello.size()));
    (void)SSL_do_handshake(ssl.get());
    const std::string flight = take_output(wbio);
    if (stop_ == Stop::reset_mid_server_flight) {
      const std::string half = flight.substr(0, flight.size() / 2);
      (void)send_all(fd, tds_ ? tds_wrap(half, false) : half);
      return reset(fd);
    }
    if (!send_all(fd, tds_ ? tds_wrap(flight, true) : flight)) return reset(fd);
    if (stop_ == Stop::close_after_server_flight) {
      ::close(fd);  // FIN: the client's Finished will meet a reset
      return;
    }
    for (int round = 0; round < 8; ++round) {
      std::string input;
      if (!read_tls(fd, input)) break;
      BIO_write(rbio, input.data(), static_cast<int>(input.size()));
      if (SSL_do_handshake(ssl.get()) == 1) {
        (void)send_all(fd, take_output(wbio));  // session tickets, bare after the handshake
        break;
      }
    }
    ERR_clear_error();
    reset(fd);
  }

  Stop stop_;
  bool tds_;
  getcert::internal::SslCtxPtr ctx_;
  LoopbackListener listener_{"resetting TLS server", 0};
};

}  // namespace

TEST_CASE("a host that keeps SIGPIPE's default survives peers resetting at every step",
          "[fetch][tds]") {
  struct sigaction current {};
  REQUIRE(::sigaction(SIGPIPE, nullptr, &current) == 0);
  // The point of the test: nothing here (Catch included) ignores or catches SIGPIPE.
  REQUIRE(current.sa_handler == SIG_DFL);

  for (const bool tds : {false, true}) {
    for (const Stop stop :
         {Stop::reset_after_accept, Stop::reset_after_client_hello, Stop::reset_mid_server_flight,
          Stop::close_after_server_flight, Stop::reset_after_handshake}) {
      INFO((tds ? "TDS: " : "TLS: ") << name_of(stop));
      ResettingServer server(stop, tds);
      getcert::ConnectOptions options;
      options.timeout = std::chrono::seconds(5);
      if (tds) options.starttls = getcert::StartTls::mssql;
      const std::string target = "127.0.0.1:" + std::to_string(server.port());
      for (int run = 0; run < 10; ++run) {
        INFO("run " << run);
        const auto r = getcert::connect(target, options);
        if (stop == Stop::close_after_server_flight || stop == Stop::reset_after_handshake) {
          // The server's flight was whole: the chain was seen, whatever came after.
          INFO((r ? std::string() : r.error().message));
          REQUIRE(r);
          CHECK_FALSE(r->presented_chain.empty());
        } else {
          REQUIRE_FALSE(r);
          INFO(r.error().message);
          CHECK(r.error().message.find(target) != std::string::npos);
          CHECK(r.error().message.find('\n') == std::string::npos);
          const Errc code = r.error().code;
          // The errors a network failure gets: no crash, no internal error.
          CHECK((code == Errc::connect_failed || code == Errc::tls_handshake_failed ||
                 code == Errc::not_tls || code == Errc::network_error));
        }
      }
      REQUIRE(::sigaction(SIGPIPE, nullptr, &current) == 0);
      CHECK(current.sa_handler == SIG_DFL);  // and the library left it alone
    }
  }
}
