"""A judge behind any OpenAI-compatible chat-completions endpoint (OpenAI, Gemini's compatible API, vLLM, TGI).

Requests run concurrently on a private event loop in a background thread, so the synchronous reward call
works inside TRL's training loop and even when the caller already runs an event loop. Each request has a
total time limit; 429, 5xx, timeouts, dropped connections and unreadable bodies are retried with
exponential backoff and jitter (honouring ``Retry-After``); an unreadable judgement is asked again a
bounded number of times. Nothing here raises into the trainer: a judgement that cannot be had ends as an
outcome with an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from evaluator.training.judges.config import JudgeSpec
from evaluator.training.judges.log import redact
from evaluator.training.judges.outcome import JudgeOutcome
from evaluator.training.judges.parse import JudgeParseError, parse_judgement
from evaluator.training.judges.prompt import reask_messages

RETRY_STATUS = frozenset({408, 425, 429})
MAX_BACKOFF_S = 60.0
T = TypeVar("T")


def chat_url(base_url: str) -> str:
    """The chat-completions URL for a base URL such as ``http://host:8000/v1`` (a full URL is kept)."""
    url = base_url.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def backoff_delay(retry: int, base_s: float, rng: random.Random, retry_after_s: float | None = None) -> float:
    """Seconds to wait before retry number ``retry`` (1-based): ``base·2^(retry-1)`` scaled by a jitter in [0.5, 1.5)."""
    delay = base_s * (2 ** (retry - 1)) * (0.5 + rng.random())
    if retry_after_s is not None:
        delay = max(delay, retry_after_s)
    return min(delay, MAX_BACKOFF_S)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


JSON_HEADERS = {"Content-Type": "application/json"}


def _usage_tokens(doc: Any) -> int:
    """``usage.total_tokens`` of a chat-completions body (prompt + completion when total is absent); 0 if none."""
    usage = doc.get("usage") if isinstance(doc, dict) else None
    if not isinstance(usage, dict):
        return 0
    total = usage.get("total_tokens")
    if not isinstance(total, int):
        parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
        total = sum(p for p in parts if isinstance(p, int))
    return max(0, int(total))


def _content(doc: Any) -> str | None:
    """The assistant text of a chat-completions response body (text parts joined)."""
    message = doc["choices"][0]["message"]
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if content is not None and not isinstance(content, str):
        raise TypeError("message content is neither text nor a list of parts")
    return content


class _LoopThread:
    """An event loop of our own in a daemon thread; ``run`` blocks the caller until a coroutine finishes."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="judge-http", daemon=True)
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    @property
    def started(self) -> bool:
        return self._loop is not None

    def close(self) -> None:
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=10)
        if not loop.is_running():
            loop.close()


class ApiJudge:
    """Judges prompts through ``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>``."""

    def __init__(self, spec: JudgeSpec, api_key: str | None = None, *, seed: int | None = None) -> None:
        self.spec = spec
        self.model_id = spec.model
        self.memory_bytes = 0
        self.url = chat_url(str(spec.base_url))
        self._secrets = [api_key] if api_key else []
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._rng = random.Random(seed)
        self._runner = _LoopThread()
        self._client: Any = None

    # ---- public, synchronous ------------------------------------------------------------------
    def judge(self, prompts: list[list[dict[str, str]]]) -> list[JudgeOutcome]:
        """One outcome per prompt, in order; at most ``spec.concurrency`` requests in flight."""
        if not prompts:
            return []
        try:
            return self._runner.run(self._judge_all(prompts))
        except Exception as exc:  # the trainer must never die because of a judge
            error = redact(f"judge batch failed: {type(exc).__name__}: {exc}", self._secrets)
            return [JudgeOutcome(error=error) for _ in prompts]

    def close(self) -> None:
        if self._runner.started and self._client is not None:
            with contextlib.suppress(Exception):  # closing is best effort
                self._runner.run(self._client.aclose())
        self._client = None
        self._runner.close()

    # ---- async internals ----------------------------------------------------------------------
    async def _judge_all(self, prompts: list[list[dict[str, str]]]) -> list[JudgeOutcome]:
        import httpx

        if self._client is None:
            limits = httpx.Limits(
                max_connections=self.spec.concurrency, max_keepalive_connections=self.spec.concurrency
            )
            self._client = httpx.AsyncClient(
                headers=self._headers, limits=limits, timeout=self.spec.timeout_s
            )
        gate = asyncio.Semaphore(self.spec.concurrency)
        return list(await asyncio.gather(*(self._judge_one(p, gate) for p in prompts)))

    async def _judge_one(self, messages: list[dict[str, str]], gate: asyncio.Semaphore) -> JudgeOutcome:
        out = JudgeOutcome()
        t0 = time.perf_counter()
        convo = messages
        for round_ in range(self.spec.max_parse_retries + 1):
            text, error = await self._complete(convo, gate, out)
            if error is not None:
                out.error = error
                break
            out.raw_output = redact(text, self._secrets)
            try:
                out.judgement = parse_judgement(text)
                out.error = None
                break
            except JudgeParseError as exc:
                out.parse_errors.append(str(exc))
                out.error = (
                    f"unreadable judgement after {round_ + 1} repl{'y' if round_ == 0 else 'ies'}: {exc}"
                )
                if round_ < self.spec.max_parse_retries:
                    out.retries += 1
                    convo = reask_messages(convo, text or "", str(exc))
        out.latency_s = time.perf_counter() - t0
        return out

    async def _complete(
        self, messages: list[dict[str, str]], gate: asyncio.Semaphore, out: JudgeOutcome
    ) -> tuple[str | None, str | None]:
        """(reply text, None) or (None, error) after at most ``max_retries`` retries."""
        import httpx

        body = {
            "model": self.spec.model,
            "messages": messages,
            "temperature": self.spec.temperature,
            "max_tokens": self.spec.max_new_tokens,
        }
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")  # the exact bytes sent, so they can be counted
        last_error = "no attempt made"
        retry_after: float | None = None
        for attempt in range(self.spec.max_retries + 1):
            if attempt:
                out.retries += 1
                await asyncio.sleep(backoff_delay(attempt, self.spec.backoff_base_s, self._rng, retry_after))
            retry_after = None
            out.attempts += 1
            try:
                async with gate:
                    out.bytes_sent += len(payload)  # counted before sending: a request that times out still left
                    resp = await asyncio.wait_for(
                        self._client.post(self.url, content=payload, headers=JSON_HEADERS), self.spec.timeout_s
                    )
            except (asyncio.TimeoutError, httpx.TimeoutException):
                last_error = f"request timed out after {self.spec.timeout_s:g}s"
                continue
            except httpx.TransportError as exc:
                last_error = f"connection failed ({type(exc).__name__}: {exc})"
                continue
            snippet = resp.text[:300].replace("\n", " ")
            if resp.status_code in RETRY_STATUS or resp.status_code >= 500:
                last_error = f"HTTP {resp.status_code}: {snippet}"
                retry_after = _retry_after(resp.headers.get("retry-after"))
                continue
            if resp.status_code >= 400:
                return None, redact(
                    f"HTTP {resp.status_code} from the judge endpoint (not retried): {snippet}", self._secrets
                )
            try:
                doc = resp.json()
                out.tokens += _usage_tokens(doc)
                return _content(doc), None
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                last_error = f"malformed chat-completions body ({type(exc).__name__}): {snippet}"
                continue
        tries = self.spec.max_retries + 1
        return None, redact(
            f"gave up after {tries} attempt{'s' if tries > 1 else ''}: {last_error}", self._secrets
        )
