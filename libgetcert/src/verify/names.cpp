// Name rules for the leaf: what its subjectAltName and CN may hold (RFC 5280 4.2.1.6, CA/B
// Forum Baseline Requirements 3.2.2.6, 7.1.2.7.12 and 7.1.4).

#include <arpa/inet.h>
#include <libpsl.h>
#include <netinet/in.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "internal/owners.hpp"
#include "verify/rules.hpp"

namespace getcert::detail {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string utf8_of(const ASN1_STRING* s) {
  unsigned char* out = nullptr;
  const int n = ASN1_STRING_to_UTF8(&out, s);
  const internal::OpensslBytes owned(out);
  if (n < 0) return {};
  return {reinterpret_cast<const char*>(out), static_cast<std::size_t>(n)};
}

std::string first_common_name(X509* cert) {
  const X509_NAME* subject = X509_get_subject_name(cert);
  const int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (i < 0) return {};
  return utf8_of(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)));
}

struct Sans {
  std::vector<std::string> dns;
  std::vector<std::string> ip;     // canonical text (inet_ntop)
  std::vector<std::string> email;  // rfc822Name
};

// RFC 5280 4.2.1.6: a dNSName in the preferred name syntax (RFC 1034 3.5, RFC 1123 2.1) with a
// leftmost "*" label allowed. An underscore is left to dns_name_underscore.
bool host_name_syntax(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t start = name.rfind("*.", 0) == 0 ? 2 : 0;
  if (start == name.size()) return false;
  while (start <= name.size()) {
    const std::size_t dot = name.find('.', start);
    const std::size_t end = dot == std::string::npos ? name.size() : dot;
    const std::size_t len = end - start;
    if (len == 0 || len > 63 || name[start] == '-' || name[end - 1] == '-') return false;
    for (std::size_t i = start; i < end; ++i) {
      const auto c = static_cast<unsigned char>(name[i]);
      if (std::isalnum(c) == 0 && c != '-' && c != '_') return false;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return true;
}

// RFC 5280 4.2.1.6: an rfc822Name is a Mailbox (RFC 5321 4.1.2): one "@", a local part, a
// host name.
bool mailbox_syntax(const std::string& address) {
  const std::size_t at = address.find('@');
  return at != std::string::npos && at > 0 && address.find('@', at + 1) == std::string::npos &&
         address.find_first_of(" \t\r\n<>()[],;:\"") == std::string::npos &&
         host_name_syntax(address.substr(at + 1)) &&
         address.find('*', at) == std::string::npos;  // "*" is atext in the local part only
}

Sans sans_of(X509* cert) {
  Sans out;
  const internal::GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
    if (n->type == GEN_DNS) {
      out.dns.push_back(utf8_of(n->d.dNSName));
    } else if (n->type == GEN_EMAIL) {
      out.email.push_back(utf8_of(n->d.rfc822Name));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* a = n->d.iPAddress;
      std::array<char, INET6_ADDRSTRLEN> buf{};
      const int len = ASN1_STRING_length(a);
      const int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : 0;
      if (family != 0 && inet_ntop(family, ASN1_STRING_get0_data(a), buf.data(),
                                   static_cast<socklen_t>(buf.size())) != nullptr) {
        out.ip.emplace_back(buf.data());
      }
    }
  }
  return out;
}

// The canonical text of an IP address written in any form resolvers accept (hex, octal,
// leading zeros, upper case or uncompressed IPv6), or nullopt when `text` is no address.
std::optional<std::string> canonical_ip(const std::string& text) {
  std::array<char, INET6_ADDRSTRLEN> buf{};
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    return std::string(inet_ntop(AF_INET6, &v6, buf.data(), buf.size()));
  }
  // inet_aton reads "127.1" and "2130706433" too; a CN of digits alone is more likely a
  // label than an address, so only dotted or 0x forms count.
  const bool looks_ip = text.find('.') != std::string::npos || lower(text).rfind("0x", 0) == 0;
  in_addr v4{};
  if (looks_ip && !text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) != 0 &&
      inet_aton(text.c_str(), &v4) != 0) {
    return std::string(inet_ntop(AF_INET, &v4, buf.data(), buf.size()));
  }
  return std::nullopt;
}

// The Public Suffix List as Debian's publicsuffix package ships it (libpsl reads the newest of
// its files and its built-in copy). Loaded once and kept for the life of the process.
const psl_ctx_t* public_suffixes() {
  static const psl_ctx_t* const psl = []() -> const psl_ctx_t* {
    const psl_ctx_t* latest = psl_latest(nullptr);
    return latest != nullptr ? latest : psl_builtin();
  }();
  return psl;
}

}  // namespace

