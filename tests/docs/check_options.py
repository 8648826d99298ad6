#!/usr/bin/env python3
"""Every `--option` the docs write exists in the built getcert's `--help`.

The option lists come from running the binary: `getcert --help`, then `--help` of every
subcommand it lists, recursively (nothing here names an option). The docs are read the way a
user would run them:
- a command line in a fenced block, or a code span, that runs `getcert ...` (also after a pipe,
  `&&`, `$(`, or in a YAML `run:`): each `--option` up to the end of that command must be in the
  `--help` of the subcommand it runs (`getcert HOST` runs fetch; `getcert p12 topem` runs
  topem), or a top-level option;
- a code span that starts with an option (`--ca-file FILE`): each `--option` in it must exist in
  some subcommand's `--help`. `--key-password-*` stands for the options starting with that.
Other commands (`cmake --preset`, `openssl verify -attime`, `curl --data-binary`) are not
getcert's and are not checked.

Usage: check_options.py --getcert BINARY [--root DIR]"""

import argparse
import re

import doclib

# A dot joins words only inside a name (`--web.config.file`, exporter-toolkit's spelling that
# `getcert serve` accepts), never at its end (`--force.` ends a sentence).
OPTION = re.compile(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*(?:\.[a-z0-9][a-z0-9-]*)*)(\*?)")
SECTION = re.compile(r"^(\w[\w ]*):\s*$")


def parse_help(text):
    """(options, subcommands) of one --help page."""
    options, subs, section = set(), [], None
    for line in text.split("\n"):
        m = SECTION.match(line)
        if m:
            section = m.group(1).lower()
            continue
        if not line.startswith("  ") or not line.strip():
            continue
        first = line.split()[0]
        if section and section.startswith("subcommand"):
            subs.append(first)
        elif line.lstrip().startswith("-"):
            for name in first.split(","):
                if name.startswith("--"):
                    options.add(name.split("=")[0])
    return options, subs


def collect(getcert):
    """{("p12", "topem"): {options}, ...}; () is the top level."""
    helps = {}

    def walk(path):
        r = doclib.run([getcert] + list(path) + ["--help"])
        if r.returncode != 0:
            raise SystemExit("%s --help failed (%d): %s" % (" ".join((getcert,) + path), r.returncode, r.stderr))
        options, subs = parse_help(r.stdout)
        helps[path] = options
        for sub in subs:
            walk(path + (sub,))

    walk(())
    return helps


SEGMENT_END = re.compile(r"\|\||&&|[|;)]|\$\(|`")
INVOCATION = re.compile(r"(?:^|[\s|;&(`\"'])getcert(?=\s|$)")


def invocations(text):
    """The argument text of each `getcert ...` command in text."""
    for m in INVOCATION.finditer(text):
        rest = text[m.end():]
        end = SEGMENT_END.search(rest)
        yield rest[: end.start()] if end else rest


def command_path(args, helps):
    words = args.split()
    path = ()
    i = 0
    while i < len(words) and re.fullmatch(r"-v+|--verbose|-q|--quiet", words[i]):
        i += 1
    if i < len(words) and words[i] in ("-h", "--help", "--version"):
        return ()
    while i < len(words) and path + (words[i],) in helps:
        path += (words[i],)
        i += 1
    return path or ("fetch",)


def known(option, star, allowed):
    if star or option.endswith("-"):
        return any(o.startswith(option) for o in allowed)
    return option in allowed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--getcert", required=True)
    parser.add_argument("--root", default=doclib.repo_root())
    args = parser.parse_args()
    helps = collect(args.getcert)
    if ("fetch",) not in helps:
        raise SystemExit("getcert --help lists no fetch subcommand: cannot tell what `getcert HOST` runs")
    everything = set().union(*helps.values())
    problems, checked = [], 0

    def check_invocation(rel, line, argtext):
        nonlocal checked
        path = command_path(argtext, helps)
        # Options of the enclosing commands (getcert's -v, -q) are accepted after a subcommand.
        allowed = set().union(*(helps[path[:n]] for n in range(len(path) + 1)))
        for m in OPTION.finditer(argtext):
            checked += 1
            if not known(m.group(1), m.group(2), allowed):
                problems.append("%s:%d: `getcert %s` has no option %s%s (see `getcert %s --help`)"
                                % (rel, line, " ".join(path), m.group(1), m.group(2), " ".join(path)))

    for rel in doclib.doc_files(args.root):
        text = doclib.read(args.root, rel)
        for info, body, start, _ in doclib.blocks(text):
            if info.split()[:1] and info.split()[0] in ("cpp", "c++", "cmake", "json", "text"):
                continue
            joined = body.replace("\\\n", " ")
            for offset, line in enumerate(joined.split("\n")):
                for argtext in invocations(line):
                    check_invocation(rel, start + 1 + offset, argtext)
        for span, line in doclib.code_spans(text):
            if span.startswith("getcert ") or span == "getcert":
                for argtext in invocations(span):
                    check_invocation(rel, line, argtext)
            elif span.startswith("-"):
                for m in OPTION.finditer(span):
                    checked += 1
                    if not known(m.group(1), m.group(2), everything):
                        problems.append("%s:%d: %s%s is in no `getcert ... --help`" % (rel, line, m.group(1), m.group(2)))
    if problems:
        doclib.fail(problems, "options the docs name but getcert does not have")
    print("%d option mentions checked against %d --help pages" % (checked, len(helps)))


if __name__ == "__main__":
    main()
