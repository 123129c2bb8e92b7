#!/usr/bin/env python3
"""Checks that src/'s modules are layered: python3 scripts/check-modules.py [repo root].

Reads every elasticjob_module(NAME SOURCES ... DEPS ... PRIVATE_DEPS ...) in src/CMakeLists.txt.
A source or header belongs to the module that builds the .cc of the same name, else to the
module that builds most of the sources in its folder. Fails, naming the file and the include,
when a module's file includes a header of another module that it does not link (directly or
through the DEPS of what it links), and fails naming the modules when they form a cycle.
Public headers (include/elasticjob/) are not checked: every module sees them.
"""
import collections
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
SRC = os.path.join(ROOT, "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+/[^"]+)"', re.M)


def parse_modules():
    text = open(os.path.join(SRC, "CMakeLists.txt")).read()
    text = re.sub(r"#[^\n]*", "", text)
    modules = {}
    for m in re.finditer(r"elasticjob_module\(\s*(\w+)(.*?)\)\s*\n", text, re.S):
        name, body = m.group(1), m.group(2)
        parts = {"SOURCES": [], "DEPS": [], "PRIVATE_DEPS": []}
        key = None
        for word in body.split():
            if word in parts:
                key = word
            elif key:
                parts[key].append(word)
        sources = [s for s in parts["SOURCES"] if s.endswith(".cc") and "$" not in s]
        deps = [d.split("::", 1)[1] for d in parts["DEPS"] + parts["PRIVATE_DEPS"]
                if d.startswith("elasticjob::")]
        deps += [d[len("elasticjob_"):] for d in parts["PRIVATE_DEPS"]
                 if d.startswith("elasticjob_")]
        public = [d.split("::", 1)[1] for d in parts["DEPS"] if d.startswith("elasticjob::")]
        modules[name] = {"sources": sources, "deps": deps, "public": public}
    return modules


def main():
    modules = parse_modules()
    errors = []
    owner = {}  # path under src/ without extension -> module
    by_folder = collections.defaultdict(collections.Counter)
    for name, m in modules.items():
        for s in m["sources"]:
            owner[s[:-3]] = name
            by_folder[os.path.dirname(s)][name] += 1
        for d in m["deps"]:
            if d not in modules:
                errors.append(f"module {name} links elasticjob::{d}, which is not a module")

    def owner_of(path):
        stem = os.path.splitext(path)[0]
        if stem in owner:
            return owner[stem]
        folder = os.path.dirname(path)
        while folder:
            if folder in by_folder:
                return by_folder[folder].most_common(1)[0][0]
            folder = os.path.dirname(folder)
        return None

    # What each module may include: itself, what it links, and their DEPS, transitively.
    def reachable(name):
        seen, stack = set(), list(modules[name]["deps"])
        while stack:
            d = stack.pop()
            if d in modules and d not in seen:
                seen.add(d)
                stack.extend(modules[d]["public"])
        return seen

    # Cycles, on every link (public or private).
    state = {}
    def visit(n, path):
        state[n] = 1
        for d in modules[n]["deps"]:
            if d not in modules:
                continue
            if state.get(d) == 1:
                cycle = path[path.index(d):] + [d]
                errors.append("modules form a cycle: " + " -> ".join(cycle))
            elif d not in state:
                visit(d, path + [d])
        state[n] = 2
    for n in modules:
        if n not in state:
            visit(n, [n])

    for dirpath, _, files in os.walk(SRC):
        for f in sorted(files):
            if not f.endswith((".h", ".cc")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), SRC)
            mod = owner_of(rel)
            if mod is None:
                continue
            allowed = reachable(mod) | {mod}
            for inc in INCLUDE.findall(open(os.path.join(dirpath, f)).read()):
                if inc.startswith("elasticjob/") or not os.path.exists(os.path.join(SRC, inc)):
                    continue
                target = owner_of(inc)
                if target is not None and target not in allowed:
                    errors.append(f"src/{rel} (module {mod}) includes \"{inc}\" of module "
                                  f"{target}, which {mod} does not link")
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{len(modules)} modules, no cycle, every include linked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
