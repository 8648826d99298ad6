#include "verify/crl_files.hpp"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>

#include "internal/ossl.hpp"
#include "internal/read_file.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"
#include "verify/rules.hpp"

namespace getcert::detail {
namespace {

// A CRL file may be large (a public CA's CRL runs to megabytes), never this large.
constexpr std::size_t kMaxCrlFile = std::size_t{256} * 1024 * 1024;

// Bounded while it reads: `--crl-file /dev/zero` (or a CRL growing under us) stops at the limit.
Result<std::string> read_crl_file(const std::string& path) {
  auto bytes = internal::read_bounded_file(path, kMaxCrlFile, "CRL file '" + path + "'",
                                           internal::FileKinds::regular_or_stream);
  if (!bytes && bytes.error().code == Errc::limit_exceeded) {
    return fail(Errc::malformed_input, bytes.error().message);
  }
  return bytes;
}

}  // namespace

Result<internal::X509CrlStackPtr> load_crl_files(const std::vector<std::string>& files) {
  internal::X509CrlStackPtr out(sk_X509_CRL_new_null());
  if (!out) return fail(Errc::internal, "out of memory");
  for (const auto& path : files) {
    GETCERT_TRY_ASSIGN(auto bytes, read_crl_file(path));
    internal::clear_errors();
    int found = 0;
    internal::BioPtr bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
    if (!bio) return fail(Errc::internal, "out of memory");
    for (;;) {
      internal::X509CrlPtr crl(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
      if (!crl) break;
      if (sk_X509_CRL_push(out.get(), crl.get()) <= 0) return fail(Errc::internal, "out of memory");
      static_cast<void>(crl.release());
      ++found;
    }
    if (found == 0) {
      const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
      internal::X509CrlPtr crl(d2i_X509_CRL(nullptr, &p, static_cast<long>(bytes.size())));
      if (crl && sk_X509_CRL_push(out.get(), crl.get()) > 0) {
        static_cast<void>(crl.release());
        ++found;
      }
    }
    internal::clear_errors();
    if (found == 0) {
      return fail(Errc::malformed_input, "'" + path + "' holds no CRL (PEM or DER)");
    }
  }
  return out;
}

// RFC 5280 5.2.3: conforming CRL issuers MUST include the CRL number. A rule over the CRLs that
// judge this path (those whose issuer issued a certificate of it), so the profile weighs it.
std::vector<RuleFinding> check_crl_rules(const PathView& path) {
  std::vector<RuleFinding> out;
  if (path.crls == nullptr) return out;
  for (int i = 0; i < sk_X509_CRL_num(path.crls); ++i) {
    X509_CRL* crl = sk_X509_CRL_value(path.crls, i);
    for (std::size_t d = 0; d < path.certs.size(); ++d) {
      if (path.is_root(d)) continue;
      if (X509_NAME_cmp(X509_CRL_get_issuer(crl), X509_get_issuer_name(path.certs[d])) != 0) {
        continue;
      }
      if (X509_CRL_get_ext_by_NID(crl, NID_crl_number, -1) < 0) {
        out.push_back({static_cast<int>(d), ProblemCode::crl_number_missing,
                       "the CRL of '" + internal::name_to_string(X509_CRL_get_issuer(crl)) +
                           "' that covers " + path.who(d) +
                           " has no cRLNumber (RFC 5280 5.2.3: conforming CRL issuers MUST "
                           "include it)"});
      }
      break;
    }
  }
  return out;
}

}  // namespace getcert::detail
