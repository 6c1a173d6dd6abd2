"""Rating rules firms publish: 가등급 for young funds, peer groups from the data, other scales, weights per 유형."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.engine.engine import NOT_RATED, OK, evaluate_universe
from evaluator.domains.fund.reports.report import (
    build_report,
    build_summary,
    report_schema,
    scale_problems,
    summary_schema,
)
from evaluator.methodology.rubric import RubricError, rubric_problems, validate_rubric

END = "2025-06-30"
END_DAY = dt.date(2025, 6, 30)
TYPES = ("국내주식형", "채권형")


def _rubric(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "domain": "fund",
        "name": "규칙 시험",
        "version": "1",
        "peer_groups": list(TYPES),
        "eligibility": {"min_history_years": 3, "min_set_amount_krw": 0, "min_peer_group_size": 3},
        "period_weights": [
            {"min_history_years": 3, "weights": {"3y": 100}},
            {"min_history_years": 5, "weights": {"3y": 40, "5y": 60}},
        ],
        "criteria": [
            {"id": "ret", "name": "수익률", "weight": 40, "metrics": [{"metric": "annualized_return", "weight": 100}]},
            {
                "id": "risk",
                "name": "위험",
                "weight": 60,
                "metrics": [
                    {"metric": "annualized_volatility", "weight": 50},
                    {"metric": "max_drawdown", "weight": 50},
                ],
            },
        ],
        "grade_bands": [
            {"grade": g, "label": f"{g}등급", "share": s} for g, s in zip(range(1, 6), (10, 22.5, 35, 22.5, 10), strict=True)
        ],
    }
    doc.update(extra)
    return validate_rubric(doc)


PROVISIONAL = {"min_history_years": 1, "max_history_years": 3, "window": "1y"}


def _universe(seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Mature (3–9 years), young (1–3 years) and under-a-year funds of two 유형, with their history in years."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end=END, periods=252 * 9 + 5)
    histories: dict[str, float] = {}
    for t in range(len(TYPES)):
        for i in range(14):
            histories[f"M{t}{i:02d}"] = rng.uniform(3.2, 9.0)
        for i in range(9):
            histories[f"Y{t}{i:02d}"] = rng.uniform(1.1, 2.9)
        for i in range(3):
            histories[f"U{t}{i:02d}"] = rng.uniform(0.3, 0.9)
    codes = list(histories)
    r = rng.normal(3e-4, 0.01, (len(dates), len(codes))) + rng.normal(0, 3e-4, len(codes))
    navs = pd.DataFrame(1000 * np.cumprod(1 + r, axis=0), index=dates, columns=codes)
    as_of = pd.Timestamp(END)
    for c, years in histories.items():
        navs.loc[navs.index < as_of - pd.Timedelta(days=int(years * 365.25)), c] = np.nan
    meta = pd.DataFrame(
        {"fund_name": [f"펀드 {c}" for c in codes], "type": [TYPES[int(c[1])] for c in codes], "set_amount": 1e11},
        index=codes,
    )
    return navs, meta, histories


def _pct_rank(values: np.ndarray, higher: bool) -> np.ndarray:
    """0–100 percentile with average ranks for ties (independent of the engine's sort)."""
    v = values if higher else -values
    out = np.full(len(v), np.nan)
    ok = np.isfinite(v)
    x = v[ok]
    ranks = np.array([np.sum(x < a) + (np.sum(x == a) + 1) / 2 for a in x])
    n = len(x)
    out[ok] = (ranks - 1) / (n - 1) * 100 if n > 1 else 50.0
    return out


def _expected_provisional(ev: Any, rubric: dict[str, Any]) -> dict[str, tuple[float, int]]:
    """The stated rule, computed directly: 1y scores of every eligible fund with ≥ 1 year, ranked per 유형."""
    out: dict[str, tuple[float, int]] = {}
    for fund_type in TYPES:
        pool = [
            f for f in ev.funds
            if f.type == fund_type and f.history_years is not None and f.metrics.get("1y") and (
                (f.status == OK) or any("가등급" in w for w in f.warnings)
            )
        ]
        m = {k: np.array([f.metrics["1y"][k] for f in pool], dtype=float)
             for k in ("annualized_return", "annualized_volatility", "max_drawdown")}
        ret = _pct_rank(m["annualized_return"], True)
        risk = (_pct_rank(m["annualized_volatility"], False) + _pct_rank(m["max_drawdown"], True)) / 2
        score = 0.4 * ret + 0.6 * risk
        top = np.array([(np.sum(score > s) + 1) / len(score) * 100 for s in score])
        bounds = np.cumsum([b["share"] for b in rubric["grade_bands"]])
        grades = np.array([int(np.argmax(t <= bounds + 1e-9)) + 1 for t in top])
        for f, s, g in zip(pool, score, grades, strict=True):
            out[f.fund_code] = (float(s), int(g))
    return out


def test_provisional_grades_leave_mature_grades_alone_and_follow_the_stated_rule() -> None:
    navs, meta, _ = _universe()
    plain = evaluate_universe(navs, meta, _rubric(), as_of=END_DAY)
    rule = _rubric(provisional=PROVISIONAL)
    ev = evaluate_universe(navs, meta, rule, as_of=END_DAY)
    for before, after in zip(plain.funds, ev.funds, strict=True):
        if before.status == OK:  # every mature fund: the same grade and score, to the last bit
            assert (after.grade, after.score, after.peer_percentile) == (before.grade, before.score, before.peer_percentile)
            assert not after.provisional
    expected = _expected_provisional(ev, rule)
    young = [f for f in ev.funds if f.fund_code.startswith("Y")]
    assert young and all(f.status == OK and f.provisional for f in young)
    for f in young:
        score, grade = expected[f.fund_code]
        assert f.score == pytest.approx(score, abs=1e-9) and f.grade == grade
        assert f.grade_label == f"가{grade}등급" and f.period_weights == {"1y": 100.0}
        assert f.peer_group_size == 14 + 9 and not f.errors
    for f in (f for f in ev.funds if f.fund_code.startswith("U")):
        assert f.status == NOT_RATED and f.grade is None
        assert any("가등급 최소 운용기간 1년에도 못 미칩니다" in e for e in f.errors)
    assert {g for _, g in expected.values()} >= {1, 5}


def test_provisional_reports_summary_and_korean_text() -> None:
    navs, meta, _ = _universe()
    rule = _rubric(provisional=PROVISIONAL)
    ev = evaluate_universe(navs, meta, rule, as_of=END_DAY)
    young = next(f for f in ev.funds if f.provisional)
    report = build_report(young, rule)
    assert schema_problems(report, report_schema()) == [] and scale_problems(report, rule) == []
    assert report["provisional"] is True and report["grade_label"].startswith("가")
    assert "가등급(잠정 등급)" in report["summary_ko"] and "1년 성과로" in report["summary_ko"]
    mature = next(f for f in ev.funds if f.status == OK and not f.provisional)
    assert "provisional" not in build_report(mature, rule)
    summary = build_summary(ev, {f.fund_code: f"{f.fund_code}.json" for f in ev.funds})
    assert schema_problems(summary, summary_schema()) == []
    assert summary["status_counts"]["provisional"] == 18
    counts = summary["status_counts"]  # disjoint: ok holds regular grades only, and they add up
    assert sum(counts.values()) == summary["funds_total"] == len(ev.funds)
    assert counts["ok"] == sum(f.status == OK and not f.provisional for f in ev.funds)
    row = summary["grade_distribution"]["채권형"]
    assert sum(row[str(g)] for g in range(1, 6)) == 14 and sum(row[f"p{g}"] for g in range(1, 6)) == 9
    assert row["not_rated"] == 3 and row["total"] == 26
    assert sum(f["provisional"] for f in summary["funds"] if "provisional" in f) == 18


def test_a_half_stated_provisional_rule_is_explained() -> None:
    problems = rubric_problems({**_rubric(), "provisional": {"min_history_years": 1, "max_history_years": 5, "window": "3y"}})
    assert any("window 3y is longer than the 1 years" in p for p in problems)
    assert any("beyond the 3 years from which funds get regular grades" in p for p in problems)


def test_without_peer_groups_every_type_in_the_data_is_a_group() -> None:
    navs, meta, _ = _universe()
    meta = meta.copy()
    meta.loc[meta.index[:14:2], "type"] = "해외주식형"  # a 유형 the listed rubric does not name
    listed = evaluate_universe(navs, meta, _rubric(), as_of=END_DAY)
    free = _rubric()
    del free["peer_groups"]
    data = evaluate_universe(navs, meta, validate_rubric(free), as_of=END_DAY)
    foreign = [f for f in listed.funds if f.type == "해외주식형"]
    assert all(f.status == NOT_RATED and "동류그룹" in f.errors[0] for f in foreign)
    assert {f.type for f in data.funds if f.status == OK} == {"해외주식형", "국내주식형", "채권형"}
    for a, b in zip(listed.funds, data.funds, strict=True):
        if a.status == OK:
            assert (a.grade, a.score) == (b.grade, b.score)


BOND = [
    {"id": "ret", "name": "수익률", "weight": 20, "metrics": [{"metric": "annualized_return", "weight": 100}]},
    {"id": "risk", "name": "위험", "weight": 80, "metrics": [
        {"metric": "annualized_volatility", "weight": 70}, {"metric": "max_drawdown", "weight": 30}]},
]


def test_weights_per_type_give_exactly_the_single_type_rubric_grade_and_score() -> None:
    navs, meta, _ = _universe()
    per_type = _rubric(criteria_by_type={"채권형": BOND}, provisional=PROVISIONAL)
    only_bond = _rubric(criteria=BOND, provisional=PROVISIONAL)
    general = _rubric(provisional=PROVISIONAL)
    ev = evaluate_universe(navs, meta, per_type, as_of=END_DAY)
    bond = evaluate_universe(navs, meta, only_bond, as_of=END_DAY)
    equity = evaluate_universe(navs, meta, general, as_of=END_DAY)
    for f in ev.funds:
        ref = (bond if f.type == "채권형" else equity).fund(f.fund_code)
        assert (f.status, f.grade, f.score, f.provisional, f.criterion_scores) == (
            ref.status, ref.grade, ref.score, ref.provisional, ref.criterion_scores
        )
    graded = next(f for f in ev.funds if f.type == "채권형" and f.status == OK)
    report = build_report(graded, per_type)
    assert schema_problems(report, report_schema()) == []
    assert report["criteria_weights"]["risk"] == {"name": "위험", "weight": 80.0,
                                                  "metrics": {"annualized_volatility": 70.0, "max_drawdown": 30.0}}
    assert any(f.score != bond.fund(f.fund_code).score for f in equity.funds if f.type == "채권형" and f.score)


def test_per_type_criteria_are_checked_like_the_general_ones() -> None:
    bad = copy.deepcopy(BOND)
    bad[1]["metrics"][0]["weight"] = 60
    problems = rubric_problems({**_rubric(), "criteria_by_type": {"채권형": bad, "주식형": BOND}})
    assert any(p.startswith("for 유형 '채권형': metric weights of criterion 'risk' add up to 90") for p in problems)
    assert any("'주식형' name a 유형 that is not one of the peer groups" in p for p in problems)


def _scaled(grades: int, stars: bool) -> dict[str, Any]:
    shares = np.full(grades, 100 / grades)
    order = list(range(grades, 0, -1)) if stars else list(range(1, grades + 1))
    label = (lambda g: "★" * g) if stars else (lambda g: f"{g}등급")
    bands = [{"grade": g, "label": label(g), "share": float(s)} for g, s in zip(order, shares, strict=True)]
    scale = {"grades": grades, "best": "high" if stars else "low", "style": "stars" if stars else "number"}
    return _rubric(grade_bands=bands, grade_scale=scale)


@pytest.mark.parametrize(("grades", "stars"), [(7, False), (5, True), (3, False), (10, True)])
def test_reports_and_summaries_of_other_scales_validate(grades: int, stars: bool) -> None:
    navs, meta, _ = _universe()
    rubric = _scaled(grades, stars)
    ev = evaluate_universe(navs, meta, rubric, as_of=END_DAY)
    rated = [f for f in ev.funds if f.status == OK]
    best = grades if stars else 1
    top = min(rated, key=lambda f: f.peer_percentile or 100)
    assert top.grade == best and top.grade_label == ("★" * grades if stars else "1등급")
    assert {f.grade for f in rated} == set(range(1, grades + 1))
    for f in rated:
        report = build_report(f, rubric)
        assert schema_problems(report, report_schema()) == [] and scale_problems(report, rubric) == []
    summary = build_summary(ev, {})
    assert schema_problems(summary, summary_schema()) == [] and scale_problems(summary, rubric) == []
    row = summary["grade_distribution"]["국내주식형"]
    assert list(row)[:grades] == [str(g) for g in (range(grades, 0, -1) if stars else range(1, grades + 1))]
    assert list(summary["peer_context"]["국내주식형"]["grade_counts"]) == list(row)[:grades]
    wrong = {**build_report(top, rubric), "grade": grades + 1} if grades < 10 else None
    if wrong:
        assert schema_problems(wrong, report_schema()) == [] and scale_problems(wrong, rubric)


def test_a_scale_that_does_not_match_its_bands_is_explained() -> None:
    bands = [{"grade": g, "label": f"{g}등급", "share": 20} for g in range(1, 6)]
    with pytest.raises(RubricError, match="missing grade band for ★★★★★★★; bands must cover ★★★★★★★ to ★"):
        validate_rubric({**_rubric(), "grade_bands": bands, "grade_scale": {"grades": 7, "best": "high", "style": "stars"}})
    stars = [{"grade": g, "label": "★" * g, "share": 20} for g in range(1, 6)]
    with pytest.raises(RubricError, match="listed from ★★★★★ \\(best\\) to ★"):
        validate_rubric({**_rubric(), "grade_bands": stars, "grade_scale": {"grades": 5, "best": "high", "style": "stars"}})


def test_star_scale_end_to_end_ingest_evaluate_report_agreement_reward(tmp_path: Any) -> None:
    """A star methodology PDF → rubric → grades (5★ best) → reports → agreement → the fund task's rewards."""
    import json
    import sys
    from pathlib import Path

    from sklearn.metrics import cohen_kappa_score
    from typer.testing import CliRunner

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from methodology_docs_rules import star_table

    from evaluator.app.cli import app
    from evaluator.domains.fund.reports.batch import write_reports
    from evaluator.domains.fund.task.facts import facts_json, universe_facts
    from evaluator.domains.fund.task.prompts import user_prompt
    from evaluator.domains.fund.task.rewards import FundReward
    from evaluator.methodology.pdf_ingest import ingest_pdf

    pdf = tmp_path / "stars.pdf"
    pdf.write_bytes(star_table())
    rubric = ingest_pdf(pdf)
    assert rubric["grade_scale"] == {"grades": 5, "best": "high", "style": "stars"}
    rubric_path = tmp_path / "rubric.json"
    rubric_path.write_text(json.dumps(rubric, ensure_ascii=False), encoding="utf-8")
    navs, meta, _ = _universe()
    ev = evaluate_universe(navs, meta, rubric, as_of=END_DAY)
    rated = [f for f in ev.funds if f.status == OK]
    top = min(rated, key=lambda f: f.peer_percentile or 100)
    bottom = max(rated, key=lambda f: f.peer_percentile or 0)
    assert (top.grade, top.grade_label, bottom.grade, bottom.grade_label) == (5, "★★★★★", 1, "★")
    outcome = write_reports(ev, tmp_path / "reports")
    for name in outcome.files.values():
        doc = json.loads((tmp_path / "reports" / name).read_text(encoding="utf-8"))
        assert schema_problems(doc, report_schema()) == [] and scale_problems(doc, rubric) == []
    assert "★★★★★" in build_report(top, rubric)["summary_ko"]

    lines, experts, engine = ["펀드코드,등급"], [], []
    for i, f in enumerate(rated):
        g = min(5, max(1, f.grade + (1 if i % 4 == 0 else 0) - (1 if i % 7 == 0 else 0)))
        lines.append(f"{f.fund_code},{'★' * g}")
        experts.append(g)
        engine.append(f.grade)
    (tmp_path / "experts.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["fund", "agreement", str(tmp_path / "reports"), "--experts",
                                      str(tmp_path / "experts.csv"), "--rubric", str(rubric_path), "--out",
                                      str(tmp_path / "ag"), "--resamples", "0"])
    assert result.exit_code == 0, result.output
    eng = json.loads((tmp_path / "ag" / "agreement.json").read_text(encoding="utf-8"))["overall"]["engine"]
    assert eng["exact"]["rate"] == pytest.approx(np.mean(np.array(experts) == np.array(engine)))
    assert eng["kappa"] == pytest.approx(cohen_kappa_score(experts, engine, weights="quadratic", labels=[1, 2, 3, 4, 5]))

    facts = universe_facts(ev)[top.fund_code]
    assert facts["grade"] == 5 and facts["grade_scale"]["best"] == "high"
    assert [b["grade"] for b in facts["bands"]] == [5, 4, 3, 2, 1]
    assert "별 개수 1~5 정수, 5가 최우수" in user_prompt(facts, rubric)
    row = {"grade": [5, 5, 5, 5], "facts": [facts_json(facts)] * 4}
    answers = [json.dumps({"grade": g, "score": 90.0, "criteria": {}, "rationale_ko": "상위권입니다."}) for g in (5, 4, 3, 6)]
    assert FundReward("grade_accuracy")(answers, **row) == [1.0, 0.5, 0.0, 0.0]
    assert FundReward("json_format")(answers, **row)[3] == 0.2  # 6★ is off this scale
    from evaluator.domains.fund.task.reference import reference_json

    reference = [reference_json(facts)]
    assert "★★★★★입니다" in reference[0]
    one = {"grade": [5], "facts": [facts_json(facts)]}
    for name in ("grade_accuracy", "consistency"):
        assert FundReward(name)(reference, **one) == [1.0], name
    from evaluator.domains.fund.task.answer import read_answer
    from evaluator.domains.fund.task.reasoning import reasoning_breakdown

    reading = reasoning_breakdown(read_answer(reference[0]).strict, facts, None)
    assert reading["grades_concluded"] == [5] and reading["parts"]["verdict"] == 1.0  # "★★★★★입니다" concludes 5


