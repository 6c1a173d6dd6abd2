"""The installed TRL's config classes as data: every field's name, type, default and allowed values.

A run reaches any field of ``GRPOConfig`` / ``RLOOConfig`` / ``SFTConfig`` through ``trl:`` (YAML) or
``--trl KEY=VALUE``, checked here against that class, so nothing of TRL is declared again. Allowed values come
from what TRL declares: ``choices`` metadata, ``Literal`` and ``Enum`` types, and — where TRL 1.16 declares a
plain ``str`` and lists the values only in its help text (``loss_type``, ``scale_rewards``,
``multi_objective_aggregation``, ``vllm_mode`` …) — the values that help text names after "Supported values
are" / "Possible values are" / "Must be one of" (or, for ``importance_sampling_level``, the "`'token'` or
`'sequence'`" pair that holds its default). TRL offers nothing better to read them from; a test pins the
values read from the installed TRL so a reworded help text is noticed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import json
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.outputs import atomic_write_text
from evaluator.models.loading import cache_dir
from evaluator.training.config.declaration import TRL_FAMILIES, field_kinds, trl_names
from evaluator.training.config.errors import ConfigError

TRL_CLASSES = {"grpo": "GRPOConfig", "rloo": "RLOOConfig", "sft": "SFTConfig"}
_MARKERS = re.compile(r"(?:Supported values are|Possible values are|Must be one of)\s*:?", re.IGNORECASE)
_LISTED = re.compile(r"`'?([A-Za-z_][\w-]*)'?`(?: \(default\))?:")  # "`'batch'`:" items of a colon list
_OR_ITEM = re.compile(r"`'?([A-Za-z_][\w-]*)'?` or ")  # "`False` or `'none'`:"
_QUOTED = re.compile(r"(?<![=\w])[`'\[]*'?`?([A-Za-z_][\w-]*)'`?|`([A-Za-z_][\w-]*)`")
_PAIR = re.compile(r"`'([A-Za-z_][\w-]*)'` or `'([A-Za-z_][\w-]*)'`")
_FIXED_ITEM = re.compile(r"`([A-Za-z_][\w-]*)'` \(default\)")  # TRL's "`group'` (default)" (one quote)


SCHEMA_VERSION = 2


@dataclass(frozen=True)
class TrlField:
    """One field of a TRL config class: the kinds of value it takes (``bool``, ``int``, ``float``, ``str``,
    ``dict``, ``list``, ``tuple``; an Enum or Literal counts as ``str`` with its values as choices)."""

    name: str
    kinds: tuple[str, ...]
    nullable: bool
    default: Any
    choices: tuple[str, ...] | None


def config_class(trainer: str) -> type:
    """TRL's config class for ``trainer`` (grpo, rloo or sft)."""
    import trl

    return getattr(trl, TRL_CLASSES[trainer])


def _prose_choices(text: str) -> tuple[str, ...]:
    """The values a TRL help text lists after its "Supported values are" (empty when it lists none)."""
    match = _MARKERS.search(text)
    if not match:
        return ()
    rest = text[match.end() :]
    if match.group(0).rstrip().endswith(":"):  # a colon list: "`'a'` (default): … `'b'`: …"
        found = _LISTED.findall(rest) + _OR_ITEM.findall(rest) + _FIXED_ITEM.findall(rest)
    else:  # one sentence: "'grpo', 'dr_grpo', … and 'vespo'."
        sentence = re.split(r"\.\s", rest, maxsplit=1)[0]
        found = [a or b for a, b in _QUOTED.findall(sentence)]
    out = [v for v in dict.fromkeys(found) if v not in ("True", "False")]
    return tuple(out) if len(out) >= 2 else ()


def _choices(f: dataclasses.Field, hint: Any) -> tuple[str, ...] | None:
    declared = f.metadata.get("choices")
    if declared:
        return tuple(str(c) for c in declared)
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    for option in options:
        if typing.get_origin(option) is typing.Literal:
            values = [str(v) for v in typing.get_args(option) if isinstance(v, str)]
            if values:
                return tuple(values)
        if isinstance(option, type) and issubclass(option, enum.Enum):
            return tuple(str(m.value) for m in option)
    kinds, _ = field_kinds(hint)
    if str in kinds and not kinds & {dict, list, int, float}:
        text = f.metadata.get("help", "")
        default = f.default if isinstance(f.default, str) else None
        found = _prose_choices(text)
        if found:
            return tuple(dict.fromkeys([*found, *([default] if default else [])]))
        pair = _PAIR.search(text)  # "at the `'token'` or `'sequence'` level", the default one of them
        if pair and default in pair.groups():
            return pair.groups()
    return None


