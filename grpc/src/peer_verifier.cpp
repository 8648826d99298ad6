// getcert as gRPC's certificate verifier: every handshake's chain goes through
// getcert::verify_chain (plus the expiry window), and the verdict is kept for the application.

#include <ctime>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/support/status.h>

#include "getcert/grpc_reloading.hpp"
#include "getcert/text.hpp"
#include "peer_verifier.hpp"

namespace getcert::grpc_tls {

struct VerdictLog::Impl {
  mutable std::mutex mutex;
  std::optional<PeerVerdict> last;
  std::uint64_t count = 0;
  std::function<void(const PeerVerdict&)> callback;
};

VerdictLog::VerdictLog() : impl_(std::make_shared<Impl>()) {}

std::optional<PeerVerdict> VerdictLog::last() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last;
}

std::uint64_t VerdictLog::count() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->count;
}

void VerdictLog::set_callback(std::function<void(const PeerVerdict&)> callback) {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->callback = std::move(callback);
}

void VerdictLog::record(const PeerVerdict& verdict) {
  std::function<void(const PeerVerdict&)> callback;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->last = verdict;
    ++impl_->count;
    callback = impl_->callback;
  }
  if (callback) callback(verdict);
}

namespace {

std::string utc_date(std::int64_t when) {
  const auto seconds = static_cast<std::time_t>(when);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return {text, n};
}

std::string duration_text(std::chrono::seconds window) {
  const auto s = window.count();
  if (s % 86400 == 0) return std::to_string(s / 86400) + "d";
  if (s % 3600 == 0) return std::to_string(s / 3600) + "h";
  return std::to_string(s) + "s";
}

// One line, whatever a certificate's names or a nested error carried.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// gRPC hands the verifier the channel's target authority ("host:port", "[v6]:port", or a bare
// host); getcert checks the host part.
std::string host_of(std::string_view target) {
  for (std::string_view prefix : {std::string_view("dns:///"), std::string_view("dns:")}) {
    if (target.substr(0, prefix.size()) == prefix) target.remove_prefix(prefix.size());
  }
  if (!target.empty() && target.front() == '[') {
    const auto close = target.find(']');
    if (close != std::string_view::npos) return std::string(target.substr(1, close - 1));
  }
  const auto colon = target.find(':');
  if (colon != std::string_view::npos && target.find(':', colon + 1) == std::string_view::npos) {
    return std::string(target.substr(0, colon));
  }
  return std::string(target);
}

// The chain reaches no certificate of the trust store: with an anchor as the only root, the
// sign that the server moved to another CA.
bool misses_anchor(const PeerVerdict& verdict) {
  for (const auto& problem : verdict.problems) {
    switch (problem.code) {
      case ProblemCode::unknown_issuer:
      case ProblemCode::untrusted_root:
      case ProblemCode::self_signed:
      case ProblemCode::missing_intermediate:
        return true;
      default:
        break;
    }
  }
  return false;
}

class Verifier final : public ::grpc::experimental::ExternalCertificateVerifier {
 public:
  Verifier(PeerVerifyOptions options, Purpose purpose, bool certificate_optional,
           std::shared_ptr<VerdictLog> log)
      : options_(std::move(options)),
        purpose_(purpose),
        certificate_optional_(certificate_optional),
        log_(std::move(log)) {}

  // Synchronous: verify_chain runs on gRPC's handshake thread, CPU only (judge() turns every
  // download off).
  bool Verify(::grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(::grpc::Status)> /*callback*/,
              ::grpc::Status* sync_status) override {
    const ::grpc::string_ref full = request->peer_cert_full_chain();
    const ::grpc::string_ref leaf = request->peer_cert();
    // A client's chain as a server sees it comes from OpenSSL's SSL_get_peer_cert_chain, which
    // leaves the client's own certificate out; getcert needs the chain as sent, leaf first.
    std::string pem(full.data(), full.size());
    if (!leaf.empty() && pem.find(std::string_view(leaf.data(), leaf.size())) != 0) {
      pem.insert(0, std::string(leaf.data(), leaf.size()));
    }
    std::string name;
    if (purpose_ == Purpose::server) {
      const ::grpc::string_ref target = request->target_name();
      name = options_.name_override.empty()
                 ? host_of(std::string_view(target.data(), target.size()))
                 : options_.name_override;
    }
    PeerVerdict verdict;
    if (pem.empty() && certificate_optional_) {
      verdict.accepted = true;
      verdict.at = std::chrono::system_clock::now();
    } else if (auto certs = parse_certificates_pem(pem); !certs) {
      verdict.name = name;
      verdict.at = std::chrono::system_clock::now();
      verdict.reason = one_line("getcert: " + (name.empty() ? std::string("peer") : name) +
                                ": the peer sent no certificate getcert can read (" +
                                certs.error().message + ")");
    } else {
      const std::uint64_t anchor_seen = options_.anchor ? options_.anchor->generation() : 0;
      verdict = judge(*certs, options_, purpose_, name);
      // The server may have moved to a chain under another root: establish the anchor again
      // (bounded by the watcher's interval) and judge once more only if it changed.
      if (!verdict.accepted && options_.anchor && misses_anchor(verdict)) {
        options_.anchor->refresh();
        if (options_.anchor->generation() != anchor_seen) {
          verdict = judge(*certs, options_, purpose_, name);
        }
      }
    }
    log_->record(verdict);
    *sync_status = verdict.accepted
                       ? ::grpc::Status::OK
                       : ::grpc::Status(::grpc::StatusCode::UNAUTHENTICATED, verdict.reason);
    return true;
  }

