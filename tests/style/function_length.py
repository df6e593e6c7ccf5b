#!/usr/bin/env python3
"""No function of lib/ or app/ is longer than 80 lines, but the data tables listed below (issue 25, point 7).

Reads every .cpp/.hpp under lib/ and app/ as C++: comments, string, character and raw-string
literals and preprocessor lines are blanked first (newlines kept, so line numbers stay true), so
the `{{` of a fmt string or a brace in a comment counts for nothing. Then it walks the braces:
a `{` at namespace or class scope whose declaration has a parameter list is a function body
(constructor initialisers such as `x_{a}` are skipped); everything inside a body, lambdas and
local classes included, belongs to that function. A function's length is the number of lines from
the first line of its declaration to its closing brace.

A function longer than LIMIT lines fails the test unless ALLOWED names it (path relative to the
source folder, and the function's name as written in its declaration), each with a one-line
reason. An ALLOWED entry that names no function over the limit fails too: a split function
leaves the list with it.

Before it reads the tree the script checks itself on small sources (a long function fails; braces
in strings, raw strings, characters and comments do not count), so it cannot pass by reading nothing.

Run as: function_length.py SOURCE_DIR
"""
import pathlib
import re
import sys

LIMIT = 80

# (path, function name) -> why it may be longer: a table is rows of data, not steps of logic.
ALLOWED: dict[tuple[str, str], str] = {
    ("lib/attn/trace/exercise.cpp", "catalogue"): "a table: one row per exercise (id, level, inputs, answers, bugs, sizes, cases)",
}

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RAW_PREFIX = re.compile(r"(?:u8|u|U|L)?R\"([^ ()\\\t\n]{0,16})\(")


def blank(text: str) -> str:
    """The source with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)
    at_line_start = True

    def keep_newlines(s: str) -> str:
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a preprocessor line, with its backslash continuations
            j = i
            while j < n:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] == "\\":
                    j = k + 1
                    continue
                break
            out.append(keep_newlines(text[i:k]))
            i = k
            continue
        if c == "\n":
            out.append(c)
            at_line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            out.append(c)
            i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            k = text.find("\n", i)
            k = n if k < 0 else k
            out.append(keep_newlines(text[i:k]))
            i = k
            continue
        if text.startswith("/*", i):
            k = text.find("*/", i + 2)
            k = n if k < 0 else k + 2
            out.append(keep_newlines(text[i:k]))
            i = k
            continue
        m = RAW_PREFIX.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = ")" + m.group(1) + '"'
            k = text.find(end, m.end())
            k = n if k < 0 else k + len(end)
            out.append('""' + keep_newlines(text[i + 2:k]))
            i = k
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            # a string or character literal (a ' after a digit is a digit separator)
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            out.append(c + keep_newlines(text[i + 1:j]) + c)
            i = j + 1
            continue
        if c.isalpha() or c == "_":
            m = IDENT.match(text, i)
            out.append(m.group(0))
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


ACCESS = re.compile(r"\b(public|private|protected)\s*:(?!:)")
TEMPLATE_HEAD = re.compile(r"^\s*template\s*<")
CLASS_KEY = re.compile(r"^\s*(?:typedef\s+)?(class|struct|union|enum)\b")


def strip_template_head(header: str) -> str:
    while TEMPLATE_HEAD.match(header):
        i = header.index("<")
        depth = 0
        for j in range(i, len(header)):
            if header[j] == "<":
                depth += 1
            elif header[j] == ">":
                depth -= 1
                if depth == 0:
                    header = header[j + 1:]
                    break
        else:
            return header
    return header


def function_name(header: str) -> str:
    """The name before the parameter list: `attn::build(`, `operator()(`, `~trace(`."""
    depth = 0
    for i, c in enumerate(header):
        if c == "(":
            if depth == 0:
                before = header[:i].rstrip()
                if before.endswith("operator") or re.search(r"operator\s*\(\s*\)$", before):
                    m = re.search(r"([A-Za-z_][\w:]*operator\s*\S*)$", before)
                    return re.sub(r"\s+", "", m.group(1)) if m else "operator"
                m = re.search(r"(~?[A-Za-z_][\w]*(?:\s*::\s*~?[A-Za-z_]\w*)*)\s*(?:<[^()]*>)?$", before)
                return re.sub(r"\s+", "", m.group(1)) if m else "?"
            depth += 1
        elif c == ")":
            depth -= 1
    return "?"


def functions(code: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of every function body at namespace or class scope."""
    code = ACCESS.sub(lambda m: " " * len(m.group(0)), code)
    result: list[tuple[str, int, int]] = []
    n = len(code)
    line_of = [0] * (n + 1)
    line = 1
    for i, c in enumerate(code):
        line_of[i] = line
        if c == "\n":
            line += 1
    line_of[n] = line

    def skip_braces(i: int) -> int:
        """Index just past the brace that closes the one at i."""
        depth = 0
        while i < n:
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return n

    def scope(i: int, end_char: str | None) -> int:
        """Walks a namespace or class body from i; returns the index past its closing brace."""
        start = i  # where the current declaration begins
        parens = 0
        while i < n:
            c = code[i]
            if c == "(":
                parens += 1
            elif c == ")":
                parens -= 1
            elif parens > 0:
                if c == "{":  # a braced argument or default value inside a parameter list
                    i = skip_braces(i)
                    continue
            elif c == ";":
                start = i + 1
            elif c == "}":
                return i + 1
            elif c == "{":
                header = code[start:i]
                bare = strip_template_head(header)
                if re.match(r"^\s*(inline\s+)?namespace\b", bare) or re.match(r'^\s*extern\s*""\s*$', bare):
                    i = scope(i + 1, "}")
                    start = i
                    continue
                if CLASS_KEY.match(bare) and "(" not in bare.split("{")[0].split(":")[0]:
                    i = scope(i + 1, "}")
                    start = i
                    continue
                if "(" in header and not top_level_equals_before_paren(header):
                    close = header.rfind(")")
                    tail = header[close + 1:]
                    if re.search(r"(?<!:):(?!:)", tail) and re.search(r"[\w>]\s*$", tail):
                        # a member initialiser `x_{a}` of a constructor: part of the declaration
                        i = skip_braces(i)
                        continue
                    end = skip_braces(i)
                    first = start
                    while first < i and code[first].isspace():
                        first += 1
                    result.append((function_name(bare), line_of[first], line_of[end - 1]))
                    i = end
                    start = i
                    continue
                # data: an initialiser at namespace or class scope
                i = skip_braces(i)
                continue
            i += 1
        return n

    def top_level_equals_before_paren(header: str) -> bool:
        depth = 0
        for k, c in enumerate(header):
            if c in "(<[":
                if c == "(":
                    return False
                depth += 1
            elif c in ">]":
                depth -= 1
            elif c == "=" and depth <= 0 and header[k + 1:k + 2] != "=" and header[k - 1:k] not in "=!<>":
                return True
        return False

    scope(0, None)
    return result