def test_the_fund_task_shows_and_checks_provisional_grades_and_per_type_weights() -> None:
    from evaluator.domains.fund.task.facts import facts_json, universe_facts
    from evaluator.domains.fund.task.prompts import user_prompt
    from evaluator.domains.fund.task.reference import reference_json
    from evaluator.domains.fund.task.rewards import FundReward

    navs, meta, _ = _universe()
    rubric = _rubric(provisional=PROVISIONAL, criteria_by_type={"채권형": BOND})
    ev = evaluate_universe(navs, meta, rubric, as_of=END_DAY)
    facts = universe_facts(ev)
    young = next(f for f in ev.funds if f.provisional and f.type == "채권형")
    mature = next(f for f in ev.funds if f.status == OK and not f.provisional and f.type == "국내주식형")
    fy, fm = facts[young.fund_code], facts[mature.fund_code]
    assert fy["provisional"] is True and "provisional" not in fm
    assert fy["bands"][0]["label"] == "가1등급" and fm["bands"][0]["label"] == "1등급"
    prompt = user_prompt(fy, rubric)
    assert "가등급: 운용기간이 짧아 1년 성과만으로" in prompt
    assert "위험[risk] 80 (연환산 변동성 70·최대낙폭 30)" in prompt  # the bond weights that applied
    assert "위험[risk] 60 (연환산 변동성 50·최대낙폭 50)" in user_prompt(fm, rubric)
    for f, fx in ((young, fy), (mature, fm)):
        row = {"grade": [f.grade], "facts": [facts_json(fx)]}
        answer = [reference_json(fx)]
        assert FundReward("grade_accuracy")(answer, **row) == [1.0]
        assert FundReward("consistency")(answer, **row) == [1.0]


