#!/usr/bin/env python3
"""Every relative link in README.md, CONTRIBUTING.md and docs/*.md resolves: the file or folder
exists, and a #fragment names a heading of the Markdown file it points to.

Usage: check_links.py [--root DIR]"""

import argparse
import os
import re

import doclib

INLINE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)
HREF = re.compile(r"""<a\s[^>]*href=["']([^"']+)["']""", re.I)


def links(text):
    body = doclib.prose(text)
    body = doclib.CODE_SPAN.sub(lambda m: " " * len(m.group(0)), body)
    for pattern in (INLINE, REFERENCE, HREF):
        for m in pattern.finditer(body):
            yield m.group(1), body.count("\n", 0, m.start()) + 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=doclib.repo_root())
    root = parser.parse_args().root
    problems, checked = [], 0
    anchor_cache = {}
    for rel in doclib.doc_files(root):
        for target, line in links(doclib.read(root, rel)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto: ... are not ours to check offline
            checked += 1
            path, _, fragment = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
            where = "%s:%d: link %s" % (rel, line, target)
            if not os.path.exists(os.path.join(root, dest)):
                problems.append("%s: %s does not exist" % (where, dest))
                continue
            if not fragment:
                continue
            if not dest.endswith(".md"):
                problems.append("%s: a #fragment on a file that is not Markdown" % where)
                continue
            if dest not in anchor_cache:
                anchor_cache[dest] = doclib.anchors(doclib.read(root, dest))
            if fragment not in anchor_cache[dest]:
                problems.append("%s: %s has no heading with the anchor #%s" % (where, dest, fragment))
    if problems:
        doclib.fail(problems, "broken relative links")
    print("%d relative links resolve" % checked)


if __name__ == "__main__":
    main()
