"""Rates measured by nudging: the derivatives lesson 07 needs, found by measuring before any rule is stated.

A rate (a *derivative*) says how far an output moves per unit its input moves, for a tiny move. It is
measured by nudging the input by ε: (f(s + ε) − f(s)) / ε. Lesson 07's explorer measures it for four
functions of one number s (``FUNCTIONS``): s², eˢ, a product s·eˢ and a chain (eˢ)², whose parts are the
first two; each part's rate is measured too, so that the rules that combine them (add the paths of a
product, multiply the rates along a chain) can be read off the numbers before they are stated (``RULES``).

Everything here works on plain float numbers (scalars); nothing draws or interacts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from helpers.validate import check_callable, check_choice, check_flag, check_real

__all__ = ["FUNCTIONS", "RULES", "Part", "measured_rate", "rule_rate", "rate_rows", "RATE_COLUMNS", "curve"]

MAX_ABS_S = 50.0  # e^(2·50) is 2.7e43: far from overflow; a rate measured further out is not what 07 asks


def _exp(s: float) -> float:
    return math.exp(s)


def _square(s: float) -> float:
    return s * s


@dataclass(frozen=True)
class Part:
    """One row of a measurement: a function of ``at(s)`` (s itself, or the inner value u for a chain's outer part)."""

    label: str
    f: Callable[[float], float]
    at: Callable[[float], float]  # where this part is nudged: s, or u = inner(s) for the outer part of a chain
    rule: Callable[[float], float]  # its rate by the rule, at s (stated once measured)


# name -> the parts measured, the whole last. The rules are those the lesson states AFTER the measurements.
FUNCTIONS: dict[str, tuple[Part, ...]] = {
    "s²": (Part("s²", _square, lambda s: s, lambda s: 2 * s),),
    "eˢ": (Part("eˢ", _exp, lambda s: s, _exp),),
    "product s·eˢ": (
        Part("g = s", lambda s: s, lambda s: s, lambda s: 1.0),
        Part("h = eˢ", _exp, lambda s: s, _exp),
        Part("f = g·h = s·eˢ", lambda s: s * math.exp(s), lambda s: s,
             lambda s: 1.0 * math.exp(s) + s * math.exp(s)),  # (rate of g)·h + g·(rate of h)
    ),
    "chain (eˢ)²": (
        Part("inner u = eˢ", _exp, lambda s: s, _exp),
        Part("outer u², per unit of u", _square, _exp, lambda s: 2 * math.exp(s)),  # nudged at u = eˢ: rate 2u
        Part("f = (eˢ)²", lambda s: math.exp(s) ** 2, lambda s: s,
             lambda s: 2 * math.exp(s) * math.exp(s)),  # (rate of the outer at u)·(rate of the inner)
    ),
}

RULES = {  # each function's rule in words, as the lesson states it after measuring
    "s²": "the rate of s² is 2s",
    "eˢ": "the rate of eˢ is eˢ itself (1 at s = 0)",
    "product s·eˢ": "a product: (rate of g)·h + g·(rate of h): s reaches f along two paths, and their parts add",
    "chain (eˢ)²": "a chain: (rate of the outer, at u)·(rate of the inner): rates multiply along a chain",
}

RATE_COLUMNS = ("at the point", "nudged by ε", "measured rate", "the rule's rate")


def measured_rate(f: Callable[[float], float], s: float, eps: float) -> float:
    """(f(s + eps) − f(s)) / eps: the rate of ``f`` at ``s`` measured with a nudge ``eps`` (a one-sided difference)."""
    check_callable(f, "f", "a function of one number")
    s = check_real(s, "s", kind="a real number (where to measure)", rule="a finite number")
    eps = check_real(eps, "eps", low=0.0, high=1e3, kind="a real number (the nudge)",
                     rule="a finite number > 0 and < 1000 (a small nudge, such as 0.01)")
    if s + eps == s:
        raise ValueError(f"eps = {eps} is too small to move s = {s} in float64: s + eps == s, so the change would be 0")
    values = []
    for x in (s, s + eps):
        y = f(x)
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, float, np.integer, np.floating)):
            raise TypeError(f"f must return a real number, got {y!r} ({type(y).__name__}) at s = {x}")
        if not math.isfinite(y):
            raise ValueError(f"f returned {y} at s = {x}; a rate can only be measured where f is finite")
        values.append(float(y))
    return (values[1] - values[0]) / eps


def _check(name: str, s: float) -> tuple[tuple[Part, ...], float]:
    parts = FUNCTIONS[check_choice(name, "name", list(FUNCTIONS))]
    s = check_real(s, "s", high=MAX_ABS_S, low=-MAX_ABS_S, kind="a real number (where to measure)",
                   rule=f"a finite number in ({-MAX_ABS_S}, {MAX_ABS_S})")
    return parts, s


def rule_rate(name: str, s: float) -> float:
    """The rate of the function ``name`` (a key of ``FUNCTIONS``) at ``s`` by its rule (the whole, its last part)."""
    parts, s = _check(name, s)
    return float(parts[-1].rule(s))


def rate_rows(name: str, s: float, eps: float, rule: bool = False) -> tuple[list[str], np.ndarray]:
    """(row labels, table (R, 3) or (R, 4)): for each part of ``name``, its value at the point, its value nudged by
    eps, the measured rate and, with ``rule``, its rate by the rule. R = 1 for s² and eˢ, 3 for a product or a chain
    (the parts, then the whole)."""
    parts, s = _check(name, s)
    rule = check_flag(rule, "rule")
    rows = []
    for part in parts:
        x = part.at(s)  # (scalar) where the part is nudged: s, or u = eˢ for a chain's outer part
        rate = measured_rate(part.f, x, eps)
        rows.append([part.f(x), part.f(x + eps), rate] + ([part.rule(s)] if rule else []))
    return [p.label for p in parts], np.array(rows, dtype=np.float64)  # (R, 3) or (R, 4)


def curve(name: str, lo: float, hi: float, n: int = 61) -> tuple[np.ndarray, np.ndarray]:
    """(s, f(s)) at ``n`` evenly spaced points from lo to hi: the whole function ``name``, to draw."""
    parts, lo = _check(name, lo)
    _, hi = _check(name, hi)
    if not lo < hi or not isinstance(n, int) or isinstance(n, bool) or n < 2:
        raise ValueError(f"curve needs lo < hi and an integer n >= 2, got lo={lo}, hi={hi}, n={n!r}")
    xs = np.linspace(lo, hi, n)  # (n,)
    whole = parts[-1].f
    return xs, np.array([whole(float(x)) for x in xs])  # (n,), (n,)
