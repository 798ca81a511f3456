"""Exercise checks of notebook 04 (multi-head attention): split, merge, per-head scale, W_o.

Shapes: T tokens, d_model = h · d_head columns, h heads, d_head columns per head,
d_out columns after the output projection W_o.

Each check recomputes the right answer with ``helpers.attention`` from the inputs the
notebook passes in, together with the arrays the typical mistakes produce, and prints
one verdict (see ``helpers.checks.check_array``). Mistakes whose result has another
shape than the right answer (e.g. the split without the transpose, (T, h, d_head)) are
recognised here before the shape comparison, so the student hears which mistake it is.

The Build exercise, ``check_multi_head_attention(fn)``, runs the student's own
``multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads)`` -> (T, d_model) on the inputs of
``SPEC_MULTI_HEAD_ATTENTION`` (helpers.checks.functions); head i is column block i of Q, K and V,
columns i·d_head to (i+1)·d_head - 1. Each typical mistake is a small wrong function below.
"""

from __future__ import annotations

import numpy as np

from helpers.attention import (
    merge_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)
from helpers.checks import Verdict, check_array_any_shape, exercise_check, input_array
from helpers.checks.functions import KEEPDIMS, Case, Spec, check_function
from helpers.sentence import embeddings, two_heads
from helpers.validate import check_int, check_qk_width, check_weight

__all__ = ["check_split_heads", "check_merge_heads", "check_head_weights", "check_output_projection",
           "SPEC_MULTI_HEAD_ATTENTION", "check_multi_head_attention"]


_check = check_array_any_shape


_as_float = input_array  # the notebook's inputs: a TypeError/ValueError naming the argument if they are not arrays


def _check_heads(n_heads: object, name: str, shape: tuple[int, ...]) -> int:
    """n_heads as an int >= 1 that divides the last axis of ``name`` (shape ``shape``), or a ValueError/TypeError."""
    h = check_int(n_heads, "n_heads", minimum=1)
    if shape[-1] % h:
        raise ValueError(f"n_heads = {h} does not divide the {shape[-1]} columns of {name} (shape {shape}): "
                         f"each head gets d_model / n_heads columns; choose n_heads among "
                         f"{[k for k in range(1, shape[-1] + 1) if shape[-1] % k == 0]}")
    return h


@exercise_check
def check_split_heads(answer: object, Q: object, n_heads: int) -> Verdict:
    """Exercise 1: Q (T, d_model) split into n_heads heads -> (h, T, d_head)."""
    Q = _as_float(Q, "Q", 2)
    T, d_model = Q.shape
    h = _check_heads(n_heads, "Q", Q.shape)
    d_head = d_model // h
    expected = split_heads(Q, h)  # (h, T, d_head)
    if T == h:  # (h, T, d_head) and (T, h, d_head) are then the same reshape: one message for both
        mistakes = {
            f"this is Q.reshape({T}, {h}, {d_head}) with no transpose. With T = h = {h} it has the right "
            "shape, but head i's rows are the pieces of token i: swap the first two axes so that each head "
            "gets its block of columns from every token.": Q.reshape(T, h, d_head),
        }
    else:
        mistakes = {}
    mistakes |= {
        f"this is Q.reshape({h}, {T}, {d_head}): reshaping straight to (h, T, d_head) cuts Q's rows in "
        "reading order, so one head's rows mix pieces of different tokens. Reshape to (T, h, d_head) "
        "first, then swap the first two axes.": Q.reshape(h, T, d_head),
        f"this is Q.reshape({T}, {h}, {d_head}), shape (T, h, d_head): the cut is right but the transpose "
        "is missing; swap the first two axes so that the heads come first.": Q.reshape(T, h, d_head),
        "each head got every h-th column (heads[i] = Q[:, i::h]). Each head owns a contiguous block of "
        "d_head columns: head 1 gets columns 1 to d_head, head 2 the next d_head (in NumPy, "
        "heads[i] = Q[:, i*d_head:(i+1)*d_head]).": np.moveaxis(
            Q.reshape(T, d_head, h), -1, 0
        ),  # (T, d_head, h) -> (h, T, d_head)
        "the last two axes are swapped: each head should be (T, d_head), tokens as rows.": np.swapaxes(
            expected, -1, -2
        ),  # (h, d_head, T)
    }
    hint = ("Hint: a reshape only re-cuts the rows in reading order. Which shape keeps each token's "
            "numbers together, and which axis must then move to the front?")
    return _check(answer, expected, name="split into heads", mistakes=mistakes, hint=hint)