  void Cancel(::grpc::experimental::TlsCustomVerificationCheckRequest* /*request*/) override {}

 private:
  PeerVerifyOptions options_;
  Purpose purpose_;
  bool certificate_optional_;
  std::shared_ptr<VerdictLog> log_;
};

}  // namespace

PeerVerdict judge(const std::vector<Certificate>& presented, const PeerVerifyOptions& options,
                  Purpose purpose, const std::string& name) {
  PeerVerdict verdict;
  verdict.name = name;
  verdict.presented = presented;
  verdict.at = std::chrono::system_clock::now();
  VerifyOptions verify = options.verify;
  if (options.anchor) verify.trust = TrustOptions{options.anchor->pem_path(), ""};
  verify.name = name;
  verify.purpose = purpose;
  // gRPC does not pass the stapled OCSP response on, so a must-staple leaf cannot be judged
  // as a handshake.
  verify.from_handshake = false;
  // A handshake never leaves the machine: the AIA, OCSP and CRL URLs come from the peer's own
  // certificate, written by whoever connects, and this runs on gRPC's handshake thread. So no
  // download of any kind, whatever the options hold; offline CRLs (verify.crl_files) still
  // count.
  verify.fetch_missing = false;
  verify.check_revocation = false;
  verify.require_revocation = false;
  const std::string who =
      "getcert: " +
      (name.empty()
           ? "client certificate " +
                 quote_name(presented.empty() ? std::string() : presented.front().display_name())
           : name);
  auto result = verify_chain(presented, verify);
  if (!result) {
    verdict.reason = one_line(who + ": cannot verify: " + result.error().message);
    return verdict;
  }
  verdict.verification = std::move(*result);
  verdict.problems = verdict.verification.errors;
  if (verdict.verification.ok && options.expires_within) {
    const std::int64_t now =
        verify.at_time ? *verify.at_time
                       : static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                                       verdict.at.time_since_epoch())
                                                       .count());
    const std::int64_t limit = now + options.expires_within->count();
    int depth = 0;
    for (const auto& cert : verdict.verification.verified_chain) {
      if (cert.not_after <= limit) {
        const auto days = cert.days_left(now);
        verdict.problems.push_back(
            {depth, ProblemCode::expired,
             "certificate " + quote_name(cert.display_name()) + " expires in " +
                 std::to_string(days) + (days == 1 ? " day" : " days") + " (" +
                 utc_date(cert.not_after) + "), within the expiry window of " +
                 duration_text(*options.expires_within)});
      }
      ++depth;
    }
  }
  verdict.accepted = verdict.verification.ok && verdict.problems.empty();
  if (!verdict.accepted) {
    if (verdict.problems.empty()) {
      verdict.reason = one_line(who + ": " + std::string(to_string(verdict.verification.verdict)));
    } else {
      const auto& first = verdict.problems.front();
      verdict.reason =
          one_line(who + ": " + std::string(to_string(first.code)) + ": " + first.reason);
      if (verdict.problems.size() > 1) {
        verdict.reason += " (+" + std::to_string(verdict.problems.size() - 1) + " more)";
      }
    }
  }
  return verdict;
}

GetcertVerifier make_verifier(const PeerVerifyOptions& options, Purpose purpose) {
  return detail::make_verifier(options, purpose, false);
}

GetcertVerifier detail::make_verifier(const PeerVerifyOptions& options, Purpose purpose,
                                      bool certificate_optional) {
  GetcertVerifier made;
  made.verdicts = std::make_shared<VerdictLog>();
  made.verifier = ::grpc::experimental::ExternalCertificateVerifier::Create<Verifier>(
      options, purpose, certificate_optional, made.verdicts);
  return made;
}

}  // namespace getcert::grpc_tls
