"""The engine of the Build exercises: check a function the student wrote, and say in words what is wrong.

A Build exercise gives the student a stub (signature, docstring, shapes, body ``...``); one call checks it.
The lesson's module declares a ``Spec``: the right function (from ``helpers``), the typical mistakes, each as a
wrong function with the sentence that names it, and the inputs to try (``Case``: a label and the arguments).
``check_function(fn, spec)`` calls the student's function on every case and prints one verdict line;
``explain(fn, spec, args)`` does the same for one input and returns the sentence, so a live explorer's
readout (``yours=``) and the check say the same words: one engine, one set of messages.

Nothing here raises on a student's mistake. Each gets its own sentence: not answered yet (the stub returns
None), not a function, an exception inside the student's code (its type, message, the student's own line, and
which name on that line is None when a stub above still returns None), a list instead of an array, a wrong
shape, NaN or inf, inputs changed in place (arrays, or arrays inside a dict of parameters), floats where integers
(token ids) are due, and the named mistakes. A mistake is recognised when the student's output equals that wrong
function's output on the same input.
"""

from __future__ import annotations

import inspect
import linecache
import re
import sysconfig
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import numpy as np

import helpers
from helpers.checks import NOT_ANSWERED, Verdict, verdict

__all__ = ["Case", "Spec", "Outcome", "call_student", "explain", "check_function", "first_difference",
           "reference_outputs", "RETURNS_NONE", "KEEPDIMS"]

RETURNS_NONE = f"{NOT_ANSWERED} (your function returns None: write its body, and `return` the result)."
# Spec.broadcast of a lesson whose function sums or takes a max over an axis (a softmax written by hand)
KEEPDIMS = ("A sum or max over the last axis drops that axis: keep it with keepdims=True (or index [..., None]) so "
            "the shapes line up.")


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
    passes copies either way. A mistake may return None: it does not apply to that input.

    ``broadcast`` follows an exception whose operands could not be broadcast together (e.g. ``KEEPDIMS``, for a
    function that sums over an axis); none by default. ``tolerance`` maps a dtype of the right output to a
    tolerance relative to its largest |value|: the outputs match when |got − want| <= tol · max(1, max |want|)
    (with ``rtol``; other dtypes use rtol and atol). ``integers``, when given, is said after "your function
    returned float64 numbers; " for an output that is not of an integer dtype (token ids). ``watch(args)`` gives
    (the arguments to pass the student instead of ``args``, a function called once the output is right: what is
    still wrong, e.g. the work it did, or None).
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
    broadcast: str = ""
    tolerance: Mapping[np.dtype, float] = field(default_factory=dict)
    integers: str = ""
    watch: Callable[[tuple], tuple[tuple, Callable[[], str | None]]] | None = None


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

_NOT_STUDENT = tuple(str(Path(p).resolve()) for p in {
    Path(helpers.__file__).parent, Path(np.__file__).parent,
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})


def _is_students(filename: str) -> bool:
    """A traceback frame in the student's code: not in helpers, NumPy, the standard library or site-packages."""
    try:
        return not str(Path(filename).resolve()).startswith(_NOT_STUDENT)
    except (OSError, ValueError):
        return True


