"""Tests of the exercise checks: helpers.checks (check_array, Verdict) and helpers.checks.nb01 ... nb04.

Table-driven. Every row calls one check with one answer and states what the check must say:
truthy and "✅" for the right answer, falsy and "❌" with the SPECIFIC explanation of the slip for
each typical mistake the check claims to diagnose. Right answers are computed here with
``helpers.attention`` (never typed-in numbers); the slips are computed the way a student would
make them (plain NumPy), not with the check's own internals. Numbers are compared by the checks
themselves (``np.allclose``, rtol 1e-6, atol 1e-8 unless a check says otherwise).

A phrase asserted for a mistake must not occur in the same check's "Not answered yet" output
(which carries the hint), so a phrase cannot pass because the hint happens to contain it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest

from helpers.attention import (
    attention_steps,
    merge_heads,
    multi_head_attention,
    project_qkv,
    scaled_dot_product_attention,
    self_attention,
    softmax,
    split_heads,
    xavier_normal,
)
from helpers.checks import NOT_ANSWERED, Verdict, check_array, nb01, nb02, nb03, nb04
from helpers.examples import T000_F1_X, T001_SCORES_QUERY1

# ------------------------------------------------------------------------------------------ the table


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    answer: object
    args: tuple
    marks: str  # the ✅/❌ verdict lines the check must print, in order
    phrases: tuple[str, ...]  # each must occur in the printed output


def right(id: str, check: Callable[..., object], answer: object, *args: object, marks: str = "✅") -> Case:
    return Case(id, check, answer, args, marks, ("correct",))


def wrong(
    id: str, check: Callable[..., object], answer: object, *phrases: str, args: tuple = (), marks: str = "❌"
) -> Case:
    return Case(id, check, answer, args, marks, phrases)


def run(case: Case, capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    capsys.readouterr()  # drop anything printed before
    verdict = case.check(case.answer, *case.args)
    return verdict, capsys.readouterr().out


def marks_of(out: str) -> str:
    return "".join(line[0] for line in out.splitlines() if line[:1] in ("✅", "❌"))


def sm_by_hand(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """A student's stable softmax (used only to build wrong answers and test functions)."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def quiet(func: Callable[[], np.ndarray]) -> np.ndarray:
    with np.errstate(all="ignore"):
        return func()


# ------------------------------------------------------------------------------ check_array itself

_S = attention_steps(nb01.EXERCISE_X, nb01.EXERCISE_X, nb01.EXERCISE_X)["scaled"]  # (3, 3)
_A = scaled_dot_product_attention(_S, _S[::-1], _S)[1]  # (3, 3) weights, not symmetric
_A_MISTAKE = softmax(_S, axis=0)  # (3, 3)
_A_RECT = self_attention(np.asarray(nb01.EXERCISE_X, dtype=float))[0]  # (3, 4)


def _ca(answer: object) -> object:
    return check_array(
        answer, _A, name="w", hint="Hint: rows.", mistakes={"the axis-0 softmax slip.": _A_MISTAKE}
    )


def _ca_exp(answer: object) -> object:
    return check_array(answer, _A, name="w", hint="Hint: rows.", exp=True)  # an exercise that computes an exp


def _ca_rect(answer: object) -> object:
    return check_array(answer, _A_RECT, name="out", hint="Hint: rows.")


CHECK_ARRAY = [
    right("check_array/right", _ca, _A.copy()),
    right("check_array/right-as-list", _ca, _A.tolist()),
    right("check_array/right-within-rtol", _ca, _A * (1 + 1e-9)),
    wrong("check_array/listed-mistake", _ca, _A_MISTAKE, "the axis-0 softmax slip."),
    wrong("check_array/transpose-square", _ca, _A.T, "transpose of the answer", "rows are queries"),
    wrong(
        "check_array/transposed-shape", _ca_rect, _A_RECT.T, "(4, 3)", "(3, 4)", "transpose of the right one"
    ),
    wrong("check_array/other-shape", _ca, _A[:2], "(2, 3)", "(3, 3)"),
    # the overflow hint only where the exercise computes an exp (exp=True); elsewhere the honest causes
    wrong("check_array/nan-exp", _ca_exp, np.where(np.eye(3) > 0, np.nan, _A), "contains NaN", "did exp overflow",
          "row maximum"),
    wrong("check_array/nan-no-exp", _ca, np.where(np.eye(3) > 0, np.nan, _A), "contains NaN (not a number)",
          "0/0, inf − inf"),
    wrong(
        "check_array/numbers-differ",
        _ca,
        _A + 0.25 * (np.arange(9).reshape(3, 3) == 7),
        "largest difference",
        "(2, 1)",
    ),
]

# ------------------------------------------------------------------------------------------ nb01

X1 = np.asarray(nb01.EXERCISE_X, dtype=float)  # (T=3, d=4)
D1 = X1.shape[1]
_STEPS1 = attention_steps(X1, X1, X1)
S1 = _STEPS1["scaled"]  # (3, 3) X Xᵀ/√d
OUT1, W1 = self_attention(X1)  # (3, 4), (3, 3)
RAW1 = X1 @ X1.T  # (3, 3) the slip: not scaled

X0 = np.asarray(T000_F1_X, dtype=float)  # (T=5, d=3), scores in the millions
S0 = attention_steps(X0, X0, X0)["scaled"]  # (5, 5)
W0 = self_attention(X0)[1]  # (5, 5)
S0_ROWMAX = S0 - S0.max(axis=-1, keepdims=True)  # (5, 5)
W0_MOST = np.argmax(W0, axis=-1)  # (5,) for the X argument of check_most_attended


def _no_exp(s: np.ndarray) -> np.ndarray:
    return s / s.sum(axis=-1, keepdims=True)


