#include "render_prometheus_probe.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "render_prometheus.hpp"

namespace getcert::cli {
namespace {

std::string seconds_text(double seconds) {
  std::ostringstream out;
  out.precision(6);
  out << std::fixed << seconds;
  return out.str();
}

// One metric family: written once with its HELP and TYPE, then every sample, as the text
// format requires (a family's samples must not be split up).
class Families {
 public:
  void add(const std::string& name, const std::string& help, const std::string& labels,
           const std::string& value) {
    auto& f = families_[name];
    if (f.help.empty()) {
      f.help = help;
      order_.push_back(name);
    }
    f.samples.push_back(name + (labels.empty() ? "" : "{" + labels + "}") + " " + value);
  }
  // A family with HELP and TYPE but no sample yet (so that it is documented in every answer).
  void declare(const std::string& name, const std::string& help) {
    auto& f = families_[name];
    if (f.help.empty()) {
      f.help = help;
      order_.push_back(name);
    }
  }
  std::string text() const {
    std::string out;
    for (const auto& name : order_) {
      const auto& f = families_.at(name);
      out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " gauge\n";
      for (const auto& s : f.samples) out += s + "\n";
    }
    return out;
  }

 private:
  struct Family {
    std::string help;
    std::vector<std::string> samples;
  };
  std::map<std::string, Family> families_;
  std::vector<std::string> order_;
};

std::string label(const std::string& name, const std::string& value) {
  return name + "=\"" + prometheus_label_value(value) + "\"";
}

constexpr const char* kNotBefore = "getcert_cert_not_before_seconds";
constexpr const char* kNotAfter = "getcert_cert_not_after_seconds";

void add_chain(Families& out, const std::vector<Certificate>& chain, const std::string& which,
               const std::string& extra) {
  for (std::size_t depth = 0; depth < chain.size(); ++depth) {
    const Certificate& c = chain[depth];
    const std::string labels =
        extra + label("chain", which) + "," + label("depth", std::to_string(depth)) + "," +
        label("serial", c.serial) + "," + label("subject_cn", c.subject_cn) + "," +
        label("issuer_cn", c.issuer_cn) + "," + label("sha256", c.sha256);
    out.add(kNotBefore,
            "notBefore of each certificate as a Unix time; chain is presented (as sent, or as "
            "read from a file) or verified (leaf to trust anchor).",
            labels, std::to_string(c.not_before));
    out.add(kNotAfter, "notAfter of each certificate as a Unix time; labels as for notBefore.",
            labels, std::to_string(c.not_after));
  }
}

std::string problem_list(const Verification& v) {
  std::string list;
  for (const auto& e : v.errors) {
    const std::string code(to_string(e.code));
    if (list.find(code) == std::string::npos) list += (list.empty() ? "" : ",") + code;
  }
  return list;
}

void add_verification(Families& out, const Verification& v, const std::string& extra) {
  out.add("getcert_verification_info",
          "The verdict and its problem codes (comma-separated, empty when valid); value 1.",
          extra + label("verdict", std::string(to_string(v.verdict))) + "," +
              label("problems", problem_list(v)) + "," + label("trust_store", v.trust_store),
          "1");
  for (const auto& e : v.errors) {
    out.add("getcert_verification_problem",
            "One series per verification error: its code and the depth of the certificate.",
            extra + label("code", std::string(to_string(e.code))) + "," +
                label("depth", std::to_string(e.depth)),
            "1");
  }
  for (const auto& r : v.revocation) {
    const std::string labels = extra + label("depth", std::to_string(r.depth)) + "," +
                               label("source", std::string(to_string(r.source)));
    out.add("getcert_revocation_status_info",
            "Revocation evidence per certificate: status good, revoked, unknown, error or none; "
            "source ocsp-staple, ocsp or crl; value 1.",
            labels + "," + label("status", std::string(to_string(r.status))), "1");
    if (r.this_update) {
      out.add("getcert_revocation_this_update_seconds",
              "thisUpdate of the OCSP response or CRL as a Unix time.", labels,
              std::to_string(*r.this_update));
    }
    if (r.next_update) {
      out.add("getcert_revocation_next_update_seconds",
              "nextUpdate of the OCSP response or CRL as a Unix time.", labels,
              std::to_string(*r.next_update));
    }
  }
  out.add("getcert_chain_issues", "How many chain issues the sent chain has (0: none).",
          extra.empty() ? "" : extra.substr(0, extra.size() - 1),
          std::to_string(v.chain_issues.size()));
  for (const auto& issue : v.chain_issues) {
    out.add("getcert_chain_issue_info",
            "One series per chain issue: root_sent, out_of_order, duplicate, unrelated, "
            "expired_unneeded; depth in the presented chain (-1: none).",
            extra + label("code", std::string(to_string(issue.code))) + "," +
                label("depth", std::to_string(issue.depth.value_or(-1))),
            "1");
  }
}

}  // namespace

std::string render_probe_metrics(const ProbeOutcome& outcome) {
  Families out;
  out.add("getcert_probe_success",
          "1 when the target was reached and its chain verified (and, with an expiry window, "
          "does not expire within it); reason says why not.",
          label("reason", outcome.reason), outcome.success ? "1" : "0");
  out.add("getcert_probe_duration_seconds", "Wall time of the whole probe.", "",
          seconds_text(static_cast<double>(outcome.duration.count()) / 1e6));
  std::map<std::string, double> steps;
  for (const auto& t : outcome.timings) {
    steps[std::string(to_string(t.step))] += static_cast<double>(t.duration.count()) / 1e6;
  }
  for (const auto& [step, seconds] : steps) {
    out.add("getcert_probe_step_duration_seconds",
            "Time spent in each step (resolve, connect, proxy, starttls, handshake, verify, aia, "
            "ocsp, crl), summed over its attempts.",
            label("step", step), seconds_text(seconds));
  }

  const std::vector<Certificate>* expiry_chain = nullptr;
  if (outcome.fetched) {
    const FetchResult& r = *outcome.fetched;
    out.add("getcert_tls_version_info", "The negotiated TLS version (value always 1).",
            label("version", r.tls.version), "1");
    out.add("getcert_tls_cipher_info", "The negotiated cipher suite, IANA name (value 1).",
            label("cipher", r.tls.cipher), "1");
    out.add("getcert_ocsp_staple_present", "1 when the server stapled an OCSP response.", "",
            r.tls.ocsp_stapled ? "1" : "0");
    out.add("getcert_client_certificate_requested",
            "1 when the server asked for a client certificate.", "",
            r.tls.client_certificate_requested ? "1" : "0");
    add_chain(out, r.presented_chain, "presented", "");
    add_chain(out, r.verification.verified_chain, "verified", "");
    add_verification(out, r.verification, "");
    expiry_chain =
        r.verification.verified_chain.empty() ? &r.presented_chain : &r.verification.verified_chain;
  }
  std::vector<Certificate> all_files;
  for (const auto& f : outcome.files) {
    const std::string file = label("file", f.path) + ",";
    add_chain(out, f.certificates, "presented", file);
    if (f.verification) {
      add_chain(out, f.verification->verified_chain, "verified", file);
      add_verification(out, *f.verification, file);
    }
    all_files.insert(all_files.end(), f.certificates.begin(), f.certificates.end());
  }
  if (!outcome.files.empty()) expiry_chain = &all_files;
  if (expiry_chain != nullptr && !expiry_chain->empty()) {
    const auto earliest = std::min_element(
        expiry_chain->begin(), expiry_chain->end(),
        [](const Certificate& a, const Certificate& b) { return a.not_after < b.not_after; });
    out.add("getcert_chain_expiry_seconds",
            "Earliest notAfter of the verified chain (of the presented chain, or of every file, "
            "when nothing verified) as a Unix time.",
            "", std::to_string(earliest->not_after));
  }
  // Documented in every answer, so that a failed probe still says what it would carry.
  out.declare(kNotAfter, "notAfter of each certificate as a Unix time.");
  return out.text();
}

}  // namespace getcert::cli
