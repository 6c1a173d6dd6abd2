"""`evaluator plot`: real PNGs (header, size, not blank) from training runs, eval pairs and fund batches,
and graceful handling of missing, null and broken inputs."""

from __future__ import annotations

import json
import math
import random
import struct
import warnings
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from evaluator.core.outputs import OutputExistsError
from evaluator.core.plotting import cjk_font, label, new_figure, romanise, save_png, smooth, style
from evaluator.domains.fund.reports.plots import Fund, choose_period, load_funds, plot_fund_batch
from evaluator.evaluation.compare import compare_reports
from evaluator.evaluation.plots import (
    NothingToPlotError,
    plot_dir,
    plot_eval_pair,
    plot_training,
)
from evaluator.evaluation.plots_eval import paired_result
from evaluator.evaluation.plots_training import load_metrics
from evaluator.evaluation.report import finalize_report, write_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_real_png(path: Path, min_w: int = 500, min_h: int = 300) -> tuple[int, int]:
    """A PNG by its header, of a sensible size, and with visible content (not one flat colour)."""
    from matplotlib.image import imread

    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert min_w <= width <= 4000 and min_h <= height <= 4000, (width, height)
    assert len(data) > 8_000, f"{path} is only {len(data)} bytes"
    pixels = imread(path)
    assert pixels.shape[:2] == (height, width)
    assert pixels[..., :3].var() > 1e-3, f"{path} looks blank"
    not_white = (pixels[..., :3].min(axis=-1) < 0.97).mean()  # a title alone on white is ~0.1 %
    assert 0.01 < not_white < 0.9, f"{path}: {not_white:.1%} of pixels drawn"
    return width, height


def flat(result: Any) -> str:
    """CLI output with Rich's line wrapping undone."""
    return " ".join(result.output.split())


def grpo_rows(
    steps: int = 40, rewards: tuple[str, ...] = ("correctness", "format"), seed: int = 0
) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for s in range(1, steps + 1):
        row: dict[str, Any] = {
            "step": s,
            "epoch": s / steps,
            "reward": 0.2 + 0.015 * s + rng.gauss(0, 0.05),
            "reward_std": 0.1,
            "frac_reward_zero_std": max(0.0, 0.9 - 0.02 * s),
            "completions/mean_length": 80 + s,
            "completions/min_length": 20,
            "completions/max_length": 160,
            "loss": rng.random() * 0.1,
            "grad_norm": rng.random(),
            "entropy": 1 - s / 100,
            "learning_rate": 1e-5,
            "step_time": 0.2,
        }
        for i, name in enumerate(rewards):
            row[f"rewards/{name}/mean"] = min(1.0, 0.01 * s * (i + 1))
            row[f"rewards/{name}/std"] = 0.05
        rows.append(row)
    return rows


