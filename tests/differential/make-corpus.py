#!/usr/bin/env python3
"""Generates the differential verification corpus: one folder per case.

Usage: make-corpus.py OUT_DIR

Each case folder holds what a TLS client sees and what it is told:
  chain.pem    what the server presents, leaf first (in the order the case wants)
  key.pem      the leaf's private key (for the live gRPC case)
  roots.pem    the trust anchors
  name         the host name or IP address to verify
  at           the verification time, epoch seconds
  expect.json  the expected verdict per verifier, with the reason for each documented difference

build_cases() below is the specification. For each case:
  want        the correct verdict ("accept"/"reject") under getcert's policy, which follows RFC
              5280/6125 and the strictest of the verifiers compared (see README, "Verification
              policy compared");
  code        the getcert error code a rejection must carry (one of verification.errors[].code);
  differ      verifiers documented to reach the other verdict, with a one-line reason each
              (these are the rows of the README's policy table);
  pending     the name of a getcert fix not on this branch yet (PENDING_FIXES), and what getcert
              says until then;
  warning     a word getcert's verification warnings must contain, and the fix that brings it.
"""

import datetime
import ipaddress
import json
import os
import sys
import time
import warnings

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# getcert fixes being made on another branch. While a fix is listed here, the cases that need it
# expect getcert's current (wrong) answer, given in the case's "pending" entry; once the fix is
# merged, delete its line and those cases expect the correct verdict.
PENDING_FIXES: set = set()  # every fix listed here so far has landed

VERIFIERS = ["getcert", "openssl", "gnutls", "go", "grpc"]

# SHA-1 and MD5 signatures are made on purpose (the weak-algorithm cases).
warnings.filterwarnings("ignore", message=".*signatures are deprecated")

NOW = int(time.time())
DAY = 86400


def utc(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).replace(tzinfo=None)


def ec_key(curve=None):
    return ec.generate_private_key(curve or ec.SECP256R1())


def rsa_key(bits):
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


class Issued:
    """A certificate with its key, so it can issue others."""

    def __init__(self, cert, key):
        self.cert = cert
        self.key = key

    def pem(self):
        return self.cert.public_bytes(serialization.Encoding.PEM)


def usage(digital_signature=False, key_encipherment=False, key_cert_sign=False, crl_sign=False):
    return x509.KeyUsage(digital_signature=digital_signature, content_commitment=False,
                         key_encipherment=key_encipherment, data_encipherment=False,
                         key_agreement=False, key_cert_sign=key_cert_sign, crl_sign=crl_sign,
                         encipher_only=False, decipher_only=False)


CA_USAGE = usage(digital_signature=True, key_cert_sign=True, crl_sign=True)
LEAF_USAGE = usage(digital_signature=True)
SERVER_AUTH = [ExtendedKeyUsageOID.SERVER_AUTH]
DEFAULT = object()  # "the usual value" for optional certificate fields


def make_cert(cn, issuer=None, key=None, *, ca=False, path_len=None, basic=DEFAULT,
              key_usage=DEFAULT, eku=DEFAULT, dns=(), ips=(), name_constraints=None,
              not_before=None, not_after=None, digest=None, subject_name=None, extra=()):
    """Issues a certificate; issuer None makes it self-signed. Returns Issued."""
    key = key or ec_key()
    name = subject_name or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)] +
                                     ([x509.NameAttribute(NameOID.ORGANIZATION_NAME,
                                                          "getcert differential")] if ca else []))
    signer_key = issuer.key if issuer else key
    signer_name = issuer.cert.subject if issuer else name
    if not_before is None:
        not_before = NOW - (3650 if ca else 30) * DAY
    if not_after is None:
        not_after = NOW + (3650 if ca else 365) * DAY
    b = (x509.CertificateBuilder().subject_name(name).issuer_name(signer_name)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(utc(not_before)).not_valid_after(utc(not_after)))
    if basic is DEFAULT:
        basic = x509.BasicConstraints(ca=ca, path_length=path_len if ca else None)
    if basic is not None:
        b = b.add_extension(basic, critical=True)
    if key_usage is DEFAULT:
        key_usage = CA_USAGE if ca else LEAF_USAGE
    if key_usage is not None:
        b = b.add_extension(key_usage, critical=True)
    if eku is DEFAULT:
        eku = None if ca else SERVER_AUTH
    if eku is not None:
        b = b.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    sans = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if name_constraints is not None:
        b = b.add_extension(name_constraints, critical=True)
    for ext, critical in extra:
        b = b.add_extension(ext, critical=critical)
    b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    if issuer is not None:
        b = b.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key()),
            critical=False)
    cert = b.sign(signer_key, digest or hashes.SHA256())
    return Issued(cert, key)


