"""An LLM judge as a TRL reward function: prompt from the pack's rubric, score 0–5 normalised to 0–1.

``JudgeReward`` is what the trainer passes to ``GRPOTrainer(reward_funcs=[...])``. Per call it builds
one judge prompt per completion from the pack (task and reference from ``judge_context``, the scale from
``judge_levels``), serves repeats from the cache, sends the rest to its backend, appends every sample
to ``judge_evaluations.jsonl`` and returns ``None`` where no score could be had (TRL ignores those).
It never raises into the training loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evaluator.domains.base import DomainPack, completion_text
from evaluator.training.judges.api import ApiJudge
from evaluator.training.judges.cache import JudgeCache, cache_key
from evaluator.training.judges.config import JudgeSpec
from evaluator.training.judges.local import LocalJudge
from evaluator.training.judges.log import JudgeLog, redact
from evaluator.training.judges.outcome import JudgeBackend, JudgeOutcome
from evaluator.training.judges.prompt import build_judge_messages

NOT_COLUMNS = frozenset({"completion_ids", "log_extra", "log_metric", "environments", "trainer_state"})


class JudgeReward:
    """Callable TRL reward ``(prompts, completions, trainer_state, **columns) -> list[float | None]``."""

    def __init__(
        self,
        spec: JudgeSpec,
        pack: DomainPack,
        output_dir: str | Path,
        backend: JudgeBackend,
        secrets: list[str] | None = None,
    ) -> None:
        self.__name__ = "judge"
        self.spec = spec
        self.weight = float(spec.weight)
        self.pack = pack
        self.backend = backend
        self._secrets = [s for s in (secrets or []) if s]
        self.log = JudgeLog(output_dir, self._secrets)
        self.cache = JudgeCache() if spec.cache else None
        self._counts = {
            "samples": 0,
            "calls": 0,
            "requests": 0,
            "failures": 0,
            "cache_hits": 0,
            "retries": 0,
            "none_returned": 0,
            "bytes_sent": 0,
            "tokens": 0,
        }
        self._latency_total = 0.0

    @property
    def memory_bytes(self) -> int:
        """Parameter and buffer bytes of a local judge model; 0 for an API judge."""
        return int(getattr(self.backend, "memory_bytes", 0) or 0)

    def stats(self) -> dict[str, Any]:
        """Totals since start: judgements made, failures, cache hits, retries, mean latency, Nones returned."""
        calls = self._counts["calls"]
        return {
            **self._counts,
            "mean_latency_s": round(self._latency_total / calls, 4) if calls else 0.0,
            "log_write_errors": self.log.write_errors,
        }

    def close(self) -> None:
        try:
            self.backend.close()
        except Exception as exc:
            self.log.warn("closing the judge failed: %s", exc)

    # ---- the reward call ----------------------------------------------------------------------
    def __call__(
        self,
        prompts: list[Any] | None = None,
        completions: list[Any] | None = None,
        trainer_state: Any = None,
        **columns: Any,
    ) -> list[float | None]:
        completions = list(completions or [])
        try:
            return self._score(prompts, completions, trainer_state, columns)
        except Exception as exc:  # a judge must never stop training
            self._counts["failures"] += len(completions)
            self._counts["none_returned"] += len(completions)
            self.log.warn(
                "judge call failed for %s samples: %s: %s", len(completions), type(exc).__name__, exc
            )
            return [None] * len(completions)

    def _score(
        self, prompts: list[Any] | None, completions: list[Any], trainer_state: Any, columns: dict[str, Any]
    ) -> list[float | None]:
        n = len(completions)
        step = getattr(trainer_state, "global_step", None)
        data = {k: v for k, v in columns.items() if k not in NOT_COLUMNS and _is_column(v, n)}
        levels = self.pack.judge_levels()
        messages: list[list[dict[str, str]]] = []
        outcomes: list[JudgeOutcome | None] = [None] * n
        broken: list[JudgeOutcome] = []
        for i, completion in enumerate(completions):
            row = {k: v[i] for k, v in data.items()}
            if prompts is not None and i < len(prompts):
                row["prompt"] = prompts[i]
            try:
                context = self.pack.judge_context(row)
                text = completion_text(completion)
                messages.append(build_judge_messages(context, levels, text, self.pack.description))
            except Exception as exc:  # one bad row costs its own reward, not the batch's
                messages.append([])
                outcomes[i] = JudgeOutcome(
                    error=f"could not build the judge prompt: {type(exc).__name__}: {exc}"
                )
                broken.append(outcomes[i])

        keys = [cache_key(self.backend.model_id, m) for m in messages]
        cached = [False] * n
        first_of: dict[str, int] = {}
        todo: list[int] = []
        for i, key in enumerate(keys):
            if outcomes[i] is not None:
                continue
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                outcomes[i], cached[i] = hit, True
            elif self.cache is not None and key in first_of:
                cached[i] = True  # the same prompt earlier in this batch: judged once, shared
            else:
                first_of[key] = i
                todo.append(i)

        t0 = time.perf_counter()
        judged = self.backend.judge([messages[i] for i in todo]) if todo else []
        batch_s = time.perf_counter() - t0
        fresh = [*judged, *broken]
        for i, out in zip(todo, judged, strict=True):
            outcomes[i] = out
            if out.ok and self.cache is not None:
                self.cache.put(keys[i], out)
        for i in range(n):
            if outcomes[i] is None:
                outcomes[i] = outcomes[first_of[keys[i]]]

        rewards = [
            o.judgement.reward if o is not None and o.judgement is not None else None for o in outcomes
        ]
        self._account(fresh, cached, rewards)
        self._write_log(step, data.get("id"), messages, outcomes, cached, rewards)
        self._report(columns, fresh, cached, rewards, outcomes, batch_s)
        return rewards

    # ---- bookkeeping --------------------------------------------------------------------------
    def _account(self, fresh: list[JudgeOutcome], cached: list[bool], rewards: list[float | None]) -> None:
        c = self._counts
        c["samples"] += len(rewards)
        c["calls"] += len(fresh)
        c["requests"] += sum(o.attempts for o in fresh)
        c["retries"] += sum(o.retries for o in fresh)
        c["failures"] += sum(1 for o in fresh if not o.ok)
        c["cache_hits"] += sum(cached)
        c["none_returned"] += sum(1 for r in rewards if r is None)
        c["bytes_sent"] += sum(o.bytes_sent for o in fresh)
        c["tokens"] += sum(o.tokens for o in fresh)
        self._latency_total += sum(o.latency_s for o in fresh)
        for o in fresh:
            if not o.ok:
                self.log.warn(
                    "judge %s gave no score after %s call(s): %s", self.backend.model_id, o.attempts, o.error
                )

    def _write_log(
        self,
        step: int | None,
        ids: Any,
        messages: list[list[dict[str, str]]],
        outcomes: list[JudgeOutcome | None],
        cached: list[bool],
        rewards: list[float | None],
    ) -> None:
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        rows = []
        for i, out in enumerate(outcomes):
            assert out is not None
            hit = cached[i]
            rows.append(
                {
                    "time": now,
                    "step": step,
                    "sample_id": _plain_id(ids[i]) if ids is not None else None,
                    "index": i,
                    "judge": {"kind": self.spec.kind, "model": self.backend.model_id},
                    "prompt": messages[i],
                    "raw_output": out.raw_output,
                    "score": out.judgement.score if out.judgement else None,
                    "reward": rewards[i],
                    "feedback": out.judgement.feedback if out.judgement else None,
                    "latency_s": 0.0 if hit else round(out.latency_s, 4),
                    "attempts": 0 if hit else out.attempts,
                    "retries": 0 if hit else out.retries,
                    "cached": hit,
                    "parse_errors": [] if hit else list(out.parse_errors),
                    "error": out.error,
                }
            )
        self.log.write(rows)

    def _report(
        self,
        columns: dict[str, Any],
        fresh: list[JudgeOutcome],
        cached: list[bool],
        rewards: list[float | None],
        outcomes: list[JudgeOutcome | None],
        batch_s: float,
    ) -> None:
        """Per-step figures through TRL's ``log_metric`` / ``log_extra`` hooks, when the trainer passes them."""
        log_metric, log_extra = columns.get("log_metric"), columns.get("log_extra")
        try:
            if callable(log_metric):
                failures = sum(1 for o in fresh if not o.ok)
                log_metric("judge/failures", float(failures))
                log_metric("judge/cache_hits", float(sum(cached)))
                log_metric("judge/none_frac", sum(r is None for r in rewards) / max(1, len(rewards)))
                log_metric(
                    "judge/mean_latency_s", sum(o.latency_s for o in fresh) / len(fresh) if fresh else 0.0
                )
                log_metric("judge/batch_s", batch_s)
            if callable(log_extra):
                log_extra("judge_score", [o.judgement.score if o and o.judgement else None for o in outcomes])
                log_extra(
                    "judge_feedback",
                    [
                        redact(o.judgement.feedback, self._secrets) if o and o.judgement else None
                        for o in outcomes
                    ],
                )
        except Exception as exc:
            self.log.warn("could not report judge metrics to the trainer: %s", exc)


def _is_column(value: Any, n: int) -> bool:
    """A per-sample column (a list, or a ``datasets`` column) rather than a scalar or a hook."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__getitem__"):
        return False
    try:
        return len(value) == n
    except TypeError:
        return False


def _plain_id(value: Any) -> str | int | None:
    if value is None or isinstance(value, (int, str)):
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def build_judge_reward(
    spec: JudgeSpec | dict[str, Any], pack: DomainPack, output_dir: Path | str
) -> JudgeReward:
    """A ready judge reward: reads the API key from its environment variable or loads the local judge model."""
    spec = JudgeSpec.from_dict(spec)
    if spec.kind == "api":
        key = spec.api_key()
        return JudgeReward(spec, pack, output_dir, ApiJudge(spec, key), secrets=[key] if key else [])
    return JudgeReward(spec, pack, output_dir, LocalJudge(spec))
