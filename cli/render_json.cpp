#include "render.hpp"

namespace getcert::cli {

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
  j["pem"] = cert.pem();
  return j;
}

Json verification_json(const Verification& v) {
  Json errors = Json::array();
  for (const auto& e : v.errors) {
    errors.push_back({{"depth", e.depth}, {"code", e.code}, {"reason", e.reason}});
  }
  return {{"ok", v.ok},
          {"hostname_ok", v.hostname_ok},
          {"trusted", v.trusted},
          {"errors", errors},
          {"trust_store", v.trust_store}};
}

Json fetch_json(const FetchResult& result, std::int64_t now) {
  Json j;
  j["schema"] = kJsonSchema;
  j["target"] = {{"host", result.target.host},
                 {"port", result.target.port},
                 {"sni", result.target.sni.empty() ? Json(nullptr) : Json(result.target.sni)},
                 {"address", result.target.address}};
  j["tls"] = {{"version", result.tls.version},
              {"cipher", result.tls.cipher},
              {"alpn", result.tls.alpn.empty() ? Json(nullptr) : Json(result.tls.alpn)},
              {"ocsp_stapled", result.tls.ocsp_stapled}};
  j["verification"] = verification_json(result.verification);
  Json presented = Json::array();
  for (const auto& c : result.presented_chain) presented.push_back(certificate_json(c, now));
  Json verified = Json::array();
  for (const auto& c : result.verification.verified_chain) {
    verified.push_back(certificate_json(c, now));
  }
  j["presented_chain"] = std::move(presented);
  j["verified_chain"] = std::move(verified);
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

}  // namespace getcert::cli