class Pki:
    """The shared hierarchy most cases use: Root -> Intermediate -> leaves."""

    def __init__(self):
        self.root = make_cert("Differential Root CA", ca=True)
        self.inter = make_cert("Differential Intermediate CA", self.root, ca=True)
        self.other_root = make_cert("Unrelated Root CA", ca=True)

    def leaf(self, cn="a.test", issuer=None, **kw):
        kw.setdefault("dns", [cn])
        return make_cert(cn, issuer or self.inter, **kw)


class Case:
    def __init__(self, name, chain, roots, host, want, *, code=None, at=None, differ=None,
                 pending=None, warning=None, der_leaf=None):
        self.name = name
        self.chain = chain  # [Issued], leaf first
        self.roots = roots  # [Issued]
        self.host = host
        self.want = want
        self.code = code
        self.at = at  # None: now, so the live gRPC client can check it too
        self.differ = differ or {}
        self.pending = pending  # (fix, getcert verdict now, getcert code now)
        self.warning = warning  # (word, fix)
        self.der_leaf = der_leaf  # replaces the leaf's DER (a corrupted signature)


def flip_last_byte(cert):
    der = bytearray(cert.public_bytes(serialization.Encoding.DER))
    der[-1] ^= 0x01  # the last byte belongs to the signature value
    return bytes(der)


GO_NO_CN = "Go never falls back to the CN (removed in Go 1.17)"
OPENSSL_PARTIAL = ("openssl verify without -partial_chain trusts only self-signed anchors, "
                   "like every OpenSSL client that does not set X509_V_FLAG_PARTIAL_CHAIN")
OPENSSL_NOT_AFTER = "OpenSSL treats notAfter as exclusive (X509_cmp_time counts equality as past)"
GO_WEAK_RSA = "Go's crypto/x509 sets no minimum RSA key size"
GRPC_IP_IN_DNS = "gRPC compares an IP target as text against every SAN entry, DNS ones included"
GO_ANY_EKU = "Go treats anyExtendedKeyUsage as allowing every purpose"
GETCERT_INCOMPLETE = ("getcert alone reports incomplete_chain when the server does not send an "
                      "intermediate that only the trust store supplies: clients that trust "
                      "just the root fail against that server")
TLS_NO_CURVE = ("no TLS 1.3 signature scheme exists for this curve and OpenSSL clients do not "
                "offer it in TLS 1.2, so the handshake fails whatever the verdict")


