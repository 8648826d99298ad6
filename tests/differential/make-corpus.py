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
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

# getcert fixes being made on another branch. While a fix is listed here, the cases that need it
# expect getcert's current (wrong) answer, given in the case's "pending" entry; once the fix is
# merged, delete its line and those cases expect the correct verdict.
PENDING_FIXES: set = set()  # every fix listed here so far has landed

# getcert runs once per profile: "getcert" is the default profile (webpki).
PROFILES = ["webpki", "openssl", "rfc5280"]
VERIFIERS = ["getcert", "getcert:openssl", "getcert:rfc5280", "openssl", "gnutls", "go", "grpc",
             "pyca", "java", "webpki", "chromium", "firefox"]

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
              not_before=None, not_after=None, digest=None, subject_name=None, extra=(),
              basic_critical=True, eku_critical=False, nc_critical=True, ski=True, aki=DEFAULT,
              serial=None, emails=()):
    """Issues a certificate; issuer None makes it self-signed. Returns Issued."""
    key = key or ec_key()
    name = subject_name if subject_name is not None else x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)] +
                                     ([x509.NameAttribute(NameOID.ORGANIZATION_NAME,
                                                          "getcert differential")] if ca else []))
    signer_key = issuer.key if issuer else key
    signer_name = issuer.cert.subject if issuer else name
    if not_before is None:
        not_before = NOW - (3650 if ca else 30) * DAY
    if not_after is None:
        not_after = NOW + (3650 if ca else 365) * DAY
    b = (x509.CertificateBuilder().subject_name(name).issuer_name(signer_name)
         .public_key(key.public_key()).serial_number(serial or x509.random_serial_number())
         .not_valid_before(utc(not_before)).not_valid_after(utc(not_after)))
    if basic is DEFAULT:
        basic = x509.BasicConstraints(ca=ca, path_length=path_len if ca else None)
    if basic is not None:
        b = b.add_extension(basic, critical=basic_critical)
    if key_usage is DEFAULT:
        key_usage = CA_USAGE if ca else LEAF_USAGE
    if key_usage is not None:
        b = b.add_extension(key_usage, critical=True)
    if eku is DEFAULT:
        eku = None if ca else SERVER_AUTH
    if eku is not None:
        b = b.add_extension(x509.ExtendedKeyUsage(eku), critical=eku_critical)
    sans = ([x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
            + [x509.RFC822Name(e) for e in emails])
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if name_constraints is not None:
        b = b.add_extension(name_constraints, critical=nc_critical)
    for ext, critical in extra:
        b = b.add_extension(ext, critical=critical)
    if ski:
        b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                            critical=False)
    if aki is DEFAULT:
        aki = (x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key())
               if issuer is not None else None)
    if aki is not None:
        b = b.add_extension(aki, critical=False)
    cert = b.sign(signer_key, digest or hashes.SHA256())
    return Issued(cert, key)


# --- DER surgery, for what no certificate builder makes (v1, serials that are not positive) ---

def der_length(n):
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def der_tlv(tag, body):
    return bytes([tag]) + der_length(len(body)) + body


def der_items(data):
    """The top-level TLVs of `data`, each as its whole encoding."""
    items, i = [], 0
    while i < len(data):
        n, j = data[i + 1], i + 2
        if n & 0x80:
            k = n & 0x7F
            n, j = int.from_bytes(data[j:j + k], "big"), j + k
        items.append(data[i:j + n])
        i = j + n
    return items


def der_body(tlv):
    """The contents of one TLV."""
    return tlv[2 + (tlv[1] & 0x7F if tlv[1] & 0x80 else 0):]


class RawIssued(Issued):
    """A certificate kept as DER: pyca refuses to load some of the ones made here."""

    def __init__(self, der, key):
        super().__init__(None, key)
        self.der = der

    def pem(self):
        import base64
        b64 = base64.b64encode(self.der).decode()
        return ("-----BEGIN CERTIFICATE-----\n" +
                "".join(b64[i:i + 64] + "\n" for i in range(0, len(b64), 64)) +
                "-----END CERTIFICATE-----\n").encode()


def resign(issued, issuer, patch):
    """`issued` with its TBSCertificate items passed through patch(), signed again by issuer."""
    outer = der_items(der_body(issued.cert.public_bytes(serialization.Encoding.DER)))
    tbs = der_tlv(0x30, b"".join(patch(der_items(der_body(outer[0])))))
    sig = issuer.key.sign(tbs, ec.ECDSA(hashes.SHA256()))
    return RawIssued(der_tlv(0x30, tbs + outer[1] + der_tlv(0x03, b"\x00" + sig)), issued.key)


def with_serial(serial_der):
    return lambda items: [items[0], der_tlv(0x02, serial_der)] + items[2:]


def as_v1(items):
    """Drops the version (v1 is the default) and the extensions."""
    return [i for i in items[1:] if i[0] != 0xA3]


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
                 pending=None, warning=None, der_leaf=None, profiles=None):
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
        # getcert's verdict under the other profiles where it is not `want`:
        # {"openssl": ("accept", None, "cn_fallback"), "rfc5280": ("reject", "code", None)},
        # each (verdict, error code, warning code).
        self.profiles = profiles or {}


def flip_last_byte(cert):
    der = bytearray(cert.public_bytes(serialization.Encoding.DER))
    der[-1] ^= 0x01  # the last byte belongs to the signature value
    return bytes(der)


OPENSSL_CN = ("OpenSSL (and gRPC, curl and Python over it) and GnuTLS match the CN of a leaf "
              "without subjectAltName; Go (since 1.15), rustls, browsers and pyca do not")
OPENSSL_PARTIAL = ("openssl verify without -partial_chain trusts only self-signed anchors, "
                   "like every OpenSSL client that does not set X509_V_FLAG_PARTIAL_CHAIN")
