"""Result files of the GPU validation driver (``gpu_validate.py``), written as each check ends.

A lent GPU may be taken back mid-run, so nothing waits for the end: each row is appended and synced, and the
summary table and the log bundle are rewritten atomically after every row.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from pathlib import Path
from typing import Any

from gpu_memory import TOLERANCE  # the planner's goal: within 15 % of measured max_memory_allocated

OUT_FILES = ("results.jsonl", "summary.txt", "environment.json", "logs.tar.gz", "driver.log")


class Recorder:
    """Writes each row as it comes: appended to results.jsonl, summary.txt and logs.tar.gz rebuilt."""

    def __init__(self, out: Path, logs: Path, *, force: bool) -> None:
        self.out, self.logs, self.rows = out, logs, []  # type: list[dict[str, Any]]
        out.mkdir(parents=True, exist_ok=True)
        existing = [n for n in OUT_FILES if (out / n).exists()]
        if existing and not force:
            raise SystemExit(f"{out} already holds {', '.join(existing)}; pass --force to replace them")
        for name in existing:
            (out / name).unlink()

    def log(self, message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        with (self.out / "driver.log").open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        with (self.out / "results.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        if row.get("check") == "env":
            self._atomic(self.out / "environment.json", json.dumps(row, indent=1, default=str).encode())
        self._atomic(self.out / "summary.txt", summary_text(self.rows).encode())
        self.bundle()
        self.log(f"{row.get('check')}: {row.get('status')}")

    def bundle(self) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            if self.logs.exists():
                tar.add(self.logs, arcname="logs")
        self._atomic(self.out / "logs.tar.gz", buf.getvalue())

    @staticmethod
    def _atomic(path: Path, data: bytes) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)


def gib(n: Any) -> str:
    return f"{n / 2**30:.2f}" if isinstance(n, (int, float)) else "–"


def num(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, (int, float)) else "–"


def summary_line(rows: list[dict[str, Any]]) -> str:
    done = [r for r in rows if r.get("check") != "env"]
    ok = [r for r in done if r.get("status") == "ok"]
    measured = [r for r in ok if r.get("error") is not None]
    within = [r for r in measured if abs(r["error"]) <= TOLERANCE]
    worst = max((abs(r["error"]) for r in measured), default=None)
    oom = next((r for r in done if r.get("check") == "oom"), None)
    return (
        f"gpu_validate summary: {len(ok)}/{len(done)} checks ok; planner within {TOLERANCE:.0%} of measured for "
        f"{len(within)}/{len(measured)} runs" + (f" (worst {worst:.0%})" if worst is not None else "")
        + f"; OOM checklist {'shown' if oom and oom.get('status') == 'ok' else 'NOT shown' if oom else 'not checked'}"
        + f"; {sum(r.get('status') == 'skipped' for r in done)} skipped at the deadline"
    )


def summary_text(rows: list[dict[str, Any]]) -> str:
    env = next((r for r in rows if r.get("check") == "env"), {})
    lines = [f"device: {env.get('device', '?')}  date: {time.strftime('%Y-%m-%d')}", ""]
    head = "| Check | Completion | Planner: torch peak GiB | Measured max_allocated GiB | Error | Reserved GiB | s/step | Generated tok/s (worst-case length) | Status |"
    lines += [head, "| " + " | ".join(["---"] * 9) + " |"]
    for r in rows:
        if r.get("check") == "env":
            continue
        err = r.get("error")
        lines.append(
            f"| {r.get('check')} | {r.get('completion_length', '–')} | {gib(r.get('estimate_torch_bytes'))} "
            f"| {gib(r.get('measured_max_allocated_bytes'))} | {f'{err:+.0%}' if err is not None else '–'} "
            f"| {gib(r.get('measured_max_reserved_bytes'))} | {num(r.get('seconds_per_step'))} "
            f"| {num(r.get('generated_tokens_per_s'))} | {r.get('status')}{note(r)} |"
        )
    return "\n".join([*lines, "", summary_line(rows), ""])


def note(r: dict[str, Any]) -> str:
    if r.get("check") == "oom":
        return f" (exit {r.get('exit_code')}, checklist {r.get('advice_shown')}, traceback {r.get('traceback')})"
    if r.get("status") == "ok":
        stopped = r.get("stopped_for_time") or r.get("stopped_at_deadline")
        res = r.get("resolved") or {}
        how = f"{res.get('quantize')}, {res.get('dtype')}, {res.get('optim')}, checkpointing {res.get('gradient_checkpointing')}"
        judge = f", judge {(r.get('judge') or {}).get('memory_bytes', 0) / 2**30:.2f} GiB" if r.get("judge") else ""
        return (f" ({r.get('steps')} steps, {how}{judge}; loss/grad finite {r.get('finite_loss_and_grad')}, LoRA "
                f"moved {r.get('lora_moved')}{', stopped at deadline' if stopped else ''})")
    return f" ({r['reason']})" if r.get("reason") else ""
