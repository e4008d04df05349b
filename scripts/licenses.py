#!/usr/bin/env python3
"""License policy for everything the console ships: every Rust crate in Cargo.lock's graph
(`cargo metadata --locked`) and every npm package the UI bundle pulls in at run time
(ui/package.json "dependencies", transitively). Exits 1 naming each package whose SPDX
expression cannot be satisfied from ALLOWED.

Why not cargo-deny: its advisory half needs the RustSec database fetched over git, which
this machine kind cannot reach, and building it doubles a cold CI run; the license half is
this one check over `cargo metadata`.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ALLOWED = {
    "MIT", "MIT-0", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-1-Clause",
    "BSD-2-Clause", "BSD-3-Clause", "ISC", "Zlib", "Unicode-3.0", "Unicode-DFS-2016",
    "Unlicense", "CC0-1.0", "0BSD", "BSL-1.0",
    # File-level copyleft: fine to link from an Apache-2.0 application unmodified.
    "MPL-2.0",
    # A permissive licence for data: webpki-roots ships Mozilla's root CA list under it
    # (HTTPS to a time-stamp authority). No copyleft; the licence text travels with it.
    "CDLA-Permissive-2.0",
}


def satisfiable(expr: str) -> bool:
    """Evaluate an SPDX expression (AND, OR, WITH, parentheses; the old "/" means OR)."""
    expr = expr.replace("/", " OR ")
    tokens = re.findall(r"\(|\)|[A-Za-z0-9.+-]+(?: WITH [A-Za-z0-9.+-]+)?", expr.replace(" with ", " WITH "))
    pos = 0

    def atom():
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t == "(":
            v = disj()
            pos += 1  # ")"
            return v
        return t in ALLOWED

    def conj():
        nonlocal pos
        v = atom()
        while pos < len(tokens) and tokens[pos] == "AND":
            pos += 1
            v = atom() and v
        return v

    def disj():
        nonlocal pos
        v = conj()
        while pos < len(tokens) and tokens[pos] == "OR":
            pos += 1
            v = conj() or v
        return v

    try:
        return disj() and pos == len(tokens)
    except IndexError:
        return False


def rust(root: Path):
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        cwd=root, check=True, capture_output=True, text=True).stdout)
    for p in meta["packages"]:
        if p.get("source") is None:  # the console's own crates
            continue
        yield f"crate {p['name']} {p['version']}", p.get("license") or ""


def npm(root: Path):
    ui = root / "ui"
    nm = ui / "node_modules"
    todo = list(json.loads((ui / "package.json").read_text()).get("dependencies", {}))
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        pj = nm / name / "package.json"
        if not pj.exists():
            continue  # an optional dependency for another platform
        d = json.loads(pj.read_text())
        lic = d.get("license") or ""
        if isinstance(lic, dict):
            lic = lic.get("type", "")
        yield f"npm {name} {d.get('version')}", lic
        todo.extend(d.get("dependencies", {}))


def main() -> int:
    root = Path(__file__).resolve().parents[1]
    bad, n = [], 0
    for what, lic in [*rust(root), *npm(root)]:
        n += 1
        if not lic or not satisfiable(lic):
            bad.append(f"{what}: {lic or '(no license declared)'}")
    if bad:
        print("licenses: not allowed by the policy in scripts/licenses.py:", *bad, sep="\n  ")
        return 1
    print(f"licenses: {n} packages, all within the policy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
