#include "internal/x509_util.hpp"

#include <arpa/inet.h>
#include <openssl/core_names.h>
#include <openssl/ct.h>
#include <openssl/ec.h>
#include <openssl/objects.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "internal/encoding.hpp"
#include "internal/ossl.hpp"

namespace getcert::internal {

KeyInfo key_info(const EVP_PKEY* key) {
  KeyInfo info;
  info.bits = EVP_PKEY_get_bits(key);
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_RSA:
      info.type = "RSA";
      break;
    case EVP_PKEY_RSA_PSS:
      info.type = "RSA-PSS";
      break;
    case EVP_PKEY_EC:
      info.type = "EC";
      break;
    case EVP_PKEY_ED25519:
      info.type = "Ed25519";
      break;
    case EVP_PKEY_ED448:
      info.type = "Ed448";
      break;
    case EVP_PKEY_X25519:
      info.type = "X25519";
      break;
    case EVP_PKEY_X448:
      info.type = "X448";
      break;
    case EVP_PKEY_DSA:
      info.type = "DSA";
      break;
    case EVP_PKEY_DH:
      info.type = "DH";
      break;
    default: {
      const char* name = EVP_PKEY_get0_type_name(key);
      info.type = name != nullptr ? name : "unknown";
    }
  }
  if (info.type == "EC") {
    std::array<char, 80> group{};
    std::size_t len = 0;
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group.data(), group.size(),
                                       &len) == 1) {
      const char* nist = EC_curve_nid2nist(OBJ_sn2nid(group.data()));
      info.curve = nist != nullptr ? nist : group.data();
    }
  }
  return info;
}

std::int64_t asn1_time_to_epoch(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string name_to_string(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) < 0) {
    return {};
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return {data, static_cast<std::size_t>(len)};
}

namespace {

std::string first_common_name(const X509_NAME* name) {
  const int idx = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (idx < 0) return {};
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, idx));
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, value);
  const OpensslBytes owned(utf8);
  if (len < 0) return {};
  return {reinterpret_cast<char*>(utf8), static_cast<std::size_t>(len)};
}

std::string asn1_string(const ASN1_STRING* s) {
  return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
          static_cast<std::size_t>(ASN1_STRING_length(s))};
}

std::string ip_to_string(const ASN1_OCTET_STRING* ip) {
  std::array<char, INET6_ADDRSTRLEN> buf{};
  const int len = ASN1_STRING_length(ip);
  const unsigned char* bytes = ASN1_STRING_get0_data(ip);
  if (len == 4 && inet_ntop(AF_INET, bytes, buf.data(), buf.size()) != nullptr) return buf.data();
  if (len == 16 && inet_ntop(AF_INET6, bytes, buf.data(), buf.size()) != nullptr) return buf.data();
  return "invalid:" + hex_upper(bytes, static_cast<std::size_t>(len));
}

SubjectAltNames read_sans(X509* cert) {
  SubjectAltNames sans;
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return sans;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
    switch (gn->type) {
      case GEN_DNS:
        sans.dns.push_back(asn1_string(gn->d.dNSName));
        break;
      case GEN_IPADD:
        sans.ip.push_back(ip_to_string(gn->d.iPAddress));
        break;
      case GEN_URI:
        sans.uri.push_back(asn1_string(gn->d.uniformResourceIdentifier));
        break;
      case GEN_EMAIL:
        sans.email.push_back(asn1_string(gn->d.rfc822Name));
        break;
      default:
        break;
    }
  }
  return sans;
}

