#!/usr/bin/env python3
"""Every path of this repository named in a doc or a comment exists: a renamed or deleted file leaves no pointer
to nowhere. Reads every tracked text file for words that start with a top-level folder (engine/, app/, ui/,
tests/, docs/, scripts/, resources/, experiments/, packaging/) and checks each against the tree.

A name passes when it exists, or names a file's stem ("engine/base/run/run_launch" for run_launch.h and .cpp), or
is a program the build makes from a source of that stem (tests/test_gpu), or protoc's output of a .proto there. Not checked: globs and placeholders
(a `*`, `<`, `{`, `$` or an upper-case NAME in it), paths inside other projects (a line that names llm.c, nanoGPT,
torchtitan or another peer), and tests/data/, whose generators build old revisions on purpose.

  doc_paths_check.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys

TOP = r"(?:engine|app|ui|tests|docs|scripts|resources|experiments|packaging)"
PATH = re.compile(r"(?<![\w./-])(" + TOP + r"/[A-Za-z0-9_./-]*[A-Za-z0-9_])(?![\w*<{$-]|/\*)")
TEXT = re.compile(r"\.(md|h|cpp|cu|cuh|sh|py|txt|cmake|in|json)$")
PEERS = ("llm.c", "nanoGPT", "torchtitan", "modded-nanogpt", "nanochat", "PlotJuggler", "tiled")
PROGRAMS = {"app/tokamak-engine", "app/tokamak-studio", "app/studio/tokamak-studio"}


def exists(root, path):
    full = os.path.join(root, path)
    if os.path.exists(full) or path in PROGRAMS:
        return True
    if re.search(r"\.pb\.(h|cc)$", path):  # protoc's output, generated from the .proto beside it at build time
        return os.path.exists(re.sub(r"\.pb\.(h|cc)$", ".proto", full))
    folder, stem = os.path.split(full)
    return os.path.isdir(folder) and any(n.startswith(stem + ".") for n in os.listdir(folder))


def main(root):
    files = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    missing = []
    for f in files:
        if f.startswith("tests/data/") or not (TEXT.search(f) or f.endswith("CMakeLists.txt")):
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                if any(peer in line for peer in PEERS):
                    continue
                for m in PATH.finditer(line):
                    path = m.group(1)
                    if exists(root, path) or re.search(r"[A-Z]{3,}", path.split("/")[-1]):
                        continue  # there, or a placeholder (docs/NAME.md)
                    missing.append(f"{f}:{number}: {path}")
    if missing:
        print("paths named in docs and comments that do not exist (rename them, or remove the pointer):")
        print("\n".join(missing))
        return 1
    print(f"doc_paths_check: every path named in {len(files)} tracked files exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
