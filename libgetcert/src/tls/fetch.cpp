#include "getcert/fetch.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "getcert/text.hpp"
#include "internal/ossl.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"
#include "net/dial.hpp"
#include "net/proxy.hpp"
#include "net/resolver.hpp"
#include "net/socket_bio.hpp"
#include "net/timings.hpp"
#include "starttls/starttls.hpp"
#include "verify/trust_store.hpp"
#include "verify/verify.hpp"

namespace getcert {
namespace {

using detail::Clock;

// The first bytes the peer sent, kept to tell "not TLS at all" (HTTP, SSH, SMTP banner...)
// from a TLS server that refused us.
struct PeerBytes {
  std::string first;
  static constexpr std::size_t kKeep = 64;
};

long record_peer_bytes(BIO* bio, int oper, const char* data, std::size_t /*len*/, int /*argi*/,
                       long /*argl*/, int ret, std::size_t* processed) {
  if (oper == (BIO_CB_READ | BIO_CB_RETURN) && ret > 0 && processed != nullptr) {
    auto* peer = reinterpret_cast<PeerBytes*>(BIO_get_callback_arg(bio));
    const std::size_t room = PeerBytes::kKeep - std::min(PeerBytes::kKeep, peer->first.size());
    peer->first.append(data, std::min(room, *processed));
  }
  return ret;
}

// What a peer sent up to its first line break: the part of a banner worth quoting.
std::string_view first_line(std::string_view bytes) {
  return bytes.substr(0, bytes.find_first_of("\r\n"));
}

bool looks_like_tls(const std::string& bytes) {
  // TLS records start with a content type (20-23) and a 0x03 major version.
  if (bytes.empty()) return true;
  const auto type = static_cast<unsigned char>(bytes[0]);
  return type >= 20 && type <= 24 && (bytes.size() < 2 || bytes[1] == 0x03);
}

// The certificate list a server may send (OpenSSL's max_cert_list, set explicitly so the
// message can name it): real chains are 3-10 KiB, the largest seen in the wild about 60 KiB.
constexpr long kMaxCertListBytes = 100L * 1024;

Error classify_handshake_failure(int ssl_error, int saved_errno, const PeerBytes& peer,
                                 const std::string& target, const internal::ErrorQueue& errors) {
  const std::string& openssl_detail = errors.text;
  if (!looks_like_tls(peer.first)) {
    if (peer.first.rfind("HTTP/", 0) == 0) {
      return {Errc::not_tls,
              target + " answered with plain HTTP, not TLS (wrong port? HTTPS is usually 443)",
              openssl_detail};
    }
    return {Errc::not_tls,
            target + " answered, but not with TLS (it sent " +
                quote_untrusted(first_line(peer.first), 24) +
                "); is this a TLS port, or does it need STARTTLS?",
            openssl_detail};
  }
  if (ssl_error == SSL_ERROR_SYSCALL && saved_errno == ECONNRESET) {
    return {Errc::tls_handshake_failed, target + " reset the connection during the TLS handshake",
            openssl_detail};
  }
  const bool eof = ssl_error == SSL_ERROR_ZERO_RETURN ||
                   (ssl_error == SSL_ERROR_SYSCALL && saved_errno == 0) ||
                   errors.has(ERR_LIB_SSL, SSL_R_UNEXPECTED_EOF_WHILE_READING);
  if (eof) {
    return {Errc::tls_handshake_failed,
            target + " closed the connection during the TLS handshake" +
                (peer.first.empty() ? " without answering" : "") +
                " (does it need a different server name (--sni) or protocol?)",
            openssl_detail};
  }
  if (errors.has(ERR_LIB_SSL, SSL_R_EXCESSIVE_MESSAGE_SIZE)) {
    // OpenSSL refused a handshake message (in practice the certificate list) larger than our
    // own limit: the server did nothing wrong by the protocol, so do not blame it.
    return {Errc::tls_handshake_failed,
            target + " sent a handshake message (its certificate list) larger than getcert's " +
                "limit of " + std::to_string(kMaxCertListBytes / 1024) +
                " KiB; getcert stopped the handshake",
            openssl_detail};
  }
  // Typically an alert from the server: "sslv3 alert handshake failure", "tlsv1 alert ...".
  const std::string why = errors.last_reason();
  return {Errc::tls_handshake_failed,
          target + " rejected the TLS handshake: " + (why.empty() ? "unknown reason" : why),
          openssl_detail};
}

Error handshake_timeout(const std::string& target, std::chrono::milliseconds timeout) {
  return {Errc::timeout, target + " accepted the connection but did not complete the TLS " +
                             "handshake within " + detail::duration_text(timeout) +
                             " (a stalled server, or not a TLS port?)"};
}

Result<void> wait_for(int fd, short events, Clock::time_point deadline, const std::string& target,
                      std::chrono::milliseconds timeout) {
  const int rc = detail::poll_until(fd, events, deadline);
  if (rc == 0) return tl::unexpected(handshake_timeout(target, timeout));
  if (rc < 0) return fail(Errc::network_error, std::string("poll failed: ") + std::strerror(errno));
  return {};
}

std::vector<unsigned char> alpn_wire(const std::vector<std::string>& protocols) {
  std::vector<unsigned char> wire;
  for (const auto& p : protocols) {
    wire.push_back(static_cast<unsigned char>(p.size()));
    wire.insert(wire.end(), p.begin(), p.end());
  }
  return wire;
}

// What a handshake learned about the server's wish for a client certificate. Lives as long as
// the SSL that points to it (ex_data index 0 and the certificate callback's argument).
struct ClientCertState {
  bool requested = false;
  std::vector<std::string> ca_names;
  bool ticket_received = false;
};

// SSL_set_cert_cb: runs when a CertificateRequest arrives (TLS 1.2 and 1.3), before OpenSSL
// picks what to send, so the CA names are those of this request.
int note_certificate_request(SSL* ssl, void* arg) {
  auto* state = static_cast<ClientCertState*>(arg);
  state->requested = true;
  state->ca_names.clear();
  const STACK_OF(X509_NAME)* names =
      SSL_get_client_CA_list(ssl);  // on a client: the names the server sent
  for (int i = 0; i < sk_X509_NAME_num(names); ++i) {
    state->ca_names.push_back(internal::name_to_string(sk_X509_NAME_value(names, i)));
  }
  return 1;
}

// A TLS 1.3 server sends session tickets only once it has accepted the client's Finished, and
// with it the client certificate (or its absence).
int note_session_ticket(SSL* ssl, SSL_SESSION* /*session*/) {
  if (auto* state = static_cast<ClientCertState*>(SSL_get_ex_data(ssl, 0)); state != nullptr) {
    state->ticket_received = true;
  }
  return 0;  // no reference kept
}

// How long to wait, at most, for a TLS 1.3 server's verdict on the client certificate: one
// round trip is enough, this leaves room for slow links without making every fetch slow.
constexpr std::chrono::milliseconds kClientCertVerdictWait{1000};

// In TLS 1.3 a server refuses a client certificate (or its absence) with an alert that arrives
// after the client's Finished. True when that alert (or a hang-up) comes before `until`; false
// when the server goes on: a session ticket, application data, or silence.
bool refused_after_finished(SSL* ssl, int fd, Clock::time_point until,
                            const ClientCertState& state) {
  char byte = 0;
  for (;;) {
    if (state.ticket_received) return false;
    internal::clear_errors();
    const int rc = SSL_peek(ssl, &byte, 1);
    if (rc > 0) return false;
    const int err = SSL_get_error(ssl, rc);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      internal::clear_errors();
      return true;
    }
    if (state.ticket_received) return false;
    if (detail::poll_until(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, until) <= 0) {
      return false;
    }
  }
}

int protocol_version(TlsVersion version) {
  switch (version) {
    case TlsVersion::tls1_0:
      return TLS1_VERSION;
    case TlsVersion::tls1_1:
      return TLS1_1_VERSION;
    case TlsVersion::tls1_2:
      return TLS1_2_VERSION;
    case TlsVersion::tls1_3:
      return TLS1_3_VERSION;
  }
  return TLS1_3_VERSION;
}

// "TLS 1.2 to 1.3", "TLS 1.3 only": the range a handshake was limited to, for messages.
std::string version_range_text(const ConnectOptions& options) {
  const std::string low(to_string(options.tls_min.value_or(TlsVersion::tls1_0)));
  const std::string high(to_string(options.tls_max.value_or(TlsVersion::tls1_3)));
  return low == high ? "TLS " + low + " only" : "TLS " + low + " to " + high;
}

// OpenSSL's reasons for "no version both sides accept", from either side of the handshake: ours
// (no version in range, the server's is out of it) or the server's protocol_version alert.
bool is_version_mismatch(const internal::ErrorQueue& errors) {
  static constexpr std::array<int, 6> kReasons = {
      SSL_R_UNSUPPORTED_PROTOCOL,   SSL_R_TLSV1_ALERT_PROTOCOL_VERSION,
      SSL_R_NO_PROTOCOLS_AVAILABLE, SSL_R_WRONG_SSL_VERSION,
      SSL_R_VERSION_TOO_LOW,        SSL_R_VERSION_TOO_HIGH};
  return std::any_of(kReasons.begin(), kReasons.end(),
                     [&](int reason) { return errors.has(ERR_LIB_SSL, reason); });
}

// The default PEM callback would prompt on the terminal; a library must not, so an encrypted
// key simply fails to load.
int no_passphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*userdata*/) { return 0; }

