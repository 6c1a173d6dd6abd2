"""Proof of ``docs/adding-a-pack.md``: a new pack is its own folder plus one registry line, and nothing else.

A copy of the source floors gets ``domains/parrot/`` (a pack with a reward, a metric-free grader and a command
of its own) and one line in ``domains/registry.py``. Then, without touching any other file: packaging finds
the pack, the command line lists it, mounts its command and scores predictions with it, and the layering
tests, run on the copy, cover it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLOORS = ("app", "core", "models", "methodology", "domains", "training", "evaluation")

PACK_FILES = {
    "__init__.py": '"""The parrot pack: repeat a Korean word after ``답:``."""\n',
    "rewards.py": '''"""Parrot rewards: one small pure function."""

from __future__ import annotations

from typing import Any

from evaluator.domains.base import completion_text


def answer_of(text: str) -> str | None:
    """The word after ``답:`` on the last line that has one."""
    lines = [line for line in text.splitlines() if line.strip().startswith("답:")]
    return lines[-1].split(":", 1)[1].strip() if lines else None


def exact(completions: list[Any], answer: list[str], **_: Any) -> list[float]:
    return [1.0 if answer_of(completion_text(c)) == a else 0.0 for c, a in zip(completions, answer)]
''',
    "pack.py": '''"""The parrot pack."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluator.domains.base import DomainPack, RewardFn
from evaluator.domains.parrot.rewards import answer_of, exact

WORDS = ("사과", "바다", "하늘", "나무")


class ParrotPack(DomainPack):
    name = "parrot"
    description = "Repeat a Korean word after 답:"
    styles = ("plain",)
    primary_reward = "exact"
    languages = ("ko",)

    def rubric(self) -> dict[str, Any]:
        return {"name": "parrot", "rewards": {"exact": {"weight": 1.0, "description": "the word, repeated"}}}

    def reward_functions(self) -> dict[str, RewardFn]:
        return {"exact": exact}

    def dataset(self, source, split, *, style=None, language=None, limit=None, seed=0):  # noqa: ANN001, ANN201
        from datasets import Dataset

        rows = [
            {"id": f"e{i}", "prompt": [{"role": "user", "content": f"따라 쓰세요: {w}"}], "style": "plain", "answer": w}
            for i, w in enumerate(WORDS)
        ]
        return Dataset.from_list(rows[:limit])

    def extract(self, text: str, *, style: str, mode: str = "strict") -> str | None:
        return answer_of(text)

    def is_correct(self, extracted: str | None, row: Mapping[str, Any]) -> bool:
        return extracted == row["answer"]
''',
    "cli.py": '''"""The parrot pack's own command, mounted by the app."""

from __future__ import annotations

from typing import Any

import typer


def register(app: typer.Typer, services: Any) -> None:
    @app.command("parrot-words")
    def parrot_words() -> None:
        """List the parrot pack's words."""
        from evaluator.domains.parrot.pack import WORDS

        typer.echo(" ".join(WORDS))
