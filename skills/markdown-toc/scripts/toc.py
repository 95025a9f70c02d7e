"""Prints a Markdown table of contents for the document on stdin (see ../SKILL.md)."""

import argparse
import re
import sys
import unicodedata

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def anchor(title, seen):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens,
    a -1, -2, ... suffix for repeats."""
    text = re.sub(r"[`*_]|<[^>]+>", "", title).strip().lower()
    text = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LN")
    slug = text.replace(" ", "-")
    n = seen.get(slug, 0)
    seen[slug] = n + 1
    return slug if n == 0 else f"{slug}-{n}"


def headings(lines):
    fence = None
    for line in lines:
        m = FENCE.match(line)
        if m:
            marker = m.group(1)[0] * 3
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
            continue
        if fence is None:
            h = HEADING.match(line)
            if h:
                yield len(h.group(1)), h.group(2)


def main(argv):
    p = argparse.ArgumentParser(prog="toc.py", description="Markdown table of contents")
    p.add_argument("--max-level", type=int, default=3)
    p.add_argument("--skip-first", action="store_true")
    opts = p.parse_args(argv)
    found = list(headings(sys.stdin.read().splitlines()))
    if opts.skip_first and found:
        found = found[1:]
    if not found:
        print("no headings found", file=sys.stderr)
        return 1
    top = min(level for level, _ in found)
    seen = {}
    for level, title in found:
        slug = anchor(title, seen)
        if level <= opts.max_level:
            print(f"{'  ' * (level - top)}- [{title}](#{slug})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
