"""The engine of the Build exercises: check a function the student wrote, and say in words what is wrong.

A Build exercise gives the student a stub (signature, docstring, shapes, body ``...``); one call checks it.
The lesson's module declares a ``Spec``: the right function (from ``helpers``), the typical mistakes, each as a
wrong function with the sentence that names it, and the inputs to try (``Case``: a label and the arguments).
``check_function(fn, spec)`` calls the student's function on every case and prints one verdict line;
``explain(fn, spec, args)`` does the same for one input and returns the sentence, so a live explorer's
readout (``yours=``) and the check say the same words: one engine, one set of messages.

Nothing here raises on a student's mistake. Each gets its own sentence: not answered yet (the stub returns
None), not a function, an exception inside the student's code (its type, message and the student's own line),
a list instead of an array, a wrong shape, NaN or inf, inputs changed in place, and the named mistakes.
A mistake is recognised when the student's output equals that wrong function's output on the same input.
"""

from __future__ import annotations

import inspect
import linecache
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from helpers.checks import NOT_ANSWERED, Verdict, verdict

__all__ = ["Case", "Spec", "Outcome", "call_student", "explain", "check_function", "first_difference",
           "reference_outputs"]


@dataclass(frozen=True)
class Case:
    """One input to try: ``label`` says it in words ("X of shape (1, 3): one token"), ``args`` are the arguments."""

    label: str
    args: tuple


@dataclass(frozen=True)
class Spec:
    """A Build exercise: the function's name, the right function, the named mistakes and the cases to try.

    ``mistakes`` maps a sentence ("not scaled: divide the scores by √d") to a wrong function with the student's
    signature; ``outputs`` names the parts of a tuple result ("output", "K_cache", ...), or is empty for one
    array. Outputs match when ``np.allclose(got, want, rtol, atol, equal_nan=True)`` holds for every part.
    ``hint`` follows "Not answered yet"; ``done`` follows "correct on N inputs" (e.g. what was tried).
    ``symptoms`` maps a sentence ("your result contains inf: exp overflowed.") to a test of the student's output
    (one array); for an output that no mistake explains, the first symptom that holds is said before the largest
    difference. ``may_overwrite`` allows a function that overwrites its inputs (an in-place softmax): the engine
    passes copies either way.
    """

    name: str
    reference: Callable[..., object]
    cases: Sequence[Case]
    mistakes: Mapping[str, Callable[..., object]] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    rtol: float = 1e-6
    atol: float = 1e-9
    hint: str = ""
    done: str = ""
    symptoms: Mapping[str, Callable[[np.ndarray], bool]] = field(default_factory=dict)
    may_overwrite: bool = False


@dataclass
class Outcome:
    """What the student's function did on one input: ``value`` (their output as float arrays, or None when it is
    unusable) and ``problem`` (None when right, else the sentence that says what is wrong); ``vague`` when that
    sentence is only where the output differs (no named mistake, no exception, no wrong shape)."""

    value: object
    problem: str | None
    vague: bool = False  # True when the problem is only a difference that no named mistake explains

    @property
    def ok(self) -> bool:
        return self.problem is None


# ------------------------------------------------------------------ calling the student's code

_RAISED = "your function raised"


