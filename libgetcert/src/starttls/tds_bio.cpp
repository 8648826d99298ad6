// The BIO that carries a TLS handshake in TDS PRELOGIN packets, the way SQL Server expects it
// in TDS 7.x: each flight the client writes goes out as one PRELOGIN message (packets of at
// most 4096 bytes, the last one marked end-of-message), and the server's packets are stripped
// of their headers, so TLS sees the bare record stream whatever the split of records across
// packets and of packets across reads. Nothing the server sends is buffered here: headers are
// read into 8 bytes, payload goes straight to the caller.

#include <algorithm>
#include <array>
#include <memory>
#include <new>
#include <string>

#include "internal/owners.hpp"
#include "starttls/tds.hpp"

namespace getcert::detail {
namespace {

struct Framing {
  bool on = true;
  std::string flight;  // TLS bytes written since the last flush: one TDS message
  std::string wire;    // framed bytes the socket has not taken yet
  std::size_t wire_sent = 0;
  std::array<char, kTdsHeaderSize> header{};
  std::size_t header_have = 0;
  std::size_t payload_left = 0;  // of the packet being read
  std::string failure;

  // Wraps `flight` in PRELOGIN packets, queued on `wire`.
  void frame() {
    constexpr std::size_t kRoom = kTdsPreloginPacketSize - kTdsHeaderSize;
    std::uint8_t id = 1;  // packet ids count the packets of one message
    for (std::size_t off = 0; off < flight.size(); off += kRoom, ++id) {
      const bool last = off + kRoom >= flight.size();
      wire += tds_packet(kTdsPrelogin, last ? kTdsEndOfMessage : 0, id,
                         std::string_view(flight).substr(off, kRoom));
    }
    flight.clear();
  }
};

Framing* framing_of(BIO* b) { return static_cast<Framing*>(BIO_get_data(b)); }

// Sends what `wire` holds: 1 when all of it went, else what BIO_write_ex gave (retry flags on
// the next BIO tell whether to try again).
int drain(BIO* b, Framing& f) {
  BIO* next = BIO_next(b);
  while (f.wire_sent < f.wire.size()) {
    std::size_t n = 0;
    if (next == nullptr ||
        BIO_write_ex(next, f.wire.data() + f.wire_sent, f.wire.size() - f.wire_sent, &n) <= 0) {
      return 0;
    }
    f.wire_sent += n;
  }
  f.wire.clear();
  f.wire_sent = 0;
  return 1;
}

int framing_write(BIO* b, const char* data, std::size_t len, std::size_t* written) {
  Framing& f = *framing_of(b);
  BIO_clear_retry_flags(b);
  if (f.on) {
    f.flight.append(data, len);  // sent as one message when TLS flushes or starts reading
    *written = len;
    return 1;
  }
  if (drain(b, f) <= 0) {
    BIO_copy_next_retry(b);
    return 0;
  }
  const int rc = BIO_write_ex(BIO_next(b), data, len, written);
  BIO_copy_next_retry(b);
  return rc;
}

int framing_read(BIO* b, char* out, std::size_t size, std::size_t* read) {
  Framing& f = *framing_of(b);
  BIO* next = BIO_next(b);
  BIO_clear_retry_flags(b);
  if (!f.failure.empty() || next == nullptr) return 0;
  // TLS reads once its flight is written: that flight is a complete message now.
  if (f.on && !f.flight.empty()) f.frame();
  if (!f.wire.empty() && drain(b, f) <= 0) {
    BIO_copy_next_retry(b);  // a write that would block: TLS sees SSL_ERROR_WANT_WRITE
    return 0;
  }
  if (!f.on) {
    const int rc = BIO_read_ex(next, out, size, read);
    BIO_copy_next_retry(b);
    return rc;
  }
  for (;;) {
    if (f.payload_left == 0) {
      std::size_t n = 0;
      if (BIO_read_ex(next, f.header.data() + f.header_have, f.header.size() - f.header_have, &n) <=
          0) {
        BIO_copy_next_retry(b);
        return 0;
      }
      f.header_have += n;
      if (f.header_have < f.header.size()) continue;
      f.header_have = 0;
      auto header = parse_tds_header(std::string_view(f.header.data(), f.header.size()));
      if (!header) {
        f.failure = header.error().message + " during the TLS handshake";
        return 0;
      }
      if (header->type != kTdsPrelogin) {
        f.failure = "sent a TDS packet of type " + tds_byte_text(header->type) +
                    " during the TLS handshake, which travels in PRELOGIN packets (0x12)";
        return 0;
      }
      f.payload_left = header->length - kTdsHeaderSize;
      if (f.payload_left == 0) {
        // An empty packet is legal, but a peer can send them without end while the socket
        // stays readable: hand control back (as if the read would block) so the handshake
        // loop checks its deadline before the next header is read.
        BIO_set_retry_read(b);
        return 0;
      }
      continue;
    }
    std::size_t n = 0;
    if (BIO_read_ex(next, out, std::min(size, f.payload_left), &n) <= 0) {
      BIO_copy_next_retry(b);
      return 0;
    }
    f.payload_left -= n;
    *read = n;
    return 1;
  }
}

long framing_ctrl(BIO* b, int cmd, long num, void* ptr) {
  Framing& f = *framing_of(b);
  BIO* next = BIO_next(b);
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      BIO_clear_retry_flags(b);
      if (f.on && !f.flight.empty()) f.frame();
      if (drain(b, f) <= 0) {
        BIO_copy_next_retry(b);
        return 0;
      }
      break;
    case BIO_CTRL_PENDING:
      // TDS headers are not TLS bytes; nothing is buffered here for TLS to read.
      if (f.on) return 0;
      break;
    case BIO_CTRL_WPENDING:
      return static_cast<long>(f.flight.size() + f.wire.size() - f.wire_sent) +
             (next != nullptr ? BIO_ctrl(next, cmd, num, ptr) : 0);
    case BIO_CTRL_DUP:
    case BIO_CTRL_GET_KTLS_SEND:  // kernel TLS would bypass the framing
    case BIO_CTRL_GET_KTLS_RECV:
      return 0;
    default:
      break;
  }
  return next != nullptr ? BIO_ctrl(next, cmd, num, ptr) : 0;
}

// The BIO owns its Framing: handed over here, taken back by framing_destroy().
int framing_create(BIO* b) {
  try {
    BIO_set_data(b, std::make_unique<Framing>().release());
  } catch (const std::bad_alloc&) {
    return 0;  // called from OpenSSL's C: report it, never throw through it
  }
  BIO_set_init(b, 1);
  return 1;
}

int framing_destroy(BIO* b) {
  const std::unique_ptr<Framing> owned(framing_of(b));
  BIO_set_data(b, nullptr);
  return 1;
}

struct Method {
  BIO_METHOD* method = nullptr;
  int type = 0;
};

// Made once and kept for the life of the process, as OpenSSL's own methods are.
const Method& framing_method() {
  static const Method method = [] {
    Method out;
    const int index = BIO_get_new_index();
    if (index < 0) return out;
    out.type = index | BIO_TYPE_FILTER;
    internal::BioMethodPtr m(BIO_meth_new(out.type, "TDS PRELOGIN framing"));
    if (m && (BIO_meth_set_write_ex(m.get(), framing_write) != 1 ||
              BIO_meth_set_read_ex(m.get(), framing_read) != 1 ||
              BIO_meth_set_ctrl(m.get(), framing_ctrl) != 1 ||
              BIO_meth_set_create(m.get(), framing_create) != 1 ||
              BIO_meth_set_destroy(m.get(), framing_destroy) != 1)) {
      m.reset();
    }
    out.method = m.release();  // kept for the life of the process
    return out;
  }();
  return method;
}

// The framing state of `b` when it is a framing BIO.
Framing* as_framing(BIO* b) {
  const Method& m = framing_method();
  if (b == nullptr || m.method == nullptr || BIO_method_type(b) != m.type) return nullptr;
  return framing_of(b);
}

}  // namespace

BIO* push_tds_framing(BIO* next) {
  const Method& m = framing_method();
  if (m.method == nullptr) return nullptr;
  BIO* top = BIO_new(m.method);
  if (top == nullptr) return nullptr;
  return BIO_push(top, next);
}

void end_tds_framing(BIO* framing) {
  Framing* f = as_framing(framing);
  if (f == nullptr || !f->on) return;
  if (!f->flight.empty()) f->frame();
  f->on = false;
  (void)drain(framing, *f);  // best effort; a later write sends the rest first
}

std::string tds_framing_failure(BIO* framing) {
  const Framing* f = as_framing(framing);
  return f != nullptr ? f->failure : std::string();
}

}  // namespace getcert::detail
