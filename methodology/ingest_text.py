"""Text as firms' methodology PDFs give it: spacing repaired, numbers and units read, garbage detected.

Real methodology PDFs are usually exported from HWP, whose justified text comes out letter-spaced
(``평 가 지 표``); CID fonts without a Unicode map come out as ``(cid:123)`` or as Latin gibberish. Every
matcher in ingest works on text from :func:`clean`, and compares labels with :func:`compact`.
No library reads Korean money amounts (``1조 5,000억원``) or weights written as ``30점``/``0.3``/``30%``,
so those few rules are written here.
"""

from __future__ import annotations

import re
import unicodedata

_SOFT = {"\xad": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00a0": " ", "\u3000": " "}


def clean(text: str | None) -> str:
    """NFKC text on one line, soft hyphens and dashes as ``-``, letter-spaced runs joined up."""
    if not text:
        return ""
    t = unicodedata.normalize("NFKC", text)
    for a, b in _SOFT.items():
        t = t.replace(a, b)
    return join_letter_spacing(" ".join(t.split()))


_SINGLE = r"(?:[가-힣0-9%.,()]|\d)"


def join_letter_spacing(text: str) -> str:
    """``평 가 지 표 배 점`` → ``평가지표배점``: a run of three or more one-character tokens is one word
    spaced out by justification (Korean words are rarely one syllable three times in a row)."""
    tokens = text.split(" ")
    if len(tokens) >= 2 and all(len(t) == 1 for t in tokens):  # a whole cell spaced out: "위 험", "합 계"
        return "".join(tokens)
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= 3:
            out.append("".join(run))
        else:
            out.extend(run)
        run.clear()

    for tok in tokens:
        if len(tok) == 1 and re.fullmatch(_SINGLE, tok):
            run.append(tok)
        else:
            flush()
            out.append(tok)
    flush()
    return " ".join(out)


def compact(text: str | None) -> str:
    """A label compared without spaces, case or decoration: ``평 가 지 표`` and ``평가지표`` are equal."""
    t = unicodedata.normalize("NFKC", text or "").lower()
    return re.sub(r"[\s·ㆍ∙•*:：'\"`’]+", "", t)


def unreadable_share(text: str) -> float:
    """Share of the text that is no language at all: ``(cid:N)`` codes, control or private-use characters,
    or symbol soup from a font without a Unicode map."""
    body = re.sub(r"\s+", "", text)
    if not body:
        return 0.0
    cid = sum(len(m) for m in re.findall(r"\(cid:\d+\)", body))
    rest = re.sub(r"\(cid:\d+\)", "", body)
    bad = sum(
        1
        for ch in rest
        if unicodedata.category(ch) in ("Co", "Cc", "Cn", "Cs")
        or not (ch.isalnum() or ch in "%.,()[]-+/:;~<>=≥≤'\"·?!&#@_*")
    )
    letters = sum(1 for ch in rest if ch.isalpha())
    vowels = sum(1 for ch in rest if ch.lower() in "aeiou" or "가" <= ch <= "힣")
    soup = 0.0 if letters < 40 or vowels / max(letters, 1) > 0.15 else 0.5  # Latin with no vowels: no text
    return max((cid + bad) / len(body), soup)


class NumberError(ValueError):
    """A cell or phrase meant to hold a number does not."""


_NUM = r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[+-]?\d+(?:\.\d+)?|[+-]?\.\d+"


def parse_plain(text: str) -> float:
    """``1,234.5`` → 1234.5; raise :class:`NumberError` naming the text otherwise."""
    t = compact(text)
    if not re.fullmatch(_NUM, t):
        raise NumberError(f"{text!r} is not a number")
    return float(t.replace(",", ""))


def parse_weight(text: str) -> tuple[float, str] | None:
    """A weight cell → (number, unit) with unit ``%``, ``점`` (points), or ``""`` (bare number, which may be a
    fraction); ``None`` for an empty or dash cell. Raises :class:`NumberError` for anything else."""
    t = compact(clean(text))
    if t in ("", "-", "–", "—", "n/a", "na", "해당없음"):
        return None
    m = re.fullmatch(rf"({_NUM})(%|퍼센트|점|pt|pts|points?)?", t)
    if not m:
        raise NumberError(f"{text!r} is not a weight (expected e.g. 30, 30%, 30점 or 0.3)")
    unit = {"퍼센트": "%", "pt": "점", "pts": "점", "point": "점", "points": "점"}.get(m.group(2) or "", m.group(2) or "")
    return float(m.group(1).replace(",", "")), unit


_EOK = 100_000_000
_JO = 1_000_000_000_000

AMOUNT = re.compile(
    r"(?=\d)(?:(?P<jo>\d[\d,]*(?:\.\d+)?)\s*조\s*)?(?:(?P<eok>\d[\d,]*(?:\.\d+)?)\s*억\s*)?(?:(?P<man>\d[\d,]*)\s*만\s*)?원"
    r"|KRW\s*(?P<krw>\d[\d,]*(?:\.\d+)?)\s*(?P<scale>trillion|billion|million|tn|bn|mn|억|조)?(?![a-z])"
    r"|(?P<eng>\d[\d,]*(?:\.\d+)?)\s*(?P<scale2>trillion|billion|million|tn|bn|mn)\s*(?:KRW|won|원)"
    r"|(?<![제\d,.])(?<!제 )(?P<jo2>\d[\d,]*(?:\.\d+)?)\s*조(?!\s*원)(?!\s*[(\[])|(?<![제\d,.])(?<!제 )(?P<eok2>\d[\d,]*(?:\.\d+)?)\s*억(?!\s*원)"
    r"|(?P<plain>\d[\d,]*)\s*원",
    re.IGNORECASE,
)
_SCALE = {"trillion": 1e12, "billion": 1e9, "million": 1e6, "tn": 1e12, "bn": 1e9, "mn": 1e6, "억": _EOK, "조": _JO}


def _f(text: str | None) -> float:
    return float((text or "0").replace(",", ""))


def amount_krw(match: re.Match[str]) -> float | None:
    """KRW value of an :data:`AMOUNT` match: ``100억원``, ``1조 5,000억원``, ``KRW 10 billion``."""
    g = match.groupdict()
    if g["krw"] is not None:
        return _f(g["krw"]) * _SCALE.get((g["scale"] or "").lower(), 1.0)
    if g["eng"] is not None:
        return _f(g["eng"]) * _SCALE[g["scale2"].lower()]
    if g["jo2"] is not None:
        return _f(g["jo2"]) * _JO
    if g["eok2"] is not None:
        return _f(g["eok2"]) * _EOK
    if g["plain"] is not None:
        return _f(g["plain"])
    if g["jo"] is None and g["eok"] is None and g["man"] is None:
        return None
    return _f(g["jo"]) * _JO + _f(g["eok"]) * _EOK + _f(g["man"]) * 10_000


def find_amounts(text: str) -> list[tuple[float, re.Match[str]]]:
    """Every money amount in ``text`` with its match (``원`` alone with no digits before it is skipped)."""
    out = []
    for m in AMOUNT.finditer(text):
        value = amount_krw(m)
        if value is not None and value > 0:
            out.append((round(value), m))
    return out


def years_value(number: str, unit: str) -> float:
    """``36``, ``개월`` → 3.0; ``3``, ``년`` → 3.0."""
    value = _f(number)
    return value / 12 if unit in ("개월", "months", "month") else value


def split_sentences(text: str) -> list[str]:
    """Sentences of cleaned text (Korean sentences end in ``다.``; lists in ``;`` or bullets)."""
    parts = re.split(r"(?<=[다음함임됨요])\.\s*|(?<=\.)\s+(?=[A-Z가-힣(])|\s*[;•▪■□○●◦]\s*|\s+(?=[①②③④⑤⑥⑦⑧⑨⑩])", text)
    return [p.strip() for p in parts if p and p.strip()]