def _student_line(fn: Callable, err: BaseException) -> str:
    """' (line 3 of your function: `return x @ y`)' for the deepest frame of the error inside fn's own file."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == code.co_filename]
    if not frames:
        return ""
    frame = frames[-1]
    text = (frame.line or linecache.getline(frame.filename, frame.lineno)).strip()
    return f" (line {frame.lineno - code.co_firstlineno + 1} of your function: `{text}`)"


def _copy(x: object) -> object:
    return x.copy() if isinstance(x, np.ndarray) else x


def call_student(fn: object, args: tuple, may_overwrite: bool = False) -> tuple[object, str | None]:
    """``fn(*args)`` on copies of the array arguments; (result, None), or (None, the sentence for what went wrong).

    Float warnings are recorded and dropped (a raw warning would print a machine path); an exception is reported
    with its type, message and the student's line; an argument changed in place is named (unless may_overwrite).
    """
    if fn is None or fn is Ellipsis:
        return None, NOT_ANSWERED
    if not callable(fn):
        return None, f"pass your function itself (its name, without parentheses), got a {type(fn).__name__}."
    given = tuple(_copy(a) for a in args)
    try:
        with warnings.catch_warnings(record=True), np.errstate(all="ignore"):
            warnings.simplefilter("always")
            result = fn(*given)
    except Exception as err:  # the student's code may raise anything: report it, never crash
        extra = " Keep the summed axis with keepdims=True so the shapes line up." if "broadcast" in str(err) else ""
        return None, f"{_RAISED} {type(err).__name__}: {err}{_student_line(fn, err)}.{extra}"
    names = list(inspect.signature(fn).parameters) if _has_signature(fn) else []
    for i, (before, after) in enumerate(zip(args, given, strict=True)):
        if not may_overwrite and isinstance(before, np.ndarray) and not (  # may_overwrite: e.g. in-place softmax
                before.shape == after.shape and np.array_equal(before, after, equal_nan=True)):
            which = names[i] if i < len(names) else f"argument {i + 1}"
            return None, (f"your function changed its input {which} in place (e.g. `{which} -= ...` or "
                          f"`{which}[...] = ...`): compute a new array instead, the caller still needs {which}.")
    if result is None:
        return None, f"{NOT_ANSWERED} (your function returns None: write its body, and `return` the result)."
    return result, None


def _has_signature(fn: Callable) -> bool:
    try:
        inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return True


# ------------------------------------------------------------------ comparing with the right answer


def _as_floats(x: object) -> np.ndarray | None:
    try:
        if np.iscomplexobj(x):
            return None
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    return arr


def _parts(result: object, spec: Spec) -> tuple[list[np.ndarray] | None, str | None]:
    """The student's result as float arrays, one per output; or None and why it is not one."""
    n = len(spec.outputs)
    if n:
        if not isinstance(result, (tuple, list)) or len(result) != n:
            got = f"a {type(result).__name__}" + (f" of {len(result)} items" if isinstance(result, (tuple, list))
                                                     else "")
            return None, f"return {n} things, ({', '.join(spec.outputs)}), as a tuple; got {got}."
        items = list(result)
    else:
        if isinstance(result, (list, tuple)):
            return None, (f"your function returns a {type(result).__name__}; return a NumPy array "
                          "(np.array(...) or the result of an array operation).")
        items = [result]
    arrays = []
    for label, item in zip(spec.outputs or ("your output",), items, strict=True):
        arr = _as_floats(item)
        if arr is None:
            return None, f"{label} should be an array of real numbers, got {type(item).__name__}."
        arrays.append(arr)
    return arrays, None


def reference_outputs(spec: Spec, args: tuple) -> tuple[list[np.ndarray], tuple[float, float]]:
    """The right output as float64 arrays, and the tolerance (rtol, atol) to compare with: the spec's, or
    coarser where the reference computes in a type with fewer digits (float16: rtol 2 eps = 0.002)."""
    with np.errstate(all="ignore"):
        want = spec.reference(*(_copy(a) for a in args))
    parts = [np.asarray(w) for w in (want if spec.outputs else (want,))]
    rtol, atol = spec.rtol, spec.atol
    for w in parts:
        if np.issubdtype(w.dtype, np.floating):
            fi = np.finfo(w.dtype)
            rtol, atol = max(rtol, 2 * float(fi.eps)), max(atol, float(fi.tiny))
    return [w.astype(np.float64) for w in parts], (rtol, atol)


def _allclose(g: np.ndarray, w: np.ndarray, rtol: float, atol: float) -> bool:
    """np.allclose(g, w, rtol, atol, equal_nan=True) for float arrays of one shape, 4x faster (a live explorer
    compares with every named mistake on each move): infinities must be equal, NaN matches NaN."""
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(g - w) <= atol + rtol * np.abs(w)  # False where either is NaN
        ok = near & np.isfinite(w) | (g == w) | (np.isnan(g) & np.isnan(w))
    return bool(ok.all())


def _close(got: list[np.ndarray], want: list[np.ndarray], tol: tuple[float, float]) -> bool:
    return all(g.shape == w.shape and _allclose(g, w, *tol) for g, w in zip(got, want, strict=True))