// libssl checks the presented chain against the context's store during every handshake, even
// under SSL_VERIFY_NONE, and keeps a result nobody reads here: the store is empty, the verdict
// is verify_chain()'s. Accepting without that check saves building a store context and a
// failed path search per connection.
int skip_handshake_chain_check(X509_STORE_CTX* /*ctx*/, void* /*arg*/) { return 1; }

Result<void> use_client_identity(SSL_CTX* ctx, const ClientIdentity& identity) {
  internal::BioPtr certs(BIO_new_mem_buf(identity.certificate_pem.data(),
                                         static_cast<int>(identity.certificate_pem.size())));
  internal::X509Ptr leaf(certs ? PEM_read_bio_X509(certs.get(), nullptr, no_passphrase, nullptr)
                               : nullptr);
  if (!leaf) {
    return fail(Errc::invalid_argument, "the client certificate is not a PEM certificate",
                internal::drain_errors());
  }
  internal::X509StackPtr chain(sk_X509_new_null());
  if (!chain) return fail(Errc::internal, "out of memory", internal::drain_errors());
  while (internal::X509Ptr extra{PEM_read_bio_X509(certs.get(), nullptr, no_passphrase, nullptr)}) {
    if (sk_X509_push(chain.get(), extra.get()) <= 0) {
      return fail(Errc::internal, "out of memory", internal::drain_errors());
    }
    (void)extra.release();  // the stack owns it now
  }
  internal::clear_errors();  // the loop ends on "no start line", which is not an error here
  internal::BioPtr key_pem(BIO_new_mem_buf(identity.private_key_pem.data(),
                                           static_cast<int>(identity.private_key_pem.size())));
  internal::EvpPkeyPtr key(
      key_pem ? PEM_read_bio_PrivateKey(key_pem.get(), nullptr, no_passphrase, nullptr) : nullptr);
  if (!key) {
    return fail(Errc::invalid_argument,
                "the client key is not an unencrypted PEM private key (decrypt it first, or use "
                "a PKCS#12 file)",
                internal::drain_errors());
  }
  if (X509_check_private_key(leaf.get(), key.get()) != 1) {
    return fail(Errc::invalid_argument, "the client key does not match the client certificate",
                internal::drain_errors());
  }
  if (SSL_CTX_use_cert_and_key(ctx, leaf.get(), key.get(), chain.get(), 1) != 1) {
    return fail(Errc::invalid_argument, "cannot use the client certificate and key",
                internal::drain_errors());
  }
  return {};
}

