// read_keystore(): which form a key store arrived in, decided by its bytes alone.

#include "getcert/keystore.hpp"

#include <string>

#include "base64.hpp"
#include "internal/try.hpp"
#include "jks.hpp"

namespace getcert::pkcs12 {
namespace {

using detail::Bytes;

std::uint32_t magic_of(Bytes data) {
  if (data.size() < 4) return 0;
  return (std::uint32_t{data[0]} << 24U) | (std::uint32_t{data[1]} << 16U) |
         (std::uint32_t{data[2]} << 8U) | std::uint32_t{data[3]};
}

// A SEQUENCE (definite or indefinite length) whose first element is INTEGER 3: a PFX.
bool looks_like_pfx(Bytes data) {
  if (data.size() < 5 || data[0] != 0x30) return false;
  std::size_t i = 1;
  if (data[i] != 0x80 && (data[i] & 0x80U) != 0) i += data[i] & 0x7FU;
  i += 1;
  return i + 2 < data.size() && data[i] == 0x02 && data[i + 1] == 0x01 && data[i + 2] == 0x03;
}

std::optional<std::string> name_of(const BagAttributes& a) {
  if (a.friendly_name.empty()) return std::nullopt;
  return a.friendly_name;
}

Result<Keystore> read_pkcs12(const std::vector<std::uint8_t>& der, KeystoreFormat format,
                             const KeystoreOptions& options) {
  DecodeOptions decode_options;
  decode_options.password = options.password;
  decode_options.max_iterations = options.max_iterations;
  decode_options.max_signature_checks = options.max_signature_checks;
  decode_options.key_password = options.key_password;
  GETCERT_TRY_ASSIGN(auto bundle, decode(der, decode_options));
  Keystore out;
  out.format = format;
  out.integrity_checked = bundle.info.mac.verified;
  out.bundle = std::move(bundle);
  return out;
}

enum class Form { none, pkcs12, pkcs12_pem, java };

// What `data` is without unwrapping base64.
Form form_of(Bytes data) {
  const std::uint32_t magic = magic_of(data);
  if (magic == detail::kJksMagic || magic == detail::kJceksMagic) return Form::java;
  if (looks_like_pfx(data)) return Form::pkcs12;
  const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  if (detail::decode_pem_armour(text, "PKCS12")) return Form::pkcs12_pem;
  return Form::none;
}

Result<Keystore> read_form(const std::vector<std::uint8_t>& data, Form form, bool wrapped,
                           const KeystoreOptions& options) {
  Result<Keystore> out = fail(Errc::malformed_input, "not a key store");
  if (form == Form::java) {
    const auto format =
        magic_of(data) == detail::kJksMagic ? KeystoreFormat::jks : KeystoreFormat::jceks;
    out = detail::read_java_keystore(data, format, options);
  } else if (form == Form::pkcs12) {
    out = read_pkcs12(data, wrapped ? KeystoreFormat::pkcs12_base64 : KeystoreFormat::pkcs12,
                      options);
  } else if (form == Form::pkcs12_pem) {
    const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
    out = read_pkcs12(*detail::decode_pem_armour(text, "PKCS12"), KeystoreFormat::pkcs12_pem,
                      options);
  }
  if (!out) return out;
  out->base64_wrapped = wrapped;
  for (auto& id : out->bundle.identities) {
    id.alias = name_of(id.key.attributes());
    if (!id.alias) id.alias = name_of(id.leaf_attributes);
  }
  out->bundle.extra_cert_aliases.clear();
  for (const auto& a : out->bundle.extra_cert_attributes) {
    out->bundle.extra_cert_aliases.push_back(name_of(a));
  }
  return out;
}

}  // namespace

std::string_view to_string(KeystoreFormat format) noexcept {
  switch (format) {
    case KeystoreFormat::pkcs12:
      return "pkcs12";
    case KeystoreFormat::pkcs12_base64:
      return "pkcs12-base64";
    case KeystoreFormat::pkcs12_pem:
      return "pkcs12-pem";
    case KeystoreFormat::jks:
      return "jks";
    case KeystoreFormat::jceks:
      return "jceks";
  }
  return "unknown";
}

std::string_view to_string(KeystoreEntryType type) noexcept {
  switch (type) {
    case KeystoreEntryType::private_key:
      return "PrivateKeyEntry";
    case KeystoreEntryType::trusted_certificate:
      return "trustedCertEntry";
    case KeystoreEntryType::secret_key:
      return "SecretKeyEntry";
  }
  return "unknown";
}

Result<Keystore> read_keystore(const std::vector<std::uint8_t>& bytes,
                               const KeystoreOptions& options) {
  if (bytes.size() > kMaxInputSize) {
    return fail(Errc::limit_exceeded,
                "the input is larger than " +
                    std::to_string(kMaxInputSize / (std::size_t{1024} * 1024)) + " MiB");
  }
  if (const Form form = form_of(bytes); form != Form::none) {
    return read_form(bytes, form, false, options);
  }
  // One level of base64 only: nobody wraps twice, and the decoded size is bounded by the input's.
  if (auto decoded = decode_base64_text(bytes)) {
    if (const Form form = form_of(*decoded); form != Form::none) {
      return read_form(*decoded, form, true, options);
    }
    return fail(Errc::malformed_input,
                "base64 text, but what it encodes is not a key store (expected PKCS#12, "
                "PEM-armoured PKCS#12, JKS or JCEKS)");
  }
  return fail(Errc::malformed_input,
              "not a key store (expected PKCS#12 as DER, base64 or PEM, JKS or JCEKS)");
}

}  // namespace getcert::pkcs12
