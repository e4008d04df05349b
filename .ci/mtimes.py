#!/usr/bin/env python3
"""Keeps the cached build honest across clean clones.

Cargo decides what to rebuild from file modification times. A fresh clone gives every file
the time of the clone, so a kept build directory would be rebuilt whole (every workspace
crate, every test binary). This restores, for each tracked file whose *content* is the same
as when the cached build was made, the modification time it had then; a file whose content
differs keeps the clone's time and is rebuilt. Cargo's own fingerprints still decide.
Folders get theirs back too when they hold the same tracked files and folders (a build
script that watches a folder reads the folder's time: Tauri's watches `permissions/`, and
the app was built twice in every run for it).

Only for a clone at the same path as the one the build was made in. Cargo's fingerprints do
not cover the absolute paths that `env!("CARGO_MANIFEST_DIR")` and `env!("CARGO_BIN_EXE_…")`
bake into test binaries, so a build reused from another path runs tests that look for their
helpers and tokens in a directory that is gone. At another path nothing is restored: the
workspace crates rebuild (their sources are newer than the kept build) and the third-party
crates, which carry no such paths, are still reused.

  mtimes.py restore LIST   set the times LIST recorded, where the content hash still matches
  mtimes.py record LIST    write every tracked file's content hash and time to LIST
"""
import hashlib
import os
import subprocess
import sys


def tracked():
    out = subprocess.run(["git", "ls-files", "-z"], check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p and os.path.isfile(p) and not os.path.islink(p)]


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


ROOT = "#root\t"


def folders(paths):
    """Each folder holding tracked files, with what it holds of them (its tracked files and
    folders) as one hash: a build script watching a folder (Tauri's watches `permissions/`)
    reads the folder's own time, which a clone sets too."""
    held = {}
    for p in paths:
        child = p
        parent = os.path.dirname(p) or "."
        while True:
            held.setdefault(parent, set()).add(os.path.basename(child))
            if parent == ".":
                break
            child, parent = parent, os.path.dirname(parent) or "."
    return {d: hashlib.sha256("\0".join(sorted(names)).encode()).hexdigest() for d, names in held.items()}


def record(listing):
    tmp = listing + ".tmp"
    paths = tracked()
    with open(tmp, "w") as out:
        out.write(f"{ROOT}{os.getcwd()}\n")
        for p in paths:
            out.write(f"{digest(p)}\t{os.stat(p).st_mtime_ns}\t{p}\n")
        # Folders after their files: setting a file's time leaves its folder's alone.
        for d, h in sorted(folders(paths).items()):
            out.write(f"dir:{h}\t{os.stat(d).st_mtime_ns}\t{d}\n")
    os.replace(tmp, listing)


def restore(listing):
    if not os.path.isfile(listing):
        print("ci: no recorded file times; the cached build is checked against the clone's times")
        return
    kept = changed = 0
    with open(listing) as f:
        first = f.readline()
        made_in = first[len(ROOT):].rstrip("\n") if first.startswith(ROOT) else "an unknown path"
        if made_in != os.getcwd():
            print(f"ci: the cached build was made in {made_in}, this clone is {os.getcwd()};"
                  " its paths would be stale, so the workspace crates are rebuilt")
            return
        now = None
        for line in f:
            sha, mtime, path = line.rstrip("\n").split("\t", 2)
            if sha.startswith("dir:"):
                now = now or folders(tracked())
                if now.get(path) == sha[4:]:
                    os.utime(path, ns=(int(mtime), int(mtime)))
                continue
            if not os.path.isfile(path):
                continue
            if digest(path) == sha:
                os.utime(path, ns=(int(mtime), int(mtime)))
                kept += 1
            else:
                changed += 1
    print(f"ci: {kept} files unchanged since the cached build (times restored), {changed} changed")


if __name__ == "__main__":
    {"restore": restore, "record": record}[sys.argv[1]](sys.argv[2])
