"""Exercise checks for notebook 06 (masks and cross-attention): causal and padding masks, a masked row, cross-attention.

Shapes: T tokens, B sentences in a batch, T_q queries (rows) and T_k keys (columns). A mask is a
boolean array, True = "may attend" (the helpers' convention). The exercises:

1. ``check_causal_mask``: the causal mask for ``EX_T`` = 5 tokens, by hand, shape (5, 5).
2. ``check_padding_mask``: the key padding mask for ``EX_LENGTHS`` padded to ``EX_T_PAD`` tokens,
   shape (B, 1, T) = (3, 1, 5), as ``helpers.attention.padding_mask`` returns it.
3. ``check_masked_row``: the attention weights of one row of scores ``EX_SCORES`` under the mask
   ``EX_KEEP``, shape (4,).
4. ``check_cross_weights``: the cross-attention weights of the target "il était fatigué" (queries)
   on the running sentence (keys), with the adjective head, shape (T_q, T_k) = (3, 8).

The Build exercise: ``check_causal_attention(fn)`` calls the student's ``causal_attention(Q, K, V)``
(softmax(Q Kᵀ/√d_k + causal mask) V, shape (T, d_v)) on the inputs of ``SPEC_CAUSAL_ATTENTION`` with the
engine of ``helpers.checks.functions``, and names the typical mistakes (no mask, the mask after the softmax,
the mask transposed or without its diagonal, not scaled, K not transposed, ...).

Each ``check_...`` computes the right answer and the typical wrong ones with ``helpers``, prints one
verdict ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when right). None of them
raises on a wrong or missing answer. A mask given as numbers (0/1) instead of True/False is told so,
with what its pattern would be, since the helpers refuse a mask that is not boolean.
"""

from __future__ import annotations

import numpy as np

from helpers.attention import causal_mask, padding_mask, project_qkv, scaled_dot_product_attention, softmax
from helpers.checks import Verdict, check_array_any_shape, check_mask, exercise_check
from helpers.checks.functions import KEEPDIMS, Case, Spec, check_function
from helpers.sentence import adjective_head, embed, embeddings

__all__ = [
    "EX_T",
    "EX_LENGTHS",
    "EX_T_PAD",
    "EX_SCORES",
    "EX_KEEP",
    "EX_TARGET",
    "EX_TARGET_TWINS",
    "check_causal_mask",
    "check_padding_mask",
    "check_masked_row",
    "check_cross_weights",
    "SPEC_CAUSAL_ATTENTION",
    "check_causal_attention",
]

EX_T = 5  # exercise 1: a causal mask for 5 tokens
EX_LENGTHS = (3, 5, 1)  # exercise 2: three sentences of 3, 5 and 1 real tokens ...
EX_T_PAD = 5  # ... padded to 5 tokens
EX_SCORES = np.array([2.0, 0.0, 3.0, 1.0])  # exercise 3: one query's (scaled) scores on 4 keys
EX_KEEP = np.array([True, True, False, True])  # key 3 (index 2), the best-scoring one, is hidden
EX_TARGET = ("il", "était", "fatigué")  # exercise 4: the target tokens (queries) ...
EX_TARGET_TWINS = ("it", "was", "tired")  # ... made-up embeddings: each gets its English twin's features


# --------------------------------------------------------------------------- exercise 1


@exercise_check
def check_causal_mask(answer: object) -> Verdict:
    """Exercise 1: the causal mask for EX_T tokens: True where key j <= query i, shape (5, 5)."""
    T = EX_T
    right = causal_mask(T)  # (T, T) True on and below the diagonal
    ones = np.ones((T, T), dtype=bool)  # (T, T)
    mistakes = {
        "this is the upper triangle (np.triu, or j >= i): every token would see itself and the FUTURE. "
        "Row i is query i; it may see keys 0..i, on and below the diagonal.": np.triu(ones),
        "True and False are swapped: True means \"may attend\", so the allowed keys (j <= i) are True.": ~right,
        "the diagonal is missing (j < i): a token may attend to itself, and without that the first token "
        "would see nothing at all.": np.tril(ones, k=-1),
        "every entry is True: that is no mask; a causal mask hides the future keys (j > i).": ones,
    }
    hint = (f"Hint: entry [i, j] says whether query i may look at key j (T = {T}). Which keys may a token use "
            "when the model predicts the word after it?")
    return check_mask(answer, right, name="Exercise 1, causal mask", mistakes=mistakes, hint=hint)


# --------------------------------------------------------------------------- exercise 2


