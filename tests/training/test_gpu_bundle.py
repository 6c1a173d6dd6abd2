"""The GPU image gets the project with ``--no-deps`` and only the wheels ``benchmarks/gpu_wheels.py`` bundles:
every distribution the training path imports must come from the image (torch, transformers, peft,
accelerate and what they need) or from the bundle's list, or the device run fails at its first import.
Checked: what the project's own modules on the training path import at module level."""

from __future__ import annotations

import ast
import importlib.metadata as md
import json
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import gpu_wheels  # noqa: E402

OPTIONAL = {"brotli"}  # urllib3 uses it when present and works without it
TRAINING_PATH = ["evaluator.app.cli", "evaluator.app.commands.train", "evaluator.training.grpo",
                 "evaluator.training.launch", "evaluator.training.judges", "evaluator.domains.gsm8k.pack"]


def _closure(names: list[str]) -> set[str]:
    seen: set[str] = set()
    stack = [canonicalize_name(Requirement(n).name) for n in names]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                stack.append(canonicalize_name(req.name))
    return seen


def _imported_distributions() -> set[str]:
    """Distributions the project's own modules on the training path import at module level (a library's own
    optional imports are its business; an import inside a function runs only on that function's path)."""
    probe = (
        "import importlib, json, sys\n"
        f"for m in {TRAINING_PATH!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted(getattr(m, '__file__', None) or '' for n, m in list(sys.modules.items())"
        " if n.startswith('evaluator.'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    files = [f for f in json.loads(done.stdout.strip().splitlines()[-1]) if f.endswith(".py")]
    tops: set[str] = set()
    for file in files:
        for node in ast.parse(Path(file).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                tops |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                tops.add(node.module.split(".")[0])
    owners = md.packages_distributions()
    return {canonicalize_name(d) for top in tops for d in owners.get(top, []) if canonicalize_name(d) != "evaluator"}


def test_every_distribution_the_training_path_imports_is_in_the_image_or_the_bundle() -> None:
    provided = _closure([n.split("==")[0].split("+")[0] for n in gpu_wheels.IMAGE])
    provided |= _closure(gpu_wheels.NEEDED) | {canonicalize_name(n) for n in gpu_wheels.ALWAYS}
    provided |= {canonicalize_name(n) for n in gpu_wheels.NOT_BUNDLED}
    missing = sorted(_imported_distributions() - provided - OPTIONAL)
    assert missing == [], f"add these to benchmarks/gpu_wheels.py NEEDED: {missing}"


def test_the_check_finds_a_distribution_left_out() -> None:
    provided = _closure([n for n in gpu_wheels.NEEDED if not n.startswith("jsonschema-rs")])
    assert "jsonschema-rs" not in provided and "jsonschema-rs" in _closure(gpu_wheels.NEEDED)
