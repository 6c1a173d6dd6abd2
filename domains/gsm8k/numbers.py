"""Reading one number out of an answer, and comparing it with the gold answer.

GSM8K answers are numbers, so grading is numeric: ``$1,234.50``, ``1234.5``, ``\\boxed{1234.5}`` and
``**1234.5 dollars.**`` are the same answer. A text that names *several different* numbers (``17 or 18``,
``17-18``, ``[17, 18]``) has no single answer and reads as ``None`` — that is what keeps a model from
hedging its way to a reward. Korean notation is read by :mod:`evaluator.core.korean_numbers`: ``7만 2천``,
``3억 5천만``, ``7.2만`` are numbers, ``72,000원 (7만 2천 원)`` is one; a Korean hedge (``약 7만``) or a unit
that cannot be read (``12천``) is no answer. Plain numbers are compared exactly as fractions (fast);
math-verify is only asked about leftover LaTeX it is built for (``\\sqrt{16}``, ``2^{3}``).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from fractions import Fraction

from evaluator.core.korean_numbers import hangul_numeral, is_hedged, rewrite_units

_ANNOTATION = re.compile(r"<<[^<>]*>>")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(-?[\d.,]+)\s*\}\s*\{\s*(-?[\d.,]+)\s*\}")
_LATEX_WRAP = re.compile(r"\\(?:boxed|fbox|text|textbf|mathrm|mathbf|operatorname)\s*\{([^{}]*)\}")
_LATEX_DROP = re.compile(r"\\(?:left|right|displaystyle|quad|qquad|[,!;: ])|\\[()\[\]]")
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9.])-?"
    r"(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+|(?=\.\d))"
    r"(?:\.\d+)?"
    r"(?:/\d+(?:\.\d+)?)?"
)
_LEFTOVER_LATEX = re.compile(r"\\[A-Za-z]+|\^")
_DIGIT = re.compile(r"\d")


def strip_annotations(text: str) -> str:
    """Remove GSM8K calculator annotations ``<<16-3-4=9>>``; they are scratch work, not the answer."""
    return _ANNOTATION.sub("", text)


def clean(text: str) -> str:
    """Undo the usual dressing of a number: markdown, ``$``, LaTeX wrappers, unicode minus, full-width digits."""
    out = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    out = strip_annotations(out)
    out = _LATEX_FRAC.sub(r"\1/\2", out)
    for _ in range(3):  # nested wrappers: \boxed{\text{18}}
        out = _LATEX_WRAP.sub(r"\1", out)
    out = _LATEX_DROP.sub("", out)
    out = out.replace("\\times", "*").replace("\\cdot", "*").replace("\\div", "/")
    out = out.replace("{,}", ",").replace("\\$", "").replace("\\%", "%").replace("$", "")
    out = out.replace("**", "").replace("__", "")
    return out


def _to_fraction(token: str) -> Fraction | None:
    token = token.replace(",", "")
    try:
        if "/" in token:
            num, den = token.split("/", 1)
            if Fraction(den) == 0:
                return None
            return Fraction(num) / Fraction(den)
        return Fraction(token)
    except (ValueError, ZeroDivisionError):
        return None


def _numbers_in(cleaned: str) -> list[Fraction]:
    values = []
    for match in _NUMBER.finditer(cleaned):
        value = _to_fraction(match.group(0))
        if value is not None:
            values.append(value)
    return values


def candidates(text: str) -> list[Fraction]:
    """Every number written in ``text`` (after :func:`clean`), in order; a fraction ``3/4`` is one number.

    Korean unit notation counts as one number (``7만 2천`` is 72000)."""
    return _numbers_in(rewrite_units(clean(text)).text)


def single_value(text: str | None) -> Fraction | None:
    """The one number ``text`` commits to, or None when it names none or several different ones."""
    if text is None:
        return None
    cleaned = clean(text)
    if _LEFTOVER_LATEX.search(cleaned):
        return _math_verify_value(text)
    reading = rewrite_units(cleaned)
    if reading.unreadable or is_hedged(reading.text):
        return None
    found = set(_numbers_in(reading.text))
    if not found:
        whole = hangul_numeral(cleaned)  # 칠만 이천, 열다섯 개: only when the numeral is the whole answer
        return None if whole is None else Fraction(whole)
    return found.pop() if len(found) == 1 else None


def names_number(text: str) -> bool:
    """Whether ``text`` writes a number at all (digits, or a whole-answer Hangul numeral)."""
    return bool(_DIGIT.search(text)) or hangul_numeral(clean(text)) is not None


def format_value(value: Fraction) -> str:
    """Canonical text of a number: ``18``, ``-7``, ``1234.5``, ``3/4`` (exact decimals only when finite)."""
    if value.denominator == 1:
        return str(value.numerator)
    den, places = value.denominator, 0
    while den % 10 == 0 or den % 2 == 0 or den % 5 == 0:
        den //= 10 if den % 10 == 0 else (2 if den % 2 == 0 else 5)
        places += 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    scaled = abs(value) * 10**places  # an integer: the denominator only had factors 2 and 5
    digits = str(int(scaled)).rjust(places + 1, "0")
    text = (digits[:-places] + "." + digits[-places:]).rstrip("0").rstrip(".")
    return f"-{text}" if value < 0 else text


def normalize_answer(text: str | None) -> str | None:
    """The canonical form of the single number in ``text``, or None (no answer, or an ambiguous one)."""
    value = single_value(text)
    return None if value is None else format_value(value)


def parse_gold(answer_field: str) -> str:
    """The gold number of a GSM8K ``answer`` field (``...\\n#### 1,080`` → ``1080``) or of a bare number.

    Raises ValueError when the field has no single final number.
    """
    text = str(answer_field)
    if "####" in text:
        tail = text.rsplit("####", 1)[1].strip()
        text = tail.splitlines()[0] if tail else ""
    gold = normalize_answer(text)
    if gold is None:
        shown = str(answer_field).strip().splitlines()[-1:] or [""]
        raise ValueError(f"no single final answer in {shown[0][:80]!r} (expected '#### N' or a number)")
    return gold


def gold_text(gold: object) -> str | None:
    """A row's gold answer as text: the number of a ``#### N`` field or of a bare number; None when missing."""
    if gold is None or not str(gold).strip():
        return None
    try:
        return parse_gold(str(gold))
    except ValueError:
        return str(gold).strip()  # not a plain number; math-verify may still read it


def answers_match(extracted: str | None, gold: str | None) -> bool:
    """True when ``extracted`` and ``gold`` are the same number (exactly, as fractions; LaTeX via math-verify).

    An answer naming several numbers never matches, and never reaches math-verify.
    """
    if extracted is None or gold is None:
        return False
    mine, theirs = single_value(extracted), single_value(gold)
    if mine is not None and theirs is not None:
        return mine == theirs
    if any(
        value is None and not _LEFTOVER_LATEX.search(clean(text))
        for value, text in ((mine, extracted), (theirs, gold))
    ):
        return False
    return _math_verify_equal(gold, extracted)


def _timeout() -> int | None:
    """math-verify's timeout uses SIGALRM, which only the main thread may set."""
    return 5 if threading.current_thread() is threading.main_thread() else None


def _math_verify_value(text: str) -> Fraction | None:
    try:
        from math_verify import parse

        parsed = parse(f"${clean_for_latex(text)}$", parsing_timeout=_timeout())
    except Exception:  # math-verify raises many kinds on odd input; an unreadable answer is no answer
        return None
    if not parsed:
        return None
    try:
        expr = parsed[0].doit() if hasattr(parsed[0], "doit") else parsed[0]
        if getattr(expr, "is_Rational", False):
            return Fraction(int(expr.p), int(expr.q))
        if getattr(expr, "is_Float", False):
            return Fraction(str(expr))
    except Exception:  # sympy evaluation of odd input
        return None
    return None  # irrational or symbolic: not a GSM8K answer


def clean_for_latex(text: str) -> str:
    """Strip the dressing math-verify does not need (``$``, markdown) but keep LaTeX commands."""
    return text.replace("$", "").replace("**", "").strip()


def _math_verify_equal(gold: str, extracted: str) -> bool:
    try:
        from math_verify import parse, verify

        timeout = _timeout()
        return bool(
            verify(
                parse(f"${clean_for_latex(gold)}$", parsing_timeout=timeout),
                parse(f"${clean_for_latex(extracted)}$", parsing_timeout=timeout),
                timeout_seconds=timeout,
            )
        )
    except Exception:  # see _math_verify_value
        return False
