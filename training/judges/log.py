"""``judge_evaluations.jsonl``: one line per judged sample, with secrets scrubbed before anything is written.

The log is appended to (a resumed run adds to it, nothing is overwritten), one whole line per ``write``.
Every string that reaches the log or a log message goes through :func:`redact`, so an API key cannot
leak through an exception message or a server that echoes request headers back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from evaluator.core.outputs import append_jsonl
from evaluator.training.distributed import is_main_process

LOG_NAME = "judge_evaluations.jsonl"
SCHEMA_PACKAGE = "evaluator.training.judges"
SCHEMA_FILE = "judge_evaluation.schema.json"
REDACTED = "[REDACTED]"

logger = logging.getLogger("evaluator.judge")


def redact(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every secret replaced, recursing through lists and dicts."""
    live = [s for s in secrets if s]
    if not live:
        return value
    if isinstance(value, str):
        for secret in live:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact(k, live): redact(v, live) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, live) for v in value]
    return value


class JudgeLog:
    """Appends judged samples to ``<output_dir>/judge_evaluations.jsonl``; a failing disk never stops training."""

    def __init__(self, output_dir: str | Path, secrets: Sequence[str] = ()) -> None:
        self.path = Path(output_dir) / LOG_NAME
        self._secrets = list(secrets)
        self._lock = threading.Lock()
        self.write_errors = 0

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        if not is_main_process():  # one judge log per run: rank 0's samples
            return
        with self._lock:
            for row in rows:
                try:
                    append_jsonl(self.path, redact(row, self._secrets))
                except OSError as exc:
                    self.write_errors += 1
                    logger.warning("could not append to %s: %s", self.path, redact(str(exc), self._secrets))

    def warn(self, message: str, *args: Any) -> None:
        """A warning in the Python log (format with ``%s`` only), secrets scrubbed from message and arguments."""
        logger.warning(redact(message, self._secrets), *(redact(str(a), self._secrets) for a in args))
