#!/usr/bin/env python3
"""The READMEs are a front door that works: README.md and README.zh.md are at most 300 lines,
their Contents link every section, every in-page anchor and every relative link resolves, and
every `attn-explain ...` line (README.md and README.zh.md; .github/CONTRIBUTING.md has its
Contents and links checked) of their ```sh blocks runs as shown (in one temporary folder, in
order, so `exercise` then `check` works; exit 0, or 1 where the line's comment says
"exits 1"), with the built binary first on PATH.
Usage: check_readme.py SOURCE_DIR BUILD_BINARY"""
import os
import re
import subprocess
import sys
import tempfile

MAX_LINES = 300


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def check(path, exe, problems):
    name = os.path.basename(path)
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    if len(lines) > MAX_LINES:
        problems.append(f"{name}: {len(lines)} lines (at most {MAX_LINES})")

    # Headings (outside code fences) and their anchors.
    headings, fence = [], False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            headings.append((len(line) - len(line.lstrip("#")), line.lstrip("#").strip()))
    anchors = {slug(h) for _, h in headings}

    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    links = re.findall(r"\]\(([^)\s]+)\)", prose)
    for link in links:
        if link.startswith("#"):
            if link[1:] not in anchors:
                problems.append(f"{name}: link {link} has no heading")
        elif not re.match(r"[a-z]+:", link):
            target = os.path.join(os.path.dirname(path), link.split("#")[0])
            if not os.path.exists(target):
                problems.append(f"{name}: link {link}: no such file")

    # The Contents (the first level-2 heading) link every other level-2 section.
    level2 = [h for lvl, h in headings if lvl == 2]
    if not level2:
        problems.append(f"{name}: no sections")
        return []
    contents_start = text.index("## " + level2[0])
    contents_end = text.index("## " + level2[1]) if len(level2) > 1 else len(text)
    contents = set(re.findall(r"\]\(#([^)]+)\)", text[contents_start:contents_end]))
    for h in level2[1:]:
        if slug(h) not in contents:
            problems.append(f"{name}: the Contents do not link '{h}'")

    # The commands shown.
    commands, fence_lang = [], None
    for line in lines:
        if line.startswith("```"):
            fence_lang = None if fence_lang is not None else line[3:].strip()
        elif fence_lang == "sh" and line.startswith("attn-explain "):
            commands.append(line)
    return commands


def run(commands, exe, problems, name):
    with tempfile.TemporaryDirectory() as work:
        bindir = os.path.join(work, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.abspath(exe), os.path.join(bindir, "attn-explain"))
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), HOME=work,
                   XDG_STATE_HOME=os.path.join(work, "state"), COLUMNS="80")
        for line in commands:
            code_part, _, comment = line.partition("  #")
            allowed = {0, 1} if "exits 1" in comment else {0}
            r = subprocess.run(["sh", "-c", code_part], cwd=work, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=120)
            if r.returncode not in allowed or b"error:" in r.stderr or not r.stdout:
                problems.append(f"{name}: `{code_part.strip()}` exited {r.returncode}: "
                                f"{r.stderr.decode(errors='replace').strip()[:300]}")


def main():
    source, exe = sys.argv[1], sys.argv[2]
    problems, total = [], 0
    for readme in ("README.md", "README.zh.md"):
        path = os.path.join(source, readme)
        commands = check(path, exe, problems)
        if not commands:
            problems.append(f"{readme}: shows no attn-explain command")
        run(commands, exe, problems, readme)
        total += len(commands)
    # The contributors' guide: its Contents and links (its commands build things: not run here).
    check(os.path.join(source, ".github", "CONTRIBUTING.md"), exe, problems)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"ok: both READMEs, {total} commands run, every link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