Result<internal::SslCtxPtr> make_client_context(const ConnectOptions& options) {
  internal::SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return fail(Errc::internal, "cannot create TLS context", internal::drain_errors());
  // getcert's job is to see what a server presents, including old or weak servers, so the
  // handshake accepts anything; the verdict comes from verify_chain(), not from the handshake.
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  SSL_CTX_set_cert_verify_callback(ctx.get(), skip_handshake_chain_check, nullptr);
  SSL_CTX_set_security_level(ctx.get(), 0);
  SSL_CTX_set_min_proto_version(ctx.get(),
                                protocol_version(options.tls_min.value_or(TlsVersion::tls1_0)));
  SSL_CTX_set_max_proto_version(ctx.get(),
                                protocol_version(options.tls_max.value_or(TlsVersion::tls1_3)));
  SSL_CTX_set_options(ctx.get(), SSL_OP_LEGACY_SERVER_CONNECT);
  SSL_CTX_set_max_cert_list(ctx.get(), kMaxCertListBytes);
  if (SSL_CTX_set_cipher_list(ctx.get(), "ALL:@SECLEVEL=0") != 1) {
    return fail(Errc::internal, "cannot configure ciphers", internal::drain_errors());
  }
  if (options.client_identity) {
    GETCERT_TRY(use_client_identity(ctx.get(), *options.client_identity));
  }
  // New session tickets are only a signal (see refused_after_finished): nothing is cached.
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
  SSL_CTX_sess_set_new_cb(ctx.get(), note_session_ticket);
  return ctx;
}

