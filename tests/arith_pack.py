"""A minimal arithmetic pack for judge tests: the judge uses only the contract's shared judge hooks."""

from __future__ import annotations

import re
from typing import Any

from evaluator.domains.base import DomainPack


class ArithmeticPack(DomainPack):
    """The smallest pack that satisfies the contract; the judge uses only the shared judge hooks."""

    name = "arith"
    description = "Grade-school arithmetic word problems."
    styles = ("plain",)

    def rubric(self) -> dict[str, Any]:
        return {"default_style": "plain", "rewards": {}}

    def reward_functions(self) -> dict[str, Any]:
        return {}

    def dataset(self, source: str | None, split: str, **kwargs: Any) -> Any:
        raise NotImplementedError

    def extract(self, text: str, *, style: str, mode: str = "strict") -> str | None:
        found = re.findall(r"answer is (\d+)", text)
        return found[-1] if found else None

    def is_correct(self, extracted: str | None, row: Any) -> bool:
        return extracted == str(row.get("answer"))
