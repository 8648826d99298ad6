#include "support/issued_leaf.hpp"

#include "support/commands.hpp"

namespace getcert::test {

ServedChain issue_leaf(const TempDir& dir, const std::string& stem, const std::string& cn,
                       const std::string& san) {
  const std::string key = dir / (stem + ".key");
  const std::string csr = dir / (stem + ".csr");
  const std::string ext = dir / (stem + ".ext");
  const std::string pem = dir / (stem + ".pem");
  const std::string chain = dir / (stem + "-chain.pem");
  openssl({"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key});
  openssl({"req", "-new", "-key", key, "-subj", "/CN=" + cn, "-out", csr});
  write_file(ext,
             "basicConstraints = critical, CA:FALSE\n"
             "keyUsage = critical, digitalSignature\n"
             "extendedKeyUsage = serverAuth\n"
             "subjectKeyIdentifier = hash\n"
             "authorityKeyIdentifier = keyid:always\n"
             "subjectAltName = " +
                 san + "\n");
  openssl({"x509", "-req", "-in", csr, "-CA", pki("intermediate.pem"), "-CAkey",
           pki("intermediate.key"), "-set_serial", "0x51ed", "-days", "30", "-sha256", "-extfile",
           ext, "-out", pem});
  write_file(chain, read_file(pem) + read_file(pki("intermediate.pem")));
  return {chain, key};
}

}  // namespace getcert::test
