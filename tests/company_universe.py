"""A generated universe for the 운용사 tests: share classes, error and not-rated funds, small companies (by a
META that moves a few portfolios to companies of their own), and an independent numpy computation of the
company rule from the report files on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

SMALL = ("소형자산운용", "신생운용")  # 2 portfolios and 1 portfolio: below the minimum of 3


def reports_of(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(folder.glob("*.json"))
        if p.name != "summary.json"
    ]


def write_meta(folder: Path, target: Path) -> dict[str, dict[str, Any]]:
    """META moving two rated portfolios to 소형자산운용 and one to 신생운용, and changing some 설정원본 (억원)."""
    docs = reports_of(folder)
    ports: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        ports.setdefault(d["portfolio_code"] or d["fund_code"], []).append(d)
    rated = [p for p, ds in sorted(ports.items()) if all(x["status"] == "ok" for x in ds)]
    moved = {rated[0]: SMALL[0], rated[1]: SMALL[0], rated[2]: SMALL[1]}
    rows = {}
    for i, d in enumerate(sorted(docs, key=lambda x: x["fund_code"])):
        port = d["portfolio_code"] or d["fund_code"]
        row: dict[str, Any] = {}
        if port in moved:
            row["company"] = moved[port]
        if i % 7 == 0:
            row["set_amount"] = 123.0 + i  # 억원
        if row:
            rows[d["fund_code"]] = row
    lines = ["펀드코드,운용회사,설정원본(억원)"]
    lines += [f"{c},{r.get('company', '')},{r.get('set_amount', '')}" for c, r in rows.items()]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rows


def expected(
    folder: Path, meta: dict[str, dict[str, Any]], rule: dict[str, Any], qual: dict[str, dict[str, float]]
) -> dict[str, dict[str, Any]]:
    """The rule computed fund by fund with plain numpy (no code of the product beyond reading JSON)."""
    docs = reports_of(folder)
    for d in docs:
        m = meta.get(d["fund_code"], {})
        d["company"] = m.get("company", d["company"])
        if "set_amount" in m:
            d["set_amount_krw"] = m["set_amount"] * 1e8
    companies = sorted({d["company"] for d in docs if d["company"]})
    out: dict[str, dict[str, Any]] = {}
    for c in companies:
        mine = [
            d for d in docs
            if d["company"] == c and d["status"] == "ok" and d["score"] is not None and not d.get("provisional")
            and (d["set_amount_krw"] or 0) > 0
        ]  # fmt: skip
        ports: dict[str, list[dict[str, Any]]] = {}
        for d in mine:
            ports.setdefault(d["portfolio_code"] or d["fund_code"], []).append(d)
        size = np.array([sum(x["set_amount_krw"] for x in ds) for ds in ports.values()])
        score = np.array([np.mean([x["score"] for x in ds]) for ds in ports.values()])
        quant = float(size @ score / size.sum()) if len(ports) else None
        weights = {
            x["fund_code"]: s / size.sum() / len(ds) for (p, ds), s in zip(ports.items(), size, strict=True) for x in ds
        }
        pillars = qual.get(c)
        q = None
        if pillars:
            w = np.array([p["weight"] for p in rule["pillars"] if p["id"] in pillars])
            v = np.array([(pillars[p["id"]] - 1) * 25 for p in rule["pillars"] if p["id"] in pillars])
            q = float(w @ v / w.sum())
        rated = len(ports) >= rule["min_funds"] and (q is not None or not rule.get("require_qualitative"))
        wq, wl = rule["weights"]["quantitative"] / 100, rule["weights"]["qualitative"] / 100
        final = (wq * quant + wl * q if q is not None else quant) if rated else None
        out[c] = {"quant": quant, "qual": q, "score": final, "funds": len(ports), "aum": float(size.sum()),
                  "weights": weights}  # fmt: skip
    scores = np.array([v["score"] for v in out.values() if v["score"] is not None])
    cum = np.cumsum([b["share"] for b in rule["bands"]])
    for v in out.values():
        if v["score"] is None:
            v["grade"] = v["top"] = None
            continue
        top = 100.0 * (1 + np.sum(scores > v["score"])) / len(scores)
        v["top"] = top
        v["grade"] = int(np.argmax(cum >= top - 1e-9)) + 1
    return out
