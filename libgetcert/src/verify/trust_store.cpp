#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#include "verify/trust_store.hpp"

#include "internal/read_file.hpp"
#include "internal/try.hpp"
#include "verify/bundle_lookup.hpp"
#include "verify/system_trust.hpp"

#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace getcert::detail {
namespace {

// A CA bundle runs to a few hundred KiB (Mozilla's whole program is about 200 KiB).
constexpr std::size_t kMaxCaFileBytes = std::size_t{64} * 1024 * 1024;

Result<void> check_readable(const std::string& path, bool want_dir, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fail(Errc::io_error,
                std::string("cannot read ") + what + " '" + path + "': " + std::strerror(errno));
  }
  if (want_dir != S_ISDIR(st.st_mode)) {
    return fail(Errc::io_error, std::string(what) + " '" + path + "' is " +
                                    (want_dir ? "not a directory" : "a directory"));
  }
  return {};
}

// Reads every certificate of a PEM file into the store. Cheaper than X509_STORE_load_file,
// which runs OpenSSL 3's generic decoder machinery for every object.
// Read with a bound first: `--ca-file /dev/zero` ends as a limit error, not an endless read.
Result<int> add_pem_file(X509_STORE* store, const std::string& path) {
  GETCERT_TRY_ASSIGN(const auto bytes,
                     internal::read_bounded_file(path, kMaxCaFileBytes, "CA file '" + path + "'",
                                                 internal::FileKinds::regular_or_stream));
  internal::BioPtr bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  if (!bio) return fail(Errc::internal, "out of memory", internal::drain_errors());
  int added = 0;
  for (;;) {
    internal::X509Ptr cert(PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    if (X509_STORE_add_cert(store, cert.get()) == 1) ++added;
  }
  const unsigned long err = ERR_peek_last_error();
  if (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE) {
    internal::clear_errors();
  } else if (err != 0) {
    return fail(Errc::malformed_input, "CA file '" + path + "' holds a corrupt certificate",
                internal::drain_errors());
  }
  return added;
}

Result<TrustStore> load_trust_store_uncached(const TrustOptions& options) {
  internal::clear_errors();
  TrustStore out{internal::X509StorePtr(X509_STORE_new()), {}, false};
  if (!out.store) return fail(Errc::internal, "out of memory", internal::drain_errors());

  if (options.ca_file.empty() && options.ca_dir.empty()) {
    // The system store, found as Go finds it (verify/system_trust.hpp). A hashed directory is
    // looked up lazily (only the issuers a chain needs are read), and so is the bundle file
    // (indexed by subject, decoded on demand).
    const SystemTrustSources sources =
        find_system_trust("", std::getenv(X509_get_default_cert_file_env()),
                          std::getenv(X509_get_default_cert_dir_env()));
    std::string used;
    for (const std::string& dir : sources.dirs) {
      if (X509_STORE_load_path(out.store.get(), dir.c_str()) == 1) {
        used += (used.empty() ? "" : ", ") + dir;
      }
    }
    if (!sources.file.empty()) {
      if (auto indexed = add_bundle_lookup(out.store.get(), sources.file); indexed) {
        used += (used.empty() ? "" : ", ") + sources.file;
      }
    }
    internal::clear_errors();  // a missing default location is not an error: the store is just
                               // empty
    out.description = "system (" + (used.empty() ? std::string("empty") : used) + ")";
    return out;
  }

  if (!options.ca_file.empty()) {
    GETCERT_TRY(check_readable(options.ca_file, false, "CA file"));
    GETCERT_TRY_ASSIGN(auto added, add_pem_file(out.store.get(), options.ca_file));
    if (added == 0) {
      return fail(Errc::malformed_input,
                  "CA file '" + options.ca_file + "' holds no PEM certificate");
    }
    out.description = "file:" + options.ca_file;
  }
  if (!options.ca_dir.empty()) {
    GETCERT_TRY(check_readable(options.ca_dir, true, "CA directory"));
    if (X509_STORE_load_path(out.store.get(), options.ca_dir.c_str()) != 1) {
      return fail(Errc::io_error, "cannot use CA directory '" + options.ca_dir + "'",
                  internal::drain_errors());
    }
    if (!out.description.empty()) out.description += ", ";
    out.description += "dir:" + options.ca_dir;
  }
  out.explicit_anchors = true;
  // OpenSSL computes a certificate's extension cache (hashes, key ids, flags) on first use,
  // writing into the shared X509 under its lock while other threads' comparisons read those
  // fields (ThreadSanitizer saw it under fetch_many). Computed here, before the store is cached
  // and shared, every later use only reads.
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(out.store.get());
  for (int i = 0; i < sk_X509_OBJECT_num(objects); ++i) {
    if (X509* cert = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i))) {
      (void)X509_check_purpose(cert, -1, 0);
    }
  }
  return out;
}

