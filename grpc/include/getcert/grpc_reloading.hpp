#pragma once

// gRPC credentials that stay up through certificate rotation, with getcert as the verifier of
// the peer. Built on gRPC's experimental TLS API (libgrpc++ >= 1.51:
// grpc::experimental::TlsChannelCredentialsOptions / TlsServerCredentialsOptions,
// FileWatcherCertificateProvider, ExternalCertificateVerifier). Public header: C++17, no OpenSSL
// types. In target getcert::grpc.
//
//   getcert::grpc_tls::ReloadingChannelOptions options;
//   options.identity = getcert::grpc_tls::KeystoreSource{"/var/run/secrets/tls/client.p12"};
//   options.identity->password.file = "/var/run/secrets/tls/password";
//   options.peer.verify.trust.ca_file = "/var/run/secrets/tls/ca.crt";
//   options.peer.verify.pins = {"sha256/..."};
//   options.peer.expires_within = std::chrono::hours(24 * 7);
//   options.watch.on_reload = [](const getcert::grpc_tls::ReloadEvent& e) { log(e); };
//   auto creds = getcert::grpc_tls::reloading_channel_credentials(options);
//   if (!creds) return fail(creds.error().message);   // the key store does not load now
//   auto channel = grpc::CreateChannel("svc.internal:443", creds->credentials);
//   // keep `creds` (the watcher and the verdicts) alive as long as the channel
//
// How the identity reaches gRPC: gRPC 1.51 takes certificate providers only as its own C core
// objects (CertificateProviderInterface::c_provider()), so a provider of ours cannot feed it.
// IdentityWatcher therefore decodes the key store itself, checks the key and certificate as a
// pair, and only then writes key + chain as one PEM file (temp file + rename) into a private
// 0700 directory, which gRPC's FileWatcherCertificateProvider re-reads once a second. See
// docs/grpc.md.
//
// Roots: a CA file or directory (PeerVerifyOptions::verify.trust, reloaded when it changes), or
// the anchor a getcert fetch of the server established (ReloadingChannelOptions::anchor, an
// AnchorWatcher), re-established when a handshake's chain no longer reaches it.
//
// The library never logs: every reload and every verdict reaches the application through the
// callbacks below (WatchOptions::on_reload, VerdictLog::set_callback), for it to log.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"
#include "getcert/fetch.hpp"
#include "getcert/secret.hpp"
#include "getcert/verify.hpp"

