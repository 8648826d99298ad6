#include "getcert/text.hpp"
#include "render.hpp"

namespace getcert::cli {
namespace {

void make_valid_utf8(Json& node) {
  if (node.is_string()) {
    auto& text = node.get_ref<std::string&>();
    if (!is_valid_utf8(text)) text = valid_utf8(text);
    return;
  }
  if (node.is_array()) {
    for (auto& element : node) make_valid_utf8(element);
    return;
  }
  if (!node.is_object()) return;
  bool keys_valid = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    keys_valid = keys_valid && is_valid_utf8(it.key());
    make_valid_utf8(it.value());
  }
  // Keys are ours today; rebuilding keeps the rule true should one ever come from outside.
  if (keys_valid) return;
  Json rebuilt = Json::object();
  for (auto it = node.begin(); it != node.end(); ++it) {
    rebuilt[valid_utf8(it.key())] = std::move(it.value());
  }
  node = std::move(rebuilt);
}

}  // namespace

Json certificate_json(const Certificate& cert, std::int64_t now) {
  Json j;
  j["subject"] = cert.subject;
  j["issuer"] = cert.issuer;
  j["serial"] = cert.serial;
  j["not_before"] = format_utc(cert.not_before);
  j["not_after"] = format_utc(cert.not_after);
  j["days_left"] = cert.days_left(now);
  j["sans"] = {{"dns", cert.sans.dns},
               {"ip", cert.sans.ip},
               {"uri", cert.sans.uri},
               {"email", cert.sans.email}};
  j["key"] = {{"type", cert.key.type},
              {"bits", cert.key.bits},
              {"curve", cert.key.curve.empty() ? Json(nullptr) : Json(cert.key.curve)}};
  j["signature_algorithm"] = cert.signature_algorithm;
  j["is_ca"] = cert.is_ca;
  j["self_signed"] = cert.self_signed;
  j["sha256"] = cert.sha256;
  j["sha1"] = cert.sha1;
  j["spki_sha256"] = cert.spki_sha256;
  j["tbs_sha256"] = cert.tbs_sha256;
  Json scts = Json::array();
  for (const auto& sct : cert.scts) {
    scts.push_back({{"version", sct.version},
                    {"log_id", sct.log_id},
                    {"timestamp", format_utc_ms(sct.timestamp_ms)},
                    {"signature_algorithm", sct.signature_algorithm}});
  }
  j["scts"] = std::move(scts);
  j["must_staple"] = cert.must_staple;
  j["pem"] = cert.pem();
  return j;
}

Json verification_json(const Verification& v) {
  Json errors = Json::array();
  for (const auto& e : v.errors) {
    errors.push_back(
        {{"depth", e.depth}, {"code", std::string(to_string(e.code))}, {"reason", e.reason}});
  }
  auto notes_json = [](const std::vector<VerifyNote>& notes) {
    Json out = Json::array();
    for (const auto& n : notes) {
      out.push_back({{"code", std::string(to_string(n.code))},
                     {"depth", n.depth ? Json(*n.depth) : Json(nullptr)},
                     {"message", valid_utf8(n.message)}});
    }
    return out;
  };
  Json revocation = Json::array();
  auto time_or_null = [](const std::optional<std::int64_t>& t) {
    return t ? Json(format_utc(*t)) : Json(nullptr);
  };
  for (const auto& r : v.revocation) {
    revocation.push_back({{"depth", r.depth},
                          {"source", std::string(to_string(r.source))},
                          {"url", r.url.empty() ? Json(nullptr) : Json(r.url)},
                          {"status", std::string(to_string(r.status))},
                          {"detail", r.detail.empty() ? Json(nullptr) : Json(r.detail)},
                          {"produced_at", time_or_null(r.produced_at)},
                          {"this_update", time_or_null(r.this_update)},
                          {"next_update", time_or_null(r.next_update)},
                          {"revoked_at", time_or_null(r.revoked_at)}});
  }
  Json fetched = Json::array();
  for (const auto& c : v.fetched_intermediates) fetched.push_back(c.subject);
  Json accepted_by = Json::array();
  for (const auto& a : v.accepted_by) {
    accepted_by.push_back(
        {{"profile", std::string(to_string(a.profile))}, {"reason", valid_utf8(a.reason)}});
  }
  Json rejected_paths = Json::array();
  for (const auto& r : v.rejected_paths) {
    Json chain = Json::array();
    for (const auto& c : r.chain) chain.push_back({{"subject", c.subject}, {"sha256", c.sha256}});
    Json problems = Json::array();
    for (const auto& e : r.problems) {
      problems.push_back(
          {{"depth", e.depth}, {"code", std::string(to_string(e.code))}, {"reason", e.reason}});
    }
    rejected_paths.push_back({{"chain", chain}, {"problems", problems}});
  }
  const PathSearch& search = v.path_search;
  return {{"ok", v.ok},
          {"verdict", std::string(to_string(v.verdict))},
          {"profile", std::string(to_string(v.profile))},
          {"profile_ok", v.profile_ok},
          {"accepted_by", accepted_by},
          {"hostname_ok", v.hostname_ok},
          {"trusted", v.trusted},
          {"errors", errors},
          {"warnings", notes_json(v.warnings)},
          {"chain_issues", notes_json(v.chain_issues)},
          {"trust_store", v.trust_store},
          {"trust_anchor",
           v.verified_chain.empty() ? Json(nullptr) : Json(v.verified_chain.back().subject)},
          {"fetched_intermediates", fetched},
          {"revocation", revocation},
          {"rejected_paths", rejected_paths},
          {"path_search",
           {{"ran", search.ran},
            {"candidate_paths", search.candidate_paths},
            {"pruned_candidates", search.pruned_candidates},
            {"signature_checks", search.signature_checks},
            {"build_calls", search.build_calls},
            {"name_constraint_comparisons", search.name_constraint_comparisons},
            {"budget_exhausted", search.budget_exhausted}}}};
}