@exercise_check
def check_padding_mask(answer: object) -> Verdict:
    """Exercise 2: the key padding mask for EX_LENGTHS padded to EX_T_PAD tokens, shape (B, 1, T) = (3, 1, 5)."""
    lengths, T = np.array(EX_LENGTHS), EX_T_PAD
    right = padding_mask(lengths, T)  # (B, 1, T) True where key j < lengths[b]
    j = np.arange(T)  # (T,) key index
    flat = right[:, 0, :]  # (B, T)
    accept = {"correct (the full (B, T, T) form; (B, 1, T) says the same with less memory, by broadcasting).":
              np.broadcast_to(right, (len(lengths), T, T))}
    mistakes = {
        "one real token too many (j <= length): with keys counted from 0, key j is real when j < length.":
            (j <= lengths[:, None])[:, None, :],
        "one real token too few (j < length - 1): a sentence of length 3 has real keys 0, 1 and 2.":
            (j < lengths[:, None] - 1)[:, None, :],
        "True and False are swapped: True means \"may attend\", so the REAL tokens are True and the padding False.":
            ~right,
        "this pads on the left (the real tokens at the end); here the real tokens come first and the zero rows "
        "after them.": (j >= T - lengths[:, None])[:, None, :],
        f"the pattern is right, but the shape is (B, T) = {flat.shape}: add the query axis in the middle, "
        f"(B, 1, T) = {right.shape} (e.g. mask[:, None, :]), so that it broadcasts over the query rows.": flat,
        "the axis of length 1 is in the wrong place: (B, T, 1) would hide query ROWS. Padding hides KEYS, the "
        "last axis: (B, 1, T).": flat[:, :, None],
        "this is the transpose (T, B): one row per sentence, one column per key, then the query axis: (B, 1, T).":
            flat.T,
    }
    hint = ("Hint: sentence b has lengths[b] real tokens first, then padding. Compare the key positions "
            "0..T-1 with each length, then give the result an axis of length 1 for the queries.")
    return check_mask(answer, right, name="Exercise 2, padding mask", mistakes=mistakes, hint=hint, accept=accept)


# --------------------------------------------------------------------------- exercise 3


@exercise_check
def check_masked_row(answer: object) -> Verdict:
    """Exercise 3: the attention weights of the scores EX_SCORES with the keys EX_KEEP only, shape (4,)."""
    s, keep = EX_SCORES, EX_KEEP
    right = softmax(np.where(keep, s, -np.inf))  # (4,) the hidden key gets exactly 0
    after = softmax(s) * keep  # (4,) masked after the softmax, not renormalised
    mistakes = {
        f"you masked AFTER the softmax and did not renormalise: your row sums to {after.sum():.4f}, not 1. "
        "Mask the scores with -inf before the softmax (or divide by the row sum).": after,
        "the mask is not applied: key 3 (index 2) is hidden, so its weight must be 0.": softmax(s),
        "you hid the keys that are True: True means \"may attend\", so only key 3 (index 2) is hidden.":
            softmax(np.where(keep, -np.inf, s)),
        "you set the hidden score to 0 (scores * mask, for example), but e^0 = 1 still counts in the softmax: "
        "set it to -inf, so that e^-inf = 0.": softmax(s * keep),
        "you dropped the hidden key: keep all 4 entries, with weight 0 for key 3 (index 2).": softmax(s[keep]),
    }
    hint = "Hint: which score makes e^score exactly 0? Give it to the hidden key, then take the softmax of the row."
    return check_array_any_shape(answer, right, name="Exercise 3, masked row", mistakes=mistakes, hint=hint, exp=True)


# --------------------------------------------------------------------------- exercise 4


def _cross(X_q: np.ndarray, X_kv: np.ndarray, *, scale: float | None = None, axis: int = -1,
           mask: np.ndarray | None = None) -> np.ndarray:
    """Attention weights of queries from X_q on keys from X_kv with the adjective head (shape (len(X_q), len(X_kv)))."""
    W_q, W_k, W_v = adjective_head()  # (6, 2) each
    Q = X_q @ W_q  # (T_q, 6) @ (6, 2) -> (T_q, d_k)
    _, K, V = project_qkv(X_kv, W_q, W_k, W_v)  # (T_k, d_k), (T_k, d_k), (T_k, d_v)
    if axis != -1:
        return softmax(Q @ K.T / np.sqrt(Q.shape[1]), axis=axis)  # (T_q, T_k) every COLUMN sums to 1
    return scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)[1]  # (T_q, T_k)


