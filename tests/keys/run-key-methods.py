#!/usr/bin/env python3
"""OpenSSL 3.0's built-in key code (the ENGINE in cli/builtin_key_methods.cpp) against the
providers, on a zoo of keys, signatures and revocation data: each case gets the same verdict
three ways.

  engine     getcert HOST:PORT against a live `openssl s_server` (a fetch installs the ENGINE
             when the loaded OpenSSL is 3.0);
  providers  the same fetch with an OpenSSL configuration that also loads the null provider,
             under which getcert keeps every key with the providers (the documented opt-out);
  show       getcert show --verify on the chain the server sent (never the ENGINE).

Compared: trusted, the error and warning codes, the revocation statuses, the exit code; and each
is checked against the verdict the case expects, so all three being wrong together fails too.
Client-certificate handshakes (the ENGINE signs with the client key) compare the exit code and
that s_server saw the certificate. Needs openssl; exits 77 after the skip marker without it.

Usage: run-key-methods.py --getcert BIN [--work DIR] [--only NAME...]
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SKIP = "GETCERT-TEST-SKIPPED"
PROVIDERS_CONF = """openssl_conf = conf
[conf]
providers = prov
[prov]
default = def
null = nul
[def]
activate = 1
[nul]
activate = 1
"""

# openssl genpkey arguments per key kind.
KEYS = {
    "rsa2048": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
    "rsa4096": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096"],
    "rsa-e3": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
               "-pkeyopt", "rsa_keygen_pubexp:3"],
    "rsa-pss": ["-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:2048"],
    "p256": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
    "p384": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
    "p521": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521"],
    "ed25519": ["-algorithm", "ED25519"],
    "sm2": ["-algorithm", "SM2"],
}
PSS = ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"]

# (name, CA key, leaf key, leaf key rewrite, CA -sigopt, served, want trusted, want code)
CASES = [
    ("rsa2048", "rsa2048", "rsa2048", None, [], True, True, None),
    ("rsa4096-leaf", "rsa2048", "rsa4096", None, [], True, True, None),
    ("rsa4096-ca", "rsa4096", "rsa2048", None, [], True, True, None),
    ("rsa-e3-leaf", "rsa2048", "rsa-e3", None, [], True, True, None),
    ("rsa-e3-ca", "rsa-e3", "p256", None, [], True, True, None),
    ("rsa-pss-signature", "rsa2048", "p256", None, PSS, True, True, None),
    ("rsa-pss-key-leaf", "rsa2048", "rsa-pss", None, [], True, True, None),
    ("p256", "p256", "p256", None, [], True, True, None),
    ("p384", "p384", "p384", None, [], True, True, None),
    ("p521-ca", "p521", "p256", None, [], True, True, None),
    ("p521-leaf", "p256", "p521", None, [], True, True, "leaf_key_not_in_browsers"),
    ("ed25519-leaf", "p256", "ed25519", None, [], True, True, "leaf_key_not_in_browsers"),
    ("p256-compressed-leaf", "p256", "p256", "compressed", [], True, False,
     "ec_point_compressed"),
    ("p256-compressed-ca", "p256", "p256", "ca-compressed", [], True, False,
     "ec_point_compressed"),
    ("p256-explicit-leaf", "p256", "p256", "explicit", [], True, False,
     "ec_explicit_parameters"),
    # No TLS 1.3 scheme signs with SM2: judged offline only (show), with and without the ENGINE
    # there being irrelevant, to pin the verdict.
    ("sm2-leaf", "p256", "sm2", None, [], False, False, "ec_curve_not_allowed"),
]

# Client keys the ENGINE signs a CertificateVerify with.
CLIENT_KEYS = ["rsa2048", "rsa-pss", "p384", "p521", "ed25519"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def must(cmd, **kw):
    r = run(cmd, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return r


def genkey(path, kind):
    must(["openssl", "genpkey", *KEYS[kind], "-out", path])


def rewrite_key(path, how):
    """The same key with its public point compressed, or with explicit curve parameters: the
    certificate made from it then carries that SubjectPublicKeyInfo."""
    flag = ["-conv_form", "compressed"] if how == "compressed" else ["-param_enc", "explicit"]
    out = path + "." + how
    must(["openssl", "ec", "-in", path, *flag, "-out", out])
    return out


def make_ca(work, name, kind, how=None):
    key = os.path.join(work, f"{name}.key")
    cert = os.path.join(work, f"{name}.pem")
    genkey(key, kind)
    signing = rewrite_key(key, "compressed") if how == "ca-compressed" else key
    must(["openssl", "req", "-new", "-x509", "-key", signing, "-subj", f"/CN={name} CA",
          "-days", "30", "-out", cert,
          "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    return key, cert


def make_leaf(work, name, ca_key, ca_cert, kind, how, sigopt, client=False):
    key = os.path.join(work, f"{name}-leaf.key")
    genkey(key, kind)
    request_key = rewrite_key(key, how) if how in ("compressed", "explicit") else key
    csr = os.path.join(work, f"{name}-leaf.csr")
    must(["openssl", "req", "-new", "-key", request_key, "-subj", "/CN=zoo.test", "-out", csr])
    ext = os.path.join(work, f"{name}-leaf.ext")
    usage = "digitalSignature" + ("" if kind.startswith("p") or kind in ("ed25519", "sm2")
                                  else ",keyEncipherment")
    with open(ext, "w") as f:
        f.write(f"basicConstraints=critical,CA:FALSE\nkeyUsage=critical,{usage}\n"
                f"extendedKeyUsage={'clientAuth' if client else 'serverAuth'}\n"
                "subjectAltName=DNS:zoo.test,IP:127.0.0.1\n"
                "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n"
                "authorityInfoAccess=OCSP;URI:http://127.0.0.1:9/ocsp\n")
    cert = os.path.join(work, f"{name}-leaf.pem")
    serial = str(int.from_bytes(os.urandom(8), "big"))
    must(["openssl", "x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key,
          "-set_serial", serial, "-days", "20", "-extfile", ext, "-out", cert, *sigopt])
    return key, cert


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(cert, key, chain, extra=()):
    port = free_port()
    proc = subprocess.Popen(["openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-cert", cert,
                             "-key", key, "-cert_chain", chain, "-naccept", "8", "-quiet",
                             *extra],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"s_server for {cert} exited: {proc.stdout.read()}")
            time.sleep(0.05)
    # The probe connection above used one of the accepts.
    return proc, port


def verdict(result):
    """What is compared: from getcert's JSON (fetch or show) and its exit code."""
    try:
        doc = json.loads(result.stdout)
    except json.JSONDecodeError:
        return {"exit": result.returncode, "unparsed": result.stderr.strip()[-300:]}
    if isinstance(doc, list):
        doc = doc[0]
    v = doc.get("verification") or {}
    return {
        "exit": result.returncode,
        "trusted": v.get("trusted"),
        "errors": sorted(e["code"] for e in v.get("errors", [])),
        "warnings": sorted(w["code"] for w in v.get("warnings", [])),
        "revocation": sorted((r.get("depth"), r.get("source"), r.get("status"))
                             for r in v.get("revocation", [])),
    }


