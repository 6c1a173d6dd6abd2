"""The explicit package list in pyproject.toml covers every package folder, so no pack is half-installed."""

from __future__ import annotations

from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
TOP = ("app", "methodology", "domains", "training", "evaluation")


def _declared() -> tuple[set[str], dict[str, str]]:
    doc = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    tool = doc["tool"]["setuptools"]
    return set(tool["packages"]), dict(tool["package-dir"])


def package_folders(root: Path = REPO) -> set[str]:
    """``evaluator.<dotted path>`` of every folder holding an ``__init__.py`` under the five top folders."""
    found = set()
    for top in TOP:
        for init in (root / top).rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            found.add("evaluator." + ".".join(rel.parts))
    return found


def missing_packages(root: Path = REPO) -> list[str]:
    packages, dirs = _declared()
    problems = [f"{name} is not in [tool.setuptools] packages" for name in sorted(package_folders(root) - packages)]
    for name in sorted(packages):
        folder = dirs.get(name)
        if folder is None:
            problems.append(f"{name} has no [tool.setuptools.package-dir] entry")
        elif folder != name.removeprefix("evaluator.").replace(".", "/"):
            problems.append(f"{name} maps to {folder}, not its own folder")
    return problems


def test_every_package_folder_is_listed() -> None:
    assert missing_packages() == []


def test_a_new_pack_folder_that_is_not_listed_is_caught(tmp_path: Path) -> None:
    for top in TOP:
        (tmp_path / top).mkdir()
    pack = tmp_path / "domains" / "chess"
    pack.mkdir()
    (pack / "__init__.py").write_text("")
    (tmp_path / "domains" / "__init__.py").write_text("")
    assert package_folders(tmp_path) == {"evaluator.domains", "evaluator.domains.chess"}
    packages, _ = _declared()
    assert "evaluator.domains.chess" in package_folders(tmp_path) - packages
