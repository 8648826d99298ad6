// The ENGINE API is deprecated in OpenSSL 3.0, but it is still the one way to route key
// methods to the built-in code (see the header for why that is worth it).
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "builtin_key_methods.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include <array>
#include <string>

#include <openssl/opensslv.h>

// OpenSSL 3.1 caches decoders, which removes the cost this works around (see the header), so
// the ENGINE is compiled only for 3.0 with ENGINE support, and installed only when the OpenSSL
// loaded at run time is a 3.0 too.
#if !defined(OPENSSL_NO_ENGINE) && __has_include(<openssl/engine.h>) && \
    OPENSSL_VERSION_NUMBER < 0x30100000L
#define GETCERT_BUILTIN_KEY_ENGINE 1
#include <openssl/engine.h>
#endif

namespace getcert::cli {
namespace {

#ifdef GETCERT_BUILTIN_KEY_ENGINE
// RSA (PKCS#1 v1.5 and PSS signatures over an rsaEncryption key) and EC keys: what servers
// present. Ed25519, Ed448 and RSA-PSS-only keys stay with the providers.
constexpr std::array<int, 2> kKeyTypes = {EVP_PKEY_RSA, EVP_PKEY_EC};

int builtin_key_methods(ENGINE* /*engine*/, EVP_PKEY_METHOD** method, const int** nids, int nid) {
  if (method == nullptr) {
    *nids = kKeyTypes.data();
    return static_cast<int>(kKeyTypes.size());
  }
  // The built-in table's own method: the engine only points OpenSSL back at it.
  *method = const_cast<EVP_PKEY_METHOD*>(EVP_PKEY_meth_find(nid));
  return *method != nullptr ? 1 : 0;
}

// Empty when the configuration loaded only OpenSSL's own providers (or none yet: then the
// default provider is what OpenSSL loads on first use); otherwise why the providers stay.
std::string other_providers() {
  if (EVP_default_properties_is_fips_enabled(nullptr) != 0) {
    return "the configuration asks for FIPS implementations";
  }
  std::string others;
  OSSL_PROVIDER_do_all(
      nullptr,
      [](OSSL_PROVIDER* provider, void* data) -> int {
        const std::string name = OSSL_PROVIDER_get0_name(provider);
        if (name != "default" && name != "base" && name != "legacy") {
          auto& list = *static_cast<std::string*>(data);
          list += (list.empty() ? "'" : ", '") + name + "'";
        }
        return 1;
      },
      &others);
  return others.empty() ? others : "the configuration loads " + others;
}

KeyMethods install() {
  const auto providers = [](const std::string& why) {
    return KeyMethods{false, "OpenSSL's providers" + (why.empty() ? "" : " (" + why + ")")};
  };
  if (OpenSSL_version_num() >= 0x30100000L) {
    return providers("OpenSSL 3.1 or later caches its decoders");
  }
  // The configuration names the providers: read it first, as any later OpenSSL call would.
  if (OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr) != 1) {
    return providers("OpenSSL's configuration did not load");
  }
  if (const std::string why = other_providers(); !why.empty()) return providers(why);
  ENGINE* engine = ENGINE_new();
  if (engine == nullptr) return providers("");
  bool installed = false;
  if (ENGINE_set_id(engine, "getcert-builtin-keys") == 1 &&
      ENGINE_set_name(engine, "OpenSSL's built-in RSA and EC key methods") == 1 &&
      ENGINE_set_pkey_meths(engine, builtin_key_methods) == 1 && ENGINE_add(engine) == 1) {
    // Failing here leaves the providers in charge: slower, equally correct.
    installed = ENGINE_set_default_pkey_meths(engine) == 1;
  }
  ENGINE_free(engine);  // ENGINE_add and the default table hold their own references
  return installed ? KeyMethods{true, "OpenSSL's built-in RSA and EC code"} : providers("");
}
#endif

}  // namespace

const KeyMethods& use_builtin_key_methods() {
#ifdef GETCERT_BUILTIN_KEY_ENGINE
  static const KeyMethods what = install();
#else
  static const KeyMethods what{
      false, "OpenSSL's providers (built against OpenSSL 3.1 or later, or without ENGINE support)"};
#endif
  return what;
}

}  // namespace getcert::cli