void read_aia(X509* cert, Certificate& out) {
  AuthorityInfoAccessPtr aia(static_cast<AUTHORITY_INFO_ACCESS*>(
      X509_get_ext_d2i(cert, NID_info_access, nullptr, nullptr)));
  if (!aia) return;
  for (int i = 0; i < sk_ACCESS_DESCRIPTION_num(aia.get()); ++i) {
    const ACCESS_DESCRIPTION* ad = sk_ACCESS_DESCRIPTION_value(aia.get(), i);
    if (ad->location->type != GEN_URI) continue;
    const std::string uri = asn1_string(ad->location->d.uniformResourceIdentifier);
    const int nid = OBJ_obj2nid(ad->method);
    if (nid == NID_ad_ca_issuers) out.ca_issuers_urls.push_back(uri);
    if (nid == NID_ad_OCSP) out.ocsp_urls.push_back(uri);
  }
}

KeyInfo read_key(X509* cert) {
  const EVP_PKEY* key = X509_get0_pubkey(cert);
  if (key == nullptr) return KeyInfo{"unknown", 0, {}};
  return key_info(key);
}

std::string digest_hex(X509* cert, const EVP_MD* md) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> buf{};
  unsigned int len = 0;
  if (X509_digest(cert, md, buf.data(), &len) != 1) return {};
  return hex_upper(buf.data(), len);
}

std::string spki_pin(X509* cert) {
  unsigned char* der = nullptr;
  const int len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  const OpensslBytes owned(der);
  if (len <= 0) return {};
  std::array<unsigned char, 32> hash{};
  unsigned int hash_len = 0;
  const int ok =
      EVP_Digest(der, static_cast<std::size_t>(len), hash.data(), &hash_len, EVP_sha256(), nullptr);
  return ok == 1 ? base64(hash.data(), hash_len) : std::string{};
}

std::string sha256_hex(const unsigned char* data, std::size_t len) {
  std::array<unsigned char, 32> hash{};
  unsigned int hash_len = 0;
  if (EVP_Digest(data, len, hash.data(), &hash_len, EVP_sha256(), nullptr) != 1) return {};
  return hex_upper(hash.data(), hash_len);
}

// The bytes of the tbsCertificate in a certificate's DER: the first element of the outer
// SEQUENCE, as the CA signed it. Null when either header is not definite-length (d2i takes some
// BER; the caller then has OpenSSL re-encode).
std::pair<const unsigned char*, std::size_t> tbs_span(const std::vector<std::uint8_t>& der) {
  const unsigned char* p = der.data();
  const auto total = static_cast<long>(der.size());
  long length = 0;
  int tag = 0;
  int cls = 0;
  // V_ASN1_CONSTRUCTED alone: a constructed value of definite length (0x80: error, +1:
  // indefinite length).
  if (ASN1_get_object(&p, &length, &tag, &cls, total) != V_ASN1_CONSTRUCTED ||
      tag != V_ASN1_SEQUENCE) {
    clear_errors();
    return {nullptr, 0};
  }
  const unsigned char* tbs = p;
  if (ASN1_get_object(&p, &length, &tag, &cls, total - (p - der.data())) != V_ASN1_CONSTRUCTED ||
      tag != V_ASN1_SEQUENCE) {
    clear_errors();
    return {nullptr, 0};
  }
  return {tbs, static_cast<std::size_t>(p - tbs) + static_cast<std::size_t>(length)};
}

// One DER TLV inside [from, to): where its value starts, where it ends, and its tag. False on
// anything but a definite length that fits.
struct Tlv {
  const unsigned char* value = nullptr;
  const unsigned char* end = nullptr;
  int tag = 0;
  int cls = 0;
};
bool read_tlv(const unsigned char* from, const unsigned char* to, Tlv& out) {
  const unsigned char* p = from;
  long length = 0;
  const int got = ASN1_get_object(&p, &length, &out.tag, &out.cls, to - from);
  if ((got & 0x80) != 0 || (got & 1) != 0) {
    clear_errors();
    return false;
  }
  out.value = p;
  out.end = p + length;
  return true;
}

