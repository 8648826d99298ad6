#!/usr/bin/env python3
"""Differential verification test: getcert against OpenSSL, GnuTLS, Go, pyca, Java, gRPC,
webpki (rustls), Chromium and Firefox.

Usage: run-differential.py --getcert BIN --work DIR [--verbose] [--only CASE...]

Generates the corpus (make-corpus.py) into DIR/corpus, runs every verifier on every case, prints
a matrix (case x verifier -> accept/reject, and getcert's error code), and exits 1 on any result
that is not the expected one: the correct verdict, or a documented difference (the case's
expect.json says which, and why). A verifier that cannot run here is reported with the skip
marker, which ctest turns into SKIPPED, unless something failed.

Verifiers and how they are run (see README, "Verification policy compared"):
  getcert  getcert show chain.pem --verify --host NAME --ca-file roots.pem --at TIME -o json
  openssl  openssl verify -x509_strict -auth_level 2 -purpose sslserver -attime AT
           -CAfile roots.pem -no-CApath -no-CAstore -untrusted rest.pem
           -verify_hostname NAME | -verify_ip NAME leaf.pem
  gnutls   faketime AT certtool --verify --load-ca-certificate roots.pem --infile chain.pem
           --verify-hostname NAME --verify-purpose serverAuth --verify-profile medium
  go       goverify (crypto/x509 Verify, built here from goverify/main.go)
  getcert:PROFILE  the same with --profile PROFILE (openssl, rfc5280); plain getcert is webpki
  pyca     pyca_verify.py: cryptography.x509.verification (pyca/cryptography 43 or later), run
           by the first python3 that has it (Debian 12's python3-cryptography 38 does not)
  java     javaverify/JavaVerify.java, compiled here with javac: Java 17's PKIX validator for the
           TLS server variant (what SunJSSE's trust manager runs, revocation off) at the case's
           time, then its HTTPS host name check; one JVM judges every case (a batch on stdin)
  grpc     grpc_probe.py: grpcio's secure channel (root certificates, ssl_target_name_override
           = NAME) to a TLS server on 127.0.0.1 that presents chain.pem with ALPN h2; only for
           the cases verified "now" (gRPC cannot take a verification time)
  webpki   webpkiverify/ (Rust), built here offline against Debian's librust-webpki-dev (0.22,
           the predecessor of rustls-webpki) from /usr/share/cargo/registry: what a rustls 0.20
           client checks, at the case's time; one process judges every case (a batch on stdin)
  chromium, firefox  browser_oracle.py: one browser per batch of cases (throwaway profile, an NSS
           database trusting the batch's roots) loads https://NAME:PORT/ from a local TLS server
           per case; accepted = an HTTP request arrived over that TLS connection. Only for the
           cases verified "now", like grpc
"""

import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_oracle  # noqa: E402  pylint: disable=wrong-import-position

SKIP_MARKER = "GETCERT-TEST-SKIPPED"
# ctest reports this exit status as skipped (SKIP_RETURN_CODE): only a run where nothing failed
# returns it.
SKIP_CODE = 77
HERE = os.path.dirname(os.path.abspath(__file__))
VERIFIERS = ["getcert", "getcert:openssl", "getcert:rfc5280", "openssl", "gnutls", "go", "grpc",
             "pyca", "java", "webpki", "chromium", "firefox"]
# The verifiers that judge the whole corpus in one batch (one process or browser per run).
BATCHED = ["java", "webpki", "chromium", "firefox"]
# The JDK-internal packages JavaVerify calls (what SunJSSE's trust manager is made of).
JAVA_EXPORTS = ["--add-exports", "java.base/sun.security.validator=ALL-UNNAMED",
                "--add-exports", "java.base/sun.security.util=ALL-UNNAMED"]
SERVER_AUTH_OID = "1.3.6.1.5.5.7.3.1"
# Seconds; a generous bound, never reached by a healthy tool (pyca's import alone takes seconds
# on a loaded machine).
TOOL_TIMEOUT = 60
# getcert's bound on each hostile-* case, a whole process run included: its budgets end such
# input in milliseconds; seconds only on a machine loaded by the rest of the suite.
HOSTILE_SECONDS = 10


