#!/usr/bin/env python3
"""Checks every relative link of README.md and docs/*.md: the file it names exists, and its
#anchor is a heading of that page (or of the same page for a bare #anchor). Run by the
`doc_links` ctest (layering/CMakeLists.txt); prints one line per broken link, "file:line: ...",
and exits 1 if there is any.

Anchors are GitHub's: the heading's text lowercased, inline code marks and links reduced to
their text, every character but letters, digits, '_', '-' and spaces dropped, spaces turned
into '-', and "-1", "-2", … appended to a repeated one (github/cmark-gfm's anchor rules, as
github.com renders them).

Usage: python3 scripts/check-doc-links.py [SOURCE_ROOT]
       python3 scripts/check-doc-links.py --self-test   (the checker on a small tree that breaks
                                                          each rule once, so it cannot pass vacuously)
"""

import re
import sys
import tempfile
import unicodedata
from pathlib import Path

LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LN" or unicodedata.category(ch) == "Mn":
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


def lines_outside_code(text):
    """(line number, line) of every line outside ``` fences."""
    fence = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if not fence:
            yield number, line


def anchors(page):
    seen, found = {}, set()
    for _, line in lines_outside_code(page.read_text()):
        m = re.match(r"(#{1,6}) +(.*?) *#* *$", line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def check(root):
    """The broken links below root, one line each, and how many links were checked."""
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    broken, checked = [], 0
    for page in pages:
        for number, line in lines_outside_code(page.read_text()):
            # Inline code is not a link, even when it looks like one.
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                checked += 1
                path, _, anchor = target.partition("#")
                file = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(root)}:{number}: {target}"
                if not file.exists():
                    broken.append(f"{where}: {path} does not exist")
                elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
                    broken.append(f"{where}: no heading #{anchor} in {file.relative_to(root)}")
    return broken, checked


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "README.md").write_text(
            "# x\n\n## `ropecheck gate`\n\n## Positions (`--pos`)\n\n## Notes\n\n## Notes\n\n"
            "[a](docs/page.md#19-a-scale-σ) [b](#ropecheck-gate) [c](#positions---pos) [d](#notes-1)\n"
            "[e](docs/missing.md) [f](docs/page.md#nowhere) [g](#notes-2) `[h](#in-code)` [i](https://x.org/#y)\n"
            "```\n[j](#in-a-fence)\n```\n")
        (root / "docs" / "page.md").write_text("# Page\n\n## 19. A scale σ\n\n[back](../README.md#notes)\n")
        broken, checked = check(root)
        expected = ["README.md:12: docs/missing.md: docs/missing.md does not exist",
                    "README.md:12: docs/page.md#nowhere: no heading #nowhere in docs/page.md",
                    "README.md:12: #notes-2: no heading #notes-2 in README.md"]
        if broken != expected or checked != 8:
            print(f"self-test failed: {checked} links checked, found {broken}, expected {expected}")
            return 1
    print("self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    broken, checked = check(root)
    for line in broken:
        print(line)
    print(f"{checked} relative links checked, {len(broken)} broken")
    # No link at all would mean the pages were not found or not parsed.
    return 1 if broken or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