// The context for `options`, shared by every fetch with the same settings: OpenSSL 3 spends
// about 0.2 ms setting one up (fetching ciphers, groups and signature algorithms from the
// providers), as much as a fleet's loopback handshake costs in getcert itself. A context holds
// only settings here (no session cache), and OpenSSL lets threads create connections from one
// context at once. A client identity is per caller and rare: its context is not shared.
Result<internal::SslCtxPtr> shared_client_context(const ConnectOptions& options) {
  if (options.client_identity) return make_client_context(options);
  static std::mutex mutex;
  static std::map<std::pair<int, int>, internal::SslCtxPtr> contexts;  // (min, max) -> context
  const std::pair<int, int> key{options.tls_min ? static_cast<int>(*options.tls_min) : -1,
                                options.tls_max ? static_cast<int>(*options.tls_max) : -1};
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = contexts.find(key);
  if (found == contexts.end()) {
    auto made = make_client_context(options);
    if (!made) return made;
    found = contexts.emplace(key, std::move(*made)).first;
  }
  if (SSL_CTX_up_ref(found->second.get()) != 1) {
    return fail(Errc::internal, "cannot share the TLS context", internal::drain_errors());
  }
  return internal::SslCtxPtr(found->second.get());
}

// A handshake's outcome plus the live session whose peer chain `handles` borrow from, so
// verification can reuse the parsed certificates.
struct Captured {
  Handshake handshake;
  // What the BIO callback records of the peer's first bytes. It is the callback's argument for
  // as long as the SSL object lives, and that outlives capture(): so it is owned here, on the
  // heap (a Captured is moved), and declared before `ssl` so it is destroyed after it.
  std::unique_ptr<PeerBytes> peer = std::make_unique<PeerBytes>();
  internal::SslPtr ssl;
  std::vector<X509*> handles;  // borrowed from ssl
};

// Phase 1 of capture(): what the options ask for, checked and prepared. Everything that can fail
// locally fails here, before any packet is sent.
struct CapturePlan {
  std::optional<std::string> sni;  // --sni, normalised
  internal::SslCtxPtr ctx;
  std::optional<detail::ProxyUrl> proxy;
  std::optional<detail::DnsServer> resolver;
};

Result<CapturePlan> validate(const Endpoint& endpoint, const ConnectOptions& options) {
  CapturePlan plan;
  if (options.sni && !options.sni->empty()) {
    if (is_ip_literal(*options.sni)) {
      return fail(Errc::invalid_argument, "--sni takes a host name, not an IP address");
    }
    GETCERT_TRY_ASSIGN(auto name, normalize_hostname(*options.sni));
    plan.sni = std::move(name);
  }
  for (const auto& p : options.alpn) {
    if (p.empty() || p.size() > 255) {
      return fail(Errc::invalid_argument, "ALPN protocol names must be 1-255 bytes long");
    }
  }
  if (options.tls_min && options.tls_max && *options.tls_min > *options.tls_max) {
    return fail(Errc::invalid_argument, "--tls-min " + std::string(to_string(*options.tls_min)) +
                                            " is above --tls-max " +
                                            std::string(to_string(*options.tls_max)));
  }
  internal::clear_errors();
  GETCERT_TRY_ASSIGN(auto ctx, shared_client_context(options));
  plan.ctx = std::move(ctx);

  GETCERT_TRY(detail::check_starttls_options(options, endpoint));
  if (!options.proxy.empty()) {
    GETCERT_TRY_ASSIGN(auto parsed_proxy, detail::parse_proxy_url(options.proxy));
    plan.proxy = std::move(parsed_proxy);
  }
  GETCERT_TRY_ASSIGN(auto resolver, detail::parse_dns_server(options.resolver));
  plan.resolver = std::move(resolver);
  return plan;
}

