"""Exercise checks for notebook 03 (softmax overflow).

Each check computes the right answer (and the answers of the usual mistakes) with
``helpers.attention`` / ``helpers.numerics``, prints one verdict and returns a Verdict (truthy when right).
``check_stable_softmax`` (the Build exercise) calls the student's function on the hard inputs of
``SPEC_STABLE_SOFTMAX`` through helpers.checks.functions; whatever that function does (raise, warn, return
None or nan), the check reports it as a diagnosis and never raises.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from helpers import examples
from helpers.attention import softmax
from helpers.checks import NOT_ANSWERED, Verdict, check_array, exercise_check, verdict
from helpers.checks.functions import KEEPDIMS, Case, Spec, check_function
from helpers.numerics import exp_limits, logsumexp

__all__ = ["SOFTMAX_CASES", "SPEC_STABLE_SOFTMAX", "LSE_ROW", "check_stable_softmax", "check_largest_safe_x",
           "check_logsumexp"]

# ------------------------------------------------------------------ exercise 1 (Build): a stable softmax

# (what the case tests, the input); softmax runs over the last axis, with any number of leading axes.
SOFTMAX_CASES: list[tuple[str, np.ndarray]] = [
    ("small scores (text 003's scaled scores)", examples.T003_SCORES.astype(np.float64)),  # (3, 3)
    ("large positive scores", np.array([[1000.0, 1001.0, 1002.0], [3.0, 1.0, 2.0]])),  # (2, 3)
    ("large negative scores", np.array([[-1000.0, -1001.0, -1002.0]])),  # (1, 3)
    ("-inf entries (masked keys)", np.array([[0.0, -np.inf, 1.0], [2.0, 2.0, -np.inf]])),  # (2, 3)
    ("float16 scores", np.array([[10.0, 12.0, 11.0]], dtype=np.float16)),  # (1, 3)
    ("rows on very different scales", np.array([[0.0, 1.0, 2.0], [-2000.0, -2001.0, -2002.0]])),  # (2, 3)
    ("one row with a wide range", np.array([[-1000.0, 0.0, 1000.0]])),  # (1, 3)
    ("a batch of heads, shape (2, 2, 3)", np.arange(12.0).reshape(2, 2, 3) * 100.0),  # (2, 2, 3)
    ("scores of ±1e4", np.array([[1e4, -1e4, 9999.0, 0.0], [-1e4, -1e4, -9999.0, -1e4]])),  # (2, 4)
    ("rows holding -inf beside scores of ±1e4", np.array([[-np.inf, 1e4, -1e4], [-1e4, -np.inf, -np.inf],
                                                           [-np.inf, -9999.0, -1e4]])),  # (3, 3)
    ("four axes, shape (2, 1, 2, 3), with -inf", np.where(np.arange(12).reshape(2, 1, 2, 3) % 5 == 4, -np.inf,
                                                           np.linspace(-1e4, 1e4, 12).reshape(2, 1, 2, 3))),
    ("one row of shape (4,), no leading axis", np.array([3.0, -1e4, 1e4, 0.0])),  # (4,)
]


def _stable(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))  # same shape as x
    return e / np.sum(e, axis=axis, keepdims=True)


def _stable_softmax(x: np.ndarray) -> np.ndarray:
    """The right stable_softmax: helpers.attention.softmax over the last axis."""
    return softmax(x, axis=-1)


# Each typical mistake as the wrong function a student writes; the first whose output matches is named.
_MISTAKES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "your result contains nan: this is the naive softmax exp(x) / sum(exp(x)). exp(1000) overflows to inf and "
    "inf/inf is nan (and exp(-1000) underflows to 0, so 0/0 is nan). Subtract each row's maximum before exp.":
        lambda x: np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True),
    "you subtracted the minimum, not the maximum: then the exponents are >= 0 and exp still overflows "
    "when a row spans a wide range (exp(2000) = inf), and a -inf entry makes x - min nan. "
    "Subtract the row MAXIMUM so every exponent is <= 0.":
        lambda x: (lambda e: e / np.sum(e, axis=-1, keepdims=True))(np.exp(x - np.min(x, axis=-1, keepdims=True))),
    "you subtracted one global maximum (x.max()) instead of each row's maximum. Mathematically fine, "
    "but a row far below the global maximum underflows to all zeros and 0/0 is nan. "
    "Use np.max(x, axis=-1, keepdims=True).":
        lambda x: (lambda e: e / np.sum(e, axis=-1, keepdims=True))(np.exp(x - np.max(x))),
    "the softmax runs over the wrong axis: axis 0 normalises the columns. Scores are (queries, keys) and "
    "each query's row must sum to 1: use axis=-1.": lambda x: _stable(x, axis=0),
    "right for 2-D input, wrong for a batch: axis=1 is not the last axis of a (heads, T, T) array. "
    "Use axis=-1 so the same code works with any number of leading dimensions.": lambda x: _stable(x, axis=1),
    "the rows do not sum to 1: after exp(x - max) divide by each row's sum.":
        lambda x: np.exp(x - np.max(x, axis=-1, keepdims=True)),
    "you divided by the sum of the whole array, not by each row's sum: "
    "use np.sum(e, axis=-1, keepdims=True).":
        lambda x: (lambda e: e / np.sum(e))(np.exp(x - np.max(x, axis=-1, keepdims=True))),
}

_SOFTMAX_HINT = (
    "Hint: section 2 shows that subtracting a constant from a row leaves its softmax unchanged. "
    "Which constant, taken per row, keeps every exponent <= 0?"
)

SPEC_STABLE_SOFTMAX = Spec(
    name="stable softmax",
    broadcast=KEEPDIMS,  # a row max or sum written without keepdims=True: say so
    reference=_stable_softmax,
    cases=[Case(label, (x,)) for label, x in SOFTMAX_CASES],
    mistakes=_MISTAKES,
    hint=_SOFTMAX_HINT,
    done=" (overflow, underflow, -inf, float16, rows on different scales, batches, one row)",
    symptoms={
        "your result contains nan: an exp overflowed (inf/inf) or a whole row underflowed (0/0);":
            lambda got: np.isnan(got).any(),
        "your result contains inf: exp overflowed;": lambda got: np.isinf(got).any(),
        "the numbers differ from softmax over the last axis;": lambda got: True,
    },
    may_overwrite=True,  # an in-place softmax (as helpers.attention.softmax_in_place) is a right answer
)


@exercise_check
def check_stable_softmax(func: object) -> Verdict:
    """Call the student's softmax on hard inputs (overflow, underflow, ±1e4, -inf, float16, batches) and diagnose."""
    return check_function(func, SPEC_STABLE_SOFTMAX)


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
