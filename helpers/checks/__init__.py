"""Exercise checks: tell a student what is wrong with an answer, not only that it is wrong.

``check_array`` is the engine. Each notebook's exercises live in a module of their own
(``helpers.checks.nb01`` ...) whose ``check_...`` functions compute the right answer and
the typical wrong ones (unscaled, softmax over the wrong axis, transposed, ...) with
``helpers.attention`` and hand them to ``check_array``.

A check prints one verdict and returns a ``Verdict``, which is truthy when the answer is
right and shows nothing more in a notebook (the printed line is the feedback). It never
raises on a wrong or missing answer, so a notebook with unsolved exercises still runs top
to bottom. Decorate each public check with ``@exercise_check`` to get that return type.

A new lesson NN's exercise checks go into ``helpers/checks/nbNN.py``, built on the engine here, and
nothing else in this package changes: ``lessons()`` finds every ``nbNN`` module on disk (the tests run
their generic checks over each public ``check_...`` of each one) and the notebook imports its checks
from its module (``from helpers.checks.nb05 import check_rotary``). These judge a student's answers;
the argument checks of the helpers' own functions (which raise) are in ``helpers.validate``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from types import ModuleType

import numpy as np

from helpers import lesson_modules
from helpers.validate import as_numeric  # the package's one check of numeric arrays

__all__ = [
    "check_array",
    "check_array_any_shape",
    "check_number",
    "check_mask",
    "answer_floats",
    "verdict",
    "exercise_check",
    "input_array",
    "Verdict",
    "NOT_ANSWERED",
    "lessons",
]

NOT_ANSWERED = "Not answered yet"


class Verdict:
    """The result of a check: truthy when right; displays nothing (the check already printed)."""

    def __init__(self, ok: object) -> None:
        self.ok = bool(ok)

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return f"Verdict(ok={self.ok})"

    def _ipython_display_(self) -> None:
        """Show nothing under a notebook cell: the ✅/❌ line printed by the check is the feedback."""


def lessons() -> tuple[ModuleType, ...]:
    """Every lesson's module of checks (``helpers.checks.nb01`` ...), found on disk and imported, in lesson order."""
    return lesson_modules(__name__)


def exercise_check(func: Callable[..., object]) -> Callable[..., Verdict]:
    """Decorator: make a check return a ``Verdict`` (no stray True/False under the cell)."""

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> Verdict:
        return Verdict(func(*args, **kwargs))

    return wrapper


def verdict(ok: bool, name: str, message: str) -> Verdict:
    """Print "✅ name: message" (or ❌ when not ok) and return the Verdict."""
    print(f"{'✅' if ok else '❌'} {name}: {message}")
    return Verdict(ok)


def input_array(x: object, name: str, ndim: int) -> np.ndarray:
    """An exercise's input (not the student's answer) as a float array with ``ndim`` axes.

    Raises TypeError/ValueError naming ``name`` (text, None, ragged lists, NaN, wrong number of axes):
    a bad input is the caller's mistake, not a wrong answer, so the check stops with a message.
    """
    if x is None:
        raise TypeError(f"{name} must be a {ndim}-D numeric array, got None")
    arr = as_numeric(x, name)  # TypeError for text and non-numbers, ValueError for ragged, empty, NaN, inf
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    return arr