NB01 = [
    right("scores/right", nb01.check_scores, S1),
    right("scores/right-other-X", nb01.check_scores, S0, X0),
    wrong("scores/unscaled", nb01.check_scores, RAW1, "unscaled scores", "divide by √d = √4"),
    wrong("scores/divided-by-d", nb01.check_scores, RAW1 / D1, "divide by its square root"),
    wrong("scores/divided-by-sqrt-T", nb01.check_scores, RAW1 / math.sqrt(3), "√T = √3", "X.shape[1] = 4"),
    wrong("scores/XtX", nb01.check_scores, X1.T @ X1 / 2, "Xᵀ X (4×4)", "features with features"),
    wrong("scores/shape-of-X", nb01.check_scores, X1 / 2, "(3, 4): that is the shape of X"),
    right("weights/right", nb01.check_weights, W1),
    wrong("weights/axis-0", nb01.check_weights, sm_by_hand(S1, axis=0), "each COLUMN", "axis 0"),
    wrong("weights/transposed", nb01.check_weights, W1.T, "each COLUMN", "transposed"),
    wrong("weights/unscaled", nb01.check_weights, sm_by_hand(RAW1), "softmax of the unscaled scores"),
    wrong(
        "weights/divided-by-d",
        nb01.check_weights,
        sm_by_hand(RAW1 / D1),
        "divided by d = 4; divide by √d = 2",
    ),
    wrong(
        "weights/whole-matrix",
        nb01.check_weights,
        sm_by_hand(S1.reshape(-1)).reshape(3, 3),
        "all entries of your array together sum to 1",
    ),
    wrong("weights/no-softmax", nb01.check_weights, S1, "the scores themselves: apply the softmax"),
    wrong("weights/no-exp", nb01.check_weights, _no_exp(S1), "without exponentiating"),
    wrong("weights/softmax-of-X", nb01.check_weights, sm_by_hand(X1 / 2), "(3, 4)", "not over X itself"),
    wrong(
        "weights/XtX",
        nb01.check_weights,
        sm_by_hand(X1.T @ X1 / 2),
        "(4, 4)",
        "Xᵀ X, which compares features",
    ),
    right("output/right", nb01.check_output, OUT1),
    wrong("output/axis-0-weights", nb01.check_output, sm_by_hand(S1, axis=0) @ X1, "ran over axis 0"),
    wrong("output/weights.T", nb01.check_output, W1.T @ X1, "ran over axis 0", "weights.T"),
    wrong("output/unscaled", nb01.check_output, sm_by_hand(RAW1) @ X1, "come from the unscaled scores"),
    wrong("output/divided-by-d", nb01.check_output, sm_by_hand(RAW1 / D1) @ X1, "divided by d = 4"),
    wrong("output/scores@X", nb01.check_output, S1 @ X1, "apply the softmax first"),
    wrong("output/X", nb01.check_output, X1.copy(), "this is X unchanged"),
    wrong("output/softmax-of-X", nb01.check_output, sm_by_hand(X1 / 2), "softmax of X itself"),
    wrong("output/weights-only", nb01.check_output, W1, "(3, 3)", "shape of the weights"),
    wrong("output/weights@XXt", nb01.check_output, W1 @ RAW1, "(3, 3)", "multiply by X itself"),
    wrong("output/transposed", nb01.check_output, OUT1.T, "(4, 3)", "transpose of the output"),
    right("text000/right", nb01.check_text000_weights, W0),
    wrong(
        "text000/no-max-subtraction",
        nb01.check_text000_weights,
        quiet(lambda: np.exp(S0) / np.exp(S0).sum(axis=-1, keepdims=True)),
        "contains NaN",
        "did exp overflow",
    ),
    wrong(
        "text000/whole-matrix-max",
        nb01.check_text000_weights,
        quiet(lambda: np.exp(S0 - S0.max()) / np.exp(S0 - S0.max()).sum(axis=-1, keepdims=True)),
        "max of the WHOLE matrix",
        "0/0 = nan",
    ),
    wrong("text000/axis-0", nb01.check_text000_weights, sm_by_hand(S0, axis=0), "each COLUMN"),
    wrong(
        "text000/whole-matrix-softmax",
        nb01.check_text000_weights,
        quiet(lambda: sm_by_hand(S0.reshape(-1)).reshape(5, 5)),
        "normalised over the whole matrix",
    ),
    wrong("text000/no-exp", nb01.check_text000_weights, _no_exp(S0_ROWMAX), "without exponentiating"),
    wrong("text000/shape-of-X", nb01.check_text000_weights, X0, "(5, 3): that is the shape of X"),
    right("most/right", nb01.check_most_attended, np.argmax(W1, axis=-1)),
    right("most/right-as-list", nb01.check_most_attended, np.argmax(W1, axis=-1).tolist()),
    wrong("most/itself", nb01.check_most_attended, np.arange(3), "attends most to itself"),
    wrong("most/axis-0-default-X", nb01.check_most_attended, np.argmax(W1, axis=0), "down the columns"),
    wrong("most/counted-from-1", nb01.check_most_attended, np.argmax(W1, axis=-1) + 1, "one too large"),
    wrong(
        "most/axis-0",
        nb01.check_most_attended,
        np.argmax(W0, axis=0),
        "down each column (axis 0)",
        args=(X0,),
    ),
    wrong(
        "most/itself-other-X", nb01.check_most_attended, np.arange(5), "attends most to itself", args=(X0,)
    ),
    wrong("most/counted-from-1-other-X", nb01.check_most_attended, W0_MOST + 1, "one too large", args=(X0,)),
    # Build: the student's own attend(X), written as a student would (its own table: tests/test_build_nb01.py)
    right("attend/by-hand", nb01.check_attend, lambda X: sm_by_hand(X @ X.T / np.sqrt(X.shape[1])) @ X),
    wrong("attend/not-scaled", nb01.check_attend, lambda X: sm_by_hand(X @ X.T) @ X, "not scaled"),
    wrong("attend/axis-0", nb01.check_attend, lambda X: sm_by_hand(X @ X.T / np.sqrt(X.shape[1]), axis=0) @ X,
          "the softmax ran over axis 0"),
]

# ------------------------------------------------------------------------------------------ nb02

EX_X, EX_WQ, EX_WK, EX_WV = nb02.EX_X, nb02.EX_WQ, nb02.EX_WK, nb02.EX_WV
Q2, K2, V2 = project_qkv(EX_X, EX_WQ, EX_WK, EX_WV)  # (4, 4) each
_STEPS2 = attention_steps(Q2, K2, V2)
S2, W2, OUT2 = _STEPS2["scaled"], _STEPS2["weights"], _STEPS2["output"]  # (4, 4), (4, 4), (4, 4)
DK = Q2.shape[-1]  # 4


def qkv(answers: object) -> object:
    """check_qkv takes three answers; None means all three unanswered."""
    return nb02.check_qkv(*(answers if isinstance(answers, tuple) else (answers,) * 3))