class Outcome:
    def __init__(self, verdict, detail="", codes=(), warnings=""):
        self.verdict = verdict  # "accept", "reject", "skip" or "error"
        self.detail = detail
        self.codes = list(codes)
        self.warnings = warnings  # getcert's verification warnings, as JSON text


def run(argv, env=None):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT, env=env,
                           check=False)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out"


def read(case_dir, name):
    with open(os.path.join(case_dir, name), encoding="utf-8") as f:
        return f.read().strip()


def is_ip(name):
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, name)
            return True
        except OSError:
            pass
    return False


def split_chain(case_dir):
    """leaf.pem and rest.pem next to chain.pem (openssl verify takes them apart)."""
    text = read(case_dir, "chain.pem")
    end = "-----END CERTIFICATE-----"
    blocks = [b + end + "\n" for b in text.split(end) if b.strip()]
    leaf = os.path.join(case_dir, "leaf.pem")
    rest = os.path.join(case_dir, "rest.pem")
    with open(leaf, "w", encoding="utf-8") as f:
        f.write(blocks[0].lstrip())
    with open(rest, "w", encoding="utf-8") as f:
        f.write("".join(b.lstrip() for b in blocks[1:]))
    return leaf, rest if len(blocks) > 1 else None


def rfc3339(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


# --- verifiers ---------------------------------------------------------------------------------

def verify_getcert(binary, case_dir, name, at, profile=None):
    started = time.monotonic()
    rc, out, err = run([binary, "show", os.path.join(case_dir, "chain.pem"), "--verify",
                        "--host", name, "--ca-file", os.path.join(case_dir, "roots.pem"),
                        "--at", rfc3339(at), "-o", "json"] +
                       (["--profile", profile] if profile else []))
    try:
        verification = json.loads(out)["verification"]
    except (ValueError, KeyError, TypeError):
        return Outcome("error", f"exit {rc}: {err.strip()[:200]}")
    codes = [e["code"] for e in verification["errors"]]
    warnings = json.dumps(verification.get("warnings", []))
    took = time.monotonic() - started
    if os.path.basename(case_dir).startswith("hostile-") and took > HOSTILE_SECONDS:
        return Outcome("error", f"took {took:.1f} s, over the {HOSTILE_SECONDS} s bound for "
                                "hostile input", codes, warnings)
    if verification.get("profile") != (profile or "webpki"):
        return Outcome("error", f"the report names profile {verification.get('profile')}")
    if rc == 0 and verification["ok"]:
        return Outcome("accept", verification["verdict"], codes, warnings)
    if rc == 5 and not verification["ok"]:
        return Outcome("reject", verification["verdict"] + ": " + ", ".join(codes), codes,
                       warnings)
    return Outcome("error", f"exit {rc} with ok={verification['ok']}", codes, warnings)


def verify_openssl(case_dir, name, at):
    leaf, rest = split_chain(case_dir)
    argv = ["openssl", "verify", "-x509_strict", "-auth_level", "2", "-purpose", "sslserver",
            "-attime", str(at), "-CAfile", os.path.join(case_dir, "roots.pem"), "-no-CApath",
            "-no-CAstore", "-verify_ip" if is_ip(name) else "-verify_hostname", name]
    if rest:
        argv += ["-untrusted", rest]
    rc, out, err = run(argv + [leaf])
    if rc == 0:
        return Outcome("accept", out.strip())
    lines = [l for l in (out + err).splitlines() if l.startswith("error")]
    return Outcome("reject", lines[0] if lines else f"exit {rc}")


def verify_gnutls(case_dir, name, at):
    stamp = datetime.datetime.fromtimestamp(at, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S")
    env = dict(os.environ, TZ="UTC")
    # -f with an absolute time freezes the clock: without it, faketime starts there and runs
    # on, so a slow run (a loaded machine, the sanitizer suite) drifts past a one-second edge.
    rc, out, err = run(["faketime", "-f", stamp, "certtool", "--verify", "--load-ca-certificate",
                        os.path.join(case_dir, "roots.pem"), "--infile",
                        os.path.join(case_dir, "chain.pem"), "--verify-hostname", name,
                        "--verify-purpose", SERVER_AUTH_OID, "--verify-profile", "medium"],
                       env=env)
    for line in out.splitlines():
        if line.startswith("Chain verification output:"):
            text = line.split(":", 1)[1].strip()
            return Outcome("accept" if text.startswith("Verified.") else "reject", text)
    return Outcome("reject", f"exit {rc}: {(err.strip().splitlines() or [''])[-1][:200]}")


def verify_go(binary, case_dir, name, at):
    rc, out, err = run([binary, os.path.join(case_dir, "chain.pem"),
                        os.path.join(case_dir, "roots.pem"), name, str(at)])
    if rc == 0 and out.strip() == "accept":
        return Outcome("accept")
    if rc == 1:
        return Outcome("reject", out.strip()[len("reject: "):])
    return Outcome("error", f"exit {rc}: {err.strip()[:200]}")


def verify_pyca(python, case_dir, name, at):
    rc, out, err = run([python, os.path.join(HERE, "pyca_verify.py"),
                        os.path.join(case_dir, "chain.pem"), os.path.join(case_dir, "roots.pem"),
                        name, str(at)])
    if rc == 0 and out.strip() == "accept":
        return Outcome("accept")
    if rc == 0 and out.startswith("reject"):
        return Outcome("reject", out.strip()[len("reject: "):])
    return Outcome("error", f"exit {rc}: {err.strip()[-200:]}")


def verify_java_batch(classes, jobs):
    """Judges every (case_dir, name, at) of jobs in one JVM; returns {case_dir: Outcome}."""
    lines = "".join("\t".join([os.path.join(d, "chain.pem"), os.path.join(d, "roots.pem"), name,
                               str(at)]) + "\n" for d, name, at in jobs)
    return batch_answers(["java"] + JAVA_EXPORTS + ["-cp", classes, "JavaVerify"], lines, jobs,
                         "JavaVerify")


def batch_answers(argv, lines, jobs, tool):
    """Runs a batch verifier (one job a line on stdin, one answer a line on stdout: "accept" or
    "reject: why"); returns {case_dir: Outcome}, every job an error when the batch failed."""
    try:
        p = subprocess.run(argv, input=lines, capture_output=True, text=True,
                           timeout=TOOL_TIMEOUT * 2, check=False)
        answers = p.stdout.splitlines() if p.returncode == 0 else []
        why = f"exit {p.returncode}: {p.stderr.strip()[-200:]}"
    except subprocess.TimeoutExpired:
        answers, why = [], "timed out"
    if len(answers) != len(jobs):
        return {d: Outcome("error", f"{tool} gave {len(answers)} answers for {len(jobs)} "
                                    f"cases ({why})") for d, _, _ in jobs}
    out = {}
    for (d, _, _), answer in zip(jobs, answers):
        if answer == "accept":
            out[d] = Outcome("accept")
        elif answer.startswith("reject: "):
            out[d] = Outcome("reject", answer[len("reject: "):])
        else:
            out[d] = Outcome("error", answer[:200])
    return out


def write_proofs(case_dir):
    """proofs.txt: signatures with the leaf's key over webpkiverify's PROOF_MESSAGE, one per TLS
    signature scheme that fits the key ("SCHEME HEX" lines): the handshake signature a rustls
    client verifies with the leaf's public key."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
    with open(os.path.join(case_dir, "key.pem"), "rb") as f:
        key = serialization.load_pem_private_key(f.read(), None)
    lines = []
    if isinstance(key, ec.EllipticCurvePrivateKey):
        for scheme, h in (("ecdsa-sha256", hashes.SHA256()), ("ecdsa-sha384", hashes.SHA384())):
            lines.append((scheme, key.sign(WEBPKI_PROOF_MESSAGE, ec.ECDSA(h))))
    elif isinstance(key, rsa.RSAPrivateKey):
        pss = padding.PSS(padding.MGF1(hashes.SHA256()), 32)
        lines.append(("rsa-pss-sha256", key.sign(WEBPKI_PROOF_MESSAGE, pss, hashes.SHA256())))
        lines.append(("rsa-pkcs1-sha256", key.sign(WEBPKI_PROOF_MESSAGE, padding.PKCS1v15(),
                                                   hashes.SHA256())))
    elif isinstance(key, ed25519.Ed25519PrivateKey):
        lines.append(("ed25519", key.sign(WEBPKI_PROOF_MESSAGE)))
    path = os.path.join(case_dir, "proofs.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(f"{scheme} {sig.hex()}\n" for scheme, sig in lines))
    return path


WEBPKI_PROOF_MESSAGE = b"getcert differential: the server's handshake signature"


def verify_webpki_batch(binary, jobs):
    """Judges every (case_dir, name, at) of jobs in one webpkiverify; returns {case_dir:
    Outcome}."""
    lines = "".join("\t".join([os.path.join(d, "chain.pem"), os.path.join(d, "roots.pem"), name,
                               str(at), write_proofs(d)]) + "\n" for d, name, at in jobs)
    return batch_answers([binary], lines, jobs, "webpkiverify")


def find_cargo():
    for c in (shutil.which("cargo"), os.path.expanduser("~/.cargo/bin/cargo")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def build_webpki(work):
    """Builds webpkiverify into WORK/webpki, offline, against Debian's vendored crates; returns
    (binary, None) or (None, why not)."""
    registry = "/usr/share/cargo/registry"
    if not os.path.isdir(os.path.join(registry, "webpki-0.22.0")) and not any(
            d.startswith("webpki-0.22") for d in (os.listdir(registry)
                                                  if os.path.isdir(registry) else [])):
        return None, "webpki 0.22 is not installed (Debian package librust-webpki-dev)"
    cargo = find_cargo()
    if not cargo:
        return None, "cargo is not installed (Debian package cargo)"
    out = os.path.join(work, "webpki")
    src = os.path.join(out, "src")
    shutil.rmtree(src, ignore_errors=True)
    # A copy: cargo writes Cargo.lock next to the manifest, and the source tree stays clean.
    shutil.copytree(os.path.join(HERE, "webpkiverify"), src)
    home = os.path.join(out, "cargo-home")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.toml"), "w", encoding="utf-8") as f:
        f.write('[source.crates-io]\nreplace-with = "debian"\n'
                f'[source.debian]\ndirectory = "{registry}"\n[net]\noffline = true\n')
    env = dict(os.environ, CARGO_HOME=home)
    env.pop("RUSTUP_TOOLCHAIN", None)
    why = build_step("cargo build", [cargo, "build", "--release", "--offline", "--quiet",
                                     "--target-dir", os.path.join(out, "target")],
                     cwd=src, env=env, timeout=300)
    binary = os.path.join(out, "target", "release", "webpkiverify")
    return (None, why) if why else (binary, None)


def verify_browser_batch(kind, binary, work, jobs):
    """Judges every (case_dir, name, at) of jobs in kind's browser: {case_dir: Outcome}."""
    try:
        got = browser_oracle.run_browser(kind, binary, [(d, name) for d, name, _ in jobs], work)
    except Exception as e:  # pylint: disable=broad-except
        return {d: Outcome("error", f"{kind}: {type(e).__name__}: {e}"[:300]) for d, _, _ in jobs}
    return {d: Outcome(r.verdict, r.detail) for d, r in got.items()}


def build_step(what, args, timeout=120, **kw):
    """Runs the build command ARGS (with subprocess.run's KW); None when it succeeded within two
    minutes (TIMEOUT seconds), else why not, in one line: "WHAT timed out" or "WHAT failed:
    STDERR"."""
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False,
                           **kw)
    except subprocess.TimeoutExpired:
        return what + " timed out"
    if p.returncode != 0:
        return what + " failed: " + p.stderr.strip()[:300]
    return None


def build_java(work):
    """Compiles JavaVerify into WORK/java; returns (class dir, None) or (None, why not)."""
    if not (shutil.which("javac") and shutil.which("java")):
        return None, "javac is not installed (Debian package openjdk-17-jdk-headless)"
    out = os.path.join(work, "java")
    os.makedirs(out, exist_ok=True)
    # -XDignore.symbol.file and -nowarn: the internal API is used on purpose.
    why = build_step("javac", ["javac", "-nowarn", "-XDignore.symbol.file"] + JAVA_EXPORTS +
                     ["-d", out, os.path.join(HERE, "javaverify", "JavaVerify.java")])
    return (None, why) if why else (out, None)


def find_pyca():
    """The interpreter whose cryptography has x509.verification, or (None, why not)."""
    candidates = [sys.executable] + [p for p in (shutil.which("python3"),) if p]
    for python in candidates:
        rc, _, _ = run([python, os.path.join(HERE, "pyca_verify.py"), "--check"])
        if rc == 0:
            return python, None
    return None, "no python3 here has pyca/cryptography 43 or later (x509.verification)"


# An empty HTTP/2 SETTINGS frame: the server preface. gRPC 1.51 reports a channel READY only once
# it has seen one, i.e. after the TLS handshake (and so the certificate check) succeeded.
H2_SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


class ChainServer:
    """A TLS server on 127.0.0.1 presenting chain.pem exactly as written, with ALPN h2."""

    def __init__(self, case_dir):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        # The server must present weak chains too: judging them is the client's job.
        self.ctx.set_ciphers("ALL:@SECLEVEL=0")
        self.ctx.load_cert_chain(os.path.join(case_dir, "chain.pem"),
                                 os.path.join(case_dir, "key.pem"))
        self.ctx.set_alpn_protocols(["h2"])
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        conn.settimeout(10)
        try:
            with self.ctx.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(H2_SETTINGS)
                while tls.recv(4096):
                    pass
        except (OSError, ssl.SSLError):
            pass  # the client rejected the chain, or went away
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.sock.close()
        self.thread.join()


def grpc_reason(stderr):
    """gRPC's log line that explains a failed handshake, without its timestamp prefix."""
    for line in stderr.splitlines():
        for key in ("Handshake failed", "Peer name", "certificate verify failed"):
            if key in line:
                return line[line.index(key):][:200]
    last = (stderr.strip().splitlines() or [""])[-1]
    if "]" in last:
        last = last[last.index("]") + 1:].strip()
    # gRPC returns a name mismatch as a status without logging it.
    return (last or "handshake failed, gRPC logged no reason")[:200]


def verify_grpc(python, case_dir, name):
    try:
        server = ChainServer(case_dir)
    except (OSError, ssl.SSLError) as e:
        return Outcome("error", f"cannot serve the chain: {e}")
    try:
        rc, out, err = run([python, os.path.join(HERE, "grpc_probe.py"),
                            os.path.join(case_dir, "roots.pem"), name, str(server.port)],
                           env=dict(os.environ, GRPC_VERBOSITY="ERROR"))
    finally:
        server.close()
    if rc == 0 and out.strip() == "accept":
        return Outcome("accept", "channel READY")
    if rc == 0 and out.strip() == "reject":
        return Outcome("reject", grpc_reason(err))
    return Outcome("error", f"exit {rc}: {err.strip()[-200:]}")


# --- availability ------------------------------------------------------------------------------

def build_go(work):
    """Builds goverify into WORK/go; returns (binary, None) or (None, why not)."""
    if not shutil.which("go"):
        return None, "go is not installed (Debian package golang-go)"
    out = os.path.join(work, "go")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, GO111MODULE="off", GOCACHE=os.path.join(out, "cache"),
               GOPATH=os.path.join(out, "path"), GOFLAGS="", GOENV="off", CGO_ENABLED="0")
    binary = os.path.join(out, "goverify")
    why = build_step("go build", ["go", "build", "-o", binary, "main.go"],
                     cwd=os.path.join(HERE, "goverify"), env=env)
    return (None, why) if why else (binary, None)


