"""Loading a model that is not on this machine: local folders and the cache first, then one clear message.

The hub is made unreachable for real: ``HF_HUB_OFFLINE=1``, ``HF_ENDPOINT`` at a closed 127.0.0.1 port, or at
a 127.0.0.1 server that answers like a firewall page. Nothing here talks to the internet.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import run_cli

from evaluator.models.loading import load_model, load_tokenizer, model_source
from evaluator.models.source import (
    ModelNotAvailable,
    hub_unreachable_reason,
    locate,
    looks_like_path,
)

FAST_S = 5.0


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def empty_hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hf-home"
    home.mkdir()
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    return home


@pytest.fixture
def closed_hub(empty_hf_home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Online mode, but the endpoint is a 127.0.0.1 port nobody listens on."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    return endpoint


class _Handler(BaseHTTPRequestHandler):
    status = 404
    content_type = "text/html"
    body = b"<html>blocked by policy</html>"
    extra: ClassVar[dict[str, str]] = {}

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", self.content_type)
        for key, value in self.extra.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[type[_Handler]]:
    """A real HTTP server on 127.0.0.1; tests set how it answers through the yielded handler class."""
    handler = type("Handler", (_Handler,), {})
    server = HTTPServer(("127.0.0.1", 0), handler)
    handler.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def assert_unavailable_message(text: str, hub_id: str, flag: str = "--model") -> None:
    flat = " ".join(text.split())
    folder = hub_id.rsplit("/", 1)[-1]
    assert hub_id in flat and f"hf download {hub_id} --local-dir {folder}" in flat
    assert f"{flag} /path/to/{folder}" in flat and "HF_HOME" in flat
    assert "Traceback" not in text


@pytest.mark.parametrize(
    ("args", "hub_id"),
    [
        (["eval", "--domain", "gsm8k", "--model", "qwen3-0.6b", "--data", "synthetic", "--limit", "2"], "Qwen/Qwen3-0.6B"),
        (["train", "--domain", "gsm8k", "--model", "atomicgpt-gemma2-9b", "--data", "synthetic"], "KAERI-MLP/AtomicGPT-gemma2-9B"),
        (["sft", "--domain", "gsm8k", "--model", "Qwen/Qwen3-4B", "--data", "synthetic"], "Qwen/Qwen3-4B"),
    ],
)
def test_offline_commands_fail_at_once_with_one_message(
    empty_hf_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], hub_id: str
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "out"
    t0 = time.perf_counter()
    result = run_cli(*args, "--out" if args[0] == "eval" else "--output-dir", str(out))
    elapsed = time.perf_counter() - t0
    assert result.exit_code == 2, result.output
    assert_unavailable_message(result.output, hub_id)
    assert "HF_HUB_OFFLINE=1" in result.output and elapsed < FAST_S
    assert not out.exists()  # refused before any run folder or report was made


def test_an_unreachable_endpoint_fails_within_seconds(closed_hub: str) -> None:
    t0 = time.perf_counter()
    with pytest.raises(ModelNotAvailable) as info:
        load_model("qwen3-1.7b", for_training=False)
    assert time.perf_counter() - t0 < FAST_S
    message = str(info.value)
    assert_unavailable_message(message, "Qwen/Qwen3-1.7B")
    assert closed_hub in message and "did not answer" in message


def test_a_firewall_page_is_not_taken_for_the_hub(
    empty_hf_home: Path, monkeypatch: pytest.MonkeyPatch, http_server: type[_Handler]
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", http_server.url)  # type: ignore[attr-defined]
    with pytest.raises(ModelNotAvailable, match="not as the hub does") as info:
        load_tokenizer("org/some-model")
    assert_unavailable_message(str(info.value), "org/some-model")
    # The hub answers JSON, a 404 for an unknown id included: then it is reachable and transformers decides.
    http_server.content_type = "application/json"
    http_server.body = json.dumps({"error": "Repository not found"}).encode()
    http_server.extra = {"X-Error-Code": "RepoNotFound"}
    assert hub_unreachable_reason("org/some-model") is None
    http_server.status = 200
    http_server.body = json.dumps({"id": "org/some-model"}).encode()
    assert hub_unreachable_reason("org/some-model") is None


def test_the_judge_and_the_tokenizer_name_themselves(empty_hf_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluator.training.judges.config import JudgeSpec
    from evaluator.training.judges.local import LocalJudge

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotAvailable) as info:
        LocalJudge(JudgeSpec.from_dict({"kind": "local", "model": "qwen3-8b"}))
    assert str(info.value).startswith("judge model qwen3-8b (Qwen/Qwen3-8B)")
    assert_unavailable_message(str(info.value), "Qwen/Qwen3-8B", flag="the judge's model:")
    with pytest.raises(ModelNotAvailable, match=r"^model qwen3-4b"):
        load_tokenizer("qwen3-4b")


@pytest.mark.parametrize("name", ["runs/x/final", "./mymodel", "../elsewhere/model", "~/no-such-model-here", "a/b/c"])
def test_a_missing_relative_path_is_a_missing_folder_not_a_hub_id(
    closed_hub: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    t0 = time.perf_counter()
    with pytest.raises(ModelNotAvailable, match=r"^model folder .* does not exist") as info:
        model_source(name)
    assert time.perf_counter() - t0 < 1.0  # no network was tried
    assert "hf download" not in str(info.value)


def test_cli_reports_a_missing_run_folder_for_model_and_init_from(
    closed_hub: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    result = run_cli("eval", "--domain", "gsm8k", "--model", "runs/x/final", "--out", "e")
    assert result.exit_code == 2 and "model folder runs/x/final does not exist" in " ".join(result.output.split())
    result = run_cli("train", "--domain", "gsm8k", "--model", "tiny", "--init-from", "runs/x/final", "-o", "t")
    flat = " ".join(result.output.split())
    assert result.exit_code == 2 and "--init-from folder runs/x/final does not exist" in flat
    assert "Traceback" not in result.output and not (tmp_path / "t").exists()


@pytest.mark.parametrize(
    ("name", "is_path"),
    [
        ("Qwen/Qwen3-0.6B", False),
        ("gpt2", False),
        ("KAERI-MLP/AtomicGPT-gemma2-9B", False),
        ("runs/x/final", True),
        ("/abs/model", True),
        ("./model", True),
        ("~/model", True),
        ("model/", True),
        ("C:\\models\\qwen", True),
        ("org//name", True),
    ],
)
def test_looks_like_path(name: str, is_path: bool) -> None:
    assert looks_like_path(name) is is_path


def test_a_two_part_name_whose_first_part_is_a_local_folder_is_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert not looks_like_path("runs/final")
    (tmp_path / "runs").mkdir()
    assert looks_like_path("runs/final")


def test_a_file_is_not_a_model_folder(tmp_path: Path) -> None:
    f = tmp_path / "model.safetensors"
    f.write_bytes(b"x")
    with pytest.raises(ModelNotAvailable, match="is a file"):
        locate(str(f))


def test_a_cached_hub_model_loads_without_the_hub(
    closed_hub: str, empty_hf_home: Path, template_models: dict[str, Path]
) -> None:
    """A hub id found in the cache loads from its snapshot folder: no request, no retry, even with the hub down."""
    repo = empty_hf_home / "hub" / "models--Qwen--Qwen3-0.6B"
    snapshot = repo / "snapshots" / "0123abcd"
    shutil.copytree(template_models["qwen3"], snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    src, _ = model_source("qwen3-0.6b")
    assert src.cached and Path(src.path) == snapshot and src.hub_id == "Qwen/Qwen3-0.6B"
    t0 = time.perf_counter()
    model, tok, _ = load_model("qwen3-0.6b", for_training=False)
    assert time.perf_counter() - t0 < FAST_S
    assert "enable_thinking" in tok.chat_template and model.config.hidden_size == 64
