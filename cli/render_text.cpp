#include <sstream>

#include "getcert/text.hpp"
#include "render.hpp"

namespace getcert::cli {
namespace {

std::string with_colons(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    if (i != 0) out += ':';
    out += hex.substr(i, 2);
  }
  return out;
}

std::string join_sans(const SubjectAltNames& sans) {
  std::string out;
  auto add = [&out](const char* kind, const std::vector<std::string>& values) {
    for (const auto& v : values) {
      out += (out.empty() ? "" : ", ") + std::string(kind) + escape_untrusted(v);
    }
  };
  add("DNS:", sans.dns);
  add("IP:", sans.ip);
  add("URI:", sans.uri);
  add("email:", sans.email);
  return out.empty() ? "(none)" : out;
}

std::string days_text(std::int64_t days) {
  if (days < 0) return "EXPIRED " + std::to_string(-days) + " days ago";
  if (days == 0) return "expires within a day";
  return std::to_string(days) + (days == 1 ? " day left" : " days left");
}

std::string key_text(const KeyInfo& key) {
  std::string out = escape_untrusted(key.type);
  if (!key.curve.empty()) out += " " + escape_untrusted(key.curve);
  if (key.bits > 0) out += " (" + std::to_string(key.bits) + " bits)";
  return out;
}

}  // namespace

std::string certificate_text(const Certificate& cert, std::int64_t now, const std::string& indent) {
  std::ostringstream o;
  o << indent << "Subject:    " << escape_untrusted(cert.subject) << "\n";
  o << indent << "Issuer:     " << escape_untrusted(cert.issuer) << "\n";
  o << indent << "Validity:   " << format_utc(cert.not_before) << " to "
    << format_utc(cert.not_after);
  if (now < cert.not_before) {
    o << " (NOT YET VALID)\n";
  } else {
    o << " (" << days_text(cert.days_left(now)) << ")\n";
  }
  o << indent << "SANs:       " << join_sans(cert.sans) << "\n";
  o << indent << "Key:        " << key_text(cert.key) << "\n";
  o << indent << "Signature:  " << escape_untrusted(cert.signature_algorithm) << "\n";
  o << indent << "Serial:     " << escape_untrusted(cert.serial) << "\n";
  o << indent << "CA:         " << (cert.is_ca ? "yes" : "no")
    << (cert.self_signed ? ", self-signed" : "") << "\n";
  o << indent << "SHA-256:    " << with_colons(cert.sha256) << "\n";
  o << indent << "SHA-1:      " << with_colons(cert.sha1) << "\n";
  o << indent << "SPKI pin:   sha256/" << escape_untrusted(cert.spki_sha256) << "\n";
  if (cert.must_staple) o << indent << "Must-staple: yes (TLS Feature status_request)\n";
  for (const auto& sct : cert.scts) {
    o << indent << "SCT:        log " << escape_untrusted(sct.log_id) << ", "
      << format_utc_ms(sct.timestamp_ms) << ", " << escape_untrusted(sct.signature_algorithm)
      << (sct.version == 0 ? "" : ", unknown version") << "\n";
  }
  return o.str();
}

std::string verification_text(const Verification& v) {
  std::ostringstream o;
  const std::string trust_store = escape_untrusted(v.trust_store);
  const std::string profile(to_string(v.profile));
  if (v.ok) {
    o << "Verdict:    OK (trusted by " << trust_store << "; profile " << profile << ")\n";
  } else {
    o << "Verdict:    FAILED (" << (v.trusted ? "trusted chain" : "untrusted chain") << ", "
      << (v.hostname_ok ? "name ok" : "name mismatch") << "; trust store " << trust_store
      << "; profile " << profile << ")\n";
  }
  for (const auto& e : v.errors) {
    o << "  - [depth " << e.depth << "] " << to_string(e.code) << ": " << escape_untrusted(e.reason)
      << "\n";
  }
  for (const auto& w : v.warnings) {
    o << "  warning: " << to_string(w.code) << ": " << escape_untrusted(w.message) << "\n";
  }
  for (const auto& a : v.accepted_by) {
    o << "  accepted by " << to_string(a.profile) << ": " << escape_untrusted(a.reason) << "\n";
  }
  for (const auto& r : v.rejected_paths) {
    std::string names;
    for (const auto& c : r.chain) names += (names.empty() ? "" : " -> ") + c.display_name();
    o << "  rejected path: " << escape_untrusted(names) << "\n";
    for (const auto& p : r.problems) {
      o << "    - [depth " << p.depth << "] " << to_string(p.code) << ": "
        << escape_untrusted(p.reason) << "\n";
    }
  }
  if (!v.chain_issues.empty()) o << "Chain issues (what the server should fix):\n";
  for (const auto& c : v.chain_issues) {
    o << "  - " << (c.depth ? "[presented " + std::to_string(*c.depth) + "] " : std::string())
      << to_string(c.code) << ": " << escape_untrusted(c.message) << "\n";
  }
  return o.str();
}