def _swapped_scores(X_q: np.ndarray, X_kv: np.ndarray) -> np.ndarray:
    """softmax(K Qᵀ/√d_k) over its last axis: the right Q and K, multiplied the wrong way round (T_k, T_q)."""
    W_q, W_k, _ = adjective_head()  # (6, 2) each
    Q, K = X_q @ W_q, X_kv @ W_k  # (T_q, d_k), (T_k, d_k)
    return softmax(K @ Q.T / np.sqrt(Q.shape[1]))  # (T_k, d_k) @ (d_k, T_q) -> (T_k, T_q)


@exercise_check
def check_cross_weights(answer: object) -> Verdict:
    """Exercise 4: cross-attention weights, queries from EX_TARGET, keys from the running sentence, shape (3, 8)."""
    X_dec = embed(EX_TARGET_TWINS)  # (T_q=3, d=6)
    X_enc = embeddings()  # (T_k=8, d=6)
    right = _cross(X_dec, X_enc)  # (3, 8)
    T_q, T_k = right.shape
    mistakes = {
        f"you swapped the roles: the queries come from the TARGET ({T_q} tokens, the rows) and the keys from the "
        f"source sentence ({T_k} tokens, the columns); yours has shape {(T_k, T_q)}.": _cross(X_enc, X_dec),
        f"this is the transpose: rows are the {T_q} queries (the target), columns the {T_k} keys (the source).":
            right.T,
        f"this is softmax(K Qᵀ): one row per source token, with the softmax over the queries. The scores are "
        f"Q Kᵀ, shape ({T_q}, {T_k}): one row per query.": _swapped_scores(X_dec, X_enc),
        f"this is self-attention of the target ({T_q}×{T_q}): in cross-attention the keys come from the source "
        f"sentence, so the weights are {T_q}×{T_k}.": _cross(X_dec, X_dec),
        f"this is self-attention of the source sentence ({T_k}×{T_k}): the queries come from the target.":
            _cross(X_enc, X_enc),
        "the scores are not scaled: divide Q Kᵀ by √d_k = √2 before the softmax.": _cross(X_dec, X_enc, scale=1.0),
        "softmax ran over the queries (axis 0): every ROW (one query) must sum to 1, so use axis=-1.":
            _cross(X_dec, X_enc, axis=0),
        "you applied a causal mask: cross-attention needs none, since the whole source sentence is known before "
        "the translation starts.": _cross(X_dec, X_enc, mask=np.tril(np.ones((T_q, T_k), dtype=bool))),
    }
    hint = (f"Hint: Q from the target ({T_q} rows) with W_q, K from the source ({T_k} rows) with W_k; "
            "then softmax(Q Kᵀ/√d_k) over the keys.")
    return check_array_any_shape(answer, right, name="Exercise 4, cross-attention weights", mistakes=mistakes,
                                 hint=hint, exp=True)


# --------------------------------------------------------------------------- the Build exercise


