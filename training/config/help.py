"""Each config field's help for flags and the reference page, with the installed TRL's allowed values filled in
(kept apart from the declaration because reading those values reads TRL's config classes)."""

from __future__ import annotations

import dataclasses
from dataclasses import fields

from evaluator.training.config.declaration import TrainConfig
from evaluator.training.trl_fields import choices_text


def help_text(f: dataclasses.Field, with_trl: bool = True) -> str:
    """A field's help; ``{trl_choices}`` becomes the installed TRL's values (``with_trl``; importing TRL takes
    seconds, so a command line that only runs leaves a pointer instead)."""
    text = f.metadata.get("help", "")
    if "{trl_choices}" not in text:
        return text
    values = ""
    if with_trl:
        values = choices_text("grpo", (f.metadata.get("trl") or "").partition(":")[2] or f.name)
    return text.replace("{trl_choices}", values or "see the installed TRL's GRPOConfig")


def field_help(cls: type[TrainConfig] = TrainConfig) -> list[tuple[str, str, str]]:
    """(name, default, help) for every field, in declaration order."""
    out = []
    for f in fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        out.append((f.name, repr(default), help_text(f)))
    return out


def config_table() -> str:
    """The config reference page's table, generated from the declaration (a test keeps the page equal to it)."""
    rows = ["| field | default | meaning |", "|---|---|---|"]
    rows += [f"| `{name}` | `{default}` | {text} |" for name, default, text in field_help()]
    return "\n".join(rows) + "\n"