// Phase 2: the TCP connection (direct or through the proxy), then the STARTTLS preamble.
Result<detail::Connection> open_transport(const Endpoint& endpoint, const ConnectOptions& options,
                                          const CapturePlan& plan, const std::string& target,
                                          Clock::time_point deadline) {
  auto conn = plan.proxy ? detail::dial_via_proxy(*plan.proxy, endpoint, deadline,
                                                  options.connect_timeout, plan.resolver)
                         : detail::dial_tcp(endpoint.host, endpoint.port, deadline,
                                            options.connect_timeout, plan.resolver);
  if (!conn) return tl::unexpected(conn.error());
  if (options.starttls != StartTls::none) {
    detail::StepTimer starttls(Step::starttls, target);
    if (auto upgraded = detail::negotiate_starttls(options, conn->fd.get(), endpoint, deadline);
        !upgraded) {
      Error e = upgraded.error();
      e.message = target + ": " + e.message;
      return tl::unexpected(e);
    }
    starttls.finish(true);
  }
  return conn;
}

// Phase 3a: the TLS session on the connection, in out.ssl: what it reads and writes (our socket
// BIO, with the TDS framing on top for mssql), SNI, ALPN and the OCSP request. Returns that BIO,
// which out.ssl owns.
Result<BIO*> start_session(Captured& out, SSL_CTX* ctx, int fd, const ConnectOptions& options) {
  const Handshake& result = out.handshake;
  out.ssl.reset(SSL_new(ctx));
  SSL* ssl = out.ssl.get();
  // Our socket BIO, not OpenSSL's: it sends with MSG_NOSIGNAL (net/socket_bio.hpp).
  internal::BioPtr owned_bio(detail::new_socket_bio(fd));
  // What TLS reads and writes: the socket, or a framing pushed on top of it (TDS for mssql),
  // which then owns the socket BIO.
  if (owned_bio) {
    BIO* transport = detail::handshake_transport(options.starttls, owned_bio.get());
    if (transport == nullptr) {
      owned_bio.reset();
    } else if (transport != owned_bio.get()) {
      static_cast<void>(owned_bio.release());
      owned_bio.reset(transport);
    }
  }
  if (ssl == nullptr || !owned_bio) {
    return fail(Errc::internal, "cannot create TLS session", internal::drain_errors());
  }
  BIO* bio = owned_bio.release();  // SSL_set_bio below takes it
  BIO_set_callback_ex(bio, record_peer_bytes);
  BIO_set_callback_arg(bio, reinterpret_cast<char*>(out.peer.get()));
  SSL_set_bio(ssl, bio, bio);  // ssl owns bio from here
  if (!result.target.sni.empty() && !internal::set_sni(ssl, result.target.sni.c_str())) {
    return fail(Errc::invalid_argument, "cannot send server name '" + result.target.sni + "'",
                internal::drain_errors());
  }
  if (!options.alpn.empty()) {
    const auto wire = alpn_wire(options.alpn);
    if (SSL_set_alpn_protos(ssl, wire.data(), static_cast<unsigned>(wire.size())) != 0) {
      return fail(Errc::internal, "cannot offer ALPN", internal::drain_errors());
    }
  }
  internal::request_ocsp_staple(ssl);
  return bio;
}

