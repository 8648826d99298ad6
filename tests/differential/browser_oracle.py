"""Real browsers as certificate oracles: Chromium and Firefox load each case from a local server.

run_browser(kind, jobs, work) judges many cases with few browser starts. One Python process
serves every case on its own loopback port with its own ssl.SSLContext (the case's chain.pem and
key.pem), and records whether an HTTP request arrived over a TLS connection: a browser sends one
only after it accepted the certificate, so that is the verdict (the TLS alert the browser sent
is the detail of a rejection). A control page on http://127.0.0.1 fetches every case's
https://NAME:PORT/ (mode 'no-cors', bounded concurrency, a timeout) and posts back when done.

The browser trusts the roots of the cases it judges through a throwaway NSS database
(certutil): Chromium reads $HOME/.pki/nssdb, Firefox the cert9.db of its --profile. One
database holds every root of a batch, so cases are batched only where that cannot change a
verdict: a case joins a batch when no certificate of the others (roots, or intermediates the
browser may remember from their handshakes) has the name of an issuer of its certificates
without being that very certificate, and none of their roots is a certificate it sends but does
not trust. Each case has its own port (and so
its own TLS session cache and socket pool entry); no exception is ever added.

Host names map to 127.0.0.1 (Chromium: --host-resolver-rules; Firefox: network.dns.forceResolve).
An IP address is loaded as itself: a loopback address gets a server on it, other ones cannot be
served here (that case is skipped).
"""

import base64
import http.server
import ipaddress
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

# The fetch standard's bad ports: a browser refuses them whatever the certificate.
BAD_PORTS = {1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87,
             95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143,
             161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556,
             563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190,
             5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080}
# Seconds one fetch may take; a whole batch.
FETCH_TIMEOUT = 15
BATCH_TIMEOUT = 180
CONCURRENCY = 8

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--no-default-browser-check",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-extensions", "--disable-default-apps",
                  "--disable-features=Translate,OptimizationHints,MediaRouter,"
                  "CertificateTransparencyComponentUpdater,HttpsUpgrades,"
                  "LocalNetworkAccessChecks,PrivateNetworkAccessSendPreflights",
                  "--metrics-recording-only", "--password-store=basic",
                  "--host-resolver-rules=MAP * 127.0.0.1, EXCLUDE 127.0.0.1"]

# Firefox: nothing may reach the network or change between runs; names resolve to loopback.
FIREFOX_PREFS = {
    "network.dns.forceResolve": "127.0.0.1",
    "network.trr.mode": 5,
    "network.dns.disablePrefetch": True,
    "network.http.http3.enable": False,
    "network.http.speculative-parallel-limit": 0,
    "network.predictor.enabled": False,
    "network.prefetch-next": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.lna.enabled": False,
    "network.lna.blocking": False,
    "app.update.enabled": False,
    "app.update.auto": False,
    "app.normandy.enabled": False,
    "app.shield.optoutstudies.enabled": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "browser.search.update": False,
    "browser.ping-centre.telemetry": False,
    "browser.newtabpage.enabled": False,
    "browser.newtabpage.activity-stream.feeds.system.topsites": False,
    "browser.topsites.contile.enabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "toolkit.telemetry.server": "",
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "extensions.blocklist.enabled": False,
    "services.settings.server": "http://127.0.0.1:9/",
    "security.remote_settings.intermediates.enabled": False,
    "security.remote_settings.crlite_filters.enabled": False,
    "security.pki.crlite_mode": 0,
    "security.OCSP.enabled": 0,
    "security.ssl.enable_ocsp_stapling": False,
    "security.certerrors.mitm.priming.enabled": False,
    "security.enterprise_roots.enabled": False,
    "dom.security.https_only_mode": False,
    "dom.security.https_first": False,
    "browser.fixup.alternate.enabled": False,
    "media.gmp-manager.url": "",
    "media.gmp-gmpopenh264.enabled": False,
    "geo.enabled": False,
    "identity.fxaccounts.enabled": False,
    "privacy.trackingprotection.enabled": False,
    "browser.contentblocking.category": "standard",
}


class Result:
    def __init__(self, verdict, detail=""):
        self.verdict = verdict  # accept, reject, skip, error
        self.detail = detail


def free_port(host):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    while True:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.bind((host, 0))
        if s.getsockname()[1] not in BAD_PORTS:
            return s
        s.close()