def first_difference(got: np.ndarray, want: np.ndarray) -> str:
    """'the largest difference is at index (1, 2): you have 0.25, expected 0.3333' (same shapes)."""
    with np.errstate(all="ignore"):
        diff = np.where(np.isnan(got) != np.isnan(want), np.inf, np.abs(np.nan_to_num(got - want, nan=0.0)))
    where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape)) if diff.size else ()
    return f"the largest difference is at index {where}: you have {got[where]:.4g}, expected {want[where]:.4g}"


def _named_mistake(spec: Spec, args: tuple, got: list[np.ndarray], tol: tuple[float, float]) -> str | None:
    """The sentence of the first mistake whose output on ``args`` equals the student's (same shapes), else None."""
    for sentence, wrong in spec.mistakes.items():
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                made = wrong(*(_copy(a) for a in args))
            predicted = [np.asarray(m, dtype=np.float64) for m in (made if spec.outputs else (made,))]
        except Exception:  # a mistake that cannot even run on this input (e.g. shapes only a square case allows)
            continue
        if len(predicted) == len(got) and _close(got, predicted, tol):
            return sentence
    return None


def explain(fn: object, spec: Spec, args: tuple) -> Outcome:
    """Run the student's function on one input and say what is wrong (None when right). Never raises."""
    result, problem = call_student(fn, args, spec.may_overwrite)
    if problem is not None:
        return Outcome(None, problem)
    got, problem = _parts(result, spec)
    if problem is not None:
        return Outcome(None, problem)
    want, tol = reference_outputs(spec, args)
    value = tuple(got) if spec.outputs else got[0]
    for g, w, label in zip(got, want, spec.outputs or ("your output",), strict=True):
        if g.shape != w.shape:
            # a mistake of another shape (e.g. the weights, not the output)
            named = _named_mistake(spec, args, got, tol)
            if named is not None:
                return Outcome(value if g.size else None, named)
            flip = " (the transpose of the right shape: which axis holds the tokens?)" if g.shape == w.shape[::-1] \
                else ""
            return Outcome(value if g.size else None, f"{label} has shape {g.shape}, expected {w.shape}{flip}.")
    if _close(got, want, tol):
        return Outcome(value, None)
    named = _named_mistake(spec, args, got, tol)
    if named is not None:
        return Outcome(value, named)
    for g, w, label in zip(got, want, spec.outputs or ("your output",), strict=True):
        if not _allclose(g, w, *tol):
            bad = np.isnan(g).any() and not np.isnan(w).any()
            why = next((f"{sentence} " for sentence, holds in spec.symptoms.items() if _holds(holds, g)), "")
            if not why and bad:
                why = "holds NaN where the right answer has none: an exp overflowed (inf/inf) or 0/0 somewhere; "
            name = "" if label == "your output" else f"{label}: "
            return Outcome(value, f"{name}{why}{first_difference(g, w)}.", vague=True)
    return Outcome(value, None)  # pragma: no cover - _close said no, so one part differs


def _holds(test: Callable[[np.ndarray], bool], got: np.ndarray) -> bool:
    try:
        with np.errstate(all="ignore"):
            return bool(test(got))
    except Exception:  # a symptom's test that does not apply to this output
        return False


def check_function(fn: object, spec: Spec) -> Verdict:
    """Call the student's function on every case of ``spec``; print one verdict (the first problem, with the input
    it showed on) and return it. Never raises on a student's mistake.

    When the first problem is only a difference no mistake explains, and the function raises on a later input,
    that exception is reported instead: it names the student's own line (e.g. a forgotten keepdims=True that
    still runs on a square input).
    """
    if fn is None or fn is Ellipsis:
        return verdict(False, spec.name, f"{NOT_ANSWERED}. {spec.hint}".strip())
    first: tuple[Case, Outcome] | None = None
    for case in spec.cases:
        outcome = explain(fn, spec, case.args)
        if outcome.problem is None:
            continue
        if outcome.problem.startswith(NOT_ANSWERED):
            return verdict(False, spec.name, f"{outcome.problem} {spec.hint}".strip())
        if first is None:
            first = (case, outcome)
            if not outcome.vague:  # a named mistake, an exception, a wrong shape ...: say it now
                break
        elif outcome.problem.startswith(_RAISED):
            first = (case, outcome)
            break
    if first is None:
        return verdict(True, spec.name, f"correct on all {len(spec.cases)} inputs{spec.done}.")
    case, outcome = first
    return verdict(False, spec.name, f"on {case.label}: {outcome.problem}")