def build_cases(pki):
    c = []
    root, inter = pki.root, pki.inter
    std = [root]

    def simple(name, leaf, host, want, **kw):
        c.append(Case(name, [leaf, inter], kw.pop("roots", std), host, want, **kw))

    # --- names and wildcards ----------------------------------------------------------------
    simple("name-exact", pki.leaf("a.test"), "a.test", "accept")
    simple("name-case-insensitive", pki.leaf("a.test"), "A.TEST", "accept")
    simple("name-mismatch", pki.leaf("a.test"), "b.test", "reject", code="hostname_mismatch")
    wild = pki.leaf("*.a.test")
    simple("wildcard-one-label", wild, "x.a.test", "accept")
    simple("wildcard-not-apex", wild, "a.test", "reject", code="hostname_mismatch")
    simple("wildcard-not-two-labels", wild, "x.y.a.test", "reject", code="hostname_mismatch")
    simple("wildcard-alone", pki.leaf("*"), "a.test", "reject", code="hostname_mismatch")
    simple("wildcard-not-leftmost", pki.leaf("a.*.test"), "a.b.test", "reject",
           code="hostname_mismatch")
    simple("wildcard-partial", pki.leaf("f*.a.test"), "foo.a.test", "reject",
           code="hostname_mismatch",
           differ={"openssl": "openssl verify -verify_hostname allows partial wildcards "
                              "(no flag turns that off); getcert passes "
                              "X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS"})
    simple("wildcard-idn-parent", pki.leaf("*.xn--bcher-kva.test"), "x.xn--bcher-kva.test",
           "accept")
    simple("wildcard-matches-a-label", wild, "xn--bcher-kva.a.test", "accept")
    simple("wildcard-inside-a-label", pki.leaf("xn--*.a.test"), "xn--bcher-kva.a.test", "reject",
           code="hostname_mismatch")

    # --- IP addresses -------------------------------------------------------------------------
    ip4 = pki.leaf("ip4", dns=[], ips=["127.0.0.1"])
    simple("ipv4-san", ip4, "127.0.0.1", "accept")
    simple("ipv4-san-other-ip", ip4, "127.0.0.2", "reject", code="ip_mismatch")
    ip6 = pki.leaf("ip6", dns=[], ips=["::1"])
    simple("ipv6-san-compressed", ip6, "::1", "accept")
    simple("ipv6-san-uncompressed", ip6, "0:0:0:0:0:0:0:1", "accept",
           differ={"grpc": "gRPC compares IP targets as text with the SAN printed compressed"})
    simple("ip-in-dns-san", pki.leaf("127.0.0.1", dns=["127.0.0.1"]), "127.0.0.1", "reject",
           code="ip_mismatch", differ={"grpc": GRPC_IP_IN_DNS})
    simple("ip-cn-only", pki.leaf("127.0.0.1", dns=[]), "127.0.0.1", "reject",
           code="ip_mismatch")
    simple("cn-only-leaf", pki.leaf("a.test", dns=[]), "a.test", "accept",
           differ={"go": GO_NO_CN}, warning=("cn_fallback", "no-cn-fallback-with-san"))
    simple("ip-san-only-cn-is-host", pki.leaf("a.test", dns=[], ips=["127.0.0.1"]), "a.test",
           "reject", code="hostname_mismatch",
           differ={"openssl": "OpenSSL's X509_check_host falls back to the CN when there is no "
                              "DNS SAN, even with other SANs present"},
           pending=("no-cn-fallback-with-san", "accept", None))

    # --- validity period ----------------------------------------------------------------------
    t0, t1 = NOW - 10 * DAY, NOW + 10 * DAY
    window = pki.leaf("a.test", not_before=t0, not_after=t1)
    simple("at-not-before", window, "a.test", "accept", at=t0)
    simple("before-not-before", window, "a.test", "reject", code="not_yet_valid", at=t0 - 1)
    simple("at-not-after", window, "a.test", "accept", at=t1,
           differ={"openssl": OPENSSL_NOT_AFTER},
           pending=("not-after-inclusive", "reject", "expired"))
    simple("after-not-after", window, "a.test", "reject", code="expired", at=t1 + 1)
    simple("expired-now", pki.leaf("a.test", not_before=NOW - 90 * DAY, not_after=NOW - DAY),
           "a.test", "reject", code="expired")
    old_inter = make_cert("Expired Intermediate CA", root, ca=True, not_before=NOW - 900 * DAY,
                          not_after=NOW - DAY)
    c.append(Case("expired-intermediate", [pki.leaf(issuer=old_inter), old_inter], std, "a.test",
                  "reject", code="expired"))

    # --- extended key usage -------------------------------------------------------------------
    client_inter = make_cert("Client-only Intermediate CA", root, ca=True,
                             eku=[ExtendedKeyUsageOID.CLIENT_AUTH])
    c.append(Case("eku-intermediate-client-only", [pki.leaf(issuer=client_inter), client_inter],
                  std, "a.test", "reject", code="wrong_purpose"))
    simple("eku-leaf-none", pki.leaf(eku=None), "a.test", "accept")
    simple("eku-leaf-client-only", pki.leaf(eku=[ExtendedKeyUsageOID.CLIENT_AUTH]), "a.test",
           "reject", code="wrong_purpose")
    simple("eku-leaf-any", pki.leaf(eku=[ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE]), "a.test",
           "reject", code="wrong_purpose",
           differ={"go": GO_ANY_EKU, "gnutls": "GnuTLS accepts anyExtendedKeyUsage in a leaf"})
    any_inter = make_cert("AnyEKU Intermediate CA", root, ca=True,
                          eku=[ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE])
    c.append(Case("eku-intermediate-any", [pki.leaf(issuer=any_inter), any_inter], std, "a.test",
                  "reject", code="wrong_purpose", differ={"go": GO_ANY_EKU}))

    # --- basicConstraints and keyUsage --------------------------------------------------------
    not_ca = make_cert("Not-a-CA Intermediate", root, basic=x509.BasicConstraints(False, None),
                       key_usage=CA_USAGE)
    c.append(Case("intermediate-not-ca", [pki.leaf(issuer=not_ca), not_ca], std, "a.test",
                  "reject", code="invalid_ca"))
    no_bc = make_cert("No-basicConstraints Intermediate", root, basic=None, key_usage=CA_USAGE)
    c.append(Case("intermediate-no-basic-constraints", [pki.leaf(issuer=no_bc), no_bc], std,
                  "a.test", "reject", code="invalid_ca"))
    len0 = make_cert("PathLen0 Intermediate CA", root, ca=True, path_len=0)
    below = make_cert("Below-PathLen0 Intermediate CA", len0, ca=True)
    c.append(Case("path-length-exceeded", [pki.leaf(issuer=below), below, len0], std, "a.test",
                  "reject", code="path_length_exceeded"))
    no_sign = make_cert("No-keyCertSign Intermediate CA", root, ca=True,
                        key_usage=usage(digital_signature=True, crl_sign=True))
    c.append(Case("intermediate-no-keycertsign", [pki.leaf(issuer=no_sign), no_sign], std,
                  "a.test", "reject", code="invalid_ca"))
    simple("leaf-ecdsa-ku-without-digitalsignature",
           pki.leaf(key_usage=usage(key_encipherment=True)), "a.test", "accept")

    # --- name constraints ---------------------------------------------------------------------
    permit = make_cert("Permitted good.test CA", root, ca=True,
                       name_constraints=x509.NameConstraints([x509.DNSName("good.test")], None))
    c.append(Case("nc-permitted-dns-inside", [pki.leaf("x.good.test", issuer=permit), permit],
                  std, "x.good.test", "accept"))
    c.append(Case("nc-permitted-dns-outside", [pki.leaf("x.bad.test", issuer=permit), permit],
                  std, "x.bad.test", "reject", code="name_constraint_violation"))
    exclude = make_cert("Excluded bad.test CA", root, ca=True,
                        name_constraints=x509.NameConstraints(None, [x509.DNSName("bad.test")]))
    c.append(Case("nc-excluded-dns-inside", [pki.leaf("x.bad.test", issuer=exclude), exclude],
                  std, "x.bad.test", "reject", code="name_constraint_violation"))
    c.append(Case("nc-excluded-dns-outside", [pki.leaf("x.good.test", issuer=exclude), exclude],
                  std, "x.good.test", "accept"))
    loop = make_cert("Permitted 127/8 CA", root, ca=True, name_constraints=x509.NameConstraints(
        [x509.IPAddress(ipaddress.ip_network("127.0.0.0/8"))], None))
    c.append(Case("nc-permitted-ip-inside",
                  [pki.leaf("ip", issuer=loop, dns=[], ips=["127.0.0.5"]), loop], std,
                  "127.0.0.5", "accept"))
    c.append(Case("nc-permitted-ip-outside",
                  [pki.leaf("ip", issuer=loop, dns=[], ips=["192.0.2.1"]), loop], std,
                  "192.0.2.1", "reject", code="name_constraint_violation"))

    # --- signatures and extensions -----------------------------------------------------------
    bad = pki.leaf()
    c.append(Case("bad-signature-leaf", [bad, inter], std, "a.test", "reject",
                  code="bad_signature", der_leaf=flip_last_byte(bad.cert)))
    # An extension no verifier knows, marked critical, must make every one of them refuse.
    unknown = x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.4.1.55555.1"), b"\x05\x00")
    simple("unknown-critical-extension", pki.leaf(extra=[(unknown, True)]), "a.test", "reject",
           code="unhandled_critical_extension")

    # --- path building ------------------------------------------------------------------------
    # Let's Encrypt, September 2021: R3 is issued by ISRG Root X1; the server also sends X1
    # cross-signed by DST Root CA X3, which has expired. With X1 trusted, a good verifier stops
    # at X1 and never needs the expired cross-signature.
    dst = make_cert("DST Root CA X3", ca=True, not_before=NOW - 20 * 365 * DAY,
                    not_after=NOW - 60 * DAY)
    x1 = make_cert("ISRG Root X1", ca=True)
    x1_cross = make_cert("ISRG Root X1", dst, key=x1.key, ca=True, subject_name=x1.cert.subject,
                         not_before=NOW - 5 * 365 * DAY, not_after=NOW + 365 * DAY)
    r3 = make_cert("R3", x1, ca=True, path_len=0)
    le_leaf = pki.leaf("a.test", issuer=r3)
    c.append(Case("cross-signed-expired-root-x1-trusted", [le_leaf, r3, x1_cross], [x1, dst],
                  "a.test", "accept"))
    c.append(Case("cross-signed-only-expired-root-trusted", [le_leaf, r3, x1_cross], [dst],
                  "a.test", "reject", code="expired"))
    r3_by_dst = make_cert("R3", dst, key=r3.key, ca=True, path_len=0,
                          subject_name=r3.cert.subject, not_before=NOW - 5 * 365 * DAY,
                          not_after=NOW + 365 * DAY)
    # The same, with R3 itself sent twice, cross-signed by DST first. OpenSSL and GnuTLS take the
    # first issuer they find and do not backtrack past the expired DST: so do their clients.
    c.append(Case("two-issuers-for-r3", [le_leaf, r3_by_dst, r3], [x1, dst], "a.test", "reject",
                  code="expired",
                  differ={"go": "Go explores every candidate issuer and finds leaf <- R3 <- X1"}))

    i1 = make_cert("Deep Intermediate 1", root, ca=True)
    i2 = make_cert("Deep Intermediate 2", i1, ca=True)
    deep = pki.leaf(issuer=i2)
    c.append(Case("chain-in-order", [deep, i2, i1], std, "a.test", "accept"))
    c.append(Case("chain-out-of-order", [deep, i1, i2], std, "a.test", "accept"))
    c.append(Case("chain-with-unrelated-certs", [pki.leaf(), pki.other_root, inter,
                                                 make_cert("Stray Leaf", pki.other_root)],
                  std, "a.test", "accept"))
    c.append(Case("chain-includes-root", [pki.leaf(), inter, root], std, "a.test", "accept"))
    c.append(Case("missing-intermediate", [pki.leaf()], std, "a.test", "reject",
                  code="missing_intermediate"))
    # The server omits its intermediate; the trust options hold it and its root. Every other
    # verifier builds the path from the store; getcert does too, but calls the result
    # incomplete_chain, since clients that trust only the root fail against this server.
    c.append(Case("intermediate-only-in-ca-file", [pki.leaf()], [root, inter], "a.test", "reject",
                  code="missing_intermediate",
                  differ={v: GETCERT_INCOMPLETE for v in ("openssl", "gnutls", "go", "grpc")}))
    c.append(Case("untrusted-root", [pki.leaf(), inter], [pki.other_root], "a.test", "reject",
                  code="unknown_issuer"))
    c.append(Case("ca-file-holds-intermediate-only", [pki.leaf(), inter], [inter], "a.test",
                  "accept", differ={"openssl": OPENSSL_PARTIAL},
                  pending=("ca-file-partial-chain", "reject", "unknown_issuer")))
    selfsigned = make_cert("a.test", dns=["a.test"], eku=SERVER_AUTH)
    c.append(Case("self-signed-leaf-trusted", [selfsigned], [selfsigned], "a.test", "accept",
                  differ={"gnutls": "GnuTLS requires CA:TRUE of any issuer, even a trusted "
                                    "self-signed leaf"}))
    c.append(Case("self-signed-leaf-untrusted", [selfsigned], std, "a.test", "reject",
                  code="self_signed"))

    # --- weak algorithms ----------------------------------------------------------------------
    weak = ("too-weak", "accept", None)
    simple("sha1-leaf-signature", pki.leaf(digest=hashes.SHA1()), "a.test", "reject",
           code="too_weak", pending=weak)
    rsa_inter = make_cert("RSA-2048 Intermediate CA", root, key=rsa_key(2048), ca=True)
    c.append(Case("md5-leaf-signature", [pki.leaf(issuer=rsa_inter, digest=hashes.MD5()),
                                         rsa_inter], std, "a.test", "reject", code="too_weak",
                  pending=weak))
    c.append(Case("rsa2048-leaf", [pki.leaf(issuer=rsa_inter, key=rsa_key(2048)), rsa_inter],
                  std, "a.test", "accept"))
    simple("rsa1024-leaf", pki.leaf(key=rsa_key(1024)), "a.test", "reject", code="too_weak",
           differ={"go": GO_WEAK_RSA}, pending=weak)
    weak_inter = make_cert("RSA-1024 Intermediate CA", root, key=rsa_key(1024), ca=True)
    c.append(Case("rsa1024-intermediate", [pki.leaf(issuer=weak_inter), weak_inter], std,
                  "a.test", "reject", code="too_weak", differ={"go": GO_WEAK_RSA}, pending=weak))
    simple("ec-p192-leaf", pki.leaf(key=ec_key(ec.SECP192R1())), "a.test", "reject",
           code="too_weak", pending=weak)
    sha1_inter = make_cert("SHA-1-signed Intermediate CA", root, ca=True, digest=hashes.SHA1())
    c.append(Case("sha1-intermediate-signature", [pki.leaf(issuer=sha1_inter), sha1_inter], std,
                  "a.test", "reject", code="too_weak", pending=weak))
    simple("ec-p224-leaf", pki.leaf(key=ec_key(ec.SECP224R1())), "a.test", "accept",
           differ={"grpc": "P-224: " + TLS_NO_CURVE})
    sha1_root = make_cert("SHA-1 Self-signed Root CA", ca=True, digest=hashes.SHA1())
    sha1_root_inter = make_cert("Under SHA-1 Root CA", sha1_root, ca=True)
    c.append(Case("sha1-self-signature-on-anchor",
                  [pki.leaf(issuer=sha1_root_inter), sha1_root_inter], [sha1_root], "a.test",
                  "accept"))
    return c