class CaseServer:
    """One case: a TLS listener presenting its chain, and what happened on it."""

    def __init__(self, case_dir, name, kind):
        self.case_dir = case_dir
        self.name = name
        self.requests = 0
        self.handshakes = 0
        self.alerts = []
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.set_ciphers("ALL:@SECLEVEL=0")
        self.ctx.load_cert_chain(os.path.join(case_dir, "chain.pem"),
                                 os.path.join(case_dir, "key.pem"))
        self.ctx.set_alpn_protocols(["http/1.1"])
        host = "127.0.0.1"
        # Both browsers map IP literals too (--host-resolver-rules, network.dns.forceResolve):
        # every case is served on 127.0.0.1, whatever its name.
        self.sock = free_port(host)
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url_host = f"[{name}]" if ":" in name else name
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def url(self):
        return f"https://{self.url_host}:{self.port}/"

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        conn.settimeout(FETCH_TIMEOUT)
        try:
            tls = self.ctx.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError) as e:
            self.alerts.append(str(getattr(e, "reason", None) or e)[:120])
            conn.close()
            return
        self.handshakes += 1
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = tls.recv(4096)
                if not chunk:
                    break
                data += chunk
            if data.split(b" ", 1)[0] in (b"GET", b"POST", b"HEAD", b"OPTIONS"):
                self.requests += 1
                tls.sendall(b"HTTP/1.1 204 No Content\r\nAccess-Control-Allow-Origin: *\r\n"
                            b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        except (OSError, ssl.SSLError) as e:
            # A TLS 1.3 client rejects the chain after the server's Finished: the alert
            # arrives on the first read.
            self.alerts.append(str(getattr(e, "reason", None) or e)[:120])
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def close(self):
        self.sock.close()

    def result(self):
        if self.requests:
            return Result("accept", "an HTTP request arrived over TLS")
        why = ", ".join(sorted(set(self.alerts))) or "no request arrived"
        return Result("reject", f"{self.handshakes} handshake(s) finished, no request; "
                                f"server saw: {why}")


def is_ip(name):
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


PAGE = """<!doctype html><meta charset="utf-8"><title>oracle</title><script>
const urls = %s;
const results = {};
async function one(u) {
  const c = new AbortController();
  const t = setTimeout(() => c.abort(), %d);
  try { await fetch(u, {mode: 'no-cors', cache: 'no-store', credentials: 'omit',
                        signal: c.signal}); results[u] = 'loaded'; }
  catch (e) { results[u] = String(e && e.name) + ': ' + String(e && e.message); }
  finally { clearTimeout(t); }
}
async function main() {
  let next = 0;
  async function worker() { while (next < urls.length) { await one(urls[next++]); } }
  await Promise.all(Array.from({length: %d}, worker));
  await fetch('/done', {method: 'POST', body: JSON.stringify(results)});
}
main();
</script>"""


class Control:
    """http://127.0.0.1:PORT/: the page that fetches every URL, and /done."""

    def __init__(self, urls):
        page = (PAGE % (json.dumps(urls), FETCH_TIMEOUT * 1000, CONCURRENCY)).encode()
        done = threading.Event()
        box = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = page if self.path in ("/", "/index.html") else b""
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                try:
                    box["results"] = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    box["results"] = {}
                self.send_response(204)
                self.end_headers()
                done.set()

            def log_message(self, *args):
                pass

        self.done, self.box = done, box
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# --- batching -----------------------------------------------------------------------------------

def pem_blocks(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    end = "-----END CERTIFICATE-----"
    out = []
    for b in text.split(end):
        if "-----BEGIN CERTIFICATE-----" in b:
            body = b.split("-----BEGIN CERTIFICATE-----", 1)[1]
            out.append(base64.b64decode("".join(body.split())))
    return out


def names_of(der):
    """(subject, issuer) of a DER certificate, as DER bytes; None when it does not parse."""
    from cryptography import x509
    try:
        c = x509.load_der_x509_certificate(der)
        return c.subject.public_bytes(), c.issuer.public_bytes()
    except Exception:  # pylint: disable=broad-except
        return None


class Footprint:
    """What a case shows a browser: its certificates, and the names its path building looks up."""

    def __init__(self, case_dir):
        self.certs = set(pem_blocks(os.path.join(case_dir, "chain.pem")) +
                         pem_blocks(os.path.join(case_dir, "roots.pem")))
        self.roots = pem_blocks(os.path.join(case_dir, "roots.pem"))
        self.names = set()  # the issuer names its path building looks up
        for der in self.certs:
            n = names_of(der)
            if n:
                self.names.add(n[1])

    def disturbed_by(self, other):
        """Whether other's certificates could change this case's verdict: a root of other's
        that this case does not trust, but sends or looks up by name; or another certificate
        with the name of an issuer this case looks up."""
        for der in other.certs:
            anchor = der in other.roots and der not in self.roots
            if der in self.certs and not anchor:
                continue
            n = names_of(der)
            if n is None or n[0] in self.names or anchor and der in self.certs:
                return True
        return False


def batches(jobs):
    """Splits jobs [(case_dir, name)] into groups that may share one browser and NSS database."""
    groups = []
    for job in jobs:
        fp = Footprint(job[0])
        for g in groups:
            if all(not fp.disturbed_by(o) and not o.disturbed_by(fp) for _, o in g):
                g.append((job, fp))
                break
        else:
            groups.append([(job, fp)])
    return [[(job, fp) for job, fp in g] for g in groups]


# --- the browsers -------------------------------------------------------------------------------

def make_nssdb(db_dir, roots, leaves):
    os.makedirs(db_dir, exist_ok=True)
    subprocess.run(["certutil", "-N", "-d", "sql:" + db_dir, "--empty-password"], check=True,
                   capture_output=True, timeout=60)
    for i, der in enumerate(roots):
        path = os.path.join(db_dir, f"root{i}.der")
        with open(path, "wb") as f:
            f.write(der)
        p = subprocess.run(["certutil", "-A", "-d", "sql:" + db_dir, "-n", f"case root {i}",
                            "-t", "P,," if der in leaves else "C,,", "-i", path], capture_output=True, text=True,
                           timeout=60, check=False)
        if p.returncode != 0:
            # A root NSS cannot read: the cases under it fail, as they would for a user.
            pass


def start_chromium(binary, home, url):
    os.makedirs(os.path.join(home, ".pki"), exist_ok=True)
    env = dict(os.environ, HOME=home)
    argv = [binary] + CHROMIUM_FLAGS + [f"--user-data-dir={os.path.join(home, 'profile')}", url]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(home, "stderr.txt"), "wb"))


