#include "support/issued_leaf.hpp"

#include "support/commands.hpp"

namespace getcert::test {

ServedChain issue_leaf(const TempDir& dir, const std::string& stem, const LeafSpec& spec) {
  const std::string key = dir / (stem + ".key");
  const std::string csr = dir / (stem + ".csr");
  const std::string ext = dir / (stem + ".ext");
  const std::string pem = dir / (stem + ".pem");
  const std::string chain = dir / (stem + "-chain.pem");
  std::vector<std::string> genpkey{"genpkey"};
  genpkey.insert(genpkey.end(), spec.key_args.begin(), spec.key_args.end());
  genpkey.insert(genpkey.end(), {"-out", key});
  openssl(genpkey);
  openssl({"req", "-new", "-key", key, "-subj", "/CN=" + spec.cn, "-out", csr});
  write_file(ext,
             "basicConstraints = critical, CA:FALSE\n"
             "keyUsage = critical, digitalSignature\n"
             "extendedKeyUsage = serverAuth\n"
             "subjectKeyIdentifier = hash\n"
             "authorityKeyIdentifier = keyid:always\n" +
                 (spec.san.empty() ? std::string() : "subjectAltName = " + spec.san + "\n") +
                 spec.extra_extensions);
  openssl({"x509", "-req", "-in", csr, "-CA", pki("intermediate.pem"), "-CAkey",
           pki("intermediate.key"), "-set_serial", "0x51ed", "-days", std::to_string(spec.days),
           "-" + spec.digest, "-extfile", ext, "-out", pem});
  write_file(chain, read_file(pem) + read_file(pki("intermediate.pem")));
  return {chain, key};
}

ServedChain issue_leaf(const TempDir& dir, const std::string& stem, const std::string& cn,
                       const std::string& san) {
  LeafSpec spec;
  spec.cn = cn;
  spec.san = san;
  return issue_leaf(dir, stem, spec);
}

}  // namespace getcert::test
