#!/usr/bin/env python3
"""docs/exit-codes.md documents exactly the exit codes cli/exit_codes.hpp defines, each with
the meaning the header gives it.

The header's `enum ExitCode` is parsed (name, number, comment); the table after the
`<!-- exit-codes -->` marker is parsed (number, meaning). Every code must be in both, once, and
each documented meaning must share a word with the header's name or comment for that number
(so two swapped rows fail too).

Usage: check_exit_codes.py [--root DIR]"""

import argparse
import re

import doclib

ENUM = re.compile(r"enum\s+ExitCode\b[^{]*\{(.*?)\};", re.S)
ENTRY = re.compile(r"^\s*(kExit\w+)\s*=\s*(\d+)\s*,?\s*(?://\s*(.*))?$", re.M)
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(.*?)\s*\|\s*$")
STOP = {"with", "that", "this", "from", "file", "also", "when", "exit", "code", "getcert", "said",
        "please", "input", "what", "claims", "given", "nothing", "than"}


def words(text):
    split = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)  # kExitWrongPassword -> Wrong Password
    return {w[:6] for w in re.findall(r"[a-z]{2,}", split.lower()) if w not in STOP}


def header_codes(text):
    enum = ENUM.search(text)
    if not enum:
        return None
    return [(int(n), name, comment or "") for name, n, comment in ENTRY.findall(enum.group(1))]


def doc_codes(text):
    lines = text.split("\n")
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == "<!-- exit-codes -->")
    except StopIteration:
        return None
    rows = []
    for line in lines[start + 1:]:
        if not line.strip().startswith("|"):
            if rows:
                break
            continue
        m = ROW.match(line.strip())
        if m:
            rows.append((int(m.group(1)), m.group(2)))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=doclib.repo_root())
    root = parser.parse_args().root
    header = header_codes(doclib.read(root, "cli/exit_codes.hpp"))
    documented = doc_codes(doclib.read(root, "docs/exit-codes.md"))
    problems = []
    if not header:
        doclib.fail(["cli/exit_codes.hpp: no `enum ExitCode { kExit... = N, }` found"], "cannot parse")
    if not documented:
        doclib.fail(["docs/exit-codes.md: no table after <!-- exit-codes -->"], "cannot parse")
    defined = {}
    for n, name, comment in header:
        if n in defined:
            problems.append("cli/exit_codes.hpp: %d is both %s and %s" % (n, defined[n][0], name))
        defined[n] = (name, comment)
    seen = set()
    for n, meaning in documented:
        if n in seen:
            problems.append("docs/exit-codes.md: %d is documented twice" % n)
        seen.add(n)
        if n not in defined:
            problems.append("docs/exit-codes.md: %d is documented but cli/exit_codes.hpp defines no such code" % n)
            continue
        name, comment = defined[n]
        if not words(meaning) & words(name + " " + comment):
            problems.append("docs/exit-codes.md: %d reads %r, but cli/exit_codes.hpp defines it as %s (%s)"
                            % (n, meaning, name, comment or "no comment"))
    for n, (name, _) in sorted(defined.items()):
        if n not in seen:
            problems.append("docs/exit-codes.md: %d (%s) is not documented" % (n, name))
    if problems:
        doclib.fail(problems, "docs/exit-codes.md and cli/exit_codes.hpp disagree")
    print("%d exit codes documented as cli/exit_codes.hpp defines them" % len(defined))


if __name__ == "__main__":
    main()