OPENSSL_NOT_AFTER = "OpenSSL treats notAfter as exclusive (X509_cmp_time counts equality as past)"
GO_WEAK_RSA = "Go's crypto/x509 sets no minimum RSA key size"
PYCA_WEAK_RSA = "pyca's verifier sets no minimum RSA key size for a leaf"
GRPC_IP_IN_DNS = "gRPC compares an IP target as text against every SAN entry, DNS ones included"
GO_ANY_EKU = "Go treats anyExtendedKeyUsage as allowing every purpose"
FIRST_PATH_ONLY = (" takes the first issuer it finds and does not backtrack when the path through it "
                   "fails; Go, pyca and getcert's path building try the other candidates")
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
    ip4 = pki.leaf("127.0.0.1", dns=[], ips=["127.0.0.1"])
    simple("ipv4-san", ip4, "127.0.0.1", "accept")
    simple("ipv4-san-other-ip", ip4, "127.0.0.2", "reject", code="ip_mismatch")
    ip6 = pki.leaf("::1", dns=[], ips=["::1"])
    simple("ipv6-san-compressed", ip6, "::1", "accept")
    simple("ipv6-san-uncompressed", ip6, "0:0:0:0:0:0:0:1", "accept",
           differ={"grpc": "gRPC compares IP targets as text with the SAN printed compressed"})
    simple("ip-in-dns-san", pki.leaf("127.0.0.1", dns=["127.0.0.1"]), "127.0.0.1", "reject",
           code="ip_mismatch", differ={"grpc": GRPC_IP_IN_DNS})
    simple("ip-cn-only", pki.leaf("127.0.0.1", dns=[]), "127.0.0.1", "reject",
           code="ip_mismatch")
    simple("cn-only-leaf", pki.leaf("a.test", dns=[]), "a.test", "reject",
           code="no_subject_alt_name", profiles={"openssl": ("accept", None, "cn_fallback")},
           differ={v: OPENSSL_CN for v in ("openssl", "gnutls", "grpc")})
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
    simple("eku-leaf-none", pki.leaf(eku=None), "a.test", "accept",
           warning=("leaf_missing_eku", "profiles"),
           profiles={"rfc5280": ("reject", "leaf_missing_eku", None)})
    simple("eku-leaf-client-only", pki.leaf(eku=[ExtendedKeyUsageOID.CLIENT_AUTH]), "a.test",
           "reject", code="wrong_purpose")
    simple("eku-leaf-any", pki.leaf(eku=[ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE]), "a.test",
           "reject", code="wrong_purpose",
           differ={"go": GO_ANY_EKU, "gnutls": "GnuTLS accepts anyExtendedKeyUsage in a leaf"})
    any_inter = make_cert("AnyEKU Intermediate CA", root, ca=True,
                          eku=[ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE])
    c.append(Case("eku-intermediate-any", [pki.leaf(issuer=any_inter), any_inter], std, "a.test",
                  "reject", code="wrong_purpose",
                  differ={"go": GO_ANY_EKU, "pyca": "pyca accepts anyExtendedKeyUsage in a CA"}))

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
                  [pki.leaf("127.0.0.5", issuer=loop, dns=[], ips=["127.0.0.5"]), loop], std,
                  "127.0.0.5", "accept"))
    c.append(Case("nc-permitted-ip-outside",
                  [pki.leaf("192.0.2.1", issuer=loop, dns=[], ips=["192.0.2.1"]), loop], std,
                  "192.0.2.1", "reject", code="name_constraint_violation"))

    # rfc822Name constraints bind every email address of the leaf, whatever the purpose: a
    # server leaf that also names a mailbox outside the permitted subtree is refused.
    mail = make_cert("Permitted example.test mail CA", root, ca=True,
                     name_constraints=x509.NameConstraints([x509.RFC822Name("example.test")],
                                                           None))
    c.append(Case("nc-email-permitted-inside",
                  [pki.leaf("a.test", issuer=mail, emails=["ops@example.test"]), mail], std,
                  "a.test", "accept"))
    c.append(Case("nc-email-permitted-outside",
                  [pki.leaf("a.test", issuer=mail, emails=["ops@other.test"]), mail], std,
                  "a.test", "reject", code="name_constraint_violation"))
    # RFC 5280 4.2.1.10: an emailAddress attribute in the subject is an rfc822Name too.
    mail_subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.test"),
                              x509.NameAttribute(NameOID.EMAIL_ADDRESS, "ops@other.test")])
    c.append(Case("nc-email-subject-outside",
                  [pki.leaf("a.test", issuer=mail, emails=["ops@example.test"],
                            subject_name=mail_subject), mail], std, "a.test", "reject",
                  code="name_constraint_violation",
                  differ=lax("holds only the email SANs to rfc822Name constraints, not the "
                             "subject's emailAddress (RFC 5280 4.2.1.10 says both)", "gnutls",
                             "go", "pyca", "java")))

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
    # first issuer they find and do not backtrack past the expired DST: so do their clients, and
    # the openssl profile. getcert's path building, like Go's and pyca's, finds leaf <- R3 <- X1.
    c.append(Case("two-issuers-for-r3", [le_leaf, r3_by_dst, r3], [x1, dst], "a.test", "accept",
                  profiles={"openssl": ("reject", "expired", None)},
                  differ={v: v + FIRST_PATH_ONLY for v in ("openssl", "gnutls", "grpc")}))
    # An intermediate that breaks a name constraint is sent first, then a re-issue of it (same
    # name and key) without the constraint: the path through the re-issue is valid.
    pb_key = ec_key()
    pb_bad = make_cert("Path Building CA", root, key=pb_key, ca=True,
                       name_constraints=x509.NameConstraints(
                           permitted_subtrees=[x509.DNSName("other.test")],
                           excluded_subtrees=None))
    pb_good = make_cert("Path Building CA", root, key=pb_key, ca=True,
                        subject_name=pb_bad.cert.subject)
    pb_leaf = pki.leaf("a.test", issuer=pb_good)
    c.append(Case("constrained-intermediate-then-good-one", [pb_leaf, pb_bad, pb_good], std,
                  "a.test", "accept", profiles={"openssl": ("reject", "name_constraint_violation",
                                                            None)},
                  differ={v: v + FIRST_PATH_ONLY for v in ("openssl", "gnutls", "grpc")}))
    c.append(Case("constrained-intermediate-alone", [pb_leaf, pb_bad], std, "a.test", "reject",
                  code="name_constraint_violation"))
    # Hostile input: a cycle (A signs B, B signs A) and many same-name issuers. Each verifier
    # must end, with a rejection.
    # (Self-signed stand-ins lend each its name and key to sign the other.)
    signer_a, signer_b = make_cert("Loop A", ca=True), make_cert("Loop B", ca=True)
    loop_a = make_cert("Loop A", signer_b, key=signer_a.key, ca=True)
    loop_b = make_cert("Loop B", signer_a, key=signer_b.key, ca=True)
    c.append(Case("hostile-issuer-cycle", [pki.leaf("a.test", issuer=loop_a), loop_a, loop_b],
                  std, "a.test", "reject", code="unknown_issuer"))
    same_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Same Name CA")])
    decoys = [make_cert("Same Name CA", root, ca=True, subject_name=same_name) for _ in range(120)]
    stranger = make_cert("Same Name CA", root, ca=True, subject_name=same_name)
    c.append(Case("hostile-same-name-issuers", [pki.leaf("a.test", issuer=stranger)] + decoys,
                  std, "a.test", "reject", code="budget_exhausted",
                  profiles={"openssl": ("reject", "unknown_issuer", None)}))

    # Hostile input: deep chains and huge name-constraint sets. run-differential.py holds
    # getcert to a time bound on every hostile-* case.
    def chain_of(depth, label):
        cas = [root]
        for i in range(depth):
            cas.append(make_cert(f"{label} {i + 1}", cas[-1], ca=True))
        return [pki.leaf("a.test", issuer=cas[-1])] + cas[:0:-1]

    c.append(Case("hostile-deep-chain-10", chain_of(10, "Deep-10 CA"), std, "a.test", "accept",
                  differ={"pyca": "pyca's default max_chain_depth is 8 intermediates"}))
    # One more intermediate than OpenSSL's default depth (100) allows.
    c.append(Case("hostile-deep-chain-101", chain_of(101, "Deep-101 CA"), std, "a.test",
                  "reject", code="chain_too_long",
                  differ={"gnutls": "certtool --verify sets no depth limit (GnuTLS's limit of "
                                    "16 applies to TLS sessions)",
                          "java": "Java's PKIX validator sets no depth limit on a chain sent "
                                  "in order (maxPathLength bounds only its path builder)"}))
    def wide_constraints(name, ca_name, label, subtrees, sans, want, **kw):
        """A CA permitting `subtrees` DNS subtrees LABELi.test, and a leaf with `sans` names in
        the last of them (its CN among them): subtrees x sans comparisons."""
        permitted = [x509.DNSName(f"{label}{i}.test") for i in range(subtrees)]
        ca = make_cert(ca_name, root, ca=True,
                       name_constraints=x509.NameConstraints(permitted, None))
        last = f"{label}{subtrees - 1}.test"
        host = f"a.{last}"
        dns = [f"h{i}.{last}" for i in range(sans - 1)] + [host]
        c.append(Case(name, [pki.leaf(host, issuer=ca, dns=dns), ca], std, host, want, **kw))

    # 2,000 permitted subtrees against 100 SANs: 200,000 comparisons, within every bound.
    wide_constraints("hostile-huge-name-constraints", "Wide NC CA", "n", 2000, 100, "accept")
    # 5,000 subtrees against 250 SANs: 1,250,000 comparisons, past rustls-webpki's and Go's
    # 250,000 and OpenSSL's 2^20.
    wide_constraints("hostile-name-constraints-over-budget", "Wider NC CA", "m", 5000, 250,
                     "reject", code="budget_exhausted",
                     differ={"java": "Java sets no bound on name-constraint comparisons"})

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
                  differ={v: GETCERT_INCOMPLETE for v in ("openssl", "gnutls", "go", "grpc",
                                                          "pyca")}))
    c.append(Case("untrusted-root", [pki.leaf(), inter], [pki.other_root], "a.test", "reject",
                  code="unknown_issuer"))
    c.append(Case("ca-file-holds-intermediate-only", [pki.leaf(), inter], [inter], "a.test",
                  "accept", differ={"openssl": OPENSSL_PARTIAL},
                  pending=("ca-file-partial-chain", "reject", "unknown_issuer")))
    selfsigned = make_cert("a.test", dns=["a.test"], eku=SERVER_AUTH)
    c.append(Case("self-signed-leaf-trusted", [selfsigned], [selfsigned], "a.test", "accept",
                  differ={"gnutls": "GnuTLS requires CA:TRUE of any issuer, even a trusted "
                                    "self-signed leaf",
                          "pyca": "pyca requires authorityKeyIdentifier in a leaf, even a "
                                  "self-signed trusted one"}))
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
           differ={"go": GO_WEAK_RSA, "pyca": PYCA_WEAK_RSA}, pending=weak)
    weak_inter = make_cert("RSA-1024 Intermediate CA", root, key=rsa_key(1024), ca=True)
    c.append(Case("rsa1024-intermediate", [pki.leaf(issuer=weak_inter), weak_inter], std,
                  "a.test", "reject", code="too_weak", differ={"go": GO_WEAK_RSA}, pending=weak))
    simple("ec-p192-leaf", pki.leaf(key=ec_key(ec.SECP192R1())), "a.test", "reject",
           code="too_weak", pending=weak,
           differ={"pyca": "pyca checks the leaf's key only when it verifies a signature with it"})
    sha1_inter = make_cert("SHA-1-signed Intermediate CA", root, ca=True, digest=hashes.SHA1())
    c.append(Case("sha1-intermediate-signature", [pki.leaf(issuer=sha1_inter), sha1_inter], std,
                  "a.test", "reject", code="too_weak", pending=weak))
    simple("ec-p224-leaf", pki.leaf(key=ec_key(ec.SECP224R1())), "a.test", "reject",
           code="ec_curve_not_allowed", profiles=curve_profiles("ec_curve_not_allowed"))
    sha1_root = make_cert("SHA-1 Self-signed Root CA", ca=True, digest=hashes.SHA1())
    sha1_root_inter = make_cert("Under SHA-1 Root CA", sha1_root, ca=True)
    c.append(Case("sha1-self-signature-on-anchor",
                  [pki.leaf(issuer=sha1_root_inter), sha1_root_inter], [sha1_root], "a.test",
                  "accept"))
    c.extend(profile_rule_cases(pki))
    for case in c:
        if case.name in JAVA_DIFFERS:
            case.differ["java"] = JAVA_DIFFERS[case.name]
        for v, differs in CLIENT_DIFFERS.items():
            if case.name in differs:
                case.differ[v] = differs[case.name]
    for case in c:
        flip_to_webpki(case)
        if case.name in RFC5280_VERDICTS:
            case.profiles["rfc5280"] = RFC5280_VERDICTS[case.name]
    names = {case.name for case in c}
    assert not set(WEBPKI_VERDICTS) - names, "WEBPKI_VERDICTS names no case"
    assert not set(RFC5280_VERDICTS) - names, "RFC5280_VERDICTS names no case"
    unknown = set(JAVA_DIFFERS) - names
    assert not unknown, f"JAVA_DIFFERS names no case {sorted(unknown)}"
    for v, differs in CLIENT_DIFFERS.items():
        assert not set(differs) - names, f"CLIENT_DIFFERS[{v}] names no case {set(differs) - names}"
    return c


