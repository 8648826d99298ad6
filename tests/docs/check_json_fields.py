#!/usr/bin/env python3
"""Every JSON field docs/json.md lists appears in a real `-o json` output, and every field a real
output has is listed there.

docs/json.md marks each field table with `<!-- json-fields: KIND -->`; its first column holds
paths (`verification.errors[].code`: `.` a member, `[]` the elements of a list). This script
makes the outputs for real, with the built getcert:
- fetch: against an `openssl s_server` on loopback serving the test PKI's `good` leaf (which
  names an OCSP responder) with its intermediate and root, a stapled OCSP response and a
  client-certificate request: with -v and the root trusted (timings, revocation, chain issues),
  and trusting an unrelated root (errors); and against a second one serving the `rsa` leaf and
  its intermediate, trusting only the intermediate (warnings);
- fetch-error: a port nothing listens on;
- show: a chain whose leaf, issued here, embeds two SCTs and is must-staple, with --verify;
- p12-info: a .p12 made by `openssl pkcs12 -export`, and a JKS made from it by keytool, with a
  trusted-certificate entry added (an unrelated root, so that it is an extra certificate);
- certificate: every certificate object in all of the above.
A certificate's field that the certificate table does not list is checked as a field of the
document it is in, so a new field fails the check wherever it appears.

Usage: check_json_fields.py --getcert BINARY --pki DIR [--root DIR]"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

import doclib

TABLE_MARK = re.compile(r"^<!--\s*json-fields:\s*([\w-]+)\s*-->$")
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def documented(text):
    kinds = {}
    kind = None
    for line in text.split("\n"):
        m = TABLE_MARK.match(line.strip())
        if m:
            kind = m.group(1)
            kinds.setdefault(kind, set())
            continue
        if kind is None:
            continue
        if line.startswith("|"):
            row = ROW.match(line)
            if row:
                kinds[kind].add(row.group(1))
        elif line.strip():
            kind = None
    return kinds


def is_certificate(value):
    return isinstance(value, dict) and {"subject", "sha256", "pem"} <= value.keys()


def walk(value, path, kind, produced, cert_fields):
    def at(key):
        return key if not path else path + "." + key

    if not isinstance(value, dict):
        return
    for key, child in value.items():
        produced.setdefault(kind, set()).add(at(key))
        descend(child, at(key), kind, produced, cert_fields)


def descend(child, path, kind, produced, cert_fields):
    if is_certificate(child):
        for key, member in child.items():
            if key in cert_fields:
                produced.setdefault("certificate", set()).add(key)
                descend(member, key, "certificate", produced, cert_fields)
            else:
                produced.setdefault(kind, set()).add(path + "." + key)
                descend(member, path + "." + key, kind, produced, cert_fields)
    elif isinstance(child, dict):
        walk(child, path, kind, produced, cert_fields)
    elif isinstance(child, list):
        for element in child:
            descend(element, path + "[]", kind, produced, cert_fields)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sct_extension(log_ids):
    """The precertificate SCT list extension (RFC 6962 3.3) for openssl's -extfile: v1 SCTs with a
    signature field of the right shape, as tests/support/issued_leaf.cpp builds them."""
    items = b""
    for log_id in log_ids:
        sct = bytes([0]) + log_id + (1767225600123).to_bytes(8, "big") + b"\x00\x00" + b"\x04\x03"
        sig = bytes([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01])
        sct += len(sig).to_bytes(2, "big") + sig
        items += len(sct).to_bytes(2, "big") + sct
    tls = len(items).to_bytes(2, "big") + items
    der = bytes([0x04, len(tls)]) + tls
    return "1.3.6.1.4.1.11129.2.4.2 = DER:" + ":".join("%02X" % b for b in der) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--getcert", required=True)
    parser.add_argument("--pki", required=True)
    parser.add_argument("--root", default=doclib.repo_root())
    args = parser.parse_args()
    pki = lambda name: os.path.join(args.pki, name)  # noqa: E731
    docs = documented(doclib.read(args.root, "docs/json.md"))
    for kind in ("fetch", "fetch-error", "certificate", "show", "p12-info"):
        if not docs.get(kind):
            doclib.fail(["docs/json.md: no table marked <!-- json-fields: %s -->" % kind], "cannot parse")
    for tool in ("openssl", "keytool"):
        if shutil.which(tool) is None:
            doclib.skip("%s is not installed" % tool)
    cert_fields = {p.split(".")[0].split("[]")[0] for p in docs["certificate"]}
    produced = {}
    work = tempfile.mkdtemp(prefix="getcert-json-")
    servers = []
    problems = []

    def serve(argv):
        port = free_port()
        servers.append(subprocess.Popen(
            ["openssl", "s_server", "-accept", "127.0.0.1:%d" % port, "-quiet", "-www"] + argv,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return "localhost:%d" % port
            except OSError:
                time.sleep(0.1)
        raise SystemExit("openssl s_server did not start: " + " ".join(argv))

    def getcert(kind, argv, want_exit, env=None):
        r = doclib.run([args.getcert] + argv + ["-o", "json"], env=dict(os.environ, **(env or {})), timeout=60)
        if r.returncode != want_exit:
            problems.append("getcert %s: exit %d, expected %d: %s" % (" ".join(argv), r.returncode, want_exit, r.stderr))
            return
        for line in r.stdout.splitlines():
            if line.strip():
                walk(json.loads(line), "", kind, produced, cert_fields)

    try:
        w = lambda name: os.path.join(work, name)  # noqa: E731
        with open(w("sent.pem"), "w") as out:
            for name in ("intermediate.pem", "root.pem"):
                out.write(open(pki(name)).read())
        target = serve(["-cert", pki("good.pem"), "-key", pki("good.key"), "-cert_chain", w("sent.pem"),
                        "-status_file", pki("good-ocsp.der"), "-verify", "1", "-CAfile", pki("root.pem")])
        getcert("fetch", ["-v", target, "--ca-file", pki("root.pem")], 0)
        getcert("fetch", [target, "--ca-file", pki("untrusted-root.pem")], 5)
        plain = serve(["-cert", pki("rsa.pem"), "-key", pki("rsa.key"), "-cert_chain", pki("intermediate.pem")])
        getcert("fetch", [plain, "--ca-file", pki("intermediate.pem")], 0)
        getcert("fetch-error", ["localhost:%d" % free_port(), "--ca-file", pki("root.pem")], 3)

        with open(w("sct.ext"), "w") as ext:
            ext.write("basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\n"
                      "extendedKeyUsage = serverAuth\nsubjectAltName = DNS:sct.test\n"
                      "tlsfeature = status_request\n" + sct_extension([bytes(range(1, 33)), bytes(range(33, 65))]))
        for argv in (["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", w("sct.key")],
                     ["req", "-new", "-key", w("sct.key"), "-subj", "/CN=sct.test", "-out", w("sct.csr")],
                     ["x509", "-req", "-in", w("sct.csr"), "-CA", pki("intermediate.pem"), "-CAkey",
                      pki("intermediate.key"), "-set_serial", "0x5c7", "-days", "30", "-extfile", w("sct.ext"),
                      "-out", w("sct.pem")]):
            r = doclib.run(["openssl"] + argv)
            if r.returncode != 0:
                raise SystemExit("openssl %s failed: %s" % (argv[0], r.stderr))
        with open(w("sct-chain.pem"), "w") as out:
            out.write(open(w("sct.pem")).read() + open(pki("intermediate.pem")).read())
        getcert("show", ["show", w("sct-chain.pem"), "--verify", "--host", "sct.test", "--ca-file", pki("root.pem")], 0)

        env = {"P12_PASSWORD": "json-fields"}
        # The unrelated root belongs to no key: it is an extra certificate.
        with open(w("p12-certs.pem"), "w") as out:
            out.write(open(w("sent.pem")).read() + open(pki("untrusted-root.pem")).read())
        r = doclib.run(["openssl", "pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa.pem"),
                        "-certfile", w("p12-certs.pem"), "-name", "docs", "-passout", "env:P12_PASSWORD",
                        "-out", w("bundle.p12")], env=dict(os.environ, **env))
        if r.returncode != 0:
            raise SystemExit("openssl pkcs12 -export failed: " + r.stderr)
        getcert("p12-info", ["p12", "info", w("bundle.p12"), "--password-env", "P12_PASSWORD"], 0, env)
        r = doclib.run(["keytool", "-importkeystore", "-noprompt", "-srckeystore", w("bundle.p12"),
                        "-srcstoretype", "PKCS12", "-srcstorepass", "json-fields", "-destkeystore",
                        w("store.jks"), "-deststoretype", "JKS", "-deststorepass", "json-fields",
                        "-destkeypass", "json-fields"])
        if r.returncode != 0:
            raise SystemExit("keytool -importkeystore failed: " + r.stdout + r.stderr)
        r = doclib.run(["keytool", "-importcert", "-noprompt", "-alias", "docs-root", "-file", pki("untrusted-root.pem"),
                        "-keystore", w("store.jks"), "-storepass", "json-fields"])
        if r.returncode != 0:
            raise SystemExit("keytool -importcert failed: " + r.stdout + r.stderr)
        getcert("p12-info", ["p12", "info", w("store.jks"), "--password-env", "P12_PASSWORD"], 0, env)
    finally:
        for server in servers:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)

    for kind in sorted(docs):
        for path in sorted(docs[kind] - produced.get(kind, set())):
            problems.append("docs/json.md (%s): %s is listed, but no output of this test has it" % (kind, path))
        for path in sorted(produced.get(kind, set()) - docs[kind]):
            problems.append("docs/json.md (%s): getcert writes %s, but the table does not list it" % (kind, path))
    for kind in sorted(set(produced) - set(docs)):
        problems.append("docs/json.md: no table for %s, whose fields getcert writes" % kind)
    if problems:
        doclib.fail(problems, "docs/json.md and getcert's JSON disagree")
    print("%d documented JSON fields, each seen in real output, and no other"
          % sum(len(v) for v in docs.values()))


if __name__ == "__main__":
    main()
