#!/usr/bin/env python3
"""Prints the longest functions of the Rust sources under the folders given
(default: src/cli), with their lengths in lines from `fn` to the closing
brace, longest first; test modules (`#[cfg(test)] mod`) are left out.

Issue 25 asks that no function in `src/cli` be longer than about 80 lines:
`scripts/fn-lengths.py src/cli` measures it. A small lexer, not a Rust
parser: strings, chars and comments are blanked before braces are counted.

Usage: scripts/fn-lengths.py [-n COUNT] [--over LINES] [FOLDER|FILE ...]
"""
import argparse
import pathlib
import re
import sys

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
CFG_TEST = re.compile(r"#\[cfg\(test\)\]")


def blank(src: str) -> str:
    """`src` with the insides of strings, chars and comments replaced by
    spaces (newlines kept), so braces and `fn` are only code's."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(src, i)) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append('"' + re.sub(r"[^\n]", " ", src[i + 1 : j - 1]) + '"')
            i = j
        elif c == "'" and (m := re.compile(r"'(\\.[^']*|[^\\'])'").match(src, i)):
            out.append(" " * len(m.group(0)))
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path: pathlib.Path):
    """(name, first line, length in lines) of each fn with a body outside test modules."""
    code = blank(path.read_text(encoding="utf-8"))
    line_of = lambda pos: code.count("\n", 0, pos) + 1
    # Byte ranges of `#[cfg(test)] mod x { … }` to skip.
    skip = []
    for m in CFG_TEST.finditer(code):
        mm = re.compile(r"\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{").match(code, m.end())
        if mm:
            skip.append((m.start(), close(code, mm.end() - 1)))
    for m in FN.finditer(code):
        if any(a <= m.start() < b for a, b in skip):
            continue
        # The body opens at the first `{` at depth 0 of ( ) < > before a `;`.
        j, depth = m.end(), 0
        while j < len(code):
            ch = code[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch == ";":
                j = -1
                break
            elif depth == 0 and ch == "{":
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        end = close(code, j)
        yield m.group(1), line_of(m.start()), line_of(end) - line_of(m.start()) + 1


def close(code: str, open_at: int) -> int:
    """The position of the brace closing the one at `open_at`."""
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15, help="how many to print (default 15)")
    ap.add_argument("--over", type=int, help="print only those longer than this, exit 1 if any")
    ap.add_argument("paths", nargs="*", default=["src/cli"])
    a = ap.parse_args()
    files = []
    for p in map(pathlib.Path, a.paths):
        files += sorted(p.rglob("*.rs")) if p.is_dir() else [p]
    rows = sorted(
        ((length, f"{f}:{line}", name) for f in files for name, line, length in functions(f)),
        key=lambda r: (-r[0], r[1]),
    )
    if a.over is not None:
        rows = [r for r in rows if r[0] > a.over]
    else:
        rows = rows[: a.n]
    for length, where, name in rows:
        print(f"{length:5}  {name:<28} {where}")
    return 1 if a.over is not None and rows else 0


if __name__ == "__main__":
    sys.exit(main())
