"""Story templates for the synthetic GSM8K problems: each writes a question and a worked GSM8K solution.

A template takes a :class:`Story` (the random source, a name with pronouns, the size of numbers) and a
number of steps, and returns the question, the solution lines (one ``<<expr=value>>`` annotation per step)
and the integer answer. Every intermediate value is a positive integer, so the answer is exact.
"""

from __future__ import annotations

import math
import random

NAMES = (
    ("Mia", "she", "her"),
    ("Noah", "he", "his"),
    ("Ava", "she", "her"),
    ("Liam", "he", "his"),
    ("Emma", "she", "her"),
    ("Lucas", "he", "his"),
    ("Sofia", "she", "her"),
    ("Ethan", "he", "his"),
    ("Chloe", "she", "her"),
    ("Mason", "he", "his"),
    ("Lily", "she", "her"),
    ("James", "he", "his"),
    ("Zoe", "she", "her"),
    ("Omar", "he", "his"),
    ("Hana", "she", "her"),
    ("Minjun", "he", "his"),
    ("Seoyeon", "she", "her"),
    ("Carlos", "he", "his"),
    ("Priya", "she", "her"),
    ("Kenji", "he", "his"),
    ("Grace", "she", "her"),
    ("Leo", "he", "his"),
    ("Nora", "she", "her"),
    ("Owen", "he", "his"),
)
ITEMS = (
    "apples",
    "marbles",
    "stickers",
    "pencils",
    "cookies",
    "seashells",
    "stamps",
    "crayons",
    "oranges",
    "beads",
    "toy cars",
    "books",
    "cupcakes",
    "balloons",
    "baseball cards",
)
GOODS = (
    "notebooks",
    "pens",
    "sandwiches",
    "candles",
    "mugs",
    "comic books",
    "muffins",
    "plants",
    "scarves",
    "puzzles",
    "kites",
    "water bottles",
)
GAIN_VERBS = ("buys", "finds", "is given", "wins", "picks up")
VEHICLES = ("bus", "train", "truck", "boat", "delivery van")
GROUPS = (
    ("A class has", "students", "walk to school", "do not walk to school"),
    ("A farm has", "animals", "are sheep", "are not sheep"),
    ("A library has", "books", "are novels", "are not novels"),
    ("A garden has", "flowers", "are roses", "are not roses"),
)
PERCENTS = (10, 20, 25, 40, 50, 60, 75, 80)
BILLS = (5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000)


def calc(expr: str, value: int) -> str:
    """``4*3`` → ``4 * 3 = <<4*3=12>>12`` (GSM8K's annotation style)."""
    pretty = "".join(f" {c} " if c in "+-*/" else c for c in expr)
    return f"{pretty} = <<{expr}={value}>>{value}"


def money(expr: str, value: int) -> str:
    """Like :func:`calc` with dollar signs: ``$<<4*3=12>>12``."""
    pretty = "".join(f" {c} " if c in "+-*/" else c for c in expr)
    return f"{pretty} = $<<{expr}={value}>>{value}"


class Story:
    """Shared picks for one problem."""

    def __init__(self, rng: random.Random, hi: int) -> None:
        self.rng, self.hi = rng, hi
        self.name, self.she, self.her = rng.choice(NAMES)
        self.She = self.she.capitalize()

    def others(self, k: int) -> list[str]:
        return [n for n, _, _ in self.rng.sample([x for x in NAMES if x[0] != self.name], k)]

    def num(self, lo: int, hi: int | None = None) -> int:
        return self.rng.randint(lo, max(lo, hi if hi is not None else self.hi))


