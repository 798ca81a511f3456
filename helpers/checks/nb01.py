"""Exercise checks for notebook 01, attention without weights: softmax(X Xᵀ/√d) X.

Shapes: ``T`` tokens (rows of X), ``d`` features (columns of X). Each ``check_...`` takes
the student's answer, computes the right one and the typical wrong ones with
``helpers.attention``, prints one verdict and returns a ``Verdict`` (truthy when right,
shows nothing more under the cell); none raises.

The Build exercise, ``check_attend(fn)``, runs the student's own ``attend(X)`` on the inputs of
``SPEC_ATTEND`` (helpers.checks.functions) and names the typical mistakes, each written below as a
small wrong function.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import self_attention, softmax
from helpers.checks import Verdict, answer_floats, check_array, exercise_check, input_array, verdict
from helpers.checks.functions import KEEPDIMS, Case, Spec, check_function
from helpers.examples import T000_F1_X
from helpers.sentence import embeddings

__all__ = [
    "EXERCISE_X",
    "check_scores",
    "check_weights",
    "check_output",
    "check_text000_weights",
    "check_most_attended",
    "SPEC_ATTEND",
    "check_attend",
]

EXERCISE_X = np.array(
    [
        [1, 0, 1, 0],
        [2, 1, 2, 0],
        [0, 1, 0, 2],
    ]
)  # (T=3, d=4): small integers, √d = 2, and x1 (row 0) attends most to x2 (row 1), not to itself


def _parts(X: np.ndarray) -> dict[str, np.ndarray]:
    """The right scores/weights/output for X and the arrays the usual mistakes produce."""
    X = input_array(X, "X", 2)  # (T, d) or a TypeError/ValueError naming X
    T, d = X.shape
    raw = X @ X.T  # (T, d) @ (d, T) -> (T, T) dot product of every pair of tokens
    scores = raw / math.sqrt(d)  # (T, T)
    return {
        "X": X,
        "raw": raw,
        "scores": scores,
        "scores_by_d": raw / d,  # (T, T) divided by d instead of √d
        "scores_by_sqrt_T": raw / math.sqrt(T),  # (T, T) √(number of tokens) instead of √(features)
        "weights": softmax(scores, axis=-1),  # (T, T) every row sums to 1
        "weights_axis0": softmax(scores, axis=0),  # (T, T) every column sums to 1
        "weights_unscaled": softmax(raw, axis=-1),  # (T, T)
        "weights_by_d": softmax(raw / d, axis=-1),  # (T, T)
        "weights_whole": softmax(scores.reshape(-1)).reshape(T, T),  # (T, T) all T² entries sum to 1
        "weights_no_exp": scores / scores.sum(axis=-1, keepdims=True),  # (T, T) normalised without exp
        "softmax_of_X": softmax(X / math.sqrt(d), axis=-1),  # (T, d) softmax applied to X itself
        "output": self_attention(X)[0],  # (T, T) @ (T, d) -> (T, d)
    }


def _shape_verdict(answer: object, name: str, by_shape: dict[tuple, str]) -> Verdict | None:
    """A verdict for an answer whose shape betrays a known mistake, else None (let check_array judge)."""
    if answer is None or answer is Ellipsis:
        return None
    got = answer_floats(answer)  # None for complex numbers, text, ragged lists, 10**400: check_array says which
    if got is None:
        return None
    shape = got.shape
    if shape in by_shape:
        return verdict(False, name, f"your array has shape {shape}: {by_shape[shape]}")
    return None


_SCORES_HINT = "Hint: which product of X with itself compares tokens (rows) with tokens? And what is d here?"
_WEIGHTS_HINT = "Hint: which axis of the scores holds the keys? Each query's attention weights must add up to 1."
_OUTPUT_HINT = ("Hint: each output row is a weighted average of the rows of X; which matrix product does that for "
                "all rows?")


@exercise_check
def check_scores(answer: object, X: object = EXERCISE_X) -> Verdict:
    """Exercise 1: the scaled scores X Xᵀ/√d, shape (T, T)."""
    p = _parts(X)
    T, d = p["X"].shape
    name = "scaled scores"
    shaped = _shape_verdict(
        answer,
        name,
        {
            (d, d): f"that is Xᵀ X ({d}×{d}), which compares features with features. "
            "The scores compare tokens with tokens: X @ X.T, shape (T, T).",
            (T, d): "that is the shape of X. The scores compare every token with every token: "
            "X @ X.T has shape (T, T).",
        }
        if T != d
        else {},
    )
    if shaped is not None:
        return shaped
    return check_array(
        answer,
        p["scores"],
        name=name,
        hint=_SCORES_HINT,
        mistakes={
            f"these are the unscaled scores X Xᵀ: divide by √d = √{d}.": p["raw"],
            f"you divided by d = {d}; divide by its square root √d = {math.sqrt(d):g}.": p["scores_by_d"],
            f"you divided by √T = √{T} (the number of tokens); d is the number of features, "
            f"X.shape[1] = {d}.": p["scores_by_sqrt_T"],
        },
    )


@exercise_check
def check_weights(answer: object, X: object = EXERCISE_X) -> Verdict:
    """Exercise 2: the attention weights softmax(X Xᵀ/√d) over the keys, shape (T, T)."""
    p = _parts(X)
    T, d = p["X"].shape
    name = "attention weights"
    by_shape = {}
    if T != d:
        by_shape[(T, d)] = (
            "that is the shape of X. The softmax goes over the scores X Xᵀ/√d (T×T), not over X itself."
        )
        by_shape[(d, d)] = "that is the shape of Xᵀ X, which compares features; the scores are X @ X.T."
    shaped = _shape_verdict(answer, name, by_shape)
    if shaped is not None:
        return shaped
    return check_array(
        answer,
        p["weights"],
        name=name,
        hint=_WEIGHTS_HINT,
        exp=True,
        mistakes={
            "each COLUMN of your array sums to 1: the softmax ran over axis 0 (the queries), or you "
            "transposed the answer. Each ROW (one query) must sum to 1: softmax(scores, axis=-1).": p[
                "weights_axis0"
            ],
            f"this is the softmax of the unscaled scores X Xᵀ: divide them by √d = √{d} first.": p[
                "weights_unscaled"
            ],
            f"the scores were divided by d = {d}; divide by √d = {math.sqrt(d):g}.": p["weights_by_d"],
            "all entries of your array together sum to 1: the softmax ran over the whole matrix. "
            "Normalise each row on its own (axis=-1, keepdims=True).": p["weights_whole"],
            "these are the scores themselves: apply the softmax.": p["scores"],
            "you divided the scores by their row sums without exponentiating: softmax uses "
            "exp(scores) (minus the row max), then divides by the row sum.": p["weights_no_exp"],
        },
    )


@exercise_check
def check_output(answer: object, X: object = EXERCISE_X) -> Verdict:
    """Exercise 3: the output softmax(X Xᵀ/√d) X, shape (T, d)."""
    p = _parts(X)
    T, d = p["X"].shape
    name = "output"
    by_shape = {}
    if T != d:
        by_shape[(T, T)] = (
            "that is the shape of the weights (T×T). The output multiplies them by X: weights @ X, "
            "shape (T, d). (If you multiplied by X @ X.T, multiply by X itself.)"
        )
        by_shape[(d, T)] = (
            "that is the transpose of the output: tokens are rows, so the output has shape (T, d)."
        )
    shaped = _shape_verdict(answer, name, by_shape)
    if shaped is not None:
        return shaped
    X_ = p["X"]
    return check_array(
        answer,
        p["output"],
        name=name,
        hint=_OUTPUT_HINT,
        exp=True,
        mistakes={
            "your weights ran over axis 0 (each column summed to 1), or you used weights.T: "
            "each query's ROW of weights must sum to 1 (softmax over axis=-1).": p["weights_axis0"] @ X_,
            f"your weights come from the unscaled scores X Xᵀ: divide by √d = √{d} before the softmax.": p[
                "weights_unscaled"
            ]
            @ X_,
            f"your scores were divided by d = {d}; divide by √d = {math.sqrt(d):g}.": p["weights_by_d"] @ X_,
            "you multiplied the scores (before the softmax) by X: apply the softmax first.": p["scores"] @ X_,
            "this is X unchanged: the output is weights @ X.": X_,
            "you took the softmax of X itself. The weights are the softmax of the scores X Xᵀ/√d; "
            "then multiply them by X.": p["softmax_of_X"],
        },
    )


@exercise_check
def check_text000_weights(answer: object) -> Verdict:
    """Exercise 4: text 000's attention weights for T000_F1_X, softmax written by hand (subtract the row max)."""
    p = _parts(T000_F1_X)
    T, d = p["X"].shape
    name = "text 000 attention weights"
    scores = p["scores"]  # (T, T)
    row_shifted = scores - scores.max(axis=-1, keepdims=True)  # (T, T) every row's max is 0
    whole = scores - scores.max()  # (T, T) shifted by the largest entry of the whole matrix
    with np.errstate(under="ignore", invalid="ignore", divide="ignore"):
        whole_softmax = np.exp(whole) / np.exp(whole).sum()  # (T, T) all T² entries sum to 1
        global_max_row_sum = np.exp(whole) / np.exp(whole).sum(axis=-1, keepdims=True)  # (T, T) 0/0 = nan
    shaped = _shape_verdict(
        answer,
        name,
        {(T, d): "that is the shape of X. The softmax goes over the scores X Xᵀ/√d (T×T)."},
    )
    if shaped is not None:
        return shaped
    if answer is not None and answer is not Ellipsis:
        got = answer_floats(answer)  # None when not real numbers (complex, text, 10**400): check_array says which
        if got is not None and got.shape == (T, T) and np.allclose(got, global_max_row_sum, equal_nan=True):
            return verdict(
                False,
                name,
                "your array contains NaN because you subtracted the max of the WHOLE matrix: in every row "
                "but the one holding that max, all exps underflow to 0 and 0/0 = nan. "
                "Subtract each row's own max (axis=-1, keepdims=True).",
            )
    return check_array(
        answer,
        p["weights"],
        name=name,
        hint="Hint: a softmax row is unchanged if you subtract the same number from all its scores; "
        "which number keeps every exponent ≤ 0?",
        exp=True,
        mistakes={
            "each COLUMN of your array sums to 1: the softmax ran over axis 0 (the queries), or you "
            "transposed the answer. Each ROW must sum to 1.": p["weights_axis0"],
            "all entries together sum to 1: you normalised over the whole matrix."
            " Use each row's own max and sum (axis=-1, keepdims=True).": whole_softmax,
            "you divided the shifted scores by their row sums without exponentiating: apply np.exp "
            "after subtracting the row max.": row_shifted / row_shifted.sum(axis=-1, keepdims=True),
        },
    )


