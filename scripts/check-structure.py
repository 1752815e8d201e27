#!/usr/bin/env python3
"""Structure checks for the Rust sources: no import circles between files, no import from a
top-level module of the server crate to one in a layer above it (LAYERS), and no file or
function past its size limit. Run by CI; prints each problem and exits 1 if there is one.

A file's size is its product lines: test code (items under `#[cfg(test)]`) does not count, so
tests sit beside the code they test whatever its size. Every function counts, test or not.

Whole files are read, test code included (test folders, and items under `#[cfg(test)]` wherever
they stand): a test may import anything of its own top-level module (its room), even what sits
above it there, without that counting towards a circle; its imports of other rooms follow the
same layers and circle rules as the code it tests.

Usage: scripts/check-structure.py [--max-file-lines N] [--max-fn-lines N] [--report] [ROOT...]
--report prints, besides the problems, the largest files by product lines and every function
over 45 lines (the tables a design review starts from).
Each ROOT is a crate's src directory (default: src, every crates/*/src and every tools/*/src).
The protocol crate (crates/protocol) must not depend on actix, tokio's runtime or anything that
does I/O; the controller's state machine (crates/controller-core) on no runtime, actor framework,
Raft library or I/O; the client, namesrv-bench and nsadmin not on the server; the testkit (crates/testkit)
is a dev-dependency only (FORBIDDEN, TESTKIT_USERS). Every crate root of the workspace (each
package's lib.rs, main.rs and src/bin/*.rs, and benches/*.rs) says `#![forbid(unsafe_code)]`.
"""

import argparse
import pathlib
import re
import sys

USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{)?")
PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


# The server crate's top-level modules, top layer first: a module may import from its own layer
# and the layers below, never from a layer above (src/lib.rs describes the same order).
LAYERS = [
    ["main"],
    ["server"],
    ["preflight", "observe", "health"],
    ["http", "connection"],
    ["service"],
    ["admission"],
    ["acl", "tls"],
    ["kv", "config_store", "warm", "controller"],
    ["registry"],
    ["notifier"],
    ["mailbox", "listen", "io_pool"],
    ["metrics", "filewatch", "ratelog", "persist", "secret_file", "statelock", "origin", "peers", "limits", "clock"],
    ["settings"],
]

# What each crate may not depend on (manifest path -> forbidden dependencies, and why): the
# protocol crate has no actors, no I/O and no state; the client and the load tool speak the
# protocol without the server; the test harness is a dev-dependency only (TESTKIT_USERS).
SERVER_SIDE = ["actix", "actix-rt", "actix-web", "prometheus-client", "namesrv", "namesrv-testkit"]
FORBIDDEN = {
    "crates/protocol/Cargo.toml": (
        ["actix", "actix-rt", "actix-web", "tokio", "socket2", "rustls", "tokio-rustls", "prometheus-client", "namesrv"],
        "the protocol crate has no actors, no I/O and no state",
    ),
    "crates/controller-core/Cargo.toml": (
        ["actix", "actix-rt", "actix-web", "tokio", "tokio-util", "openraft", "socket2", "rustls", "tokio-rustls",
         "prometheus-client", "namesrv", "namesrv-client"],
        "the controller's state machine has no runtime, no actors, no I/O and no Raft",
    ),
    "crates/client/Cargo.toml": (SERVER_SIDE, "the client speaks the protocol without the server"),
    "tools/namesrv-bench/Cargo.toml": (SERVER_SIDE, "the load tool uses the protocol and client crates only"),
    "tools/nsadmin/Cargo.toml": (SERVER_SIDE, "nsadmin uses the protocol and client crates only"),
}
# Manifests that may name the testkit, and only under [dev-dependencies].
TESTKIT_USERS = ["Cargo.toml", "tools/nsadmin/Cargo.toml"]


def manifest_dependencies(manifest):
    """(section, dependency name) of every dependency line of a Cargo.toml."""
    found, section = [], None
    for line in manifest.read_text().splitlines():
        header = re.match(r"^\[([^\]]+)\]", line)
        if header:
            section = header.group(1)
            continue
        dep = re.match(r"^([A-Za-z0-9_-]+)\s*=", line)
        if dep and section and section.endswith("dependencies"):
            found.append((section, dep.group(1)))
    return found


