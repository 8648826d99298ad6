#include "render_prometheus.hpp"

#include <algorithm>
#include <sstream>

#include "getcert/text.hpp"

namespace getcert::cli {
namespace {

std::string seconds_text(double seconds) {
  std::ostringstream out;
  out.precision(3);
  out << std::fixed << seconds;
  return out.str();
}

void family(std::string& out, const char* name, const char* help,
            const std::vector<std::string>& samples) {
  out += std::string("# HELP ") + name + " " + help + "\n";
  out += std::string("# TYPE ") + name + " gauge\n";
  for (const auto& s : samples) out += std::string(name) + s + "\n";
}

}  // namespace

std::string prometheus_label_value(const std::string& text) {
  // The value must be valid UTF-8, so bytes that are not become `\xNN`. Doubling every
  // backslash of the original first keeps that one-to-one: the byte 0xff gives `\xff`, the four
  // characters `\xff` give `\\xff`. Two distinct targets never share a series.
  std::string doubled;
  doubled.reserve(text.size());
  for (const char c : text) {
    doubled += c;
    if (c == '\\') doubled += c;
  }
  std::string out;
  for (const char c : valid_utf8(doubled)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void PrometheusReport::add_change(const std::string& target_label, ChangeKind kind) {
  ++change_counts_[static_cast<std::size_t>(kind)];
  change_info_.push_back("{" + target_label + ",change=\"" + std::string(to_string(kind)) +
                         "\"} 1");
}

void PrometheusReport::add_gone(const GoneEntry& gone) {
  // A gone entry's input is in no result of this run, so its series cannot clash with one.
  if (!seen_.insert(gone.input).second) return;
  add_change("target=\"" + prometheus_label_value(gone.input) + "\"", ChangeKind::gone);
}

void PrometheusReport::add(const ManyResult& result, const Change* change) {
  if (!seen_.insert(result.input).second) return;
  const std::string target = "target=\"" + prometheus_label_value(result.input) + "\"";
  if (change != nullptr) add_change(target, change->kind);
  const bool verified = result.result && result.result->verification.ok;
  success_.push_back("{" + target + "} " + (verified ? "1" : "0"));
  duration_.push_back("{" + target + "} " +
                      seconds_text(static_cast<double>(result.duration.count()) / 1000.0));
  if (!result.result) return;
  const FetchResult& r = *result.result;
  // The chain that matters for expiry: the verified one (it includes the trust anchor), else
  // what the server presented, so a failing endpoint still reports when it runs out.
  const auto& chain =
      r.verification.verified_chain.empty() ? r.presented_chain : r.verification.verified_chain;
  for (std::size_t depth = 0; depth < chain.size(); ++depth) {
    const Certificate& c = chain[depth];
    not_after_.push_back("{" + target + ",depth=\"" + std::to_string(depth) + "\",subject=\"" +
                         prometheus_label_value(c.subject) + "\",sha256=\"" + c.sha256 + "\"} " +
                         std::to_string(c.not_after));
  }
  if (!chain.empty()) {
    const auto earliest = std::min_element(
        chain.begin(), chain.end(),
        [](const Certificate& a, const Certificate& b) { return a.not_after < b.not_after; });
    chain_expiry_.push_back("{" + target + "} " + std::to_string(earliest->not_after));
  }
  if (!r.tls.version.empty()) {
    tls_version_.push_back("{" + target + ",version=\"" + prometheus_label_value(r.tls.version) +
                           "\"} 1");
  }
}

std::string PrometheusReport::text() const {
  std::string out;
  family(out, "getcert_probe_success",
         "1 when the chain was fetched and verified, else 0 (network, TLS or verification "
         "failure).",
         success_);
  family(out, "getcert_probe_duration_seconds",
         "Wall time of the fetch (resolve, connect, handshake, verify).", duration_);
  family(out, "getcert_cert_not_after_seconds",
         "notAfter of each certificate as a Unix time, by depth in the verified chain (the "
         "presented chain when nothing verified).",
         not_after_);
  family(out, "getcert_chain_expiry_seconds",
         "Earliest notAfter of the verified chain (of the presented chain when verification "
         "failed) as a Unix time.",
         chain_expiry_);
  family(out, "getcert_tls_version_info", "The negotiated TLS version (value always 1).",
         tls_version_);
  if (!track_changes_) return out;
  family(out, "getcert_change_info",
         "What changed since the --baseline run for each target, or a baseline target gone "
         "from this run (value always 1).",
         change_info_);
  std::vector<std::string> counts;
  for (std::size_t i = 0; i < kChangeKindCount; ++i) {
    counts.push_back("{change=\"" + std::string(to_string(static_cast<ChangeKind>(i))) + "\"} " +
                     std::to_string(change_counts_[i]));
  }
  family(out, "getcert_changes", "Targets of each change class since the --baseline run.", counts);
  return out;
}

}  // namespace getcert::cli