@exercise_check
def check_most_attended(answer: object, X: object = EXERCISE_X) -> Verdict:
    """Exercise 5: for each query, the index of the key it gives the largest attention weight, shape (T,)."""
    p = _parts(X)
    T = p["X"].shape[0]
    name = "most attended key"
    right = np.argmax(p["weights"], axis=-1)  # (T,)
    if answer is not None and answer is not Ellipsis:
        got = answer_floats(answer)  # None when not real numbers (complex, text, 10**400): check_array says which
        if (
            got is not None
            and got.shape == (T,)
            and np.array_equal(got, np.arange(T))
            and not np.array_equal(right, np.arange(T))
        ):
            return verdict(
                False,
                name,
                "that says every token attends most to itself. Not always: x_i·x_j can beat x_i·x_i "
                "when x_j is longer and points in a similar direction. Compare the scores of each row. "
                "(Taking np.argmax over axis 0, down the columns, can also give this.)",
            )
    return check_array(
        answer,
        right,
        name=name,
        hint="Hint: one key index per query, counting from 0. Along which axis do one query's keys lie?",
        mistakes={
            "your indices are one too large: Python counts from 0.": right + 1,
            "you took the argmax down each column (axis 0): that is the query each key likes most. "
            "Take it along each row (axis=-1).": np.argmax(p["weights"], axis=0),
        },
    )