// Phase 3b: the handshake loop, under the deadline. True when the server refused the client
// certificate (or its absence) after it had shown its chain: that chain is still the result.
Result<bool> run_handshake(SSL* ssl, BIO* bio, int fd, const ConnectOptions& options,
                           const ClientCertState& client_cert, const PeerBytes& peer,
                           const std::string& target, Clock::time_point deadline) {
  for (;;) {
    // Checked on every round, not only when a read would block: a server dripping handshake
    // bytes keeps the socket readable and would otherwise never reach the timeout.
    if (Clock::now() >= deadline) return tl::unexpected(handshake_timeout(target, options.timeout));
    internal::clear_errors();
    errno = 0;
    const int rc = SSL_connect(ssl);
    if (rc == 1) return false;
    const int err = SSL_get_error(ssl, rc);
    const int saved_errno = errno;
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      GETCERT_TRY(wait_for(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, target,
                           options.timeout));
      continue;
    }
    const internal::ErrorQueue errors = internal::drain_error_queue();
    if (const std::string framing = detail::handshake_transport_failure(options.starttls, bio);
        !framing.empty()) {
      return fail(Errc::not_tls, target + ": " + framing, errors.text);
    }
    // A server that wanted a client certificate and refused what it got (or nothing) has
    // already shown its chain: that chain is still the result, with the refusal recorded.
    if (client_cert.requested && sk_X509_num(SSL_get_peer_cert_chain(ssl)) > 0) return true;
    if ((options.tls_min || options.tls_max) && looks_like_tls(peer.first) &&
        is_version_mismatch(errors)) {
      return fail(Errc::tls_handshake_failed,
                  target + " cannot negotiate a TLS version getcert allowed (" +
                      version_range_text(options) +
                      ", from --tls-min/--tls-max): " + errors.last_reason(),
                  errors.text);
    }
    return tl::unexpected(classify_handshake_failure(err, saved_errno, peer, target, errors));
  }
}

// Phase 4: what the session shows (the presented chain, version, cipher, ALPN, stapled OCSP),
// into out.handshake; then a best-effort close_notify unless the server refused us.
Result<void> extract(Captured& out, bool refused, const std::string& target) {
  Handshake& result = out.handshake;
  SSL* ssl = out.ssl.get();
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl);  // get0: borrowed
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    out.handles.push_back(sk_X509_value(chain, i));
    GETCERT_TRY_ASSIGN(auto cert, internal::certificate_from_x509(out.handles.back()));
    result.presented_chain.push_back(std::move(cert));
  }
  result.tls.version = SSL_get_version(ssl);
  if (const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl); cipher != nullptr) {
    const char* name = SSL_CIPHER_standard_name(cipher);
    result.tls.cipher = name != nullptr ? name : SSL_CIPHER_get_name(cipher);
  }
  const unsigned char* alpn = nullptr;
  unsigned alpn_len = 0;
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
  if (alpn != nullptr) result.tls.alpn.assign(reinterpret_cast<const char*>(alpn), alpn_len);
  const unsigned char* ocsp = nullptr;
  const long ocsp_len = internal::get_ocsp_staple(ssl, &ocsp);
  if (ocsp != nullptr && ocsp_len > 0) {
    result.tls.ocsp_stapled = true;
    result.tls.ocsp_response.assign(ocsp, ocsp + ocsp_len);
  }
  if (!refused) (void)SSL_shutdown(ssl);  // best effort close_notify; non-blocking socket
  internal::clear_errors();

  if (result.presented_chain.empty()) {
    return fail(Errc::tls_handshake_failed, target +
                                                " completed the handshake without a "
                                                "certificate (anonymous or PSK cipher suite)");
  }
  return {};
}

// Connects and handshakes under `deadline`, in four phases: validate, open the transport, the
// handshake (session set-up, then the loop), extract.
Result<Captured> capture(const Endpoint& endpoint, const ConnectOptions& options,
                         Clock::time_point deadline) {
  const std::string target = endpoint.to_string();
  GETCERT_TRY_ASSIGN(auto plan, validate(endpoint, options));
  GETCERT_TRY_ASSIGN(auto conn, open_transport(endpoint, options, plan, target, deadline));

  Captured out;
  Handshake& result = out.handshake;
  result.target.host = endpoint.host;
  result.target.port = endpoint.port;
  result.target.address = conn.address;
  if (options.send_sni) {
    result.target.sni = plan.sni.value_or(endpoint.is_ip ? std::string() : endpoint.host);
  }
  GETCERT_TRY_ASSIGN(auto bio, start_session(out, plan.ctx.get(), conn.fd.get(), options));
  SSL* ssl = out.ssl.get();
  // Declared after `out`, so it goes out of scope before the SSL that points to it.
  ClientCertState client_cert;
  SSL_set_cert_cb(ssl, note_certificate_request, &client_cert);
  SSL_set_ex_data(ssl, 0, &client_cert);
  detail::StepTimer handshake(Step::handshake,
                              result.target.sni.empty() ? target : "SNI " + result.target.sni);
  auto refused =
      run_handshake(ssl, bio, conn.fd.get(), options, client_cert, *out.peer, target, deadline);
  if (!refused) return tl::unexpected(refused.error());

  detail::end_handshake_transport(options.starttls, bio);
  if (!*refused && client_cert.requested && SSL_version(ssl) == TLS1_3_VERSION) {
    *refused = refused_after_finished(
        ssl, conn.fd.get(), std::min(deadline, Clock::now() + kClientCertVerdictWait), client_cert);
  }
  handshake.finish(true, *refused ? std::string("refused after the certificate request")
                                  : std::string(SSL_get_version(ssl)));
  result.tls.client_certificate_requested = client_cert.requested;
  result.tls.client_certificate_sent = client_cert.requested && options.client_identity.has_value();
  result.tls.handshake_completed = !*refused;
  result.tls.acceptable_client_cas = std::move(client_cert.ca_names);
  // client_cert goes out of scope before ssl does.
  SSL_set_ex_data(ssl, 0, nullptr);
  SSL_set_cert_cb(ssl, nullptr, nullptr);

  GETCERT_TRY(extract(out, *refused, target));
  return out;
}

}  // namespace

