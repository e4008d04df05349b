#!/usr/bin/env python3
"""Keeps the cached build honest across clean clones.

Cargo decides what to rebuild from file modification times. A fresh clone gives every file
the time of the clone, so a kept build directory would be rebuilt whole (every workspace
crate, every test binary). This restores, for each tracked file whose *content* is the same
as when the cached build was made, the modification time it had then; a file whose content
differs keeps the clone's time and is rebuilt. Cargo's own fingerprints still decide.

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


def record(listing):
    tmp = listing + ".tmp"
    with open(tmp, "w") as out:
        for p in tracked():
            out.write(f"{digest(p)}\t{os.stat(p).st_mtime_ns}\t{p}\n")
    os.replace(tmp, listing)


def restore(listing):
    if not os.path.isfile(listing):
        print("ci: no recorded file times; the cached build is checked against the clone's times")
        return
    kept = changed = 0
    with open(listing) as f:
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