def _query2(weights: np.ndarray, values: np.ndarray = V2) -> np.ndarray:
    return (weights @ values)[1]  # (4,) query 2 is row index 1


NB02 = [
    right("qkv/right", qkv, (Q2, K2, V2), marks="✅✅✅"),
    wrong("qkv/K-given-as-Q", qkv, (K2, K2, V2), "this is K (X W_k): Q uses W_q", marks="❌✅✅"),
    wrong(
        "qkv/W-times-X", qkv, (Q2, EX_WK @ EX_X, V2), "W_k X: multiply the other way round", marks="✅❌✅"
    ),
    wrong("qkv/W-transposed", qkv, (Q2, K2, EX_X @ EX_WV.T), "X W_vᵀ: use W_v as it is", marks="✅✅❌"),
    wrong("qkv/X-itself", qkv, (EX_X, K2, V2), "this is X itself: Q is X projected", marks="❌✅✅"),
    wrong("qkv/shape", qkv, (Q2[:, :2], K2, V2), "(4, 2)", "(4, 4)", marks="❌✅✅"),
    right("scaled/right", nb02.check_scaled_scores, S2),
    wrong("scaled/unscaled", nb02.check_scaled_scores, Q2 @ K2.T, "unscaled scores Q Kᵀ"),
    wrong("scaled/divided-by-d_k", nb02.check_scaled_scores, Q2 @ K2.T / DK, "divide by its square root"),
    wrong("scaled/times-sqrt", nb02.check_scaled_scores, Q2 @ K2.T * 2, "you multiplied by √d_k"),
    wrong("scaled/K-not-transposed", nb02.check_scaled_scores, Q2 @ K2 / 2, "without transposing"),
    wrong("scaled/QtK", nb02.check_scaled_scores, Q2.T @ K2 / 2, "Qᵀ K"),
    wrong("scaled/KQt", nb02.check_scaled_scores, K2 @ Q2.T / 2, "this is K Qᵀ"),
    wrong("scaled/transposed", nb02.check_scaled_scores, S2.T, "this is K Qᵀ"),
    wrong("scaled/formula-1", nb02.check_scaled_scores, EX_X @ EX_X.T / 2, "formula 1"),
    wrong(
        "scaled/row-max-subtracted",
        nb02.check_scaled_scores,
        S2 - S2.max(axis=-1, keepdims=True),
        "subtracted each row's maximum",
    ),
    right("weights/right", nb02.check_weights, W2),
    wrong("weights/axis-0", nb02.check_weights, sm_by_hand(S2, axis=0), "over the queries (axis 0)"),
    wrong("weights/unscaled", nb02.check_weights, sm_by_hand(Q2 @ K2.T), "come from unscaled scores"),
    wrong(
        "weights/divided-by-d_k",
        nb02.check_weights,
        sm_by_hand(Q2 @ K2.T / DK),
        "divided the scores by d_k = 4",
    ),
    wrong("weights/K-not-transposed", nb02.check_weights, sm_by_hand(Q2 @ K2 / 2), "K not transposed"),
    wrong(
        "weights/whole-matrix",
        nb02.check_weights,
        sm_by_hand(S2.reshape(-1)).reshape(4, 4),
        "one softmax over all 16 entries",
    ),
    wrong("weights/no-softmax", nb02.check_weights, S2, "the scaled scores themselves"),
    wrong("weights/rounded-1", nb02.check_weights, np.round(W2, 1), "rounded to 1 decimal (text 001"),
    wrong("weights/rounded-2", nb02.check_weights, np.round(W2, 2), "rounded to 2 decimals (text 001"),
    right("query2/right", nb02.check_output_query2, OUT2[1]),
    wrong("query2/whole-output", nb02.check_output_query2, OUT2, "whole output (all 4 queries)"),
    wrong("query2/X-not-V", nb02.check_output_query2, W2[1] @ EX_X, "weighted X instead of V"),
    wrong(
        "query2/axis-0",
        nb02.check_output_query2,
        _query2(sm_by_hand(S2, axis=0)),
        "over the queries (axis 0)",
    ),
    wrong(
        "query2/unscaled",
        nb02.check_output_query2,
        _query2(sm_by_hand(Q2 @ K2.T)),
        "came from unscaled scores",
    ),
    wrong(
        "query2/divided-by-d_k",
        nb02.check_output_query2,
        _query2(sm_by_hand(Q2 @ K2.T / DK)),
        "divided by d_k",
    ),
    wrong(
        "query2/K-not-transposed", nb02.check_output_query2, _query2(sm_by_hand(Q2 @ K2 / 2)), "Q @ K (K not"
    ),
    wrong("query2/row-0", nb02.check_output_query2, OUT2[0], "query 1's output (row index 0)"),
    wrong("query2/row-2", nb02.check_output_query2, OUT2[2], "third query's output"),
    wrong("query2/weights-column", nb02.check_output_query2, W2[:, 1] @ V2, "column 1 of the weights"),
    wrong("query2/weights-only", nb02.check_output_query2, W2[1], "query 2's weights, not its output"),
    wrong("query2/own-value", nb02.check_output_query2, V2[1], "token 2's own value"),
    wrong("query2/plain-average", nb02.check_output_query2, V2.mean(axis=0), "plain average of the values"),
    wrong(
        "query2/rounded-weights",
        nb02.check_output_query2,
        _query2(np.round(W2, 1)),
        "weights were rounded to 1 decimal before multiplying",
    ),
    # Build: the student's own self_attention (its own table: tests/test_build_nb02.py)
    right("self-attention/by-hand", nb02.check_self_attention,
          lambda X, Wq, Wk, Wv: sm_by_hand((X @ Wq) @ (X @ Wk).T / np.sqrt(Wk.shape[1])) @ (X @ Wv)),
    wrong("self-attention/not-scaled", nb02.check_self_attention,
          lambda X, Wq, Wk, Wv: sm_by_hand((X @ Wq) @ (X @ Wk).T) @ (X @ Wv), "not scaled"),
]

# ------------------------------------------------------------------------------------------ nb03


