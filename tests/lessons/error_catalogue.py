#!/usr/bin/env python3
"""Every error and warning message the C++ code writes has a template in lessons/en/errors.toml
(issue 37, point 3), so that a translation can say it (app/cli_text.cpp, translate_message).

Reads every .cpp/.hpp under app/ and lib/attn/ and finds the messages: the argument of each
`throw X(...)` (the second one of `argument_error({...}, message)`) and of each print_error(...) and
print_warning(...) call. The message expression is read as lesson_keys.py reads a key: string
literals are the message's text; fmt::format's {} and any other expression (a variable, a call, a
number) stand for a piece of text the template must leave to a {name} placeholder. A message made
elsewhere (a variable alone, or a call) cannot be read here and is counted, not checked.

A message that no template matches fails: add its template to lessons/en/errors*.toml and its
translation to lessons/zh (the test "a translated lesson file has every key of its English file").

Run as: error_catalogue.py SOURCE_DIR
"""
import importlib.util
import pathlib
import re
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("lesson_keys", HERE / "lesson_keys.py")
lk = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lk)

HOLE = "\x01"  # a piece the code fills in at run time
THROW = re.compile(r"(?<![A-Za-z0-9_])throw\s+([A-Za-z_][A-Za-z0-9_:]*)\s*\(")
PRINT = re.compile(r"(?<![A-Za-z0-9_])(print_error|print_warning)\s*\(")
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}


def unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), s)


def argument(src: str, start: int, index: int) -> str:
    """The text of argument `index` (0 or 1) of the call whose '(' is just before `start`."""
    first = lk.first_argument(src, start)
    if index == 0:
        return first
    return lk.first_argument(src, start + len(first) + 1)


def join_literals(expr: str) -> str:
    """expr with adjacent string literals ("a " "b", which C++ joins) written as one literal."""
    out, i, n = [], 0, len(expr)  # tokens: a literal is one, any other character one each
    while i < n:
        c = expr[i]
        if c not in "\"'":
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < n and expr[j] != c:
            j += 2 if expr[j] == "\\" else 1
        token, i = expr[i:j + 1], j + 1
        k = len(out)
        while k > 0 and out[k - 1].isspace():
            k -= 1
        if c == '"' and k > 0 and out[k - 1].startswith('"') and len(out[k - 1]) > 1:
            out[k - 1:] = [out[k - 1][:-1] + token[1:]]
        else:
            out.append(token)
    return "".join(out)


def fmt_sample(fmt: str) -> str:
    """fmt::format's text with a HOLE for each replacement field ({{ and }} are braces)."""
    out, i = "", 0
    while i < len(fmt):
        c = fmt[i]
        if c in "{}" and fmt[i + 1:i + 2] == c:
            out, i = out + c, i + 2
        elif c == "{" and "}" in fmt[i:]:
            out, i = out + HOLE, fmt.index("}", i) + 1
        else:
            out, i = out + c, i + 1
    return out


def samples(expr: str) -> list[str] | None:
    """The texts an expression may give, HOLE where the code puts a value; None when unknown."""
    expr = lk.strip_parens(join_literals(expr))
    q = lk.split_top(expr, "?")
    if len(q) == 2:
        branches = lk.split_top(q[1][0], ":")
        if len(branches) == 2:
            out = []
            for b, _ in branches:
                r = samples(b)
                out += r if r is not None else [HOLE]
            return out
    texts, literal = [""], False
    for p, _ in lk.split_top(expr, "+"):
        p = lk.strip_parens(p)
        m = lk.LITERAL.match(p) or lk.STRING_OF.match(p)
        f = lk.FORMAT.match(p)
        if m:
            text = m.group(1)
            piece = [unescape(text[1:-1] if text.startswith('"') else text)]
            literal = True
        elif f:
            piece = [fmt_sample(unescape(f.group(1)[1:-1]))]
            literal = True
        elif len(lk.split_top(p, "?")) == 2 and samples(p) is not None:
            piece = samples(p)
            literal = True
        else:
            piece = [HOLE]
        texts = [t + x for t in texts for x in piece]
    if not literal:
        return None
    return [re.sub(HOLE + "+", HOLE, t) for t in texts]


def template_regex(tmpl: str) -> re.Pattern:
    """A template as a regex, read as app/cli_text.cpp reads it: {{ and }} are braces, {name} any text."""
    rx, i = "", 0
    while i < len(tmpl):
        c = tmpl[i]
        if c in "{}" and tmpl[i + 1:i + 2] == c:
            rx += re.escape(c)
            i += 2
            continue
        m = re.match(r"\{[A-Za-z0-9_]+\}", tmpl[i:]) if c == "{" else None
        if m:
            rx += ".+"
            i += len(m.group(0))
            continue
        rx += re.escape(c)
        i += 1
    return re.compile(rx, re.S)


def load_templates(folder: pathlib.Path) -> dict[str, re.Pattern]:
    """The error.* templates of every errors*.toml in a language's folder."""
    out = {}
    for path in sorted(folder.glob("errors*.toml")):
        with open(path, "rb") as fh:
            table = tomllib.load(fh).get("error", {})
        for area, keys in table.items():
            for k, v in keys.items():
                out[f"error.{area}.{k}"] = template_regex(v)
    return out


def messages(root: pathlib.Path):
    """(file:line, sample) for every message the code writes, and the count it could not read."""
    found, unread = [], 0
    for f in sorted(list((root / "app").rglob("*.[ch]pp")) + list((root / "lib" / "attn").rglob("*.[ch]pp"))):
        src = lk.strip_comments(f.read_text())
        for rx in (THROW, PRINT):
            for m in rx.finditer(src):
                if rx is PRINT and src[:m.start()].rstrip().endswith(("void", "void app::")):
                    continue  # the definition
                index = 1 if m.group(1).split("::")[-1] == "argument_error" else 0
                expr = argument(src, m.end(), index).strip()
                got = samples(expr) if expr else None
                if got is None:
                    unread += 1
                    continue
                line = src.count("\n", 0, m.start()) + 1
                for s in got:
                    found.append((f"{f.relative_to(root)}:{line}", s))
    return found, unread


def shown(sample: str) -> str:
    return sample.replace(HOLE, "{}").replace("\n", "\\n")


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    templates = load_templates(root / "lessons" / "en")
    found, unread = messages(root)
    failed = 0
    for where, s in found:
        if not any(rx.fullmatch(s) for rx in templates.values()) and s.strip(HOLE + " "):
            print(f"FAIL {where}: no template in lessons/en/errors*.toml matches: {shown(s)}")
            failed += 1
    print(f"{len(found)} messages read ({unread} made elsewhere, not checked), {len(templates)} templates, "
          f"{failed} without one")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