def _kinds(hint: Any) -> tuple[tuple[str, ...], bool]:
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    out = []
    for option in options:
        base = typing.get_origin(option) or option
        if base is typing.Literal:
            out += ["bool" if isinstance(v, bool) else "str" for v in typing.get_args(option)]
        elif isinstance(base, type) and issubclass(base, enum.Enum):
            out.append("str")
        elif base in (bool, int, float, str, dict, list, tuple):
            out.append(base.__name__)
    return tuple(dict.fromkeys(out)), type(None) in options


def _from_trl(trainer: str) -> dict[str, TrlField]:
    cls = config_class(trainer)
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        default = default.value if isinstance(default, enum.Enum) else default
        kinds, nullable = _kinds(hints[f.name])
        out[f.name] = TrlField(f.name, kinds, nullable, default, _choices(f, hints[f.name]))
    return out


def _cache_path(trainer: str) -> Path | None:
    """The schema of this TRL + transformers pair, read once: importing TRL takes seconds, a bad value should not."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        tag = f"trl-{version('trl')}-transformers-{version('transformers')}-v{SCHEMA_VERSION}"
    except PackageNotFoundError:
        return None
    return cache_dir() / "trl_schema" / f"{TRL_CLASSES[trainer]}-{tag}.json"


@functools.cache
def schema(trainer: str) -> dict[str, TrlField]:
    """Every field of the installed TRL's config class for ``trainer``, by name (from the cache when the same
    TRL and transformers versions were read before)."""
    path = _cache_path(trainer)
    if path is not None and path.is_file():
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            return {
                name: TrlField(name, tuple(f["kinds"]), f["nullable"], f["default"],
                               tuple(f["choices"]) if f["choices"] is not None else None)
                for name, f in doc.items()
            }  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            pass  # unreadable: read TRL again and rewrite it
    out = _from_trl(trainer)
    if path is not None:
        doc = {n: {"kinds": list(f.kinds), "nullable": f.nullable, "default": f.default,
                   "choices": list(f.choices) if f.choices is not None else None} for n, f in out.items()}  # fmt: skip
        with contextlib.suppress(OSError):  # a read-only cache only costs the next run the import
            atomic_write_text(path, json.dumps(doc, default=lambda _: None))
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def check_value(where: str, spec: TrlField, value: Any, cls_name: str) -> Any:
    """``value`` as ``spec``'s type allows it (numeric text → number), or :class:`ConfigError` naming the
    field, the value and what is allowed."""
    kinds = {_TYPES[k] for k in spec.kinds}
    nullable = spec.nullable
    if value is None:
        if nullable:
            return None
        raise ConfigError(f"{where}: must be set (got null)")
    if spec.choices and isinstance(value, str | enum.Enum):
        text = value.value if isinstance(value, enum.Enum) else value
        if text not in spec.choices:
            raise ConfigError(f"{where}: {text!r} is not one of TRL {cls_name}'s values: {', '.join(spec.choices)}")
        return text
    if isinstance(value, bool) and bool in kinds:
        return value
    if int in kinds and not isinstance(value, bool) and isinstance(value, int):
        return value
    if float in kinds and (number := _number(value)) is not None:
        return number
    if int in kinds and float not in kinds and (number := _number(value)) is not None and number.is_integer():
        return int(number)
    if isinstance(value, str) and str in kinds:
        return value
    if isinstance(value, dict) and dict in kinds:
        return value
    if isinstance(value, list) and (list in kinds or tuple in kinds):
        return tuple(value) if tuple in kinds and list not in kinds else value
    raise ConfigError(f"{where}: expected {_kind_text(kinds, nullable)}, got {value!r}")


_TYPES = {"bool": bool, "int": int, "float": float, "str": str, "dict": dict, "list": list, "tuple": tuple}


def _kind_text(kinds: set[type], nullable: bool) -> str:
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "text", dict: "a mapping",
             list: "a list", tuple: "a list"}  # fmt: skip
    parts = [names[k] for k in (bool, int, float, str, dict, list, tuple) if k in kinds]
    if not parts:
        return "a value this run config cannot express"
    return " or ".join(dict.fromkeys(parts + (["null"] if nullable else [])))


def reserved(cfg_cls: type, trainer: str = "grpo") -> dict[str, str]:
    """TRL names the run sets itself → the project's flag (or the reason) to point a ``trl:`` key to."""
    out = {name: f"set it with --{field.replace('_', '-')} ({field}: in the YAML)"
           for field, name in trl_names(cfg_cls, (*TRL_FAMILIES[trainer], "derived")).items()}  # fmt: skip
    for name in ("bf16", "fp16", "use_cpu"):
        out[name] = "decided by the device (--quantize chooses 4-bit; bf16 on GPUs that support it)"
    for name in ("use_vllm", "vllm_mode", "vllm_server_host", "vllm_server_port", "vllm_gpu_memory_utilization",
                 "vllm_enable_sleep_mode"):  # fmt: skip
        out[name] = f"set it with --{name.replace('_', '-')}".replace("--vllm-enable-sleep-mode", "--vllm-sleep-mode")
    out["reward_weights"] = "set it with --reward-weight NAME=WEIGHT (the rubric gives the defaults)"
    out["chat_template_kwargs"] = "decided by the pack's chat format (--style)"
    out["log_completions"] = "the run writes completions.jsonl itself (--completions-per-log)"
    out["disable_tqdm"] = "the run shows its own progress"
    out["save_strategy"] = "the run saves every --save-steps"
    out["max_length"] = "set it with --max-seq-length (SFT)"
    for name in (*HUB_FIELDS, "hub_always_push", "hub_private_repo", "hub_revision", "hub_strategy"):
        out[name] = "training never pushes to the Hugging Face hub; `evaluator export --push-to-hub` uploads a finished model"
    return out


