"""API under load: `evaluator serve` on loopback over a 15,000-fund SQLite database, 32 then 8 clients.

Run: ``.venv/bin/python benchmarks/service_load.py [--funds 15000] [--workers 2] [--seconds 60]``.
Setup (not timed): the engine grades 15,000 synthetic funds (five years of daily NAV, 30 운용사), the
reports are written as a `fund evaluate` folder and stored with `db import`; keys are made for clients
that each see one 운용사 (about 500 funds) and for an admin. Then concurrent clients (asyncio + httpx, one
connection each, the load generator on the same machine as the server) send a bounded mix for a fixed
time: 50 % fund lists (random filters and pages), 35 % fund reports, 15 % summaries; 3 in 4 requests
use a client key. A request counts as an error unless it returns 200. Prints one line per client count;
the last line is the 32-client run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

TYPES = ("국내주식형", "해외주식형", "채권형", "해외채권형", "혼합형")


COMPANIES = [f"{name}자산운용" for name in (
    "가람", "누리", "다온", "미르", "바른", "새벽", "아라", "하늘", "한결", "온누리",
    "다솜", "마루", "보람", "솔빛", "슬기", "아름", "여울", "이음", "초록", "푸른",
    "한빛", "해솔", "가온", "나래", "늘봄", "단비", "라온", "별빛", "산들", "윤슬",
)]


def named_universe(funds: int, seed: int = 0) -> tuple[Any, Any, Any]:
    """The synthetic universe with each fund's 운용사 and Korean name (the same for the same ``funds``)."""
    from fund_engine import build_universe

    navs, meta, bench = build_universe(funds, seed)
    rng = np.random.default_rng(1)
    meta["company"] = np.asarray(COMPANIES)[rng.integers(0, len(COMPANIES), funds)]
    meta["fund_name"] = [f"{c[:2]} {t} 증권투자신탁 {i % 7}호" for i, (c, t) in enumerate(zip(meta["company"], meta["type"], strict=True))]
    return navs, meta, bench


def build_folder(funds: int, out: Path) -> tuple[list[str], dict[str, list[str]]]:
    """Grade a synthetic universe and write its reports; return the companies and each one's fund codes."""
    from evaluator.core.provenance import provenance
    from evaluator.domains.fund.engine.engine import evaluate_universe
    from evaluator.domains.fund.reports.batch import write_reports
    from evaluator.domains.fund.rubric import resolve_rubric

    navs, meta, bench = named_universe(funds)
    doc = resolve_rubric(None)
    evaluation = evaluate_universe(navs, meta, doc, benchmark=bench, risk_free=0.03)
    sources = {"data": {"kind": "benchmark-synthetic", "funds": funds}, "risk_free": {"annual_rate": 0.03}}
    evaluation.inputs["sources"] = sources
    evaluation.inputs["provenance"] = provenance(sources, doc)
    write_reports(evaluation, out)
    by_company: dict[str, list[str]] = {}
    for f in evaluation.funds:
        by_company.setdefault(f.company, []).append(f.fund_code)
    return COMPANIES, by_company


def cli(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "evaluator.app.cli", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"evaluator {' '.join(args[:2])} failed: {proc.stdout}{proc.stderr}")
    return proc.stdout



def wait_for_server(base: str, server: subprocess.Popen, log: Path, seconds: float = 120) -> None:
    """Until ``/healthz`` answers 200; stop with the server log's tail if it dies or never answers."""
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("server did not start: " + log.read_text(errors="replace")[-2000:])
        time.sleep(0.5)


def stop_server(server: subprocess.Popen, log: IO[Any]) -> None:
    """Terminate the server (kill it after 30 s) and close its log, so the log can be read whole."""
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def client_loop(base: str, keys: list[tuple[str, list[str]]], admin: str, until: float,
                      cap: int, lat: list[float], errors: list[int], seed: int) -> None:
    all_codes = [code for _, codes in keys for code in codes]
    import httpx

    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while time.monotonic() < until and len(lat) < cap:
            if rng.random() < 0.75:
                key, codes = rng.choice(keys)
            else:
                key, codes = admin, None
            roll = rng.random()
            if roll < 0.50:
                params: dict[str, object] = {"page": rng.randint(1, 3), "page_size": rng.choice((20, 50))}
                if rng.random() < 0.4:
                    params["type"] = rng.choice(TYPES)
                if rng.random() < 0.3:
                    params["grade"] = rng.randint(1, 5)
                path = "/api/v1/funds"
            elif roll < 0.85:
                code = rng.choice(codes or all_codes)
                path, params = f"/api/v1/funds/{code}", {}
            else:
                path, params = "/api/v1/summary", {}
            start = time.perf_counter()
            try:
                status = (await http.get(path, params=params, headers={"Authorization": f"Bearer {key}"})).status_code
            except httpx.HTTPError:
                status = 0  # connection failure or timeout
            lat.append((time.perf_counter() - start) * 1000)
            if status != 200:
                errors.append(status)