''',
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the floors with the parrot pack and its registry line; ``site/evaluator`` points at it."""
    root = tmp_path_factory.mktemp("newpack")
    src = root / "src"
    for floor in FLOORS:
        shutil.copytree(REPO / floor, src / floor, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("setup.py", "pyproject.toml", "__init__.py"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, src / name)
    (src / "tests" / "project").mkdir(parents=True)
    shutil.copy2(REPO / "tests" / "project" / "test_layers.py", src / "tests" / "project" / "test_layers.py")
    pack = src / "domains" / "parrot"
    pack.mkdir()
    for name, text in PACK_FILES.items():
        (pack / name).write_text(text, encoding="utf-8")
    registry = src / "domains" / "registry.py"
    before = registry.read_text(encoding="utf-8")
    anchor = "_PACKS: dict[str, str] = {\n"
    assert before.count(anchor) == 1
    line = '    "parrot": "evaluator.domains.parrot.pack:ParrotPack",\n'
    registry.write_text(before.replace(anchor, anchor + line), encoding="utf-8")
    (root / "site").mkdir()
    (root / "site" / "evaluator").symlink_to(src, target_is_directory=True)
    return root


def run(tree: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "site"), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd or tree, env=env, capture_output=True, text=True, timeout=300
    )


def changed_outside_pack(tree: Path) -> list[str]:
    """Files of the copy that differ from the repository, outside the new pack's folder."""
    src = tree / "src"
    changed = []
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if not path.is_file() or "__pycache__" in rel.parts or rel.parts[:2] == ("domains", "parrot"):
            continue
        original = REPO / rel
        if not original.exists() or original.read_bytes() != path.read_bytes():
            changed.append(rel.as_posix())
    return changed


def test_only_the_registry_line_changes_outside_the_pack(tree: Path) -> None:
    assert changed_outside_pack(tree) == ["domains/registry.py"]


def test_packaging_finds_the_new_pack(tree: Path) -> None:
    probe = (
        "import json, runpy, setuptools\n"
        "setuptools.setup = lambda **kw: print(json.dumps(kw['packages']))\n"
        "runpy.run_path('setup.py', run_name='__main__')\n"
    )
    done = run(tree, "-c", probe, cwd=tree / "src")
    assert done.returncode == 0, done.stderr
    packages = json.loads(done.stdout.strip().splitlines()[-1])
    assert "evaluator.domains.parrot" in packages
    assert "evaluator.domains.fund.engine" in packages  # discovery, not a list that happens to hold it


def test_the_command_line_lists_mounts_and_scores_the_new_pack(tree: Path, tmp_path: Path) -> None:
    listed = run(tree, "-m", "evaluator.app.cli", "domains", "list")
    assert listed.returncode == 0, listed.stderr
    assert "parrot: languages ko" in listed.stdout
    words = run(tree, "-m", "evaluator.app.cli", "parrot-words")
    assert words.returncode == 0, words.stderr
    assert words.stdout.split() == ["사과", "바다", "하늘", "나무"]
    preds = tmp_path / "preds.jsonl"
    lines = [("사과", "답: 사과"), ("바다", "답: 하늘"), ("하늘", "생각 중\n답: 하늘"), ("나무", "나무")]
    preds.write_text(
        "".join(
            json.dumps({"question": q, "answer": q, "completion": c}, ensure_ascii=False) + "\n"
            for q, c in lines
        ),
        encoding="utf-8",
    )
    out = tmp_path / "scored.json"
    scored = run(
        tree,
        "-m",
        "evaluator.app.cli",
        "score",
        "--domain",
        "parrot",
        "--predictions",
        str(preds),
        "--out",
        str(out),
    )
    assert scored.returncode == 0, scored.stderr + scored.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["metrics"]["accuracy"]["value"] == pytest.approx(
        0.5
    )  # 사과 and 하늘 right, 바다 and 나무 wrong


def test_the_layering_tests_cover_the_new_pack_on_the_copy(tree: Path) -> None:
    done = run(tree, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/project/test_layers.py", cwd=tree / "src")
    assert done.returncode == 0, done.stdout[-3000:]
    probe = (
        "import sys; sys.path.insert(0, 'tests/project'); import test_layers; print('parrot' in test_layers.PACKS)"
    )
    assert run(tree, "-c", probe, cwd=tree / "src").stdout.strip() == "True"


def test_the_layering_tests_catch_the_new_pack_named_in_generic_code(tree: Path, tmp_path: Path) -> None:
    """The same check fails once training code names the pack: the coverage is real, not vacuous."""
    bad = tmp_path / "bad"
    shutil.copytree(tree / "src", bad, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    (bad / "training" / "parrot_hook.py").write_text('PACK = "parrot"\n', encoding="utf-8")
    only = "tests/project/test_layers.py::test_training_and_evaluation_name_no_pack_in_code"
    done = run(tree, "-m", "pytest", "-q", "-p", "no:cacheprovider", only, cwd=bad)
    assert done.returncode != 0
    assert "parrot_hook.py" in done.stdout