def _tally(st: Story, steps: int) -> tuple[str, list[str], int]:
    item = st.rng.choice(ITEMS)
    cur = st.num(5)
    text, lines, left = [f"{st.name} has {cur} {item}."], [], steps
    while left > 0:
        kinds = ["gain", "lose" if cur >= 3 else "gain", "times" if cur <= 3 * st.hi else "lose"]
        kinds += ["packs"] if left >= 2 else []
        divisors = [d for d in range(2, 7) if cur % d == 0 and cur // d >= 2]
        kinds += ["share"] if divisors else []
        kind = st.rng.choice(kinds)
        if kind == "gain":
            k = st.num(2)
            text.append(f"{st.She} {st.rng.choice(GAIN_VERBS)} {k} more.")
            lines.append(f"Then {st.she} has {calc(f'{cur}+{k}', cur + k)} {item}.")
            cur, left = cur + k, left - 1
        elif kind == "lose":
            k = st.num(1, cur - 1)
            text.append(f"{st.She} gives {k} to {st.others(1)[0]}.")
            lines.append(f"Then {st.she} has {calc(f'{cur}-{k}', cur - k)} {item}.")
            cur, left = cur - k, left - 1
        elif kind == "times":
            m = st.rng.choice((2, 3))
            text.append(f"{st.She} {'doubles' if m == 2 else 'triples'} the number of {item} {st.she} has.")
            lines.append(f"Then {st.she} has {calc(f'{cur}*{m}', cur * m)} {item}.")
            cur, left = cur * m, left - 1
        elif kind == "packs":
            p, q = st.num(2, 5), st.num(2, min(st.hi, 12))
            text.append(f"{st.She} buys {p} packs of {item} with {q} in each pack.")
            lines.append(f"The packs hold {calc(f'{p}*{q}', p * q)} {item}.")
            lines.append(f"Then {st.she} has {calc(f'{cur}+{p * q}', cur + p * q)} {item}.")
            cur, left = cur + p * q, left - 2
        else:
            d = st.rng.choice(divisors)
            text.append(f"{st.She} splits them equally into {d} bags and keeps only one bag.")
            lines.append(f"One bag holds {calc(f'{cur}/{d}', cur // d)} {item}.")
            cur, left = cur // d, left - 1
    text.append(f"How many {item} does {st.name} have now?")
    return " ".join(text), lines, cur


def _bill_after(cost: int) -> int:
    return next(b for b in BILLS if b > cost)


def _shopping(st: Story, steps: int) -> tuple[str, list[str], int]:
    g1, g2 = st.rng.sample(GOODS, 2)
    a, p1 = st.num(2, min(st.hi, 12)), st.num(1, max(5, st.hi // 2))
    b, p2 = st.num(2, min(st.hi, 12)), st.num(1, max(5, st.hi // 2))
    c1, c2 = a * p1, b * p2
    if steps in (1, 2):
        text = f"{st.name} buys {a} {g1} that cost ${p1} each."
        lines, cost = [f"{st.She} spends {money(f'{a}*{p1}', c1)}."], c1
    else:
        text = f"{st.name} buys {a} {g1} at ${p1} each and {b} {g2} at ${p2} each."
        lines = [
            f"The {g1} cost {money(f'{a}*{p1}', c1)}.",
            f"The {g2} cost {money(f'{b}*{p2}', c2)}.",
            f"Together {st.she} spends {money(f'{c1}+{c2}', c1 + c2)}.",
        ]
        cost = c1 + c2
    if steps in (1, 3):
        return f"{text} How much money does {st.she} spend in total?", lines, cost
    bill = _bill_after(cost)
    lines.append(f"{st.her.capitalize()} change is {money(f'{bill}-{cost}', bill - cost)}.")
    return f"{text} {st.She} pays with a ${bill} bill. How much change does {st.she} get?", lines, bill - cost


def _ages(st: Story, steps: int) -> tuple[str, list[str], int]:
    b_name, c_name, d_name = st.others(3)
    x, d = st.num(3), st.num(2, 9)
    younger = x > d + 2 and st.rng.random() < 0.4
    b = x - d if younger else x + d
    text = [
        f"{st.name} is {x} years old. {b_name} is {d} years {'younger' if younger else 'older'} than {st.name}."
    ]
    lines = [f"{b_name} is {calc(f'{x}-{d}' if younger else f'{x}+{d}', b)} years old."]
    if steps == 1:
        return f"{text[0]} How old is {b_name}?", lines, b
    m = st.rng.choice((2, 3))
    c = m * b
    text.append(f"{c_name} is {'twice' if m == 2 else 'three times'} as old as {b_name}.")
    lines.append(f"{c_name} is {calc(f'{b}*{m}', c)} years old.")
    if steps == 2:
        return f"{' '.join(text)} How old is {c_name}?", lines, c
    ages, names = [x, b, c], [st.name, b_name, c_name]
    if steps >= 4:
        e = st.num(1, c - 1)
        text.append(f"{d_name} is {e} years younger than {c_name}.")
        lines.append(f"{d_name} is {calc(f'{c}-{e}', c - e)} years old.")
        ages.append(c - e)
        names.append(d_name)
    total = sum(ages)
    lines.append(f"Together they are {calc('+'.join(map(str, ages)), total)} years old.")
    who = ", ".join(names[:-1]) + f" and {names[-1]}"
    return f"{' '.join(text)} What is the total of the ages of {who}?", lines, total


def _rates(st: Story, steps: int) -> tuple[str, list[str], int]:
    if st.rng.random() < 0.5:
        r, h, days = st.num(2, max(5, st.hi // 2)), st.num(2, 8), st.num(2, 6)
        if steps == 1:
            text = f"{st.name} earns ${r} an hour and works {h} hours. How much does {st.she} earn?"
            return text, [f"{st.She} earns {money(f'{h}*{r}', h * r)}."], h * r
        daily, total = h * r, h * r * days
        text = f"{st.name} earns ${r} an hour and works {h} hours a day for {days} days."
        lines = [
            f"Each day {st.she} earns {money(f'{h}*{r}', daily)}.",
            f"In {days} days {st.she} earns {money(f'{daily}*{days}', total)}.",
        ]
        if steps == 2:
            return f"{text} How much does {st.she} earn in total?", lines, total
        e = st.num(1, total - 1)
        if steps >= 4 and (total - e) % 2:
            e = e - 1 if e > 1 else e + 1
        lines.append(f"{st.She} has {money(f'{total}-{e}', total - e)} left.")
        text += f" {st.She} spends ${e} of it on a gift."
        if steps == 3:
            return f"{text} How much money does {st.she} have left?", lines, total - e
        lines.append(f"{st.She} saves {money(f'{total - e}/2', (total - e) // 2)}.")
        return (
            f"{text} {st.She} saves half of what is left. How much does {st.she} save?",
            lines,
            (total - e) // 2,
        )
    vehicle = st.rng.choice(VEHICLES)
    s1, t1 = st.num(2), st.num(2, 6)
    d1 = s1 * t1
    text = f"A {vehicle} travels at {s1} kilometers per hour for {t1} hours."
    lines = [f"It travels {calc(f'{s1}*{t1}', d1)} kilometers."]
    if steps == 1:
        return f"{text} How many kilometers does it travel?", lines, d1
    if steps == 2:
        k = st.num(2)
        lines.append(f"In total it travels {calc(f'{d1}+{k}', d1 + k)} kilometers.")
        return (
            f"{text} Then it travels {k} more kilometers. How many kilometers does it travel in total?",
            lines,
            d1 + k,
        )
    s2, t2 = st.num(2), st.num(2, 6)
    d2 = s2 * t2
    text = f"A {vehicle} travels at {s1} kilometers per hour for {t1} hours, then at {s2} kilometers per hour for {t2} hours."
    lines += [
        f"Then it travels {calc(f'{s2}*{t2}', d2)} kilometers.",
        f"In total it travels {calc(f'{d1}+{d2}', d1 + d2)} kilometers.",
    ]
    if steps == 3:
        return f"{text} How many kilometers does it travel in total?", lines, d1 + d2
    trip = d1 + d2 + st.num(1)
    lines.append(f"It still has {calc(f'{trip}-{d1 + d2}', trip - d1 - d2)} kilometers to go.")
    return f"{text} The whole trip is {trip} kilometers. How many kilometers are left?", lines, trip - d1 - d2


def _sharing(st: Story, steps: int) -> tuple[str, list[str], int]:
    item, n = st.rng.choice(ITEMS), st.num(2, 6)
    k = st.num(2, max(3, st.hi // 2))
    if steps == 1:
        t = n * k
        text = f"{st.name} has {t} {item} and shares them equally among {n} friends. How many {item} does each friend get?"
        return text, [f"Each friend gets {calc(f'{t}/{n}', k)} {item}."], k
    if steps == 2:
        kept = st.num(1, max(2, st.hi // 2))
        t = n * k + kept
        text = (
            f"{st.name} has {t} {item}. {st.She} keeps {kept} and shares the rest equally among {n} friends. "
            f"How many {item} does each friend get?"
        )
        return (
            text,
            [
                f"{st.She} shares {calc(f'{t}-{kept}', t - kept)} {item}.",
                f"Each friend gets {calc(f'{t - kept}/{n}', k)} {item}.",
            ],
            k,
        )
    p, q = n * st.num(1, 3), st.num(3, min(st.hi, 12))  # q >= 3 leaves every friend at least 2
    total = p * q
    lines = [f"{st.She} has {calc(f'{p}*{q}', total)} {item}."]
    text = f"{st.name} buys {p} boxes of {item} with {q} in each box."
    kept = 0
    if steps >= 4:
        kept = n
        text += f" {st.She} keeps {kept}."
        lines.append(f"{st.She} shares {calc(f'{total}-{kept}', total - kept)} {item}.")
    share = (total - kept) // n
    lines.append(f"Each friend gets {calc(f'{total - kept}/{n}', share)} {item}.")
    e = st.num(1, share - 1)
    lines.append(f"Each friend has {calc(f'{share}-{e}', share - e)} {item} left.")
    text += (
        f" {st.She} shares {'the rest' if kept else 'them'} equally among {n} friends, and each friend gives {e} away."
        f" How many {item} does each friend have left?"
    )
    return text, lines, share - e


def _percent(st: Story, steps: int) -> tuple[str, list[str], int]:
    pct = st.rng.choice(PERCENTS)
    unit = 100 // math.gcd(pct, 100)
    if steps <= 2:
        lead, noun, verb, not_verb = st.rng.choice(GROUPS)
        n = unit * st.num(1, max(1, st.hi * 10 // unit))
        r = n * pct // 100
        text = f"{lead} {n} {noun}. {pct}% of them {verb}."
        lines = [f"{calc(f'{n}*{pct}/100', r)} {noun} {verb}."]
        if steps == 1:
            return f"{text} How many {noun} {verb}?", lines, r
        lines.append(f"So {calc(f'{n}-{r}', n - r)} {noun} {not_verb}.")
        return f"{text} How many {noun} {not_verb}?", lines, n - r
    good = st.rng.choice(GOODS)
    price = unit * st.num(1, max(1, st.hi * 5 // unit))
    off = price * pct // 100
    k = st.num(2, 6)
    each, total = price - off, (price - off) * k
    text = (
        f"{good.capitalize()} cost ${price} each and are on sale for {pct}% off. {st.name} buys {k} of them."
    )
    lines = [
        f"The discount is {money(f'{price}*{pct}/100', off)}.",
        f"Each one costs {money(f'{price}-{off}', each)}.",
        f"{st.She} pays {money(f'{each}*{k}', total)}.",
    ]
    if steps == 3:
        return f"{text} How much does {st.she} pay?", lines, total
    bill = _bill_after(total)
    lines.append(f"{st.her.capitalize()} change is {money(f'{bill}-{total}', bill - total)}.")
    return (
        f"{text} {st.She} pays with a ${bill} bill. How much change does {st.she} get?",
        lines,
        bill - total,
    )


TEMPLATES = {
    "tally": _tally,
    "shopping": _shopping,
    "ages": _ages,
    "rates": _rates,
    "sharing": _sharing,
    "percent": _percent,
}