# The default profile's definition: a chain fails when one of Chromium, Firefox, Go or
# rustls-webpki refuses it. Where this corpus measured that for a case written with the other
# verdict, the case flips: `want` becomes what the profile must answer, the verifiers that
# disagreed before now agree, and those that agreed become documented differences.
# name: (new want, getcert's error code or None, getcert's warning or None, why, the openssl
# profile's warning or None)
WEBPKI_VERDICTS = {
    "hostile-deep-chain-10": ("reject", "too_many_intermediates", None,
                              "Firefox and webpki build paths of at most 6 intermediates", None),
    "leaf-ecdsa-ku-without-digitalsignature": (
        "reject", "ec_leaf_without_digital_signature", None,
        "Chromium refuses an ECDSA leaf whose keyUsage lacks digitalSignature",
        "ec_leaf_without_digital_signature"),
    # A handshake limit of the browsers, not a verdict on the chain (docs: the rules table):
    # accepted with the warning, and the browsers' failure is a documented difference.
    "ec-p521-leaf": ("accept", None, "leaf_key_not_in_browsers",
                     "no verifier refuses the chain; Chromium offers no P-521 signature scheme",
                     None),
    "ed25519-leaf": ("accept", None, "leaf_key_not_in_browsers",
                     "no verifier refuses the chain; the browsers offer no Ed25519 scheme", None),
    "rule-leaf-keycertsign": ("accept", None, "leaf_key_cert_sign",
                              "Chromium, Firefox, Go and webpki take keyCertSign in a leaf",
                              "leaf_key_cert_sign"),
}


def flip_to_webpki(case):
    if case.name not in WEBPKI_VERDICTS:
        return
    want, code, warning, why, openssl_warning = WEBPKI_VERDICTS[case.name]
    if want == case.want:
        return
    others = [v for v in VERIFIERS if not v.startswith("getcert")]
    agreed = [v for v in others if v not in case.differ]
    for v in others:
        case.differ.pop(v, None)
    for v in agreed:
        case.differ[v] = f"{v} {case.want}s it; the webpki profile {want}s it: {why}"
    case.want, case.code = want, code
    case.warning = (warning, None) if warning else None
    case.profiles["openssl"] = ("accept", None, openssl_warning)  # OpenSSL clients accept them