def test_history_keeps_provisional_grades_apart_and_the_backtest_leaves_them_out(tmp_path: Any) -> None:
    import json

    from evaluator.domains.fund.data.loaders import Universe
    from evaluator.domains.fund.history.backtest import backtest
    from evaluator.domains.fund.history.io import write_history
    from evaluator.domains.fund.history.run import run_history

    navs, meta, _ = _universe()
    universe = Universe(navs=navs, meta=meta, issues={})
    dates = [pd.Timestamp(d) for d in ("2024-06-28", "2024-12-31", "2025-06-30")]
    rule = _rubric(provisional=PROVISIONAL)
    history = run_history(universe, rule, dates)
    table = history.table
    last = table[table["as_of"] == "2025-06-30"].set_index("fund_code")
    ev = evaluate_universe(navs, meta, rule, as_of=END_DAY)
    for f in ev.funds:  # every row is the single-date engine's, provisional flag included
        assert bool(last.loc[f.fund_code, "provisional"]) == f.provisional
        assert (None if pd.isna(last.loc[f.fund_code, "grade"]) else int(last.loc[f.fund_code, "grade"])) == f.grade
    plain = run_history(universe, _rubric(), dates).table.set_index(["fund_code", "as_of"])
    mature = table[(table["status"] == "ok") & ~table["provisional"]].set_index(["fund_code", "as_of"])
    assert mature["score"].equals(plain.loc[mature.index, "score"])
    assert any(k.startswith("p") for k in history.counts["2025-06-30"])
    out = tmp_path / "hist"
    write_history(history, out, freq="Q")
    doc = backtest(out, 6, reps=100)
    both = backtest(out, 6, reps=100, include_provisional=True)
    young = int((table["provisional"] & (table["as_of"] == "2024-06-28")).sum())  # the one date with 6 months ahead
    assert young > 0 and both["all"]["observations"] - doc["all"]["observations"] == young
    assert doc["method"]["provisional"].endswith("excluded")
    assert json.loads((out / "summary.json").read_text(encoding="utf-8")).get("grade_scale") is None


