"""What one judgement produced, whatever the backend: the same record feeds rewards, stats and the log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from evaluator.training.judges.parse import Judgement


@dataclass
class JudgeOutcome:
    """The end of one judgement: a score, or the error that stopped it after bounded retries."""

    judgement: Judgement | None = None
    raw_output: str | None = None
    latency_s: float = 0.0
    attempts: int = 0
    """Model calls made (HTTP requests or generations), re-asks and retries included."""
    retries: int = 0
    """Calls beyond the first: transport retries plus re-asks after unreadable replies."""
    error: str | None = None
    bytes_sent: int = 0
    """Request bytes that left the machine (HTTP bodies, every attempt); 0 for a judge on this machine."""
    tokens: int = 0
    """Tokens the judge processed (prompt + reply): the endpoint's reported usage, or the local count."""
    parse_errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.judgement is not None


class JudgeBackend(Protocol):
    """A judge model reachable somehow: judges a list of prompts, one outcome each, never raising."""

    model_id: str
    memory_bytes: int

    def judge(self, prompts: list[list[dict[str, str]]]) -> list[JudgeOutcome]: ...

    def close(self) -> None: ...
