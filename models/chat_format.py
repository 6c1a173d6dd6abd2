"""How a chat prompt is rendered for a tokenizer and a prompt style: system folding and the thinking switch.

One decision serves every caller (GRPO, SFT, evaluation, ``fund evaluate --model``, the local judge and the
memory planner), so a model sees the same text in training and in evaluation.

- **System folding.** Some chat templates refuse the system role (stock Gemma 2, hence AtomicGPT, raise
  ``System role not supported``); others drop it silently. Whether a template does either is decided by
  rendering a probe system message once per template, never from the model's name. The system text then
  becomes the start of the first user turn, separated by a blank line, as Gemma's own guidance does.
- **Thinking switch.** A template that reads ``enable_thinking`` (Qwen3) thinks unless told not to. Styles a
  pack declares as thinking (``DomainPack.thinking_styles``, e.g. ``qwen3-think``) get ``enable_thinking=True``;
  every other style gets ``False``, so a model asked for ``<reasoning>`` tags does not open with ``<think>``.
  A pack may override the arguments through ``DomainPack.chat_template_kwargs(style)``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluator.domains.base import DomainPack

logger = logging.getLogger("evaluator.chat")

THINKING_FLAG = "enable_thinking"
_PROBE_SYSTEM = "SYSTEM-ROLE-PROBE-5b1e"
_PROBE_USER = "USER-ROLE-PROBE-7c2d"
_SYSTEM_ROLES = ("system", "developer")

_decisions: dict[str, bool] = {}
_lock = threading.Lock()


class ChatTemplateError(ValueError):
    """A tokenizer's chat template cannot render the prompts at all (not even after folding)."""


def _template_text(tokenizer: Any) -> str:
    """The tokenizer's chat template as one string ('' when it has none); named templates are joined."""
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, str):
        return template
    if isinstance(template, Mapping):
        return json.dumps(dict(template), sort_keys=True)
    if isinstance(template, list):  # the older list-of-{name, template} form
        return json.dumps(template, sort_keys=True)
    return ""


def reads_thinking_flag(tokenizer: Any) -> bool:
    """Whether the chat template reads ``enable_thinking`` (Qwen3 and its derivatives)."""
    return THINKING_FLAG in _template_text(tokenizer)


def refuses_system_role(tokenizer: Any) -> bool:
    """Whether the template raises on, or silently drops, a system message. Decided once per template."""
    template = _template_text(tokenizer)
    if not template:
        return False
    with _lock:
        if template in _decisions:
            return _decisions[template]
    probe = [{"role": "system", "content": _PROBE_SYSTEM}, {"role": "user", "content": _PROBE_USER}]
    reason = ""
    try:
        text = tokenizer.apply_chat_template(probe, tokenize=False, add_generation_prompt=True)
        if _PROBE_SYSTEM not in text:
            reason = "drops the system message"
    except Exception as exc:  # a template's raise_exception arrives as jinja2's TemplateError
        reason = f"refuses the system role ({type(exc).__name__}: {exc})"
    if reason:
        folded = fold_system(probe)
        try:
            tokenizer.apply_chat_template(folded, tokenize=False, add_generation_prompt=True)
        except Exception as exc:
            raise ChatTemplateError(
                f"the chat template of {_tokenizer_name(tokenizer)} cannot render a user message either "
                f"({type(exc).__name__}: {exc}); pass a model whose tokenizer has a chat template"
            ) from exc
    with _lock:
        first = template not in _decisions
        _decisions[template] = bool(reason)
    if reason and first:
        logger.warning(
            "the chat template of %s %s: system prompts are folded into the first user turn, "
            "separated by a blank line",
            _tokenizer_name(tokenizer),
            reason,
        )
    return bool(reason)


def _tokenizer_name(tokenizer: Any) -> str:
    return str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)


def fold_system(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """System messages before the first user turn become the start of that turn, a blank line apart.

    With no user turn at all, the system text becomes one. Messages after the first user turn are kept.
    """
    out = [dict(m) for m in messages]
    first_user = next((i for i, m in enumerate(out) if m.get("role") == "user"), None)
    head = out if first_user is None else out[:first_user]
    system = [str(m.get("content") or "") for m in head if m.get("role") in _SYSTEM_ROLES]
    if not system:
        return out
    rest = [m for m in head if m.get("role") not in _SYSTEM_ROLES]
    text = "\n\n".join(s for s in system if s)
    if first_user is None:
        return [{"role": "user", "content": text}, *rest]
    user = dict(out[first_user])
    content = str(user.get("content") or "")
    user["content"] = f"{text}\n\n{content}" if text and content else (text or content)
    return [*rest, user, *out[first_user + 1 :]]


@dataclass(frozen=True)
class ChatFormat:
    """What rendering a prompt for one tokenizer and style involves: folding, and extra template arguments."""

    fold_system: bool = False
    template_kwargs: dict[str, Any] = field(default_factory=dict)

    def messages(self, prompt: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The chat messages handed to the template (system text folded where the template needs it)."""
        return fold_system(prompt) if self.fold_system else [dict(m) for m in prompt]

    def render(
        self, tokenizer: Any, prompt: Sequence[Mapping[str, Any]] | str, *, add_generation_prompt: bool = True
    ) -> str:
        """The exact text the model sees (an already rendered string is returned as it is)."""
        if isinstance(prompt, str):
            return prompt
        return tokenizer.apply_chat_template(
            self.messages(prompt),
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            **self.template_kwargs,
        )

    def record(self) -> dict[str, Any]:
        """How prompts were rendered, as ``run_config.yaml`` and reports record it."""
        return {"fold_system_into_user": self.fold_system, "chat_template_kwargs": dict(self.template_kwargs)}


def template_kwargs_for(tokenizer: Any, style: str | None, pack: DomainPack | None = None) -> dict[str, Any]:
    """Extra chat-template arguments: the thinking switch, then whatever the pack's hook overrides."""
    kwargs: dict[str, Any] = {}
    if reads_thinking_flag(tokenizer):
        kwargs[THINKING_FLAG] = pack is not None and style is not None and style in pack.thinking_styles
    override = pack.chat_template_kwargs(style) if pack is not None else None
    if override is not None:
        kwargs.update(dict(override))
    return kwargs


def chat_format(tokenizer: Any, style: str | None = None, pack: DomainPack | None = None) -> ChatFormat:
    """The one decision on how prompts are rendered for ``tokenizer`` in ``style`` (of ``pack``).

    ``style=None`` (a judge, a pack-less caller) is a style that does not think.
    """
    return ChatFormat(fold_system=refuses_system_role(tokenizer), template_kwargs=template_kwargs_for(tokenizer, style, pack))


def fold_dataset(dataset: Any, fmt: ChatFormat, column: str = "prompt") -> Any:
    """The dataset with its conversational prompts folded where ``fmt`` says so (unchanged otherwise).

    TRL's trainers render the ``prompt`` column themselves with only ``chat_template_kwargs`` to steer them,
    so the folding has to be in the messages they receive.
    """
    if not fmt.fold_system or column not in getattr(dataset, "column_names", ()):
        return dataset
    return dataset.map(lambda row: {column: fmt.messages(row[column]) if isinstance(row[column], list) else row[column]})
