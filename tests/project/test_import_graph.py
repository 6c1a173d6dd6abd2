"""No import loops among the project's modules, counting imports inside functions, and project modules imported
at the top of a file everywhere but the command-line edge.

A loop that exists only because one side imports inside a function still ties the modules together: neither
can be read, tested or moved without the other, and the import order decides whether it works at all. The
graph is read from the source (AST), so a module that is never imported in a test still counts. Importing
``a.b.c`` also runs the package ``a.b``'s ``__init__``, so that is an edge too (except for the packages the
importing module itself sits in, which are already loading).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOPS = ("core", "methodology", "domains", "models", "training", "evaluation", "app")
LAZY_EDGE = ("app/cli.py", "app/commands/")
"""The command-line edge: a command imports what it runs only when it runs, so ``--help`` stays fast."""


def lazy_edge(rel: str) -> bool:
    """The CLI edge: ``app/cli.py``, ``app/commands/``, and a pack's own commands (``domains/<pack>/cli/`` or
    ``domains/<pack>/cli.py``)."""
    parts = rel.split("/")
    pack_cli = len(parts) >= 3 and parts[0] == "domains" and (parts[2] == "cli" or parts[2] == "cli.py")
    return rel.startswith(LAZY_EDGE) or pack_cli


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["evaluator", *parts])


def production_modules(root: Path = REPO) -> dict[str, Path]:
    return {
        module_name(p, root): p
        for top in TOPS
        for p in sorted((root / top).rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def _targets(node: ast.AST, here: str, is_package: bool, modules: dict[str, Path]) -> list[str]:
    """The dotted names an import statement loads: ``import a.b`` → ``a.b``; ``from a import b`` → ``a`` and,
    when ``b`` is a module, ``a.b`` (``a`` itself left out when ``b`` is a module of the package ``here`` sits
    in: that package is already loading, and only its submodule is read)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = here.split(".") if is_package else here.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    submodules = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in modules]
    only_submodules = len(submodules) == len(node.names)
    own_package = here.startswith(module + ".")
    return [*([] if only_submodules and own_package else [module]), *submodules]


def imports_of(path: Path, here: str, modules: dict[str, Path]) -> list[tuple[int, str, bool]]:
    """(line, module, inside a function?) for every project module a file imports, the packages above it too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_function: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            in_function |= {id(n) for n in ast.walk(fn) if n is not fn}
    own = {".".join(here.split(".")[:i]) for i in range(1, here.count(".") + 2)}
    out = []
    for node in ast.walk(tree):
        for name in _targets(node, here, path.name == "__init__.py", modules):
            if not name.startswith("evaluator."):
                continue
            parts = name.split(".")
            for i in range(2, len(parts) + 1):
                candidate = ".".join(parts[:i])
                if candidate in modules and candidate != here and (candidate == name or candidate not in own):
                    out.append((node.lineno, candidate, id(node) in in_function))
    return out


def import_graph(root: Path = REPO) -> dict[str, set[str]]:
    modules = production_modules(root)
    return {m: {t for _, t, _ in imports_of(p, m, modules)} for m, p in modules.items()}


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_no_import_loops_counting_imports_inside_functions() -> None:
    assert loops(import_graph()) == []


def test_the_loop_finder_sees_a_loop_made_by_an_import_inside_a_function(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "a.py").write_text("from evaluator.core.b import x\n")
    (tmp_path / "core" / "b.py").write_text("x = 1\n\ndef f():\n    from evaluator.core.a import y\n")
    (tmp_path / "core" / "c.py").write_text("from evaluator.core import a\n")
    (tmp_path / "core" / "d.py").write_text("from evaluator.core import a, c\nfrom evaluator.core.b import x\n")
    graph = import_graph(tmp_path)
    assert graph["evaluator.core.a"] == {"evaluator.core.b"}
    assert graph["evaluator.core.c"] == {"evaluator.core.a"}  # its own package's module, not the package
    assert graph["evaluator.core.d"] == {"evaluator.core.a", "evaluator.core.b", "evaluator.core.c"}
    assert loops(graph) == [["evaluator.core.a", "evaluator.core.b"]]


def test_a_package_facade_that_imports_its_importer_is_a_loop(tmp_path: Path) -> None:
    """``x`` imports ``p.inner``, which runs ``p/__init__``, which imports ``x``: a loop, though no line names it."""
    (tmp_path / "core" / "p").mkdir(parents=True)
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "p" / "__init__.py").write_text("from evaluator.core.x import y\n")
    (tmp_path / "core" / "p" / "inner.py").write_text("from evaluator.core.p.sibling import z\n")
    (tmp_path / "core" / "p" / "sibling.py").write_text("z = 1\n")
    (tmp_path / "core" / "x.py").write_text("from evaluator.core.p.inner import w\ny = 1\n")
    (tmp_path / "core" / "p" / "reader.py").write_text("from evaluator.core.p import z\n")  # a name of p
    graph = import_graph(tmp_path)
    assert "evaluator.core.p" not in graph["evaluator.core.p.inner"]  # its own package is already loading
    assert graph["evaluator.core.p.reader"] == {"evaluator.core.p"}  # a name the package's __init__ holds
    assert loops(graph) == [["evaluator.core.p", "evaluator.core.x"]]


def test_project_modules_are_imported_at_the_top_outside_the_command_line_edge() -> None:
    """Inside a function a file may import a heavy library (torch, transformers …), never a project module,
    except at the CLI edge, where lazy loading keeps ``--help`` fast."""
    modules = production_modules()
    hits = [
        f"{path.relative_to(REPO).as_posix()}:{line} imports {target}"
        for name, path in modules.items()
        if not lazy_edge(path.relative_to(REPO).as_posix())
        for line, target, inside in imports_of(path, name, modules)
        if inside
    ]
    assert sorted(set(hits)) == []


def test_the_edge_is_the_command_line_only() -> None:
    assert lazy_edge("app/cli.py") and lazy_edge("app/commands/train.py")
    assert lazy_edge("domains/fund/cli/evaluate.py") and lazy_edge("domains/other_pack/cli.py")
    assert not lazy_edge("app/web/pages.py") and not lazy_edge("domains/fund/engine/grade.py")
    assert not lazy_edge("training/grpo.py") and not lazy_edge("app/config_options.py")


def test_the_command_line_starts_without_the_libraries_its_commands_load(tmp_path: Path) -> None:
    """``evaluator --help`` builds every command's flags, the packs' too, and runs none: the modules below the
    edge import their libraries at the top, so the edge (and the services it hands the packs' commands, loaded on
    first use) is what keeps data, database, web and model libraries out of start-up."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    for _attempt in range(2):  # the first may read TRL's field schema into its cache (trl_fields); the second not
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "evaluator.app.cli", "--help"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
        )  # fmt: skip
    assert proc.returncode == 0 and "fund" in proc.stdout, proc.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    }
    heavy = {"numpy", "pandas", "pyarrow", "sqlalchemy", "fastapi", "matplotlib", "torch", "transformers", "trl"}
    assert heavy & {name.split(".")[0] for name in imported} == set()
    assert "evaluator.domains.fund.cli.evaluate" in imported  # the packs' flags were built too
