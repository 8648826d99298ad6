#pragma once

#include <string>

#include "getcert/error.hpp"
#include "internal/ossl.hpp"

namespace getcert::detail {

// What indexing a PEM bundle found: certificate blocks indexed by subject, and blocks passed
// over because their base64 or their DER did not reach a subject name.
struct BundleIndexCount {
  int indexed = 0;
  int skipped = 0;
};

// Serves the certificates of the PEM bundle at `path` to `store` through a lookup of our own,
// as a hashed directory is served: the file is read once and indexed by the DER bytes of each
// certificate's subject (found by base64-decoding only the start of each block and walking its
// DER header, without decoding the certificate), and a certificate is decoded, and added to the
// store, only when verification asks for its subject. Parsing a 140-certificate system bundle
// whole costs tens of milliseconds with OpenSSL 3; indexing it costs a fraction of one.
//
// A store holds at most one such bundle. A block that cannot be indexed is skipped (counted);
// one that indexes but then fails to decode is passed over when it is asked for, so a corrupt
// certificate only ever costs the chains that would have needed it.
// Fails with io_error when the file cannot be read.
Result<BundleIndexCount> add_bundle_lookup(X509_STORE* store, const std::string& path);

}  // namespace getcert::detail
