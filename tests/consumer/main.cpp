// Uses every public header from a C++17 translation unit, offline: parses an endpoint, reads
// and verifies a PEM chain, opens a PKCS#12 file given on the command line and turns its
// identity into TlsMaterial.
#include <getcert/certificate.hpp>
#include <getcert/endpoint.hpp>
#include <getcert/error.hpp>
#include <getcert/fetch.hpp>
#include <getcert/fetch_many.hpp>
#include <getcert/pkcs12.hpp>
#include <getcert/tls_material.hpp>
#include <getcert/verify.hpp>

#include <fstream>
#include <iostream>
#include <iterator>

static std::string slurp(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: consumer CHAIN.pem ROOT.pem FILE.p12\n";
    return 2;
  }
  auto ep = getcert::parse_endpoint("https://[::1]:8443/x");
  if (!ep || ep->port != 8443 || !ep->is_ip) return 1;

  auto chain = getcert::parse_certificates_pem(slurp(argv[1]));
  if (!chain) return 1;
  getcert::VerifyOptions options;
  options.trust.ca_file = argv[2];
  options.name = "localhost";
  auto verdict = getcert::verify_chain(*chain, options);
  if (!verdict || !verdict->ok) return 1;

  // fetch_many, offline: an unparseable target comes back as its own error result.
  bool given = false;
  int errors = 0;
  getcert::fetch_many(
      [&]() -> std::optional<std::string> {
        if (given) return std::nullopt;
        given = true;
        return std::string("not a target:0");
      },
      [&](getcert::ManyResult&& r) { errors += r.result ? 100 : 1; });
  if (errors != 1) return 1;

  const std::string p12 = slurp(argv[3]);
  getcert::pkcs12::DecodeOptions decode;
  decode.password = "consumer";
  auto bundle = getcert::pkcs12::decode(std::vector<std::uint8_t>(p12.begin(), p12.end()), decode);
  if (!bundle || bundle->identities.size() != 1) return 1;
  // TlsMaterial comes with getcert::pkcs12: no gRPC needed.
  auto material = getcert::identity_material(bundle->identities.front());
  if (!material || material->key_pem.empty() || material->cert_chain_pem.empty()) return 1;
  std::cout << "ok: " << verdict->verified_chain.back().subject << "\n";
  return 0;
}