# getcert's rfc5280 profile: RFC 5280's MUSTs only, with its own key floor (broken_algorithm);
# the Baseline Requirements rules and what only browsers refuse are warnings there.
# name: (verdict, error code, warning)
RFC5280_VERDICTS = {
    "ec-p192-leaf": ("accept", None, "too_weak"),
    "ec-p521-leaf": ("accept", None, None),  # leaf_key_not_in_browsers: not weighed there
    "ed25519-leaf": ("accept", None, None),
    "eku-leaf-none": ("accept", None, "leaf_missing_eku"),
    "hostile-deep-chain-10": ("accept", None, None),
    "leaf-ecdsa-ku-without-digitalsignature": ("accept", None, "ec_leaf_without_digital_signature"),
    "md5-leaf-signature": ("reject", "broken_algorithm", None),
    "rsa1024-intermediate": ("accept", None, "too_weak"),
    "rsa1024-leaf": ("accept", None, "too_weak"),
    "rule-cn-ip-leading-zeros": ("accept", None, "cn_ip_not_canonical"),
    "rule-cn-ipv6-uncompressed": ("accept", None, "cn_ip_not_canonical"),
    "rule-cn-not-in-sans": ("accept", None, "cn_not_in_sans"),
    "rule-cn-u-label-san-a-label": ("accept", None, "cn_not_in_sans"),
    "rule-dsa-leaf": ("accept", None, "dsa_key"),
    "rule-eku-critical": ("accept", None, "eku_critical"),
    "rule-leaf-keycertsign": ("reject", "leaf_key_cert_sign", None),
    "rule-nc-dns-leading-dot": ("reject", "dns_constraint_leading_period", None),
    "rule-nc-dns-leading-dot-subdomain": ("reject", "dns_constraint_leading_period", None),
    "rule-root-aki-issuer-serial": ("accept", None, "root_aki_issuer_serial"),
    "rule-root-has-eku": ("accept", None, "root_has_eku"),
    "rule-rsa-modulus-not-multiple-of-8": ("accept", None, "rsa_modulus_not_multiple_of_8"),
    "rule-v1-leaf": ("reject", "no_subject_alt_name", None),
    "rule-wildcard-public-suffix": ("accept", None, "wildcard_public_suffix"),
    "sha1-intermediate-signature": ("accept", None, "too_weak"),
    "sha1-leaf-signature": ("accept", None, "too_weak"),
}


JAVA_CN = ("Java's HostnameChecker matches the CN when the leaf has no DNS SAN, whatever other "
           "SANs it has")
JAVA_ANCHOR = "Java never checks a trust anchor's own validity period (it is not part of the path)"
JAVA_CA_EKU = "Java checks extendedKeyUsage in the leaf only, never in a CA certificate"
JAVA_WILDCARD = ("Java's TLS HostnameChecker takes a wildcard in any label and inside a label "
                 "(RFC 2818), not just as the whole leftmost label")
JAVA_SHA1 = ("jdk.certpath.disabledAlgorithms refuses SHA-1 only in chains to the JDK's own "
             "cacerts roots (SHA1 jdkCA)")
JAVA_RSA = "jdk.certpath.disabledAlgorithms refuses RSA keys only under 1024 bits"
JAVA_PSL = "no verifier but Chromium consults the Public Suffix List for wildcards"
# Java 17's PKIX client check (javaverify/JavaVerify.java) where it reaches the other verdict,
# as observed; the docs' rule table has the same facts per rule. The issue's agreement rules do
# not name Java, so these are recorded here, and any other disagreement fails the test.
JAVA_DIFFERS = {
    "cn-only-leaf": JAVA_CN,
    "ip-san-only-cn-is-host": JAVA_CN,
    "rule-v1-leaf": "Java accepts a version 1 leaf and matches its CN",
    "cross-signed-only-expired-root-trusted": JAVA_ANCHOR,
    "eku-intermediate-any": JAVA_CA_EKU,
    "eku-intermediate-client-only": JAVA_CA_EKU,
    "eku-leaf-any": "Java's TLS server check accepts anyExtendedKeyUsage in the leaf",
    "intermediate-only-in-ca-file": GETCERT_INCOMPLETE,
    "leaf-ecdsa-ku-without-digitalsignature": (
        "Java's TLS server check requires digitalSignature when the leaf has keyUsage (TLS 1.3 "
        "signs with it); OpenSSL and the others do not check keyUsage against the handshake"),
    "rsa1024-leaf": JAVA_RSA,
    "rsa1024-intermediate": JAVA_RSA,
    "sha1-leaf-signature": JAVA_SHA1,
    "sha1-intermediate-signature": JAVA_SHA1,
    "rule-dsa-leaf": "Java accepts a DSA key in the leaf (the BR allow RSA and ECDSA only)",
    "rule-leaf-is-ca": "Java takes a CA certificate as the leaf, as RFC 5280 allows",
    "rule-leaf-keycertsign": "Java does not check keyCertSign against cA in a leaf",
    "rule-malformed-aia": "Java does not decode authorityInfoAccess while verifying",
    "rule-nc-empty": "Java accepts nameConstraints with no subtrees",
    "rule-nc-wildcard-expands-into-excluded": "Java checks the wildcard pattern, not the names it "
                                              "expands to (CVE-2025-61727)",
    "rule-wildcard-public-suffix": JAVA_PSL,
    "wildcard-partial": JAVA_WILDCARD,
    "wildcard-not-leftmost": JAVA_WILDCARD,
}


WEBPKI_IP = "webpki 0.22 verifies no IP address (rustls 0.20 connects to none; rustls-webpki does)"
WEBPKI_NC = ("webpki 0.22.0 rejects every chain through a name-constrained CA in this corpus "
             "(UnknownIssuer), permitted names included")
WEBPKI_SERIAL = "webpki 0.22 refuses a serial number that is zero, negative or over 20 octets"
WEBPKI_RING = "ring 0.16 verifies no P-521 and no ECDSA with SHA-512 (UnknownIssuer)"
WEBPKI_LAX = "webpki 0.22 does not check "
BROWSER_CURVE = ("no TLS signature scheme the browser offers fits the leaf's key: the handshake "
                 "fails (NO_SHARED_CIPHER at the server)")