std::string stat_stamp(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec);
}

// A directory's entries are judged one by one: a certificate edited in place changes only its
// own file, never the directory's timestamp, and `c_rehash` folders are links to files
// elsewhere (stat follows them). The entries are sorted by name, so that the order readdir
// gives does not matter. Bounded: a folder of more entries than this is judged by its first
// ones and its own stamp (a trust folder holds a few hundred).
constexpr std::size_t kMaxStampedEntries = 100000;

std::string dir_stamp(const std::string& path, const struct stat& dir) {
  std::string out = stat_stamp(dir);
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return out;
  std::vector<std::string> entries;
  while (const dirent* e = ::readdir(d)) {
    if (entries.size() >= kMaxStampedEntries) break;
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    struct stat st {};
    const std::string full = path + "/" + e->d_name;
    entries.push_back(std::string(name) + "=" +
                      (::stat(full.c_str(), &st) == 0 ? stat_stamp(st) : std::string("-")));
  }
  ::closedir(d);
  std::sort(entries.begin(), entries.end());
  for (const auto& e : entries) out += "|" + e;
  return out;
}

// What identifies a file's content cheaply (inode, size, mtime and ctime; for a directory,
// those of every entry too): a changed file gets a fresh store.
std::string file_stamp(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return "-";
  if (S_ISDIR(st.st_mode)) return dir_stamp(path, st);
  return stat_stamp(st);
}

// Parsing a bundle costs milliseconds per certificate set with OpenSSL 3 (every certificate
// goes through the decoder machinery), which dominated runs over many targets (fetch_many):
// each fetch loaded the same store again. Loaded stores are kept, keyed by what was asked and
// by the files behind it, and shared: an X509_STORE is safe to verify against from several
// threads at once (lookups in a hashed directory lock it), and verification only reads it.
// The mutex also makes a burst of first fetches parse the bundle once, not once per thread.
struct StoreCache {
  std::mutex mutex;
  std::map<std::string, TrustStore> stores;  // key: options + env + file stamps
  static constexpr std::size_t kMaxEntries = 16;
};

std::string cache_key(const TrustOptions& options) {
  std::string key;
  const auto add = [&key](const std::string& part) { key += part + '\n'; };
  if (options.ca_file.empty() && options.ca_dir.empty()) {
    const char* env_file = std::getenv(X509_get_default_cert_file_env());
    const char* env_dir = std::getenv(X509_get_default_cert_dir_env());
    add("system");
    add(env_file != nullptr ? env_file : "-");
    add(env_dir != nullptr ? env_dir : "-");
    for (const std::string& path : system_trust_candidates("", env_file, env_dir)) {
      add(path);
      add(file_stamp(path));
    }
  } else {
    add(options.ca_file);
    add(file_stamp(options.ca_file));
    add(options.ca_dir);
    add(file_stamp(options.ca_dir));
  }
  return key;
}

}  // namespace

Result<TrustStore> load_trust_store(const TrustOptions& options) {
  static StoreCache cache;
  const std::string key = cache_key(options);
  const std::lock_guard<std::mutex> lock(cache.mutex);
  if (const auto found = cache.stores.find(key); found != cache.stores.end()) {
    if (X509_STORE_up_ref(found->second.store.get()) == 1) {
      return TrustStore{internal::X509StorePtr(found->second.store.get()),
                        found->second.description, found->second.explicit_anchors};
    }
  }
  auto loaded = load_trust_store_uncached(options);
  if (!loaded) return loaded;
  if (cache.stores.size() >= StoreCache::kMaxEntries) cache.stores.clear();
  if (X509_STORE_up_ref(loaded->store.get()) == 1) {
    cache.stores.emplace(key, TrustStore{internal::X509StorePtr(loaded->store.get()),
                                         loaded->description, loaded->explicit_anchors});
  }
  return loaded;
}

}  // namespace getcert::detail
