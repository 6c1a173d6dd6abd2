"""Scanning a folder of 500 runs for the run viewer (``evaluator serve --runs DIR``).

Run: ``.venv/bin/python benchmarks/run_viewer_scan.py [--runs 500]``.
Setup (not timed): 70 % GRPO runs (``run_config.yaml``, 200 logged steps, 800 completions, a judge log,
``best_adapter/`` with its files, a ``checkpoint-200/`` and ``final/``), 10 % SFT runs, 14 % evaluations
(``report.json`` + ``samples.jsonl``, 200 items), 4 % comparison files and 2 % experiments (``results.json``),
spread over nested folders. Timed: the first scan by a fresh viewer (no cache of ours; the operating system's
file cache is warm, since the files were just written), a rescan (what the rescan button costs), and
``/runs`` rendered over HTTP with all 500 rows. The last line carries the first scan; goal under 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_folder_fixtures import make_comparison, make_evaluation, make_experiment, make_training_run
from run_viewer_large import serve, sign_in, timed


def build(root: Path, total: int) -> dict[str, int]:
    """``total`` runs under ``root``: one of each built by the product's writers, then copied."""
    seed = root.parent / "seed"
    grpo = make_training_run(seed / "grpo", steps=200, per_step=4, eval_every=20, filler=300)
    for name in ("best_adapter", "checkpoint-200", "final"):
        (grpo / name).mkdir(exist_ok=True)
        for f in ("adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "README.md"):
            (grpo / name / f).write_bytes(b"{}" if f.endswith(".json") else b"x" * 1024)
    sft = make_training_run(seed / "sft", steps=50, per_step=0, eval_every=0, judge=False)
    (sft / "run_config.yaml").write_text((sft / "run_config.yaml").read_text().replace(
        "resolved:\n", "resolved:\n  kind: sft\n"), encoding="utf-8")
    ev_a = make_evaluation(seed / "ev-a", [i % 3 == 0 for i in range(200)])
    ev_b = make_evaluation(seed / "ev-b", [i % 2 == 0 for i in range(200)])
    counts = {"training": int(total * 0.70), "sft": int(total * 0.10), "evaluation": int(total * 0.14),
              "comparison": int(total * 0.04)}
    counts["experiment"] = total - sum(counts.values())
    for i in range(counts["training"]):
        shutil.copytree(grpo, root / f"team{i % 5}" / "grpo" / f"run-{i:04d}")
    for i in range(counts["sft"]):
        shutil.copytree(sft, root / f"team{i % 5}" / "sft" / f"run-{i:04d}")
    # the experiments evaluate two of the GRPO runs into <run>/eval, as the experiment runner does
    for i in range(counts["evaluation"] - 2):
        shutil.copytree(ev_a if i % 2 else ev_b, root / "evals" / f"eval-{i:04d}")
    for i in range(counts["comparison"]):
        make_comparison(ev_a, ev_b, root / "evals" / f"compare-{i:04d}.json")
    for i in range(counts["experiment"]):
        make_experiment(root / "experiments" / f"exp-{i:02d}", {"rules": root / "team0" / "grpo" / "run-0000",
                                                               "judge": root / "team1" / "grpo" / "run-0001"})
    return counts


def main() -> None:
    from evaluator.app.run_folders.viewer import RunViewer

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lab"
        t0 = time.perf_counter()
        counts = build(root, args.runs)
        files = sum(1 for _ in root.rglob("*"))
        print(f"setup {time.perf_counter() - t0:.1f}s  {files} files  " + "  ".join(f"{k} {v}" for k, v in counts.items()))
        viewer = RunViewer([root])
        t0 = time.perf_counter()
        entries = viewer.catalog.scan()
        cold = time.perf_counter() - t0
        assert len(entries) == args.runs, (len(entries), args.runs)
        assert not [e for e in entries if e.problems], [e.problems for e in entries if e.problems][:3]
        t0 = time.perf_counter()
        viewer.catalog.scan()
        rescan = time.perf_counter() - t0
        base, key, server = serve(root, Path(tmp) / "e.db")
        client = sign_in(base, key)
        list_s, response = timed(client, "/runs")
        assert response.text.count("<tr data-kind=") == args.runs
        server.should_exit = True  # type: ignore[attr-defined]
        print(f"first scan {cold:.2f} s · rescan {rescan:.2f} s · /runs with {args.runs} rows {list_s * 1000:.0f} ms")
        print(f"run_viewer_scan runs={args.runs} scan_s={cold:.2f} rescan_s={rescan:.2f} list_page_s={list_s:.2f} goal_s=2.0")


if __name__ == "__main__":
    main()
