#!/usr/bin/python3
"""Issue 37's acceptance test: every command with --lang zh in every format it offers, and no
English left behind on stdout.

The runs: every registered command (`help --list`) with each example of its help page (their setups
first, in one fresh folder), every mistake id, every exercise id (created, then `check`ed), every
course lesson, the drill asked with answers on stdin and every topic's sheet, `interview --history`,
`heads --svg`, `help COMMAND` and `COMMAND --help`, each in every --format the command offers (its
`--help` lists them). For each
output, what is code is left out (Markdown code blocks and spans, HTML <pre>/<code>/<script>/<style>,
the Python script's code but not its comments, JSON keys, ids and single-word values) and each line
is checked for
  - an English word: an ASCII word of 2+ letters that is not in tests/lessons/zh_allow.txt (terms:
    identifiers, API and model names, units, proper names), is not an acronym in capitals, is not
    part of an identifier (d_k, x.shape, --flag, kv-cache, float32) and is not the English gloss in
    half-width parentheses that STYLE.md rule 4 puts after a Chinese term;
  - a space beside CJK punctuation (STYLE.md rule 2);
  - HTML without lang="zh" on its <html> tag.

  python3 tests/lessons/zh_accept.py BIN ROOT [--only COMMAND]   (--only: one command, to iterate;
  the JSON keys the other commands document are then not known as names)
Exit 1 on any finding (each printed with the command line, format and line) but the known ones of
tests/lessons/zh_accept_known.txt (left to another change, each with its reason).
"""
import concurrent.futures
import html
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

CJK_PUNCT = "。，、；：？！（）「」『』《》【】"
HAN = "\u3400-\u4dbf\u4e00-\u9fff"
PAGE_FORMATS = ("text", "markdown", "html", "json", "python")
# JSON keys whose string values are code, ids, paths or notation, not text meant for people.
JSON_CODE_KEYS = {
    "id", "ids", "name", "names", "command", "commands", "pytorch", "numpy", "code", "python", "formula",
    "file", "files", "path", "dir", "flag", "flags", "args", "mask", "dtype", "kind", "unit", "units_name",
    "seed", "date", "time", "key", "keys", "tokens", "token", "shape", "expr", "setup", "fixed", "buggy",
    "fixed_numpy", "buggy_numpy", "fixed_pytorch", "buggy_pytorch", "line", "lines", "error_text", "source",
    "error",  # a mistake's shape error: PyTorch's own message, word for word
}