namespace getcert::grpc_tls {

// ---------------------------------------------------------------------------------------------
// Identity from a key store, reloaded when the file changes

// Where a key store's password comes from. Read again at every reload, so a store re-issued
// with a new password (and a new password file next to it) loads. The first non-empty source
// wins: value, then file, then env. None given: the store has no password (or the empty one).
struct PasswordSource {
  std::optional<Secret> value;
  std::string file;  // its content, without one trailing "\n" or "\r\n"
  std::string env;   // name of an environment variable
};

struct KeystoreSource {
  // PKCS#12 (.p12/.pfx), JKS or JCEKS, PEM (one file: the private key and the certificates,
  // leaf first), or any of them as base64 text; recognised by content, never by name. May be
  // a symlink (Kubernetes mounts: tls.p12 -> ..data/tls.p12, ..data -> ..2026_12_01_...).
  std::string path;
  PasswordSource password;
  // The key entries' password when it differs from the store's (JKS, or a PKCS#12 whose
  // shrouded keys use another one); nullopt = the store's.
  std::optional<PasswordSource> key_password;
  // The identity to use when the store holds several (a JKS alias or a PKCS#12 friendlyName);
  // empty = the store's only private key that has its certificate.
  std::string alias;
};

enum class ReloadOutcome {
  loaded,    // the new identity is what gRPC presents from now on (new connections)
  rejected,  // the new file is unusable; the previous identity stays in place
};
std::string_view to_string(ReloadOutcome outcome) noexcept;  // "loaded", "rejected"

// One report per version of the file (a version: its bytes and the password they were read
// with). Never one per handshake: gRPC's handshakes never read the key store.
struct ReloadEvent {
  ReloadOutcome outcome = ReloadOutcome::loaded;
  std::string path;                 // KeystoreSource::path
  std::optional<Certificate> leaf;  // loaded: the new leaf
  // rejected: why, one line, with a stable code: malformed_input (truncated, not a key store),
  // wrong_password, invalid_argument (no key with its certificate: a key that does not match),
  // io_error (unreadable), unsupported, limit_exceeded.
  Error error;
  std::uint64_t generation = 0;  // identities loaded so far (1 = the first one)
};
using ReloadCallback = std::function<void(const ReloadEvent&)>;

struct WatchOptions {
  // inotify wakes the watcher as soon as the directory of the key store changes. It also
  // checks the file (one stat) at this interval, for changes inotify cannot see (NFS, an
  // in-place write behind a symlink into another directory). Bounded: at least 50 ms.
  std::chrono::milliseconds poll_interval{1000};
  // Called on the watcher's own thread for every version of the file after the first (the
  // first one is start()'s result). Must not block for long; may be empty.
  ReloadCallback on_reload;
  // Where the private 0700 directory for gRPC's copy is created; "" = $TMPDIR, else /tmp.
  // The directory and its file (0600) are removed when the watcher stops.
  std::string work_dir;
  // How often gRPC's FileWatcherCertificateProvider re-reads that copy (gRPC's minimum is 1).
  unsigned int grpc_refresh_seconds = 1;
};

// Watches one key store and keeps gRPC's copy of its identity current. Thread-safe.
class IdentityWatcher {
 public:
  // Loads the identity now (so a store that cannot be used fails here, with the same error
  // codes as ReloadEvent::error) and starts watching it.
  static Result<std::shared_ptr<IdentityWatcher>> start(KeystoreSource source,
                                                        WatchOptions options = {});
  IdentityWatcher(const IdentityWatcher&) = delete;
  IdentityWatcher& operator=(const IdentityWatcher&) = delete;
  ~IdentityWatcher();

  // The provider to give to Tls{Channel,Server}CredentialsOptions (identity only: roots are
  // getcert's business, see PeerVerifyOptions). One per watcher.
  std::shared_ptr<::grpc::experimental::CertificateProviderInterface> provider() const;
  // The leaf of the identity gRPC was last given, and how many identities were loaded.
  Certificate current_leaf() const;
  std::uint64_t generation() const;
  // The PEM file gRPC reads (private key first, then the chain), inside the 0700 directory.
  std::string pem_path() const;

  struct State;  // the watcher thread's state (private)