def _causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The right answer, from the helpers: softmax(Q Kᵀ/√d_k, causal) V, shape (T, d_v)."""
    return scaled_dot_product_attention(Q, K, V, mask=causal_mask(len(Q)))[0]  # (T, d_v)


# The typical mistakes, each written as a student would write it (plain NumPy, no checks).


def _plain_softmax(S: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(S - S.max(axis=axis, keepdims=True))  # a row of only -inf gives nan, as in a student's code
    return e / e.sum(axis=axis, keepdims=True)


def _below(T: int, k: int = 0) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool), k=k)  # (T, T) True where key j <= query i + k


def _scaled(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    return Q @ K.T / np.sqrt(Q.shape[1])  # (T, d_k) @ (d_k, T) -> (T, T)


def _no_mask(Q, K, V):
    return _plain_softmax(_scaled(Q, K)) @ V


def _mask_after_softmax(Q, K, V):
    return (_plain_softmax(_scaled(Q, K)) * _below(len(Q))) @ V  # rows no longer sum to 1


def _mask_transposed(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q)).T, _scaled(Q, K), -np.inf)) @ V  # query i sees keys i..T-1


def _strict_inf(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q), -1), _scaled(Q, K), -np.inf)) @ V  # row 0: nan


def _strict_sentinel(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q), -1), _scaled(Q, K), -1e9)) @ V  # row 0: uniform


def _mask_by_zeros(Q, K, V):
    return _plain_softmax(_scaled(Q, K) * _below(len(Q))) @ V  # e^0 = 1 still counts


def _not_scaled(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q)), Q @ K.T, -np.inf)) @ V


def _scaled_by_d(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q)), Q @ K.T / Q.shape[1], -np.inf)) @ V


def _k_not_transposed(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q)), Q @ K / np.sqrt(Q.shape[1]), -np.inf)) @ V  # runs if T = d_k


def _softmax_over_queries(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q)), _scaled(Q, K), -np.inf), axis=0) @ V


def _weights_only(Q, K, V):
    return _plain_softmax(np.where(_below(len(Q)), _scaled(Q, K), -np.inf))  # (T, T), not multiplied by V


def _max_not_subtracted(Q, K, V):
    e = np.exp(np.where(_below(len(Q)), _scaled(Q, K), -np.inf))  # e^s overflows to inf for s > 709.78
    return e / e.sum(axis=-1, keepdims=True) @ V  # inf / inf = nan


def _build_cases() -> list[Case]:
    rng = np.random.default_rng(6)
    Q_s, K_s, V_s = (rng.standard_normal((4, 4)) for _ in range(3))  # square: Q @ K runs, weights look like output
    W_q, W_k, W_v = adjective_head()  # (6, 2) each
    Q_r, K_r, V_r = project_qkv(embeddings(), W_q, W_k, W_v)  # (8, 2) each: the lesson's running sentence
    one = (rng.standard_normal((1, 3)), rng.standard_normal((1, 3)), rng.standard_normal((1, 5)))
    wide = (rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 4)))
    tall = (rng.standard_normal((7, 4)), rng.standard_normal((7, 4)), rng.standard_normal((7, 2)))
    large = (rng.uniform(30, 40, (3, 2)), rng.uniform(30, 40, (3, 2)), rng.standard_normal((3, 2)))  # scores > 1,000
    return [
        Case("Q, K, V of shape (4, 4) each (random numbers)", (Q_s, K_s, V_s)),
        Case("the running sentence with the adjective head: Q, K, V of shape (8, 2) each", (Q_r, K_r, V_r)),
        Case("one token: Q, K of shape (1, 3), V of shape (1, 5)", one),
        Case("Q, K of shape (5, 3), V of shape (5, 4) (d_k ≠ d_v)", wide),
        Case("Q, K of shape (7, 4), V of shape (7, 2)", tall),
        Case("Q, K, V of shape (3, 2) with scores above 1,000", large),
    ]


SPEC_CAUSAL_ATTENTION = Spec(
    name="causal_attention",
    broadcast=KEEPDIMS,  # a row max or sum written without keepdims=True: say so
    reference=_causal_attention,
    cases=_build_cases(),
    mistakes={
        "there is no causal mask: query i sees every key, the future included. Hide the keys j > i (set their "
        "scores to -inf) before the softmax.": _no_mask,
        "you masked AFTER the softmax and did not renormalise, so the rows no longer sum to 1. Set the hidden "
        "scores to -inf before the softmax instead.": _mask_after_softmax,
        "the mask is transposed: query i sees keys i..T-1 (the upper triangle), i.e. the future. Query i may "
        "see keys 0..i, on and below the diagonal (np.tril).": _mask_transposed,
        "the diagonal is masked too (query i sees keys 0..i-1 only), so query 0 sees no key at all and its row is "
        "NaN. A token may attend to itself: keep j <= i.": _strict_inf,
        "the diagonal is masked too (query i sees keys 0..i-1 only); query 0 then sees no key and your -1e9 "
        "gives it uniform weights. A token may attend to itself: keep j <= i.": _strict_sentinel,
        "you multiplied the scores by the mask, so a hidden score becomes 0, and e^0 = 1 still counts in the "
        "softmax. Set hidden scores to -inf (np.where(mask, scores, -np.inf)).": _mask_by_zeros,
        "the scores are not scaled: divide Q Kᵀ by √d_k before the softmax.": _not_scaled,
        "the scores are divided by d_k: divide by √d_k, the square root.": _scaled_by_d,
        "K is not transposed: the scores are Q Kᵀ (Q @ K.T), one row per query and one column per key.":
            _k_not_transposed,
        "the softmax ran over the queries (axis 0): each ROW, one query's weights on the keys, must sum to 1, "
        "so use axis=-1.": _softmax_over_queries,
        "these are the attention weights (T, T): multiply them by V to get the output (T, d_v).": _weights_only,
        "exp overflowed: e^s is inf for a score s above about 709, and inf/inf is NaN. Subtract each row's maximum "
        "from its scores before np.exp (03): the weights stay the same and every exponent is <= 0.":
            _max_not_subtracted,
    },
    hint="Hint: scores = Q Kᵀ/√d_k (T, T); set the scores of the future keys (j > i) to -inf; softmax over the "
         "last axis; multiply by V.",
    done=": one token, the running sentence, square and non-square shapes, d_k ≠ d_v, large scores",
)


@exercise_check
def check_causal_attention(fn: object) -> Verdict:
    """The Build exercise: the student's causal_attention(Q, K, V) -> (T, d_v), on several inputs; names the mistake."""
    return check_function(fn, SPEC_CAUSAL_ATTENTION)