def run(binary, args, cwd, stdin=""):
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES", "COLUMNS")}
    env.update({"ATTN_EXPLAIN_LANG": "en", "NO_COLOR": "1", "COLUMNS": "100"})
    p = subprocess.run([binary] + args, cwd=cwd, input=stdin.encode(), capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def split_args(line):
    return shlex.split(line)


def help_section(page, title):
    """The lines of a `help COMMAND` section (━━ Title ━━ … next ━━)."""
    out, inside = [], False
    for line in page.split("\n"):
        if line.startswith("━━ "):
            inside = line.startswith(f"━━ {title} ")
            continue
        if inside:
            out.append(line)
    return out


def positional_values(page):
    """The values of a command's positional argument (NAME, ID), from its help page."""
    opts = help_section(page, "Options")
    if not opts or opts[0].startswith("-"):
        return []
    text = ""
    for line in opts[1:]:
        if line.startswith("-") or (line and not line.startswith(" ")):
            break
        if line.strip().startswith("values:") or (text and line.startswith("      ")):
            text += " " + line.strip().removeprefix("values:")
        elif text:
            break
    return [v.strip() for v in text.split("|") if v.strip()]


def formats_of(binary, command):
    _, out = run(binary, [command, "--help"], "/")
    m = re.search(r"--format TEXT=\S+\s+([a-z |]+)", out)
    return [f.strip() for f in m.group(1).split("|") if f.strip() in PAGE_FORMATS] if m else ["text"]


def examples_of(page, command):
    """(setup lines, args) for each example: a line of another command is the next one's setup."""
    lines = []
    for line in help_section(page, "Examples"):  # a long example goes on over lines indented further
        if line.startswith("  attn-explain "):
            lines.append(line.strip())
        elif line.startswith("      ") and lines:
            lines[-1] += " " + line.strip()
    runs, setups = [], []
    for line in lines:
        args = split_args(line)[1:]
        if args[0] != command:
            setups.append(args)
        else:
            runs.append((setups, args))
            setups = []
    return runs


def plan(binary, only):
    """Every (setups, args, formats, stdin) run of the walk."""
    _, listing = run(binary, ["help", "--list"], "/")
    commands = [c for c in listing.split() if not only or c == only]
    runs = []
    for command in commands:
        _, page = run(binary, ["help", command, "--color", "never"], "/")
        formats = formats_of(binary, command)
        for setups, args in examples_of(page, command):
            fmts = formats if command != "drill" or "--sheet" in args else ["text"]
            if command == "interview" and "--history" not in args:
                fmts = ["text"]
            runs.append((setups, args, fmts, ""))
        if command == "mistake":
            runs += [([], ["mistake", m], formats, "") for m in positional_values(page)]
        if command == "exercise":
            for e in positional_values(page):
                runs.append(([], ["exercise", e, "--seed", "3", "--dir", "ex"], ["text"], ""))
                check = formats_of(binary, "check")
                runs.append(([["exercise", e, "--seed", "3", "--dir", "ex"]], ["check", "ex"], check, ""))
        if command == "course":
            with tempfile.TemporaryDirectory(prefix="attn-zh-") as d:
                _, js = run(binary, ["course", "--format", "json", "--state", "p.txt"], d)
            for unit in json.loads(js)["units"]:
                for lesson in unit["lessons"]:
                    # The lesson's page runs its command: its words (--tokens 'the cat sat') are typed.
                    args = ["course", lesson["id"], "--state", "p.txt", "--seed", "3"]
                    runs.append(([], args + ["--also-typed"] + split_args(lesson["command"]), ["text"], ""))
        if command == "drill":  # asked (answers on stdin: text only), then every topic's sheet
            answers = "a\n1\nb\n2\nc\n3\n" * 4
            runs.append(([], ["drill", "--seed", "5", "--count", "6", "--no-save"], ["text"], answers))
            runs.append(([["drill", "--seed", "5", "--count", "3", "--state", "p.txt"]],
                         ["drill", "--stats", "--state", "p.txt"], ["text"], ""))
            _, usage = run(binary, ["drill", "--help"], "/")
            topics = re.search(r"--topic TEXT=all\s+(.*?)\n\s*--", usage, flags=re.S).group(1)
            for topic in [t.strip() for t in topics.split("|") if t.strip() not in ("", "all")]:
                runs.append(([], ["drill", "--sheet", "--topic", topic, "--count", "3", "--seed", "1"], formats, ""))
        if command == "interview":
            runs.append(([], ["interview", "--history", "--state", "p.txt"], formats, ""))
        if command == "heads":
            runs.append(([], ["heads", "--heads", "2", "--svg", "w.svg"], ["svg"], ""))
        runs.append(([], ["help", command], ["text", "markdown", "html"], ""))
        runs.append(([], [command, "--help"], ["text"], ""))  # CLI11's short help
    if not only:
        # The overview is CLI11's text in every --format (help --format html writes no HTML): text.
        runs.append(([], ["help"], ["text"], ""))
    return runs


# ---- what is code, what is text ----

def join_cjk(a, b):
    """Two pieces of one folded line: no space where either side is Chinese."""
    a, b = a.rstrip(), b.lstrip()
    cjk = f"[{HAN}{CJK_PUNCT}]"
    return a + ("" if re.search(cjk + "$", a) or re.match(cjk, b) or not a else " ") + b


MD_BLOCK = re.compile(r"^\s*(#|\||[-*+] |\d+\. |>|$|\*\*)")


def strip_markdown(text):
    text = re.sub(r"^(\s*)(```|~~~).*?^\s*\2\s*$", "", text, flags=re.S | re.M)
    lines = []
    for line in text.split("\n"):
        if line.startswith("    "):
            line = ""
        quoted = lines and lines[-1].startswith(">") and line.startswith(">")
        if quoted or lines and lines[-1].strip() and not MD_BLOCK.match(line) and not lines[-1].lstrip().startswith("|"):
            lines[-1] = join_cjk(lines[-1], line[1:] if quoted else line)
        else:
            lines.append(line)
    text = "\n".join(lines)
    text = re.sub(r"`[^`\n]*`", "`c`", text)  # a code span, kept as one (its neighbours' spaces count)
    return re.sub(r"\]\([^)]*\)", "]", text)


def strip_html(text):
    m = re.search(r"<body\b.*", text, flags=re.S | re.I)
    text = m.group() if m else text
    for tag in ("script", "style", "pre", "code"):
        text = re.sub(rf"<{tag}\b.*?</{tag}>", " ", text, flags=re.S | re.I)
    people = re.findall(r'(?:title|alt|aria-label|placeholder)="([^"]*)"', text)
    text = re.sub(r"\s*\n\s*", "\x01", text)
    text = re.sub(r"</?(p|div|h\d|li|ul|ol|tr|table|section|nav|header|footer|br|figure|figcaption|caption|dt|dd|dl|details|summary|main|article|aside|svg|text|title|g)\b[^>]*>",
                  "\n", text, flags=re.I)
    text = re.sub(r"</?(td|th)\b[^>]*>", " | ", text, flags=re.I)
    text = re.sub(r"<[^>]*>", "", text)
    text = "\n".join(re.sub("(.)\x01(.)", lambda m: join_cjk(m.group(1), m.group(2)), line).replace("\x01", " ")
                      for line in text.split("\n"))
    return html.unescape(text + "\n" + "\n".join(html.unescape(p) for p in people))


def strip_svg(text):
    parts = re.findall(r"<(?:title|text|desc)\b[^>]*>(.*?)</(?:title|text|desc)>", text, flags=re.S)
    return "\n".join(html.unescape(re.sub(r"<[^>]*>", "", p)) for p in parts)


def python_comment(line):
    """The comment of a Python line ('' when none), outside string literals."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[i + 1:]
    return ""


def strip_python(text):
    return "\n".join(python_comment(line) for line in text.split("\n"))


CODE_LINE = re.compile(
    rf"^\s*((pytorch|numpy|[{HAN}]{{1,6}})\s{{2,}}|(pytorch|numpy) [{HAN}]{{1,4}}\s+|>>>\s*|\$\s*)?(import |from |def |return |"
    r"for |if |with |print\(|assert |[A-Za-z_][\w.\[\], ]*\s*(=|\+=|-=|@=)\s|[\w.]+\(.*\)\s*$|torch\.|np\.|F\.|nn\.)")


def strip_text(text):
    """Terminal text (folded at COLUMNS): a folded line is joined again, and a line that reads as
    code keeps only its comment."""
    out, width = [], 0
    for line in text.split("\n"):
        folded = width >= 70 and line.strip() and not line.startswith("━━") and not out[-1].startswith("━━")
        folded = folded and not CODE_LINE.match(line)
        width = len(line) + len(re.findall(f"[{HAN}{CJK_PUNCT}]", line))
        m = CODE_LINE.match(line)
        if m and not re.search(f"[{HAN}]", line[m.end(1) if m.group(1) else 0:].split("#")[0]):
            line = " " + python_comment(line)
        if folded and out and not re.search(r"\s{3}\S", line.strip()):
            out[-1] = join_cjk(out[-1], line)
        else:
            out.append(line)
    return "\n".join(out)


def json_strings(value, key=""):
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in JSON_CODE_KEYS and not k.endswith(("_id", "_ids", "_flag", "_command", "_pytorch")):
                yield from json_strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v, key)
    elif isinstance(value, str) and (re.search(f"[{HAN}]", value) or " " in value.strip()):
        yield value


def strip_json(text):
    try:
        return "\n".join(json_strings(json.loads(text)))
    except json.JSONDecodeError:
        return "\n".join(json_strings([json.loads(x) for x in text.split("\n") if x.strip().startswith("{")]))


STRIP = {"text": strip_text, "markdown": strip_markdown, "html": strip_html, "json": strip_json,
         "python": strip_python, "svg": strip_svg}


# ---- the checks ----

def load_allow(root):
    words = set()
    with open(os.path.join(root, "tests/lessons/zh_allow.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            words.update(line.split())
    return words


# STYLE.md rule 4: an English term in half-width parentheses after the Chinese one, perhaps with
# its source: 置换等变 (permutation-equivariant)、(Native Sparse Attention，DeepSeek，2025).
GLOSS = re.compile(rf"(?<=[{HAN}{CJK_PUNCT}”」]) ?\(([A-Za-z][A-Za-z ,'’/\-]*)([，,][^()]*)?\)")
# A term and its source in full-width parentheses: （attention with linear biases，Press et al. 2022）.
GLOSS_SOURCE = re.compile(r"（[A-Za-z][A-Za-z '’/\-]*，[^（）]*）")
# A paper's title after its authors and year is a proper name: "Press et al. 2022，Train Short…".
TITLE = re.compile(r"[A-Z][\w-]+(?: et al\.| 等| & [A-Z][\w-]+)?，? ?\d{4}[a-z]?[，,] ?[^（(；;。]*")
# A Python exception quoted as Python words it: IndexError: index out of range in self.
EXCEPTION = re.compile(r"\b[A-Z]\w*Error: [^。；\n]*")
# A name the sentence lists or defines: a、b 或 c；greedy：…；bucketing（分桶）.
LISTED = re.compile(r"(?<=、)[A-Za-z][\w-]*|[A-Za-z][\w-]*(?=、|：|（| 为)|[A-Za-z][\w-]*(?= ?[或和与] ?[A-Za-z])"
                    r"|(?:(?<=[A-Za-z] [或和与] )|(?<=[A-Za-z][或和与] )|(?<=[A-Za-z] [或和与])|(?<=[A-Za-z][或和与]))"
                    r"[A-Za-z][\w-]*")
# A flag's type as CLI11 writes it: INT:FLOAT in [0 - 600].
FLAG_TYPE = re.compile(r"\b[A-Z]+(?::[A-Z]+)? in \[[^\]]*\]")
WORD = re.compile(r"(?<![\w.\-/\\@$%{<'])[A-Za-z]{2,}(?![\w.(\-/\\@\[{'>])")
NOTATION = "=·@×/√^+−*<>≤≥≠≈→←|~"
NOT_CJK = rf"[^{HAN}{CJK_PUNCT}\n]"


def notation_free(line):
    """The line without what is code or notation: command lines, flags with their values, math in
    ASCII brackets, names beside an operator, a matrix row's label, the English gloss of a term."""
    line = GLOSS_SOURCE.sub(" ", GLOSS.sub(" ", line))
    line = TITLE.sub(" ", EXCEPTION.sub(" ", re.sub(r"《[^》]*》", " ", line)))
    line = LISTED.sub(" ", FLAG_TYPE.sub(" ", re.sub(r"`[^`]*`", " ", line)))
    line = re.sub(r"\{[^{}]*\}|https?://\S+|\S+\.(?:npy|py|svg|html|md|txt|json|toml|pt)\b", " ", line)
    line = re.sub(rf"\battn-explain\b{NOT_CJK}*", " ", line)
    line = re.sub(r"(?<![\w-])--?[A-Za-z][\w-]*(?:[ =](?!-)[^\s，。；：、（）]+)?", " ", line)
    if re.fullmatch(r"\S+(\s+[-+]?(\d[\d.e+-]*|nan|inf|-inf|·|…|⋮))+\s*", line):
        return ""
    for _ in range(3):  # (seq, features), softmax(scaled, dim=-1), [i, j): notation
        line = re.sub(rf"\w*[(\[][^()\[\]{HAN}{CJK_PUNCT}]*[,=_\d:{NOTATION}][^()\[\]{HAN}{CJK_PUNCT}]*[)\]]", " M ", line)
    op = re.escape(NOTATION) + ":"
    line = re.sub(rf"[\w.']+(?=\s?[{op}])|(?<=[{op}])\s?[\w.']+", " ", line)
    return line


def english_words(line, allow):
    found = []
    for m in WORD.finditer(notation_free(line)):
        w = m.group()
        if w in allow or w.lower() in allow or (w.isupper() and len(w) <= 6) or re.match(r"^[A-Z][a-z]*[A-Z]", w):
            continue
        if re.fullmatch(r"(.)\1+", w):  # a plot's glyphs: ooooo
            continue
        found.append(w)
    return found


def findings(output, fmt, allow):
    if fmt == "html" and not re.search(r'<html[^>]*\blang="zh', output):
        yield "HTML without lang=\"zh\"", output[:80]
    prose = STRIP[fmt](output)
    for line in prose.split("\n"):
        body = line.strip()
        words = english_words(body, allow)
        if words:
            yield "English words " + ", ".join(words), body
        # Per table cell: a column's padding and the cells' separators are not spaces in a sentence.
        for cell in re.split(r"\s*\|\s*|\s{2,}|\s*━+\s*", body):
            # A formula's operators keep their spaces: "L·（一层） = 12·…" (STYLE.md rule 6).
            if re.search(rf"(?<![=+−×·/<>≤≥→]) [{CJK_PUNCT}]|[{CJK_PUNCT}] (?![=+−×·/<>≤≥→])", cell.strip()):
                yield "space beside CJK punctuation", body
                break


def run_one(binary, setups, typed, fmt, stdin):
    args = typed[:typed.index("--also-typed")] if "--also-typed" in typed else typed
    with tempfile.TemporaryDirectory(prefix="attn-zh-") as d:
        for s in setups:
            run(binary, s + ["--lang", "zh"], d)
        if fmt == "svg":
            code, _ = run(binary, args + ["--lang", "zh"], d, stdin)
            with open(os.path.join(d, "w.svg"), encoding="utf-8") as f:
                out = f.read()
        else:
            fmt_args = ["--format", fmt] if fmt != "text" else []
            color = [] if "--color" in args else ["--color", "never"]
            code, out = run(binary, args + ["--lang", "zh"] + color + fmt_args, d, stdin)
    return " ".join(args) + f" --lang zh --format {fmt}", typed, fmt, code, out


def json_keys(value):
    """The JSON's keys and its one-word values (names: "packing", "causal")."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from re.findall(r"[A-Za-z]+", k)
            yield from json_keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_keys(v)
    elif isinstance(value, str) and re.fullmatch(r"[a-z][a-z0-9_-]*", value):
        yield from re.findall(r"[A-Za-z]+", value)


def tool_identifiers(binary, results):
    """The tool's own names, which a Chinese page writes as they are: the commands, every value a
    flag takes (help pages' `values:` lines), the JSON keys (the pages that document them)."""
    names = set()
    _, listing = run(binary, ["help", "--list"], "/")
    for command in listing.split():
        names.update(re.findall(r"[A-Za-z]+", command))
        _, page = run(binary, ["help", command, "--color", "never"], "/")
        for m in re.finditer(r"values: (.*(?:\n      .*)*)", page):
            names.update(re.findall(r"[A-Za-z]+", m.group(1)))
        _, usage = run(binary, [command, "--help"], "/")  # CLI11's lists: ring | ulysses | heads
        m = re.search(r"Usage: .*", usage)  # and its positional's name: [lesson]
        names.update(re.findall(r"[a-z]+", m.group().split("[OPTIONS]")[-1]) if m else [])
        for m in re.finditer(r"[\w-]+(?:\s+\|\s+[\w-]+)+", usage):
            names.update(re.findall(r"[A-Za-z]+", m.group()))
        for _, args in examples_of(page, command):  # the kinds a positional names: variant nsa
            if len(args) > 1 and not args[1].startswith("-"):
                names.update(re.findall(r"[A-Za-z]+", args[1]))
    for _, _, fmt, _, out in results:
        if fmt == "json":
            try:
                names.update(json_keys(json.loads(out)))
            except json.JSONDecodeError:
                pass
    return names


def main():
    binary, root = sys.argv[1], sys.argv[2]
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    jobs = [(s, a, f, i) for s, a, fmts, i in plan(binary, only) for f in fmts]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda j: run_one(binary, *j), jobs))
    allow = load_allow(root) | tool_identifiers(binary, results)
    with open(os.path.join(root, "tests/lessons/zh_accept_known.txt"), encoding="utf-8") as f:
        known = [re.compile(x.strip()) for x in f if x.strip() and not x.startswith("#")]
    bad, empty, refused, seen = 0, [], 0, 0
    # A page's code blocks, as its Markdown fences them: the text page prints the same lines
    # without a fence (a transcript of compare.py in `help bench`).
    code_lines = {}
    for line, args, fmt, code, out in results:
        if fmt == "markdown":
            for block in re.findall(r"^\s*```[^\n]*\n(.*?)^\s*```", out, flags=re.S | re.M):
                code_lines.setdefault(tuple(args), set()).update(x.strip() for x in block.split("\n"))
    terms = load_allow(root)
    for line, args, fmt, code, out in results:
        if fmt == "text":
            fenced = code_lines.get(tuple(args), set())
            out = "\n".join(x for x in out.split("\n") if x.strip() not in fenced)
        if not out and code == 0:
            empty.append(line)
        refused += not out and code != 0
        words = [w for a in args for w in re.findall(r"[A-Za-z]+", a)]
        typed = (terms if fmt == "svg" else allow) | set(words) | {"".join(words[i:j]) for i in range(len(words)) for j in range(i + 2, len(words) + 1)}
        for rule, where in findings(out, fmt, typed):
            if any(k.search(where) for k in known):
                seen += 1
                continue
            bad += 1
            print(f"{line}: {rule}: {where[:200]}")
    for e in empty:
        print(f"no output: {e}")
    # A run refused with an error (a format the flags do not offer, an example of a refusal) writes
    # nothing to stdout: its stderr is the error messages' test's.
    print(f"zh_accept: {len(jobs)} runs ({refused} refused), {bad} finding(s), {seen} known "
          f"(tests/lessons/zh_accept_known.txt), {len(empty)} without output")
    return 1 if bad or empty else 0


if __name__ == "__main__":
    sys.exit(main())
