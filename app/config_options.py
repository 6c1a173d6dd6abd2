"""Command-line flags built from one declaration: the run config (``TrainConfig`` and its subclasses), and the
packs' metric options on ``eval`` and ``score`` (other commands' typed options: :mod:`evaluator.core.cli_options`).

Every field becomes ``--field-name`` with the field's own help text, plus the older names its metadata keeps
as aliases (``--per-device-batch``, ``--lr`` …), so no user command breaks. Every run-config flag defaults to None: a YAML
config (``--config``) is overridden only by what was typed, and the declaration's defaults fill the rest.
Structured fields take text: a list is comma-separated, ``reward_weights`` is ``NAME=WEIGHT`` (repeatable),
``trl`` is ``KEY=VALUE`` (repeatable, merged over the YAML's ``trl:``), and ``judge`` is YAML/JSON text or a file.

Typer reads a command's parameters from its signature, so the command function here gets a generated
``__signature__``; the values come back as keyword arguments and are turned into config overrides.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import typer

from evaluator.domains.registry import pack_cli_modules
from evaluator.training.config import ConfigError, TrainConfig, field_kinds
from evaluator.training.config.help import help_text

CONFIG_PARAM = "config"


def flag_names(f: dataclasses.Field) -> tuple[str, ...]:
    """``--field-name`` first, then the aliases the field declares."""
    main = "--" + f.name.replace("_", "-")
    return (main, *(a for a in f.metadata.get("flags", ()) if a != main))


def _option(f: dataclasses.Field, hint: Any) -> tuple[Any, Any]:
    """(annotation, typer.Option) for one field."""
    kinds, _ = field_kinds(hint)
    names = flag_names(f)
    text = help_text(f, with_trl=_asks_help())
    cli = f.metadata.get("cli")
    if cli == "weights":
        return list[str] | None, typer.Option(None, *names, help=text + " NAME=WEIGHT, repeatable.")
    if cli == "pairs":
        return list[str] | None, typer.Option(None, *names, help=text)
    if cli in ("list", "mapping") or list in kinds or dict in kinds:
        return str | None, typer.Option(None, *names, help=text)
    if bool in kinds:
        negative = "--no-" + f.name.replace("_", "-")
        decls = [f"{names[0]}/{negative}", *names[1:]]
        return bool | None, typer.Option(None, *decls, help=text)
    if int in kinds and float not in kinds:
        return int | None, typer.Option(None, *names, help=text)
    if float in kinds:
        return float | None, typer.Option(None, *names, help=text)
    return str | None, typer.Option(None, *names, help=text)


def _asks_help() -> bool:
    """The command line asks for help: only then are TRL's allowed values (seconds to import) put in it."""
    import sys

    return any(a in ("--help", "-h") for a in sys.argv[1:])


def parse_pairs(flag: str, items: Iterable[str] | None) -> dict[str, Any] | None:
    """``["num_iterations=2", "top_k=50"]`` → ``{"num_iterations": 2, "top_k": 50}`` (each value read as YAML:
    ``true``, ``2``, ``[0.2, 0.3]``, ``{a: 1}``; the TRL class then checks it)."""
    import yaml

    if not items:
        return None
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = text
    return out


def parse_weights(items: Iterable[str] | None) -> dict[str, float] | None:
    """``["correctness=2", "int=0.5,format=1"]`` → ``{"correctness": 2.0, "int": 0.5, "format": 1.0}``."""
    if not items:
        return None
    out: dict[str, float] = {}
    for item in (part for raw in items for part in raw.split(",") if part.strip()):
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise ConfigError(f"--reward-weight expects NAME=NUMBER, got {item!r}")
    return out


def parse_mapping(flag: str, text: str | None) -> dict[str, Any] | None:
    """YAML/JSON text, or a file holding it, as a mapping (``--judge '{kind: api, model: m}'``)."""
    import yaml

    if text is None:
        return None
    source = Path(text)
    try:
        body = source.read_text(encoding="utf-8") if len(text) < 4096 and source.is_file() else text
        value = yaml.safe_load(body)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{flag}: not valid YAML/JSON text or a readable file: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{flag}: expected a mapping such as '{{kind: api, model: m}}', got {value!r}")
    return value


def overrides_from_flags(cls: type[TrainConfig], values: dict[str, Any]) -> dict[str, Any]:
    """Typed flag values → config overrides (None = not typed, left to the YAML or the declaration)."""
    hints = cls.hints()
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = values.get(f.name)
        if value is None or value == ():  # not typed (a repeatable flag gives an empty tuple)
            continue
        kinds, _ = field_kinds(hints[f.name])
        cli = f.metadata.get("cli")
        if cli == "weights":
            value = parse_weights(value)
        elif cli == "pairs":
            value = parse_pairs(flag_names(f)[0], value)
        elif cli == "mapping" or dict in kinds:
            value = parse_mapping(flag_names(f)[0], value)
        elif list in kinds:
            value = [part.strip() for part in value.split(",") if part.strip()]
        out[f.name] = value
    return out


def config_command(
    cls: type[TrainConfig],
    run: Callable[[dict[str, Any], Path | None, dict[str, Any]], None],
    *,
    fields: Iterable[str] | None = None,
    extra: Iterable[inspect.Parameter] = (),
    doc: str = "",
) -> Callable[..., None]:
    """A Typer command function whose flags are ``cls``'s fields (all, or ``fields``) plus ``extra``.

    ``run(overrides, config_path, extras)`` receives the typed overrides, the ``--config`` file and the values
    of the ``extra`` parameters by name.
    """
    wanted = None if fields is None else set(fields)
    hints = cls.hints()
    declared = [f for f in dataclasses.fields(cls) if wanted is None or f.name in wanted]
    params = [
        inspect.Parameter(
            CONFIG_PARAM,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(None, "--config", "-c", help="YAML run config; flags override it."),
            annotation=Path | None,
        )
    ]
    for f in declared:
        annotation, option = _option(f, hints[f.name])
        params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation))
    extras = list(extra)
    params += extras
    field_names = {f.name for f in declared}
    extra_names = {p.name for p in extras}

    def command(**kwargs: Any) -> None:
        overrides = overrides_from_flags(cls, {k: v for k, v in kwargs.items() if k in field_names})
        run(overrides, kwargs.get(CONFIG_PARAM), {k: v for k, v in kwargs.items() if k in extra_names})

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = doc
    return command


def with_metric_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` plus every registered pack's metric options as flags (``--bertscore-model`` …).

    The options come from the packs' own ``cli`` modules, so a generic command names no pack's metric; the
    values reach ``func`` as one ``metric_options`` mapping, which the chosen pack checks (another pack's
    option is refused by name).
    """
    import functools
    import typing

    declared = {o.name: o for module in pack_cli_modules() for o in getattr(module, "METRIC_OPTIONS", ())}
    hints = typing.get_type_hints(func)
    params = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in inspect.signature(func).parameters.values()
        if p.name != "metric_options"
    ]
    params += [
        inspect.Parameter(
            o.name, inspect.Parameter.KEYWORD_ONLY, default=typer.Option(None, o.flag, help=o.help),
            annotation=o.kind | None,
        )
        for o in declared.values()
    ]  # fmt: skip

    @functools.wraps(func)
    def command(**kwargs: Any) -> Any:
        metric = {name: kwargs.pop(name) for name in declared}
        return func(**kwargs, metric_options=metric)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command