// A DER tag and length header for `length` bytes of content.
std::vector<unsigned char> der_header(unsigned char tag, std::size_t length) {
  std::vector<unsigned char> out{tag};
  if (length < 0x80) {
    out.push_back(static_cast<unsigned char>(length));
    return out;
  }
  std::vector<unsigned char> bytes;
  for (std::size_t n = length; n != 0; n >>= 8U) {
    bytes.insert(bytes.begin(), static_cast<unsigned char>(n & 0xFFU));
  }
  out.push_back(static_cast<unsigned char>(0x80U | bytes.size()));
  out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}

// The SHA-256 of a TBS without its CT extensions, written as DER from the received bytes (no
// re-parse: an X509_dup decodes the public key again, about 0.1 ms per certificate, and nearly
// every publicly trusted leaf carries an SCT list). Empty when the TBS does not have the shape
// this walk expects (the caller then has OpenSSL re-encode a copy).
std::string tbs_sha256_without_ct(const unsigned char* tbs, std::size_t tbs_len) {
  // The OIDs as DER TLVs: 1.3.6.1.4.1.11129.2.4.2 (SCT list) and .3 (poison).
  static constexpr std::array<unsigned char, 12> kSctList{0x06, 0x0A, 0x2B, 0x06, 0x01, 0x04,
                                                          0x01, 0xD6, 0x79, 0x02, 0x04, 0x02};
  std::array<unsigned char, 12> poison = kSctList;
  poison.back() = 0x03;
  Tlv whole;
  if (!read_tlv(tbs, tbs + tbs_len, whole) || whole.end != tbs + tbs_len) return {};
  // The extensions are [3] EXPLICIT SEQUENCE OF Extension, the last field of a v3 TBS.
  Tlv field;
  const unsigned char* at = whole.value;
  const unsigned char* extensions = nullptr;  // the [3] field's first byte
  while (at < whole.end) {
    if (!read_tlv(at, whole.end, field)) return {};
    if (field.cls == V_ASN1_CONTEXT_SPECIFIC && field.tag == 3) {
      extensions = at;
      break;
    }
    at = field.end;
  }
  if (extensions == nullptr || field.end != whole.end) return {};
  Tlv list;
  if (!read_tlv(field.value, field.end, list) || list.tag != V_ASN1_SEQUENCE ||
      list.end != field.end) {
    return {};
  }
  std::vector<std::pair<const unsigned char*, std::size_t>> kept;
  std::size_t kept_len = 0;
  for (const unsigned char* e = list.value; e < list.end;) {
    Tlv ext;
    Tlv oid;
    if (!read_tlv(e, list.end, ext) || !read_tlv(ext.value, ext.end, oid)) return {};
    const auto oid_len = static_cast<std::size_t>(oid.end - ext.value);
    const bool ct =
        oid_len == kSctList.size() && (std::equal(kSctList.begin(), kSctList.end(), ext.value) ||
                                       std::equal(poison.begin(), poison.end(), ext.value));
    if (!ct) {
      kept.emplace_back(e, static_cast<std::size_t>(ext.end - e));
      kept_len += kept.back().second;
    }
    e = ext.end;
  }
  // Without any extension left, the field goes (RFC 5280 allows no empty one).
  std::vector<unsigned char> list_header;
  std::vector<unsigned char> field_header;
  if (kept_len > 0) {
    list_header = der_header(0x30, kept_len);
    field_header = der_header(0xA3, list_header.size() + kept_len);
  }
  const auto before_len = static_cast<std::size_t>(extensions - whole.value);
  const auto header =
      der_header(0x30, before_len + field_header.size() + list_header.size() + kept_len);
  const EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx.get(), header.data(), header.size()) == 1 &&
            EVP_DigestUpdate(ctx.get(), whole.value, before_len) == 1 &&
            EVP_DigestUpdate(ctx.get(), field_header.data(), field_header.size()) == 1 &&
            EVP_DigestUpdate(ctx.get(), list_header.data(), list_header.size()) == 1;
  for (const auto& [data, len] : kept) ok = ok && EVP_DigestUpdate(ctx.get(), data, len) == 1;
  std::array<unsigned char, 32> hash{};
  unsigned int hash_len = 0;
  if (!ok || EVP_DigestFinal_ex(ctx.get(), hash.data(), &hash_len) != 1) {
    clear_errors();
    return {};
  }
  return hex_upper(hash.data(), hash_len);
}

