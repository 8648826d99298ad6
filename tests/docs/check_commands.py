#!/usr/bin/env python3
"""README's "The two commands" are the ones the scripts run and accept.

- the section has exactly two ```sh blocks of one line each: the first command (the main job)
  and the second (the whole suite);
- .ci/run runs the second word for word, at the start of a line (its output may be piped on);
- every `tools/bootstrap MODE` written in README, CONTRIBUTING or docs/ (in a code block, or a
  code span that starts with it) names a mode tools/bootstrap accepts (its Usage line);
- the first command names a mode, and not dev or --install-only: it is the main job alone.

Usage: check_commands.py [--root DIR]"""

import argparse
import os
import re

import doclib

SECTION = "## The two commands"
BOOTSTRAP = re.compile(r"(?:^|[\s;&|(`])tools/bootstrap(?:[ \t]+([^\s;&|)`]+))?")


def section(text, heading):
    start = text.find("\n" + heading + "\n")
    if start < 0:
        return None
    rest = text[start + len(heading) + 2:]
    end = re.search(r"^## ", rest, re.M)
    return rest[: end.start()] if end else rest


def bootstrap_modes(root):
    with open(os.path.join(root, "tools", "bootstrap"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"# Usage: tools/bootstrap \[(.*)\]", line)
            if m:
                return {w.strip() for w in m.group(1).split("|")}
    raise SystemExit("tools/bootstrap has no '# Usage: tools/bootstrap [...]' line")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=doclib.repo_root())
    root = parser.parse_args().root
    problems = []

    readme = doclib.read(root, "README.md")
    body = section(readme, SECTION)
    if body is None:
        doclib.fail(["README.md: no '%s' section" % SECTION], "README's two commands")
    commands = [b for info, b, _, _ in doclib.blocks(body) if info.split()[:1] == ["sh"]]
    if len(commands) != 2 or any(len(c.strip().split("\n")) != 1 for c in commands):
        doclib.fail(["README.md: '%s' must hold two ```sh blocks of one line each, found %r"
                     % (SECTION, commands)], "README's two commands")
    first, second = (c.strip() for c in commands)

    ci = doclib.read(root, ".ci/run")
    if not any(re.match(re.escape(second) + r"(\s|$)", line.strip()) for line in ci.split("\n")):
        problems.append(".ci/run: does not run README's second command word for word: %s" % second)
    if first == second:
        problems.append("README.md: the two commands are the same: %s" % first)

    modes = bootstrap_modes(root)
    checked = 0
    for rel in doclib.doc_files(root):
        text = doclib.read(root, rel)
        pieces = [(b, start) for info, b, start, _ in doclib.blocks(text)
                  if info.split()[:1] in ([], ["sh"], ["bash"], ["console"])]
        # A span is a command when it starts with one (not `docs: ... tools/bootstrap run`).
        pieces += [(span, line) for span, line in doclib.code_spans(text)
                   if span.startswith("tools/bootstrap")]
        for piece, line in pieces:
            for m in BOOTSTRAP.finditer(piece):
                mode = m.group(1)
                # `tools/bootstrap MODE`: a placeholder, not a mode.
                if mode is None or mode in ("&&", "||") or mode.isupper():
                    continue
                checked += 1
                if mode not in modes:
                    problems.append("%s:%d: tools/bootstrap has no mode %s (its modes: %s)"
                                    % (rel, line, mode, ", ".join(sorted(modes))))
    m = BOOTSTRAP.search(first)
    if not m or not m.group(1) or m.group(1) not in modes or m.group(1) in ("dev", "--install-only"):
        problems.append("README.md: the first command must build the main job alone "
                        "(a tools/bootstrap mode other than dev): %s" % first)
    if problems:
        doclib.fail(problems, "README's commands and the scripts that run them disagree")
    print("README's two commands checked against .ci/run; %d tools/bootstrap modes checked" % checked)


if __name__ == "__main__":
    main()
