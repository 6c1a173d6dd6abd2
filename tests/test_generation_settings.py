"""``GenerationSettings``: declared once, checked before any model loads, and the ``eval`` flags built from it."""

from __future__ import annotations

import dataclasses

import pytest
import typer
from typer.testing import CliRunner

from evaluator.app.config_options import generation_option, with_generation_options
from evaluator.models.generation import GenerationSettings


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


def _app(seen: list) -> typer.Typer:
    app = typer.Typer()

    def cmd(
        name: str = typer.Option("x", "--name"),
        generation: GenerationSettings | None = None,
        seed: int = generation_option("seed"),
    ) -> None:
        seen.append((name, generation, seed))

    app.command("go")(with_generation_options(cmd))
    app.command("other")(lambda: None)  # a second command keeps typer's subcommand layout
    return app


def test_the_flags_come_from_the_declaration_and_arrive_as_one_value() -> None:
    seen: list = []
    app = _app(seen)
    runner = CliRunner()
    help_text = runner.invoke(app, ["go", "--help"], env={"COLUMNS": "220", "TERMINAL_WIDTH": "220"}).output
    for f in dataclasses.fields(GenerationSettings):
        assert "--" + f.name.replace("_", "-") in help_text
        assert f.metadata["help"] in help_text
    assert help_text.index("--samples") < help_text.index("--max-new-tokens") < help_text.index("--seed")

    result = runner.invoke(
        app, ["go", "--temperature", "0.7", "--samples", "3", "--top-p", "0.9", "--seed", "5"]
    )
    assert result.exit_code == 0, result.output
    [(name, generation, seed)] = seen
    assert name == "x" and seed == 5  # a field the command places itself still reaches it
    assert generation == GenerationSettings(samples=3, temperature=0.7, top_p=0.9, seed=5)

    seen.clear()
    assert runner.invoke(app, ["go"]).exit_code == 0
    assert seen[0][1] == GenerationSettings()  # untyped flags: the declaration's defaults
    assert runner.invoke(app, ["go", "--top-k", "two"]).exit_code == 2  # typed like the field