def check_array(
    answer: object,
    expected: object,
    *,
    name: str,
    mistakes: Mapping[str, object] | None = None,
    hint: str = "",
    rtol: float = 1e-6,
    atol: float = 1e-8,
    exp: bool = False,
) -> Verdict:
    """Compare ``answer`` with ``expected`` and print what is right or wrong about it.

    mistakes maps an explanation (e.g. "these are the unscaled scores: divide by √d_k")
    to the array that mistake produces; the first one the answer matches is reported.
    Numbers match when ``np.allclose(answer, expected, rtol, atol)``. exp=True says the
    exercise computes an exp (a softmax): only then does a NaN answer get the hint
    that exp may have overflowed.
    """
    if answer is None or answer is Ellipsis:
        return verdict(False, name, f"{NOT_ANSWERED}. {hint}".strip())
    try:
        if np.iscomplexobj(answer):
            return verdict(False, name, "your answer holds complex numbers; attention works with real numbers.")
        got = np.asarray(answer, dtype=float)
    except OverflowError:
        return verdict(False, name, "a number in your answer is too large for a float.")
    except (TypeError, ValueError):
        return verdict(False, name, f"expected an array of numbers, got {type(answer).__name__}.")
    want = np.asarray(expected, dtype=float)
    if got.shape != want.shape:
        extra = ""
        if got.shape == want.shape[::-1]:
            extra = " The shape is the transpose of the right one: which axis holds the tokens?"
        return verdict(False, name, f"your array has shape {got.shape}, expected {want.shape}.{extra} {hint}".rstrip())
    if np.isnan(got).any():
        if exp:
            return verdict(False, name, "your array contains NaN: did exp overflow? Subtract the row maximum first.")
        return verdict(False, name, "your array contains NaN (not a number): 0/0, inf − inf, the square root of a "
                                     "negative number or a NaN in what you computed it from makes one; find the first "
                                     "step that gives NaN.")
    if np.allclose(got, want, rtol=rtol, atol=atol):
        return verdict(True, name, "correct.")
    for explanation, wrong in (mistakes or {}).items():
        wrong = np.asarray(wrong, dtype=float)
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=rtol, atol=atol):
            return verdict(False, name, explanation)
    if got.ndim == 2 and got.shape[0] == got.shape[1] and np.allclose(got.T, want, rtol=rtol, atol=atol):
        return verdict(False, name, "this is the transpose of the answer: rows are queries, columns are keys.")
    diff = np.abs(got - want)
    where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
    return verdict(
        False,
        name,
        f"the shape is right but the numbers differ; the largest difference is at index {where}: "
        f"you have {got[where]:.4g}, expected {want[where]:.4g}. {hint}".rstrip(),
    )


def check_array_any_shape(answer: object, expected: np.ndarray, *, name: str, mistakes: Mapping[str, np.ndarray],
                          hint: str, exp: bool = False) -> Verdict:
    """``check_array``, after first matching the mistakes whose shape differs from the right answer's."""
    if answer is not None and answer is not Ellipsis:
        got = answer_floats(answer)  # None for what check_array reports itself, e.g. an int beyond float64
        if got is not None:
            for explanation, wrong in mistakes.items():
                if wrong.shape != expected.shape and got.shape == wrong.shape and np.allclose(got, wrong):
                    return verdict(False, name, explanation)
    same_shape = {k: v for k, v in mistakes.items() if v.shape == expected.shape}
    return check_array(answer, expected, name=name, mistakes=same_shape, hint=hint, exp=exp)


# ------------------------------------------------ checks of one number and of a boolean mask (notebooks 06, 08-10)


