#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "detail/trust_store.hpp"

namespace getcert::detail {
namespace {

Result<void> check_readable(const std::string& path, bool want_dir, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fail(Errc::io_error, std::string("cannot read ") + what + " '" + path +
                                    "': " + std::strerror(errno));
  }
  if (want_dir != S_ISDIR(st.st_mode)) {
    return fail(Errc::io_error, std::string(what) + " '" + path + "' is " +
                                    (want_dir ? "not a directory" : "a directory"));
  }
  return {};
}

}  // namespace

Result<TrustStore> load_trust_store(const TrustOptions& options) {
  clear_errors();
  TrustStore out{X509StorePtr(X509_STORE_new()), {}};
  if (!out.store) return fail(Errc::internal, "out of memory", drain_errors());

  if (options.ca_file.empty() && options.ca_dir.empty()) {
    if (X509_STORE_set_default_paths(out.store.get()) != 1) {
      return fail(Errc::io_error, "cannot load the system trust store", drain_errors());
    }
    const char* env_file = std::getenv(X509_get_default_cert_file_env());
    const char* env_dir = std::getenv(X509_get_default_cert_dir_env());
    out.description = std::string("system (") +
                      (env_file != nullptr ? env_file : X509_get_default_cert_file()) + ", " +
                      (env_dir != nullptr ? env_dir : X509_get_default_cert_dir()) + ")";
    clear_errors();  // a missing default file is not an error: the store is just empty
    return out;
  }

  if (!options.ca_file.empty()) {
    if (auto ok = check_readable(options.ca_file, false, "CA file"); !ok) {
      return tl::unexpected(ok.error());
    }
    if (X509_STORE_load_file(out.store.get(), options.ca_file.c_str()) != 1) {
      return fail(Errc::malformed_input,
                  "CA file '" + options.ca_file + "' holds no readable PEM certificate",
                  drain_errors());
    }
    out.description = "file:" + options.ca_file;
  }
  if (!options.ca_dir.empty()) {
    if (auto ok = check_readable(options.ca_dir, true, "CA directory"); !ok) {
      return tl::unexpected(ok.error());
    }
    if (X509_STORE_load_path(out.store.get(), options.ca_dir.c_str()) != 1) {
      return fail(Errc::io_error, "cannot use CA directory '" + options.ca_dir + "'",
                  drain_errors());
    }
    if (!out.description.empty()) out.description += ", ";
    out.description += "dir:" + options.ca_dir;
  }
  return out;
}

}  // namespace getcert::detail
