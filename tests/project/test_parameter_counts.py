"""No production function declares more than ten parameters: a longer list is a set of options that wants a
name (a typed options value, as ``fund evaluate``, ``fund history`` and ``eval`` take), and a command's flags
are generated from such declarations instead of being listed one by one."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOPS = ("core", "methodology", "domains", "models", "training", "evaluation", "app")
MOST = 10


def declared(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters as written (``*args`` and ``**kwargs`` count one each; a method's ``self``/``cls`` does not)."""
    a = fn.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
    return count - 1 if names and names[0].arg in ("self", "cls") else count


def wide_functions(root: Path = REPO, tops: tuple[str, ...] = TOPS) -> list[str]:
    out = []
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and declared(node) > MOST:
                    out.append(f"{path.relative_to(root).as_posix()}:{node.name}")
    return out


def test_no_production_function_declares_more_than_ten_parameters() -> None:
    assert wide_functions() == []


def test_the_count_sees_every_kind_of_parameter(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text(
        "def ok(a, b, c, d, e, f, g, h, i, j): ...\n"
        "def wide(a, /, b, *args, c, d, e, f, g, h, i, **kw): ...\n"
        "class C:\n    def method(self, a, b, c, d, e, f, g, h, i, j): ...\n"
        "    async def wide_async(self, a, b, c, d, e, f, g, h, i, j, k): ...\n"
    )
    assert wide_functions(tmp_path, ("core",)) == ["core/x.py:wide", "core/x.py:wide_async"]