def raised_sentence(err: BaseException, broadcast: str = "") -> str:
    """What went wrong inside the student's code: the error's type and message, the student's deepest line ("at
    line 3 of attend: `...`", counted from the def line), and, when a name on that line is None there, that a
    stub above may still return None. ``broadcast`` follows an error of operands that cannot be broadcast."""
    text = str(err).strip()
    message = text.splitlines()[0][:200] if text else ""
    tb: TracebackType | None = err.__traceback__
    mine = None
    while tb is not None:
        if _is_students(tb.tb_frame.f_code.co_filename):
            mine = tb
        tb = tb.tb_next
    where, hint = "", ""
    if mine is not None:
        code, lineno = mine.tb_frame.f_code, mine.tb_lineno
        line = linecache.getline(code.co_filename, lineno).strip()
        name = "your function" if code.co_name == "<lambda>" else code.co_name
        where = f" at line {lineno - code.co_firstlineno + 1} of {name}" + (f": `{line}`" if line else "")
        local = mine.tb_frame.f_locals
        nones = [n for n in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", line)) if n in local and local[n] is None]
        if nones:
            hint = f" `{nones[0]}` is None there: does the function that made it (a stub above?) still return None?"
    if not hint and "NoneType" in message:
        hint = " Something was None: does a function it calls (a stub above?) still return None?"
    extra = f" {broadcast}" if broadcast and "be broadcast" in message else ""  # not "could not broadcast input"
    return f"{_RAISED} {type(err).__name__}" + (f" ({message})" if message else "") + f"{where}.{hint}{extra}"


def _copy(x: object) -> object:
    """A copy of an array, or of a dict of them (a model's parameters); anything else as it is."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return x


def _changed(name: str, before: object, after: object) -> str | None:
    """The name of the first input the student's call changed in place ("params['l0.b_1']"), or None."""
    if isinstance(before, np.ndarray):
        same = (isinstance(after, np.ndarray) and before.shape == after.shape
                and np.array_equal(np.asarray(before), np.asarray(after), equal_nan=True))
        return None if same else name
    if isinstance(before, dict):
        if not isinstance(after, dict) or set(after) != set(before):
            return name
        return next((found for k, v in before.items() if (found := _changed(f"{name}[{k!r}]", v, after[k]))), None)
    return None


def call_student(fn: object, args: tuple, may_overwrite: bool = False, broadcast: str = ""
                 ) -> tuple[object, str | None]:
    """``fn(*args)`` on copies of the array arguments; (result, None), or (None, the sentence for what went wrong).

    Float warnings are recorded and dropped (a raw warning would print a machine path); an exception is reported
    with its type, message and the student's line (``broadcast`` follows an error of shapes that cannot be
    broadcast); an argument changed in place (an array, or an array in a dict) is named (unless may_overwrite).
    """
    if fn is None or fn is Ellipsis:
        return None, NOT_ANSWERED
    if not callable(fn):
        return None, (f"expected a function to call, got {type(fn).__name__}: pass your function itself (its name, "
                      "without parentheses).")
    given = tuple(_copy(a) for a in args)
    try:
        with warnings.catch_warnings(record=True), np.errstate(all="ignore"):
            warnings.simplefilter("always")
            result = fn(*given)
    except Exception as err:  # the student's code may raise anything: report it, never crash
        return None, raised_sentence(err, broadcast)
    names = list(inspect.signature(fn).parameters) if _has_signature(fn) else []
    for i, (before, after) in enumerate(zip(args, given, strict=True)):
        which = names[i] if i < len(names) else f"argument {i + 1}"
        where = None if may_overwrite else _changed(which, before, after)  # may_overwrite: e.g. in-place softmax
        if where:
            return None, (f"your function changed its input {where} in place (e.g. `{where} -= ...` or "
                          f"`{where}[...] = ...`): compute a new array instead, the caller still needs {which}.")
    if result is None:
        return None, RETURNS_NONE
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


def _parts(result: object, spec: Spec, want: list[np.ndarray], tol: tuple[float, float]
           ) -> tuple[list[np.ndarray] | None, str | None]:
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
            numbers = _as_floats(result)
            right = numbers is not None and numbers.shape == want[0].shape and _allclose(numbers, want[0], *tol)
            return None, (f"your function returned a Python {type(result).__name__}"
                          + (", with the right numbers" if right else "")
                          + "; return a NumPy array (np.array(...), or build it with NumPy operations).")
        items = [result]
    arrays = []
    for label, item in zip(spec.outputs or ("your output",), items, strict=True):
        arr = _as_floats(item)
        if arr is None:
            return None, f"{label} should be an array of real numbers, got {type(item).__name__}."
        arrays.append(arr)
    return arrays, None


def reference_outputs(spec: Spec, args: tuple) -> tuple[list[np.ndarray], tuple[float, float]]:
    """The right output as float64 arrays, and the tolerance (rtol, atol) to compare with: the spec's, or coarser
    where the reference computes in a type with fewer digits (float16: rtol 2 eps = 0.002), or, for a dtype in
    ``spec.tolerance``, that tolerance times max(1, the largest |value|) as atol."""
    with np.errstate(all="ignore"):
        want = spec.reference(*(_copy(a) for a in args))
    parts = [np.asarray(w) for w in (want if spec.outputs else (want,))]
    rtol, atol = spec.rtol, spec.atol
    for w in parts:
        if w.dtype in spec.tolerance:
            finite = np.abs(w[np.isfinite(w)])
            atol = max(atol, spec.tolerance[w.dtype] * max(1.0, float(finite.max()) if finite.size else 1.0))
        elif np.issubdtype(w.dtype, np.floating):
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
            if made is None:  # this mistake does not apply to this input
                continue
            predicted = [np.asarray(m, dtype=np.float64) for m in (made if spec.outputs else (made,))]
        except Exception:  # a mistake that cannot even run on this input (e.g. shapes only a square case allows)
            continue
        if len(predicted) == len(got) and _close(got, predicted, tol):
            return sentence
    return None


def _not_integers(result: object, spec: Spec) -> str | None:
    """For a Spec of integer outputs (``integers``): the sentence for a part that is not of an integer dtype."""
    if not spec.integers:
        return None
    for item in (result if spec.outputs else (result,)):
        dtype = np.asarray(item).dtype
        if dtype.kind not in "iu":
            return f"your function returned {dtype} numbers; {spec.integers}"
    return None


def _first(test: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(test)[0])


def explain(fn: object, spec: Spec, args: tuple) -> Outcome:
    """Run the student's function on one input and say what is wrong (None when right). Never raises."""
    given, after = spec.watch(args) if spec.watch is not None else (args, None)
    result, problem = call_student(fn, given, spec.may_overwrite, spec.broadcast)
    if problem is not None:
        return Outcome(None, problem)
    want, tol = reference_outputs(spec, args)
    got, problem = _parts(result, spec, want, tol)
    if problem is not None:
        return Outcome(None, problem)
    value = tuple(got) if spec.outputs else got[0]
    for g, w, label in zip(got, want, spec.outputs or ("your output",), strict=True):
        if g.shape != w.shape:
            # a mistake of another shape (e.g. the weights, not the output)
            named = _named_mistake(spec, args, got, tol)
            if named is not None:
                return Outcome(value if g.size else None, named)
            flip = " (the transpose of the right shape: which axis holds the tokens?)" if g.shape == w.shape[::-1] \
                else ""
            said = "your function returned shape" if label == "your output" else f"{label} has shape"
            return Outcome(value if g.size else None, f"{said} {g.shape}, expected {w.shape}{flip}.")
    problem = _not_integers(result, spec)
    if problem is not None:
        return Outcome(value, problem)
    if _close(got, want, tol):
        return Outcome(value, after() if after is not None else None)
    named = _named_mistake(spec, args, got, tol)
    if named is not None:
        return Outcome(value, named)
    for g, w, label in zip(got, want, spec.outputs or ("your output",), strict=True):
        if not _allclose(g, w, *tol):
            why = next((f"{sentence} " for sentence, holds in spec.symptoms.items() if _holds(holds, g)), "")
            if not why and (np.isnan(g) & ~np.isnan(w)).any():
                why = (f"{label} holds NaN (not a number), first at index {_first(np.isnan(g) & ~np.isnan(w))}, where "
                       "the right answer has none: 0/0, inf − inf (an exp that overflowed), or the square root of a "
                       "negative number; find the first step that gives one. ")
            elif not why and (np.isinf(g) & ~np.isinf(w)).any():
                why = (f"{label} holds inf, first at index {_first(np.isinf(g) & ~np.isinf(w))}, where the right "
                       "answer has none: a division by 0 or an overflow. ")
            name = "" if label == "your output" or why.startswith(label) else f"{label}: "
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
    still runs on a square input). None on the first input is "Not answered yet" (with the hint); None on a later
    one, a `return` missing on some path.
    """
    if fn is None or fn is Ellipsis:
        return verdict(False, spec.name, f"{NOT_ANSWERED}. {spec.hint}".strip())
    first: tuple[Case, Outcome] | None = None
    for i, case in enumerate(spec.cases):
        outcome = explain(fn, spec, case.args)
        if outcome.problem is None:
            continue
        if outcome.problem.startswith(NOT_ANSWERED):
            if i == 0:
                return verdict(False, spec.name, f"{outcome.problem} {spec.hint}".strip())
            outcome = Outcome(None, "your function returned None on this input: is a `return` missing on some path?")
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
