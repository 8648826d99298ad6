#pragma once

// RAII wrappers for the OpenSSL handles only the PKCS#12 side uses, in the style of
// libgetcert's detail/ossl.hpp (one deleter line per type).

#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "detail/ossl.hpp"

namespace getcert::pkcs12::detail {

using getcert::detail::Deleter;

inline void free_safebag_stack(STACK_OF(PKCS12_SAFEBAG) * s) {
  sk_PKCS12_SAFEBAG_pop_free(s, PKCS12_SAFEBAG_free);
}

using X509AlgorPtr = std::unique_ptr<X509_ALGOR, Deleter<X509_ALGOR, &X509_ALGOR_free>>;
using X509SigPtr = std::unique_ptr<X509_SIG, Deleter<X509_SIG, &X509_SIG_free>>;

}  // namespace getcert::pkcs12::detail
