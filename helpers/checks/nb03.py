"""Exercise checks for notebook 03 (softmax overflow).

Each check computes the right answer (and the answers of the usual mistakes) with
``helpers.attention`` / ``helpers.numerics``, prints one verdict and returns a Verdict (truthy when right).
``check_stable_softmax`` calls the student's function on hard inputs; whatever that function
does (raise, warn, return None or nan), the check reports it as a diagnosis and never raises.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from helpers import examples
from helpers.attention import softmax
from helpers.checks import NOT_ANSWERED, Verdict, check_array, exercise_check, verdict
from helpers.numerics import exp_limits, logsumexp

__all__ = ["SOFTMAX_CASES", "LSE_ROW", "check_stable_softmax", "check_largest_safe_x", "check_logsumexp"]

# ------------------------------------------------------------------ exercise 1: a stable softmax

# (what the case tests, the input); every case has >= 2 dimensions and softmax runs over the last.
SOFTMAX_CASES: list[tuple[str, np.ndarray]] = [
    ("small scores (text 003's scaled scores)", examples.T003_SCORES.astype(np.float64)),  # (3, 3)
    ("large positive scores", np.array([[1000.0, 1001.0, 1002.0], [3.0, 1.0, 2.0]])),  # (2, 3)
    ("large negative scores", np.array([[-1000.0, -1001.0, -1002.0]])),  # (1, 3)
    ("-inf entries (masked keys)", np.array([[0.0, -np.inf, 1.0], [2.0, 2.0, -np.inf]])),  # (2, 3)
    ("float16 scores", np.array([[10.0, 12.0, 11.0]], dtype=np.float16)),  # (1, 3)
    ("rows on very different scales", np.array([[0.0, 1.0, 2.0], [-2000.0, -2001.0, -2002.0]])),  # (2, 3)
    ("one row with a wide range", np.array([[-1000.0, 0.0, 1000.0]])),  # (1, 3)
    ("a batch of heads, shape (2, 2, 3)", np.arange(12.0).reshape(2, 2, 3) * 100.0),  # (2, 2, 3)
]


def _stable(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))  # same shape as x
    return e / np.sum(e, axis=axis, keepdims=True)


# What each typical mistake returns (computed, never typed in), with the explanation shown to the student.
_MISTAKES: list[tuple[str, Callable[[np.ndarray], np.ndarray]]] = [
    (
        "this is the naive softmax exp(x) / sum(exp(x)): exp(1000) overflows to inf and inf/inf is nan "
        "(and exp(-1000) underflows to 0, so 0/0 is nan). Subtract each row's maximum before exp.",
        lambda x: np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True),
    ),
    (
        "you subtracted the minimum, not the maximum: then the exponents are >= 0 and exp still overflows "
        "when a row spans a wide range (exp(2000) = inf), and a -inf entry makes x - min nan. "
        "Subtract the row MAXIMUM so every exponent is <= 0.",
        lambda x: (lambda e: e / np.sum(e, axis=-1, keepdims=True))(np.exp(x - np.min(x, axis=-1, keepdims=True))),
    ),
    (
        "you subtracted one global maximum (x.max()) instead of each row's maximum. Mathematically fine, "
        "but a row far below the global maximum underflows to all zeros and 0/0 is nan. "
        "Use np.max(x, axis=-1, keepdims=True).",
        lambda x: (lambda e: e / np.sum(e, axis=-1, keepdims=True))(np.exp(x - np.max(x))),
    ),
    (
        "the softmax runs over the wrong axis: axis 0 normalises the columns. Scores are (queries, keys) and "
        "each query's row must sum to 1: use axis=-1.",
        lambda x: _stable(x, axis=0),
    ),
    (
        "right for 2-D input, wrong for a batch: axis=1 is not the last axis of a (heads, T, T) array. "
        "Use axis=-1 so the same code works with any number of leading dimensions.",
        lambda x: _stable(x, axis=1),
    ),
    (
        "the rows do not sum to 1: after exp(x - max) divide by each row's sum.",
        lambda x: np.exp(x - np.max(x, axis=-1, keepdims=True)),
    ),
    (
        "you divided by the sum of the whole array, not by each row's sum: "
        "use np.sum(e, axis=-1, keepdims=True).",
        lambda x: (lambda e: e / np.sum(e))(np.exp(x - np.max(x, axis=-1, keepdims=True))),
    ),
]

_SOFTMAX_HINT = (
    "Hint: section 2 shows that subtracting a constant from a row leaves its softmax unchanged. "
    "Which constant, taken per row, keeps every exponent <= 0?"
)


def _quiet(func: Callable[[np.ndarray], object], x: np.ndarray) -> object:
    """func(copy of x) with float warnings recorded and dropped (a raw warning would print a file path)."""
    with warnings.catch_warnings(record=True), np.errstate(all="ignore"):
        warnings.simplefilter("always")
        return func(x.copy())


def _same(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> bool:
    tol = 2e-3 if x.dtype == np.float16 else 1e-6
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol * 1e-2, equal_nan=True))


def _show(a: np.ndarray) -> str:
    with np.printoptions(precision=4, suppress=True):
        return np.array2string(np.asarray(a, dtype=np.float64), separator=", ").replace("\n", "")


@exercise_check
def check_stable_softmax(func: object) -> Verdict:
    """Call the student's softmax on hard inputs (overflow, underflow, -inf, float16, batches) and diagnose."""
    name = "stable softmax"
    if func is None or func is Ellipsis:
        return verdict(False, name, f"{NOT_ANSWERED}. {_SOFTMAX_HINT}")
    if not callable(func):
        return verdict(False, name, f"pass your function itself (e.g. my_softmax), got a {type(func).__name__}.")
    answers: list[np.ndarray] = []
    for label, x in SOFTMAX_CASES:
        try:
            got = _quiet(func, x)
        except Exception as err:  # the student's code may raise anything: report it, never crash
            extra = ""
            if "broadcast" in str(err):
                extra = " Keep the summed axis with keepdims=True so the shapes line up."
            return verdict(False, name, f"your function raised {type(err).__name__}: {err} (on {label}).{extra}")
        if got is None:
            return verdict(False, name, f"{NOT_ANSWERED}. {_SOFTMAX_HINT}")
        try:
            got = np.asarray(got, dtype=np.float64)
        except (TypeError, ValueError):
            return verdict(False, name, f"your function should return an array of numbers, got {type(got).__name__}.")
        if got.shape != x.shape:
            return verdict(
                False, name, f"on {label} the input has shape {x.shape} but you returned shape {got.shape}; "
                "softmax keeps the shape (did you lose keepdims=True?)."
            )
        answers.append(got)
    expected = [softmax(x).astype(np.float64) for _, x in SOFTMAX_CASES]
    wrong = [i for i, (g, e) in enumerate(zip(answers, expected, strict=True)) if not _same(g, e, SOFTMAX_CASES[i][1])]
    if not wrong:
        return verdict(True, name, f"correct on all {len(SOFTMAX_CASES)} hard inputs (overflow, underflow, -inf, "
                        "float16, rows on different scales, a batch).")
    first = wrong[0]
    label, x = SOFTMAX_CASES[first]
    where = f"\n   on {label}: input {_show(x)}\n   expected {_show(expected[first])}, you returned {_show(answers[first])}"
    for explanation, mistake in _MISTAKES:  # a mistake that reproduces the answer on every case explains it
        predicted = [np.asarray(_quiet(mistake, x_), dtype=np.float64) for _, x_ in SOFTMAX_CASES]
        if all(_same(g, p, x_) for g, p, (_, x_) in zip(answers, predicted, SOFTMAX_CASES, strict=True)):
            return verdict(False, name, explanation + where)
    if np.isnan(answers[first]).any():
        why = "your result contains nan: an exp overflowed (inf/inf) or a whole row underflowed (0/0)."
    elif np.isinf(answers[first]).any():
        why = "your result contains inf: exp overflowed."
    else:
        why = "the numbers differ from softmax over the last axis."
    return verdict(False, name, f"{why} {_SOFTMAX_HINT}{where}")


