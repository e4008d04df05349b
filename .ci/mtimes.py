#!/usr/bin/env python3
"""Keeps the cached build honest across clean clones.

Cargo decides what to rebuild from file modification times. A fresh clone gives every file
the time of the clone, so a kept build directory would be rebuilt whole (every workspace
crate, every test binary). This restores, for each tracked file whose *content* is the same
as when the cached build was made, the modification time it had then; a file whose content
differs keeps the clone's time and is rebuilt. Cargo's own fingerprints still decide.

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


def record(listing):
    tmp = listing + ".tmp"
    with open(tmp, "w") as out:
        out.write(f"{ROOT}{os.getcwd()}\n")
        for p in tracked():
            out.write(f"{digest(p)}\t{os.stat(p).st_mtime_ns}\t{p}\n")
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
        for line in f:
            sha, mtime, path = line.rstrip("\n").split("\t", 2)
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