def pem_of(items):
    return b"".join(i.pem() for i in items)


def expectations(case):
    """The verdict each verifier is expected to reach, with the reason where it differs."""
    other = "reject" if case.want == "accept" else "accept"
    out = {}
    for v in VERIFIERS:
        if v in case.differ:
            out[v] = {"verdict": other, "why": case.differ[v]}
        else:
            out[v] = {"verdict": case.want, "why": None}
    g = {"verdict": case.want, "code": case.code, "why": None, "warning": None}
    if case.warning and case.warning[1] not in PENDING_FIXES:
        g["warning"] = case.warning[0]
    if case.pending and case.pending[0] in PENDING_FIXES:
        fix, verdict_now, code_now = case.pending
        g = {"verdict": verdict_now, "code": code_now, "warning": g["warning"],
             "why": "known wrong until the fix '" + fix + "' is merged"}
    out["getcert"] = g
    return out


def write_case(out_dir, case):
    d = os.path.join(out_dir, case.name)
    os.makedirs(d, exist_ok=True)
    leaf = case.chain[0]
    leaf_pem = leaf.pem()
    if case.der_leaf is not None:
        leaf_pem = x509.load_der_x509_certificate(case.der_leaf).public_bytes(
            serialization.Encoding.PEM)
    files = {
        "chain.pem": leaf_pem + pem_of(case.chain[1:]),
        "roots.pem": pem_of(case.roots),
        "key.pem": leaf.key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()),
        "name": case.host.encode(),
        "at": str(case.at if case.at is not None else NOW).encode(),
        "expect.json": json.dumps({"now": case.at is None, "want": case.want,
                                   "expect": expectations(case)}, indent=1).encode(),
    }
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-corpus.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    cases = build_cases(Pki())
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    for case in cases:
        write_case(out_dir, case)
    print(f"make-corpus: {len(cases)} cases in {out_dir}")


if __name__ == "__main__":
    main()
