"""The experiment spec: arms × seeds on one base config, read from YAML and checked as a whole.

Every problem in a spec is collected and reported in one message, each naming its place
(``arms.rloo.beta: expected a number, got 'x'``), so a researcher fixes a spec once, not once per field.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from evaluator.training.config import ConfigError, TrainConfig, check_types, coerce, validate
from evaluator.training.judges import JudgeSpec
from evaluator.training.trl_checks import build_args, idle_settings

TOP_KEYS = ("name", "base", "warm_start", "eval", "seeds", "baseline", "arms", "grid")
EVAL_KEYS = {"split": str, "limit": int, "data": str, "batch_size": int, "max_new_tokens": int}
RUNNER_FIELDS = ("output_dir", "force", "resume", "seed", "init_from")
"""TrainConfig fields the runner sets itself (a spec that sets them is told so)."""
ALGORITHMS = ("grpo", "rloo", "sft")
ARM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._=-]{0,79}$")
TRAIN_FIELDS = {f.name for f in fields(TrainConfig)}


class SpecError(ValueError):
    """The spec cannot run; ``problems`` names every bad field."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(problems))


@dataclass
class Arm:
    name: str
    overrides: dict[str, Any]
    algorithm: str = "grpo"


@dataclass
class ExperimentSpec:
    name: str
    base: dict[str, Any]
    arms: list[Arm]
    baseline: str
    seeds: list[int] = field(default_factory=lambda: [0])
    warm_start: dict[str, Any] | None = None
    eval: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.name == name)


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and check a spec file; raises :class:`SpecError` listing every problem."""
    p = Path(path)
    if not p.is_file():
        raise SpecError(str(p), ["no such file"])
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SpecError(str(p), [f"not valid YAML ({exc})"]) from exc
    return parse_spec(doc, source=str(p))


def parse_spec(doc: Any, source: str = "spec") -> ExperimentSpec:
    """Check a loaded spec document; every problem goes into one :class:`SpecError`."""
    if not isinstance(doc, dict):
        raise SpecError(source, ["the spec must be a mapping with name, base, seeds, baseline and arms"])
    problems: list[str] = [f"{k}: unknown field; known: {', '.join(TOP_KEYS)}" for k in doc if k not in TOP_KEYS]
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append("name: required text")
    base = _section(doc.get("base", {}), "base", problems, allow_algorithm=False)
    warm = _warm_start(doc.get("warm_start"), problems)
    ev = _eval(doc.get("eval", {}), problems)
    seeds = _seeds(doc.get("seeds", [0]), problems)
    arms = _arms(doc.get("arms") or {}, problems) + _grid(doc.get("grid"), problems)
    names = [a.name for a in arms]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        problems.append(f"arms: names repeat after the grid expands: {', '.join(dup)}")
    if not arms:
        problems.append("arms: at least one arm (or a grid) is needed")
    baseline = doc.get("baseline", names[0] if len(names) == 1 else None)
    if not isinstance(baseline, str) or baseline not in names:
        problems.append(f"baseline: must name one of the arms ({', '.join(names) or 'none'}), got {baseline!r}")
    spec = ExperimentSpec(
        name=str(name), base=base, arms=arms, baseline=str(baseline), seeds=seeds, warm_start=warm, eval=ev, raw=doc
    )
    if not problems:
        problems += _resolve_problems(spec)
    if problems:
        raise SpecError(source, problems)
    return spec


def _section(value: Any, where: str, problems: list[str], *, allow_algorithm: bool) -> dict[str, Any]:
    """A mapping of TrainConfig fields (plus ``algorithm: sft`` in arms), type-checked field by field."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{where}: expected a mapping of config fields, got {value!r}")
        return {}
    if isinstance(value.get("domain"), dict):  # {gsm8k: 0.5, fund: 0.5}: one adapter on several packs
        packs = value["domain"]
        value = {**value, "domain": ",".join(str(k) for k in packs), "mix": list(packs.values())}
    out = dict(value)
    for key in value:
        if key == "algorithm" and allow_algorithm:
            if value[key] not in ALGORITHMS:
                problems.append(f"{where}.algorithm: one of {', '.join(ALGORITHMS)}, got {value[key]!r}")
        elif key in RUNNER_FIELDS:
            problems.append(f"{where}.{key}: set by the runner (run folders, seeds and the warm start are its job)")
        elif key not in TRAIN_FIELDS:
            problems.append(f"{where}.{key}: unknown config field")
    typed = {k: v for k, v in value.items() if k in TRAIN_FIELDS and k not in RUNNER_FIELDS and k != "algorithm"}
    problems += [f"{where}.{p}" for p in check_types(typed)]
    return out


def _warm_start(value: Any, problems: list[str]) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"sft"}:
        problems.append("warm_start: expected {sft: {config fields}} (one SFT run shared by every arm and seed)")
        return None
    return _section(value["sft"] or {}, "warm_start.sft", problems, allow_algorithm=False)


