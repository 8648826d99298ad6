#!/usr/bin/env python3
"""README's runnable recipes run, and print what README shows.

A recipe is runnable when its ```sh block is preceded by `<!-- runnable -->`, and every ```sh
block under "## Recipes" must be. Options inside the comment: `exit=N` when the block ends with
that status, `jks` when it needs keystore.jks. Each runs in bash on the stage tools/demo uses
(tools/sandbox.bash: a temporary folder holding ca.pem, fullchain.pem, key.pem, bundle.p12,
endpoints.txt and, with `jks`, keystore.jks, and a real `openssl s_server` on a free loopback
port), with the built getcert first on PATH. README writes
that server as `localhost:8443`; the block runs against its real port.

The ```text block right after a recipe is its output (stdout and stderr as a terminal shows
them). Output changes from run to run in its ports, durations, dates, day counts and
fingerprints, so both are compared by shape: those (and every number of three digits or more,
or with a fraction) become placeholders, runs of spaces one space, and the lines must be the
same (in any order: stderr and stdout interleave differently on a pipe). Small counts and exit
statuses ("2 valid", "exit status 6") are compared as they are. A line `…` in the
README output stands for lines left out; the others must still all be there.

Usage: check_recipes.py --build BUILD_DIR [--root DIR] [--only SUBSTRING] [--print]
--print shows each recipe's real output instead of comparing it (to write or refresh README)."""

import argparse
import collections
import os
import re
import shutil
import tempfile

import doclib

MARKER = re.compile(r"^<!--\s*runnable\b(.*?)-->$")

SHAPES = [
    (re.compile(r"/tmp/tmp\.\w+"), "<tmp>"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?"), "<time>"),
    (re.compile(r"\b(?:[0-9A-Fa-f]{2}:){3,}[0-9A-Fa-f]{2}\b"), "<hex>"),
    (re.compile(r"\b[0-9A-Fa-f]{16,}\b"), "<hex>"),
    (re.compile(r"(?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{20,}={0,2}"), "<b64>"),
    (re.compile(r"\b\d+ days?\b"), "<n> days"),
    (re.compile(r"\d+\.\d+|\d{3,}"), "<n>"),
    (re.compile(r"\s+"), " "),
]


def shape(line):
    for pattern, placeholder in SHAPES:
        line = pattern.sub(placeholder, line)
    return line.strip()


def unmarked(text):
    """Line numbers of ```sh blocks under "## Recipes" that are not marked runnable: README says
    every shell block there runs."""
    lines = text.split("\n")
    start = next((i + 1 for i, l in enumerate(lines) if l.strip() == "## Recipes"), None)
    if start is None:
        return []
    return [line for info, _, line, prev in doclib.blocks(text)
            if line > start and info.split()[:1] == ["sh"] and not MARKER.match(prev)]


def recipes(text):
    """[(line, options, script, expected output or None)] for each runnable block."""
    found = []
    all_blocks = doclib.blocks(text)
    lines = text.split("\n")
    for i, (info, body, start, prev) in enumerate(all_blocks):
        m = MARKER.match(prev)
        if not m:
            continue
        if info.split()[:1] != ["sh"]:
            raise SystemExit("README.md:%d: <!-- runnable --> must precede a ```sh block" % start)
        options = dict(o.split("=", 1) if "=" in o else (o, "1") for o in m.group(1).split())
        expected = None
        if i + 1 < len(all_blocks):
            n_info, n_body, n_start, _ = all_blocks[i + 1]
            end = start + body.count("\n") + 2  # the closing fence's line number
            between = lines[end:n_start - 1]
            if n_info == "text" and not any(l.strip() for l in between):
                expected = n_body
        found.append((start, options, body, expected))
    return found


def compare(expected, actual):
    want = [shape(l) for l in expected.split("\n") if l.strip()]
    got = [shape(l) for l in actual.split("\n") if l.strip()]
    elided = "…" in want
    want_count = collections.Counter(l for l in want if l != "…")
    got_count = collections.Counter(got)
    missing = want_count - got_count
    extra = collections.Counter() if elided else got_count - want_count
    return missing, extra


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--root", default=doclib.repo_root())
    parser.add_argument("--only", default="")
    parser.add_argument("--print", action="store_true")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    readme = doclib.read(args.root, "README.md")
    found = recipes(readme)
    problems = ["README.md:%d: a ```sh recipe without <!-- runnable --> (mark it, or use another "
                "language tag for a block that cannot run here)" % line for line in unmarked(readme)]
    if not found:
        doclib.fail(["README.md has no <!-- runnable --> recipe"], "nothing to run")
    if shutil.which("openssl") is None:
        doclib.skip("openssl is not installed")
    ran, skipped = 0, []
    bindir = tempfile.mkdtemp(prefix="getcert-recipes-")
    try:
        os.symlink(os.path.join(build, "cli", "getcert"), os.path.join(bindir, "getcert"))
        for line, options, body, expected in found:
            if args.only not in body:
                continue
            where = "README.md:%d" % line
            if expected is None and not args.print:
                problems.append("%s: a runnable recipe needs its output in a ```text block right after it" % where)
                continue
            if "jks" in options and shutil.which("keytool") is None:
                skipped.append("%s (keytool is not installed)" % where)
                continue
            script = "\n".join([
                "set -u",
                'source "%s/tools/sandbox.bash"' % args.root,
                'sandbox_start "%s" || exit 97' % build,
                "sandbox_files || exit 98",
                'cd "$work"',
                'export PATH="%s:$PATH"' % bindir,
                "exec 2>&1",
                "(",
                body.replace("localhost:8443", "localhost:$port"),
                ")",
            ])
            env = dict(os.environ, SANDBOX_JKS="1" if "jks" in options else "0")
            result = doclib.run(["bash", "-c", script], env=env, timeout=120)
            ran += 1
            output = result.stdout + result.stderr
            if args.print:
                print("== %s (exit %d)\n%s" % (where, result.returncode, output))
                continue
            want_exit = int(options.get("exit", "0"))
            if result.returncode != want_exit:
                problems.append("%s: exit %d, README says %d; output:\n%s" % (where, result.returncode, want_exit, output))
                continue
            missing, extra = compare(expected, output)
            if missing or extra:
                detail = ["  README shows, the run did not print: %r" % l for l in missing.elements()]
                detail += ["  the run printed, README does not show: %r" % l for l in extra.elements()]
                problems.append("%s: the output's shape differs from README's\n%s\n  output was:\n%s"
                                % (where, "\n".join(detail), output))
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    if problems:
        doclib.fail(problems, "README recipes that do not do what README shows")
    if args.print:
        return
    if skipped:
        doclib.skip("%d recipe(s) could not run here: %s" % (len(skipped), "; ".join(skipped)))
    print("%d README recipes ran and printed what README shows" % ran)


if __name__ == "__main__":
    main()