// Certificate::tbs_sha256. Without CT extensions (CA certificates, private PKIs): one SHA-256
// over the TBS bytes as received. With them (publicly trusted leaves): the same bytes without
// those extensions, re-framed as DER. Only a TBS that is not plain DER (d2i takes some BER) has
// OpenSSL copy, strip and re-encode it.
std::string tbs_sha256(X509* cert, const std::vector<std::uint8_t>& der) {
  const std::array<int, 2> ct_extensions{NID_ct_precert_scts, NID_ct_precert_poison};
  const bool has_ct = std::any_of(ct_extensions.begin(), ct_extensions.end(),
                                  [&](int nid) { return X509_get_ext_by_NID(cert, nid, -1) >= 0; });
  if (const auto [tbs, len] = tbs_span(der); tbs != nullptr) {
    if (!has_ct) return sha256_hex(tbs, len);
    if (std::string hash = tbs_sha256_without_ct(tbs, len); !hash.empty()) return hash;
  }
  // A copy: the handle may be shared, and a modified one would be re-encoded on every i2d.
  const X509Ptr copy(X509_dup(cert));
  if (!copy) {
    clear_errors();
    return {};
  }
  for (const int nid : ct_extensions) {
    for (int at = X509_get_ext_by_NID(copy.get(), nid, -1); at >= 0;
         at = X509_get_ext_by_NID(copy.get(), nid, -1)) {
      const X509ExtensionPtr removed(X509_delete_ext(copy.get(), at));
    }
  }
  unsigned char* out = nullptr;
  const int len = i2d_re_X509_tbs(copy.get(), &out);
  const OpensslBytes owned(out);
  if (len <= 0) {
    clear_errors();
    return {};
  }
  return sha256_hex(out, static_cast<std::size_t>(len));
}

// Embedded SCTs (RFC 6962 3.3). A list OpenSSL cannot decode yields none: the certificate
// is still worth showing, and nothing here is a verification input.
std::vector<Sct> read_scts(X509* cert) {
  std::vector<Sct> out;
  SctListPtr list(
      static_cast<STACK_OF(SCT)*>(X509_get_ext_d2i(cert, NID_ct_precert_scts, nullptr, nullptr)));
  clear_errors();
  if (!list) return out;
  for (int i = 0; i < sk_SCT_num(list.get()); ++i) {
    const SCT* sct = sk_SCT_value(list.get(), i);
    Sct s;
    s.version = static_cast<int>(SCT_get_version(sct));
    unsigned char* log_id = nullptr;  // get0: borrowed
    const std::size_t log_id_len = SCT_get0_log_id(sct, &log_id);
    if (log_id != nullptr) s.log_id = base64(log_id, log_id_len);
    s.timestamp_ms = static_cast<std::int64_t>(SCT_get_timestamp(sct));
    const int nid = SCT_get_signature_nid(sct);
    s.signature_algorithm = nid == NID_undef ? "unknown" : OBJ_nid2ln(nid);
    out.push_back(std::move(s));
  }
  return out;
}

// id-pe-tlsfeature (RFC 7633) listing status_request (5): "must-staple".
bool read_must_staple(X509* cert) {
  constexpr long kStatusRequest = 5;
  TlsFeaturePtr features(
      static_cast<TLS_FEATURE*>(X509_get_ext_d2i(cert, NID_tlsfeature, nullptr, nullptr)));
  clear_errors();
  if (!features) return false;
  for (int i = 0; i < sk_ASN1_INTEGER_num(features.get()); ++i) {
    if (ASN1_INTEGER_get(sk_ASN1_INTEGER_value(features.get(), i)) == kStatusRequest) return true;
  }
  return false;
}

