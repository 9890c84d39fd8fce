#!/usr/bin/env python3
"""Checks that every file path README.md and docs/*.md name exists.

Paths are taken from Markdown links and images ([text](path), ![](path);
web links and #anchors skipped) and from code spans that look like a path
(a folder and a file name with an extension: `src/common/error.c`,
`include/nd/types.h`, `common/alloc.h`, `docs/heat-stencil.png`). A link
resolves against the file that holds it, as a Markdown viewer resolves it
(so a link must not leave the repository); a code span against the
repository root, src/ (the internals name files as `common/alloc.h`),
include/ (`nd/types.h`) or the file's folder; generated headers are checked
against the meson.build that makes them. Not files to look for: paths with placeholders
(<topic>, *, ...), build outputs (build/...), and code spans that leave the
repository (../...).

Usage: check_doc_paths.py [SOURCE_ROOT]   (meson test: doc_paths)
"""
import os
import re
import sys

# Files the build generates (named in the docs, absent from the tree).
GENERATED = {"nd/callsites.h": "include/nd/meson.build"}
TOP = ("src/", "include/", "tests/", "scripts/", "examples/", "docs/", "bench/")
FILE_EXT = re.compile(r"\.(c|h|md|py|sh|png|build|txt|cu|supp|json|toml|in)$")


def candidates(text):
    """(kind, path) for each path-like reference in a Markdown text."""
    body = re.sub(r"```.*?```", lambda m: m.group(0), text, flags=re.S)
    for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", body):
        yield "link", m.group(1)
    for m in re.finditer(r"`([^`\s]+)`", body):
        yield "code", m.group(1)


def wanted(kind, path):
    if re.match(r"^[a-z]+://", path) or path.startswith(("#", "mailto:")):
        return None
    path = path.split("#")[0].rstrip(".,;:")
    if not path or any(c in path for c in "<>*{}$|") or "..." in path:
        return None
    if kind == "code":
        p = path[2:] if path.startswith("./") else path
        if p.startswith(("build/", "../", "/", "~")) or "/" not in p or p in GENERATED:
            return None
        if not (FILE_EXT.search(p) or (p.startswith(TOP) and p.endswith("/"))):
            return None
        return p
    return path


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    docs = [os.path.join(root, "README.md")]
    ddir = os.path.join(root, "docs")
    docs += sorted(os.path.join(ddir, f) for f in os.listdir(ddir) if f.endswith(".md"))
    missing, checked = [], 0
    for name, maker in GENERATED.items():  # still made where the docs say
        if os.path.basename(name) not in open(os.path.join(root, maker)).read():
            missing.append(f"{maker}: no longer generates {name}")
    for doc in docs:
        here = os.path.dirname(doc)
        rel_doc = os.path.relpath(doc, root)
        for lineno, line in enumerate(open(doc, encoding="utf-8"), 1):
            for kind, raw in candidates(line):
                path = wanted(kind, raw)
                if path is None:
                    continue
                checked += 1
                if kind == "link":
                    full = os.path.normpath(os.path.join(here, path))
                    ok = os.path.exists(full) and (full + os.sep).startswith(root + os.sep)
                else:
                    bases = (root, os.path.join(root, "src"), os.path.join(root, "include"), here)
                    ok = any(os.path.exists(os.path.join(base, path)) for base in bases)
                if not ok:
                    missing.append(f"{rel_doc}:{lineno}: {raw}")
    if missing:
        print("check_doc_paths: paths named in the docs that do not exist:")
        for m in missing:
            print("  " + m)
        return 1
    print(f"check_doc_paths: {checked} paths named in README.md and docs/*.md exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