# ------------------------------------------------------------------ Build: the student's attend(X)


def _attend(X: np.ndarray) -> np.ndarray:
    """The right attend(X): softmax(X Xᵀ/√d) X, (T, d) -> (T, d), from helpers.attention."""
    return self_attention(X)[0]


def _scaled(X: np.ndarray, divisor: float, axis: int = -1) -> np.ndarray:
    """softmax(X Xᵀ / divisor, axis) X: the right formula when divisor = √d and axis = -1."""
    return softmax(X @ X.T / divisor, axis=axis) @ X  # (T, T) @ (T, d) -> (T, d)


def _d(X: np.ndarray) -> int:
    return X.shape[1]  # d, the number of features


# Each typical mistake as the wrong function a student writes; the first whose output matches is named.
_ATTEND_MISTAKES = {
    "not scaled: the scores X Xᵀ went into the softmax undivided. Divide them by √d, the square root of the "
    "number of features d = X.shape[1].": lambda X: _scaled(X, 1.0),
    "scaled by d instead of √d: divide the scores by np.sqrt(d), not by d.": lambda X: _scaled(X, _d(X)),
    "scaled by √T, the number of tokens (X.shape[0]); d is the number of features, X.shape[1].":
        lambda X: _scaled(X, math.sqrt(X.shape[0])),
    "you multiplied the scores by √d; divide by it.": lambda X: _scaled(X, 1 / math.sqrt(_d(X))),
    "the softmax ran over axis 0 (the queries), so each COLUMN of the attention weights sums to 1; each ROW "
    "must (axis=-1). Dividing by the row sums without keepdims=True, or using the weights transposed, does the "
    "same.": lambda X: _scaled(X, math.sqrt(_d(X)), axis=0),
    "one softmax over the whole (T, T) matrix: all its entries together sum to 1. Normalise each row on its "
    "own (np.sum(..., axis=-1, keepdims=True)).":
        lambda X: softmax((X @ X.T / math.sqrt(_d(X))).reshape(-1)).reshape(len(X), len(X)) @ X,
    "no softmax: you multiplied the scaled scores X Xᵀ/√d by X directly. The attention weights are the "
    "softmax of each row of the scaled scores.": lambda X: X @ X.T / math.sqrt(_d(X)) @ X,
    "you return the attention weights (T, T): the output is one more step, the attention weights @ X, "
    "shape (T, d).": lambda X: softmax(X @ X.T / math.sqrt(_d(X))),
    "you divided after the softmax (the attention weights, or the output) by √d: divide the scores X Xᵀ, "
    "before the softmax.": lambda X: softmax(X @ X.T) @ X / math.sqrt(_d(X)),
    "Xᵀ @ weights gives (d, T), the transpose of the output: the weights go on the left, weights @ X, so "
    "that output row i mixes the rows (tokens) of X.": lambda X: X.T @ softmax(X @ X.T / math.sqrt(_d(X))),
    "weights @ Xᵀ: multiply the attention weights by X itself, whose rows are the tokens (this only ran "
    "because T = d here).": lambda X: softmax(X @ X.T / math.sqrt(_d(X))) @ X.T,
    "X @ weights: the weights go on the left, weights @ X, so that output row i mixes the rows (tokens) of X "
    "(this only ran because T = d here).": lambda X: X @ softmax(X @ X.T / math.sqrt(_d(X))),
    "your scores are Xᵀ X, (d, d): they compare features with features. The scores compare tokens with tokens: "
    "X @ X.T, (T, T), and the output is weights @ X.": lambda X: X @ softmax(X.T @ X / math.sqrt(_d(X))),
    "your scores are Xᵀ X, (d, d): they compare features with features. The scores compare tokens with tokens: "
    "X @ X.T, (T, T) (this only ran because T = d here).": lambda X: softmax(X.T @ X / math.sqrt(_d(X))) @ X,
}


