"""Dynamic sampling without touching TRL's internals: a prompt stream that rests prompts with no signal.

A group whose completions all score alike gets zero advantage, so generating it again soon is wasted
compute (DAPO drops such groups and refills the batch, which in TRL 1.16 means overriding private
methods). Here the trainer reads an ``IterableDataset`` built on :class:`PromptStream`; after each logged
step the run passes the step's per-prompt total rewards to :meth:`PromptStream.observe`, and a prompt whose
group had zero spread is not drawn again for ``cooldown`` optimizer steps. Decisions lag by the rows the
data loader has already taken (about one generation batch): the stream only changes which prompts come next.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any


class PromptStream:
    """An endless, seeded, epoch-shuffled stream of training rows that skips prompts on cool-down."""

    def __init__(self, rows: list[dict[str, Any]], cooldown: int, seed: int, key: Callable[[Any], str]) -> None:
        if not rows:
            raise ValueError("dynamic sampling needs at least one training row")
        self.rows = rows
        self.cooldown = cooldown
        self.seed = seed
        self.key = key
        self.step = 0
        self.resting: dict[str, int] = {}  # prompt key -> first step it may be drawn again
        self.counts = {"groups": 0, "zero_spread_groups": 0, "drawn": 0, "skipped": 0, "forced": 0}

    def observe(self, keys: list[str], totals: list[float | None]) -> None:
        """One step's completions (prompt key and total reward each, groups consecutive): rest flat groups."""
        self.step += 1
        groups: dict[str, list[float]] = {}
        order: list[str] = []
        for k, v in zip(keys, totals, strict=True):
            if k not in groups:
                groups[k], _ = [], order.append(k)
            if v is not None:
                groups[k].append(float(v))
        for k in order:
            self.counts["groups"] += 1
            values = groups[k]
            if len(values) > 1 and max(values) - min(values) == 0:
                self.counts["zero_spread_groups"] += 1
                self.resting[k] = self.step + self.cooldown

    def __iter__(self) -> Iterator[dict[str, Any]]:
        rng = random.Random(self.seed)
        while True:
            order = list(range(len(self.rows)))
            rng.shuffle(order)
            yielded = 0
            for i in order:
                row = self.rows[i]
                if self.resting.get(self.key(row), 0) > self.step:
                    self.counts["skipped"] += 1
                    continue
                self.counts["drawn"] += 1
                yielded += 1
                yield row
            if not yielded:  # every prompt is resting: draw anyway rather than stall the run
                self.counts["forced"] += 1
                self.resting.clear()

    def generate(self) -> Iterator[dict[str, Any]]:
        """The generator ``datasets.IterableDataset.from_generator`` reads."""
        yield from self

    def summary(self) -> dict[str, Any]:
        return {"cooldown_steps": self.cooldown, **self.counts, "resting_now": sum(1 for s in self.resting.values() if s > self.step)}


def streamed_dataset(stream: PromptStream) -> Any:
    """The ``IterableDataset`` TRL trains on (it repeats each prompt ``num_generations`` times itself)."""
    import datasets

    return datasets.IterableDataset.from_generator(stream.generate)
