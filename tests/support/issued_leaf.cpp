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

ServedChain issue_must_staple_leaf(const TempDir& dir, const std::string& stem,
                                   const std::string& name, const std::vector<TestSct>& scts) {
  LeafSpec spec;
  spec.cn = name;
  spec.san = "DNS:" + name;
  spec.extra_extensions = sct_list_extension(scts) + "tlsfeature = status_request\n";
  return issue_leaf(dir, stem, spec);
}

std::vector<std::uint8_t> sct_list_der(const std::vector<TestSct>& scts) {
  auto put16 = [](std::vector<std::uint8_t>& out, std::size_t n) {
    out.push_back(static_cast<std::uint8_t>(n >> 8U));
    out.push_back(static_cast<std::uint8_t>(n & 0xFFU));
  };
  std::vector<std::uint8_t> list;
  for (const auto& sct : scts) {
    std::vector<std::uint8_t> one{0};  // version v1
    one.insert(one.end(), sct.log_id.begin(), sct.log_id.end());
    for (int shift = 56; shift >= 0; shift -= 8) {
      one.push_back(static_cast<std::uint8_t>(sct.timestamp_ms >> static_cast<unsigned>(shift)));
    }
    put16(one, 0);     // no extensions
    one.push_back(4);  // hash: sha256
    one.push_back(3);  // signature: ecdsa
    const std::vector<std::uint8_t> signature{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01};
    put16(one, signature.size());
    one.insert(one.end(), signature.begin(), signature.end());
    put16(list, one.size());
    list.insert(list.end(), one.begin(), one.end());
  }
  std::vector<std::uint8_t> tls;
  put16(tls, list.size());
  tls.insert(tls.end(), list.begin(), list.end());
  // The extension's value is an OCTET STRING holding the TLS-encoded list (short form length).
  std::vector<std::uint8_t> der{0x04, static_cast<std::uint8_t>(tls.size())};
  der.insert(der.end(), tls.begin(), tls.end());
  return der;
}

std::string sct_list_extension(const std::vector<TestSct>& scts) {
  const auto der = sct_list_der(scts);
  std::string text = "1.3.6.1.4.1.11129.2.4.2 = DER:";
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (std::size_t i = 0; i < der.size(); ++i) {
    if (i != 0) text += ':';
    text += kHex[der[i] >> 4U];
    text += kHex[der[i] & 0x0FU];
  }
  return text + "\n";
}

}  // namespace getcert::test