def answer_floats(answer: object) -> np.ndarray | None:
    """The answer as a float array, or None when it is not one (complex, text, ragged, beyond float64)."""
    try:
        if np.iscomplexobj(answer):
            return None
        return np.asarray(answer, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return None


def _number(answer: object) -> object:
    """A one-element answer ([5.0], np.array(5.0), 5) as a float; anything else unchanged."""
    if answer is None or answer is Ellipsis or isinstance(answer, (str, bytes)):
        return answer
    arr = answer_floats(answer)
    return float(arr.reshape(-1)[0]) if arr is not None and arr.size == 1 else answer


def _describe(got: object) -> str:
    """What a non-number answer is, in a few words (never raises)."""
    if isinstance(got, int):  # an int that _number could not turn into a float
        return "a number too large for a float"
    if isinstance(got, (str, bytes)):
        return "text, not a number"
    try:
        arr = np.asarray(got)
    except (TypeError, ValueError, OverflowError):  # ragged lists and the like
        return f"a {type(got).__name__} that is not a rectangular array"
    if arr.dtype.kind == "c":
        return "a complex number: sums of exponentials are real"
    if arr.dtype.kind in "iufb":
        return f"an array of shape {arr.shape}"
    return f"a {type(got).__name__}"


def check_number(answer: object, right: float, *, name: str, mistakes: dict[str, float], hint: str,
                  rtol: float = 1e-6, exp: bool = False) -> Verdict:
    """Compare one number; name a recognised slip, else say it is not right without revealing the answer.

    exp=True: the exercise computes an exp, so a NaN may come from an overflow (and says so).
    """
    got = _number(answer)
    if got is None or got is Ellipsis:
        return verdict(False, name, f"{NOT_ANSWERED}. {hint}")
    if not isinstance(got, float):
        return verdict(False, name, f"expected one number, got {_describe(got)}. {hint}")
    if math.isnan(got):
        cause = "did exp overflow, or 0/0?" if exp else "0/0 or inf − inf makes one."
        return verdict(False, name, f"your answer is NaN: {cause} {hint}")
    if math.isclose(got, right, rel_tol=rtol, abs_tol=1e-12):
        return verdict(True, name, "correct.")
    for explanation, wrong in mistakes.items():
        if math.isclose(got, wrong, rel_tol=rtol, abs_tol=1e-12):
            return verdict(False, name, explanation)
    return verdict(False, name, f"{got:.6g} is not it. {hint}")


def _as_array(answer: object) -> np.ndarray | None:
    """The answer as a real or boolean array, or None when it is not one."""
    try:
        got = np.asarray(answer)
    except (TypeError, ValueError, OverflowError):
        return None
    if got.dtype == object or got.dtype.kind not in "biuf":
        return None
    return got


def check_mask(answer: object, right: np.ndarray, *, name: str, mistakes: Mapping[str, np.ndarray],
                hint: str, accept: Mapping[str, np.ndarray] | None = None) -> Verdict:
    """Compare a boolean mask with ``right``; name the mistake it matches (same shape or not).

    accept: other arrays that are right too, each with the sentence the verdict prints.
    A 0/1 array of numbers is read as a mask for the diagnosis, and told to become boolean.
    """
    if answer is None or answer is Ellipsis:
        return verdict(False, name, f"{NOT_ANSWERED}. {hint}")
    got = _as_array(answer)
    if got is None:
        return verdict(False, name,
                       f"expected a boolean array (True = may attend), got {type(answer).__name__}. {hint}")
    numbers = got.dtype != bool
    if numbers:
        finite = np.isfinite(got)
        additive = np.where(right, 0.0, -np.inf)  # the same mask as 0 / -inf, to add to the scores
        if got.shape == right.shape and np.array_equal(got, additive):
            return verdict(False, name,
                           "this is the additive form (0 where allowed, -inf where hidden), which is added "
                        "to the scores; here give the boolean mask itself: True = may attend.")
        if not (finite.all() and np.isin(got, (0, 1)).all()):
            return verdict(False, name, f"a mask holds True/False (or 0/1), but yours holds other numbers. {hint}")
        got = got.astype(bool)
    tail = (" Also: a mask must be boolean (True/False), not the numbers 0/1: the helpers refuse a mask of "
            "numbers; use dtype=bool or a comparison such as j <= i.") if numbers else ""
    for sentence, ok in {"correct.": right, **(accept or {})}.items():
        if got.shape == ok.shape and np.array_equal(got, ok):
            if numbers:
                return verdict(False, name, "the pattern is right, but it is made of numbers: a mask must be boolean "
                            "(True/False); the helpers refuse a mask of 0/1 numbers. Use dtype=bool or a comparison.")
            return verdict(True, name, sentence)
    for explanation, wrong in mistakes.items():
        if got.shape == wrong.shape and np.array_equal(got, wrong):
            return verdict(False, name, explanation + tail)
    if got.shape != right.shape:
        return verdict(False, name, f"your mask has shape {got.shape}, expected {right.shape}. {hint}")
    where = tuple(int(i) for i in np.argwhere(got != right)[0])
    return verdict(False, name,
                   f"the entry at index {where} is {bool(got[where])}, expected {bool(right[where])}.{tail} "
                f"{hint}")