HUB_FIELDS = ("push_to_hub", "hub_model_id", "hub_token", "log_completions_hub_repo")


def checked_overrides(cfg: Any, trainer: str) -> dict[str, Any]:
    """The run's ``trl:`` mapping checked against the TRL class of ``trainer``; values as TRL takes them."""
    given = dict(cfg.trl or {})
    if not given:
        return {}
    fields = schema(trainer)
    cls_name = TRL_CLASSES[trainer]
    taken = reserved(type(cfg), trainer)
    out: dict[str, Any] = {}
    for key, value in given.items():
        where = f"trl.{key}"
        if key in taken:
            raise ConfigError(f"{where}: the run sets this itself; {taken[key]}")
        if key not in fields:
            others = [t for t in TRL_CLASSES if t != trainer and key in schema(t)]
            hint = f" (a field of {', '.join(TRL_CLASSES[t] for t in others)})" if others else ""
            raise ConfigError(f"{where}: TRL {cls_name} has no field {key!r}{hint}")
        out[key] = check_value(where, fields[key], value, cls_name)
    return out


def check_declared(cfg: Any, trainer: str) -> None:
    """The project's own fields that TRL gives allowed values for (``loss_type``, ``scale_rewards``, ``optim``
    …) checked against the installed TRL, so a typo is told before anything loads."""
    fields = schema(trainer)
    for field, name in trl_names(type(cfg), (*TRL_FAMILIES[trainer], "derived")).items():
        spec = fields.get(name)
        value = getattr(cfg, field)
        if spec is not None and spec.choices and isinstance(value, str):
            check_value(field, spec, value, TRL_CLASSES[trainer])


def check_fields(cfg: Any, trainer: str) -> None:
    """The declared fields' TRL values and the ``trl:`` mapping, checked from the schema alone (no TRL import
    once the schema of this TRL is cached): what the command line runs first."""
    check_declared(cfg, trainer)
    checked_overrides(cfg, trainer)


def choices_text(trainer: str, name: str) -> str:
    """``a, b, c`` for a TRL field with listed values ("" when TRL lists none or is not importable)."""
    try:
        spec = schema(trainer).get(name)
    except ImportError:
        return ""
    return ", ".join(spec.choices) if spec and spec.choices else ""
