"""A large training run in the run viewer: 10,000 logged steps and 50,000 logged completions.

Run: ``.venv/bin/python benchmarks/run_viewer_large.py [--steps 10000] [--per-step 5] [--filler 600]``.
Setup (not timed): a run folder in the trainer's formats (``metrics.jsonl`` with a held-out row every 100
steps, ``completions.jsonl`` with ~0.8 KB per completion, ``run_config.yaml``, ``best_adapter/best.json``),
a small run beside it, a SQLite database with an admin key, and ``evaluator serve``'s web app with
``--runs`` on that folder, on uvicorn over loopback. The server first shows the small run's pages (so the
templates are compiled, as in any server that has shown one page), then each page of the large run is
loaded once cold (nothing about that run cached: the line index of both files and the metrics series are
built by that request) and 5 times warm (median). The run page's cold open is measured in two fresh
servers and the slower is reported. The last line is that figure; goal under 1 s.
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import httpx
from run_folder_fixtures import make_training_run


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(root: Path, db: Path) -> tuple[str, str, object]:
    import uvicorn

    from evaluator.app.api.settings import Settings
    from evaluator.app.storage.apikeys import create_key
    from evaluator.app.storage.database import open_database
    from evaluator.app.web.app import create_web_app
    from evaluator.app.web.extensions import Extensions
    from evaluator.app.web.run_pages import runs_page_set

    engine = open_database(f"sqlite:///{db}", migrate=True)
    _, key = create_key(engine, client="lab", companies=[], funds=[], admin=True, expires_on=None)
    app = create_web_app(engine=engine, settings=Settings(rate_per_minute=0),
                         extensions=Extensions(page_sets=[runs_page_set([root])]))
    port = _port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", key, server


def sign_in(base: str, key: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=60)
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token is not None
    client.post("/login", data={"key": key, "csrf": token.group(1)})
    return client


def timed(client: httpx.Client, url: str) -> tuple[float, httpx.Response]:
    t0 = time.perf_counter()
    response = client.get(url)
    seconds = time.perf_counter() - t0
    assert response.status_code == 200, (url, response.status_code, response.text[-300:])
    return seconds, response


def warm_up(client: httpx.Client) -> None:
    """Pages of another run: what a server that has shown anything has already done (templates compiled)."""
    for url in ("/runs", "/runs/view/lab/small", "/runs/samples/lab/small"):
        timed(client, url)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--per-step", type=int, default=5)
    ap.add_argument("--filler", type=int, default=600)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lab"
        t0 = time.perf_counter()
        run = make_training_run(root / "big", steps=args.steps, per_step=args.per_step, eval_every=100,
                                judge=False, filler=args.filler)
        make_training_run(root / "small", steps=20, per_step=2, eval_every=5, judge=False)
        sizes = {p.name: p.stat().st_size for p in run.glob("*.jsonl")}
        print(f"setup {time.perf_counter() - t0:.1f}s  " + "  ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in sizes.items()))
        base, key, server = serve(root, Path(tmp) / "e.db")
        client = sign_in(base, key)
        warm_up(client)
        pages = {
            "run page": "/runs/view/lab/big",
            "samples page 1": "/runs/samples/lab/big",
            "samples last page": f"/runs/samples/lab/big?page={args.steps * args.per_step // 25}",
            "samples filtered": "/runs/samples/lab/big?reward=correctness&low=1",
            "samples search": "/runs/samples/lab/big?q=step+4999+%230",
            "runs list": "/runs",
        }
        results = {}
        for name, url in pages.items():
            cold, response = timed(client, url)
            warm = statistics.median(timed(client, url)[0] for _ in range(5))
            results[name] = (cold, warm)
            print(f"{name:18s} cold {cold * 1000:7.0f} ms  warm {warm * 1000:6.0f} ms  ({len(response.content) / 1024:.0f} KiB)")
        run_page = results["run page"][0]
        # the run page is cold only while the server is fresh: measure it again in a second, fresh server
        server.should_exit = True
        base2, key2, server2 = serve(root, Path(tmp) / "e2.db")
        client2 = sign_in(base2, key2)
        warm_up(client2)
        cold2, _ = timed(client2, "/runs/view/lab/big")
        server2.should_exit = True
        print(f"run_viewer_large steps={args.steps} completions={args.steps * args.per_step} "
              f"run_page_cold_s={max(run_page, cold2):.2f} run_page_warm_s={results['run page'][1]:.3f} "
              f"samples_page1_s={results['samples page 1'][0]:.2f} goal_s=1.0")


if __name__ == "__main__":
    main()