def largest_safe_x(dtype: type) -> np.floating:
    """The largest x of ``dtype`` with finite exp(x), found by stepping with np.nextafter."""
    t = np.dtype(dtype).type
    x = t(np.log(np.finfo(dtype).max))
    with np.errstate(over="ignore"):
        while not np.isfinite(np.exp(x)):
            x = np.nextafter(x, t(-np.inf))
        while np.isfinite(np.exp(np.nextafter(x, t(np.inf)))):
            x = np.nextafter(x, t(np.inf))
    return x


def smallest_nonzero_x(dtype: type) -> np.floating:
    """The smallest x of ``dtype`` with exp(x) > 0, found by stepping with np.nextafter.

    exp(x) rounds to 0 below half the smallest subnormal, so the search starts at log(that).
    """
    t = np.dtype(dtype).type
    x = t(np.log(np.float64(np.finfo(dtype).smallest_subnormal)) - np.log(2.0))
    with np.errstate(under="ignore"):
        while np.exp(x) == 0:
            x = np.nextafter(x, t(np.inf))
        while np.exp(np.nextafter(x, t(-np.inf))) > 0:
            x = np.nextafter(x, t(-np.inf))
    return x


TOP32 = largest_safe_x(np.float32)
ROW = nb03.LSE_ROW  # (3,) [500, 1000, 1000]
_I = int(np.argmax(ROW))
LSE = float(ROW[_I] - np.log(softmax(ROW)[_I]))  # log Σ exp(x_j) = x_i - log softmax(x)_i


def my_softmax(x: np.ndarray) -> np.ndarray:
    return softmax(x, axis=-1)


def no_keepdims_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=-1))  # the broadcast error of a forgotten keepdims (or a wrong result)
    return e / np.sum(e, axis=-1)


def _min_shift(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.min(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def naive_when_large(x: np.ndarray) -> np.ndarray:
    """Right on small scores, the naive softmax (nan) once the scores are large."""
    return sm_by_hand(x) if np.max(x) < 100 else np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)


def exp_when_large(x: np.ndarray) -> np.ndarray:
    """Right on small scores, plain exp (inf) once the scores are large."""
    return sm_by_hand(x) if np.max(x) < 100 else np.exp(x)


NB03 = [
    right("softmax/helpers.softmax", nb03.check_stable_softmax, my_softmax),
    right("softmax/by-hand", nb03.check_stable_softmax, sm_by_hand),
    wrong(
        "softmax/naive",
        nb03.check_stable_softmax,
        lambda x: np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True),
        "naive softmax",
        "overflows to inf",
    ),
    wrong(
        "softmax/subtract-min",
        nb03.check_stable_softmax,
        _min_shift,
        "subtracted the minimum, not the maximum",
    ),
    wrong(
        "softmax/global-max",
        nb03.check_stable_softmax,
        lambda x: np.exp(x - np.max(x)) / np.sum(np.exp(x - np.max(x)), axis=-1, keepdims=True),
        "one global maximum",
    ),
    wrong("softmax/axis-0", nb03.check_stable_softmax, lambda x: sm_by_hand(x, axis=0), "axis 0 normalises"),
    wrong(
        "softmax/axis-1", nb03.check_stable_softmax, lambda x: sm_by_hand(x, axis=1), "axis=1 is not the last"
    ),
    wrong(
        "softmax/no-division",
        nb03.check_stable_softmax,
        lambda x: np.exp(x - np.max(x, axis=-1, keepdims=True)),
        "rows do not sum to 1",
    ),
    wrong(
        "softmax/divide-by-total",
        nb03.check_stable_softmax,
        lambda x: (
            np.exp(x - np.max(x, axis=-1, keepdims=True))
            / np.sum(np.exp(x - np.max(x, axis=-1, keepdims=True)))
        ),
        "sum of the whole array",
    ),
    wrong(
        "softmax/no-keepdims",
        nb03.check_stable_softmax,
        no_keepdims_softmax,
        "raised ValueError",
        "so the shapes line up",
    ),
    wrong("softmax/shape", nb03.check_stable_softmax, lambda x: np.sum(x, axis=-1), "(3, 3)", "(3,)"),
    wrong("softmax/identity", nb03.check_stable_softmax, lambda x: x, "numbers differ from softmax"),
    wrong("softmax/nan-later", nb03.check_stable_softmax, naive_when_large, "contains nan", "large positive"),
    wrong("softmax/inf-later", nb03.check_stable_softmax, exp_when_large, "contains inf", "large positive"),
    wrong("softmax/not-a-function", nb03.check_stable_softmax, np.ones((3, 3)), "pass your function itself"),
    right("safe-x/right", nb03.check_largest_safe_x, TOP32),
    right("safe-x/right-as-float", nb03.check_largest_safe_x, float(TOP32)),
    right("safe-x/right-float16", nb03.check_largest_safe_x, largest_safe_x(np.float16), np.float16),
    right("safe-x/right-float64", nb03.check_largest_safe_x, largest_safe_x(np.float64), np.float64),
    wrong(
        "safe-x/one-step-too-far",
        nb03.check_largest_safe_x,
        np.nextafter(TOP32, np.float32(np.inf)),
        "almost",
        "Step down",
    ),
    wrong(
        "safe-x/log-in-float64",
        nb03.check_largest_safe_x,
        float(np.log(np.float64(np.finfo(np.float32).max))),  # 88.72283905..., rounds up in float32
        "almost: as a float32 your",
    ),
    wrong(
        "safe-x/one-step-short",
        nb03.check_largest_safe_x,
        np.nextafter(TOP32, np.float32(-np.inf)),
        "safe but not the largest",
        "Step up",
    ),
    wrong(
        "safe-x/finfo-max",
        nb03.check_largest_safe_x,
        float(np.finfo(np.float32).max),
        "the largest float itself",
    ),
    wrong(
        "safe-x/finfo-max-float64",
        nb03.check_largest_safe_x,
        float(np.finfo(np.float64).max),
        "the largest float itself",
        args=(np.float64,),
    ),
    wrong(
        "safe-x/log10", nb03.check_largest_safe_x, float(np.log10(np.finfo(np.float32).max)), "base-10 log"
    ),
    wrong(
        "safe-x/subnormal",
        nb03.check_largest_safe_x,
        float(np.log(np.finfo(np.float32).tiny)),
        "becomes subnormal",
    ),
    wrong(
        "safe-x/underflow-stepped",
        nb03.check_largest_safe_x,
        float(smallest_nonzero_x(np.float32)),
        "underflows to 0",
    ),
    wrong(
        "safe-x/underflow-log-subnormal",
        nb03.check_largest_safe_x,
        float(np.log(np.float64(np.finfo(np.float32).smallest_subnormal))),  # -103.28
        "underflows to 0",
    ),
    wrong(
        "safe-x/float64-limit",
        nb03.check_largest_safe_x,
        float(largest_safe_x(np.float64)),
        "limit for float64",
    ),
    wrong(
        "safe-x/float16-limit",
        nb03.check_largest_safe_x,
        float(largest_safe_x(np.float16)),
        "limit for float16",
    ),
    wrong("safe-x/inf", nb03.check_largest_safe_x, math.inf, "you have inf", "finite x"),
    wrong("safe-x/nan", nb03.check_largest_safe_x, math.nan, "you have nan"),
    wrong("safe-x/not-one-number", nb03.check_largest_safe_x, [1.0, 2.0], "expected one number, got list"),
    wrong("safe-x/far-off", nb03.check_largest_safe_x, 50.0, "you have 50", "near 88.7"),
    right("lse/right", nb03.check_logsumexp, LSE),
    wrong(
        "lse/naive",
        nb03.check_logsumexp,
        quiet(lambda: np.log(np.sum(np.exp(ROW)))),
        "exp(1000) overflows to inf",
    ),
    wrong("lse/max-only", nb03.check_logsumexp, np.max(ROW), "only max(row)"),
    wrong(
        "lse/max-forgotten",
        nb03.check_logsumexp,
        np.log(np.sum(np.exp(ROW - ROW.max()))),
        "add max(row) back",
    ),
    wrong(
        "lse/unscaled-row",
        nb03.check_logsumexp,
        float(np.max(T001_SCORES_QUERY1) - np.log(softmax(T001_SCORES_QUERY1.astype(float)).max())),
        "before the factor 250",
    ),
]


