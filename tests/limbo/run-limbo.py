#!/usr/bin/env python3
"""x509-limbo judged by the real getcert CLI, one case at a time, per namespace.

Usage: run-limbo.py --getcert BIN [--limbo limbo.json] [--work DIR] [--jobs 2]
                    [--results FILE] [--substitute-profile FROM=TO] [--only SUBSTRING...]

Every case of limbo.json (tests/limbo/SOURCES.md) becomes one getcert command line:

  getcert show chain.pem --verify --ca-file roots.pem [--at TIME] --purpose server|client
          [--host NAME | --email ADDR] [--max-depth N] [--crl-file crls.pem] --profile P -o json

chain.pem is the peer certificate followed by the untrusted intermediates, in one file: `show`
verifies each file it is given as a chain of its own (first certificate = leaf), so the
intermediates cannot be separate files. The verdict is getcert's exit status and JSON
(`verification.ok`); the runner never decides one itself, and never looks at a case's id to
decide anything: the id only names the case in the output. How each field is mapped, and the
profile chosen for each namespace, is in docs/limbo.md.

Output: one line per wrong answer (id, expected, got, getcert's error codes and first reason),
one line per skipped case (why it could not be expressed as getcert options), then
"limbo NAMESPACE: N right, N wrong, N skipped of N" per namespace and
"limbo: N right, N wrong, N skipped of 208". Exit 1 on any wrong answer; otherwise, when a case
was skipped, the skip marker and 77 (ctest: SKIPPED, SKIP_RETURN_CODE); otherwise 0.
"""

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

SKIP_MARKER = "GETCERT-TEST-SKIPPED"
SKIP_CODE = 77  # tests/CMakeLists.txt GETCERT_SKIP_CODE

# getcert's exit statuses (docs/exit-codes.md) that are a verdict.
EXIT_OK = 0
EXIT_VERIFY = 5
EXIT_MALFORMED = 8  # a certificate getcert cannot parse: it rejects the chain

# Seconds. A hostile case (namespace pathological::, or feature denial-of-service) must be
# answered within HOSTILE_SECONDS, a whole process run included: getcert's budgets end such
# input in milliseconds, seconds only under a sanitizer on a loaded machine. Any other case is
# killed after TOOL_TIMEOUT, a bound no healthy run comes near.
HOSTILE_SECONDS = 10
TOOL_TIMEOUT = 120

# --- profile per case --------------------------------------------------------------------------
#
# The namespace gives the profile: rfc5280::, pathlen:: and crl:: are RFC 5280 path validation
# (getcert's strict profile), webpki:: is the CA/B Forum Baseline Requirements (the cabf
# profile), and the rest (online::, pathological::, cve::, invalid::) is what every modern
# client must get right, getcert's default. A case of a default namespace that carries a
# pedantic RFC 5280 feature is judged under rfc5280, the profile that enforces the pedantic
# rules. A webpki:: case keeps cabf even when its features are pedantic (pedantic-webpki-eku,
# pedantic-webpki-subscriber-key, pedantic-public-suffix-wildcard): those are pedantic readings
# of the Baseline Requirements, which cabf is, and two of them conflict (conflicts_with) with an
# rfc5280:: case built from the same chain and expecting the opposite verdict
# (webpki::eku::ee-without-eku against rfc5280::eku::ee-without-eku): judged under one profile,
# one of the pair would be wrong whatever getcert did. check_conflicts() holds the mapping to
# that: the two cases of a conflicting pair never share a profile.
NAMESPACE_PROFILE = {
    "rfc5280": "rfc5280",
    "pathlen": "rfc5280",
    "crl": "rfc5280",
    "webpki": "cabf",
}
DEFAULT_PROFILE = "webpki"
RFC5280_FEATURES = {"pedantic-rfc5280", "pedantic-serial-number", "rfc5280-incompatible-with-webpki"}
WEBPKI_FEATURES = {"pedantic-webpki-eku", "pedantic-webpki-subscriber-key",
                   "pedantic-public-suffix-wildcard"}