# ------------------------------------------------------------------ exercise 2: the largest safe x


@exercise_check
def check_largest_safe_x(answer: object, dtype: object = np.float32) -> Verdict:
    """The largest x (in ``dtype``) with finite np.exp(x); exact to the last float, as exp_limits finds it."""
    limits = exp_limits(dtype)
    dt = np.dtype(dtype)
    name = f"largest safe x for {dt}"
    hint = (
        f"Hint: for which x is exp(x) exactly the largest {dt}? Rounded to a {dt}, that x can land a step off: "
        "test it and its neighbours, as the deep dive on float types checks its table."
    )
    if answer is None or answer is Ellipsis:
        return verdict(False, name, f"{NOT_ANSWERED}. {hint}")
    try:
        value = float(answer)
    except OverflowError:  # e.g. the Python int 10**400
        return verdict(False, name, f"your number is too large for any float; the answer is a finite x whose exp "
                        f"is finite. {hint}")
    except (TypeError, ValueError):
        return verdict(False, name, f"expected one number, got {type(answer).__name__}.")
    if not math.isfinite(value):
        return verdict(False, name, f"you have {value}; the answer is a finite x whose exp is finite. {hint}")
    fi = np.finfo(dt)
    with np.errstate(over="ignore", under="ignore"):
        x = dt.type(value)
        exp_x = np.exp(x)
        exp_next = np.exp(np.nextafter(x, dt.type(np.inf)))
    if float(x) == limits.max_finite:
        return verdict(True, name, f"correct: exp({float(x)!r}) = {float(exp_x):.6g} and the next {dt} up overflows.")
    gap = abs(float(x) - limits.max_finite) / float(np.spacing(dt.type(limits.max_finite)))  # in dt steps
    steps = int(round(gap)) if math.isfinite(gap) else math.inf
    if steps <= 1024:
        as_dt = f"as a {dt} your {value!r} is {float(x)!r}, and " if float(x) != value else ""
        if not np.isfinite(exp_x):
            return verdict(False, name, f"almost: {as_dt}np.exp({float(x)!r}) is inf in {dt} "
                            f"({steps} {dt} step(s) too far). Step down with np.nextafter.")
        if np.isfinite(exp_next):
            return verdict(False, name, f"safe but not the largest: exp({float(x)!r}) is finite, and so is exp of the "
                            f"next {dt} up ({steps} step(s) below the limit). Step up with np.nextafter.")
    underflow = "that is where exp(x) underflows to 0, not where it overflows."
    mistakes = [
        ("that is the largest float itself, not the largest x whose exp is finite: take its natural log.",
         float(fi.max)),
        ("np.log10 is the base-10 log; exp needs the natural log np.log.", float(np.log10(np.float64(fi.max)))),
        ("that is where exp(x) drops below the smallest normal number (becomes subnormal), not where it overflows.",
         limits.min_normal),
        (underflow, limits.min_nonzero),
        (underflow, float(np.log(np.float64(fi.smallest_subnormal)))),  # log of the smallest subnormal
    ]
    for other in (np.float16, np.float32, np.float64):
        if np.dtype(other) != dt:
            mistakes.append((f"that is the limit for {np.dtype(other)}, not {dt}.", exp_limits(other).max_finite))
    for explanation, wrong in mistakes:
        if math.isclose(value, wrong, rel_tol=1e-3):
            return verdict(False, name, explanation)
    if not math.isfinite(float(x)):
        return verdict(False, name, f"you have {value:.6g}, beyond the largest {dt} ({float(fi.max):.4g}); the answer "
                        f"is a much smaller x whose exp is finite. {hint}")
    return verdict(False, name, f"you have {value:.6g}; the limit is near {limits.max_finite:.4f}. {hint}")