def long_functions(text: str) -> list[tuple[str, int, int]]:
    return [(name, a, b) for name, a, b in functions(blank(text)) if b - a + 1 > LIMIT]


def self_test() -> list[str]:
    """The checker on small sources: what it must find and what it must not."""
    errors: list[str] = []
    body = "".join(f"    x += {k};\n" for k in range(LIMIT))
    long_one = "namespace a {\nint long_one(int x) {\n" + body + "    return x;\n}\n}  // namespace a\n"
    if [f[0] for f in long_functions(long_one)] != ["long_one"]:
        errors.append("self-test: a function of %d lines was not found" % (LIMIT + 3))
    short = "int ok(int x) {\n" + "".join(f"    x += {k};\n" for k in range(LIMIT - 3)) + "    return x;\n}\n"
    if long_functions(short):
        errors.append("self-test: a function of exactly %d lines was reported" % LIMIT)
    tricky = (
        "struct s {\n    int f() const { return 1; }\n};\n"
        'std::string g() {\n    auto a = fmt::format("{{}} {{{{");\n    auto b = R"x(}}}} ")" {)x";\n'
        "    char c = '}'; char d = '\\'';  // }}}\n    /* { */ return a + b;\n}\n"
        "int h() { return 1'000; }\n"
        "widget::widget(int a) : x_{a}, y_(a) {\n    z_ = 1;\n}\n"
        "const std::vector<int> table = {\n" + "".join(f"    {k},\n" for k in range(100)) + "};\n"
    )
    names = [f[0] for f in functions(blank(tricky))]
    if names != ["f", "g", "h", "widget::widget"]:
        errors.append(f"self-test: braces in literals or comments confused the walk: {names}")
    return errors


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    errors = self_test()
    found: set[tuple[str, str]] = set()
    count = 0
    for folder in ("lib", "app"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".hpp"):
                continue
            rel = path.relative_to(root).as_posix()
            for name, first, last in functions(blank(path.read_text(encoding="utf-8"))):
                count += 1
                length = last - first + 1
                if length <= LIMIT:
                    continue
                if (rel, name) in ALLOWED:
                    found.add((rel, name))
                    continue
                errors.append(f"{rel}:{first}: {name} is {length} lines (at most {LIMIT}): split it by what it does")
    for key, reason in ALLOWED.items():
        if not reason.strip():
            errors.append(f"{key[0]}: {key[1]} is allowed without a reason")
        if key not in found:
            errors.append(f"{key[0]}: {key[1]} is allowed but is no function over {LIMIT} lines: remove it from ALLOWED")
    if count < 100:
        errors.append(f"only {count} functions found under lib/ and app/: is {root} the source folder?")
    for e in errors:
        print(e)
    print(f"{count} functions read; {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
