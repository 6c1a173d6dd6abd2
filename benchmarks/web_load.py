"""The web pages under load: 16 signed-in browsers' worth of clients on a 15,000-fund database, while an
upload job evaluates and stores a third 15,000-fund batch (the soak).

Run: ``.venv/bin/python benchmarks/web_load.py [--funds 15000] [--workers 2] [--seconds 60] [--workdir DIR]``.
Setup (not timed; reused with ``--workdir``): the engine grades 15,000 synthetic funds (as in
``service_load.py``); that folder is stored as the latest batch, and a copy one quarter earlier with about
15 % of grades moved is stored before it (so the overview has migrations). The same universe one quarter
later is written as the files an analyst uploads: a wide NAV CSV (date + one column per fund, 3 years and a
week), a META CSV (펀드코드, 유형, 운용사, 펀드명, 설정액) and a benchmark CSV (one column per 유형). Then
`evaluator serve --workers N` runs on 127.0.0.1 and 16 clients (asyncio + httpx, on the same cores) sign in
through /login (12 client keys of one 운용사 each, 4 admin keys) and request for a fixed time: 20 % overview,
40 % fund list (search, 유형/grade filters, pages 1–3), 40 % fund pages. 5 s in, a writer thread POSTs the
three files to ``/api/v1/evaluations`` with an admin key and polls ``/api/v1/jobs/{id}`` until the job
ends: the server loads, grades, writes and stores the batch while the pages are under load; the load goes on
at least until the job has ended. Any status other than 200 is an error.
The line before the last says how the job ended and how long each stage took; the last line is the figure:
errors, and p50/p95 per page.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import itertools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service_load import TYPES, build_folder, cli, free_port, stop_server, wait_for_server

MIX = (("overview", 0.2), ("list", 0.4), ("fund", 0.4))
MAX_EXTRA_S = 1800  # the load goes on until the job ends, but not forever
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


def upload_files(folder: Path, funds: int) -> dict[str, Path]:
    """The same universe one quarter (66 business days) later, as the three files an analyst uploads."""
    import pandas as pd
    from service_load import named_universe

    folder.mkdir(parents=True, exist_ok=True)
    navs, meta, bench = named_universe(funds)
    dates = pd.bdate_range(navs.index[0] + pd.offsets.BDay(66), periods=len(navs))
    navs.index, bench.index = dates, dates
    keep = dates >= dates[-1] - pd.DateOffset(years=3, days=10)  # the 3y window and a little: a smaller file
    files = {"data": folder / "nav.csv", "meta": folder / "meta.csv", "benchmark": folder / "benchmark.csv"}
    navs[keep].to_csv(files["data"], index_label="기준일자", float_format="%.2f", date_format="%Y-%m-%d")
    meta.rename(columns={"type": "유형", "company": "운용사", "fund_name": "펀드명", "set_amount": "설정액"}).to_csv(
        files["meta"], index_label="펀드코드")
    bench[keep].to_csv(files["benchmark"], index_label="기준일자", float_format="%.4f", date_format="%Y-%m-%d")
    return files


def prepare(root: Path, funds: int) -> tuple[str, list[str], dict[str, list[str]]]:
    url = f"sqlite:///{root / 'evaluator.db'}"
    scopes = root / "companies.json"
    if scopes.is_file() and (root / "evaluator.db").is_file() and (root / "upload" / "benchmark.csv").is_file():
        companies, by_company = json.loads(scopes.read_text(encoding="utf-8"))
        print(f"setup: reusing {root / 'evaluator.db'} and {root / 'upload'}", flush=True)
        return url, companies, by_company
    t = time.monotonic()
    companies, by_company = build_folder(funds, root / "reports")
    print(f"setup: {funds} funds graded and written in {time.monotonic() - t:.1f} s", flush=True)
    shifted_copy(root / "reports", root / "reports_prev", -91, 0.15, 1)
    t = time.monotonic()
    for folder in ("reports_prev", "reports"):
        print(cli("db", "import", str(root / folder), "--db", url).strip().replace("\n", " "), flush=True)
    print(f"setup: two batches stored in {time.monotonic() - t:.1f} s", flush=True)
    t = time.monotonic()
    files = upload_files(root / "upload", funds)
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in files.values())
    print(f"setup: upload files written in {time.monotonic() - t:.1f} s ({sizes})", flush=True)
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
                 writer: threading.Event) -> None:
    import httpx

    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=60, follow_redirects=False) as http:
        await sign_in(http, key)
        while time.monotonic() < until or (not writer.is_set() and time.monotonic() < until + MAX_EXTRA_S):
            name, path, params = pick(rng, codes)
            start = time.perf_counter()
            try:
                status = (await http.get(path, params=params)).status_code
            except httpx.HTTPError:
                status = 0
            lat[name].append((time.perf_counter() - start) * 1000)
            if status != 200:
                errors.append((name, status))


def upload_job(base: str, key: str, files: dict[str, Path], delay: float, out: dict, ended: threading.Event) -> None:
    """After ``delay`` s: POST the files to /api/v1/evaluations, then poll the job until it ends (a thread).

    ``out`` gets the outcome: state, run id, message, seconds to upload and in all, and when each stage began."""
    import httpx

    try:
        time.sleep(delay)
        headers = {"Authorization": f"Bearer {key}"}
        t0 = time.monotonic()
        with contextlib.ExitStack() as stack:
            parts = {role: (path.name, stack.enter_context(path.open("rb"))) for role, path in files.items()}
            r = httpx.post(f"{base}/api/v1/evaluations", headers=headers, files=parts, timeout=600)
        if r.status_code != 202:
            raise RuntimeError(f"upload answered {r.status_code}: {r.text[:300]}")
        out["job_id"], out["upload_s"], out["stages"] = r.json()["job_id"], time.monotonic() - t0, {}
        while True:
            doc = httpx.get(f"{base}/api/v1/jobs/{out['job_id']}", headers=headers, timeout=120).json()
            out["stages"].setdefault(doc["stage"], time.monotonic() - t0)
            if doc["state"] in ("done", "failed"):
                out.update(state=doc["state"], run_id=doc["run_id"], message=doc["message"])
                break
            time.sleep(1.0)
        out["seconds"] = time.monotonic() - t0
    except Exception as exc:  # the figure line must still be printed, with the job's failure beside it
        out.update(state="error", message=f"{type(exc).__name__}: {exc}")
    finally:
        ended.set()


def job_line(out: dict) -> str:
    stages = out.get("stages") or {}
    marks = sorted(stages.items(), key=lambda kv: kv[1])
    spans = [f"{name} {end - begin:.0f} s" for (name, begin), (_, end) in itertools.pairwise(marks)]
    return (f"soak: upload job {out.get('job_id')} {out.get('state')} (run {out.get('run_id')}) in "
            f"{out.get('seconds', 0):.1f} s, upload {out.get('upload_s', 0):.1f} s; stages: {'; '.join(spans)}"
            + (f"; message: {out['message']}" if out.get("message") else ""))


def run(base: str, admin: str, files: dict[str, Path], clients: list[tuple[str, list[str]]],
        seconds: float) -> tuple[str, str]:
    lat: dict[str, list[float]] = defaultdict(list)
    errors: list = []
    outcome: dict = {}
    ended = threading.Event()
    writer = threading.Thread(target=upload_job, args=(base, admin, files, 5, outcome, ended), daemon=True)
    writer.start()

    async def main() -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(*(client(base, k, c, until, lat, errors, i, ended) for i, (k, c) in enumerate(clients)))

    t0 = time.monotonic()
    asyncio.run(main())
    elapsed = time.monotonic() - t0
    writer.join(timeout=60)
    parts, total = [], 0
    for name, _ in MIX:
        q = statistics.quantiles(lat[name], n=100, method="inclusive")
        total += len(lat[name])
        print(f"page={name} requests={len(lat[name])} p50_ms={q[49]:.1f} p95_ms={q[94]:.1f}", flush=True)
        parts.append(f"{name}_p50_ms={q[49]:.0f} {name}_p95_ms={q[94]:.0f}")
    if errors:
        print(f"errors: {sorted(set(errors))[:10]}", flush=True)
    line = (f"web_load clients={len(clients)} requests={total} rps={total / elapsed:.1f} errors={len(errors)} "
            + " ".join(parts))
    return job_line(outcome), line


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
        files = {role: root / "upload" / name for role, name in
                 (("data", "nav.csv"), ("meta", "meta.csv"), ("benchmark", "benchmark.csv"))}
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
        admin = cli("keys", "create", "--db", url, "--client", "uploads", "--admin").strip().splitlines()[-1]
        upload_mb = max(f.stat().st_size for f in files.values()) / (1 << 20) + 10  # the NAV file is ~90 MB
        env = {**os.environ, "EVALUATOR_DB": url, "EVALUATOR_UPLOAD_MAX_MB": f"{upload_mb:.0f}"}
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
            job, line = run(base, admin, files, clients, args.seconds)
        finally:
            stop_server(server, log)
        logged = (root / "server.log").read_text(errors="replace")
        leaked = any(k in logged for k, _ in [*clients, (admin, [])])
        print(f"server: workers={args.workers} tracebacks={logged.count('Traceback')} raw_key_in_log={leaked}")
        print(job)
        print(line)


if __name__ == "__main__":
    main()