def crate_dependencies(repo):
    """Dependencies FORBIDDEN names, and the testkit anywhere but a [dev-dependencies] section."""
    problems = []
    for path, (forbidden, why) in FORBIDDEN.items():
        manifest = repo / path
        if not manifest.exists():
            problems.append(f"{path} is missing")
            continue
        for section, dep in manifest_dependencies(manifest):
            if section == "dependencies" and dep in forbidden:
                problems.append(f"{path} depends on {dep}: {why}")
    for manifest in [repo / "Cargo.toml"] + sorted(repo.glob("crates/*/Cargo.toml")) + sorted(repo.glob("tools/*/Cargo.toml")):
        rel = str(manifest.relative_to(repo))
        for section, dep in manifest_dependencies(manifest):
            if section == "workspace.dependencies":
                continue
            if dep == "namesrv-testkit" and (section != "dev-dependencies" or rel not in TESTKIT_USERS):
                problems.append(f"{rel} names namesrv-testkit under [{section}]: it is a dev-dependency of {', '.join(TESTKIT_USERS)} only")
    return problems + workspace_inheritance(repo)


def workspace_inheritance(repo):
    """Each dependency the workspace declares is inherited (`workspace = true`), never given a
    version of its own, and every package takes the workspace's lints."""
    root = repo / "Cargo.toml"
    shared = {dep for section, dep in manifest_dependencies(root) if section == "workspace.dependencies"}
    problems = []
    for manifest in [root] + sorted(repo.glob("crates/*/Cargo.toml")) + sorted(repo.glob("tools/*/Cargo.toml")):
        rel, text, section = str(manifest.relative_to(repo)), manifest.read_text(), None
        for line in text.splitlines():
            header = re.match(r"^\[([^\]]+)\]", line)
            if header:
                section = header.group(1)
                continue
            dep = re.match(r"^([A-Za-z0-9_-]+)\s*=", line)
            inherited = re.search(r"workspace\s*=\s*true", line)
            if dep and section in ("dependencies", "dev-dependencies") and dep.group(1) in shared and not inherited:
                problems.append(f"{rel}: {dep.group(1)} is declared by the workspace: write `{dep.group(1)} = {{ workspace = true }}`")
        if not re.search(r"^\[lints\]\s*\nworkspace\s*=\s*true", text, re.M):
            problems.append(f"{rel}: no `[lints] workspace = true`")
    return problems


def crate_roots(repo):
    """Every crate root of the workspace's packages: lib, binaries and benchmarks."""
    for package in [repo] + sorted(repo.glob("crates/*")) + sorted(repo.glob("tools/*")):
        yield from (package / "src" / name for name in ("lib.rs", "main.rs"))
        yield from sorted(package.glob("src/bin/*.rs"))
        yield from sorted(package.glob("benches/*.rs"))


def unsafe_allowed(repo):
    """Crate roots without `#![forbid(unsafe_code)]`."""
    return [
        f"{root.relative_to(repo)}: no #![forbid(unsafe_code)]"
        for root in crate_roots(repo)
        if root.exists() and "#![forbid(unsafe_code)]" not in root.read_text()
    ]


def top_module(root, path):
    """The top-level module a file belongs to: src/registry/tables/mod.rs -> 'registry'."""
    parts = module_path(root, path)
    return parts[0] if parts else path.stem


def upward_imports(root, graph):
    """Imports from a top-level module to one in a higher layer, and modules with no layer."""
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    problems = set()
    for f, targets in graph.items():
        a = top_module(root, f)
        if a == "lib":
            continue
        if a not in layer:
            problems.add(f"module {a} is in no layer of scripts/check-structure.py LAYERS")
            continue
        for t, _ in targets:
            b = top_module(root, t)
            if b in layer and layer[b] < layer[a]:
                problems.add(f"upward import: {f.relative_to(root.parent)} ({a}, layer {layer[a]}) uses {b} (layer {layer[b]})")
    return sorted(problems)


def module_path(root, path):
    """The module path of a file: src/registry/tables.rs -> ['registry', 'tables']."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def resolve(root, modules, current, base, segments):
    """The file a `use` line names: the longest module prefix that is a file of the crate."""
    if base == "crate":
        path = []
    else:
        path = list(current)
        if base == "super":
            path = path[:-1]
    names = [s for s in segments.split("::") if s]
    while names and names[0] == "super":
        path, names = path[:-1], names[1:]
    candidate = path + names
    while candidate:
        if tuple(candidate) in modules:
            return modules[tuple(candidate)]
        candidate = candidate[:-1]
    return None


def test_lines(lines, whole_file):
    """Which lines are test code: every line of a test file (`whole_file`), else each item under a
    `#[cfg(test)]` attribute, to the end of its braces (or its `;`), wherever it stands in the file."""
    if whole_file:
        return [True] * len(lines)
    marks, i = [False] * len(lines), 0
    while i < len(lines):
        if lines[i].strip() != "#[cfg(test)]":
            i += 1
            continue
        marks[i], depth, opened, j = True, 0, False, i + 1
        while j < len(lines):
            code = lines[j].split("//")[0]
            marks[j] = True
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if (opened and depth <= 0) or (not opened and code.rstrip().endswith(";")):
                break
            j += 1
        i = j + 1
    return marks


def import_graph(root):
    """Every file's imports, read over the whole file: `(target, from_test_code)` per import.
    Test code is a test module's file (under a `tests` folder) or an item under `#[cfg(test)]`."""
    files = list(root.rglob("*.rs"))
    modules = {tuple(module_path(root, f)): f for f in files}
    graph = {f: set() for f in files}
    for f in files:
        current = module_path(root, f)
        cur = current[:-1] if f.name == "mod.rs" else current
        lines = f.read_text().splitlines()
        tests = test_lines(lines, "tests" in f.relative_to(root).parts)
        for line, in_test in zip(lines, tests):
            code = line.split("//")[0]
            if code.lstrip().startswith(("mod ", "pub mod ", "pub(crate) mod ")):
                continue
            m = USE.match(code)
            refs = [(m.group(1), m.group(2))] if m else [(b, p) for b, p in PATH.findall(code)]
            for base, segments in refs:
                target = resolve(root, modules, cur, base, segments)
                if target is not None and target != f and not is_descendant(root, target, f):
                    graph[f].add((target, in_test))
    return graph