# ------------------------------------------------------------------ exercise 3: log-sum-exp of a row

LSE_ROW = 250.0 * examples.T001_SCORES_QUERY1  # (3,) text 001's scores [2, 4, 4] blown up: [500, 1000, 1000]


@exercise_check
def check_logsumexp(answer: object) -> Verdict:
    """log(sum(exp(LSE_ROW))) computed without overflow."""
    with np.errstate(over="ignore"):
        naive = np.log(np.sum(np.exp(LSE_ROW)))  # inf: exp(1000) overflows
    m = np.max(LSE_ROW)
    return check_array(
        answer,
        logsumexp(LSE_ROW),
        name="log-sum-exp of LSE_ROW",
        mistakes={
            "this is np.log(np.sum(np.exp(row))): exp(1000) overflows to inf. Factor out the maximum first.": naive,
            "this is only max(row): add log(sum(exp(row - max))).": m,
            "this is log(sum(exp(row - max))) without the max: add max(row) back.": np.log(np.sum(np.exp(LSE_ROW - m))),
            "this is the logsumexp of the scores [2, 4, 4] before the factor 250: use LSE_ROW.":
                logsumexp(examples.T001_SCORES_QUERY1),
        },
        hint="Hint: which factor e^c can you take out of the sum so that no exponent is positive? (the deep dive on "
             "log-sum-exp)",
        exp=True,
    )
