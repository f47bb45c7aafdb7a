"""The driver's import graph (issue 23, items 2 and 4), read from the sources with ``ast``.

- no import cycle among the package's own modules (function-local imports included: a cycle
  hidden in a function is still a cycle, and the reason the layout is hard to follow);
- no module takes names from the package's own ``__init__`` (``from reducetune import Space``,
  ``import reducetune``): the public API re-exports the subpackages, never the reverse
  (``__main__`` aside; ``from reducetune import _core`` imports a module, not a name);
- imports at the top of the module, except heavy or optional dependencies (each with a
  one-line reason on its line or the line above) and the allow-list below (each with its
  reason);
- no ``import sqlite3`` and no SQL text outside ``reducetune/store``: the store is the one
  place that opens a results file.

Each rule is also run on a small broken package built in a temporary folder, so that a
checker that stopped seeing anything fails here too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "driver" / "reducetune"

# Imported inside functions on purpose: heavy (seconds, or a GPU context) or optional.
LAZY_OK = {"torch", "cupy", "numpy", "matplotlib", "optuna", "sqlalchemy", "pandas", "cmaes",
           "fcntl", "jax"}

# (module, imported module) -> why it is imported inside a function.
LOCAL_OWN_ALLOWED: dict[tuple[str, str], str] = {
    ("reducetune.cli.device_worker", "reducetune.cli.app"):
        "after prestart: the CLI's imports overlap the GPU worker's start (issue 25, 4ea3947)",
    ("reducetune.cli.device_worker", "reducetune.cli.tune_devices"):
        "after prestart, as the CLI's (issue 25, 26cf730: the worker starts from WORKER_CODE)",
    ("reducetune.cli.device_worker", "reducetune.store.study_storage"):
        "after prestart, as the CLI's (issue 25, 26cf730)",
    ("reducetune.cli.app", "reducetune.cli.commands"):
        "after a GPU tune's prestart (main): every command's module imported while it starts "
        "(issue 25)",
}

SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|CREATE\s+(TABLE|VIEW|INDEX)|"
                 r"DROP\s+(TABLE|VIEW)|UPDATE\s+\w+\s+SET|DELETE\s+FROM|PRAGMA\s+\w+|"
                 r"ATTACH\s+DATABASE|VACUUM\b)", re.I | re.S)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, tuple[Path, ast.Module]]:
    return {module_name(root, p): (p, ast.parse(p.read_text(), str(p)))
            for p in sorted(root.rglob("*.py"))}


def _resolve(name: str, node: ast.ImportFrom) -> str:
    """The absolute module of a relative import."""
    if not node.level:
        return node.module or ""
    base = name.split(".")[: -node.level] if node.level else []
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, tree: ast.Module, own: set[str]) -> list[tuple[str, ast.stmt, bool]]:
    """(imported own module, statement, at top level) for every import of the package's own
    modules; ``from pkg import mod`` counts as an import of ``pkg.mod`` when that is one."""
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in own else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            if t in own:
                out.append((t, node, id(node) in top))
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as [a, b, ..., a], or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state and (found := visit(v)):
                return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state and (found := visit(u)):
            return found
    return None


def graph_of(root: Path) -> dict[str, set[str]]:
    mods = modules(root)
    own = set(mods)
    graph: dict[str, set[str]] = {m: set() for m in own}
    for name, (_, tree) in mods.items():
        for target, _, _ in imports(name, tree, own):
            # importing a.b.c runs a/__init__ and a/b/__init__ first: edges to those too, but
            # a package's __init__ importing its own modules is not a cycle with them
            parts = target.split(".")
            for k in range(1, len(parts) + 1):
                dep = ".".join(parts[:k])
                if dep in own and dep != name and not name.startswith(dep + "."):
                    graph[name].add(dep)
    return graph


def _extension(root: Path, name: str) -> bool:
    """A compiled module of the package (``_core``: its stub is in the tree, the .so is built)."""
    return (root / f"{name}.pyi").exists() or any(root.glob(f"{name}.*.so"))


def init_names(root: Path) -> list[str]:
    """Imports that take names from the package's own __init__ (or the package itself)."""
    pkg = root.name
    mods = modules(root)
    own = set(mods)
    bad = []
    for name, (path, tree) in mods.items():
        if name in (pkg, f"{pkg}.__main__"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == pkg for a in node.names):
                bad.append(f"{path.name}:{node.lineno}: import {pkg}")
            if isinstance(node, ast.ImportFrom) and _resolve(name, node) == pkg:
                names = [a.name for a in node.names
                         if f"{pkg}.{a.name}" not in own and not _extension(root, a.name)]
                if names:
                    bad.append(f"{path.name}:{node.lineno}: from {pkg} import {', '.join(names)}")
    return bad


