"""setup.py installs every package folder under the floors, so no pack is half-installed and a new one needs no lines."""

from __future__ import annotations

import os
import runpy
import shutil
from pathlib import Path
from typing import Any

import setuptools

REPO = Path(__file__).resolve().parents[2]
TOP = ("app", "core", "models", "methodology", "domains", "training", "evaluation")


def package_folders(root: Path = REPO) -> set[str]:
    """``evaluator.<dotted path>`` of every folder holding an ``__init__.py`` under the top folders."""
    found = set()
    for top in TOP:
        if not (root / top).is_dir():
            continue
        for init in (root / top).rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            found.add("evaluator." + ".".join(rel.parts))
    return found


def discovered(root: Path) -> set[str]:
    """The package list setup.py hands to setuptools, run in ``root`` as a build would."""
    seen: dict[str, Any] = {}
    cwd, real = os.getcwd(), setuptools.setup
    try:
        os.chdir(root)
        setuptools.setup = lambda **kwargs: seen.update(kwargs)
        runpy.run_path(str(root / "setup.py"))
    finally:
        setuptools.setup = real
        os.chdir(cwd)
    assert seen["package_dir"] == {"evaluator": "."}
    return set(seen["packages"])


def test_every_package_folder_is_installed() -> None:
    found = discovered(REPO)
    assert package_folders() - found == set()
    assert {"evaluator.domains.fund.engine", "evaluator.models", "evaluator.core"} <= found
    assert not any(name.startswith(("evaluator.tests", "evaluator.benchmarks")) for name in found)


def test_a_new_pack_folder_is_found_without_editing_anything(tmp_path: Path) -> None:
    shutil.copy(REPO / "setup.py", tmp_path / "setup.py")
    for top in TOP:
        (tmp_path / top).mkdir()
        (tmp_path / top / "__init__.py").write_text("")
    pack = tmp_path / "domains" / "chess"
    (pack / "rules").mkdir(parents=True)
    (pack / "__init__.py").write_text("")
    (pack / "rules" / "__init__.py").write_text("")
    found = discovered(tmp_path)
    assert {"evaluator.domains.chess", "evaluator.domains.chess.rules"} <= found
    assert package_folders(tmp_path) <= found
