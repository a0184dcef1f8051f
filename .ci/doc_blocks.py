#!/usr/bin/env python3
"""The command lines of the documentation, as CI runs them.

Every fenced block (```) of README.md and doc/install.md carries a marker on
the line before it (blank lines between are allowed):

    <!-- ci: NAME -->                 CI runs the block (check NAME in .ci/run)
    <!-- ci: not run: REASON -->      CI does not, for the reason given

so that no command a user copies can drift from what works unseen.

    doc_blocks.py check FILE...       every block marked; prints the list
    doc_blocks.py get FILE NAME       the block marked 'ci: NAME', verbatim
"""
import re
import sys

MARK = re.compile(r"^<!--\s*ci:\s*(.*?)\s*-->\s*$")


def blocks(path):
    """(line number, marker text or None, language, body) per fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, lang, indent = i, m.group(2), m.group(1)
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARK.match(lines[k].strip()) if k >= 0 else None
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = "\n".join(l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j])
        out.append((start + 1, mark.group(1) if mark else None, lang, body + "\n"))
        i = j + 1
    return out


def main(argv):
    if len(argv) >= 2 and argv[0] == "check":
        bad = 0
        for path in argv[1:]:
            for line, mark, lang, _ in blocks(path):
                if mark is None:
                    print("%s:%d: a ```%s block without a '<!-- ci: ... -->' marker" % (path, line, lang))
                    bad += 1
                elif mark.startswith("not run:"):
                    print("%s:%d: not run in CI (%s)" % (path, line, mark[len("not run:"):].strip()))
                else:
                    print("%s:%d: run in CI as '%s'" % (path, line, mark))
        return 1 if bad else 0
    if len(argv) == 3 and argv[0] == "get":
        found = [b for b in blocks(argv[1]) if b[1] == argv[2]]
        if len(found) != 1:
            sys.stderr.write("%s: %d blocks marked 'ci: %s'\n" % (argv[1], len(found), argv[2]))
            return 1
        sys.stdout.write(found[0][3])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
