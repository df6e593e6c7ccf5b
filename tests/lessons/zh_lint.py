#!/usr/bin/python3
"""The mechanical rules of lessons/zh/STYLE.md, checked on every string of lessons/zh (issue 37,
point 12). Prose only: formulas (keys ending in `formula`), code lines (indented), `code spans` and
math inside ASCII brackets are left alone. Prints each finding with its file and key; exit 1 on any.

  python3 tests/lessons/zh_lint.py ROOT
"""
import glob
import os
import re
import sys
import tomllib

CJK_PUNCT = "。，、；：？！（）「」『』《》【】"
HAN = "\u3400-\u4dbf\u4e00-\u9fff"


def strings(table, prefix=""):
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            yield from strings(v, key)
        elif isinstance(v, str):
            yield key, v
        elif isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, str):
                    yield f"{key}[{i}]", x


def prose(text):
    """The text without code lines, code spans and placeholders (which may hold Chinese)."""
    lines = [line for line in text.split("\n") if not line.startswith(" ")]
    text = "\n".join(lines)
    text = re.sub(r"`[^`]*`", "`c`", text)
    return re.sub(r"\{[A-Za-z_0-9]+\}", "\x00", text)


def without_math(text):
    """ASCII-bracketed groups ((a, b), max(x, y), [i, j)) are math or code: their commas are theirs."""
    for _ in range(4):
        text = re.sub(r"[(\[][^()\[\]]*[)\]]", "M", text)
    return text


def findings(text):
    s = prose(text)
    for m in re.finditer(rf" [{CJK_PUNCT}]|[{CJK_PUNCT}] ", s):
        yield "space beside CJK punctuation", m.group()
    for m in re.finditer(rf"[{HAN}][,;:?!.](?=\s|$|[{HAN}])", without_math(s)):
        yield "ASCII punctuation in a Chinese sentence", m.group()
    for m in re.finditer(r"(?<![A-Za-z])\(([^()]*)\)", s):  # P(写出 x) is a function's argument
        inner = m.group(1)
        if re.search(f"[{HAN}]", inner) and not re.search(r"[=+−×/·√^_0-9\x00]|, ", inner) and len(inner) > 1:
            yield "half-width parentheses around Chinese text (use （…）)", m.group()
    for m in re.finditer(rf"[{HAN}][A-Za-z0-9]|[A-Za-z0-9][{HAN}]", s):
        yield "no space between Chinese and Latin letters or digits", m.group()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = 0
    for path in sorted(glob.glob(os.path.join(root, "lessons/zh/**/*.toml"), recursive=True)):
        with open(path, "rb") as f:
            table = tomllib.load(f)
        for key, value in strings(table):
            if key.split(".")[-1].endswith("formula") or key.startswith("glossary."):
                continue
            for rule, where in findings(value):
                bad += 1
                print(f"{os.path.relpath(path, root)}: {key}: {rule}: {where!r}")
    print(f"zh_lint: {bad} finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