Json fetch_json(const FetchResult& result, std::int64_t now, bool with_timings) {
  Json j;
  j["schema"] = kJsonSchema;
  j["target"] = {{"host", result.target.host},
                 {"port", result.target.port},
                 {"sni", result.target.sni.empty() ? Json(nullptr) : Json(result.target.sni)},
                 {"address", result.target.address}};
  j["tls"] = {{"version", result.tls.version},
              {"cipher", result.tls.cipher},
              {"alpn", result.tls.alpn.empty() ? Json(nullptr) : Json(result.tls.alpn)},
              {"ocsp_stapled", result.tls.ocsp_stapled},
              {"client_certificate_requested", result.tls.client_certificate_requested},
              {"client_certificate_sent", result.tls.client_certificate_sent},
              {"handshake_completed", result.tls.handshake_completed},
              {"acceptable_client_cas", result.tls.acceptable_client_cas}};
  j["verification"] = verification_json(result.verification);
  Json presented = Json::array();
  for (const auto& c : result.presented_chain) presented.push_back(certificate_json(c, now));
  Json verified = Json::array();
  for (const auto& c : result.verification.verified_chain) {
    verified.push_back(certificate_json(c, now));
  }
  j["presented_chain"] = std::move(presented);
  j["verified_chain"] = std::move(verified);
  if (!with_timings) return j;
  Json timings = Json::array();
  for (const auto& t : result.timings) {
    timings.push_back({{"step", std::string(to_string(t.step))},
                       {"ms", static_cast<double>(t.duration.count()) / 1000.0},
                       {"ok", t.ok},
                       {"detail", t.detail}});
  }
  j["timings"] = std::move(timings);
  return j;
}

Json error_json(const std::string& input, const Error& error, int exit_code) {
  return {{"schema", kJsonSchema},
          {"input", input},
          {"error",
           {{"code", std::string(to_string(error.code))},
            {"message", error.message},
            {"exit_code", exit_code}}}};
}

std::string json_text(Json document, bool pretty) {
  make_valid_utf8(document);
  // After the pass above nothing is left for the handler to replace; it is there so that
  // dump() cannot throw even if a future string slipped past it.
  return document.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace);
}

Json show_json(const std::string& file, const std::string& format,
               const std::vector<Certificate>& certs, const std::optional<Verification>& verdict,
               std::int64_t now) {
  Json listed = Json::array();
  for (const auto& c : certs) listed.push_back(certificate_json(c, now));
  Json j{{"schema", kJsonSchema},
         {"file", file},
         {"format", format},
         {"certificates", listed},
         {"verification", verdict ? verification_json(*verdict) : Json(nullptr)}};
  if (verdict) {
    Json verified = Json::array();
    for (const auto& c : verdict->verified_chain) verified.push_back(certificate_json(c, now));
    j["verified_chain"] = verified;
  }
  return j;
}

}  // namespace getcert::cli