# ------------------------------------------------------------------------------------------ nb04

QS = 10 * np.arange(4)[:, None] + np.arange(6)  # (T=4, d_model=6) entries name row and column
HS = 3  # heads, d_head = 2
Q44 = 10 * np.arange(4)[:, None] + np.arange(8)  # (T=4, d_model=8) with h = T = 4
_H = np.indices((2, 3, 2))  # (3, h=2, T=3, d_head=2)
HEADS = 100 * _H[0] + 10 * _H[1] + _H[2]  # (h=2, T=3, d_head=2) entry = head, token, column as digits
_RNG = np.random.default_rng(4)
XM = _RNG.normal(size=(4, 6))  # (T=4, d_in=6)
WQ, WK, WV = (xavier_normal(6, 8, _RNG) for _ in range(3))  # (6, 8) each: h=4, d_head=2
SCORES_H = split_heads(XM @ WQ, 4) @ np.swapaxes(split_heads(XM @ WK, 4), -1, -2)  # (4, 4, 4) unscaled
HO = np.random.default_rng(5).normal(size=(2, 3, 2))  # (h=2, T=3, d_v=2)
WO = xavier_normal(4, 3, np.random.default_rng(6))  # (h·d_v=4, d_out=3)
# (h·d_v=4, d_out=4): d_out = h·d_v, so the no-W_o slip has the right shape
WO_SQ = xavier_normal(4, 4, np.random.default_rng(7))


def _blocks(heads: np.ndarray, W_o: np.ndarray) -> list[np.ndarray]:
    d_v = heads.shape[-1]
    return [heads[i] @ W_o[i * d_v : (i + 1) * d_v] for i in range(heads.shape[0])]  # each (T, d_out)


NB04 = [
    right("split/right", nb04.check_split_heads, split_heads(QS, HS), QS, HS),
    wrong(
        "split/reshape-straight",
        nb04.check_split_heads,
        QS.reshape(3, 4, 2),
        "reshaping straight",
        args=(QS, HS),
    ),
    wrong(
        "split/no-transpose",
        nb04.check_split_heads,
        QS.reshape(4, 3, 2),
        "transpose is missing",
        args=(QS, HS),
    ),
    wrong(
        "split/no-transpose-T-equals-h",
        nb04.check_split_heads,
        Q44.reshape(4, 4, 2),
        "pieces of token i",
        args=(Q44, 4),
    ),
    wrong(
        "split/strided-columns",
        nb04.check_split_heads,
        np.stack([QS[:, i::HS] for i in range(HS)]),
        "every h-th column",
        args=(QS, HS),
    ),
    wrong(
        "split/last-two-swapped",
        nb04.check_split_heads,
        np.swapaxes(split_heads(QS, HS), -1, -2),
        "last two axes are swapped",
        args=(QS, HS),
    ),
    right("merge/right", nb04.check_merge_heads, merge_heads(HEADS), HEADS),
    wrong(
        "merge/no-transpose",
        nb04.check_merge_heads,
        HEADS.reshape(3, 4),
        "without the transpose",
        args=(HEADS,),
    ),
    wrong(
        "merge/interleaved",
        nb04.check_merge_heads,
        np.stack(list(HEADS), axis=-1).reshape(3, 4),  # (T, d_head, h) -> (T, h·d_head)
        "columns are interleaved",
        args=(HEADS,),
    ),
    wrong(
        "merge/stacked",
        nb04.check_merge_heads,
        np.vstack(list(HEADS)),
        "stacked below each other",
        args=(HEADS,),
    ),
    wrong("merge/summed", nb04.check_merge_heads, HEADS.sum(axis=0), "the heads were added", args=(HEADS,)),
    right(
        "head-weights/right",
        nb04.check_head_weights,
        multi_head_attention(XM, WQ, WK, WV, 4)[1],
        XM,
        WQ,
        WK,
        4,
    ),
    wrong(
        "head-weights/sqrt-d_model",
        nb04.check_head_weights,
        sm_by_hand(SCORES_H / np.sqrt(8)),
        "1/√d_model = 1/√8",
        "√d_head = √2",
        args=(XM, WQ, WK, 4),
    ),
    wrong(
        "head-weights/unscaled",
        nb04.check_head_weights,
        sm_by_hand(SCORES_H),
        "not scaled",
        args=(XM, WQ, WK, 4),
    ),
    wrong(
        "head-weights/axis-2",
        nb04.check_head_weights,
        sm_by_hand(SCORES_H / np.sqrt(2), axis=-2),
        "over the queries (axis -2)",
        args=(XM, WQ, WK, 4),
    ),
    right("projection/right", nb04.check_output_projection, merge_heads(HO) @ WO, HO, WO),
    right("projection/right-sum-of-blocks", nb04.check_output_projection, sum(_blocks(HO, WO)), HO, WO),
    wrong(
        "projection/mean",
        nb04.check_output_projection,
        sum(_blocks(HO, WO)) / 2,
        "mean over the heads",
        args=(HO, WO),
    ),
    wrong(
        "projection/head-0-only",
        nb04.check_output_projection,
        _blocks(HO, WO)[0],
        "only the first head",
        args=(HO, WO),
    ),
    wrong(
        "projection/interleaved-rows",
        nb04.check_output_projection,
        HO[0] @ WO[0::2] + HO[1] @ WO[1::2],
        "rows i, i + 2",
        args=(HO, WO),
    ),
    wrong("projection/no-W_o", nb04.check_output_projection, merge_heads(HO), "without W_o", args=(HO, WO)),
    wrong(
        "projection/no-W_o-same-shape",
        nb04.check_output_projection,
        merge_heads(HO),
        "without W_o",
        args=(HO, WO_SQ),
    ),
    # Build: the student's own multi_head_attention (its own table: tests/test_build_nb04.py)
    right("mha/helpers", nb04.check_multi_head_attention,
          lambda X, Wq, Wk, Wv, Wo, h: multi_head_attention(X, Wq, Wk, Wv, h, Wo)[0]),
    wrong("mha/no-W_o", nb04.check_multi_head_attention,
          lambda X, Wq, Wk, Wv, Wo, h: multi_head_attention(X, Wq, Wk, Wv, h)[0], "W_o is missing"),
]

