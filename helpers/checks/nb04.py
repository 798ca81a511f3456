"""Exercise checks of notebook 04 (multi-head attention): split, merge, per-head scale, W_o.

Shapes: T tokens, d_model = h · d_head columns, h heads, d_head columns per head,
d_out columns after the output projection W_o.

Each check recomputes the right answer with ``helpers.attention`` from the inputs the
notebook passes in, together with the arrays the typical mistakes produce, and prints
one verdict (see ``helpers.checks.check_array``). Mistakes whose result has another
shape than the right answer (e.g. the split without the transpose, (T, h, d_head)) are
recognised here before the shape comparison, so the student hears which mistake it is.
"""

from __future__ import annotations

import numpy as np

from helpers.attention import merge_heads, scaled_dot_product_attention, split_heads
from helpers.checks import Verdict, check_array_any_shape, exercise_check, input_array
from helpers.validate import check_int, check_qk_width, check_weight

__all__ = ["check_split_heads", "check_merge_heads", "check_head_weights", "check_output_projection"]


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
