"""What the docs checks share: the Markdown files they cover, and a small reader of the parts
of Markdown they look at (fenced blocks, code spans, headings and their GitHub anchors, links).
Python 3 standard library only."""

import os
import re
import subprocess
import sys

SKIP_MARKER = "GETCERT-TEST-SKIPPED"
# ctest reports this exit status as skipped (SKIP_RETURN_CODE); skip() is called only when
# nothing failed.
SKIP_CODE = 77


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def doc_files(root):
    """README.md, CONTRIBUTING.md and every docs/*.md, as paths relative to root."""
    files = ["README.md", "CONTRIBUTING.md"]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted("docs/" + f for f in os.listdir(docs) if f.endswith(".md"))
    return [f for f in files if os.path.isfile(os.path.join(root, f))]


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


def blocks(text):
    """Fenced code blocks: [(info string, body, first line number, preceding non-blank line)]."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(2), m.group(3).strip(), i
        prev = ""
        for j in range(i - 1, -1, -1):
            if lines[j].strip():
                prev = lines[j].strip()
                break
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence[0] * len(fence)):
            body.append(lines[i])
            i += 1
        out.append((info, "\n".join(body), start + 1, prev))
        i += 1
    return out


def prose(text):
    """The text outside fenced blocks, line numbers kept (block lines become empty)."""
    lines = text.split("\n")
    keep = []
    inside = None
    for line in lines:
        m = FENCE.match(line)
        if inside is None and m:
            inside = m.group(2)[0] * len(m.group(2))
            keep.append("")
        elif inside is not None:
            if line.strip().startswith(inside):
                inside = None
            keep.append("")
        else:
            keep.append(line)
    return "\n".join(keep)


CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def code_spans(text):
    """[(span text, line number)] of the inline code outside fenced blocks."""
    body = prose(text)
    return [(m.group(2).strip(), body.count("\n", 0, m.start()) + 1) for m in CODE_SPAN.finditer(body)]


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor a file offers: its headings (duplicates numbered as GitHub does)."""
    seen = {}
    out = set()
    for line in prose(text).split("\n"):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = anchor(m.group(2))
        n = seen.get(base, 0)
        out.add(base if n == 0 else "%s-%d" % (base, n))
        seen[base] = n + 1
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def skip(why):
    print("%s: %s" % (SKIP_MARKER, why))
    sys.exit(SKIP_CODE)


def fail(messages, what):
    for m in messages:
        print(m)
    print("%d problem(s): %s" % (len(messages), what))
    sys.exit(1)