std::vector<RuleFinding> check_name_rules(const PathView& path) {
  std::vector<RuleFinding> out;
  if (path.certs.empty()) return out;
  X509* leaf = path.certs.front();
  const bool has_san = X509_get_ext_by_NID(leaf, NID_subject_alt_name, -1) >= 0;
  // The host-name rules are about server certificates; "any" purpose names no host to judge.
  const bool server = path.purpose == Purpose::server;
  const Sans sans = sans_of(leaf);
  const std::string who = path.who(0);
  if (!has_san && server) {
    out.push_back({0, ProblemCode::no_subject_alt_name,
                   who + " has no subjectAltName extension, so it names no host (BR 7.1.2.7.12, "
                         "RFC 6125 6.4.4: clients must not fall back to the CN)"});
  }
  const std::string cn = first_common_name(leaf);
  if (has_san && server && !cn.empty()) {
    if (auto ip = canonical_ip(cn)) {
      if (*ip != cn) {
        out.push_back({0, ProblemCode::cn_ip_not_canonical,
                       who + " has a CN holding the IP address '" + cn + "' in a non-canonical " +
                           "form (canonical: " + *ip + "; BR 7.1.4.3)"});
      }
      if (std::find(sans.ip.begin(), sans.ip.end(), *ip) == sans.ip.end()) {
        out.push_back({0, ProblemCode::cn_not_in_sans,
                       who + " has a CN naming the address " + *ip +
                           ", which is not among its IP address SANs (BR 7.1.4.3)"});
      }
    } else {
      // BR 7.1.4.3: "a character-for-character copy of the dNSName entry", so case counts.
      const bool found = std::find(sans.dns.begin(), sans.dns.end(), cn) != sans.dns.end();
      if (!found) {
        out.push_back({0, ProblemCode::cn_not_in_sans,
                       who + " has a CN that is not one of its DNS SANs, byte for byte (an "
                             "A-label and its U-label differ too; BR 7.1.4.3)"});
      }
    }
  }
  for (const auto& dns : sans.dns) {
    if (!host_name_syntax(dns)) {
      out.push_back({0, ProblemCode::invalid_san_syntax,
                     who + " has the DNS SAN '" + dns +
                         "', which is not a host name (RFC 5280 4.2.1.6: the preferred name "
                         "syntax)"});
    }
    if (dns.find('_') != std::string::npos) {
      out.push_back({0, ProblemCode::dns_name_underscore,
                     who + " has the DNS SAN '" + dns +
                         "' with an underscore, which no host name may hold (RFC 5280 4.2.1.6 "
                         "preferred name syntax, BR 7.1.4.2)"});
    }
    if (dns.rfind("*.", 0) == 0) {
      const psl_ctx_t* psl = public_suffixes();
      const std::string suffix = lower(dns.substr(2));
      // Which public suffixes may a wildcard not cover? Only the ICANN section's ("*.co.uk",
      // "*.com"). Chromium's VerifyHostname excludes private registries, and Firefox, Go and
      // rustls-webpki do not consult the list at all; the private section ("github.io",
      // "appspot.com", "s3.amazonaws.com") scopes cookies, and every GitHub Pages, App Engine
      // and S3 virtual-host certificate is such a wildcard. BR 3.2.2.6 asks CAs to refuse
      // wildcards over "registry-controlled" labels, the ICANN ones too. NO_STAR_RULE: a name
      // under an unlisted top-level domain (".test", ".internal") is a private name.
      if (psl != nullptr &&
          psl_is_public_suffix2(psl, suffix.c_str(), PSL_TYPE_ICANN | PSL_TYPE_NO_STAR_RULE) != 0) {
        out.push_back({0, ProblemCode::wildcard_public_suffix,
                       who + " has the wildcard SAN '" + dns + "' over the ICANN public suffix '" +
                           suffix + "' (BR 3.2.2.6; Chromium rejects it)"});
      }
    }
  }
  for (const auto& email : sans.email) {
    if (!mailbox_syntax(email)) {
      out.push_back({0, ProblemCode::invalid_san_syntax,
                     who + " has the email SAN '" + email +
                         "', which is not a mailbox (RFC 5280 4.2.1.6, RFC 5321 4.1.2)"});
    }
  }
  return out;
}

}  // namespace getcert::detail
