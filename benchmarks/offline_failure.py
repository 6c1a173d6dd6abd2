"""How long a command takes to refuse a model that is not on this machine when the hub cannot be reached.

Runs ``evaluator eval|train|sft --model qwen3-0.6b`` as a user would (a fresh process each time, an empty
``HF_HOME``) with the hub made unreachable three ways: ``HF_HUB_OFFLINE=1``, ``HF_ENDPOINT`` at a closed
127.0.0.1 port, and ``HF_ENDPOINT`` at a 127.0.0.1 server that answers like a firewall page. Each run must exit
with code 2 and the one message (``hf download``, ``HF_HOME``, no traceback). Wall time includes Python start-up
and imports. (Reported before this change: ~53 s of retries, then an ``OSError`` traceback.)

Run: ``.venv/bin/python benchmarks/offline_failure.py``. The last line is the summary (the slowest run).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

EVALUATOR = str(Path(sys.executable).with_name("evaluator"))


class FirewallPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(403)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>blocked</html>")

    def log_message(self, *args: object) -> None:
        pass


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(command: str, env_extra: dict[str, str], work: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT")}
    env.update(HF_HOME=str(work / "hf-home"), HF_DATASETS_OFFLINE="1", **env_extra)
    out = ["--out", str(work / "eval")] if command == "eval" else ["--output-dir", str(work / command)]
    argv = [EVALUATOR, command, "--domain", "gsm8k", "--model", "qwen3-0.6b", "--data", "synthetic", *out]
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - t0
    text = " ".join((done.stdout + done.stderr).split())
    ok = done.returncode == 2 and "hf download Qwen/Qwen3-0.6B" in text and "HF_HOME" in text
    if not ok or "Traceback" in text:
        raise SystemExit(f"{command} {env_extra}: unexpected result {done.returncode}: {text[:500]}")
    return seconds


def main() -> None:
    server = HTTPServer(("127.0.0.1", 0), FirewallPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ways = {
        "HF_HUB_OFFLINE=1": {"HF_HUB_OFFLINE": "1"},
        "closed port": {"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"},
        "firewall page": {"HF_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}"},
    }
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for command in ("eval", "train", "sft"):
            for name, extra in ways.items():
                work = Path(tmp) / f"{command}-{len(times)}"
                work.mkdir()
                seconds = run(command, extra, work)
                times.append(seconds)
                print(f"{command:5} {name:17} {seconds:5.2f} s")
    server.shutdown()
    print(f"offline failure: {len(times)} runs, every one one message, slowest {max(times):.2f} s, "
          f"median {sorted(times)[len(times) // 2]:.2f} s")


if __name__ == "__main__":
    main()
