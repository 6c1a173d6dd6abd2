"""What a run config says about its LLM judge, checked before any model loads or request is sent.

The API key itself is never part of the config: a config names the environment variable that holds
it (``api_key_env``), so run configs can be saved next to results and shared without leaking secrets.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields
from typing import Any

KINDS = ("api", "local")


class JudgeConfigError(ValueError):
    """The judge section of a run config cannot be used as written."""


@dataclass
class JudgeSpec:
    """One LLM judge: an OpenAI-compatible endpoint (``api``) or a model loaded beside the student (``local``)."""

    kind: str
    model: str
    weight: float = 0.3
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = 8
    timeout_s: float = 30.0
    max_retries: int = 4
    backoff_base_s: float = 0.5
    max_parse_retries: int = 1
    temperature: float = 0.0
    max_new_tokens: int = 256
    quantize: str | None = None
    batch_size: int = 8
    cache: bool = True
    prefill: bool = False
    """Local judge only: start the answer with ``{"score": `` and let the first token be a scale digit."""

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise JudgeConfigError("judge config is not usable: " + "; ".join(problems))

    @classmethod
    def from_dict(cls, d: dict[str, Any] | JudgeSpec) -> JudgeSpec:
        """Build from the ``judge:`` mapping of a run config, naming every unknown or misplaced key."""
        if isinstance(d, JudgeSpec):
            return d
        if not isinstance(d, dict):
            raise JudgeConfigError(
                f"judge config must be a mapping such as {{kind: api, model: ...}}, not {type(d).__name__}"
            )
        if "api_key" in d:
            raise JudgeConfigError(
                "judge config must not contain 'api_key': put the key in an environment variable and name that "
                "variable with 'api_key_env' (for example api_key_env: JUDGE_API_KEY); keys are never read from files"
            )
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise JudgeConfigError(
                f"unknown judge config key(s) {', '.join(map(repr, unknown))}; known keys: {', '.join(sorted(known))}"
            )
        missing = [k for k in ("kind", "model") if not d.get(k)]
        if missing:
            raise JudgeConfigError(
                f"judge config needs {' and '.join(missing)} (e.g. {{kind: api, model: gpt-4o-mini}})"
            )
        values = dict(d)
        for name, caster in _CASTS.items():
            if values.get(name) is not None:
                try:
                    values[name] = caster(values[name])
                except (TypeError, ValueError):
                    raise JudgeConfigError(
                        f"judge config {name!r} must be a {caster.__name__}, not {values[name]!r}"
                    ) from None
        return cls(**values)

    def problems(self) -> list[str]:
        """Every reason this spec cannot run, in plain words (empty when fine)."""
        out: list[str] = []
        if self.kind not in KINDS:
            out.append(f"kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if not str(self.model or "").strip():
            out.append("model is empty")
        if self.kind == "api":
            url = str(self.base_url or "")
            if not url.startswith(("http://", "https://")):
                out.append(
                    f"an api judge needs base_url starting with http:// or https:// (got {self.base_url!r})"
                )
        if self.quantize not in (None, "4bit", "none"):
            out.append(f"quantize must be 4bit or none, not {self.quantize!r}")
        for name, low in (
            ("concurrency", 1),
            ("batch_size", 1),
            ("max_new_tokens", 1),
            ("max_retries", 0),
            ("max_parse_retries", 0),
        ):
            if int(getattr(self, name)) < low:
                out.append(f"{name} must be at least {low}")
        for name in ("timeout_s", "backoff_base_s", "temperature", "weight"):
            if float(getattr(self, name)) < 0 or (name == "timeout_s" and float(self.timeout_s) == 0):
                out.append(f"{name} must be {'positive' if name == 'timeout_s' else 'zero or more'}")
        return out

    def api_key(self) -> str | None:
        """The key from the named environment variable (None when no variable is named)."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise JudgeConfigError(
                f"the judge needs an API key in the environment variable {self.api_key_env}, which is not set"
            )
        return key

    def to_dict(self) -> dict[str, Any]:
        """Plain values for the saved run config (holds the variable name, never the key)."""
        return asdict(self)


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in ("1", "true", "yes", "on"):
        return True
    if str(value).strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


_as_bool.__name__ = "boolean"
_CASTS: dict[str, Any] = {
    "weight": float,
    "concurrency": int,
    "timeout_s": float,
    "max_retries": int,
    "backoff_base_s": float,
    "max_parse_retries": int,
    "temperature": float,
    "max_new_tokens": int,
    "batch_size": int,
    "cache": _as_bool,
    "prefill": _as_bool,
    "kind": str,
    "model": str,
}