OPENSSL_CURVE = "OpenSSL accepts any named curve it implements"
GRPC_CURVE = "gRPC (OpenSSL) accepts a CA key on any named curve OpenSSL implements"
RSA_EXP = " accepts any RSA public exponent (even, or 1) in a certificate it does not verify with"
COMPRESSED = " accepts an EC key whose point is compressed (RFC 5480 2.2 lets it)"
BROWSER_WEAK_RSA = " accepts an RSA-1024 key under a locally trusted root (its 2048-bit minimum binds publicly trusted roots only)"
# Where webpki 0.22 (webpkiverify), Chromium and Firefox reach the other verdict, as observed by
# this test (Chromium 156, Firefox ESR 153, webpki 0.22.0), and where the other verifiers differ
# on the key cases; docs/verification.md's rule table has the same facts.
CLIENT_DIFFERS = {
    "webpki": {
        "cross-signed-only-expired-root-trusted": "webpki never checks a trust anchor's own "
                                                  "validity period",
        "ec-p521-intermediate": WEBPKI_RING,
        "ecdsa-sha512-leaf-signature": WEBPKI_RING,
        "ed25519-leaf": "rustls offers Ed25519, so webpki takes an Ed25519 leaf",
        "hostile-deep-chain-10": "webpki 0.22 allows at most 6 intermediates",
        "hostile-huge-name-constraints": WEBPKI_NC,
        "intermediate-no-keycertsign": WEBPKI_LAX + "keyUsage keyCertSign in a CA",
        "intermediate-only-in-ca-file": GETCERT_INCOMPLETE,
        "ipv4-san": WEBPKI_IP, "ipv6-san-compressed": WEBPKI_IP,
        "ipv6-san-uncompressed": WEBPKI_IP, "rule-cn-ip-leading-zeros": WEBPKI_IP,
        "rule-cn-ipv6-uncompressed": WEBPKI_IP,
        "nc-email-permitted-inside": WEBPKI_NC, "nc-excluded-dns-outside": WEBPKI_NC,
        "nc-permitted-dns-inside": WEBPKI_NC, "nc-permitted-ip-inside": WEBPKI_NC,
        "rule-nc-dns-leading-dot": WEBPKI_NC, "rule-nc-dns-leading-dot-subdomain": WEBPKI_NC,
        "rule-nc-not-critical": WEBPKI_NC,
        "rule-empty-subject-san-not-critical": WEBPKI_LAX + "the SAN's criticality",
        "rule-leaf-keycertsign": WEBPKI_LAX + "keyUsage in a leaf",
        "rule-malformed-aia": "webpki 0.22 does not decode authorityInfoAccess",
        "rule-nc-empty": "webpki 0.22 accepts nameConstraints with no subtrees",
        "rule-root-no-basic-constraints": "webpki reads no extension of a trust anchor",
        "rule-serial-21-octets": WEBPKI_SERIAL, "rule-serial-negative": WEBPKI_SERIAL,
        "rule-serial-zero": WEBPKI_SERIAL,
        "rule-wildcard-public-suffix": JAVA_PSL,
    },
    "chromium": {
        "ec-compressed-point-intermediate": "Chromium (BoringSSL)" + COMPRESSED,
        "ec-compressed-point-leaf": "Chromium (BoringSSL)" + COMPRESSED,
        "eku-intermediate-any": "Chromium accepts anyExtendedKeyUsage in a CA",
        "eku-leaf-any": "Chromium accepts anyExtendedKeyUsage in the leaf",
        "intermediate-only-in-ca-file": GETCERT_INCOMPLETE,
        "leaf-ecdsa-ku-without-digitalsignature": (
            "BoringSSL requires digitalSignature in an ECDSA leaf's keyUsage (the handshake "
            "signs with it): illegal_parameter"),
        "nc-email-subject-outside": "Chromium holds only the email SANs to rfc822Name "
                                    "constraints, not the subject's emailAddress",
        "rsa1024-intermediate": "Chromium" + BROWSER_WEAK_RSA,
        "rsa1024-leaf": "Chromium" + BROWSER_WEAK_RSA,
        "rule-leaf-is-ca": "Chromium takes a CA certificate as the leaf, as RFC 5280 allows",
        "rule-leaf-keycertsign": "Chromium does not check keyCertSign against cA in a leaf",
        "rule-root-no-basic-constraints": "Chromium accepts a trust anchor without "
                                          "basicConstraints",
    },
    "firefox": {
        "hostile-deep-chain-10": "Firefox (mozilla::pkix) allows at most 6 intermediates: "
                                 "unknown_ca",
        "intermediate-only-in-ca-file": GETCERT_INCOMPLETE,
        "nc-email-subject-outside": "Firefox holds only the email SANs to rfc822Name "
                                    "constraints, not the subject's emailAddress",
        "rsa1024-intermediate": "Firefox" + BROWSER_WEAK_RSA,
        "rsa1024-leaf": "Firefox" + BROWSER_WEAK_RSA,
        "rule-empty-subject-san-not-critical": "Firefox does not require a critical "
                                               "subjectAltName when the subject is empty",
        "rule-leaf-keycertsign": "Firefox does not check keyCertSign against cA in a leaf",
        "rule-wildcard-public-suffix": "Firefox consults no Public Suffix List for wildcards",
        "self-signed-leaf-trusted": ("Firefox refuses a self-signed leaf even when NSS trusts "
                                     "it as a peer (P,,): bad_certificate; users add an "
                                     "exception instead"),
        "ec-p521-leaf": "Firefox offers ecdsa_secp521r1_sha512; Chromium does not",
    },
    "go": {
        "ec-p224-leaf": "Go's crypto/x509 accepts P-224 keys",
        "ec-p224-intermediate": "Go's crypto/x509 accepts P-224 keys",
        "ec-p521-leaf": "Go offers ecdsa_secp521r1_sha512; Chromium does not",
        "ed25519-leaf": "Go accepts an Ed25519 leaf (crypto/tls offers Ed25519)",
        "rsa-exponent-1-leaf": "Go" + RSA_EXP, "rsa-exponent-even-leaf": "Go" + RSA_EXP,
    },
    "pyca": {
        "ec-compressed-point-intermediate": "pyca" + COMPRESSED,
        "ec-compressed-point-leaf": "pyca" + COMPRESSED,
        "ec-p224-leaf": "pyca checks the leaf's key only when it verifies a signature with it",
        "ec-secp256k1-leaf": "pyca checks the leaf's key only when it verifies a signature "
                             "with it",
        "ec-brainpoolp256r1-leaf": "pyca checks the leaf's key only when it verifies a "
                                   "signature with it",
        "ec-explicit-parameters-leaf": "pyca checks the leaf's key only when it verifies a "
                                       "signature with it",
        "ec-p521-leaf": "pyca accepts a P-521 leaf", "ed25519-leaf": "pyca accepts an Ed25519 leaf",
        "rsa-exponent-1-leaf": "pyca" + RSA_EXP, "rsa-exponent-even-leaf": "pyca" + RSA_EXP,
    },
    "openssl": {
        "ec-compressed-point-intermediate": "OpenSSL" + COMPRESSED,
        "ec-compressed-point-leaf": "OpenSSL" + COMPRESSED,
        "ec-brainpoolp256r1-intermediate": OPENSSL_CURVE, "ec-brainpoolp256r1-leaf": OPENSSL_CURVE,
        "ec-p224-intermediate": OPENSSL_CURVE, "ec-p224-leaf": OPENSSL_CURVE,
        "ec-secp256k1-intermediate": OPENSSL_CURVE, "ec-secp256k1-leaf": OPENSSL_CURVE,
        "ec-p521-leaf": "OpenSSL accepts a P-521 leaf", "ed25519-leaf": "OpenSSL accepts an "
                                                                        "Ed25519 leaf",
        "rsa-exponent-1-leaf": "openssl verify" + RSA_EXP,
        "rsa-exponent-even-leaf": "openssl verify" + RSA_EXP,
    },
    "gnutls": {
        "ec-p224-intermediate": "GnuTLS accepts P-224 keys", "ec-p224-leaf": "GnuTLS accepts "
                                                                            "P-224 keys",
        "ec-p521-leaf": "GnuTLS accepts a P-521 leaf", "ed25519-leaf": "GnuTLS accepts an "
                                                                       "Ed25519 leaf",
        "rsa-exponent-1-leaf": "certtool" + RSA_EXP, "rsa-exponent-even-leaf": "certtool" + RSA_EXP,
    },
    "grpc": {
        "ec-compressed-point-intermediate": "gRPC (OpenSSL)" + COMPRESSED,
        "ec-compressed-point-leaf": "gRPC (OpenSSL)" + COMPRESSED,
        "ec-brainpoolp256r1-intermediate": GRPC_CURVE, "ec-p224-intermediate": GRPC_CURVE,
        "ec-secp256k1-intermediate": GRPC_CURVE,
        "ec-p521-leaf": "gRPC (OpenSSL) offers ecdsa_secp521r1_sha512; Chromium does not",
        "ed25519-leaf": "gRPC (OpenSSL) offers Ed25519",
    },
    "java": {
        "ec-brainpoolp256r1-leaf": "Java accepts a brainpoolP256r1 leaf key",
        "ec-secp256k1-leaf": "Java accepts a secp256k1 leaf key",
        "ec-p224-leaf": "Java accepts a P-224 leaf key",
        "ec-p521-leaf": "Java accepts a P-521 leaf", "ed25519-leaf": "Java accepts an Ed25519 leaf",
        "rsa-exponent-even-leaf": "Java" + RSA_EXP,
    },
}

NO_DSA_RULE = "accepts a DSA key in the leaf (the BR allow RSA and ECDSA only; TLS 1.3 has no DSA)"


def lax(why, *verifiers):
    """The verifiers that accept what a rule rejects, all for the same reason."""
    return {v: v + " " + why for v in verifiers}


def strict(why):
    return {"openssl": why}


def strict_only(code):
    """getcert's verdicts for a rule that only the rfc5280 profile enforces (webpki warns)."""
    return {"rfc5280": ("reject", code, None), "openssl": ("accept", None, None)}


