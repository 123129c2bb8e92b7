#!/usr/bin/env python3
"""Checks that src/'s modules are layered: python3 scripts/check-modules.py [repo root].

Reads every elasticjob_module(NAME SOURCES ... DEPS ... PRIVATE_DEPS ...) in src/CMakeLists.txt.
One module per folder, named after it: a module's sources lie in its folder and the subfolders
that are no other module's, and its name is that folder's path with '_' for '/' (src/task/ is
task, src/sharding/strategy/ sharding_strategy, src/tracing/events/ tracing_events); the name a
target is exported under may differ (task is the package component elasticjob::tasks).
A source or header belongs to the module that builds the .cc of the same name, else to the
module that builds most of the sources in its folder. Fails, naming the file and the include,
when a module's file includes a header of another module that it does not link (directly or
through the DEPS of what it links), and fails naming the modules when they form a cycle.
Public headers (include/elasticjob/) may be included by every module; they themselves must
include only public headers: one that includes a private header of src/ fails, naming both.
Tests: each binary of tests/CMakeLists.txt (elasticjob_unit_tests(FOLDER LINKS...), whose
sources are tests/unit/FOLDER/**/*_test.cc, and add_executable with target_link_libraries)
may include the folders of the modules it links (through the DEPS of what it links, and the
PUBLIC links of the other targets it links: the CLI's libraries, the umbrella
elasticjob::elasticjob), and the test headers it includes (tests/unit/...) are held to the
same links; a file that includes another module's header fails, naming the binary, the file
and the include.
"""
import collections
import glob
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
SRC = os.path.join(ROOT, "src")
TESTS = os.path.join(ROOT, "tests")
PUBLIC = os.path.join(ROOT, "include")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+/[^"]+)"', re.M)


def cmake_calls(path, command):
    """Yields the words of each command(...) call in the CMake file at `path`."""
    text = re.sub(r"#[^\n]*", "", open(path).read())
    for m in re.finditer(r"\b" + command + r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)", text):
        yield m.group(1).split()


def aliases():
    """add_library(ALIAS TARGET ALIAS TARGET) of src/: alias -> target."""
    return {w[0]: w[2] for w in cmake_calls(os.path.join(SRC, "CMakeLists.txt"), "add_library")
            if len(w) == 3 and w[1] == "ALIAS"}


def target_name(lib, alias):
    """elasticjob::X or elasticjob_X (an alias resolved first) -> X; else None."""
    lib = alias.get(lib, lib)
    for prefix in ("elasticjob::", "elasticjob_"):
        if lib.startswith(prefix):
            return lib[len(prefix):]
    return None


def parse_modules():
    alias = aliases()
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
        deps = [target_name(d, alias) for d in parts["DEPS"] + parts["PRIVATE_DEPS"]
                if target_name(d, alias) and d != "elasticjob_warnings"]
        public = [target_name(d, alias) for d in parts["DEPS"] if target_name(d, alias)]
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
    errors += check_names(modules)
    errors += check_public_headers()
    errors += check_tests(modules, owner_of, reachable)
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{len(modules)} modules, no cycle, every include linked; public headers include "
          f"no private one; every test includes only what its binary links")
    return 0


def check_names(modules):
    """One module per folder, named after it: a module's sources lie in one folder (its home)
    and the subfolders that are no other module's home, and its name is the home's path with
    '/' for '_' (sharding/strategy/ is sharding_strategy). The target's exported name may differ
    (EXPORT_NAME: task/ is exported as the package component elasticjob::tasks)."""
    errors = []
    home = {}
    for name, m in modules.items():
        if not m["sources"]:
            continue
        home[name] = os.path.commonpath([os.path.dirname(s) for s in m["sources"]])
        if home[name].replace("/", "_") != name:
            errors.append(f"module {name} builds the folder src/{home[name]}/: a module is named "
                          f"after its folder ({home[name].replace('/', '_')})")
    homes = collections.defaultdict(list)
    for name, folder in home.items():
        homes[folder].append(name)
    for folder, names in homes.items():
        if len(names) > 1:
            errors.append(f"src/{folder}/ is the folder of modules {', '.join(sorted(names))}: "
                          f"one module per folder")
    for name, m in modules.items():
        for source in m["sources"]:
            folder = os.path.dirname(source)
            while folder and folder not in homes:
                folder = os.path.dirname(folder)
            if folder and name not in homes[folder]:
                errors.append(f"module {name} builds src/{source}, in the folder of module "
                              f"{', '.join(homes[folder])}")
    return errors


