#include "support/test_pki.hpp"

#include <chrono>

#include "support/files.hpp"

namespace getcert::test {

const TestPki& test_pki() {
  static const TestPki kPki = [] {
    TestPki p;
    p.root_cert = pki("root.pem");
    p.root_key = pki("root.key");
    p.inter_cert = pki("intermediate.pem");
    p.inter_key = pki("intermediate.key");
    for (const char* name : {"rsa", "ecdsa", "ed25519"}) {
      p.leaves.push_back({name, pki(std::string(name) + ".key"), pki(std::string(name) + ".pem")});
    }
    return p;
  }();
  return kPki;
}

VerifyOptions verify_trusting_test_root(const std::string& name) {
  VerifyOptions o;
  o.trust.ca_file = pki("ca-bundle.pem");
  o.name = name;
  o.fetch_missing = false;
  o.network_timeout = std::chrono::seconds(5);
  return o;
}

FetchOptions fetch_trusting(const std::string& ca_file) {
  FetchOptions o;
  o.verify.trust.ca_file = ca_file;
  o.connect.timeout = std::chrono::seconds(10);
  return o;
}

FetchOptions fetch_trusting_test_root() { return fetch_trusting(pki("ca-bundle.pem")); }

}  // namespace getcert::test
