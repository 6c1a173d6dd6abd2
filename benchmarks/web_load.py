"""The web pages under load: 16 signed-in browsers' worth of clients on a 15,000-fund database, while a
third 15,000-fund batch is written (the soak).

Run: ``.venv/bin/python benchmarks/web_load.py [--funds 15000] [--workers 2] [--seconds 60] [--workdir DIR]``.
Setup (not timed; reused with ``--workdir``): the engine grades 15,000 synthetic funds (as in
``service_load.py``); that folder is stored as the latest batch, a copy one quarter earlier with about
15 % of grades moved is stored before it (so the overview has migrations), and a copy one quarter later
is kept for the soak. Then `evaluator serve --workers N` runs on 127.0.0.1 and 16 clients (asyncio +
httpx, on the same cores) sign in through /login (12 client keys of one 운용사 each, 4 admin keys) and
request for a fixed time: 20 % overview, 40 % fund list (search, 유형/grade filters, pages 1–3), 40 % fund
pages. 5 s in, `evaluator db import` stores the later batch; the load goes on at least until it is stored.
Any status other than 200 is an error.
The last line is the figure: errors, and p50/p95 per page.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service_load import TYPES, build_folder, cli, free_port, wait_for_server

MIX = (("overview", 0.2), ("list", 0.4), ("fund", 0.4))
WORDS = ("증권투자신탁", "1호", "3호", "가람", "누리", "KR")


def shifted_copy(src: Path, dst: Path, days: int, move_share: float, seed: int) -> None:
    """The same reports at another as-of date; ``move_share`` of rated funds change grade by one."""
    rng = random.Random(seed)
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    summary = json.loads((src / "summary.json").read_text(encoding="utf-8"))
    as_of = (dt.date.fromisoformat(summary["as_of"]) + dt.timedelta(days=days)).isoformat()
    moved: dict[str, int] = {}
    for line in summary["funds"]:
        if line.get("file") is None:
            continue
        doc = json.loads((src / line["file"]).read_text(encoding="utf-8"))
        doc["as_of"] = as_of
        if doc["status"] == "ok" and rng.random() < move_share:
            doc["grade"] = min(5, max(1, doc["grade"] + rng.choice((-1, 1))))
            doc["grade_label"] = f"{doc['grade']}등급"
            moved[doc["fund_code"]] = doc["grade"]
        (dst / line["file"]).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    summary["as_of"] = as_of
    for line in summary["funds"]:
        line["grade"] = moved.get(line["fund_code"], line.get("grade"))
    (dst / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")


def prepare(root: Path, funds: int) -> tuple[str, list[str], dict[str, list[str]]]:
    url = f"sqlite:///{root / 'evaluator.db'}"
    scopes = root / "companies.json"
    if scopes.is_file() and (root / "evaluator.db").is_file() and (root / "reports_next").is_dir():
        companies, by_company = json.loads(scopes.read_text(encoding="utf-8"))
        print(f"setup: reusing {root / 'evaluator.db'}", flush=True)
        return url, companies, by_company
    t = time.monotonic()
    companies, by_company = build_folder(funds, root / "reports")
    print(f"setup: {funds} funds graded and written in {time.monotonic() - t:.1f} s", flush=True)
    shifted_copy(root / "reports", root / "reports_prev", -91, 0.15, 1)
    shifted_copy(root / "reports", root / "reports_next", 92, 0.15, 2)
    t = time.monotonic()
    for folder in ("reports_prev", "reports"):
        print(cli("db", "import", str(root / folder), "--db", url).strip().replace("\n", " "), flush=True)
    print(f"setup: two batches stored in {time.monotonic() - t:.1f} s", flush=True)
    scopes.write_text(json.dumps([companies, by_company], ensure_ascii=False), encoding="utf-8")
    return url, companies, by_company


async def sign_in(http, key: str) -> None:  # type: ignore[no-untyped-def]
    form = await http.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)  # type: ignore[union-attr]
    r = await http.post("/login", data={"key": key, "csrf": token, "next": "/"})
    if r.status_code != 303:
        raise SystemExit(f"sign-in failed: {r.status_code}")


def pick(rng: random.Random, codes: list[str]) -> tuple[str, str, dict[str, object]]:
    roll, acc, name = rng.random(), 0.0, MIX[-1][0]
    for candidate, share in MIX:
        acc += share
        if roll < acc:
            name = candidate
            break
    if name == "overview":
        return name, "/", {}
    if name == "fund":
        return name, f"/funds/{rng.choice(codes)}", {}
    params: dict[str, object] = {"page": rng.randint(1, 3)}
    if rng.random() < 0.5:
        params["q"] = rng.choice(WORDS)
    if rng.random() < 0.4:
        params["type"] = rng.choice(TYPES)
    if rng.random() < 0.3:
        params["grade"] = rng.randint(1, 5)
    return name, "/funds", params


async def client(base: str, key: str, codes: list[str], until: float, lat: dict, errors: list, seed: int,
                 writer: subprocess.Popen) -> None:
    import httpx

    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=60, follow_redirects=False) as http:
        await sign_in(http, key)
        while time.monotonic() < until or writer.poll() is None:  # at least until the batch is stored
            name, path, params = pick(rng, codes)
            start = time.perf_counter()
            try:
                status = (await http.get(path, params=params)).status_code
            except httpx.HTTPError:
                status = 0
            lat[name].append((time.perf_counter() - start) * 1000)
            if status != 200:
                errors.append((name, status))


def soak_writer(url: str, folder: Path, delay: float, out: dict) -> subprocess.Popen:
    """Start ``db import`` of the later batch after ``delay`` seconds (in its own process)."""
    cmd = [sys.executable, "-c", f"import time,subprocess,sys; time.sleep({delay}); t=time.monotonic(); "
           f"r=subprocess.run([sys.executable,'-m','evaluator.app.cli','db','import',{str(folder)!r},'--db',{url!r}]); "
           "print(f'{time.monotonic()-t:.1f}', r.returncode)"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def run(base: str, url: str, root: Path, clients: list[tuple[str, list[str]]], seconds: float) -> str:
    lat: dict[str, list[float]] = defaultdict(list)
    errors: list = []
    writer = soak_writer(url, root / "reports_next", 5, {})

    async def main() -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(*(client(base, k, c, until, lat, errors, i, writer) for i, (k, c) in enumerate(clients)))

    t0 = time.monotonic()
    asyncio.run(main())
    elapsed = time.monotonic() - t0
    written = ((writer.communicate(timeout=900)[0] or "").strip().splitlines() or ["? ?"])[-1].split()
    print(f"soak: the later 15,000-fund batch stored in {written[0]} s (exit {written[1]}) during the load", flush=True)
    parts, total = [], 0
    for name, _ in MIX:
        q = statistics.quantiles(lat[name], n=100, method="inclusive")
        total += len(lat[name])
        print(f"page={name} requests={len(lat[name])} p50_ms={q[49]:.1f} p95_ms={q[94]:.1f}", flush=True)
        parts.append(f"{name}_p50_ms={q[49]:.0f} {name}_p95_ms={q[94]:.0f}")
    if errors:
        print(f"errors: {sorted(set(errors))[:10]}", flush=True)
    return f"web_load clients={len(clients)} requests={total} rps={total / elapsed:.1f} errors={len(errors)} " + " ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--funds", type=int, default=15000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workdir", type=Path, default=None, help="Keep the database and reuse it next time.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="web-load-") as tmp:
        root = args.workdir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        work = root / "run.db"
        _, companies, by_company = prepare(root, args.funds)
        for suffix in ("", "-wal", "-shm"):  # the soak writes a batch: keep the prepared database clean
            (root / f"run.db{suffix}").unlink(missing_ok=True)
            if (root / f"evaluator.db{suffix}").is_file():
                shutil.copyfile(root / f"evaluator.db{suffix}", root / f"run.db{suffix}")
        url = f"sqlite:///{work}"
        every = [c for codes in by_company.values() for c in codes]
        clients: list[tuple[str, list[str]]] = []
        for i in range(16):
            if i % 4 == 3:
                out = cli("keys", "create", "--db", url, "--client", f"ops-{i}", "--admin")
                clients.append((out.strip().splitlines()[-1], every))
            else:
                company = companies[i % len(companies)]
                out = cli("keys", "create", "--db", url, "--client", f"client-{i}", "--company", company)
                clients.append((out.strip().splitlines()[-1], by_company.get(company, [])))
        port = free_port()
        env = {**os.environ, "EVALUATOR_DB": url}
        log = open(root / "server.log", "wb")  # noqa: SIM115 - closed after the server stops
        server = subprocess.Popen(
            [sys.executable, "-m", "evaluator.app.cli", "serve", "--port", str(port), "--workers",
             str(args.workers), "--rate-limit", "1000000"],  # counted in the database, never reached
            stdout=log, stderr=subprocess.STDOUT, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            import httpx

            wait_for_server(base, server, root / "server.log")
            for path in ("/login", "/assets/plotly.min.js"):  # each worker's first asset build is not a page
                for _ in range(4):
                    httpx.get(base + path, timeout=60)
            line = run(base, url, root, clients, args.seconds)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()
        logged = (root / "server.log").read_text(errors="replace")
        leaked = any(k in logged for k, _ in clients)
        print(f"server: workers={args.workers} tracebacks={logged.count('Traceback')} raw_key_in_log={leaked}")
        print(line)


if __name__ == "__main__":
    main()