def write_metrics(folder: Path, rows: list[Any], extra_lines: tuple[str, ...] = ()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) if not isinstance(r, str) else r for r in rows] + list(extra_lines)
    (folder / "metrics.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


def make_report(
    accuracy: float, n: int = 40, seed: int = 0, *, adapter: str | None = None, flexible_missing: bool = False
) -> dict[str, Any]:
    """A report assembled and schema-validated by the real report writer."""
    rng = random.Random(seed)
    items = [
        {
            "id": f"q{i}",
            "key": f"{i:016x}",
            "correct_strict": rng.random() < accuracy,
            "correct_flexible": rng.random() < accuracy + 0.1,
            "n_correct_strict": 0,
            "n_correct_flexible": 0,
            "n_samples": 1,
        }
        for i in range(n)
    ]
    s = sum(it["correct_strict"] for it in items) / n
    f = sum(it["correct_flexible"] for it in items) / n
    flex = {"value": f, "ci95": [max(0, f - 0.1), min(1, f + 0.1)], "n_correct": round(f * n)}
    if flexible_missing:  # the schema allows a null estimate
        flex = {"value": None, "ci95": None, "n_correct": 0}
    summary = {
        "domain": "gsm8k",
        "style": "tags",
        "extract": "strict",
        "n_items": n,
        "n_samples": 1,
        "n_completions": n,
        "n_errors": 0,
        "accuracy": {
            "strict": {"value": s, "ci95": [max(0, s - 0.1), min(1, s + 0.1)], "n_correct": round(s * n)},
            "flexible": flex,
        },
        "format_rate": {"value": 0.8, "ci95": [0.7, 0.9]},
        "reward_means": {"correctness": s},
        "primary_reward": "correctness",
        "pass_at_k": None,
        "maj_at_k": None,
        "domain_metrics": {},
        "items": items,
        "errors": [],
    }
    return finalize_report(
        summary,
        kind="evaluation",
        identity={"model": "tiny", "adapter": adapter},
        generation=None,
        timing={"seconds": 1.0},
        samples_file=None,
    )


def make_pair(folder: Path, **after_kwargs: Any) -> Path:
    write_report(folder / "before" / "report.json", make_report(0.3, seed=1))
    write_report(
        folder / "after" / "report.json", make_report(0.6, seed=2, adapter="run/final", **after_kwargs)
    )
    return folder


FUND_TYPES = ("국내주식형", "해외주식형", "채권형", "혼합형", "해외채권형")


def make_fund_batch(folder: Path, n: int = 30, *, with_metrics: bool = True) -> Path:
    rng = random.Random(3)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        ftype = FUND_TYPES[i % len(FUND_TYPES)]
        status = "error" if i == 4 else "not_rated" if i % 10 == 9 else "ok"
        vol = (0.04 if "채권" in ftype else 0.16) * rng.uniform(0.7, 1.3)
        metrics = {"3y": {"annualized_return": rng.gauss(vol / 2, vol / 2), "annualized_volatility": vol}}
        if i % 3 == 0:
            metrics["5y"] = {"annualized_return": 0.05, "annualized_volatility": vol}
        doc = {
            "fund_code": f"K{i:05d}",
            "fund_name": f"테스트펀드{i}",
            "company": "테스트운용",
            "type": ftype,
            "status": status,
            "metrics": metrics if with_metrics else {},
            "score": 50.0,
            "peer_percentile": 50.0,
            "grade": rng.randint(1, 5) if status == "ok" else None,
        }
        (folder / f"K{i:05d}.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    (folder / "summary.json").write_text(json.dumps({"n_funds": n}), encoding="utf-8")
    return folder


# ---------------------------------------------------------------- training runs


def test_grpo_run_gives_reward_and_stats_pictures_with_a_panel_per_reward(tmp_path: Path) -> None:
    two = plot_training(write_metrics(tmp_path / "two", grpo_rows()), tmp_path / "out2")
    assert [p.name for p in two] == ["training_rewards.png", "training_stats.png"]
    sizes = [assert_real_png(p) for p in two]
    five = plot_training(
        write_metrics(tmp_path / "five", grpo_rows(rewards=("a", "b", "c", "d", "e"))), tmp_path / "out5"
    )
    # 1 + 2 reward panels fit two rows of the grid, 1 + 5 need three: the picture grows with the rewards
    assert assert_real_png(five[0])[1] > sizes[0][1]
    assert not [p for p in (tmp_path / "out2").iterdir() if p.suffix != ".png"], "temporary files left behind"


def test_smoothing_follows_the_data_and_skips_gaps() -> None:
    assert smooth([2.0, 2.0, 2.0]) == [2.0, 2.0, 2.0]
    rng = random.Random(0)
    noisy = [rng.gauss(0, 1) for _ in range(200)]
    smoothed = smooth(noisy)
    var = lambda xs: sum((x - sum(xs) / len(xs)) ** 2 for x in xs) / len(xs)  # noqa: E731
    assert var(smoothed) < var(noisy) / 3
    gap = smooth([1.0, math.nan, 3.0])
    assert gap[0] == 1.0 and math.isnan(gap[1]) and 1.0 < gap[2] < 3.0


def test_a_resumed_run_keeps_the_latest_row_per_step(tmp_path: Path) -> None:
    rows = [{"step": s, "loss": 1.0} for s in (1, 2, 3)] + [{"step": s, "loss": 0.5} for s in (2, 3, 4)]
    loaded = load_metrics(write_metrics(tmp_path, rows) / "metrics.jsonl")
    assert [(r["step"], r["loss"]) for r in loaded] == [(1, 1.0), (2, 0.5), (3, 0.5), (4, 0.5)]


def test_missing_null_and_nan_metrics_degrade_to_notes_and_warnings(tmp_path: Path) -> None:
    rows = grpo_rows(12)
    for row in rows:
        row["reward"] = None  # every value null
        del row["frac_reward_zero_std"]  # key never logged
        row["rewards/format/mean"] = "oops" if row["step"] % 2 else row["rewards/format/mean"]
    run = write_metrics(
        tmp_path / "run", rows, extra_lines=('{"step": 13, "loss": NaN, "reward": NaN}', "{broken")
    )
    seen: list[str] = []
    written = plot_training(run, tmp_path / "out", warn=seen.append)
    assert [p.name for p in written] == ["training_rewards.png", "training_stats.png"]
    for path in written:
        assert_real_png(path)
    text = "\n".join(seen)
    assert f"{run / 'metrics.jsonl'}: 'reward' has only null/NaN values" in text
    assert "'frac_reward_zero_std' has no such key" in text
    assert "line 14" in text  # the unreadable line is named, the rest still plotted
    assert len(seen) == len(set(seen)) == 3, seen  # each problem once, no repeats


def test_an_sft_run_plots_its_loss_without_reward_pictures(tmp_path: Path) -> None:
    rows = [
        {"step": s, "loss": 2.0 / s, "grad_norm": 1.0, "learning_rate": 2e-5, "mean_token_accuracy": s / 30}
        for s in range(1, 31)
    ]
    written = plot_training(write_metrics(tmp_path, rows), tmp_path / "plots")
    assert [p.name for p in written] == ["training_stats.png"]
    assert_real_png(written[0])


def test_an_empty_or_valueless_metrics_file_is_reported_not_crashed(tmp_path: Path) -> None:
    empty = write_metrics(tmp_path / "empty", [])
    with pytest.raises(NothingToPlotError, match="no logged steps"):
        plot_training(empty, tmp_path / "o1")
    nulls = write_metrics(tmp_path / "nulls", [{"step": 1, "loss": None, "reward": None}])
    with pytest.raises(NothingToPlotError, match="no numeric"):
        plot_training(nulls, tmp_path / "o2")
    result = run_cli("plot", str(empty))
    assert result.exit_code == 2
    assert "no logged steps" in flat(result) and "Traceback" not in flat(result)
    assert not (empty / "plots").exists()


# ---------------------------------------------------------------- the command


def test_cli_prints_written_paths_and_never_overwrites_without_force(tmp_path: Path) -> None:
    run = write_metrics(tmp_path / "run", grpo_rows(20))
    first = run_cli("plot", str(run))
    assert first.exit_code == 0, first.output
    target = run / "plots" / "training_rewards.png"
    assert str(target) in first.output and (run / "plots" / "training_stats.png").exists()
    before = target.read_bytes()
    target.write_bytes(before[:100])  # mark it, to see whether it is touched
    again = run_cli("plot", str(run))
    assert again.exit_code == 2 and "--force" in flat(again)
    assert target.read_bytes() == before[:100]
    forced = run_cli("plot", str(run), "--out", str(run / "plots"), "--force")
    assert forced.exit_code == 0, forced.output
    assert_real_png(target)


def test_cli_errors_cleanly_on_missing_or_unplottable_folders(tmp_path: Path) -> None:
    missing = run_cli("plot", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "does not exist" in flat(missing)
    (tmp_path / "misc").mkdir()
    (tmp_path / "misc" / "notes.txt").write_text("hello")
    nothing = run_cli("plot", str(tmp_path / "misc"))
    assert nothing.exit_code == 2 and "nothing to plot" in flat(nothing)
    assert "metrics.jsonl" in flat(nothing) and "Traceback" not in flat(nothing)


def test_a_failed_render_leaves_the_old_picture_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "x.png"
    target.write_bytes(b"old")
    with style():
        fig = new_figure(4, 3)
        fig.subplots().set_title(r"$\frac$")  # broken mathtext: fails only while rendering
        with pytest.raises(ValueError):
            save_png(fig, target)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.png"]


# ---------------------------------------------------------------- evaluation reports


def test_eval_pair_plots_before_and_after_with_the_paired_difference(tmp_path: Path) -> None:
    pair = make_pair(tmp_path / "pair")
    written = plot_dir(pair)
    assert written == [pair / "plots" / "eval_accuracy.png"]
    assert_real_png(written[0])
    before = json.loads((pair / "before" / "report.json").read_text())
    after = json.loads((pair / "after" / "report.json").read_text())
    computed = paired_result(before, after, None, print)
    assert computed is not None
    assert computed["strict"]["delta"] == pytest.approx(
        after["accuracy"]["strict"]["value"] - before["accuracy"]["strict"]["value"]
    )
    stored = compare_reports(before, after, seed=7, labels=("before", "after"))
    (pair / "compare.json").write_text(json.dumps(stored))
    assert paired_result(before, after, pair / "compare.json", print) == stored["results"]


def test_eval_pair_function_with_missing_values_and_a_different_item_set(tmp_path: Path) -> None:
    write_report(tmp_path / "a.json", make_report(0.3, seed=1))
    write_report(tmp_path / "b.json", make_report(0.5, n=30, seed=2, flexible_missing=True))
    seen: list[str] = []
    out = plot_eval_pair(
        tmp_path / "a.json", tmp_path / "b.json", tmp_path / "pics" / "pair.png", warn=seen.append
    )
    assert_real_png(out)
    assert any("no value for flexible accuracy" in w for w in seen), seen
    assert any("different items" in w for w in seen), seen
    with pytest.raises(OutputExistsError):
        plot_eval_pair(tmp_path / "a.json", tmp_path / "b.json", out)
    (tmp_path / "c.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        plot_eval_pair(tmp_path / "a.json", tmp_path / "c.json", tmp_path / "other.png")


# ---------------------------------------------------------------- fund batches


def test_fund_batch_gives_grade_distribution_and_risk_return(tmp_path: Path) -> None:
    batch = make_fund_batch(tmp_path / "batch")
    funds = load_funds(batch)
    assert len(funds) == 30 and {f.status for f in funds} == {"ok", "error", "not_rated"}
    assert choose_period([f for f in funds if f.status == "ok"]) == "3y"
    no_3y = [
        Fund(f.code, f.type, f.status, f.grade, {k: v for k, v in f.metrics.items() if k != "3y"})
        for f in funds
    ]
    assert choose_period(no_3y) == "5y"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. matplotlib's "Glyph … missing from font": no spam allowed
        written = plot_fund_batch(batch, tmp_path / "plots")
    assert [p.name for p in written] == ["fund_grades.png", "fund_risk_return.png"]
    for path in written:
        assert_real_png(path)


def test_fund_batch_without_metrics_or_reports_degrades(tmp_path: Path) -> None:
    batch = make_fund_batch(tmp_path / "bare", with_metrics=False)
    (batch / "K99999.json").write_text("{broken", encoding="utf-8")
    seen: list[str] = []
    written = plot_fund_batch(batch, tmp_path / "p1", warn=seen.append)
    for path in written:
        assert_real_png(path)
    assert any("no graded fund has return/volatility" in w for w in seen), seen
    assert any("could not be read" in w and "K99999.json" in w for w in seen), seen
    only_csv = tmp_path / "csv"
    only_csv.mkdir()
    (only_csv / "summary.csv").write_text(
        "fund_code,type,status,grade\n"
        + "".join(f"F{i},{FUND_TYPES[i % 3]},ok,{i % 5 + 1}\n" for i in range(12)),
        encoding="utf-8",
    )
    assert_real_png(plot_dir(only_csv)[0])


def test_a_batch_written_by_the_fund_engine_is_plotted_and_its_summaries_agree(tmp_path: Path) -> None:
    from collections import Counter

    from evaluator.domains.fund.data.sample import sample_universe
    from evaluator.domains.fund.engine.engine import evaluate_universe
    from evaluator.domains.fund.reports.batch import write_reports

    u = sample_universe(funds=40)
    evaluation = evaluate_universe(
        u.navs, u.meta, benchmark=u.benchmark, risk_free=u.risk_free, issues=u.issues
    )
    batch = write_reports(evaluation, tmp_path / "batch").folder
    written = plot_dir(batch)
    assert [p.name for p in written] == ["fund_grades.png", "fund_risk_return.png"]
    for path in written:
        assert_real_png(path)
    from_reports = load_funds(batch)
    assert len(from_reports) == 40 and {f.status for f in from_reports} >= {"ok", "not_rated"}
    for name in ("summary.json", "summary.csv"):  # the fallbacks read the same counts from either summary
        alone = tmp_path / name.replace(".", "_")
        alone.mkdir()
        (alone / name).write_bytes((batch / name).read_bytes())
        key = lambda f: (f.type, f.status, f.grade)  # noqa: E731
        assert Counter(map(key, load_funds(alone))) == Counter(map(key, from_reports))


def test_peer_group_names_are_romanised_without_a_hangul_font() -> None:
    from evaluator.domains.fund.reports.plots import label as fund_label

    assert romanise("부동산형") == "Budongsanhyeong"
    assert romanise("ETF 국내") == "ETF guknae"  # letter by letter, no sound changes
    if cjk_font():
        assert fund_label("국내주식형") == "국내주식형"
    else:
        assert fund_label("국내주식형") == "Domestic equity"
        assert fund_label("해외채권형") == "Global bond"
        assert fund_label("특수형") == "Teuksuhyeong"
    assert fund_label("Bond") == "Bond"
    assert label("Bond") == "Bond"
    if not cjk_font():  # the generic label knows no pack's glossary
        assert label("국내주식형") == romanise("국내주식형")


# ---------------------------------------------------------------- whole folders


def test_plot_dir_walks_a_demo_folder_and_keeps_going_past_a_broken_source(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    write_metrics(demo / "train", grpo_rows(10))
    make_pair(demo / "eval")
    make_fund_batch(demo / "fund", n=15)
    (demo / "broken").mkdir()
    (demo / "broken" / "report.json").write_text('{"no": "accuracy"}')
    seen: list[str] = []
    written = plot_dir(demo, warn=seen.append)
    assert sorted(p.name for p in written) == [
        "eval_eval_accuracy.png",
        "fund_fund_grades.png",
        "fund_fund_risk_return.png",
        "train_training_rewards.png",
        "train_training_stats.png",
    ]
    assert all(p.parent == demo / "plots" for p in written)
    assert any("not an evaluation report" in w for w in seen), seen
    with pytest.raises(OutputExistsError):
        plot_dir(demo)
    assert len(plot_dir(demo, force=True)) == 5  # the plots folder itself is never read as a source


@pytest.mark.slow
def test_a_real_grpo_run_is_plotted(tiny_grpo_run: Path, tmp_path: Path) -> None:
    rows = load_metrics(tiny_grpo_run / "metrics.jsonl")
    assert rows and any(k.startswith("rewards/") for k in rows[0])
    written = plot_dir(tiny_grpo_run, tmp_path / "plots")
    assert [p.name for p in written] == ["training_rewards.png", "training_stats.png"]
    for path in written:
        assert_real_png(path)