CASES = [
    c._replace(id=f"{prefix}:{c.id}")
    for prefix, table in (
        ("core", CHECK_ARRAY),
        ("nb01", NB01),
        ("nb02", NB02),
        ("nb03", NB03),
        ("nb04", NB04),
    )
    for c in table
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_verdict_and_message(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    verdict, out = run(case, capsys)
    assert isinstance(verdict, Verdict), f"{case.id}: returned {type(verdict).__name__}, not a Verdict"
    assert bool(verdict) is (case.marks == "✅" * len(case.marks)), out
    assert marks_of(out) == case.marks, out
    assert out.startswith(case.marks[0]), out
    for phrase in case.phrases:
        assert phrase in out, f"{case.id}: {phrase!r} not in:\n{out}"
    if not verdict:  # the phrase comes from the diagnosis, not from the hint every answer gets
        _, unanswered = run(case._replace(answer=None), capsys)
        assert NOT_ANSWERED in unanswered
        for phrase in case.phrases:
            assert phrase not in unanswered, f"{case.id}: {phrase!r} is in the hint:\n{unanswered}"


# ------------------------------------------------------------------ every check: unanswered, shapes, garbage


class Check(NamedTuple):
    id: str
    check: Callable[..., object]
    args: tuple
    lines: int  # verdict lines the check prints


CHECKS = [
    Check("check_array", _ca, (), 1),
    Check("nb01.check_scores", nb01.check_scores, (), 1),
    Check("nb01.check_weights", nb01.check_weights, (), 1),
    Check("nb01.check_output", nb01.check_output, (), 1),
    Check("nb01.check_text000_weights", nb01.check_text000_weights, (), 1),
    Check("nb01.check_most_attended", nb01.check_most_attended, (), 1),
    Check("nb02.check_qkv", qkv, (), 3),
    Check("nb02.check_scaled_scores", nb02.check_scaled_scores, (), 1),
    Check("nb02.check_weights", nb02.check_weights, (), 1),
    Check("nb02.check_output_query2", nb02.check_output_query2, (), 1),
    Check("nb03.check_stable_softmax", nb03.check_stable_softmax, (), 1),
    Check("nb03.check_largest_safe_x", nb03.check_largest_safe_x, (), 1),
    Check("nb03.check_logsumexp", nb03.check_logsumexp, (), 1),
    Check("nb04.check_split_heads", nb04.check_split_heads, (QS, HS), 1),
    Check("nb04.check_merge_heads", nb04.check_merge_heads, (HEADS,), 1),
    Check("nb04.check_head_weights", nb04.check_head_weights, (XM, WQ, WK, 4), 1),
    Check("nb04.check_output_projection", nb04.check_output_projection, (HO, WO), 1),
    Check("nb01.check_attend", nb01.check_attend, (), 1),
    Check("nb02.check_self_attention", nb02.check_self_attention, (), 1),
    Check("nb04.check_multi_head_attention", nb04.check_multi_head_attention, (), 1),
]


def test_every_public_check_is_in_the_tables() -> None:
    tested = {c.check for c in CASES} | {c.check for c in CHECKS} | {nb02.check_qkv}  # via qkv()
    assert qkv in tested
    for module in (nb01, nb02, nb03, nb04):
        for name in module.__all__:
            if name.startswith("check_"):
                assert getattr(module, name) in tested, f"{module.__name__}.{name} is not tested"


def _call(check: Check, answer: object, capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    capsys.readouterr()
    verdict = check.check(answer, *check.args)
    return verdict, capsys.readouterr().out


@pytest.mark.parametrize("answer", [None, ...], ids=["None", "Ellipsis"])
@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_unanswered(check: Check, answer: object, capsys: pytest.CaptureFixture[str]) -> None:
    verdict, out = _call(check, answer, capsys)
    assert isinstance(verdict, Verdict)
    assert not verdict
    assert marks_of(out) == "❌" * check.lines, out
    assert out.count(NOT_ANSWERED) == check.lines, out


def _first_column(x: np.ndarray) -> np.ndarray:
    return x[..., :1]


# (check, an answer of a shape no listed mistake has, the answer's shape, the right shape)
# check_largest_safe_x takes one number, so it has no shape message (an array -> "expected one number")
_BY_ID = {c.id: c for c in CHECKS}
WRONG_SHAPES = [
    (_BY_ID["check_array"], np.zeros((2, 5)), "(2, 5)", "(3, 3)"),
    (_BY_ID["nb01.check_scores"], np.zeros((2, 3)), "(2, 3)", "(3, 3)"),
    (_BY_ID["nb01.check_weights"], np.zeros((3, 2)), "(3, 2)", "(3, 3)"),
    (_BY_ID["nb01.check_output"], np.zeros((2, 2)), "(2, 2)", "(3, 4)"),
    (_BY_ID["nb01.check_text000_weights"], np.zeros((4, 4)), "(4, 4)", "(5, 5)"),
    (_BY_ID["nb01.check_most_attended"], np.zeros(4), "(4,)", "(3,)"),
    (_BY_ID["nb02.check_qkv"], np.zeros((2, 4)), "(2, 4)", "(4, 4)"),
    (_BY_ID["nb02.check_scaled_scores"], np.zeros((3, 3)), "(3, 3)", "(4, 4)"),
    (_BY_ID["nb02.check_weights"], np.zeros(4), "(4,)", "(4, 4)"),
    (_BY_ID["nb02.check_output_query2"], np.zeros(3), "(3,)", "(4,)"),
    (_BY_ID["nb03.check_stable_softmax"], _first_column, "(3, 1)", "(3, 3)"),
    (_BY_ID["nb03.check_logsumexp"], np.zeros(3), "(3,)", "()"),
    (_BY_ID["nb04.check_split_heads"], np.zeros((2, 2, 2)), "(2, 2, 2)", "(3, 4, 2)"),
    (_BY_ID["nb04.check_merge_heads"], np.zeros((2, 2)), "(2, 2)", "(3, 4)"),
    (_BY_ID["nb04.check_head_weights"], np.zeros((4, 4)), "(4, 4)", "(4, 4, 4)"),
    (_BY_ID["nb04.check_output_projection"], np.zeros((2, 2)), "(2, 2)", "(3, 3)"),
]


@pytest.mark.parametrize(
    ("check", "answer", "got", "want"), WRONG_SHAPES, ids=[w[0].id for w in WRONG_SHAPES]
)
def test_wrong_shape_names_both_shapes(
    check: Check, answer: object, got: str, want: str, capsys: pytest.CaptureFixture[str]
) -> None:
    verdict, out = _call(check, answer, capsys)
    assert isinstance(verdict, Verdict)
    assert not verdict
    assert marks_of(out) == "❌" * check.lines, out
    assert out.count(got) == check.lines, out
    assert out.count(want) >= check.lines, out


def _raises(*args: object) -> object:
    raise RuntimeError("student code blew up")


def _returns_none(*args: object) -> None:
    return None


GARBAGE = {
    "string": "abc",
    "empty string": "",
    "bytes": b"\x00\x01",
    "function that raises": _raises,
    "function returning None": _returns_none,
    "ragged list": [[1.0, 2.0], [3.0]],
    "list of None": [None, None],
    "dict": {"a": 1},
    "object": object(),
    "empty list": [],
}
HUGE = {  # beyond float32 (exp-limit check) and beyond float64 (a Python int)
    "1e39": 1e39,
    "float64 max": float(np.finfo(np.float64).max),
    "10**400": 10**400,
    "-10**400": -(10**400),
}
FUNCTION_GARBAGE = {
    "returns a string": lambda x: "abc",
    "returns a ragged list": lambda x: [[1.0, 2.0], [3.0]],
    "returns Ellipsis": lambda x: ...,
    "returns an object": lambda x: object(),
    "returns a dict": lambda x: {"a": 1},
    "takes no argument": lambda: 1.0,
    "raises KeyError": lambda x: {}["missing"],
    "returns an object array": lambda x: np.full(np.shape(x), None),
}


def _raising_garbage(
    check: Check, garbage: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """Call the check with each garbage answer; list what went wrong (raised, truthy, no ❌ line)."""
    problems = []
    for label, answer in garbage.items():
        if check.check is qkv:
            answer = (answer, answer, answer)
        try:
            verdict, out = _call(check, answer, capsys)
        except Exception as err:  # the finding: a check must never raise on an answer
            problems.append(f"{label}: raised {type(err).__name__}: {err}")
            continue
        if not isinstance(verdict, Verdict) or verdict or marks_of(out) != "❌" * check.lines:
            problems.append(f"{label}: returned {verdict!r}, printed {out!r}")
    return problems


@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_garbage_never_raises(check: Check, capsys: pytest.CaptureFixture[str]) -> None:
    problems = _raising_garbage(check, GARBAGE, capsys)
    assert not problems, "\n".join(problems)


def test_huge_numbers_never_raise(capsys: pytest.CaptureFixture[str]) -> None:
    """One test for all checks: a number beyond float32 / float64 is one root cause, reported once."""
    problems = [f"{check.id}: {p}" for check in CHECKS for p in _raising_garbage(check, HUGE, capsys)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("func", list(FUNCTION_GARBAGE.values()), ids=list(FUNCTION_GARBAGE))
def test_stable_softmax_never_raises_on_a_bad_function(
    func: object, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    verdict = nb03.check_stable_softmax(func)
    out = capsys.readouterr().out
    assert isinstance(verdict, Verdict)
    assert not verdict
    assert marks_of(out) == "❌", out


def test_stable_softmax_reports_what_the_function_raised(capsys: pytest.CaptureFixture[str]) -> None:
    assert not nb03.check_stable_softmax(_raises)
    out = capsys.readouterr().out
    assert "raised RuntimeError (student code blew up)" in out
    assert "small scores" in out  # names the input it failed on


def test_stable_softmax_function_returning_none_is_unanswered(capsys: pytest.CaptureFixture[str]) -> None:
    assert not nb03.check_stable_softmax(_returns_none)
    assert NOT_ANSWERED in capsys.readouterr().out


def test_stable_softmax_does_not_modify_the_cases() -> None:
    before = [x.copy() for _, x in nb03.SOFTMAX_CASES]

    def in_place(x: np.ndarray) -> np.ndarray:
        x -= np.max(x, axis=-1, keepdims=True)
        np.exp(x, out=x)
        x /= np.sum(x, axis=-1, keepdims=True)
        return x

    assert nb03.check_stable_softmax(in_place)
    for b, (label, x) in zip(before, nb03.SOFTMAX_CASES, strict=True):
        np.testing.assert_array_equal(x, b, err_msg=label)  # exact


# ------------------------------------------------------------------------------------------ Verdict


@pytest.mark.parametrize("ok", [True, False])
def test_verdict_displays_nothing(ok: bool, capsys: pytest.CaptureFixture[str]) -> None:
    verdict = Verdict(ok)
    assert verdict._ipython_display_() is None
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ""
    assert bool(verdict) is ok
    assert repr(verdict) == f"Verdict(ok={ok})"


# ------------------------------------------------------- a NaN answer: the exp hint only where there is an exp

# the exercises that compute an exp (a softmax or a log-sum-exp); only their NaN verdict may ask "did exp overflow?"
EXP_CHECKS = {nb01.check_weights, nb01.check_output, nb01.check_text000_weights, nb02.check_weights,
              nb02.check_output_query2, nb03.check_logsumexp, nb04.check_head_weights}
# the Build checks take a function (their NaN: tests/test_build_nbNN.py); one number with its own verdict
_NO_NAN_ANSWER = {nb01.check_attend, nb02.check_self_attention, nb03.check_stable_softmax,
                  nb04.check_multi_head_attention, nb03.check_largest_safe_x}
_FIRST_RIGHT = list({c.check: c for c in reversed(CASES) if c.marks and set(c.marks) == {"✅"}
                     and c.check is not _ca and c.check not in _NO_NAN_ANSWER}.values())


def _nan_like(answer: object) -> np.ndarray:
    return np.full(np.shape(np.asarray(answer, dtype=float)), np.nan)


def test_the_nan_table_covers_every_array_check() -> None:
    covered = {c.check for c in _FIRST_RIGHT} | _NO_NAN_ANSWER
    assert {c.check for c in CHECKS if c.check is not _ca} <= covered


@pytest.mark.parametrize("case", _FIRST_RIGHT, ids=[c.id for c in _FIRST_RIGHT])
def test_nan_answer_blames_exp_only_where_the_exercise_has_one(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    answer = tuple(map(_nan_like, case.answer)) if case.check is qkv else _nan_like(case.answer)
    verdict, out = run(case._replace(answer=answer), capsys)
    assert not verdict and "contains NaN" in out, out
    assert ("did exp overflow" in out) is (case.check in EXP_CHECKS), out


# ------------------------------------------------- bad inputs (not answers): a clear error naming the argument

BAD_INPUTS = [
    # (check, args, error, phrases in the message)
    (nb04.check_split_heads, (QS, 0), ValueError, ("n_heads must be at least 1, got 0",)),
    (nb04.check_split_heads, (QS, -2), ValueError, ("n_heads must be at least 1, got -2",)),
    (nb04.check_split_heads, (QS, 2.0), TypeError, ("n_heads must be an integer, got 2.0",)),
    (nb04.check_split_heads, (QS, True), TypeError, ("n_heads must be an integer, got True",)),
    (nb04.check_split_heads, (QS, "2"), TypeError, ("n_heads must be an integer, got '2'",)),
    (nb04.check_split_heads, (QS, None), TypeError, ("n_heads must be an integer, got None",)),
    (nb04.check_split_heads, (np.zeros((3, 4)), 3), ValueError,
     ("n_heads = 3 does not divide the 4 columns of Q (shape (3, 4))", "[1, 2, 4]")),
    (nb04.check_split_heads, ("abc", 2), TypeError, ("Q must be a numeric array, got a str",)),
    (nb04.check_split_heads, (None, 2), TypeError, ("Q must be a 2-D numeric array, got None",)),
    (nb04.check_split_heads, ([[1.0, 2.0], [3.0]], 2), ValueError, ("Q must be a rectangular numeric array",)),
    (nb04.check_split_heads, (np.zeros(4), 2), ValueError, ("Q must be 2-D, got shape (4,)",)),
    (nb04.check_merge_heads, ("abc",), TypeError, ("heads must be a numeric array, got a str",)),
    (nb04.check_merge_heads, (np.zeros((2, 3)),), ValueError, ("heads must be 3-D, got shape (2, 3)",)),
    (nb04.check_head_weights, ("abc", WQ, WK, 4), TypeError, ("X must be a numeric array, got a str",)),
    (nb04.check_head_weights, (XM, "abc", WK, 4), TypeError, ("W_q must be a numeric array, got a str",)),
    (nb04.check_head_weights, (XM, WQ, None, 4), TypeError, ("W_k must be a 2-D numeric array, got None",)),
    (nb04.check_head_weights, (XM, WQ[:-1], WK, 4), ValueError,
     (f"W_q has shape {WQ[:-1].shape} but X has {XM.shape[1]} features",)),
    (nb04.check_head_weights, (XM, WQ, WK[:, :-1], 4), ValueError, ("queries and keys must have the same width",)),
    (nb04.check_head_weights, (XM, WQ, WK, 0), ValueError, ("n_heads must be at least 1, got 0",)),
    (nb04.check_head_weights, (XM, WQ, WK, 5), ValueError,
     (f"n_heads = 5 does not divide the {WQ.shape[1]} columns of W_q",)),
    (nb04.check_output_projection, ("abc", WO), TypeError, ("heads must be a numeric array, got a str",)),
    (nb04.check_output_projection, (HO, "abc"), TypeError, ("W_o must be a numeric array, got a str",)),
    (nb04.check_output_projection, (HO, WO[:-1]), ValueError, (f"W_o has shape {WO[:-1].shape}",)),
    (nb01.check_scores, ("abc",), TypeError, ("X must be a numeric array, got a str",)),
    (nb01.check_weights, (None,), TypeError, ("X must be a 2-D numeric array, got None",)),
    (nb01.check_output, ([1.0, 2.0, 3.0],), ValueError, ("X must be 2-D, got shape (3,)",)),
    (nb01.check_most_attended, ([[1.0, 2.0], [3.0]],), ValueError, ("X must be a rectangular numeric array",)),
]


@pytest.mark.parametrize("check, args, error, phrases", BAD_INPUTS,
                         ids=[f"{c.__module__.rsplit('.', 1)[-1]}.{c.__name__}-{i}"
                              for i, (c, *_) in enumerate(BAD_INPUTS)])
def test_a_bad_input_names_the_argument(check: Callable[..., object], args: tuple, error: type, phrases: tuple) -> None:
    with pytest.raises(error) as info:
        check(None, *args)
    for phrase in phrases:
        assert phrase in str(info.value)