def _eval(value: Any, problems: list[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        problems.append(f"eval: expected a mapping such as {{split: test, limit: 500}}, got {value!r}")
        return {}
    for key, val in value.items():
        kind = EVAL_KEYS.get(key)
        if kind is None:
            problems.append(f"eval.{key}: unknown field; known: {', '.join(EVAL_KEYS)}")
        elif not isinstance(val, kind) or isinstance(val, bool) or (kind is int and val < 1):
            problems.append(f"eval.{key}: expected {'a whole number ≥ 1' if kind is int else 'text'}, got {val!r}")
    return {"split": "test", **value}


def _seeds(value: Any, problems: list[str]) -> list[int]:
    ok = isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
    if not ok:
        problems.append(f"seeds: expected a non-empty list of whole numbers ≥ 0, got {value!r}")
        return [0]
    if len(set(value)) != len(value):
        problems.append(f"seeds: repeated seed in {value!r}")
    return list(value)


def _arms(value: Any, problems: list[str]) -> list[Arm]:
    if not isinstance(value, dict):
        problems.append(f"arms: expected a mapping of arm name to overrides, got {value!r}")
        return []
    out = []
    for name, over in value.items():
        if not isinstance(name, str) or not ARM_NAME.match(name):
            problems.append(f"arms.{name}: an arm name is letters, digits, '.', '_', '=' or '-' (it names a folder)")
            continue
        section = _section(over or {}, f"arms.{name}", problems, allow_algorithm=True)
        algorithm = section.pop("algorithm", "grpo")
        out.append(Arm(name, section, algorithm if algorithm in ALGORITHMS else "grpo"))
    return out


def _grid(value: Any, problems: list[str]) -> list[Arm]:
    """``{field: [v1, v2], …}`` → one arm per combination, named ``field=v1,field2=w1``."""
    if value is None:
        return []
    if not isinstance(value, dict) or not value:
        problems.append(f"grid: expected a mapping of config field to a list of values, got {value!r}")
        return []
    bad = [k for k, v in value.items() if not isinstance(v, list) or not v]
    problems += [f"grid.{k}: expected a non-empty list of values" for k in bad]
    keys = [k for k in value if k not in bad]
    arms = []
    for combo in itertools.product(*(value[k] for k in keys)):
        over = dict(zip(keys, combo, strict=True))
        name = "-".join(f"{k}={v}" for k, v in over.items())
        section = _section(over, f"grid[{name}]", problems, allow_algorithm=True)
        algorithm = section.pop("algorithm", "grpo")
        arms.append(Arm(name[:80], section, algorithm if algorithm in ALGORITHMS else "grpo"))
    return arms


def arm_fields(spec: ExperimentSpec, arm: Arm) -> dict[str, Any]:
    """The arm's config fields: base, then (for SFT arms) the warm start's SFT settings, then its own."""
    merged = dict(spec.base)
    if arm.algorithm == "sft" and spec.warm_start:
        merged.update(spec.warm_start)
    merged.update(arm.overrides)
    if arm.algorithm != "sft":
        merged["algorithm"] = arm.algorithm
    return merged


def build_config(values: dict[str, Any], **runner: Any) -> TrainConfig:
    """A checked TrainConfig from spec values plus the runner's own fields."""
    cfg = TrainConfig(**coerce({**values, **runner}))
    validate(cfg)
    return cfg


def _resolve_problems(spec: ExperimentSpec) -> list[str]:
    """Cross-field checks (batch divisibility, packs, judge kinds) of every arm's resolved config."""
    problems = []
    places = [(f"arms.{a.name}", arm_fields(spec, a), a) for a in spec.arms]
    if spec.warm_start is not None:
        places.append(("warm_start.sft", {**spec.base, **spec.warm_start}, None))
    for where, values, arm in places:
        try:
            build_config(values, output_dir="unused", seed=spec.seeds[0])
            if values.get("judge"):
                JudgeSpec.from_dict(values["judge"])
        except (ConfigError, TypeError, ValueError) as exc:
            problems.append(f"{where}: {exc}")
        if arm is not None and arm.algorithm == "sft" and arm.name == spec.baseline and not _has_budget(arm):
            problems.append(
                f"arms.{arm.name}: an SFT baseline needs its own budget (max_steps or max_seconds): "
                "SFT arms otherwise take the baseline's training time"
            )
    return problems


def _has_budget(arm: Arm) -> bool:
    return "max_seconds" in arm.overrides or "max_steps" in arm.overrides


def trl_problems(spec: ExperimentSpec) -> tuple[list[str], list[str]]:
    """Every arm (and the warm start) turned into its TRL config object, as a run would be before it loads
    anything: (problems, warnings about settings that would do nothing), each naming its arm."""
    problems: list[str] = []
    warnings: list[str] = []
    places = [(f"arms.{a.name}", arm_fields(spec, a), a.algorithm) for a in spec.arms]
    if spec.warm_start is not None:
        places.append(("warm_start.sft", {**spec.base, **spec.warm_start}, "sft"))
    for where, values, trainer in places:
        try:
            cfg = build_config(values, output_dir="unused", seed=spec.seeds[0])
            args = build_args(cfg, trainer)
        except (ConfigError, TypeError, ValueError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        if trainer != "sft":
            warnings += [f"{where}: {line}" for line in idle_settings(cfg, args)]
    return problems, warnings
