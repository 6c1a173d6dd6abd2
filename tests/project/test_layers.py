"""Proof that a pack is one folder: imports only go down the layers, and generic code never names a pack.

Layers: app → training / evaluation → models → domains → methodology → core. ``training/`` and ``evaluation/``
never import each other (training receives the harness as a function) and, like ``models/``, reach packs only
through ``evaluator.domains.base`` and ``evaluator.domains.registry``. Pack names may appear in ``models/``,
``training/`` and ``evaluation/`` only in comments and docstrings; ``methodology/`` never refers to a pack by
its name, module or folder; outside its own folder, ko-grammar is named only by the registry and the package
list (and its own tests and docs).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYER = {"core": 0, "methodology": 1, "domains": 2, "models": 3, "training": 4, "evaluation": 4, "app": 5}
SIBLINGS = {"training": "evaluation", "evaluation": "training"}
GENERIC = ("models", "training", "evaluation")
GENERIC_DOMAINS = {"evaluator.domains", "evaluator.domains.base", "evaluator.domains.registry"}


def pack_folders() -> list[str]:
    """Every pack: a folder of ``domains/`` holding an ``__init__.py`` (a new pack is covered without edits)."""
    return sorted(p.parent.name for p in (REPO / "domains").glob("*/__init__.py"))


PACKS = pack_folders()
_NAMES = sorted({n for p in PACKS for n in (p, p.replace("_", "-"))}, key=len, reverse=True)
PACK_NAME = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, _NAMES)) + r")(?![A-Za-z0-9])", re.IGNORECASE)
KO_GRAMMAR = re.compile(r"ko[-_]grammar|KoGrammar", re.IGNORECASE)


def python_files(top: str) -> list[Path]:
    return sorted(p for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every ``evaluator.*`` module a file imports (function-level imports included)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("evaluator.")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evaluator."):
            out.append((node.lineno, node.module))
    return out


def layer_violations(top: str) -> list[str]:
    bad = []
    for path in python_files(top):
        for lineno, module in imported_modules(path):
            target = module.split(".")[1]
            where = f"{path.relative_to(REPO)}:{lineno} imports {module}"
            if target in LAYER and LAYER[target] > LAYER[top]:
                bad.append(f"{where} (a higher layer)")
            elif SIBLINGS.get(top) == target:
                bad.append(f"{where} (a sibling floor; pass a function in instead)")
            elif top in GENERIC and target == "domains" and not any(
                module == g for g in GENERIC_DOMAINS
            ):
                bad.append(f"{where} (a pack; use the registry)")
    return bad


def test_imports_only_go_down_the_layers() -> None:
    assert [v for top in LAYER for v in layer_violations(top)] == []


def test_the_layer_check_sees_a_violation(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("def f():\n    from evaluator.domains.fund.pack import FundPack\n", encoding="utf-8")
    assert imported_modules(sample) == [(2, "evaluator.domains.fund.pack")]


def room_faces() -> dict[str, Path]:
    """Every room of every pack (a sub-package ``domains/<pack>/<room>/``) by its module name: the name is the
    room's public face, its package ``__init__``; the modules inside are the room's own."""
    return {f"evaluator.domains.{p.parent.parent.name}.{p.parent.name}": p.parent for p in (REPO / "domains").glob("*/*/__init__.py")}


def module_of(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(("evaluator", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def imported_names(path: Path) -> list[tuple[int, str, tuple[str, ...]]]:
    """Every ``evaluator.*`` import of a file with the names it takes (none for ``import a.b``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, ()) for a in node.names if a.name.startswith("evaluator.")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evaluator."):
            out.append((node.lineno, node.module, tuple(a.name for a in node.names)))
    return out


def room_violations(path: Path, here: str, faces: dict[str, Path]) -> list[str]:
    """Imports by ``path`` (module ``here``) of a room's inner module, from outside that room: from another room,
    the pack's own top level or anywhere else (the app). ``from <room> import <module>`` counts as well."""
    bad = []
    for lineno, module, names in imported_names(path):
        for face, folder in faces.items():
            if here == face or here.startswith(face + "."):
                continue
            inner = [module] if module.startswith(face + ".") else [
                f"{face}.{n}" for n in names
                if module == face and n not in public_names(folder) and ((folder / f"{n}.py").exists() or (folder / n).is_dir())
            ]  # fmt: skip
            where = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
            bad += [f"{where}:{lineno} imports {m} (inside a room; import from {face})" for m in inner]
    return bad