def find_grpc():
    """The interpreter that runs grpc_probe.py, or (None, why not)."""
    rc, _, _ = run([sys.executable, os.path.join(HERE, "grpc_probe.py"), "--check"])
    if rc != 0:
        return None, "python3-grpcio is not installed"
    return sys.executable, None


# --- the run -----------------------------------------------------------------------------------

def load_spec(case_dir):
    with open(os.path.join(case_dir, "expect.json"), encoding="utf-8") as f:
        return json.load(f)


def check_case(case_dir, tools):
    name = read(case_dir, "name")
    at = int(read(case_dir, "at"))
    spec = load_spec(case_dir)
    results = {}
    results["getcert"] = verify_getcert(tools["getcert"], case_dir, name, at)
    for profile in ("openssl", "rfc5280"):
        results["getcert:" + profile] = verify_getcert(tools["getcert"], case_dir, name, at,
                                                       profile)
    results["pyca"] = verify_pyca(tools["pyca"], case_dir, name, at) if tools["pyca"] else (
        Outcome("skip"))
    results["openssl"] = (verify_openssl(case_dir, name, at) if tools["openssl"]
                          else Outcome("skip"))
    results["gnutls"] = verify_gnutls(case_dir, name, at) if tools["gnutls"] else Outcome("skip")
    results["go"] = verify_go(tools["go"], case_dir, name, at) if tools["go"] else Outcome("skip")
    if tools["grpc"] and spec["now"]:
        results["grpc"] = verify_grpc(tools["grpc"], case_dir, name)
    else:
        results["grpc"] = Outcome("skip", "verification time is not now" if tools["grpc"] else "")
    return spec, results