@exercise_check
def check_merge_heads(answer: object, heads: object) -> Verdict:
    """Exercise 2: heads (h, T, d_head) merged back -> (T, h · d_head)."""
    heads = _as_float(heads, "heads", 3)
    h, T, d_head = heads.shape
    expected = merge_heads(heads)  # (T, h * d_head)
    mistakes = {
        f"this is heads.reshape({T}, {h * d_head}) without the transpose: it lays head 1's rows side by "
        "side first, so a row of the result mixes different tokens. Swap heads and tokens back to "
        "(T, h, d_head) first, then reshape.": heads.reshape(T, h * d_head),
        "the columns are interleaved (head 1's first column, head 2's first column, ...): the axes were "
        "put in the order (T, d_head, h). Use (T, h, d_head) so that each head's columns stay one "
        "block.": np.transpose(heads, (1, 2, 0)).reshape(T, h * d_head),
        "the heads were stacked below each other (np.concatenate(heads, axis=0)): concatenate along the "
        "columns, one row per token.": np.concatenate(list(heads), axis=0),  # (h * T, d_head)
        "the heads were added (heads.sum(axis=0)); merging concatenates them side by side, it does not "
        "sum them.": heads.sum(axis=0),  # (T, d_head)
    }
    hint = "Hint: undo the split in reverse order. Which two axes must trade places before the reshape?"
    return _check(answer, expected, name="merge the heads", mistakes=mistakes, hint=hint)


@exercise_check
def check_head_weights(answer: object, X: object, W_q: object, W_k: object, n_heads: int) -> Verdict:
    """Exercise 3: the attention weights of every head (h, T, T), scaled by 1/√d_head."""
    X = _as_float(X, "X", 2)
    W_q = check_weight(_as_float(W_q, "W_q", 2), "W_q", X.shape[1], X.shape)  # (d_in, d_model)
    W_k = check_weight(_as_float(W_k, "W_k", 2), "W_k", X.shape[1], X.shape)  # (d_in, d_model)
    check_qk_width(W_q.shape, W_k.shape)
    n_heads = _check_heads(n_heads, "W_q", W_q.shape)
    Qh = split_heads(X @ W_q, n_heads)  # (T, d_model) -> (h, T, d_head)
    Kh = split_heads(X @ W_k, n_heads)  # (T, d_model) -> (h, T, d_head)
    h, T, d_head = Qh.shape
    d_model = h * d_head

    def weights(scale: float) -> np.ndarray:
        return scaled_dot_product_attention(Qh, Kh, Kh, scale=scale)[1]  # (h, T, T)

    expected = weights(1 / np.sqrt(d_head))
    scores = Qh @ np.swapaxes(Kh, -1, -2) / np.sqrt(d_head)  # (h, T, d_head) @ (h, d_head, T) -> (h, T, T)
    column_softmax = np.exp(scores - scores.max(axis=-2, keepdims=True))  # (h, T, T)
    column_softmax /= column_softmax.sum(axis=-2, keepdims=True)  # (h, T, T) columns sum to 1
    mistakes = {
        f"these attention weights are scaled by 1/√d_model = 1/√{d_model}. Each head compares vectors of "
        f"d_head = {d_head} numbers, so divide by √d_head = √{d_head} (scaling by the model width C instead "
        "of the head size was fixed in karpathy/ng-video-lecture pull request #6).": weights(1 / np.sqrt(d_model)),
        f"these attention weights are not scaled: divide the scores by √d_head = √{d_head} before the "
        "softmax.": weights(1.0),
        "the softmax ran over the queries (axis -2), so columns sum to 1; it must run over the keys, the "
        "last axis, so that every row sums to 1.": column_softmax,
    }
    hint = ("Hint: a head only ever sees its own block of columns. How wide are the vectors it compares, "
            "and along which axis do one query's attention weights run?")
    return _check(answer, expected, name="per-head attention weights", mistakes=mistakes, hint=hint, exp=True)