def public_names(folder: Path) -> set[str]:
    """The names a room's face lists in ``__all__`` (a function may share its module's name: it is the face's)."""
    for node in ast.parse((folder / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def test_rooms_are_reached_only_through_their_public_face() -> None:
    faces = room_faces()
    assert {"evaluator.domains.fund.engine", "evaluator.domains.fund.history"} <= set(faces)
    bad = [v for top in LAYER for path in python_files(top) for v in room_violations(path, module_of(path), faces)]
    assert bad == []


def test_every_room_names_its_public_face() -> None:
    """Each face lists what it offers in ``__all__``, and every name there is really importable from it; none is
    one of the room's modules (a function named like its module stays the function once every module is loaded)."""
    import importlib
    import pkgutil
    import types

    for face, folder in room_faces().items():
        module = importlib.import_module(face)
        for inner in pkgutil.iter_modules([str(folder)]):
            importlib.import_module(f"{face}.{inner.name}")
        assert module.__all__, face
        assert [n for n in module.__all__ if not hasattr(module, n)] == [], face
        assert [n for n in module.__all__ if isinstance(getattr(module, n), types.ModuleType)] == [], face


def test_the_room_check_sees_a_reach_inside(tmp_path: Path) -> None:
    faces = room_faces()
    sample = tmp_path / "x.py"
    sample.write_text(
        "from evaluator.domains.fund.engine import evaluate_loaded\n"
        "from evaluator.domains.fund.engine.resets import BASE\n"
        "def f():\n    from evaluator.domains.fund.engine import inputs\n"
        "    import evaluator.domains.fund.data.readers\n",
        encoding="utf-8",
    )
    found = [v.split(" imports ")[1].split(" ")[0] for v in room_violations(sample, "evaluator.domains.fund.history.x", faces)]
    assert found == [
        "evaluator.domains.fund.engine.resets", "evaluator.domains.fund.engine.inputs",
        "evaluator.domains.fund.data.readers",
    ]  # fmt: skip
    assert room_violations(sample, "evaluator.domains.fund.engine.x", faces)[0].split(" imports ")[1].startswith(
        "evaluator.domains.fund.data.readers"
    )  # its own room's modules are a room's own business


def test_rooms_depend_on_each_other_without_a_loop() -> None:
    """Faces import their rooms eagerly, so a loop between rooms would be an import loop; and nothing in a
    room points up at the pack's top module (``pack.py``), which sits above every room."""
    faces = room_faces()
    graph: dict[str, set[str]] = {face: set() for face in faces}
    up = []
    for face, folder in faces.items():
        for path in sorted(folder.rglob("*.py")):
            for lineno, module, _ in imported_names(path):
                graph[face] |= {f for f in faces if f != face and (module == f or module.startswith(f + "."))}
                if module.endswith(".pack") and module.count(".") == 3:
                    up.append(f"{path.relative_to(REPO)}:{lineno} imports {module}")
    assert up == []
    done: set[str] = set()

    def visit(face: str, path: tuple[str, ...]) -> None:
        assert face not in path, " -> ".join((*path, face))
        if face not in done:
            for nxt in sorted(graph[face]):
                visit(nxt, (*path, face))
            done.add(face)

    for face in sorted(graph):
        visit(face, ())


def test_only_the_command_line_imports_the_commands() -> None:
    """``app/commands/`` is the command line's edge: the CLI mounts it; services, storage, the API and the pages
    never import it (what a command and a service share lives below, e.g. ``app/pack_services.py``)."""
    hits = [
        f"{path.relative_to(REPO)}:{lineno} imports {module}"
        for path in python_files("app")
        if path.relative_to(REPO).as_posix() != "app/cli.py" and not path.relative_to(REPO).as_posix().startswith("app/commands/")
        for lineno, module in imported_modules(path)
        if module == "evaluator.app.commands" or module.startswith("evaluator.app.commands.")
    ]  # fmt: skip
    assert hits == []


def test_every_pack_is_covered_by_the_name_check() -> None:
    assert {"gsm8k", "fund", "ko_grammar"} <= set(PACKS)
    assert all(PACK_NAME.search(name) for name in PACKS)
    from evaluator.domains.registry import pack_names

    assert {n.replace("-", "_") for n in pack_names()} <= set(PACKS)


def test_core_imports_nothing_of_the_project_and_siblings_stay_apart() -> None:
    assert [m for p in python_files("core") for _, m in imported_modules(p) if not m.startswith("evaluator.core")] == []
    assert not any("evaluator.evaluation" in m for p in python_files("training") for _, m in imported_modules(p))
    assert not any("evaluator.training" in m for p in python_files("evaluation") for _, m in imported_modules(p))


def code_tokens(path: Path) -> list[tuple[int, str]]:
    """Names and string literals of a file, without comments and docstrings."""
    out = []
    previous = None
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL):
            continue
        is_docstring = tok.type == tokenize.STRING and previous in (
            None, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE,
        )  # fmt: skip
        if tok.type in (tokenize.NAME, tokenize.STRING) and not is_docstring:
            out.append((tok.start[0], tok.string))
        previous = tok.type
    return out


def names_a_pack(text: str) -> bool:
    """An identifier or string literal that refers to a pack as such: its name, its module, its folder."""
    if text in ("gsm8k", "fund", "ko_grammar"):
        return True
    if text[:1] in "\"'" or text[:2].lower() in ("f\"", "f'", "r\"", "r'"):
        body = text.lstrip("rRfFbBuU").strip("\"'")
        return body in ("gsm8k", "fund", "ko-grammar", "ko_grammar") or bool(
            re.search(r"domains[./](gsm8k|fund|ko_grammar)|runs/(gsm8k|fund|ko-grammar)", body)
        )
    return False


def test_training_and_evaluation_name_no_pack_in_code() -> None:
    hits = [
        f"{path.relative_to(REPO)}:{line}: {text[:60]}"
        for top in GENERIC
        for path in python_files(top)
        for line, text in code_tokens(path)
        if PACK_NAME.search(text)
    ]
    assert hits == []


def test_methodology_names_no_pack_in_code() -> None:
    """The methodology is a fund-rating methodology, so its messages and PDF patterns speak of funds; what it
    must not do is refer to the pack (its name, module or folder)."""
    hits = [
        f"{path.relative_to(REPO)}:{line}: {text[:60]}"
        for top in ("methodology", "core")
        for path in python_files(top)
        for line, text in code_tokens(path)
        if names_a_pack(text)
    ]
    assert hits == []
    assert names_a_pack('"fund"') and names_a_pack("gsm8k") and names_a_pack('"evaluator.domains.fund.pack"')
    assert not names_a_pack('"such a fund would have"') and not names_a_pack('r"fund\\s*size"')


def test_the_name_check_ignores_docstrings_and_comments_but_not_code(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text('"""About gsm8k."""\n# fund\nx = "runs/gsm8k"\n', encoding="utf-8")
    assert [t for _, t in code_tokens(sample) if PACK_NAME.search(t)] == ['"runs/gsm8k"']


ALLOWED_KO_GRAMMAR = {"domains/registry.py"}


def tracked_files() -> list[Path]:
    import subprocess

    try:
        out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):  # not a checkout: every file, build outputs left out below
        return sorted(p for p in REPO.rglob("*") if p.is_file())
    return [REPO / line for line in out.splitlines() if line]


def test_only_the_registry_and_package_list_name_ko_grammar() -> None:
    hits = []
    for path in tracked_files():
        rel = path.relative_to(REPO).as_posix()
        if not path.is_file() or path.suffix not in (".py", ".toml", ".json", ".yaml", ".yml", ".cfg", ".txt"):
            continue
        if ".egg-info/" in rel or rel.startswith(("build/", ".venv/")):
            continue
        if rel.startswith((".", "domains/ko_grammar/", "tests/packs/test_ko_grammar")) or "/." in rel or "__pycache__" in rel:
            continue
        if rel in ALLOWED_KO_GRAMMAR or rel == "tests/project/test_layers.py":
            continue
        if KO_GRAMMAR.search(path.read_text(encoding="utf-8", errors="replace")):
            hits.append(rel)
    assert hits == []


# The fund pack's own commands (and cli.py, which mounts them; methodology.py, the fund-rating methodology
# commands; storage/, api/, the db/keys/users/audit commands and the services packs' commands reach, the fund
# evaluation service) may name it; the demo walks through the packs by name.
APP_MAY_NAME = {
    "app/cli.py", "domains/fund/cli/evaluate.py", "domains/fund/cli/agreement.py", "domains/fund/cli/history.py",
    "domains/fund/cli/companies.py",
    "app/commands/methodology.py",
    "app/demo.py", "app/fund_demo.py", "app/commands/demo.py", "app/commands/db.py", "app/commands/keys.py",
    "app/pack_services.py",
    "app/commands/users.py", "app/commands/audit.py",
}  # fmt: skip
APP_MAY_NAME_UNDER = ("app/api/", "app/storage/", "app/web/")


def test_app_names_a_pack_only_in_the_fund_packs_own_commands() -> None:
    hits = [
        f"{path.relative_to(REPO)}:{line}: {text[:60]}"
        for path in python_files("app")
        if path.relative_to(REPO).as_posix() not in APP_MAY_NAME
        and not path.relative_to(REPO).as_posix().startswith(APP_MAY_NAME_UNDER)
        for line, text in code_tokens(path)
        if PACK_NAME.search(text)
    ]
    assert hits == []
