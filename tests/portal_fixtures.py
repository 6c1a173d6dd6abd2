"""Fixtures for the client-portal tests: the loaded database with 운용사 ratings stored by `fund companies --db`
for both batches (analysts' pillar scores for two companies), one company whose name holds ``/``, and keys for a
client scoped to funds only and for a client of the ``/`` company.

Expected values come from companies.json and the Korean reports on disk, independently of the storage code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from service_fixtures import AS_OF_EARLY, AS_OF_LATE, CLIENT_A_COMPANY, CLIENT_B_COMPANY, Loaded

SLASH_COMPANY = "한빛/글로벌 자산운용"


@dataclass
class Rated:
    early: dict[str, Any]
    late: dict[str, Any]
    reports: dict[str, str]  # company -> its Korean report (Markdown) of the late batch
    keys: dict[str, str]  # loaded.keys plus "funds" (a key for one fund only) and "slash" (the / company)


def _rate(loaded: Loaded, folder: Path, out: Path, qualitative: Path) -> dict[str, Any]:
    result = run_cli("fund", "companies", str(folder), "--out", str(out), "--db", loaded.url,
                     "--qualitative", str(qualitative))
    assert result.exit_code == 0, result.output
    return json.loads((out / "companies.json").read_text(encoding="utf-8"))


@pytest.fixture
def rated(loaded: Loaded, report_folders: dict[str, Path], tmp_path: Path) -> Rated:
    from evaluator.app.storage.apikeys import create_key
    from evaluator.app.storage.companies import store_companies

    qual = tmp_path / "qual.csv"
    qual.write_text("운용사,운용철학,조직안정성,리스크관리체계,운용인력,시스템 인프라,평가자\n"
                    f"{CLIENT_A_COMPANY},5,4,2,3,4,김분석\n{CLIENT_B_COMPANY},3,3,3,3,3,이분석\n", encoding="utf-8")
    early = _rate(loaded, report_folders[AS_OF_EARLY], tmp_path / "early", qual)
    late = _rate(loaded, report_folders[AS_OF_LATE], tmp_path / "late", qual)
    reports = {}
    for md in (tmp_path / "late").rglob("*.md"):
        text = md.read_text(encoding="utf-8")
        reports[text.splitlines()[0].removeprefix("# ").split(" 운용사 평가")[0]] = text
    # the same batch again with one more company whose name holds "/" (the best-rated one's scores, no funds)
    copy = {**late["companies"][0], "company": SLASH_COMPANY, "funds": [], "by_type": []}
    slash = {**late, "companies": [*late["companies"], copy]}
    store_companies(loaded.engine, report_folders[AS_OF_LATE], slash)
    late = slash
    _, funds_only = create_key(loaded.engine, client="funds-only", companies=[], funds=[loaded.b_extra_fund],
                               admin=False, expires_on=None)
    _, slash_key = create_key(loaded.engine, client="slash", companies=[SLASH_COMPANY], funds=[], admin=False,
                              allow_unknown=True,
                              expires_on=None)
    return Rated(early, late, reports, {**loaded.keys, "funds": funds_only, "slash": slash_key})


def scope_of(who: str) -> set[str] | None:
    """The companies each key may see; None: every one (the admin)."""
    return {"a": {CLIENT_A_COMPANY}, "b": {CLIENT_B_COMPANY}, "funds": set(), "slash": {SLASH_COMPANY}}.get(who)