def modern_only(code, warning=None):
    """getcert's verdicts for a rule webpki and rfc5280 enforce; OpenSSL clients accept."""
    return {"openssl": ("accept", None, warning or code), "rfc5280": ("reject", code, None)}


def profile_rule_cases(pki):
    """One case per profile rule (see docs, "Verification profiles"), each judged by getcert
    under every profile and by the other verifiers."""
    c = []
    root, inter = pki.root, pki.inter
    std = [root]

    def simple(name, leaf, host, want, **kw):
        c.append(Case(name, [leaf, inter], kw.pop("roots", std), host, want, **kw))

    def under(name, ca, leaf_kw, want, roots=None, **kw):
        leaf = pki.leaf(issuer=ca, **leaf_kw)
        c.append(Case(name, [leaf, ca], roots or std, leaf_kw.get("dns", ["a.test"])[0]
                      if leaf_kw.get("dns", ["a.test"]) else "a.test", want, **kw))

    # --- names ---------------------------------------------------------------------------------
    simple("rule-cn-not-in-sans", pki.leaf("b.test", dns=["a.test"]), "a.test", "accept",
           warning=("cn_not_in_sans", "profiles"), profiles=strict_only("cn_not_in_sans"))
    simple("rule-cn-u-label-san-a-label",
           pki.leaf("b\u00fccher.test", dns=["xn--bcher-kva.test"]), "xn--bcher-kva.test",
           "accept", warning=("cn_not_in_sans", "profiles"), profiles=strict_only("cn_not_in_sans"))
    simple("rule-cn-ip-leading-zeros", pki.leaf("127.000.000.001", dns=[], ips=["127.0.0.1"]),
           "127.0.0.1", "accept", warning=("cn_ip_not_canonical", "profiles"),
           profiles=strict_only("cn_ip_not_canonical"))
    simple("rule-cn-ipv6-uncompressed", pki.leaf("0:0:0:0:0:0:0:1", dns=[], ips=["::1"]),
           "::1", "accept", warning=("cn_ip_not_canonical", "profiles"),
           profiles=strict_only("cn_ip_not_canonical"))
    simple("rule-dns-san-underscore", pki.leaf("a.test", dns=["a.test", "a_b.test"]), "a.test",
           "accept", warning=("dns_name_underscore", "profiles"),
           profiles=strict_only("dns_name_underscore"))
    psl = "no verifier but Chromium consults the Public Suffix List for wildcards"
    simple("rule-wildcard-public-suffix", pki.leaf("*.co.uk", dns=["*.co.uk"]), "x.co.uk",
           "reject", code="wildcard_public_suffix", profiles=modern_only("wildcard_public_suffix"),
           differ={v: psl for v in ("openssl", "gnutls", "go", "grpc", "pyca")})
    # A PRIVATE section entry of the Public Suffix List (github.io, appspot.com, ...) is no
    # registry: Chromium, like every other client, takes a wildcard under it.
    simple("rule-wildcard-private-suffix", pki.leaf("*.github.io", dns=["*.github.io"]),
           "foo.github.io", "accept")

    for suffix in ("appspot.com", "s3.amazonaws.com"):
        simple("rule-wildcard-private-suffix-" + suffix.split(".")[0],
               pki.leaf("*." + suffix, dns=["*." + suffix]), "foo." + suffix, "accept")

    # --- name constraints ---------------------------------------------------------------------
    good = [x509.DNSName("good.test")]
    soft = make_cert("Non-critical NC CA", root, ca=True,
                     name_constraints=x509.NameConstraints(good, None), nc_critical=False)
    under("rule-nc-not-critical", soft, {"cn": "x.good.test", "dns": ["x.good.test"]}, "accept",
          warning=("name_constraints_not_critical", "profiles"),
          profiles=strict_only("name_constraints_not_critical"))
    # Chromium, Firefox, Go and webpki ignore nameConstraints in a leaf: a warning.
    simple("rule-nc-in-leaf", pki.leaf(name_constraints=x509.NameConstraints(good, None)),
           "a.test", "accept", warning=("name_constraints_in_leaf", "profiles"),
           profiles={"openssl": ("accept", None, "name_constraints_in_leaf"),
                     "rfc5280": ("reject", "name_constraints_in_leaf", None)},
           differ={"pyca": "pyca refuses nameConstraints in an end-entity certificate"})
    bar = make_cert("Excluded bar.good.test CA", root, ca=True,
                    name_constraints=x509.NameConstraints(None, [x509.DNSName("bar.good.test")]))
    c.append(Case("rule-nc-wildcard-expands-into-excluded",
                  [pki.leaf("*.good.test", issuer=bar), bar], std, "foo.good.test", "reject",
                  code="excluded_wildcard", profiles=modern_only("excluded_wildcard"),
           differ=lax("checks the wildcard pattern, not the names it expands to (CVE-2025-61727; fixed after Go 1.19)", "openssl", "gnutls", "go", "grpc")))
    dot = make_cert("Leading-dot NC CA", root, ca=True,
                    name_constraints=x509.NameConstraints([x509.DNSName(".good.test")], None))
    # A leading period (RFC 5280 allows it for URIs only) is read as "subdomains only" by
    # Chromium, Firefox, Go, OpenSSL and GnuTLS.
    under("rule-nc-dns-leading-dot", dot, {"cn": "x.good.test", "dns": ["x.good.test"]},
          "accept", differ={"pyca": "pyca refuses a dNSName constraint with a leading period"})
    # A leading period permits the subdomains only: example.com itself is outside.
    dot_com = make_cert("Leading-dot example.com NC CA", root, ca=True,
                        name_constraints=x509.NameConstraints([x509.DNSName(".example.com")],
                                                              None))
    under("rule-nc-dns-leading-dot-subdomain", dot_com,
          {"cn": "a.example.com", "dns": ["a.example.com"]}, "accept",
          differ={"pyca": "pyca refuses a dNSName constraint with a leading period"})
    under("rule-nc-dns-leading-dot-apex", dot_com, {"cn": "example.com", "dns": ["example.com"]},
          "reject", code="name_constraint_violation")
    empty_nc = x509.UnrecognizedExtension(ExtensionOID.NAME_CONSTRAINTS, b"\x30\x00")
    empty = make_cert("Empty NC CA", root, ca=True, extra=[(empty_nc, True)])
    under("rule-nc-empty", empty, {}, "reject", code="empty_name_constraints",
          profiles=modern_only("empty_name_constraints"),
           differ=lax("accepts nameConstraints with no subtrees (pyca and Go refuse)", "openssl", "gnutls", "grpc"))

    # --- certificate profile ------------------------------------------------------------------
    simple("rule-v1-leaf", resign(pki.leaf(), inter, as_v1), "a.test", "reject",
           code="v1_certificate", profiles={"openssl": ("accept", None, "cn_fallback"),
                                            "rfc5280": ("reject", "v1_certificate", None)},
           differ=lax("accepts a version 1 leaf and matches its CN", "openssl", "gnutls", "grpc"))
    simple("rule-leaf-is-ca", pki.leaf(basic=x509.BasicConstraints(True, None)), "a.test",
           "reject", code="leaf_is_ca",
           profiles={"openssl": ("accept", None, "leaf_is_ca"),
                     "rfc5280": ("accept", None, "leaf_is_ca")},
           differ=lax("takes a CA certificate as the leaf, as RFC 5280 allows", "openssl", "gnutls", "go", "grpc"))
    simple("rule-leaf-keycertsign",
           pki.leaf(key_usage=usage(digital_signature=True, key_cert_sign=True)), "a.test",
           "reject", code="leaf_key_cert_sign", profiles=modern_only("leaf_key_cert_sign"),
           differ=lax("does not check keyCertSign against cA in a leaf (openssl verify -x509_strict does)", "gnutls", "go", "grpc"))
    # Chromium, Firefox, Go and webpki take a critical extendedKeyUsage: a warning.
    simple("rule-eku-critical", pki.leaf(eku_critical=True), "a.test", "accept",
           warning=("eku_critical", "profiles"), profiles={"rfc5280": ("reject", "eku_critical",
                                                                       None)},
           differ={"pyca": "pyca refuses a critical extendedKeyUsage (BR 7.1.2.7.10)"})
    eku_root = make_cert("EKU Root CA", ca=True, eku=SERVER_AUTH)
    eku_inter = make_cert("Under EKU Root CA", eku_root, ca=True)
    c.append(Case("rule-root-has-eku", [pki.leaf(issuer=eku_inter), eku_inter], [eku_root],
                  "a.test", "accept", warning=("root_has_eku", "profiles"),
                  profiles=strict_only("root_has_eku")))
    nobc_root = make_cert("No-BC Root CA", ca=True, basic=None)
    nobc_inter = make_cert("Under No-BC Root CA", nobc_root, ca=True)
    c.append(Case("rule-root-no-basic-constraints", [pki.leaf(issuer=nobc_inter), nobc_inter],
                  [nobc_root], "a.test", "reject", code="root_basic_constraints_missing",
                  profiles=modern_only("root_basic_constraints_missing"),
           differ=lax("accepts a trust anchor without basicConstraints (OpenSSL only refuses it with X509_STRICT)", "gnutls", "grpc")))
    soft_root = make_cert("Non-critical BC Root CA", ca=True, basic_critical=False)
    soft_inter = make_cert("Under Non-critical BC Root CA", soft_root, ca=True)
    c.append(Case("rule-root-basic-constraints-not-critical",
                  [pki.leaf(issuer=soft_inter), soft_inter], [soft_root], "a.test", "accept",
                  warning=("root_basic_constraints_not_critical", "profiles"),
                  profiles=strict_only("root_basic_constraints_not_critical"),
           differ={"openssl": "openssl verify -x509_strict requires a critical basicConstraints in CAs", "pyca": "pyca requires a critical basicConstraints in the trust anchor too"}))
    no_ski = make_cert("No-SKI Intermediate CA", root, ca=True, ski=False)
    under("rule-ca-without-ski", no_ski, {}, "accept",
          warning=("missing_subject_key_id", "profiles"),
          profiles=strict_only("missing_subject_key_id"),
           differ=strict("openssl verify -x509_strict requires subjectKeyIdentifier in CAs, like the rfc5280 profile"))
    no_aki = make_cert("No-AKI Intermediate CA", root, ca=True, aki=None)
    under("rule-intermediate-without-aki", no_aki, {}, "accept",
          warning=("missing_authority_key_id", "profiles"),
          profiles=strict_only("missing_authority_key_id"),
           differ=strict("openssl verify -x509_strict requires authorityKeyIdentifier below the root, like the rfc5280 profile"))
    # Chromium, Firefox, Go and webpki take a leaf without authorityKeyIdentifier: a warning.
    simple("rule-leaf-without-aki", pki.leaf(aki=None), "a.test", "accept",
           warning=("missing_authority_key_id", "profiles"),
           profiles=strict_only("missing_authority_key_id"),
           differ={"openssl": "openssl verify -x509_strict requires authorityKeyIdentifier",
                   "pyca": "pyca requires authorityKeyIdentifier in a leaf"})
    # The issuer and serial an AKI names are the root's own: OpenSSL then still sees it as
    # self-issued (X509_check_akid), so only the rule tells the two cases apart.
    k1 = ec_key()
    aki_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "AKI Root"),
                          x509.NameAttribute(NameOID.ORGANIZATION_NAME, "getcert differential")])
    by_serial = x509.AuthorityKeyIdentifier(
        x509.SubjectKeyIdentifier.from_public_key(k1.public_key()).digest,
        [x509.DirectoryName(aki_name)], 4242)
    aki_root = make_cert("AKI Root", key=k1, ca=True, aki=by_serial, serial=4242)
    aki_inter = make_cert("Under AKI Root", aki_root, ca=True)
    c.append(Case("rule-root-aki-issuer-serial", [pki.leaf(issuer=aki_inter), aki_inter],
                  [aki_root], "a.test", "accept", warning=("root_aki_issuer_serial", "profiles"),
                  profiles=strict_only("root_aki_issuer_serial")))
    k2 = ec_key()
    noid_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "AKI-noid Root"),
                           x509.NameAttribute(NameOID.ORGANIZATION_NAME, "getcert differential")])
    no_keyid = x509.AuthorityKeyIdentifier(None, [x509.DirectoryName(noid_name)], 4343)
    noid_root = make_cert("AKI-noid Root", key=k2, ca=True, aki=no_keyid, serial=4343)
    noid_inter = make_cert("Under AKI-noid Root", noid_root, ca=True)
    c.append(Case("rule-root-aki-without-keyid", [pki.leaf(issuer=noid_inter), noid_inter],
                  [noid_root], "a.test", "accept", warning=("root_aki_without_key_id", "profiles"),
                  profiles=strict_only("root_aki_without_key_id"),
           differ={"pyca": "pyca requires keyIdentifier in every authorityKeyIdentifier"}))
    simple("rule-empty-subject-san-not-critical",
           pki.leaf("a.test", subject_name=x509.Name([])), "a.test", "reject",
           code="empty_subject_san_not_critical",
           profiles=modern_only("empty_subject_san_not_critical"),
           differ=lax("does not require a critical subjectAltName when the subject is empty "
                      "(RFC 5280 4.2.1.6; pyca does)", "gnutls", "go", "grpc"))
    bad_aia = x509.UnrecognizedExtension(ExtensionOID.AUTHORITY_INFORMATION_ACCESS,
                                         b"\x30\x03\x02\x01\x05")
    simple("rule-malformed-aia", pki.leaf(extra=[(bad_aia, False)]), "a.test", "reject",
           code="malformed_aia", profiles=modern_only("malformed_aia"),
           differ=lax("does not decode authorityInfoAccess while verifying (Go and pyca reject the certificate)", "openssl", "gnutls", "grpc"))
    for name, serial in (("zero", b"\x00"), ("negative", b"\xff\x01"),
                         ("21-octets", b"\x01" * 21)):
        simple("rule-serial-" + name, resign(pki.leaf(), inter, with_serial(serial)), "a.test",
               "accept", warning=("bad_serial_number", "profiles"),
               profiles=strict_only("bad_serial_number"),
               differ={"pyca": "pyca refuses negative serial numbers"} if name == "negative"
               else None)

    # --- keys ----------------------------------------------------------------------------------
    # at=NOW: no TLS server presents a DSA key to the gRPC client (no TLS 1.3 scheme exists).
    simple("rule-dsa-leaf", pki.leaf(key=dsa.generate_private_key(2048)), "a.test", "reject",
           code="dsa_key", profiles=modern_only("dsa_key"), at=NOW,
           differ=lax(NO_DSA_RULE, "openssl", "gnutls", "go", "pyca"))
    simple("rule-rsa-modulus-not-multiple-of-8", pki.leaf(key=rsa_key(2052)), "a.test", "accept",
           warning=("rsa_modulus_not_multiple_of_8", "profiles"),
           profiles=strict_only("rsa_modulus_not_multiple_of_8"))
    simple("rule-rsa-exponent-3", pki.leaf(key=rsa.generate_private_key(3, 2048)), "a.test",
           "accept")
    c.extend(key_cases(pki))
    return c