def namespace(case):
    return case["id"].split("::", 1)[0] if "::" in case["id"] else ""


def profile_for(case):
    ns = namespace(case)
    if ns in NAMESPACE_PROFILE:
        return NAMESPACE_PROFILE[ns]
    features = set(case.get("features") or [])
    if features & RFC5280_FEATURES:
        return "rfc5280"
    if features & WEBPKI_FEATURES:
        return "cabf"
    return DEFAULT_PROFILE


def hostile(case):
    return namespace(case) == "pathological" or "denial-of-service" in (case.get("features") or [])


def check_conflicts(cases):
    """Problems of the mapping itself: conflicting cases judged under one profile."""
    by_id = {c["id"]: c for c in cases}
    problems = []
    for c in cases:
        for other in c.get("conflicts_with") or []:
            o = by_id.get(other)
            if o is None:
                problems.append(f"{c['id']} conflicts with {other}, which is not in the suite")
            elif c["id"] < other and profile_for(c) == profile_for(o):
                problems.append(f"{c['id']} and {other} conflict but would both be judged under "
                                f"--profile {profile_for(c)}")
    return problems


# --- where limbo contradicts itself ------------------------------------------------------------
#
# Cases whose expected result the suite itself contradicts: no rule can give both answers, so
# getcert follows the cases written to test the rule, and these are reported as DISPUTED (never
# right, never silent) with the reason. A verdict never comes from this list: it only tells the
# runner not to call getcert's answer wrong. Each entry names the case and the cases it
# contradicts.
DISPUTED = {
    # BR 7.1.4.3: a CN, when present, is a character-for-character copy of a SAN. limbo's
    # webpki::cn::* cases (not-in-san, case-mismatch, punycode-not-in-san, the IP forms) expect
    # that rule enforced; these three older cases give their leaves limbo's default CN
    # "example.com", which is not among their SANs (*.example.com, IP 127.0.0.1), and expect
    # success. Under cabf getcert enforces the rule (BR 7.1.4.3), as the cn:: cases ask.
    "webpki::san::leftmost-wildcard-san": "CN example.com not among its SANs: contradicts "
                                          "webpki::cn::not-in-san (BR 7.1.4.3)",
    "webpki::san::exact-localhost-ip-san": "CN example.com not among its SANs: contradicts "
                                           "webpki::cn::not-in-san (BR 7.1.4.3)",
    "webpki::nc::nc-permits-dns-san-pattern": "CN example.com not among its SANs: contradicts "
                                              "webpki::cn::not-in-san (BR 7.1.4.3)",
}


# --- mapping a case to getcert's options -------------------------------------------------------

# What --purpose checks (the leaf's and the CAs' extendedKeyUsage, OpenSSL purposes
# sslserver/sslclient): a case's extended_key_usage requirement is expressible only when it is
# this purpose's EKU.
PURPOSE = {"SERVER": ("server", "serverAuth"), "CLIENT": ("client", "clientAuth")}


class Plan:
    def __init__(self, case, profile):
        self.case = case
        self.profile = profile
        self.skip = None     # why the case cannot be expressed as getcert options
        self.gaps = []       # case fields getcert has no option for (each makes a skip)
        self.runs = []       # one argument list per invocation; every one must accept


