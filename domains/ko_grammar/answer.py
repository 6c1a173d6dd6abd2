"""Reading an answer ``"{문장}"이/가 옳다. {이유}``: the one parser behind the format reward and the splitter.

The quoted sentence comes first; the particle after the closing quote must agree with the last Hangul
syllable inside the quotes (이 after a final consonant, 받침; 가 after a vowel); a reason must follow
``옳다.``. An answer that names two sentences as right (a hedge) is refused. Hand-written rather than a
library: the rule is Korean-specific and a dozen lines (Unicode Hangul syllables are arithmetic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
_OPEN, _CLOSE = "\"“”＂", "\"”“＂"
_HEAD = re.compile(
    r"[\"“”＂](?P<sentence>[^\"“”＂\n]+)[\"“”＂]\s?(?P<particle>이|가)\s*옳다(?P<rest>.*)", re.DOTALL
)
_CLAIM = re.compile(r"[\"“”＂][^\"“”＂\n]+[\"“”＂]\s?(?:이|가)\s*옳다")
_SPACES = re.compile(r"\s+")


def has_batchim(syllable: str) -> bool:
    """Whether a Hangul syllable ends in a final consonant (받침)."""
    code = ord(syllable) - HANGUL_FIRST
    if not 0 <= code <= HANGUL_LAST - HANGUL_FIRST:
        raise ValueError(f"{syllable!r} is not a Hangul syllable")
    return code % 28 != 0


def last_hangul(text: str) -> str | None:
    """The last Hangul syllable of ``text`` (punctuation, digits and Latin letters after it are skipped)."""
    for ch in reversed(text):
        if HANGUL_FIRST <= ord(ch) <= HANGUL_LAST:
            return ch
    return None


def subject_particle(sentence: str) -> str | None:
    """이 or 가 for a quoted ``sentence``; None when it holds no Hangul syllable to agree with."""
    last = last_hangul(sentence)
    if last is None:
        return None
    return "이" if has_batchim(last) else "가"


def normalize_sentence(text: str | None) -> str:
    """Whitespace-normalised: runs of spaces collapse to one and the ends are trimmed (spaces still count)."""
    return _SPACES.sub(" ", text or "").strip()


@dataclass(frozen=True)
class Parsed:
    """An answer split into its sentence, particle and reason, with every format problem found."""

    sentence: str | None
    particle: str | None
    reason: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.sentence is not None and not self.problems


def parse_answer(text: str, *, strict: bool = True) -> Parsed:
    """Split ``text``. ``strict``: the quoted sentence must open the answer; otherwise the first
    ``"…"이/가 옳다`` anywhere is read (a sentence is still extracted when the format has problems)."""
    body = text or ""
    match = _HEAD.match(body.lstrip()) if strict else _HEAD.search(body)
    if match is None:
        where = "at the start" if strict else "anywhere"
        return Parsed(None, None, "", [f'no "문장"이/가 옳다 {where}'])
    sentence, particle = match.group("sentence"), match.group("particle")
    rest = match.group("rest")
    problems: list[str] = []
    if not normalize_sentence(sentence):
        problems.append("the quoted sentence is empty")
    expected = subject_particle(sentence)
    if expected is None:
        problems.append("no Hangul syllable inside the quotes for 이/가 to agree with")
    elif particle != expected:
        last = last_hangul(sentence)
        problems.append(f"'{last}' {'has' if expected == '이' else 'has no'} 받침, so the particle is {expected}, not {particle}")
    if not rest.startswith("."):
        problems.append("옳다 must be followed by a full stop and the reason")
    reason = rest[1:].strip() if rest.startswith(".") else rest.strip()
    if not reason:
        problems.append("no reason after 옳다.")
    if _CLAIM.search(reason):
        problems.append("the answer names more than one sentence as right")
    return Parsed(sentence, particle, reason, problems)


def format_answer(sentence: str, reason: str) -> str:
    """The answer in the contest format, with the particle that agrees with ``sentence``."""
    particle = subject_particle(sentence)
    if particle is None:
        raise ValueError(f"{sentence!r} has no Hangul syllable for 이/가 to agree with")
    return f'"{sentence}"{particle} 옳다. {reason.strip()}'