def spki_of(cert):
    """The SubjectPublicKeyInfo item of a certificate's TBSCertificate, as DER."""
    return cert.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)


def with_spki(spki_der):
    """A resign() patch that replaces the subjectPublicKeyInfo (TBS item 6, after version,
    serial, signature, issuer, validity and subject)."""
    return lambda items: items[:6] + [spki_der] + items[7:]


def explicit_p256_spki(key):
    """key's public key with the curve given by explicit parameters (RFC 3279 ECParameters)
    instead of the prime256v1 OID: OpenSSL writes that with -param_enc explicit."""
    import subprocess
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    return subprocess.run(["openssl", "pkey", "-pubout", "-outform", "DER", "-ec_param_enc",
                           "explicit"], input=pem, capture_output=True, check=True).stdout


def compressed_spki(key):
    """key's public key with its point in compressed form (RFC 5480 2.2: 0x02 or 0x03 and x
    only), as OpenSSL writes it with -ec_conv_form compressed."""
    import subprocess
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    return subprocess.run(["openssl", "pkey", "-pubout", "-outform", "DER", "-ec_conv_form",
                           "compressed"], input=pem, capture_output=True, check=True).stdout


def rsa_spki(n, e):
    """An rsaEncryption SubjectPublicKeyInfo for modulus n and exponent e (any e, even ones no
    key generator makes)."""
    def integer(v):
        body = v.to_bytes((v.bit_length() + 8) // 8, "big")
        return der_tlv(0x02, body)
    alg = der_tlv(0x30, der_tlv(0x06, bytes.fromhex("2a864886f70d010101")) + b"\x05\x00")
    return der_tlv(0x30, alg + der_tlv(0x03, b"\x00" + der_tlv(0x30, integer(n) + integer(e))))


def curve_profiles(code):
    """getcert's other profiles on a curve outside P-256/384/521: a warning, no error."""
    return {"openssl": ("accept", None, code), "rfc5280": ("accept", None, code)}


# Explicit curve parameters: OpenSSL itself refuses the key (x509_error), in every profile.
EXPLICIT = {"code": "ec_explicit_parameters",
            "profiles": {"openssl": ("reject", "x509_error", None)}}


def key_cases(pki):
    """Leaf keys the Baseline Requirements (6.1.5) do not allow, or only just allow: other EC
    curves, explicit curve parameters, RSA exponents."""
    c = []
    inter = pki.inter

    def simple(name, leaf, want, **kw):
        c.append(Case(name, [leaf, inter], [pki.root], "a.test", want, **kw))

    curve = {"code": "ec_curve_not_allowed", "profiles": curve_profiles("ec_curve_not_allowed")}
    simple("ec-secp256k1-leaf", pki.leaf(key=ec_key(ec.SECP256K1())), "reject", **curve)
    simple("ec-brainpoolp256r1-leaf", pki.leaf(key=ec_key(ec.BrainpoolP256R1())), "reject",
           **curve)
    explicit = pki.leaf()
    simple("ec-explicit-parameters-leaf",
           resign(explicit, inter, with_spki(explicit_p256_spki(explicit.key))), "reject",
           **EXPLICIT)
    # Firefox, Go and webpki refuse a compressed point (and GnuTLS and Java); Chromium, OpenSSL
    # and pyca take it: an error where a browser refuses, a warning in the other profiles.
    point = {"code": "ec_point_compressed", "profiles": curve_profiles("ec_point_compressed")}
    compressed = pki.leaf()
    simple("ec-compressed-point-leaf",
           resign(compressed, inter, with_spki(compressed_spki(compressed.key))), "reject",
           **point)
    even = pki.leaf(key=rsa_key(2048))
    n = even.key.public_key().public_numbers().n
    # No private key exists for an even exponent: no TLS server can present this leaf, so the
    # live clients (gRPC, the browsers) cannot judge it (at=NOW).
    exponent = {"code": "rsa_exponent_invalid", "at": NOW,
                "profiles": modern_only("rsa_exponent_invalid")}
    simple("rsa-exponent-even-leaf", resign(even, inter, with_spki(rsa_spki(n, 65536))), "reject",
           **exponent)
    simple("rsa-exponent-1-leaf", resign(even, inter, with_spki(rsa_spki(n, 1))), "reject",
           **exponent)
    # The keys and signatures every client takes, and their neighbours.
    simple("ec-p384-leaf", pki.leaf(key=ec_key(ec.SECP384R1())), "accept")
    # Chromium offers no P-521 scheme, the browsers no Ed25519 one: no handshake. Written as
    # measured; WEBPKI_VERDICTS says what getcert makes of it (a warning, not a verdict).
    simple("ec-p521-leaf", pki.leaf(key=ec_key(ec.SECP521R1())), "reject")
    simple("ed25519-leaf", pki.leaf(key=ed25519.Ed25519PrivateKey.generate()), "reject")
    simple("rsa3072-leaf", pki.leaf(key=rsa_key(3072)), "accept")
    simple("rsa4096-leaf", pki.leaf(key=rsa_key(4096)), "accept")
    simple("ecdsa-sha384-leaf-signature", pki.leaf(digest=hashes.SHA384()), "accept")
    simple("ecdsa-sha512-leaf-signature", pki.leaf(digest=hashes.SHA512()), "accept")

    # The same keys in the intermediate, under a P-256 leaf: the TLS handshake signs with the
    # leaf's key only, so every live client judges the CA's key itself.
    def by_ca(name, key, want, ca=None, **kw):
        ca_cert = make_cert(f"{name} Intermediate CA", pki.root, key=key, ca=True)
        leaf = pki.leaf(issuer=ca_cert)
        c.append(Case(name, [leaf, ca(ca_cert) if ca else ca_cert], [pki.root], "a.test", want,
                      **kw))

    by_ca("ec-p384-intermediate", ec_key(ec.SECP384R1()), "accept")
    by_ca("ec-p521-intermediate", ec_key(ec.SECP521R1()), "accept")
    by_ca("ec-p224-intermediate", ec_key(ec.SECP224R1()), "reject", **curve)
    by_ca("ec-secp256k1-intermediate", ec_key(ec.SECP256K1()), "reject", **curve)
    by_ca("ec-brainpoolp256r1-intermediate", ec_key(ec.BrainpoolP256R1()), "reject", **curve)
    by_ca("ec-explicit-parameters-intermediate", ec_key(), "reject", **EXPLICIT,
          ca=lambda ca_cert: resign(ca_cert, pki.root,
                                    with_spki(explicit_p256_spki(ca_cert.key))))
    by_ca("ec-compressed-point-intermediate", ec_key(), "reject", **point,
          ca=lambda ca_cert: resign(ca_cert, pki.root,
                                    with_spki(compressed_spki(ca_cert.key))))
    by_ca("rsa-exponent-3-intermediate", rsa.generate_private_key(3, 2048), "accept")
    by_ca("rsa3072-intermediate", rsa_key(3072), "accept")
    return c


def pem_of(items):
    return b"".join(i.pem() for i in items)


def expectations(case):
    """The verdict each verifier is expected to reach, with the reason where it differs."""
    other = "reject" if case.want == "accept" else "accept"
    out = {}
    for v in VERIFIERS:
        if v.startswith("getcert"):
            continue
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
    for profile in ("openssl", "rfc5280"):
        verdict, code, warning = case.profiles.get(profile, (g["verdict"], g["code"], None))
        out["getcert:" + profile] = {"verdict": verdict, "code": code, "warning": warning,
                                     "why": None if verdict == case.want else
                                     f"the {profile} profile " + verdict + "s it"}
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