def start_firefox(binary, home, url):
    profile = os.path.join(home, "profile")
    with open(os.path.join(profile, "user.js"), "w", encoding="utf-8") as f:
        for k, v in FIREFOX_PREFS.items():
            f.write(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n")
    env = dict(os.environ, HOME=home, MOZ_CRASHREPORTER_DISABLE="1",
               MOZ_DISABLE_AUTO_SAFE_MODE="1", MOZ_HEADLESS="1")
    argv = [binary, "--headless", "--no-remote", "--profile", profile, url]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(home, "stderr.txt"), "wb"))


def run_batch(kind, binary, group, work):
    servers, out = {}, {}
    for (case_dir, name), _ in group:
        try:
            servers[case_dir] = CaseServer(case_dir, name, kind)
        except LookupError as e:
            out[case_dir] = Result("skip", str(e))
        except (OSError, ssl.SSLError) as e:
            out[case_dir] = Result("skip", f"the TLS server cannot present this chain: {e}")
    if not servers:
        return out
    home = tempfile.mkdtemp(prefix=kind + "-", dir=work)
    roots, leaves = [], set()
    for (case_dir, _), fp in group:
        if case_dir in servers:
            roots.extend(r for r in fp.roots if r not in roots)
            leaves.add(pem_blocks(os.path.join(case_dir, "chain.pem"))[0])
    if kind == "chromium":
        make_nssdb(os.path.join(home, ".pki", "nssdb"), roots, leaves)
    else:
        make_nssdb(os.path.join(home, "profile"), roots, leaves)
    urls = {s.url(): d for d, s in servers.items()}
    control = Control(list(urls))
    start = start_chromium if kind == "chromium" else start_firefox
    proc = start(binary, home, control.url)
    finished = control.done.wait(BATCH_TIMEOUT)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    control.close()
    page = control.box.get("results", {})
    for u, d in urls.items():
        servers[d].close()
        if not finished:
            out[d] = Result("error", f"the page did not finish within {BATCH_TIMEOUT} s")
            continue
        r = servers[d].result()
        said = page.get(u, "no answer")
        if r.verdict == "accept" and said != "loaded":
            r = Result("error", f"a request arrived, but the page says {said}")
        elif r.verdict == "reject" and said == "loaded":
            r = Result("error", f"the page loaded it, but no request arrived ({r.detail})")
        elif r.verdict == "reject":
            r.detail += f"; page: {said}"
        out[d] = r
    if finished:
        shutil.rmtree(home, ignore_errors=True)
    return out


def run_browser(kind, binary, jobs, work):
    """Judges jobs [(case_dir, name)] in as few browser runs as batching allows: {case_dir:
    Result}."""
    out = {}
    for group in batches(jobs):
        out.update(run_batch(kind, binary, group, work))
    return out


def find_browser(kind):
    """(binary, None) or (None, why not)."""
    if not shutil.which("certutil"):
        return None, "certutil is not installed (Debian package libnss3-tools)"
    if kind == "chromium":
        b = shutil.which("chromium")
        return (b, None) if b else (None, "chromium is not installed (Debian package chromium)")
    for name in ("firefox-esr", "firefox"):
        b = shutil.which(name)
        if b:
            return b, None
    return None, "firefox is not installed (Debian package firefox-esr)"