 private:
  explicit IdentityWatcher(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

// ---------------------------------------------------------------------------------------------
// Roots from the anchor a getcert fetch established, re-established when the server moves

struct AnchorSource {
  // What getcert::fetch dials to establish the anchor: "host:port" (gRPC's "dns:///host:port"
  // is accepted), usually the channel's own target.
  std::string endpoint;
  // How that fetch connects and judges the chain: fetch.verify.trust is the trust store the
  // anchor is taken from (empty = the system store), with its pins, name, timeouts. "h2" is
  // offered when fetch.connect.alpn is empty. The chain must verify (valid, not only with an
  // AIA download or an intermediate from the store: see getcert::trust_anchor_pem).
  FetchOptions fetch;
  // Re-fetches are bounded, so a server whose chain reaches no anchor the trust store allows
  // is not fetched from at every handshake: a fetch comes at least min_refetch_interval (at
  // least 1 s) after the one before; each fetch that establishes no new anchor (it failed, or
  // found the same one) doubles that wait, up to max_refetch_interval; a new anchor resets it.
  std::chrono::milliseconds min_refetch_interval{1000};
  std::chrono::milliseconds max_refetch_interval{60000};
  // Where the private 0700 directory holding the anchor (anchor.pem, verify_chain's trust
  // store) is created; "" = $TMPDIR, else /tmp. Removed when the watcher goes.
  std::string work_dir;
  // Called after each re-fetch that changed something (on the thread that asked for it: gRPC's
  // handshake thread, or refresh()'s caller): `loaded` with the new anchor in `leaf`, or
  // `rejected` with why the fetch established nothing (its Errc: connect_failed,
  // verification_failed, ...; the anchor then stays). `path` is the endpoint. A re-fetch that
  // finds the same anchor reports nothing. May be empty.
  ReloadCallback on_change;
};

// The trust anchor of one endpoint, as a getcert fetch established it, kept in a private file
// that getcert's verification reads as its only trust store. Thread-safe.
//
// Re-established on demand, never on a timer and never by re-reading per handshake: when a
// handshake's chain does not reach the anchor (unknown_issuer, untrusted_root, self_signed,
// missing_intermediate), the verifier calls refresh(), which fetches the endpoint again (bounded
// by the intervals above; concurrent callers wait for that one fetch) and adopts the new
// anchor only if that fetch verified against AnchorSource::fetch's trust store. The handshake
// is then judged once more against the new anchor. So a server that moves to a chain under a
// new root, trusted by that store, keeps being reached with no failed call, while trust stays
// narrowed to the one root the endpoint chains to in between.
class AnchorWatcher {
 public:
  // Fetches now: a chain that does not verify, or any fetch error, fails here (there is no
  // anchor to keep yet). Errors: those of getcert::fetch and trust_anchor_pem, io_error for the
  // private directory.
  static Result<std::shared_ptr<AnchorWatcher>> establish(AnchorSource source);
  AnchorWatcher(const AnchorWatcher&) = delete;
  AnchorWatcher& operator=(const AnchorWatcher&) = delete;
  ~AnchorWatcher();

  // Fetches again unless the wait since the last fetch (see AnchorSource) has not passed; waits
  // for a fetch another thread is making. Reports through AnchorSource::on_change.
  void refresh();
  Certificate current() const;       // the anchor in use
  std::uint64_t generation() const;  // anchors established so far (1 = the first)
  std::uint64_t fetches() const;     // fetches made, the first one included
  std::string pem_path() const;      // the file verify_chain reads (0600, in a 0700 directory)

  struct State;  // private

 private:
  explicit AnchorWatcher(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

// ---------------------------------------------------------------------------------------------
// getcert as the verifier of the peer's certificate

struct PeerVerifyOptions {
  // Passed to getcert::verify_chain for each handshake: the trust store (ca_file / ca_dir;
  // empty = the system store), pins, offline CRLs (crl_files), and any further fields (a
  // verification profile) as they are. The verifier never downloads: fetch_missing,
  // check_revocation and require_revocation are forced off, since the AIA, OCSP and CRL URLs
  // are written by the peer being judged. getcert keeps a loaded trust store
  // until the file behind it changes (a stat per verification), so a rotated CA file or
  // directory is used from the next handshake on, without reading it on every handshake.
  // Set per handshake, whatever they hold here: `name` (the channel's target host; servers:
  // none), `purpose` (server for channels, client for servers) and `from_handshake` (false:
  // gRPC does not pass a stapled OCSP response on). `at_time` is kept (nullopt = now).
  VerifyOptions verify;
  // Also reject a chain in which a certificate expires within this window (getcert's
  // --expires-in), so a service is told before its peer's certificate runs out.
  std::optional<std::chrono::seconds> expires_within;
  // Channels: verify against this name instead of the target's host (gRPC's
  // GRPC_SSL_TARGET_NAME_OVERRIDE_ARG is the usual reason).
  std::string name_override;
  // When set, the anchor is the only root: verify.trust is replaced by its file, and a chain
  // that does not reach it makes the verifier call anchor->refresh() and judge once more if the
  // anchor changed. ReloadingChannelOptions::anchor sets it.
  std::shared_ptr<AnchorWatcher> anchor;
};

// getcert's judgement of one handshake.
struct PeerVerdict {
  bool accepted = false;
  std::string name;  // what the leaf was checked against ("" for client certificates)
  // One line: "" when accepted; otherwise "getcert: NAME: CODE: reason" naming the first
  // problem (and "(+N more)"). gRPC fails the handshake with it, so it appears in the failed
  // call's status message.
  std::string reason;
  // Every problem: the verification's errors, then one `expired` problem per certificate
  // inside the expiry window.
  std::vector<VerifyProblem> problems;
  Verification verification;  // as verify_chain returned it
  std::vector<Certificate> presented;
  std::chrono::system_clock::time_point at;
};

// What a verifier decided, readable by the application while gRPC uses the verifier.
class VerdictLog {
 public:
  std::optional<PeerVerdict> last() const;
  std::uint64_t count() const;  // verifications done (one per handshake)
  // Called on gRPC's thread after each verification (after last() is updated); may be empty.
  void set_callback(std::function<void(const PeerVerdict&)> callback);
  // What the verifier calls after each verification.
  void record(const PeerVerdict& verdict);

  VerdictLog();
  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

struct GetcertVerifier {
  std::shared_ptr<::grpc::experimental::CertificateVerifier>
      verifier;  // for set_certificate_verifier
  std::shared_ptr<VerdictLog> verdicts;
};

// A gRPC certificate verifier that judges each handshake with getcert::verify_chain: the peer's
// full chain as sent (leaf first), `purpose`, and, for channels, the target's host name.
GetcertVerifier make_verifier(const PeerVerifyOptions& options, Purpose purpose);

// The one-line reason and the problem list of a verification, as PeerVerdict carries them
// (pure; exposed for tests and for programs that judge chains the same way elsewhere).
PeerVerdict judge(const std::vector<Certificate>& presented, const PeerVerifyOptions& options,
                  Purpose purpose, const std::string& name);

// ---------------------------------------------------------------------------------------------
// Credentials

struct ReloadingChannelOptions {
  std::optional<KeystoreSource> identity;  // the client certificate for mutual TLS, if any
  PeerVerifyOptions peer;                  // how getcert judges the server
  WatchOptions watch;
  // Trust the anchor a getcert fetch of the server establishes (see AnchorWatcher) instead of
  // peer.verify.trust, which must then be empty (the anchor's own trust store is
  // anchor->fetch.verify.trust).
  std::optional<AnchorSource> anchor;
};

// Keep it as long as channels made with `credentials` live: the watcher owns the private copy
// of the identity that gRPC reads, and removes it when it goes (members are destroyed in
// reverse order, so `credentials` goes before `identity`).
struct ReloadingChannelCredentials {
  std::shared_ptr<IdentityWatcher> identity;  // null without one
  std::shared_ptr<AnchorWatcher> anchor;      // null without ReloadingChannelOptions::anchor
  std::shared_ptr<VerdictLog> verdicts;
  std::shared_ptr<::grpc::ChannelCredentials> credentials;
};

// Channel credentials whose server certificate is judged by getcert alone (gRPC's own chain
// and host checks are switched off: getcert checks both, and more), and whose client identity
// (if any) follows the key store. Errors: invalid_argument (both anchor and peer.verify.trust
// given), those of IdentityWatcher::start, then those of AnchorWatcher::establish.
Result<ReloadingChannelCredentials> reloading_channel_credentials(
    const ReloadingChannelOptions& options);

enum class ClientCertificates {
  none,     // do not ask for one
  request,  // ask; a client without one gets in, one that is sent must pass getcert
  require,  // mutual TLS: every client must present a certificate that passes getcert
};

struct ReloadingServerOptions {
  KeystoreSource identity;  // the server's key store
  ClientCertificates client_certificates = ClientCertificates::none;
  PeerVerifyOptions peer;  // how getcert judges client certificates (purpose client, no name)
  WatchOptions watch;
};

// Keep it as long as the server runs (see ReloadingChannelCredentials).
struct ReloadingServerCredentials {
  std::shared_ptr<IdentityWatcher> identity;
  std::shared_ptr<VerdictLog> verdicts;  // null with ClientCertificates::none
  std::shared_ptr<::grpc::ServerCredentials> credentials;
};

Result<ReloadingServerCredentials> reloading_server_credentials(
    const ReloadingServerOptions& options);

}  // namespace getcert::grpc_tls
