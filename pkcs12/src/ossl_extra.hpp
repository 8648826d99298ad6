#pragma once

// RAII wrappers for the OpenSSL handles only the PKCS#12 side uses, in the style of
// libgetcert's detail/ossl.hpp (one deleter line per type).

#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "detail/ossl.hpp"

namespace getcert::pkcs12::detail {

using getcert::detail::Deleter;

// OSSL_PROVIDER_unload returns int, so it needs a void wrapper to be a deleter.
inline void unload_provider(OSSL_PROVIDER* p) { static_cast<void>(OSSL_PROVIDER_unload(p)); }

using OsslProviderPtr = std::unique_ptr<OSSL_PROVIDER, Deleter<OSSL_PROVIDER, &unload_provider>>;
using X509AlgorPtr = std::unique_ptr<X509_ALGOR, Deleter<X509_ALGOR, &X509_ALGOR_free>>;
using X509SigPtr = std::unique_ptr<X509_SIG, Deleter<X509_SIG, &X509_SIG_free>>;

}  // namespace getcert::pkcs12::detail
