#!/usr/bin/env python3
"""docs/cli.md is exactly what the built getcert generates from its own option definitions
(cli/docgen.cpp), so the committed option reference cannot drift from --help.

Usage: check_cli_md.py --getcert BINARY [--root DIR]"""

import argparse
import difflib

import doclib


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--getcert", required=True)
    parser.add_argument("--root", default=doclib.repo_root())
    args = parser.parse_args()
    r = doclib.run([args.getcert, "--generate-markdown"])
    if r.returncode != 0 or not r.stdout.startswith("# "):
        raise SystemExit("getcert --generate-markdown failed (%d): %s" % (r.returncode, r.stderr))
    try:
        committed = doclib.read(args.root, "docs/cli.md")
    except FileNotFoundError:
        committed = ""
    if committed == r.stdout:
        print("docs/cli.md is the generated option reference")
        return
    diff = difflib.unified_diff(committed.splitlines(True), r.stdout.splitlines(True),
                                "docs/cli.md (committed)", "docs/cli.md (generated)")
    print("".join(diff))
    doclib.fail(["docs/cli.md differs from what getcert's option definitions generate"],
                "regenerate it with tools/gen-docs (or: cmake --build build/dev --target gen-docs) "
                "and commit it")


if __name__ == "__main__":
    main()