std::string fetch_text(const FetchResult& r, std::int64_t now) {
  std::ostringstream o;
  const Endpoint ep{r.target.host, r.target.port, is_ip_literal(r.target.host)};
  o << "Target:     " << escape_untrusted(ep.to_string()) << " ("
    << escape_untrusted(r.target.address) << "), SNI "
    << (r.target.sni.empty() ? "(none)" : escape_untrusted(r.target.sni)) << "\n";
  o << "TLS:        " << escape_untrusted(r.tls.version) << ", " << escape_untrusted(r.tls.cipher)
    << (r.tls.alpn.empty() ? "" : ", ALPN " + escape_untrusted(r.tls.alpn))
    << ", OCSP staple: " << (r.tls.ocsp_stapled ? "yes" : "no") << "\n";
  if (r.tls.client_certificate_requested) {
    o << "Client cert: requested by the server, "
      << (r.tls.client_certificate_sent ? "sent" : "none sent")
      << (r.tls.handshake_completed ? "; handshake completed"
                                    : "; the server refused to complete the handshake")
      << "\n";
    if (r.tls.acceptable_client_cas.empty()) {
      o << "  acceptable CAs: (the server names none)\n";
    }
    for (const auto& ca : r.tls.acceptable_client_cas) {
      o << "  acceptable CA: " << escape_untrusted(ca) << "\n";
    }
  }
  o << verification_text(r.verification);
  o << "\nPresented chain (" << r.presented_chain.size() << "):\n";
  for (std::size_t i = 0; i < r.presented_chain.size(); ++i) {
    o << "[" << i << "]\n" << certificate_text(r.presented_chain[i], now, "  ");
  }
  const auto& verified = r.verification.verified_chain;
  if (!verified.empty()) {
    o << "\nVerified chain (" << verified.size() << "):\n";
    for (std::size_t i = 0; i < verified.size(); ++i) {
      o << "[" << i << "] " << escape_untrusted(verified[i].subject)
        << (i + 1 == verified.size() ? "  (trust anchor)" : "") << "\n";
    }
  }
  return o.str();
}

std::string verdict_line(const FetchResult& r, std::int64_t now) {
  const Endpoint ep{r.target.host, r.target.port, is_ip_literal(r.target.host)};
  std::ostringstream o;
  o << escape_untrusted(ep.to_string()) << ": ";
  if (r.verification.ok) {
    o << "verified";
  } else {
    o << "NOT verified";
    if (!r.verification.errors.empty()) {
      o << ": " << escape_untrusted(r.verification.errors.front().reason);
    }
    if (r.verification.errors.size() > 1) {
      o << " (+" << r.verification.errors.size() - 1 << " more)";
    }
  }
  o << " [" << escape_untrusted(r.tls.version) << ", " << r.presented_chain.size() << " certificate"
    << (r.presented_chain.size() == 1 ? "" : "s");
  if (!r.presented_chain.empty()) {
    o << ", leaf "
      << (r.presented_chain.front().days_left(now) < 0
              ? "expired"
              : "expires in " + std::to_string(r.presented_chain.front().days_left(now)) + " days");
  }
  o << "]";
  return o.str();
}

std::string show_text(const std::string& file, const std::string& format,
                      const std::vector<Certificate>& certs,
                      const std::optional<Verification>& verdict, std::int64_t now) {
  std::string out = "File:       " + escape_untrusted(file) + " (" + format + ", " +
                    std::to_string(certs.size()) + " certificate" + (certs.size() == 1 ? "" : "s") +
                    ")\n";
  if (verdict) out += verification_text(*verdict);
  for (std::size_t i = 0; i < certs.size(); ++i) {
    out += "[" + std::to_string(i) + "]\n" + certificate_text(certs[i], now, "  ");
  }
  return out;
}

}  // namespace getcert::cli