def _rng_case(shape: tuple[int, int], seed: int, what: str = "") -> Case:
    X = np.random.default_rng(seed).standard_normal(shape)  # (T, d)
    return Case(f"X of shape {shape}{what} (random, seed {seed})", (X,))


SPEC_ATTEND = Spec(
    name="attend",
    broadcast=KEEPDIMS,  # a row max or sum written without keepdims=True: say so
    reference=_attend,
    cases=[
        _rng_case((4, 4), 0, ", as many tokens as features"),
        Case("the running sentence, X = embeddings() of shape (8, 6)", (embeddings(),)),
        _rng_case((1, 3), 1, ", one token"),
        Case("EXERCISE_X of shape (3, 4)", (EXERCISE_X.astype(np.float64),)),
        _rng_case((5, 2), 2),
        _rng_case((2, 7), 3),
    ],
    mistakes=_ATTEND_MISTAKES,
    hint="Hint: three steps. The scores X Xᵀ divided by √d (d = X.shape[1]), a softmax over each row "
    "(axis=-1), then the attention weights @ X.",
    done=" (square and non-square X, one token, the running sentence)",
)


@exercise_check
def check_attend(fn: object) -> Verdict:
    """Build: the student's attend(X) = softmax(X Xᵀ/√d) X, run on several X, its typical mistakes named."""
    return check_function(fn, SPEC_ATTEND)