@exercise_check
def check_output_projection(answer: object, heads: object, W_o: object) -> Verdict:
    """Exercise 4: Σ_i heads[i] @ W_o[block i], which equals concat(heads) @ W_o -> (T, d_out)."""
    heads = _as_float(heads, "heads", 3)
    W_o = _as_float(W_o, "W_o", 2)
    h, T, d_head = heads.shape
    if W_o.shape[0] != h * d_head:
        raise ValueError(f"W_o has shape {W_o.shape} but the {h} heads of width {d_head} need {h * d_head} rows")
    expected = merge_heads(heads) @ W_o  # (T, h * d_head) @ (h * d_head, d_out) -> (T, d_out)
    # (h * d_head, d_out) -> (h, d_head, d_out) row block i = W_o[i*d_head:(i+1)*d_head]
    blocks = W_o.reshape(h, d_head, -1)
    interleaved = np.stack([W_o[i::h] for i in range(h)])  # (h, d_head, d_out) rows i, i+h, ... (wrong)
    mistakes = {
        "this is the mean over the heads; W_o adds the heads' contributions, so sum them (no division "
        f"by h = {h}).": (heads @ blocks).mean(axis=0),
        "only the first head (heads[0]) contributes: loop over all heads and add "
        "heads[i] @ W_o[block i].": heads[0] @ blocks[0],
        f"heads[i] met the rows i, i + {h}, i + {2 * h}, ... of W_o (W_o[i::{h}]); the rows of W_o come in "
        f"contiguous blocks of d_head = {d_head}, block i = W_o[i*d_head:(i+1)*d_head], in the order of the "
        "concatenated columns.": (heads @ interleaved).sum(axis=0),
        "this is the concatenation of the heads without W_o: multiply each head by its block of W_o "
        "and add.": merge_heads(heads),
    }
    hint = "Hint: in concat(heads) · W_o, which rows of W_o ever meet head i's columns?"
    return _check(answer, expected, name="output projection", mistakes=mistakes, hint=hint)


# ------------------------------------------------------------------ Build: the student's multi_head_attention


def _multi_head_attention(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, W_o: np.ndarray,
                          n_heads: int) -> np.ndarray:
    """The right multi_head_attention: (T, d_in) -> (T, d_model), from helpers.attention."""
    return multi_head_attention(X, W_q, W_k, W_v, n_heads, W_o=W_o)[0]


def _heads_attend(Qh: np.ndarray, Kh: np.ndarray, Vh: np.ndarray, divisor: float, axis: int = -1) -> np.ndarray:
    """softmax(Qh Khᵀ / divisor, axis) Vh for a stack of heads (..., T, d_head) -> (..., T, d_head)."""
    return softmax(Qh @ np.swapaxes(Kh, -1, -2) / divisor, axis=axis) @ Vh  # (..., T, T) @ (..., T, d_head)