def rfc3339(text):
    """limbo's validation_time (isoformat, +00:00) as getcert's --at (Z)."""
    when = datetime.datetime.fromisoformat(text)
    return when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def plan_case(case, profile, case_dir):
    plan = Plan(case, profile)
    kind = case["validation_kind"]
    if kind not in PURPOSE:
        plan.skip = f"validation_kind {kind!r} has no getcert --purpose"
        return plan
    purpose, purpose_eku = PURPOSE[kind]

    if case.get("signature_algorithms"):
        plan.gaps.append("signature_algorithms %s: getcert has no option to restrict the "
                         "signature algorithms" % case["signature_algorithms"])
    key_usages = case.get("key_usage") or []
    extra_ekus = [e for e in case.get("extended_key_usage") or [] if e != purpose_eku]
    if extra_ekus:
        plan.gaps.append("extended_key_usage %s: getcert's --purpose %s requires %s only"
                         % (extra_ekus, purpose, purpose_eku))

    def write(name, pems):
        path = os.path.join(case_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            for pem in pems:
                f.write(pem.strip() + "\n")
        return path

    chain = write("chain.pem", [case["peer_certificate"]] + list(case["untrusted_intermediates"]))
    roots = write("roots.pem", case["trusted_certs"])
    base = ["show", chain, "--verify", "--ca-file", roots, "--purpose", purpose,
            "--profile", profile, "-o", "json"]
    if case.get("validation_time"):
        base += ["--at", rfc3339(case["validation_time"])]
    if key_usages:
        # limbo's key usages are RFC 5280's names, as --key-usage takes them.
        base += ["--key-usage", ",".join(key_usages)]
    # Without one, limbo means "now"; every certificate of such a case is valid for centuries.

    depth = case.get("max_chain_depth")
    if depth is not None:
        # limbo: the most intermediates between the peer and the trust anchor (a depth of 0
        # allows none; its cases count a self-issued intermediate as the same logical CA, as
        # RFC 5280 6.1.4 (l) does). getcert's --max-depth counts intermediates too, as
        # getcert's --max-depth counts the same way.
        base += ["--max-depth", str(int(depth))]
    if case.get("crls"):
        # CRLs mean the peer's revocation is checked against them; getcert checks every
        # certificate whose issuer has a CRL in the file.
        base += ["--crl-file", write("crls.pem", case["crls"])]

    # Server validation names one expected peer (--host takes a DNS name or an IP). Client
    # validation lists the peer names the certificate must all hold: --host and --email take
    # one each and accept when any given one matches, so every name is its own invocation, and
    # the case is accepted only when every invocation accepts.
    names = []
    if case.get("expected_peer_name"):
        names.append(case["expected_peer_name"])
    names += case.get("expected_peer_names") or []
    option = {"DNS": "--host", "IP": "--host", "RFC822": "--email"}
    for n in names:
        if n["kind"] not in option:
            plan.gaps.append(f"peer name kind {n['kind']!r}: no getcert option")
    if plan.gaps:
        plan.skip = "; ".join(plan.gaps)
        return plan
    if not names:
        plan.runs.append(base)
    for n in names:
        plan.runs.append(base + [option[n["kind"]], n["value"]])
    return plan


# --- running getcert ---------------------------------------------------------------------------

class Answer:
    def __init__(self, verdict, codes=(), reason="", seconds=0.0):
        self.verdict = verdict  # "SUCCESS", "FAILURE" or "ERROR"
        self.codes = list(codes)
        self.reason = reason
        self.seconds = seconds


def one_line(text, limit=300):
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def invoke(binary, args, bound):
    started = time.monotonic()
    try:
        p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=bound,
                           check=False)
    except subprocess.TimeoutExpired:
        return Answer("ERROR", reason=f"killed after {bound} s", seconds=time.monotonic() - started)
    took = time.monotonic() - started
    try:
        doc = json.loads(p.stdout.strip().split("\n")[0]) if p.stdout.strip() else None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        err = doc["error"]
        verdict = "FAILURE" if p.returncode == EXIT_MALFORMED else "ERROR"
        return Answer(verdict, [err.get("code", "?")],
                      f"exit {p.returncode}: {err.get('message', '')}", took)
    v = doc.get("verification") if isinstance(doc, dict) else None
    if not isinstance(v, dict):
        verdict = "FAILURE" if p.returncode == EXIT_MALFORMED else "ERROR"
        return Answer(verdict, reason=f"exit {p.returncode}: {one_line(p.stderr)}", seconds=took)
    codes = [e.get("code", "?") for e in v.get("errors") or []]
    reason = "; ".join(e.get("reason", "") for e in (v.get("errors") or [])[:2])
    if v.get("profile") != args[args.index("--profile") + 1]:
        return Answer("ERROR", codes, f"the report names profile {v.get('profile')!r}", took)
    if p.returncode == EXIT_OK and v.get("ok") is True:
        return Answer("SUCCESS", codes, "", took)
    if p.returncode == EXIT_VERIFY and v.get("ok") is False:
        return Answer("FAILURE", codes, reason, took)
    return Answer("ERROR", codes, f"exit {p.returncode} with ok={v.get('ok')}: {reason}", took)