@pytest.mark.parametrize("part", ["grade_scale", "provisional", "criteria_by_type", "peer_groups", "all"])
def test_render_and_ingest_round_trip_the_new_rubric_parts(part: str, tmp_path: Any) -> None:
    from evaluator.methodology.pdf_ingest import ingest_pdf
    from evaluator.methodology.pdf_render import render_pdf_bytes

    star = _scaled(5, True)
    parts = {
        "grade_scale": star,
        "provisional": _rubric(provisional={**PROVISIONAL, "label_prefix": "잠정"}),
        "criteria_by_type": _rubric(criteria_by_type={"채권형": BOND}),
        "peer_groups": {k: v for k, v in _rubric().items() if k != "peer_groups"},
        "all": {
            **{k: v for k, v in star.items() if k != "peer_groups"},
            "provisional": {**PROVISIONAL, "min_history_years": 1.5},
            "criteria_by_type": {"채권형": BOND},
        },
    }
    rubric = validate_rubric(parts[part])
    path = tmp_path / "m.pdf"
    path.write_bytes(render_pdf_bytes(rubric))
    assert ingest_pdf(path) == rubric


def test_history_fast_path_without_peer_groups_equals_the_engine() -> None:
    from evaluator.domains.fund.data.loaders import Universe
    from evaluator.domains.fund.history.run import run_history

    navs, meta, _ = _universe()
    free = _rubric()
    del free["peer_groups"]
    table = run_history(Universe(navs=navs, meta=meta, issues={}), free, [pd.Timestamp(END)]).table
    row = table.set_index("fund_code")
    ev = evaluate_universe(navs, meta, free, as_of=END_DAY)
    assert sum(f.status == OK for f in ev.funds) == 28
    for f in ev.funds:
        grade = row.loc[f.fund_code, "grade"]
        assert (None if pd.isna(grade) else int(grade), row.loc[f.fund_code, "status"]) == (f.grade, f.status)


