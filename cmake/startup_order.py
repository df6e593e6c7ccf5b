#!/usr/bin/env python3
"""The order attn-explain's code is laid out in (issue 36, goal 3: start-up).

A run faults in the code it executes 64 KB at a time (the kernel maps the pages around a fault that
are already in memory), and each fault costs a few microseconds: laid out as the compiler leaves it,
`step --no-pause` touched 70 of the 100 such windows of its 6.5 MB of code. So the functions short
runs execute are listed here, first call first, and the link puts them together at the start
(lld's --symbol-ordering-file, CMakeLists.txt: ATTN_STARTUP_ORDER; each function in its own section,
-ffunction-sections, so that the linker can move it). Measured on a 2-core VM: page faults of
`step --no-pause` 271 -> 211, its time 1.91 -> 1.67 ms (tests/bench/startup.sh).

Write:  cmake/startup_order.py build/attn-explain > cmake/startup_order.txt
        runs the built binary under callgrind (valgrind --demangle=no) for each command line of RUNS,
        in order, and lists each function of the executable the first time a run executes it.
Check:  cmake/startup_order.py --check build/attn-explain cmake/startup_order.txt
        fails when fewer than MIN_PRESENT of the listed names are still in the binary (a stale
        list still links, a name no longer there is skipped, but lays out less and less well):
        then write it again. A ctest runs the check.
"""
import os
import re
import subprocess
import sys
import tempfile

RUNS = [
    ["--version"],
    ["step", "--no-pause"],
    ["--help"],
    ["step", "--help"],
    ["step", "--no-pause", "--format", "json"],
    ["step", "--no-pause", "--lang", "zh"],
    ["heads", "--no-pause"],
    ["mistake", "no-scale"],
    ["kv-cache", "--no-pause"],
    ["flash", "--no-pause"],
]
MIN_PRESENT = 0.8

# "fn=(id) name" names a function the first time, "fn=(id)" after; "ob=" the object it is in.
LINE = re.compile(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$")


def executed(profile, exe_name):
    """The functions of exe_name in one callgrind profile, in the file's order."""
    objects, names, out = {}, {}, []
    current = None
    with open(profile, errors="replace") as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if not m:
                continue
            kind, ident, name = m.groups()
            if kind in ("ob", "cob"):
                if name is not None:
                    objects[ident] = name
                if kind == "ob":
                    current = objects.get(ident)
                continue
            if name is not None:
                names[ident] = name
            if kind == "fn" and current and current.endswith(exe_name):
                n = names[ident]
                if not n.startswith("0x") and not n.startswith("("):
                    out.append(n)
    return out


def write(exe):
    seen, order = set(), []
    with tempfile.TemporaryDirectory() as work:
        for i, args in enumerate(RUNS):
            profile = os.path.join(work, f"run{i}.out")
            subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={profile}", exe]
                           + args, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            for n in executed(profile, os.path.basename(exe)):
                if n not in seen:
                    seen.add(n)
                    order.append(n)
    if not order:
        sys.exit("startup_order: callgrind recorded nothing (is valgrind installed?)")
    print("\n".join(order))


def check(exe, listing):
    wanted = [n for n in open(listing).read().split("\n") if n]
    nm = subprocess.run(["nm", "--defined-only", exe], capture_output=True, text=True, check=True).stdout
    have = {line.split()[-1] for line in nm.splitlines() if line.strip()}
    present = sum(1 for n in wanted if n in have)
    share = present / len(wanted) if wanted else 0.0
    print(f"startup_order: {present} of the {len(wanted)} functions listed in {listing} are in {exe} "
          f"({share:.0%}; at least {MIN_PRESENT:.0%} wanted)")
    if share < MIN_PRESENT:
        sys.exit("startup_order: the list is stale: cmake/startup_order.py build/attn-explain > cmake/startup_order.txt")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 2:
        write(os.path.abspath(sys.argv[1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