std::string_view to_string(TlsVersion version) noexcept {
  switch (version) {
    case TlsVersion::tls1_0:
      return "1.0";
    case TlsVersion::tls1_1:
      return "1.1";
    case TlsVersion::tls1_2:
      return "1.2";
    case TlsVersion::tls1_3:
      return "1.3";
  }
  return "?";
}

Result<void> check_resolver(std::string_view resolver) {
  GETCERT_TRY(detail::parse_dns_server(resolver));
  return {};
}

Result<Handshake> connect(const Endpoint& endpoint, const ConnectOptions& options) {
  std::vector<StepTiming> timings;
  const detail::TimingRecorder recorder(timings, nullptr);
  GETCERT_TRY_ASSIGN(auto captured, capture(endpoint, options, Clock::now() + options.timeout));
  captured.handshake.timings = std::move(timings);
  return std::move(captured.handshake);
}

Result<Handshake> connect(std::string_view endpoint, const ConnectOptions& options) {
  GETCERT_TRY_ASSIGN(auto parsed, parse_endpoint(endpoint));
  return connect(parsed, options);
}

Result<FetchResult> fetch(std::string_view endpoint, const FetchOptions& options) {
  GETCERT_TRY_ASSIGN(auto parsed, parse_endpoint(endpoint));
  return fetch(parsed, options);
}

Result<FetchResult> fetch(const Endpoint& endpoint, const FetchOptions& options) {
  const auto deadline = Clock::now() + options.connect.timeout;
  // A trust store that cannot be loaded fails before any packet is sent.
  GETCERT_TRY_ASSIGN(auto trust, detail::load_trust_store(options.verify.trust));
  std::vector<StepTiming> timings;
  const detail::TimingRecorder recorder(timings, options.on_step);
  GETCERT_TRY_ASSIGN(auto captured, capture(endpoint, options.connect, deadline));
  Handshake& shake = captured.handshake;
  shake.timings = timings;

  VerifyOptions verify = options.verify;
  // Names the caller gave (VerifyOptions::names, --host) replace the one connected to.
  if (verify.name.empty() && verify.names.empty()) {
    verify.name = shake.target.sni.empty() ? endpoint.host : shake.target.sni;
  }
  verify.ocsp_staple = shake.tls.ocsp_response;
  verify.from_handshake = true;
  if (verify.proxy.empty()) verify.proxy = options.connect.proxy;
  // Revocation and AIA requests share what is left of the overall budget, so the whole fetch
  // ends within the timeout; with nothing left they fail at once (reported, never silent).
  verify.network_timeout = std::chrono::milliseconds(detail::millis_until(deadline));
  verify.on_step = nullptr;  // the steps reach options.on_step through this fetch's recorder
  detail::StepTimer verifying(Step::verify, verify.name);
  auto verification =
      detail::verify_with_store(shake.presented_chain, verify, trust, captured.handles);
  if (!verification) return tl::unexpected(verification.error());
  verifying.finish(true, std::string(to_string(verification->verdict)));
  FetchResult result;
  result.target = std::move(shake.target);
  result.tls = std::move(shake.tls);
  result.presented_chain = std::move(shake.presented_chain);
  result.verification = std::move(*verification);
  result.timings = std::move(timings);
  return result;
}

}  // namespace getcert