// Whether a certificate signs itself: for one whose names and key identifiers say it may, that
// is a signature check, as costly as a fetch's own handshake signature. The answer depends on
// the certificate's bytes alone, and the same roots come back on every fetch of a fleet (each
// verified chain ends in one), so answers are kept by SHA-256 fingerprint. The set is bounded
// and emptied when full: a stream of distinct self-signed certificates cannot grow it.
bool signs_itself(X509* cert, const std::string& sha256) {
  if (X509_self_signed(cert, 0) != 1) return false;  // not even likely: no signature to check
  constexpr std::size_t kMaxRemembered = 1024;
  static std::mutex mutex;
  static std::unordered_map<std::string, bool> remembered;
  if (!sha256.empty()) {
    const std::lock_guard lock(mutex);
    if (const auto found = remembered.find(sha256); found != remembered.end()) {
      return found->second;
    }
  }
  const bool verified = X509_self_signed(cert, 1) == 1;
  if (!sha256.empty()) {
    const std::lock_guard lock(mutex);
    if (remembered.size() >= kMaxRemembered) remembered.clear();
    remembered.emplace(sha256, verified);
  }
  return verified;
}

}  // namespace

Result<Certificate> certificate_from_x509(X509* cert) {
  Certificate out;
  unsigned char* der = nullptr;
  const int der_len = i2d_X509(cert, &der);
  const OpensslBytes owned(der);
  if (der_len <= 0) return fail(Errc::malformed_input, "certificate cannot be encoded");
  out.der.assign(der, der + der_len);

  out.subject = name_to_string(X509_get_subject_name(cert));
  out.issuer = name_to_string(X509_get_issuer_name(cert));
  out.subject_cn = first_common_name(X509_get_subject_name(cert));
  out.issuer_cn = first_common_name(X509_get_issuer_name(cert));
  if (BignumPtr bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)); bn) {
    OpensslString hex(BN_bn2hex(bn.get()));
    if (hex) out.serial = hex.get();
  }
  out.not_before = asn1_time_to_epoch(X509_get0_notBefore(cert));
  out.not_after = asn1_time_to_epoch(X509_get0_notAfter(cert));
  out.sans = read_sans(cert);
  out.key = read_key(cert);
  out.signature_algorithm = OBJ_nid2ln(X509_get_signature_nid(cert));
  out.is_ca = (X509_get_extension_flags(cert) & EXFLAG_CA) != 0;
  read_aia(cert, out);
  // From the DER in hand: X509_digest would encode the certificate again to hash it.
  out.sha256 = sha256_hex(out.der.data(), out.der.size());
  out.self_signed = signs_itself(cert, out.sha256);
  out.sha1 = digest_hex(cert, EVP_sha1());
  out.spki_sha256 = spki_pin(cert);
  out.tbs_sha256 = tbs_sha256(cert, out.der);
  out.scts = read_scts(cert);
  out.must_staple = read_must_staple(cert);
  return out;
}

Result<Certificate> certificate_from_der(const std::vector<std::uint8_t>& der, X509Ptr* handle) {
  clear_errors();
  const unsigned char* p = der.data();
  X509Ptr cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (!cert) return fail(Errc::malformed_input, "not a valid DER certificate", drain_errors());
  if (p != der.data() + der.size()) {
    return fail(Errc::malformed_input, "trailing bytes after the DER certificate");
  }
  auto parsed = certificate_from_x509(cert.get());
  if (!parsed) return parsed;
  parsed->der = der;  // keep the exact input bytes
  if (handle != nullptr) *handle = std::move(cert);
  return parsed;
}

X509Ptr x509_from_certificate(const Certificate& cert) {
  const unsigned char* p = cert.der.data();
  return X509Ptr(d2i_X509(nullptr, &p, static_cast<long>(cert.der.size())));
}

}  // namespace getcert::internal
