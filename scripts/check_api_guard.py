#!/usr/bin/env python3
"""Checks that every function declared in include/nd.h (and the
include/nd/*.h it includes) takes the API lock.

Each public function's definition under src/ must begin with ND_API_GUARD();
(the process-wide lock, common/api_guard.h) or ND_API_UNLOCKED(); (a
function that reads only per-thread or constant state). A function defined
by a macro (BINARY(nd_add, ...)) counts when the macro's definition starts
the body so. Fails, listing them, for a function of nd.h that is defined
without either, defined twice, or not found.

Usage: check_api_guard.py [SOURCE_ROOT]   (meson test: api_guard)
"""
import os
import re
import sys

GUARDS = ("ND_API_GUARD", "ND_API_UNLOCKED", "ND_API_GUARD_IN", "ND_API_GUARD_REPLAY", "ND_API_REPLAYABLE_AS",
          "ND_API_REPLAYABLE_IN", "ND_API_GUARD_UNLESS")
# ND_API_GUARD_REPLAY(fn) and ND_API_REPLAYABLE_AS(fn, ...): the guard of a
# call the scope replay follows (frontend/scope_replay.h), the second after
# diverting to the replay's own entry, which takes the guard itself.
# ND_API_GUARD_UNLESS(done): a fast path that takes the lock itself, then the
# guard. ND_API_GUARD_IN(callee), ND_API_REPLAYABLE_IN(callee, ...): the function
# forwards to callee (the second after diverting to the replay), which must be
# defined in the same file and begin with ND_API_GUARD_AS(...) (or
# ND_API_REPLAYABLE_AS(...)).
FORWARD = re.compile(r"\bND_API_(?:GUARD|REPLAYABLE)_IN\(\s*(\w+)\s*[,)]")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def public_functions(header, allow_empty=False):
    text = strip_comments(open(header).read())
    names = re.findall(r"\bND_API\b[^;(]*?\b(nd_\w+)\s*\(", text)
    if not names and not allow_empty:
        sys.exit(f"check_api_guard: no ND_API functions found in {header}")
    return sorted(set(names))


# `name(params) {` then the first statement of the body.
DEF = re.compile(r"(?<![\w.>])(\w+)\s*\(([^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)\s*\{\s*(\w*)")


def definitions(text):
    """(name, first identifier of the body) for each function definition."""
    out = []
    for m in DEF.finditer(text):
        name, first = m.group(1), m.group(3)
        if name in ("if", "for", "while", "switch", "return", "sizeof"):
            continue
        # A definition starts a line (possibly after its return type).
        line_start = text.rfind("\n", 0, m.start()) + 1
        prefix = text[line_start:m.start()]
        if prefix.strip() and not re.fullmatch(r"[\w\s\*]*", prefix):
            continue
        out.append((name, first))
    return out


def scan(root, bad_forwards=None):
    """(api, found): the ND_API function names of nd.h, and for each the
    definitions found under src/ as (file, first identifier of the body)."""
    headers = [os.path.join(root, "include", "nd.h")]
    subdir = os.path.join(root, "include", "nd")
    headers += sorted(os.path.join(subdir, f) for f in os.listdir(subdir) if f.endswith(".h"))
    api = sorted({n for h in headers for n in public_functions(h, allow_empty=True)})
    if not api:
        sys.exit("check_api_guard: no ND_API functions found in include/nd.h or include/nd/")
    found = {}  # name -> list of (file, guarded)
    if bad_forwards is None:
        bad_forwards = []

    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            if not f.endswith(".c"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            text = strip_comments(open(path).read())
            # Macros that define functions: #define M(p0, p1) ... p_i(...) { ...
            joined = re.sub(r"\\\n", " ", text)
            macros = {}
            for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$", joined, re.M):
                params = [p.strip() for p in m.group(2).split(",")]
                for name, first in definitions(m.group(3)):
                    if name in params:
                        macros[m.group(1)] = (params.index(name), first)
            plain = re.sub(r"^[ \t]*#[ \t]*define[^\n]*$", "", joined, flags=re.M)
            firsts = dict(definitions(plain))
            for callee in set(FORWARD.findall(joined)):
                if firsts.get(callee) not in ("ND_API_GUARD_AS", "ND_API_REPLAYABLE_AS"):
                    bad_forwards.append(f"{rel}: ND_API_GUARD_IN({callee}): {callee} is not "
                                        "defined in this file beginning with ND_API_GUARD_AS")
            for name, first in definitions(plain):
                if name in api:
                    found.setdefault(name, []).append((rel, first))
            for macro, (index, first) in macros.items():
                for m in re.finditer(r"^[ \t]*" + macro + r"\(([^)]*)\)", plain, re.M):
                    args = [a.strip() for a in m.group(1).split(",")]
                    if index < len(args) and args[index] in api:
                        found.setdefault(args[index], []).append((f"{rel} ({macro})", first))

    return api, found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = []
    api, found = scan(root, problems)
    for name in api:
        defs = found.get(name, [])
        if not defs:
            problems.append(f"{name}: declared in nd.h, no definition found under src/")
        elif len(defs) > 1:
            problems.append(f"{name}: defined {len(defs)} times: {', '.join(d for d, _ in defs)}")
        elif defs[0][1] not in GUARDS:
            problems.append(f"{name} ({defs[0][0]}): the body must begin with ND_API_GUARD(); "
                            "(or ND_API_UNLOCKED(); if it reads only per-thread or constant "
                            "state), see src/common/api_guard.h")
    if problems:
        print("check_api_guard: public functions without the API lock:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check_api_guard: all {len(api)} functions of nd.h begin with ND_API_GUARD or "
          "ND_API_UNLOCKED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
