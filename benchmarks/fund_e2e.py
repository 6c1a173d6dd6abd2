"""The monthly job end to end, as an analyst runs it: `evaluator fund evaluate DATA --meta … --db sqlite:///…`.

Run: ``.venv/bin/python benchmarks/fund_e2e.py [--funds 15000] [--layout wide|long] [--keep DIR]``.
The files go under ``--keep DIR`` (reused when present) or a fresh folder beside this checkout: on the
development machines ``/tmp`` creates files ~8× slower than the work disk, which would measure the
folder, not the job.
Setup (not timed): the synthetic 15,000-fund universe (five years of business days plus a week, five 유형,
30 운용사; ``service_load.named_universe``) written as the files an analyst has: the NAV table (wide:
기준일자 × one column per fund; long: 기준일자, 펀드코드, 기준가격 rows), META and the per-유형 benchmark.
With ``--postgres`` the batch goes into a fresh PostgreSQL database (the tests' own server, ``tests/pg_server.py``),
its schema created before the timed command (the SQLite file is created by the command itself, as before).
The previous run's ``out`` and database are moved aside first and deleted after the timed command (deleting
them just before would make the file system's inode search part of the figure). Timed: the command in a subprocess (its own ``stages:`` line gives read / grade / write / store), its peak
memory (the child's max RSS), and in the same run a bare ``pd.read_csv`` of the same NAV file (floats, C
engine) — the floor any reader of that file pays. Last line:
``fund_e2e funds=… dates=… layout=… read_s=… engine_s=… write_s=… store_s=… total_s=… raw_read_s=… ratio=… peak_mib=…``
with ratio = total_s / raw_read_s.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))


def write_files(folder: Path, funds: int, layout: str) -> dict[str, Path]:
    """The NAV table in ``layout``, META and the benchmark, as CSV files (utf-8, 2 decimals like vendors)."""
    from service_load import named_universe

    navs, meta, bench = named_universe(funds)
    files = {"data": folder / f"nav_{layout}.csv", "meta": folder / "meta.csv", "benchmark": folder / "benchmark.csv"}
    if layout == "wide":
        navs.to_csv(files["data"], index_label="기준일자", float_format="%.2f", date_format="%Y-%m-%d")
    else:
        long = navs.rename_axis("기준일자").reset_index().melt(id_vars="기준일자", var_name="펀드코드", value_name="기준가격")
        long.to_csv(files["data"], index=False, float_format="%.2f", date_format="%Y-%m-%d")
    meta.rename(columns={"type": "유형", "company": "운용사", "fund_name": "펀드명", "set_amount": "설정액"}).to_csv(
        files["meta"], index_label="펀드코드")
    bench.to_csv(files["benchmark"], index_label="기준일자", float_format="%.4f", date_format="%Y-%m-%d")
    return files


def bare_read(path: Path, layout: str) -> float:
    """A plain ``pd.read_csv`` of the NAV file (dates as the index or a column, prices as floats)."""
    t = time.perf_counter()
    if layout == "wide":
        pd.read_csv(path, index_col=0, engine="c")
    else:
        pd.read_csv(path, engine="c")
    return time.perf_counter() - t


def run_job(files: dict[str, Path], out: Path, db_url: str) -> tuple[dict[str, float], float, float]:
    """The command as a user runs it; returns its stage seconds, wall seconds and peak MiB."""
    cmd = [sys.executable, "-m", "evaluator.app.cli", "fund", "evaluate", str(files["data"]), "--meta",
           str(files["meta"]), "--benchmark", str(files["benchmark"]), "--out", str(out), "--db", db_url]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"fund evaluate failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024  # Linux: KiB
    line = next((x for x in done.stdout.splitlines() if x.startswith("stages:")), "")
    stages = {k: float(v) for k, v in re.findall(r"(\w+) ([0-9.]+) s", line)}
    return stages, wall, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--funds", type=int, default=15_000)
    parser.add_argument("--layout", choices=("wide", "long"), default="wide")
    parser.add_argument("--keep", type=Path, default=None, help="Keep (and reuse) the generated files here.")
    parser.add_argument("--postgres", action="store_true",
                        help="Store into a fresh PostgreSQL database (the tests' own server) instead of SQLite.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="fund_e2e_", dir=Path(__file__).resolve().parents[2]))
    root.mkdir(parents=True, exist_ok=True)
    files = {"data": root / f"nav_{args.layout}.csv", "meta": root / "meta.csv", "benchmark": root / "benchmark.csv"}
    if not all(p.is_file() for p in files.values()):
        t = time.perf_counter()
        files = write_files(root, args.funds, args.layout)
        print(f"setup: wrote {files['data']} ({files['data'].stat().st_size / 2**20:.1f} MiB) in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
    out, db = root / "out", root / "e2e.db"
    # The last run's outputs are moved aside now and deleted after the timed job: ext4 skips inodes freed in
    # the last minute when it allocates new ones, so deleting 15,000 reports just before would time that
    # search (seconds of kernel time in every file the job creates), not the job.
    trash = root / f".stale-{os.getpid()}"
    for stale in (out, db):
        if stale.exists():
            trash.mkdir(exist_ok=True)
            stale.rename(trash / stale.name)
    raw = min(bare_read(files["data"], args.layout) for _ in range(2))
    server = None
    if args.postgres:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from pg_server import PostgresServer

        server = PostgresServer().start()
    try:
        url = server.create_database() if server is not None else f"sqlite:///{db}"
        if server is not None:  # a monthly job's database exists: its schema is not part of the job
            subprocess.run([sys.executable, "-m", "evaluator.app.cli", "db", "upgrade", "--db", url], check=True,
                           capture_output=True)
        stages, wall, peak = run_job(files, out, url)
    finally:
        if server is not None:
            server.stop()
        if trash.exists():
            import shutil

            shutil.rmtree(trash)
    dates = len(pd.read_csv(files["benchmark"], usecols=[0]))
    load = os.getloadavg()[0]
    print(f"stages: {stages} wall {wall:.2f} s, load average {load:.2f}")
    print(
        f"fund_e2e funds={args.funds} dates={dates} layout={args.layout}{' db=postgresql' if args.postgres else ''} read_s={stages.get('read', 0):.2f} "
        f"engine_s={stages.get('grade', 0):.2f} write_s={stages.get('write', 0):.2f} store_s={stages.get('store', 0):.2f} "
        f"total_s={wall:.2f} raw_read_s={raw:.2f} ratio={wall / raw:.1f} peak_mib={peak:.0f}"
    )


if __name__ == "__main__":
    main()