def key_methods_used(stderr):
    for line in stderr.splitlines():
        if "keys are decoded and checked by" in line:
            return line.split("keys are decoded and checked by", 1)[1].strip()
    return "(not logged)"


class Zoo:
    def __init__(self, getcert, work):
        self.getcert = getcert
        self.work = work
        self.conf = os.path.join(work, "providers.cnf")
        with open(self.conf, "w") as f:
            f.write(PROVIDERS_CONF)
        self.failures = []
        self.engine_seen = set()

    def env(self, providers):
        env = dict(os.environ)
        env.pop("OPENSSL_CONF", None)
        if providers:
            env["OPENSSL_CONF"] = self.conf
        return env

    def fetch(self, port, ca, providers, extra=()):
        r = run([self.getcert, "-v", f"127.0.0.1:{port}", "--ca-file", ca, "-o", "json",
                 "--timeout", "10s", *extra], env=self.env(providers), timeout=60)
        self.engine_seen.add((providers, key_methods_used(r.stderr)))
        return r

    def show(self, chain, ca, extra=()):
        return run([self.getcert, "show", chain, "--verify", "--ca-file", ca, "--host",
                    "127.0.0.1", "-o", "json", *extra], env=self.env(False), timeout=60)

    def compare(self, name, answers, want_trusted, want_code):
        ref_name, ref = next(iter(answers.items()))
        line = f"{name:28} "
        ok = True
        for mode, got in answers.items():
            if {k: v for k, v in got.items() if k != "exit"} != \
               {k: v for k, v in ref.items() if k != "exit"}:
                ok = False
                self.failures.append(f"{name}: {mode} {got} != {ref_name} {ref}")
        codes = ref.get("errors", []) + ref.get("warnings", [])
        if ref.get("trusted") is not want_trusted and not (want_trusted is False and ref.get(
                "errors")):
            ok = False
            self.failures.append(f"{name}: trusted={ref.get('trusted')}, expected {want_trusted}")
        if want_trusted and ref.get("errors"):
            ok = False
            self.failures.append(f"{name}: errors {ref['errors']}, expected none")
        if want_code and want_code not in codes:
            ok = False
            self.failures.append(f"{name}: {want_code} expected among {codes}")
        print(line + ("same" if ok else "DIFFERENT") + f"  {ref}", flush=True)

    def server_case(self, case):
        name, ca_kind, leaf_kind, how, sigopt, served, want_trusted, want_code = case
        ca_key, ca_cert = make_ca(self.work, name, ca_kind, how)
        key, cert = make_leaf(self.work, name, ca_key, ca_cert, leaf_kind, how, sigopt)
        chain = os.path.join(self.work, f"{name}-chain.pem")
        with open(chain, "w") as out:
            for p in (cert, ca_cert):
                out.write(open(p).read())
        answers = {}
        if served:
            proc, port = start_server(cert, key, ca_cert)
            try:
                answers["engine"] = verdict(self.fetch(port, ca_cert, False))
                answers["providers"] = verdict(self.fetch(port, ca_cert, True))
            finally:
                proc.kill()
                proc.wait()
        answers["show"] = verdict(self.show(chain, ca_cert))
        self.compare(name, answers, want_trusted, want_code)
        return ca_key, ca_cert, key, cert

    def revocation_cases(self, kind):
        """A CRL and a stapled OCSP response, each signed by a `kind` CA, that revoke the leaf."""
        name = f"revoked-{kind}"
        ca_key, ca_cert = make_ca(self.work, name, kind)
        key, cert = make_leaf(self.work, name, ca_key, ca_cert, "p256", None, [])
        db = os.path.join(self.work, f"{name}.db")
        open(db, "w").close()
        cnf = os.path.join(self.work, f"{name}.cnf")
        with open(cnf, "w") as f:
            f.write(f"[ca]\ndefault_ca=d\n[d]\ndatabase={db}\ndefault_md=sha256\n"
                    "default_crl_days=7\ncrlnumber=" + os.path.join(self.work, f"{name}.crlno") +
                    "\n")
        with open(os.path.join(self.work, f"{name}.crlno"), "w") as f:
            f.write("01\n")
        must(["openssl", "ca", "-config", cnf, "-keyfile", ca_key, "-cert", ca_cert, "-revoke",
              cert, "-crl_reason", "keyCompromise"])
        crl = os.path.join(self.work, f"{name}.crl")
        must(["openssl", "ca", "-config", cnf, "-keyfile", ca_key, "-cert", ca_cert, "-gencrl",
              "-out", crl])
        resp = os.path.join(self.work, f"{name}.ocsp")
        must(["openssl", "ocsp", "-index", db, "-rsigner", ca_cert, "-rkey", ca_key, "-CA", ca_cert,
              "-issuer", ca_cert, "-cert", cert, "-respout", resp, "-ndays", "7"])
        chain = os.path.join(self.work, f"{name}-chain.pem")
        with open(chain, "w") as out:
            for p in (cert, ca_cert):
                out.write(open(p).read())
        for what, extra, server_extra in (
                ("crl", ["--crl-file", crl], []),
                ("ocsp-staple", [], ["-status_file", resp])):
            proc, port = start_server(cert, key, ca_cert, server_extra)
            try:
                answers = {
                    "engine": verdict(self.fetch(port, ca_cert, False, extra)),
                    "providers": verdict(self.fetch(port, ca_cert, True, extra)),
                }
            finally:
                proc.kill()
                proc.wait()
            if what == "crl":
                answers["show"] = verdict(self.show(chain, ca_cert, extra))
            self.compare(f"{name}-{what}", answers, False, "revoked")

    def client_case(self, server_ca_key, server_ca, server_key, server_cert, kind):
        name = f"client-{kind}"
        ca_key, ca_cert = make_ca(self.work, name, "p256")
        key, cert = make_leaf(self.work, name, ca_key, ca_cert, kind, None, [], client=True)
        proc, port = start_server(server_cert, server_key, server_ca,
                                  ["-Verify", "1", "-CAfile", ca_cert, "-verify_return_error"])
        try:
            exits = {}
            for mode, providers in (("engine", False), ("providers", True)):
                r = self.fetch(port, server_ca, providers,
                               ["--client-cert", cert, "--client-key", key])
                exits[mode] = (r.returncode, verdict(r).get("trusted"))
        finally:
            proc.kill()
            out, _ = proc.communicate()
        ok = exits["engine"] == exits["providers"] == (0, True)
        print(f"{name:28} {'same' if ok else 'DIFFERENT'}  {exits}", flush=True)
        if not ok:
            self.failures.append(f"{name}: {exits} (want exit 0 and trusted in both); "
                                 f"s_server said: {out.strip()[-300:]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--getcert", required=True)
    parser.add_argument("--work")
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()
    if shutil.which("openssl") is None:
        print(f"{SKIP}: openssl is not installed")
        return 77
    work = args.work or tempfile.mkdtemp(prefix="getcert-keys-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    zoo = Zoo(os.path.abspath(args.getcert), work)
    server = None
    for case in CASES:
        if args.only and case[0] not in args.only:
            continue
        made = zoo.server_case(case)
        if case[0] == "rsa2048":
            server = made
    if not args.only:
        for kind in ("p384", "rsa-pss", "rsa2048"):
            zoo.revocation_cases(kind)
        for kind in CLIENT_KEYS:
            zoo.client_case(*server, kind)
    print("key methods:", "; ".join(f"{'providers conf' if p else 'default'}: {what}"
                                    for p, what in sorted(zoo.engine_seen)))
    version = run(["openssl", "version"]).stdout
    engine_expected = version.startswith("OpenSSL 3.0")
    builtin = [what for p, what in zoo.engine_seen if not p and "built-in" in what]
    forced = [what for p, what in zoo.engine_seen if p and "built-in" in what]
    if forced:
        zoo.failures.append("the providers configuration did not keep keys with the providers")
    if engine_expected and not builtin:
        zoo.failures.append("OpenSSL 3.0, yet a fetch did not install the built-in key code: "
                            "nothing was compared")
    if zoo.failures:
        print("\n".join(["", "FAILED:"] + zoo.failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
