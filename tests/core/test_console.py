"""Error messages quote user data; the console must print it as written, never parse it as markup."""

from __future__ import annotations

import pytest
import typer

from evaluator.core import console


@pytest.mark.parametrize("message", ["fund [/x] is broken", "cell '[bold]' in row 3", "code [red]A1[/red]"])
def test_fail_prints_bracketed_data_literally(message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as exit_info:
        console.fail(message)
    assert exit_info.value.exit_code == 2
    assert f"error: {message}" in capsys.readouterr().err
