#pragma once

// Dial a TLS endpoint, capture the chain it presents, and verify it.
// Public header: C++17, no OpenSSL types.
//
//   auto result = getcert::fetch("example.com:443");
//   if (!result) { /* result.error().message: network or handshake failure */ }
//   else if (!result->verification.ok) { /* chain captured, reasons in verification.errors */ }
//
// fetch() is connect() followed by verify_chain() with the handshake's facts (SNI, staple).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/endpoint.hpp"
#include "getcert/error.hpp"
#include "getcert/secret.hpp"
#include "getcert/verify.hpp"

namespace getcert {

// Protocols that start in plain text and switch to TLS on request. xmpp_server is XMPP's
// server-to-server stream (jabber:server); mysql covers MariaDB too; mssql is SQL Server's TDS
// PRELOGIN, whose TLS handshake travels inside TDS packets.
enum class StartTls {
  none,
  smtp,
  imap,
  pop3,
  ftp,
  postgres,
  ldap,
  xmpp,
  xmpp_server,
  mysql,
  mssql,
  lmtp,
  nntp,
  sieve,
  irc
};

// TLS protocol versions a handshake may negotiate.
enum class TlsVersion { tls1_0, tls1_1, tls1_2, tls1_3 };
// "1.0", "1.1", "1.2", "1.3": the spelling --tls-min and --tls-max take.
std::string_view to_string(TlsVersion version) noexcept;

// A certificate to offer when a server asks for one (mutual TLS).
struct ClientIdentity {
  std::string certificate_pem;  // the client certificate, then any chain certificates to send
  Secret private_key_pem;       // the certificate's key, unencrypted PEM (PKCS#8 or traditional)
};

// How to reach the server and what to offer in the handshake.
struct ConnectOptions {
  std::chrono::milliseconds timeout{10000};         // overall: resolve + connect + handshake
  std::chrono::milliseconds connect_timeout{5000};  // per address tried
  std::optional<std::string> sni;                   // override the server name sent
  bool send_sni = true;                             // false: never send SNI
  std::vector<std::string> alpn;                    // e.g. {"h2", "http/1.1"}
  StartTls starttls = StartTls::none;               // plain-text preamble before the handshake
  // The name the preamble announces: the XMPP stream's `to` domain (default: the host; an IP
  // address target needs one) and the SMTP EHLO name (default: the connection's local address
  // as an address literal, "[192.0.2.1]"). Printable ASCII without spaces, quotes, '<', '>' or
  // '&'. It changes neither the SNI nor the name verified (see sni and VerifyOptions::name).
  std::string starttls_name;
  // Reach the target, and the AIA/OCSP/CRL servers of verification, through this proxy:
  // "http://[user:password@]host[:port]" (HTTP CONNECT, port 80 by default),
  // "socks5://[user:password@]host[:port]" (SOCKS5, getcert resolves the target and tries each
  // address through the proxy) or "socks5h://..." (the proxy resolves it); SOCKS ports default
  // to 1080. Empty: connect directly. Environment variables such as https_proxy are not read.
  std::string proxy;
  // Send the name lookups of the connection (the target's, the proxy's) to this DNS server:
  // "ADDR[:PORT]", an IPv4 address or an IPv6 one ("[2001:db8::53]:5353", or bare without a
  // port), port 53 by default. Empty: the system's configuration (/etc/resolv.conf). Either
  // way /etc/hosts is read first, and every lookup ends by the timeout, holding no thread and
  // no socket past it. The AIA/OCSP/CRL downloads of verification use the system's servers.
  // A value that is not an address is invalid_argument (see check_resolver()).
  std::string resolver;
  // Limits on the negotiated version; unset: anything from TLS 1.0 to TLS 1.3. A server that
  // cannot meet them fails the handshake (tls_handshake_failed naming the versions).
  std::optional<TlsVersion> tls_min;
  std::optional<TlsVersion> tls_max;
  // Offered when the server requests a client certificate. Without one, a server that requests
  // a certificate still shows its chain: the handshake goes on without a certificate, and
  // TlsInfo says whether the server accepted that.
  std::optional<ClientIdentity> client_identity;
};

struct FetchOptions {
  ConnectOptions connect;
  // How the captured chain is verified. fetch() fills in what the handshake decides: an empty
  // verify.name becomes the SNI sent (else the host), ocsp_staple is what the server stapled,
  // from_handshake is set, and network_timeout is what is left of connect.timeout, with no
  // floor: when the handshake used it all, the downloads fail at once (reported in the result),
  // so the whole fetch never outlives connect.timeout.
  VerifyOptions verify;
  // Told about each step (resolve, connect, proxy, starttls, handshake, verify, and the
  // downloads of verification) as it ends, on the thread that called fetch(); may be empty.
  // Also gets the steps of a fetch that fails. verify.on_step is not called by fetch(): this one
  // is. fetch_many() calls it from its worker threads, several at once: see FetchManyOptions.
  StepCallback on_step;
};

struct Target {
  std::string host;
  std::uint16_t port = 0;
  std::string sni;      // what was sent; empty when none
  std::string address;  // the IP address that answered (the proxy's, with FetchOptions::proxy)
};

struct TlsInfo {
  std::string version;  // "TLSv1.3"
  std::string cipher;   // IANA name, e.g. "TLS_AES_256_GCM_SHA384"
  std::string alpn;     // negotiated protocol; empty when none
  bool ocsp_stapled = false;
  std::vector<std::uint8_t> ocsp_response;    // DER of the stapled response, if any
  bool client_certificate_requested = false;  // the server sent a CertificateRequest
  bool client_certificate_sent = false;       // ... and ConnectOptions::client_identity answered it
  // False when the server refused to finish after the server chain arrived (in practice: it
  // requires a client certificate and got none, or one it does not accept). The chain is still
  // captured and verified. In TLS 1.3 the refusal comes after the client's Finished, so it is
  // read for briefly (within the timeout) whenever a certificate was requested.
  bool handshake_completed = true;
  // The CA names of the CertificateRequest, formatted as Certificate::subject; the client
  // certificate the server wants is issued by one of them (empty list: the server names none).
  std::vector<std::string> acceptable_client_cas;
};

// What a handshake showed, before any verification.
struct Handshake {
  Target target;
  TlsInfo tls;
  std::vector<Certificate> presented_chain;  // exactly what the server sent, in its order
  std::vector<StepTiming> timings;           // resolve, connect, proxy, starttls, handshake
};

struct FetchResult {
  Target target;
  TlsInfo tls;
  std::vector<Certificate> presented_chain;  // exactly what the server sent, in its order
  Verification verification;                 // includes the verified chain
  // Every step in the order it ended: those of the handshake, the downloads of verification
  // (also in verification.timings), then verify itself.
  std::vector<StepTiming> timings;
};

// Checks a ConnectOptions::resolver value without connecting anywhere, so a caller can refuse
// a bad one before starting work: invalid_argument with a one-line message naming it.
Result<void> check_resolver(std::string_view resolver);

// Connects and handshakes, capturing the chain without judging it (the handshake accepts any
// certificate). Errors: invalid_argument (bad SNI, ALPN or proxy URL, tls_min above tls_max,
// a client identity that does not parse or whose key does not match),
// resolve_failed, connect_failed, timeout, tls_handshake_failed (also: no certificate at all),
// not_tls.
Result<Handshake> connect(const Endpoint& endpoint, const ConnectOptions& options = {});
Result<Handshake> connect(std::string_view endpoint, const ConnectOptions& options = {});

// connect() then verify_chain(). Network, protocol and trust-store problems are errors
// (those of connect(), io_error and malformed_input for the trust store, checked before
// dialing); a chain that does not verify is a successful FetchResult with
// verification.ok == false.
Result<FetchResult> fetch(const Endpoint& endpoint, const FetchOptions& options = {});
Result<FetchResult> fetch(std::string_view endpoint, const FetchOptions& options = {});

}  // namespace getcert
