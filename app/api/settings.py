"""Limits the server applies, from the environment (``evaluator serve`` sets them for every worker)."""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_RATE = "EVALUATOR_RATE_LIMIT"
ENV_SESSION_HOURS = "EVALUATOR_SESSION_HOURS"
ENV_UPLOAD_MB = "EVALUATOR_UPLOAD_MAX_MB"
ENV_IDLE_MINUTES = "EVALUATOR_SESSION_IDLE_MINUTES"


def _number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
    if value < 0:
        raise ValueError(f"{name}={raw!r} must not be negative")
    return value


@dataclass(frozen=True)
class Settings:
    rate_per_minute: int = 600  # requests per key per minute on the API and the pages; 0 turns it off
    login_failures: int = 10  # failed sign-ins per account (login or key id) per login window
    login_address_failures: int = 50  # failed sign-ins per client address per login window (any account)
    login_window_s: int = 300
    session_hours: float = 8.0  # a session ends this long after sign-in, however busy
    session_idle_minutes: float = 30.0  # … or after this long without a request
    upload_max_mb: float = 50.0  # per file

    @classmethod
    def from_env(cls) -> Settings:
        return cls(
            rate_per_minute=int(_number(ENV_RATE, cls.rate_per_minute)),
            session_hours=_number(ENV_SESSION_HOURS, cls.session_hours) or cls.session_hours,
            session_idle_minutes=_number(ENV_IDLE_MINUTES, cls.session_idle_minutes) or cls.session_idle_minutes,
            upload_max_mb=_number(ENV_UPLOAD_MB, cls.upload_max_mb) or cls.upload_max_mb,
        )