def local_imports(root: Path) -> list[str]:
    """Function-local imports that are neither of a heavy/optional module with its reason
    nor allowed with a reason in LOCAL_OWN_ALLOWED."""
    mods = modules(root)
    own = set(mods)
    bad = []
    for name, (path, tree) in mods.items():
        lines = path.read_text().splitlines()
        own_local = {id(node): t for t, node, top in imports(name, tree, own) if not top}
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in top:
                continue
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            if id(node) in own_local:
                if (name, own_local[id(node)]) not in LOCAL_OWN_ALLOWED:
                    bad.append(f"{where}: {own_local[id(node)]} imported inside a function")
                continue
            first = (node.names[0].name if isinstance(node, ast.Import)
                     else _resolve(name, node)).split(".")[0]
            said = "#" in lines[node.lineno - 1] or lines[node.lineno - 2].strip().startswith("#")
            if first not in LAZY_OK:
                bad.append(f"{where}: {first} imported inside a function (light: at the top)")
            elif not said:
                bad.append(f"{where}: lazy import of {first} without a one-line reason")
    return bad


def _strings(tree: ast.Module) -> list[tuple[int, str]]:
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def sql_outside_store(root: Path) -> list[str]:
    """``import sqlite3`` or SQL in a string literal (docstrings aside) outside root/store."""
    bad = []
    for name, (path, tree) in modules(root).items():
        if name.startswith(f"{root.name}.store"):
            continue
        where = path.relative_to(root.parent)
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "sqlite3" for n in names):
                bad.append(f"{where}:{node.lineno}: import sqlite3")
        # an f-string's pieces are constants too; joined per line so a split query is seen
        for line, text in _strings(tree):
            if SQL.search(text):
                bad.append(f"{where}:{line}: SQL {text.strip()[:60]!r}")
    return bad


def test_the_driver_has_no_import_cycle():
    cycle = find_cycle(graph_of(PACKAGE))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_module_takes_names_from_the_packages_init():
    assert init_names(PACKAGE) == []


def test_imports_are_at_the_top_unless_heavy_or_allowed_with_a_reason():
    assert local_imports(PACKAGE) == []
    assert all(why.strip() for why in LOCAL_OWN_ALLOWED.values())


def test_no_sqlite3_and_no_sql_outside_the_store():
    assert sql_outside_store(PACKAGE) == []


def test_the_subpackages_are_the_jobs():
    # the layout the README's jobs read from (issue 23 item 2); flat private modules at the
    # top are only the vocabulary every job shares
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert {"tuning", "evaluate", "store", "runtime", "cli", "experiments",
            "benchmarks"} <= subpackages
    flat = {p.stem for p in PACKAGE.glob("*.py")}
    assert flat <= {"__init__", "__main__", "errors", "_space", "_sizes", "_no_gpu"}


# "100 * a / b" written out: a percentage computed outside evaluate/base.py's percent_of.
PERCENT = re.compile(r"\b100(\.0)?\s*\*[^,)\n]*?/")


def percentages_outside_percent_of(root: Path) -> list[str]:
    bad = []
    for name, (path, _) in modules(root).items():
        if name == f"{root.name}.evaluate.base":
            continue
        for k, line in enumerate(path.read_text().splitlines(), 1):
            if PERCENT.search(line.split("#")[0]):
                bad.append(f"{path.relative_to(root.parent)}:{k}: {line.strip()[:60]}")
    return bad


def test_percentages_of_peak_or_ceiling_come_from_one_function():
    # issue 23 item 3: "% of peak", "% of ceiling" (and of the optimum) computed once
    assert percentages_outside_percent_of(PACKAGE) == []


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A package that breaks every rule once."""
    root = tmp_path / "pkg"
    (root / "store").mkdir(parents=True)
    (root / "__init__.py").write_text("from pkg.a import f\n")
    (root / "a.py").write_text("from pkg.b import g\n\ndef f():\n    import json\n    "
                               "from pkg import f\n    return json\n")
    (root / "b.py").write_text("import sqlite3\n\ndef g():\n    from pkg.a import f\n    "
                               "import optuna\n    return 'SELECT x FROM t'\n")
    (root / "store" / "__init__.py").write_text("import sqlite3\nQ = 'SELECT x FROM t'\n"
                                                "P = 100.0 * 3 / 4\n")
    return root


def test_each_check_fails_on_a_package_that_breaks_its_rule(broken: Path):
    assert find_cycle(graph_of(broken)) == ["pkg.a", "pkg.b", "pkg.a"]
    assert init_names(broken) == ["a.py:5: from pkg import f"]
    assert sorted(local_imports(broken)) == [
        "pkg/a.py:4: json imported inside a function (light: at the top)",
        "pkg/a.py:5: pkg imported inside a function",
        "pkg/b.py:4: pkg.a imported inside a function",
        "pkg/b.py:5: lazy import of optuna without a one-line reason"]
    assert sql_outside_store(broken) == ["pkg/b.py:1: import sqlite3",
                                         "pkg/b.py:6: SQL 'SELECT x FROM t'"]
    assert percentages_outside_percent_of(broken) == ["pkg/store/__init__.py:3: P = 100.0 * 3 / 4"]