def judge(binary, plan):
    """The case's answer: SUCCESS only when every invocation accepts."""
    bound = HOSTILE_SECONDS * 3 if hostile(plan.case) else TOOL_TIMEOUT
    answers = [invoke(binary, args, bound) for args in plan.runs]
    for a in answers:
        if hostile(plan.case) and a.seconds > HOSTILE_SECONDS:
            return Answer("ERROR", a.codes, f"took {a.seconds:.1f} s, over the "
                          f"{HOSTILE_SECONDS} s bound for hostile input", a.seconds)
    for a in answers:
        if a.verdict == "ERROR":
            return a
    for a in answers:
        if a.verdict == "FAILURE":
            return a
    return answers[0]


def probe_profiles(binary, work):
    """The profiles this getcert knows, among those the mapping uses."""
    empty = os.path.join(work, "probe.pem")
    open(empty, "w", encoding="utf-8").close()
    known, why = set(), {}
    for profile in sorted(set(NAMESPACE_PROFILE.values()) | {DEFAULT_PROFILE, "rfc5280", "cabf"}):
        p = subprocess.run([binary, "show", empty, "--verify", "--ca-file", empty, "--profile",
                            profile, "-o", "json"], capture_output=True, text=True,
                           timeout=TOOL_TIMEOUT, check=False)
        text = p.stdout + p.stderr
        if p.returncode == 2 and "--profile" in text:
            why[profile] = one_line(text.split("error:", 1)[-1], 160)
        else:
            known.add(profile)
    return known, why