def test_plots_draw_provisional_and_seven_grade_batches(tmp_path: Any) -> None:
    from evaluator.domains.fund.reports.batch import write_reports
    from evaluator.domains.fund.reports.plots import load_funds, plot_fund_batch

    navs, meta, _ = _universe()
    for name, rubric in (("prov", _rubric(provisional=PROVISIONAL)), ("seven", _scaled(7, False))):
        ev = evaluate_universe(navs, meta, rubric, as_of=END_DAY)
        write_reports(ev, tmp_path / name)
        funds = load_funds(tmp_path / name)
        statuses = {f.status for f in funds}
        assert ("provisional" in statuses) == (name == "prov")
        if name == "seven":
            assert {f.grade for f in funds if f.status == "ok"} == set(range(1, 8))
        written = plot_fund_batch(tmp_path / name, tmp_path / f"{name}_plots")
        assert [p.name for p in written] == ["fund_grades.png", "fund_risk_return.png"]
        assert all(p.stat().st_size > 1000 for p in written)


def test_the_database_keeps_provisional_grades_apart_and_checks_the_scale(tmp_path: Any) -> None:
    import json

    from sqlalchemy.orm import Session

    from evaluator.app.storage import queries
    from evaluator.app.storage.apikeys import Principal
    from evaluator.app.storage.batches import BatchError, store_folder
    from evaluator.app.storage.database import open_database
    from evaluator.domains.fund.reports.batch import write_reports

    navs, meta, _ = _universe()
    write_reports(evaluate_universe(navs, meta, _rubric(provisional=PROVISIONAL), as_of=END_DAY), tmp_path / "prov")
    engine = open_database(f"sqlite:///{tmp_path / 'db.sqlite'}", migrate=True)
    store_folder(engine, tmp_path / "prov")
    admin = Principal("k", "c", True, (), ())
    with Session(engine) as session:
        dist = queries.summary(session, admin, None)
        total, items = queries.list_funds(session, admin, queries.FundFilter(), page=1, page_size=100)
        history = queries.fund_history(session, admin, "Y000")
    assert sum(dist["채권형"][f"p{g}"] for g in range(1, 6)) == 9 and sum(dist["채권형"][str(g)] for g in range(1, 6)) == 14
    assert total == 28 and not any(i["fund_code"].startswith("Y") for i in items)  # the rated list: regular grades
    assert history[0]["status"] == "provisional" and history[0]["grade"] is not None
    seven = tmp_path / "seven"
    write_reports(evaluate_universe(navs, meta, _scaled(7, False), as_of=END_DAY), seven)
    store_folder(engine, seven)  # grade 7 is on this batch's scale
    victim = next(p for p in sorted(seven.glob("*.json")) if p.name != "summary.json")
    doc = json.loads(victim.read_text(encoding="utf-8"))
    victim.write_text(json.dumps({**doc, "status": "ok", "grade": 8}, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BatchError, match="not on the rubric's 1–7 scale"):
        store_folder(engine, seven)
    engine.dispose()


def test_grade_colours_follow_the_scale_best_green_worst_red(tmp_path: Path) -> None:
    import json

    from evaluator.domains.fund.reports.plots import GRADE_COLORS, batch_scale, grade_colors
    from evaluator.methodology.rubric_scale import GradeScale

    assert grade_colors(GradeScale()) == GRADE_COLORS  # the default scale keeps its colours
    stars = grade_colors(GradeScale(5, "high", "stars"))
    assert stars[5] == GRADE_COLORS[1] and stars[1] == GRADE_COLORS[5]  # 5★ is drawn as the best, not red
    seven = grade_colors(GradeScale(7))
    assert len(set(seven.values())) == 7
    (tmp_path / "summary.json").write_text(json.dumps({"grade_scale": {"grades": 5, "best": "high", "style": "stars"}}))
    assert batch_scale(tmp_path) == GradeScale(5, "high", "stars")
    assert batch_scale(tmp_path / "missing") == GradeScale()