def check_public_headers():
    """A public header (include/elasticjob/**) that includes a private header of src/."""
    errors = []
    for dirpath, _, files in os.walk(os.path.join(PUBLIC, "elasticjob")):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            for inc in INCLUDE.findall(open(path).read()):
                if not inc.startswith("elasticjob/") and os.path.exists(os.path.join(SRC, inc)):
                    errors.append(f"{rel} (a public header) includes \"{inc}\", a private header "
                                  f"of src/, which is not installed")
    return errors


def check_tests(modules, owner_of, reachable):
    """Each test binary's sources (and the test headers they include) include only the folders
    of the modules the binary links."""
    alias = aliases()
    links = collections.defaultdict(list)  # a non-module target -> what it links publicly
    for cml in [os.path.join(SRC, "CMakeLists.txt"), os.path.join(SRC, "cli", "CMakeLists.txt")]:
        if not os.path.exists(cml):
            continue
        for words in cmake_calls(cml, "target_link_libraries"):
            scope = None
            for w in words[1:]:
                if w in ("PUBLIC", "PRIVATE", "INTERFACE"):
                    scope = w
                elif scope in (None, "PUBLIC", "INTERFACE"):
                    links[words[0]].append(w)

    def modules_of(libs):
        """The modules whose headers a target linking `libs` sees."""
        seen_targets, found, stack = set(), set(), list(libs)
        while stack:
            lib = stack.pop()
            if lib in seen_targets:
                continue
            seen_targets.add(lib)
            name = target_name(lib, alias)
            if name in modules:
                found |= {name} | reachable(name)
                continue
            stack.extend(links.get(alias.get(lib, lib), []))
        return found

    cml = os.path.join(TESTS, "CMakeLists.txt")
    variables = {}
    for words in cmake_calls(cml, "set"):
        if len(words) > 1:
            variables[words[0]] = words[1:]
    for words in cmake_calls(cml, "file"):
        if words and words[0] in ("GLOB", "GLOB_RECURSE") and len(words) > 2:
            patterns = [w.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "") for w in words[2:]
                        if w != "CONFIGURE_DEPENDS"]
            variables[words[1]] = [os.path.relpath(p, TESTS)
                                   for pat in patterns
                                   for p in glob.glob(os.path.join(TESTS, pat),
                                                      recursive=words[0] == "GLOB_RECURSE")]

    def expand(words):
        out = []
        for w in words:
            m = re.fullmatch(r"\$\{(\w+)\}", w)
            out.extend(expand(variables.get(m.group(1), [])) if m else [w])
        return out

    binaries = {}  # name -> (sources under tests/, links)
    for words in cmake_calls(cml, "elasticjob_unit_tests"):
        if not words or "$" in words[0]:
            continue
        folder = words[0]
        sources = sorted(os.path.relpath(p, TESTS) for p in
                         glob.glob(os.path.join(TESTS, "unit", folder, "**", "*_test.cc"),
                                   recursive=True))
        binaries[f"{folder}_unit_tests"] = (sources, list(words[1:]))
    for words in cmake_calls(cml, "add_executable"):
        if words and "$" not in words[0]:
            binaries[words[0]] = ([w for w in expand(words[1:]) if w.endswith(".cc")], [])
    for words in cmake_calls(cml, "target_link_libraries"):
        if words and words[0] in binaries:
            binaries[words[0]][1].extend(w for w in words[1:] if w not in ("PRIVATE", "PUBLIC"))

    errors = []
    for binary, (sources, libs) in sorted(binaries.items()):
        allowed = modules_of(libs)
        seen, queue = set(), [s for s in sources if os.path.exists(os.path.join(TESTS, s))]
        while queue:
            rel = queue.pop()
            if rel in seen:
                continue
            seen.add(rel)
            for inc in INCLUDE.findall(open(os.path.join(TESTS, rel)).read()):
                if inc.startswith("elasticjob/"):
                    continue
                if os.path.exists(os.path.join(SRC, inc)):
                    target = owner_of(inc)
                    if target is not None and target not in allowed:
                        errors.append(f"tests/{rel} (in {binary}) includes \"{inc}\" of module "
                                      f"{target}, which {binary} does not link")
                else:  # a test header (tests/, tests/integration/): held to the same links
                    queue.extend(h for h in (inc, os.path.join("integration", inc))
                                 if os.path.exists(os.path.join(TESTS, h)))
    return errors


if __name__ == "__main__":
    sys.exit(main())
