"""Command-line flags generated from dataclass declarations, so a command receives one typed options value.

Typer reads a command's flags from its function's signature. :func:`options_command` gives a command a generated
signature: one flag per field of an options dataclass. A field is either declared with its own typer parameter
(:func:`flag`: the command's own options, written once) or is a group (:func:`group`): chosen fields of a shared
declaration below the packs (``GenerationSettings``, ``ModelRef``), whose flags take the names, types, help and
defaults that declaration gives. The command gets back one instance of its options class, groups included.

Typer has no dataclass parameters of its own (it reads signatures only), so this small bridge is ours; the
run config's flags (``evaluator train``) are built the same way in ``app/config_options.py``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer


def flag(param: Any) -> Any:
    """A field declared by its typer ``Option`` or ``Argument``; the field's default is the parameter's."""
    return dataclasses.field(default=param.default, metadata={"param": param})


def group(
    cls: type,
    fields: Sequence[str],
    *,
    defaults: Any = None,
    help: Mapping[str, str] | None = None,
    optional: bool = False,
) -> Any:
    """``cls``'s chosen ``fields`` as flags ``--field-name``, built back into one ``cls`` value.

    Defaults come from ``defaults`` (an instance of ``cls``) or else the declaration; ``help`` rewords a flag's
    help for this command. ``optional``: the value is None when every flag keeps its default (``--model``
    not given), and fields the declaration requires default to None.
    """
    meta = {"group": cls, "fields": tuple(fields), "defaults": defaults, "help": dict(help or {}), "optional": optional}
    required = any(f.default is f.default_factory is dataclasses.MISSING for f in dataclasses.fields(cls))
    if optional or (defaults is None and required):  # no value to stand for "not given": the flags decide
        return dataclasses.field(default=None, metadata=meta)
    value = defaults if defaults is not None else cls()
    return dataclasses.field(default_factory=lambda: value, metadata=meta)


def _cli_type(annotation: Any, nullable: bool) -> Any:
    """The type typer parses a field as: a path-like is a ``Path``; ``| None`` when None is allowed or the default."""
    args = typing.get_args(annotation)
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    options = [a for a in (args if union else (annotation,)) if a is not type(None)]
    if any(a is os.PathLike or typing.get_origin(a) is os.PathLike for a in options):
        options = [Path]
    if len(options) != 1:
        raise TypeError(f"{annotation} has no single command-line type")
    return options[0] | None if nullable or (union and type(None) in args) else options[0]


def _group_default(meta: Mapping[str, Any], f: dataclasses.Field) -> Any:
    if meta["defaults"] is not None:
        return getattr(meta["defaults"], f.name)
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None if meta["optional"] else ...  # a required field is a required flag


def option_parameters(cls: type) -> list[tuple[str | None, inspect.Parameter]]:
    """(group field or None, the flag's parameter) for every flag ``cls`` declares, in declaration order."""
    hints = typing.get_type_hints(cls)
    out: list[tuple[str | None, inspect.Parameter]] = []
    for f in dataclasses.fields(cls):
        meta = f.metadata
        if "group" not in meta:
            out.append((None, inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=meta["param"],
                                                annotation=hints[f.name])))  # fmt: skip
            continue
        sub = {g.name: g for g in dataclasses.fields(meta["group"])}
        sub_hints = typing.get_type_hints(meta["group"])
        for name in meta["fields"]:
            default = _group_default(meta, sub[name])
            text = meta["help"].get(name, sub[name].metadata.get("help", ""))
            option = typer.Option(default, "--" + name.replace("_", "-"), help=text)
            annotation = _cli_type(sub_hints[name], default is None)
            out.append((f.name, inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                                                  annotation=annotation)))  # fmt: skip
    names = [p.name for _, p in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TypeError(f"{cls.__name__}: flag(s) {', '.join(twice)} declared twice")
    order = getattr(cls, "flag_order", ())
    if order:  # the order ``--help`` lists them in, where a group's flags sit apart
        if sorted(order) != sorted(names):
            raise TypeError(f"{cls.__name__}.flag_order must name every flag once: {', '.join(names)}")
        out.sort(key=lambda item: order.index(item[1].name))
    return out


def build_options(cls: type, values: Mapping[str, Any]) -> Any:
    """The options value from the flags' values by parameter name (each group built into its own value)."""
    params = option_parameters(cls)
    given: dict[str, Any] = {}
    groups: dict[str, dict[str, Any]] = {}
    for owner, p in params:
        if owner is None:
            given[p.name] = values[p.name]
        else:
            groups.setdefault(owner, {})[p.name] = values[p.name]
    for f in dataclasses.fields(cls):
        if "group" not in f.metadata:
            continue
        meta, chosen = f.metadata, groups.get(f.name, {})
        defaults = {n: _group_default(meta, {g.name: g for g in dataclasses.fields(meta["group"])}[n]) for n in chosen}
        if meta["optional"] and chosen == defaults:
            given[f.name] = None
            continue
        base = meta["defaults"]
        given[f.name] = dataclasses.replace(base, **chosen) if base is not None else meta["group"](**chosen)
    return cls(**given)


def options_command(cls: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``func(options)`` as a typer command whose flags are ``cls``'s (see the module docstring); keywords a
    further wrapper adds (``metric_options``) reach ``func`` as they are."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        params = [p for _, p in option_parameters(cls)]
        names = {p.name for p in params}

        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            extra = {k: v for k, v in kwargs.items() if k not in names}
            return func(build_options(cls, kwargs), **extra)

        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return decorate