def judge(spec, results):
    """Returns the list of unexpected results as readable lines."""
    problems = []
    for v in VERIFIERS:
        got = results[v]
        if got.verdict == "skip":
            continue
        want = spec["expect"][v]
        if got.verdict != want["verdict"]:
            why = f" (documented: {want['why']})" if want["why"] else ""
            problems.append(f"{v}: {got.verdict}, expected {want['verdict']}{why}: {got.detail}")
        elif v.startswith("getcert") and want.get("code") and want["code"] not in got.codes:
            problems.append(f"{v}: rejected with {got.codes}, expected code {want['code']}")
        if v.startswith("getcert") and want.get("warning") and want["warning"] not in got.warnings:
            problems.append(f"{v}: no '{want['warning']}' among its warnings {got.warnings}")
    return problems


def cell(spec, v, got):
    if got.verdict == "skip":
        return "-"
    mark = {"accept": "ok", "reject": "NO", "error": "ERR"}[got.verdict]
    if v.startswith("getcert") and got.verdict == "reject" and got.codes:
        mark += ":" + got.codes[0]
        verdict = got.detail.split(":", 1)[0]
        if verdict != "invalid":
            mark += f" ({verdict})"
    if got.verdict != spec["expect"][v]["verdict"]:
        return mark + " !!"
    if spec["expect"][v]["why"]:
        return mark + " *"
    return mark


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--getcert", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()
    started = time.monotonic()

    if importlib.util.find_spec("cryptography") is None:
        print(f"{SKIP_MARKER}: python3-cryptography is not installed (the corpus needs it)")
        return SKIP_CODE
    if not os.access(args.getcert, os.X_OK):
        print(f"getcert binary {args.getcert} is missing")
        return 1

    corpus = os.path.join(args.work, "corpus")
    shutil.rmtree(corpus, ignore_errors=True)
    gen = subprocess.run([sys.executable, os.path.join(HERE, "make-corpus.py"), corpus],
                         capture_output=True, text=True, check=False)
    if gen.returncode != 0:
        print("corpus generation failed:\n" + gen.stdout + gen.stderr)
        return 1
    print(gen.stdout.strip())

    skipped = {}
    tools = {"getcert": args.getcert}
    tools["openssl"] = shutil.which("openssl") is not None
    if not tools["openssl"]:
        skipped["openssl"] = "openssl is not installed"
    tools["gnutls"] = bool(shutil.which("certtool") and shutil.which("faketime"))
    if not tools["gnutls"]:
        skipped["gnutls"] = "certtool (gnutls-bin) or faketime is not installed"
    for name, find in (("go", lambda: build_go(args.work)), ("grpc", find_grpc),
                       ("java", lambda: build_java(args.work)), ("pyca", find_pyca),
                       ("webpki", lambda: build_webpki(args.work)),
                       ("chromium", lambda: browser_oracle.find_browser("chromium")),
                       ("firefox", lambda: browser_oracle.find_browser("firefox"))):
        tools[name], why = find()
        if why:
            skipped[name] = why

    cases = sorted(d for d in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, d)))
    if args.only:
        cases = [c for c in cases if c in args.only]
    every = [(os.path.join(corpus, c), read(os.path.join(corpus, c), "name"),
              int(read(os.path.join(corpus, c), "at"))) for c in cases]
    now = [job for job in every if load_spec(job[0])["now"]]
    batched = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        # The batch verifiers start once each and judge the corpus while the others run: the
        # JVM and webpkiverify every case, the browsers the cases verified "now".
        if tools["java"]:
            batched["java"] = pool.submit(verify_java_batch, tools["java"], every)
        if tools["webpki"]:
            batched["webpki"] = pool.submit(verify_webpki_batch, tools["webpki"], every)
        # One browser at a time: each start costs a core for seconds.
        browsers = [k for k in ("chromium", "firefox") if tools[k]]
        if browsers:
            both = pool.submit(lambda: {k: verify_browser_batch(k, tools[k], args.work, now)
                                        for k in browsers})
        # Three at a time, as before the batch verifiers came: a hostile-* case is held to a time
        # bound.
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as cases_pool:
            done = dict(zip(cases, cases_pool.map(
                lambda c: check_case(os.path.join(corpus, c), tools), cases)))
        batch_results = {v: f.result() for v, f in batched.items()}
        if browsers:
            batch_results.update(both.result())
    for c in cases:
        d = os.path.join(corpus, c)
        for v in BATCHED:
            if v in batch_results:
                default = Outcome("skip", "verification time is not now")
                done[c][1][v] = batch_results[v].get(d, default)
            else:
                done[c][1][v] = Outcome("skip")

    width = max(len(c) for c in cases)
    def col(v):
        return 48 if v == "getcert" else 32 if v.startswith("getcert") else 8

    header = f"{'case':<{width}}  {'want':<6}  " + "  ".join(f"{v:<{col(v)}}" for v in VERIFIERS)
    print("\n" + header + "\n" + "-" * len(header))
    failures = []
    for c in cases:
        spec, results = done[c]
        cells = [f"{cell(spec, v, results[v]):<{col(v)}}" for v in VERIFIERS]
        print(f"{c:<{width}}  {spec['want']:<6}  " + "  ".join(cells).rstrip())
        for p in judge(spec, results):
            failures.append(f"{c}: {p}")
        if args.verbose:
            for v in VERIFIERS:
                print(f"    {v}: {results[v].verdict} {results[v].detail}")
    print("\nok = accepted, NO = rejected (getcert: first error code, and the verdict unless it is "
          "invalid), * = documented difference or pending getcert fix (expect.json says why), "
          "!! = unexpected, - = not run")
    elapsed = time.monotonic() - started
    if failures:
        print(f"\n{len(failures)} unexpected result(s):")
        for f in failures:
            print("  " + f)
        print(f"differential: {len(cases)} cases, FAILED in {elapsed:.1f} s")
        return 1
    print(f"differential: {len(cases)} cases, every verifier as expected, in {elapsed:.1f} s")
    for v, why in skipped.items():
        print(f"{SKIP_MARKER}: verifier {v} not run: {why}")
    return SKIP_CODE if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
