"""``GenerationSettings`` and ``ModelRef``: declared once, checked before any model loads, and commands' flags built
from them (``eval``, ``fund evaluate``) through typed options values."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import typer
from typer.testing import CliRunner

from evaluator.core.cli_options import build_options, flag, group, option_parameters, options_command
from evaluator.core.generation import GenerationSettings, ModelRef


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"samples": 0}, "samples per prompt must be at least 1"),
        ({"samples": 4}, "4 samples per prompt with greedy decoding"),
        ({"samples": 2, "temperature": -0.5}, "greedy decoding"),
        ({"max_new_tokens": 0}, "max_new_tokens must be at least 1, got 0"),
        ({"batch_size": 0}, "batch size must be at least 1, got 0"),
    ],
)
def test_settings_that_cannot_mean_what_was_asked_are_refused(changes: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        GenerationSettings(**changes).check()


def test_sampling_settings_pass_and_greedy_records_zeroed_knobs() -> None:
    GenerationSettings(samples=8, temperature=0.6, top_p=0.95, top_k=20).check()
    greedy = GenerationSettings(temperature=0.0, top_p=0.5, top_k=7, seed=3).record()
    assert greedy["do_sample"] is False
    assert (greedy["temperature"], greedy["top_p"], greedy["top_k"], greedy["seed"]) == (0.0, 1.0, 0, 3)
    sampled = GenerationSettings(samples=2, temperature=0.7, top_p=0.9, top_k=5, batch_size=4).record()
    assert sampled == {
        "do_sample": True, "samples": 2, "temperature": 0.7, "top_p": 0.9, "top_k": 5, "max_new_tokens": 256,
        "batch_size": 4, "seed": 0,
    }  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        GenerationSettings().temperature = 1.0  # type: ignore[misc]


@dataclass(frozen=True)
class _Options:
    name: str = flag(typer.Option("x", "--name"))
    generation: GenerationSettings = group(GenerationSettings, [f.name for f in dataclasses.fields(GenerationSettings)])
    model: ModelRef | None = group(ModelRef, ("model", "adapter", "backend"), optional=True)
    flag_order: ClassVar[tuple[str, ...]] = (
        "name", "model", "samples", "temperature", "top_p", "top_k", "batch_size", "max_new_tokens", "adapter",
        "backend", "seed",
    )  # fmt: skip


def _app(seen: list) -> typer.Typer:
    app = typer.Typer()

    @options_command(_Options)
    def cmd(opts: _Options) -> None:
        seen.append(opts)

    app.command("go")(cmd)
    app.command("other")(lambda: None)  # a second command keeps typer's subcommand layout
    return app


def test_the_flags_come_from_the_declaration_and_arrive_as_one_value(tmp_path: Path) -> None:
    seen: list = []
    app = _app(seen)
    runner = CliRunner()
    help_text = runner.invoke(app, ["go", "--help"], env={"COLUMNS": "220", "TERMINAL_WIDTH": "220"}).output
    for f in dataclasses.fields(GenerationSettings):
        assert "--" + f.name.replace("_", "-") in help_text
        assert f.metadata["help"] in help_text
    assert help_text.index("--samples") < help_text.index("--max-new-tokens") < help_text.index("--seed")
    assert help_text.index("--model") < help_text.index("--samples")  # flag_order places a group's flags apart

    result = runner.invoke(
        app, ["go", "--temperature", "0.7", "--samples", "3", "--top-p", "0.9", "--seed", "5"]
    )
    assert result.exit_code == 0, result.output
    [opts] = seen
    assert opts.name == "x" and opts.model is None  # an optional group left at its defaults is absent
    assert opts.generation == GenerationSettings(samples=3, temperature=0.7, top_p=0.9, seed=5)

    seen.clear()
    assert runner.invoke(app, ["go", "--model", "tiny", "--adapter", str(tmp_path)]).exit_code == 0
    assert seen[0].generation == GenerationSettings()  # untyped flags: the declaration's defaults
    assert seen[0].model == ModelRef("tiny", adapter=tmp_path, backend="hf")  # a path-like field parses as a Path
    assert runner.invoke(app, ["go", "--top-k", "two"]).exit_code == 2  # typed like the field


def test_a_group_takes_a_commands_own_defaults_and_refuses_a_flag_declared_twice() -> None:
    fund_like = GenerationSettings(batch_size=8, max_new_tokens=512)

    @dataclass(frozen=True)
    class Narrow:
        generation: GenerationSettings = group(GenerationSettings, ("batch_size", "max_new_tokens"), defaults=fund_like)

    params = {p.name: p.default for _, p in option_parameters(Narrow)}
    assert (params["batch_size"].default, params["max_new_tokens"].default) == (8, 512)
    assert build_options(Narrow, {"batch_size": 4, "max_new_tokens": 512}).generation == fund_like.replace(batch_size=4)

    @dataclass(frozen=True)
    class Twice:
        seed: int = flag(typer.Option(0, "--seed"))
        generation: GenerationSettings = group(GenerationSettings, ("seed",))

    with pytest.raises(TypeError, match="seed declared twice"):
        option_parameters(Twice)