# --- main --------------------------------------------------------------------------------------

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--getcert", required=True, help="the getcert binary")
    parser.add_argument("--limbo", default=os.path.join(here, "limbo.json"))
    parser.add_argument("--work", help="keep each case's files here (default: a temporary dir)")
    parser.add_argument("--jobs", type=int, default=2, help="cases judged at once (default 2)")
    parser.add_argument("--results", help="also write limbo's result format (LimboResult) here")
    parser.add_argument("--substitute-profile", action="append", default=[], metavar="FROM=TO",
                        help="measure with profile TO where the mapping says FROM (for a getcert "
                             "that lacks FROM; never in ctest)")
    parser.add_argument("--only", nargs="*", default=[],
                        help="judge only the cases whose id contains one of these (debugging)")
    parser.add_argument("--verbose", action="store_true", help="print every case's command line")
    args = parser.parse_args()

    if not os.access(args.getcert, os.X_OK):
        print(f"getcert binary {args.getcert} is missing")
        return 1
    with open(args.limbo, encoding="utf-8") as f:
        suite = json.load(f)
    if suite.get("version") != 1:
        print(f"{args.limbo}: limbo schema version {suite.get('version')!r}, this runner reads 1")
        return 1
    cases = suite["testcases"]
    problems = check_conflicts(cases)
    if problems:
        for p in problems:
            print("mapping error: " + p)
        return 1
    substitute = {}
    for s in args.substitute_profile:
        src, _, dst = s.partition("=")
        substitute[src] = dst
    selected = [c for c in cases if not args.only or any(o in c["id"] for o in args.only)]

    tmp = None
    if args.work:
        work = args.work
        os.makedirs(work, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="getcert-limbo-")
        work = tmp.name
    try:
        known, unknown_why = probe_profiles(args.getcert, work)
        plans = []
        for i, case in enumerate(selected):
            profile = profile_for(case)
            profile = substitute.get(profile, profile)
            case_dir = os.path.join(work, "%03d-%s" % (i, re.sub(r"[^A-Za-z0-9.-]+", "_", case["id"])))
            os.makedirs(case_dir, exist_ok=True)
            plan = plan_case(case, profile, case_dir)
            if plan.skip is None and profile not in known:
                plan.skip = (f"this getcert has no profile {profile!r} "
                             f"({unknown_why.get(profile, 'refused')})")
            plans.append(plan)

        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {id(p): pool.submit(judge, args.getcert, p) for p in plans if p.skip is None}
            answers = {k: f.result() for k, f in futures.items()}
        elapsed = time.monotonic() - started
    finally:
        if tmp is not None:
            tmp.cleanup()

    counts = collections.OrderedDict()
    profiles = {}
    results = []
    for plan in plans:
        case = plan.case
        ns = namespace(case)
        c = counts.setdefault(ns, collections.Counter())
        c["total"] += 1
        profiles.setdefault(ns, set()).add(plan.profile)
        if args.verbose:
            for run in plan.runs:
                print(f"# {case['id']}: getcert " + " ".join(run))
        if plan.skip is not None:
            c["skipped"] += 1
            print(f"SKIPPED {case['id']} [{plan.profile}]: {plan.skip}")
            results.append({"id": case["id"], "actual_result": "SKIPPED", "context": plan.skip})
            continue
        a = answers[id(plan)]
        results.append({"id": case["id"],
                         "actual_result": a.verdict if a.verdict != "ERROR" else "FAILURE",
                         "context": ", ".join(a.codes) + (": " + a.reason if a.reason else "")})
        if a.verdict == case["expected_result"]:
            c["right"] += 1
            continue
        if case["id"] in DISPUTED and a.codes == ["cn_not_in_sans"]:
            c["disputed"] += 1
            print(f"DISPUTED {case['id']} [--profile {plan.profile}]: expected "
                  f"{case['expected_result']}, got {a.verdict}: {DISPUTED[case['id']]}")
            continue
        c["wrong"] += 1
        codes = ",".join(a.codes) if a.codes else "-"
        print(f"WRONG {case['id']} [--profile {plan.profile}]: expected {case['expected_result']}, "
              f"got {a.verdict}; codes {codes}; {one_line(a.reason) or 'no error reported'}")

    total = collections.Counter()
    for ns, c in counts.items():
        total.update(c)
        print(f"limbo {ns}: {c['right']} right, {c['wrong']} wrong, {c['skipped']} skipped, "
              f"{c['disputed']} disputed of {c['total']} "
              f"(--profile {', '.join(sorted(profiles[ns]))})")
    print(f"limbo: {total['right']} right, {total['wrong']} wrong, {total['skipped']} skipped, "
          f"{total['disputed']} disputed of {total['total']} ({elapsed:.0f} s, {args.jobs} "
          f"workers, {args.getcert})")
    if substitute:
        print("note: measured with " + ", ".join(f"{k} replaced by {v}" for k, v in substitute.items())
              + " (--substitute-profile): conflicting cases may then share a profile")

    if args.results:
        with open(args.results, "w", encoding="utf-8") as f:
            json.dump({"version": 1, "harness": "getcert", "results": results}, f, indent=1)
    if total["wrong"]:
        return 1
    if total["skipped"]:
        print(f"{SKIP_MARKER}: {total['skipped']} limbo cases cannot be expressed as getcert "
              "options or need a profile this getcert lacks (SKIPPED lines above)")
        return SKIP_CODE
    return 0


if __name__ == "__main__":
    sys.exit(main())
