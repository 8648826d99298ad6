#pragma once

// Offline CRLs (VerifyOptions::crl_files, --crl-file): read once per verification.

#include <string>
#include <vector>

#include "getcert/error.hpp"
#include "internal/owners.hpp"

namespace getcert::detail {

// Every CRL of every file (PEM with any number of X509 CRL blocks, or one DER CRL). Fails with
// io_error (unreadable) or malformed_input (no CRL in a file), naming the file.
Result<internal::X509CrlStackPtr> load_crl_files(const std::vector<std::string>& files);

}  // namespace getcert::detail
