"""The collapse guard's decision on synthetic metric streams, and the config rules around it."""

from __future__ import annotations

import pytest

from evaluator.training.collapse import CollapseGuard, format_signal
from evaluator.training.config import ConfigError, TrainConfig, load_config, report_to


def _run(stream: list[tuple[float, float]], drop: float = 0.10) -> list[dict]:
    guard = CollapseGuard(drop)
    events = []
    for step, (acc, fmt) in enumerate(stream, 1):
        event = guard.update(step * 10, acc, fmt)
        if event is not None:
            events.append(event)
    return events


def test_the_documented_collapse_fires_once_at_the_first_point_past_the_margin() -> None:
    # lr 3e-4: accuracy peaks at 52 %, then the policy answers `<answer>2</answer>` to everything,
    # so the format rate rises to 1.0 while accuracy sinks to the share of problems whose answer is 2.
    stream = [(0.40, 0.80), (0.52, 0.85), (0.47, 0.90), (0.41, 0.97), (0.12, 1.0), (0.03, 1.0)]
    events = _run(stream)
    assert len(events) == 1  # one fall, one event — not one per later point
    event = events[0]
    assert event["step"] == 40 and event["best_step"] == 20
    assert event["best_accuracy"] == 0.52 and event["eval/accuracy"] == 0.41
    assert event["drop"] == pytest.approx(0.11)
    assert event["format"] == 0.97 and event["format_at_best"] == 0.85


def test_a_fall_just_inside_the_margin_is_not_a_collapse() -> None:
    assert _run([(0.50, 0.9), (0.41, 0.95), (0.405, 0.95)]) == []  # 0.095 below the best
    assert len(_run([(0.50, 0.9), (0.40, 0.95)])) == 1  # exactly 0.10 below counts


def test_accuracy_falling_with_the_format_is_plain_degradation_not_collapse() -> None:
    # Format rate at the best was 0.80 and fell to 0.50: the model got worse at everything.
    assert _run([(0.30, 0.60), (0.50, 0.80), (0.30, 0.50), (0.10, 0.40)]) == []


def test_format_that_stays_high_counts_even_if_slightly_lower_than_at_the_best() -> None:
    assert len(_run([(0.60, 0.99), (0.45, 0.93)])) == 1  # ≥ 0.9: still high
    assert len(_run([(0.60, 0.70), (0.45, 0.66)])) == 1  # within the 0.05 slack of 0.70
    assert _run([(0.60, 0.70), (0.45, 0.64)]) == []  # 0.06 lower and below 0.9


def test_recovery_rearms_the_guard_and_a_new_best_moves_the_reference() -> None:
    stream = [(0.50, 0.9), (0.35, 0.95), (0.30, 0.95), (0.48, 0.9), (0.36, 0.95), (0.70, 0.9), (0.58, 0.95)]
    events = _run(stream)
    assert [e["step"] for e in events] == [20, 50, 70]
    assert [e["best_accuracy"] for e in events] == [0.50, 0.50, 0.70]


def test_missing_figures_never_fire() -> None:
    guard = CollapseGuard()
    assert guard.update(1, None, 1.0) is None
    assert guard.update(2, 0.6, None) is None
    assert guard.update(3, 0.1, None) is None  # no format signal at all: cannot tell collapse from decay
    assert guard.events == []


def test_a_looser_threshold_ignores_what_the_default_catches() -> None:
    stream = [(0.50, 0.9), (0.35, 0.95)]
    assert len(_run(stream, drop=0.10)) == 1 and _run(stream, drop=0.20) == []


def test_format_signal_prefers_the_held_out_rate_then_format_rewards() -> None:
    logs = {"rewards/correctness/mean": 0.1, "rewards/strict_format/mean": 0.4, "rewards/xmlcount/mean": 0.2}
    assert format_signal(logs) == pytest.approx(0.3)  # correctness is not a format reward
    assert format_signal({**logs, "eval/format_rate": 0.75}) == 0.75
    assert format_signal({"rewards/correctness/mean": 1.0}) is None
    assert format_signal({"eval/format_rate": float("nan"), "rewards/soft_format/mean": 0.5}) == 0.5


def test_config_rules_for_eval_guard_and_trackers() -> None:
    cfg = load_config(None, {"eval_every": 5, "report_to": ["tensorboard", "wandb"], "run_name": "a"})
    assert report_to(cfg) == ["tensorboard", "wandb"]
    assert report_to(load_config(None, {"report_to": "tensorboard, wandb"})) == ["tensorboard", "wandb"]
    assert report_to(TrainConfig()) == "none" and report_to(TrainConfig(report_to=["none"])) == "none"
    bad = [
        ({"eval_every": 0}, "eval_every"),
        ({"eval_limit": 0}, "eval_limit"),
        ({"eval_every": 5, "eval_split": "train"}, "training split"),
        ({"collapse_drop": 0}, "collapse_drop"),
        ({"collapse_drop": 1.5}, "collapse_drop"),
        ({"stop_on_collapse": True}, "--eval-every"),
        ({"report_to": ["tensorbord"]}, "tensorbord"),
        ({"report_to": ["none", "tensorboard"]}, "'none'"),
    ]
    for overrides, needle in bad:
        with pytest.raises(ConfigError, match=needle):
            load_config(None, overrides)


def test_demo_verdict_names_the_gain_or_the_one_reason_there_is_none() -> None:
    from evaluator.app.demo import FULL, verdict

    shown = verdict(0.45, 0.12, (0.07, 0.17), 100, FULL, cut_short=False)
    assert shown.startswith("GRPO gain shown: +12.0 points (95% CI +7.0 to +17.0)")
    cases = [
        ((0.09, 0.02, (-0.005, 0.05), 100), False, "below the 30–60 % band"),
        ((0.75, 0.01, (-0.02, 0.04), 100), False, "above the band"),
        ((0.45, 0.02, (-0.01, 0.05), 100), False, "too little to tell from the noise of 500 held-out"),
        ((0.45, 0.02, (-0.01, 0.05), 40), True, "40 of 60 GRPO steps"),
    ]
    for (before, delta, ci, steps), cut, needle in cases:
        line = verdict(before, delta, ci, steps, FULL, cut_short=cut)
        assert line.startswith("no gain shown:") and "includes 0" in line and needle in line, line
        assert "\n" not in line