def _mha(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, W_o: np.ndarray | None, h: int, *,
         split=None, merge=None, divisor: float | None = None, axis: int = -1) -> np.ndarray:
    """Multi-head attention with one step swapped for a wrong one (a split, a merge, the scale, the axis)."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (T, d_model) each
    T, d_model = Q.shape
    d_head = d_model // h
    split = split or (lambda M: M.reshape(T, h, d_head).transpose(1, 0, 2))  # (T, d_model) -> (h, T, d_head)
    merge = merge or (lambda O: O.transpose(1, 0, 2).reshape(T, d_model))  # (h, T, d_head) -> (T, d_model)
    heads = _heads_attend(split(Q), split(K), split(V), np.sqrt(d_head) if divisor is None else divisor, axis)
    concat = merge(heads)  # (T, d_model)
    return concat if W_o is None else concat @ W_o  # (T, d_model) @ (d_model, d_model) -> (T, d_model)


def _bare_reshape(X, W_q, W_k, W_v, W_o, n_heads):
    T, d_model = X.shape[0], W_q.shape[1]
    return _mha(X, W_q, W_k, W_v, W_o, n_heads, split=lambda M: M.reshape(n_heads, T, d_model // n_heads),
                merge=lambda O: O.reshape(T, d_model))


def _heads_as_tokens(X, W_q, W_k, W_v, W_o, n_heads):
    T, d_model = X.shape[0], W_q.shape[1]
    return _mha(X, W_q, W_k, W_v, W_o, n_heads, split=lambda M: M.reshape(T, n_heads, d_model // n_heads),
                merge=lambda O: O.reshape(T, d_model))


def _merge_without_transpose(X, W_q, W_k, W_v, W_o, n_heads):
    T, d_model = X.shape[0], W_q.shape[1]
    return _mha(X, W_q, W_k, W_v, W_o, n_heads, merge=lambda O: O.reshape(T, d_model))


def _reversed_heads(X, W_q, W_k, W_v, W_o, n_heads):
    return _mha(X, W_q, W_k, W_v, W_o, n_heads, merge=lambda O: np.concatenate(list(O[::-1]), axis=-1))


def _interleaved(X, W_q, W_k, W_v, W_o, n_heads):
    T, d_model = X.shape[0], W_q.shape[1]
    d_head = d_model // n_heads
    return _mha(X, W_q, W_k, W_v, W_o, n_heads,
                split=lambda M: M.reshape(T, d_head, n_heads).transpose(2, 0, 1),  # head i: columns i, i+h, ...
                merge=lambda O: O.transpose(1, 2, 0).reshape(T, d_model))


def _interleaved_merge(X, W_q, W_k, W_v, W_o, n_heads):
    T, d_model = X.shape[0], W_q.shape[1]
    return _mha(X, W_q, W_k, W_v, W_o, n_heads, merge=lambda O: O.transpose(1, 2, 0).reshape(T, d_model))


# Each typical mistake as the wrong function a student writes; the first whose output matches is named.
_MULTI_HEAD_MISTAKES = {
    "the heads were cut by a bare reshape, Q.reshape(n_heads, T, d_head), with no transpose: that cuts Q's "
    "rows in reading order, so one head's rows mix pieces of different tokens. Head i is the column block "
    "Q[:, i*d_head:(i+1)*d_head]: reshape to (T, n_heads, d_head), then swap the first two axes.": _bare_reshape,
    "the heads were cut by Q.reshape(T, n_heads, d_head) but the first two axes were never swapped, so the "
    "attention ran between the heads of one token instead of between tokens. Swap to (n_heads, T, d_head) "
    "before attending.": _heads_as_tokens,
    "the heads were split right but merged by a bare reshape, (n_heads, T, d_head) -> (T, d_model), without "
    "swapping heads and tokens back first: a row of the result mixes different tokens.": _merge_without_transpose,
    "the heads were concatenated in the wrong order (last head first): head i's output goes into column block "
    "i, in the order of the heads.": _reversed_heads,
    "each head got every n_heads-th column (Q[:, i::n_heads], e.g. a reshape to (T, d_head, n_heads)); head i "
    "owns the contiguous column block Q[:, i*d_head:(i+1)*d_head].": _interleaved,
    "the heads' columns were interleaved when merging (axes in the order (T, d_head, n_heads)); keep each "
    "head's columns together: (T, n_heads, d_head), then reshape.": _interleaved_merge,
    "W_o is missing: this is the concatenation of the heads. Multiply it by W_o.":
        lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, None, n_heads),
    "W_o is transposed: the concatenated heads (T, d_model) are multiplied by W_o as it is, concat @ W_o.":
        lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, W_o.T, n_heads),
    "scaled by √d_model instead of √d_head: each head compares vectors of d_head = d_model / n_heads numbers, "
    "so divide its scores by √d_head.":
        lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, W_o, n_heads, divisor=np.sqrt(W_q.shape[1])),
    "not scaled: divide each head's scores by √d_head.":
        lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, W_o, n_heads, divisor=1.0),
    "scaled by d_head instead of √d_head: divide each head's scores by np.sqrt(d_head).":
        lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, W_o, n_heads,
                                                    divisor=W_q.shape[1] / n_heads),
    "the softmax ran over the queries (axis -2), so columns of the attention weights sum to 1; it must run "
    "over the keys, the last axis.":
        lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, W_o, n_heads, axis=-2),
    "the softmax ran over the heads (axis 0 of the (n_heads, T, T) scores): it must run over the keys, the "
    "last axis, within each head.":
        lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, W_o, n_heads, axis=0),
    "this is ONE head over all d_model columns (n_heads was not used): cut Q, K, V into n_heads column blocks "
    "and attend within each.": lambda X, W_q, W_k, W_v, W_o, n_heads: _mha(X, W_q, W_k, W_v, W_o, 1),
}


def _rng_case(T: int, d_in: int, d_model: int, n_heads: int, seed: int, what: str = "") -> Case:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d_in))  # (T, d_in)
    W_q, W_k, W_v = (rng.standard_normal((d_in, d_model)) for _ in range(3))  # (d_in, d_model) each
    W_o = rng.standard_normal((d_model, d_model))  # (d_model, d_model)
    return Case(f"X of shape {(T, d_in)}, W_q, W_k, W_v {(d_in, d_model)}, n_heads = {n_heads}{what} "
                f"(random, seed {seed})", (X, W_q, W_k, W_v, W_o, n_heads))


def _sentence_case() -> Case:
    W_q, W_k, W_v = two_heads()  # (6, 4) each: two heads of d_head = 2
    W_o = np.random.default_rng(0).standard_normal((4, 4))  # (d_model, d_model)
    return Case("the running sentence, X = embeddings() (8, 6) with two_heads()'s W_q, W_k, W_v (6, 4), "
                "n_heads = 2 and a random W_o (4, 4), seed 0", (embeddings(), W_q, W_k, W_v, W_o, 2))


SPEC_MULTI_HEAD_ATTENTION = Spec(
    name="multi_head_attention",
    broadcast=KEEPDIMS,  # a row max or sum written without keepdims=True: say so
    reference=_multi_head_attention,
    cases=[
        _rng_case(5, 3, 6, 3, 1),  # first: √d_model ≠ d_head here (the running sentence has d_head = 2 = √4)
        _sentence_case(),
        _rng_case(1, 4, 4, 2, 2, ", one token"),
        _rng_case(4, 4, 8, 4, 3, ", T = n_heads"),
        _rng_case(3, 5, 6, 2, 4),
        _rng_case(4, 3, 4, 1, 5, ", one head"),
    ],
    mistakes=_MULTI_HEAD_MISTAKES,
    hint="Hint: Q, K, V = X @ W_q, X @ W_k, X @ W_v; head i attends with columns i*d_head:(i+1)*d_head of each, "
    "divided by √d_head; concatenate the heads' outputs in order, then @ W_o.",
    done=" (several widths and numbers of heads, one token, the running sentence)",
)


@exercise_check
def check_multi_head_attention(fn: object) -> Verdict:
    """Build: the student's multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads) -> (T, d_model), mistakes named."""
    return check_function(fn, SPEC_MULTI_HEAD_ATTENTION)