def run_load(base: str, clients: int, seconds: float, keys, admin: str) -> str:  # type: ignore[no-untyped-def]
    lat: list[float] = []
    errors: list[int] = []

    async def main() -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(*(client_loop(base, keys, admin, until, 1_000_000, lat, errors, i) for i in range(clients)))

    t0, cpu0 = time.monotonic(), time.process_time()
    asyncio.run(main())
    elapsed, cpu = time.monotonic() - t0, time.process_time() - cpu0
    print(f"load generator ({clients} clients): {cpu / max(len(lat), 1) * 1000:.2f} ms of CPU per request", flush=True)
    if errors:
        print(f"errors by status ({clients} clients): {dict(sorted(Counter(errors).items()))}", flush=True)
    q = statistics.quantiles(lat, n=100, method="inclusive")
    return (f"requests={len(lat)} errors={len(errors)} rps={len(lat) / elapsed:.1f} "
            f"p50_ms={q[49]:.1f} p95_ms={q[94]:.1f} p99_ms={q[98]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--funds", type=int, default=15000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="Keep the database here and reuse it on the next run (default: a temp dir).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="service-load-") as tmp:
        root = args.workdir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{root / 'evaluator.db'}"
        scopes = root / "companies.json"
        if scopes.is_file() and (root / "evaluator.db").is_file():
            companies, by_company = json.loads(scopes.read_text(encoding="utf-8"))
            print(f"setup: reusing {root / 'evaluator.db'}", flush=True)
        else:
            t = time.monotonic()
            companies, by_company = build_folder(args.funds, root / "reports")
            print(f"setup: {args.funds} funds graded and written in {time.monotonic() - t:.1f} s", flush=True)
            t = time.monotonic()
            print(cli("db", "import", str(root / "reports"), "--db", url).strip().replace("\n", " "), flush=True)
            print(f"setup: stored in {time.monotonic() - t:.1f} s", flush=True)
            scopes.write_text(json.dumps([companies, by_company], ensure_ascii=False), encoding="utf-8")
        keys = []
        for company in companies[:20]:
            out = cli("keys", "create", "--db", url, "--client", f"client-{company}", "--company", company)
            keys.append((out.strip().splitlines()[-1], by_company.get(company, [])))
        admin = cli("keys", "create", "--db", url, "--client", "ops", "--admin").strip().splitlines()[-1]
        port = free_port()
        log = open(root / "server.log", "wb")  # noqa: SIM115 - closed after the server stops
        env = {**os.environ, "EVALUATOR_DB": url}
        server = subprocess.Popen(
            [sys.executable, "-m", "evaluator.app.cli", "serve", "--port", str(port), "--workers", str(args.workers),
             "--rate-limit", "1000000"],  # the per-key limit is counted in the database but never reached
            stdout=log, stderr=subprocess.STDOUT, env=env,
        )
        base = f"http://127.0.0.1:{port}"
        try:

            wait_for_server(base, server, root / "server.log")
            run_load(base, 4, 5, keys, admin)  # warm-up: every worker verifies keys and fills its caches
            line32 = run_load(base, 32, args.seconds, keys, admin)
            line8 = run_load(base, 8, args.seconds, keys, admin)
        finally:
            stop_server(server, log)
        logged = (root / "server.log").read_text(errors="replace")
        leaked = any(k in logged for k, _ in keys) or admin in logged
        print(f"server: workers={args.workers} log_lines={logged.count('evaluator.api')} raw_key_in_log={leaked}")
        print(f"service clients=8 {line8}")
        print(f"service clients=32 workers={args.workers} (last line below)")
        print(f"service {line32}")


if __name__ == "__main__":
    main()
