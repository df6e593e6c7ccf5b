#!/usr/bin/env python3
"""Every lesson key the C++ code asks for exists in lessons/ (issue 25, point 3).

Reads every .cpp/.hpp under app/ and lib/attn/ and finds the calls of the lessons lookup
(lib/attn/io/lessons.hpp: `L.text(key, vars)`, `L.raw(key)`, `L.has(key)`, on any object named L,
L_, en_ or ctx.L()). The key argument is read as C++ and resolved as far as it can be:
  - a string literal is a key that must exist:              L.raw("label.buggy")
  - a ternary gives each branch:                            L.text(c ? "a.x" : "a.y")
  - a concatenation of literals and expressions is a
    pattern, the expressions standing for any text:         L.text("step." + id + ".note")  ->  step.*.note
  - fmt::format("a.{}.b", ...) is a pattern too:            a.*.b
  - a key made elsewhere (a variable alone) is counted and left to the runtime linter
    (tests/test_lessons.cpp)
A key, or a pattern that no key matches, missing from lessons/en fails; missing from
lessons/zh is a WARN line (the Chinese issue makes it strict), except for course.path.* (data, not
text: lessons/en/course.toml's path is the same in every language).

Run as: lesson_keys.py SOURCE_DIR
"""
import pathlib
import re
import sys
import tomllib

# Keys of data the same in every language, kept in lessons/en only (the course's path).
DATA_PREFIX = "course.path."

RECEIVER = re.compile(r"(?<![A-Za-z0-9_])(?:L|L_|en_|ctx\.L\(\)|lessons\(\))\s*\.\s*(text|raw|has)\s*\(")


def load_keys(folder: pathlib.Path) -> set[str]:
    keys: set[str] = set()

    def walk(table: dict, prefix: str) -> None:
        for k, v in table.items():
            key = f"{prefix}.{k}" if prefix else k
            if key == "format_version":
                continue
            if isinstance(v, dict):
                walk(v, key)
            else:
                keys.add(key)

    for f in sorted(folder.rglob("*.toml")):
        with open(f, "rb") as fh:
            walk(tomllib.load(fh), "")
    return keys


def strip_comments(src: str) -> str:
    """C++ source with // and /* */ comments blanked (string and char literals kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == 'R' and src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', src[i:])
            end = src.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(src[i:j])
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def first_argument(src: str, start: int) -> str:
    """The text of the first argument of the call whose '(' is just before `start`."""
    depth, i, n = 0, start, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return src[start:i]
            depth -= 1
        elif c == "," and depth == 0:
            return src[start:i]
        i += 1
    return src[start:]


def split_top(expr: str, seps: str) -> list[tuple[str, str]]:
    """expr split at the top-level characters in `seps`: [(piece, separator before it)]."""
    parts, depth, cur, i, before = [], 0, [], 0, ""
    while i < len(expr):
        c = expr[i]
        if c in "\"'":
            j = i + 1
            while j < len(expr) and expr[j] != c:
                j += 2 if expr[j] == "\\" else 1
            cur.append(expr[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if depth == 0 and c in seps and not (c == ":" and expr[i:i + 2] == "::") and not (
                c == ":" and i > 0 and expr[i - 1] == ":"):
            parts.append(("".join(cur), before))
            before, cur = c, []
        else:
            cur.append(c)
        i += 1
    parts.append(("".join(cur), before))
    return parts


LITERAL = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
STRING_OF = re.compile(r'^std::string\s*\(\s*("(?:[^"\\]|\\.)*")\s*\)$')
FORMAT = re.compile(r'^fmt::format\s*\(\s*("(?:[^"\\]|\\.)*")')


def strip_parens(e: str) -> str:
    e = e.strip()
    while e.startswith("(") and e.endswith(")"):
        depth = 0
        for i, c in enumerate(e):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(e) - 1:
                return e
        e = e[1:-1].strip()
    return e


def resolve(expr: str) -> list[tuple[str, str]] | None:
    """The keys an expression may give: [("key", text)] or [("pattern", regex)]; None when unknown."""
    expr = strip_parens(expr)
    # cond ? a : b  (a top-level '?' splits off the condition, then ':' the branches)
    q = split_top(expr, "?")
    if len(q) == 2:
        branches = split_top(q[1][0], ":")
        if len(branches) == 2:
            out = []
            for b, _ in branches:
                r = resolve(b)
                if r is None:
                    return None
                out += r
            return out
    pieces = [p for p, _ in split_top(expr, "+")]
    regex, literal_chars, exact = "", 0, True
    for p in pieces:
        p = strip_parens(p)
        m = LITERAL.match(p) or STRING_OF.match(p)
        if m:
            text = m.group(1)
            text = text[1:-1] if text.startswith('"') else text
            regex += re.escape(text)
            literal_chars += len(text)
            continue
        m = FORMAT.match(p)
        if m:
            text = m.group(1)[1:-1]
            regex += ".+".join(re.escape(s) for s in re.split(r"\{[^}]*\}", text))
            literal_chars += len(text)
            exact = False
            continue
        sub = resolve(p) if len(split_top(p, "?")) == 2 else None
        if sub and all(kind == "key" for kind, _ in sub):
            regex += "(?:" + "|".join(re.escape(k) for _, k in sub) + ")"
            literal_chars += 1
            exact = False
            continue
        regex += ".+"
        exact = False
    if literal_chars == 0:
        return None
    if exact:
        return [("key", re.sub(r"\\(.)", r"\1", regex))]
    return [("pattern", regex)]


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    en, zh = load_keys(root / "lessons" / "en"), load_keys(root / "lessons" / "zh")
    if len(en) < 100:
        print(f"only {len(en)} keys in {root}/lessons/en: is SOURCE_DIR right?")
        return 1
    failures, warnings, exact, patterns, unknown = [], [], 0, 0, 0
    files = sorted(p for d in ("app", "lib/attn") for p in (root / d).rglob("*") if p.suffix in (".cpp", ".hpp"))
    for f in files:
        src = strip_comments(f.read_text(encoding="utf-8"))
        for m in RECEIVER.finditer(src):
            arg = first_argument(src, m.end())
            line = src.count("\n", 0, m.start()) + 1
            where = f"{f.relative_to(root)}:{line}: {m.group(0)}{' '.join(arg.split())})"
            found = resolve(arg)
            if found is None:
                unknown += 1
                continue
            for kind, k in found:
                if kind == "key":
                    exact += 1
                    if k not in en:
                        failures.append(f"{where}: no key '{k}' in lessons/en")
                    elif k not in zh and not k.startswith(DATA_PREFIX):
                        warnings.append(f"{where}: no key '{k}' in lessons/zh (English is shown)")
                else:
                    patterns += 1
                    rx = re.compile(k)
                    if not any(rx.fullmatch(key) for key in en):
                        failures.append(f"{where}: no key of lessons/en matches {k}")
                    elif not any(rx.fullmatch(key) for key in zh) and not k.startswith(re.escape(DATA_PREFIX)):
                        warnings.append(f"{where}: no key of lessons/zh matches {k}")
    for w in warnings:
        print("WARN:", w)
    for e in failures:
        print("FAIL:", e)
    print(f"{exact} literal keys and {patterns} key patterns checked in {len(files)} files "
          f"({unknown} lookups of keys made elsewhere left to the runtime linter); "
          f"{len(failures)} missing in English, {len(warnings)} missing in Chinese")
    if exact < 200:
        print("FAIL: fewer than 200 literal keys found: the lookup calls were not recognised")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