def circle_graph(root, graph):
    """The edges that can make an import circle: all but test code's imports within its own
    top-level module (a test may use what is above it in its own room, never another room's)."""
    return {
        f: {t for t, in_test in targets if not (in_test and top_module(root, t) == top_module(root, f))}
        for f, targets in graph.items()
    }


def is_descendant(root, target, f):
    """True when `f` is the mod.rs of a directory that holds `target` (declaring is not importing)."""
    return f.name == "mod.rs" and f.parent in target.parents


def cycles(graph):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def product_lines(root, path):
    """Lines of `path` that are not test code (see `test_lines`)."""
    lines = path.read_text().splitlines()
    return sum(1 for t in test_lines(lines, "tests" in path.relative_to(root).parts) if not t)


def report(repo, roots, files=25, fn_lines=45):
    """The size tables: the largest files by product lines, and every function over `fn_lines`."""
    sizes, functions = [], []
    for root in roots:
        for f in sorted(root.rglob("*.rs")):
            rel = f.relative_to(repo)
            sizes.append((product_lines(root, f), len(f.read_text().splitlines()), rel))
            functions += [(length, f"{rel}:{line}", name) for name, line, length in long_functions(f, fn_lines)]
    print(f"largest files (product lines, all lines), top {files}:")
    for product, total, rel in sorted(sizes, reverse=True)[:files]:
        print(f"  {product:5d} {total:5d}  {rel}")
    print(f"functions over {fn_lines} lines: {len(functions)}")
    for length, where, name in sorted(functions, reverse=True):
        print(f"  {length:3d}  {where} {name}")


def long_functions(path, limit):
    lines = path.read_text().splitlines()
    found = []
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        indent = m.group(1)
        for j in range(i + 1, len(lines)):
            if lines[j] == indent + "}" or (lines[j].startswith(indent + "}") and lines[j].strip() in ("}", "});", "})")):
                if j - i + 1 > limit:
                    found.append((m.group(2), i + 1, j - i + 1))
                break
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-file-lines", type=int, default=420)
    ap.add_argument("--max-fn-lines", type=int, default=60)
    ap.add_argument("--report", action="store_true", help="print the size tables too")
    ap.add_argument("roots", nargs="*")
    args = ap.parse_args()
    repo = pathlib.Path(__file__).resolve().parent.parent
    roots = [pathlib.Path(r) for r in args.roots] or (
        [repo / "src"] + sorted(repo.glob("crates/*/src")) + sorted(repo.glob("tools/*/src"))
    )
    problems = crate_dependencies(repo) + unsafe_allowed(repo)
    for root in roots:
        graph = import_graph(root)
        for comp in cycles(circle_graph(root, graph)):
            names = ", ".join(sorted(str(p.relative_to(repo)) for p in comp))
            problems.append(f"import circle: {names}")
        if root.resolve() == (repo / "src").resolve():
            problems += upward_imports(root.resolve(), graph)
        for f in sorted(root.rglob("*.rs")):
            n = product_lines(root, f)
            if n > args.max_file_lines:
                problems.append(f"{f.relative_to(repo)}: {n} product lines (max {args.max_file_lines})")
            for name, line, length in long_functions(f, args.max_fn_lines):
                problems.append(f"{f.relative_to(repo)}:{line}: fn {name} is {length} lines (max {args.max_fn_lines})")
    if args.report:
        report(repo, roots)
    for p in problems:
        print(p)
    print(f"structure: {len(problems)} problem(s) in {', '.join(str(r.relative_to(repo)) for r in roots)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
