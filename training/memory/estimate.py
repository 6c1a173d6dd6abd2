"""The peak-memory estimate of a GRPO run: settings in, a table of what holds memory in which phase out.

A GRPO step passes through phases that do not hold memory at the same time: generation (KV cache for the
whole generation batch), judging (a local judge model's cache) and the policy update (activations, the fused
LM head, gradients). Weights, adapter and optimizer state persist through all of them. The estimated peak is
the largest phase plus what CUDA itself takes. Each phase's rows come from :mod:`phases`, the byte formulas
from :mod:`costs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluator.training.memory import phases
from evaluator.training.memory.architectures import ArchSpec
from evaluator.training.memory.settings import GIB, PHASES, PlanError, PlanSettings, Row, resolve
from evaluator.training.memory.vllm import vllm_notes, vllm_rows


@dataclass(frozen=True)
class MemoryPlan:
    """The estimate: rows by phase, the phase peaks, and the total the GPU must hold."""

    model: str
    arch: ArchSpec
    settings: PlanSettings
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()

    def _phase_total(self, phase: str, torch_only: bool = False) -> int:
        return sum(
            r.bytes
            for r in self.rows
            if r.phase in ("persistent", phase) and (r.torch_allocated or not torch_only)
        )

    @property
    def phase_totals(self) -> dict[str, int]:
        """Device memory during each phase (persistent rows included), CUDA overhead excluded."""
        return {p: self._phase_total(p) for p in PHASES[1:] if any(r.phase == p for r in self.rows)}

    @property
    def peak_phase(self) -> str:
        totals = self.phase_totals
        return max(totals, key=lambda p: totals[p]) if totals else "persistent"

    @property
    def overhead_bytes(self) -> int:
        return sum(r.bytes for r in self.rows if r.phase == "overhead")

    @property
    def total_bytes(self) -> int:
        """Estimated peak the GPU must hold, CUDA context and allocator slack included."""
        return self._phase_total(self.peak_phase) + self.overhead_bytes

    @property
    def torch_allocated_bytes(self) -> int:
        """The peak ``torch.cuda.max_memory_allocated`` should report (no context, slack or paged state)."""
        return max(self._phase_total(p, torch_only=True) for p in [*self.phase_totals, "persistent"])

    def fits(self, gpu_bytes: int | float) -> bool:
        return self.total_bytes <= gpu_bytes

    def largest_rows(self, n: int = 3) -> list[Row]:
        return sorted(self.rows, key=lambda r: -r.bytes)[:n]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "architecture": self.arch.to_dict(),
            "settings": self.settings.document(),
            "rows": [
                {
                    "name": r.name,
                    "bytes": int(r.bytes),
                    "gib": round(r.bytes / GIB, 3),
                    "note": r.note,
                    "phase": r.phase,
                    "torch_allocated": r.torch_allocated,
                }
                for r in self.rows
            ],
            "phases": {p: int(b) for p, b in self.phase_totals.items()},
            "peak_phase": self.peak_phase,
            "total_bytes": int(self.total_bytes),
            "total_gib": round(self.total_bytes / GIB, 3),
            "torch_allocated_bytes": int(self.torch_allocated_bytes),
            "notes": list(self.notes),
        }


def estimate(arch: ArchSpec, settings: PlanSettings) -> MemoryPlan:
    """Estimate the peak device memory of a GRPO run of ``arch`` with ``settings`` (what they leave to the hardware
    decided for their device first)."""
    s = resolve(settings)
    problems = s.problems()
    if problems:
        raise PlanError("; ".join(problems))
    reg = phases.Regime.of(s)
    sizes, train_bytes = phases.trainable(arch, s, reg)
    rows = [
        *phases.weight_rows(arch, reg),
        *phases.trainable_rows(s, sizes, train_bytes),
        *phases.judge_rows(s),
        *vllm_rows(s),
        *phases.load_rows(arch, reg),
        *phases.generation_rows(arch, s, reg),
        *phases.training_rows(arch, s, reg, sizes, train_bytes),
    ]
    if s.device == "cuda":
        rows.append(phases.overhead_row(rows))
    notes = [*phases.plan_notes(arch, s, reg), *vllm_notes(s)]
    return MemoryPlan(model=arch.name, arch=arch, settings=s, rows=tuple(rows), notes=tuple(notes))
