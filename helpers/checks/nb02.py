"""Exercise checks for notebook 02 (query, key, value): softmax((X W_q)(X W_k)ᵀ/√d_k)(X W_v).

The exercises share one small example, ``EX_X`` and ``EX_WQ`` / ``EX_WK`` / ``EX_WV``
(T = 4 tokens, d_in = 4 features, d_k = d_v = 4, so √d_k = 2). Everything is square
on purpose: the usual slips (K not transposed, W X instead of X W, X instead of V)
then still give an array of the right shape, and the check can name the slip.

Each ``check_...`` computes the right answer and the typical wrong ones with
``helpers.attention``, prints one verdict per array ("✅ ..." or "❌ ...: what is wrong")
and returns a Verdict (truthy when right). None of them raises on a wrong or missing answer.

The Build exercise, ``check_self_attention(fn)``, runs the student's own ``self_attention(X, W_q, W_k, W_v)``
on the inputs of ``SPEC_SELF_ATTENTION`` (helpers.checks.functions): the square example above first, where
the slips still run, then the running sentence and random shapes. Each mistake is a small wrong function below.
"""

from __future__ import annotations

import numpy as np

from helpers.attention import project_qkv, single_head_attention, softmax
from helpers.checks import Verdict, check_array, exercise_check
from helpers.checks.functions import KEEPDIMS, Case, Spec, check_function
from helpers.sentence import embeddings, pronoun_head

__all__ = [
    "EX_X",
    "EX_WQ",
    "EX_WK",
    "EX_WV",
    "EX_QUERY",
    "check_qkv",
    "check_scaled_scores",
    "check_weights",
    "check_output_query2",
    "SPEC_SELF_ATTENTION",
    "check_self_attention",
]

EX_X = np.array([[1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 1]])  # (T=4, d_in=4)
EX_WQ = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]])  # (d_in=4, d_k=4)
EX_WK = np.array([[0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 1, 0]])  # (d_in=4, d_k=4)
EX_WV = np.array([[1, 2, 0, 0], [0, 1, 2, 0], [0, 0, 1, 2], [2, 0, 0, 1]])  # (d_in=4, d_v=4)
EX_QUERY = 1  # exercise 4 asks for the output of query 2, i.e. row index 1

_ROUNDING = "text 001 approximates softmax([2, 4, 4]) by [0.0, 0.5, 0.5]: keep full precision"


def _parts() -> dict:
    """The exercise's right intermediates and the attention weights each typical slip produces."""
    Q, K, V = project_qkv(EX_X, EX_WQ, EX_WK, EX_WV)  # (T, d_k), (T, d_k), (T, d_v)
    d_k = Q.shape[-1]
    root = float(np.sqrt(d_k))
    S = Q @ K.T  # (T, d_k) @ (d_k, T) -> (T, T) unscaled scores
    scaled = S / root  # (T, T)
    every = np.exp(scaled - scaled.max())  # (T, T) for one softmax over all T*T entries
    no_transpose = Q @ K / root  # (T, d_k) @ (T, d_k) -> (T, T); only runs because T == d_k
    weights = {
        "right": softmax(scaled, axis=-1),  # (T, T) every row sums to 1
        "axis0": softmax(scaled, axis=0),  # (T, T) every column sums to 1
        "unscaled": softmax(S, axis=-1),  # (T, T)
        "by_dk": softmax(S / d_k, axis=-1),  # (T, T)
        "no_transpose": softmax(no_transpose, axis=-1),  # (T, T)
        "whole_matrix": every / every.sum(),  # (T, T) all entries together sum to 1
    }
    return {"Q": Q, "K": K, "V": V, "S": S, "d_k": d_k, "root": root, "scaled": scaled,
            "no_transpose": no_transpose, "weights": weights}


def _rounded(right: np.ndarray, decimals: range) -> dict[int, np.ndarray]:
    """right rounded to each number of decimals that actually changes it."""
    out = {}
    for d in decimals:
        r = np.round(right, d)  # same shape as right
        if not np.allclose(r, right, rtol=1e-6, atol=1e-8):
            out[d] = r
    return out


@exercise_check
def check_qkv(Q: object, K: object, V: object) -> Verdict:
    """Exercise 1: Q = X W_q, K = X W_k, V = X W_v for EX_X and EX_WQ, EX_WK, EX_WV."""
    p = _parts()
    answers = {"Q": Q, "K": K, "V": V}
    matrices = {"Q": ("W_q", EX_WQ), "K": ("W_k", EX_WK), "V": ("W_v", EX_WV)}
    ok = True
    for name, answer in answers.items():
        w_name, W = matrices[name]
        mistakes = {}
        for other in answers:
            if other != name:
                mistakes[f"this is {other} (X {matrices[other][0]}): {name} uses {w_name}."] = p[other]
        mistakes[f"this is {w_name} X: multiply the other way round, X {w_name} (tokens are rows)."] = W @ EX_X
        mistakes[f"this is X {w_name}ᵀ: use {w_name} as it is, shape (d_in, d_out)."] = EX_X @ W.T
        mistakes[f"this is X itself: {name} is X projected by {w_name}."] = EX_X
        hint = (f"Hint: tokens are the rows of EX_X. Which weight matrix makes {name}, and on which side of it does "
                "EX_X go?")
        ok &= bool(check_array(answer, p[name], name=f"Exercise 1, {name}", mistakes=mistakes, hint=hint))
    return bool(ok)


@exercise_check
def check_scaled_scores(answer: object) -> Verdict:
    """Exercise 2: the scaled scores Q Kᵀ / √d_k, shape (T, T)."""
    p = _parts()
    Q, K, S, d_k, root = p["Q"], p["K"], p["S"], p["d_k"], p["root"]
    formula_1 = EX_X @ EX_X.T / np.sqrt(EX_X.shape[1])  # (T, d_in) @ (d_in, T) -> (T, T)
    shifted = p["scaled"] - p["scaled"].max(axis=-1, keepdims=True)  # (T, T)
    mistakes = {
        f"these are the unscaled scores Q Kᵀ: divide by √d_k = √{d_k} = {root:g}.": S,
        f"you divided by d_k = {d_k}; divide by its square root √d_k = {root:g}.": S / d_k,
        f"you multiplied by √d_k; divide by it instead (Q Kᵀ / {root:g}).": S * root,
        "you used K without transposing it (Q @ K); a query meets the keys through Q @ K.T.": p["no_transpose"],
        "this is Qᵀ K, a (d_k, d_k) feature-by-feature table; the scores are token by token, Q Kᵀ.": Q.T @ K / root,
        "this is K Qᵀ: rows must be the queries and columns the keys, Q Kᵀ.": K @ Q.T / root,
        "this is X Xᵀ / √d (formula 1, no weight matrices): use the projected Q and K.": formula_1,
        "you subtracted each row's maximum: fine before softmax, but this asks for the scaled scores.": shifted,
    }
    hint = "Hint: the result has one row per query and one column per key. What is d_k here?"
    return check_array(answer, p["scaled"], name="Exercise 2, scaled scores", mistakes=mistakes, hint=hint)


@exercise_check
def check_weights(answer: object) -> Verdict:
    """Exercise 3: the attention weights softmax(Q Kᵀ / √d_k) over the keys (last axis), shape (T, T)."""
    p = _parts()
    w, d_k, root = p["weights"], p["d_k"], p["root"]
    mistakes = {
        "softmax ran over the queries (axis 0): each column sums to 1, but each ROW must (axis=-1).": w["axis0"],
        f"these attention weights come from unscaled scores: divide Q Kᵀ by √d_k = {root:g} before softmax.":
            w["unscaled"],
        f"you divided the scores by d_k = {d_k}; divide by √d_k = {root:g}.": w["by_dk"],
        "these come from Q @ K (K not transposed); the scores are Q @ K.T.": w["no_transpose"],
        "one softmax over all 16 entries: the whole matrix sums to 1, but each row must (axis=-1).": w["whole_matrix"],
        "these are the scaled scores themselves: apply softmax over the last axis.": p["scaled"],
    }
    for d, r in _rounded(w["right"], range(5)).items():
        places = f"{d} decimal" + ("" if d == 1 else "s")
        mistakes[f"these are the right attention weights rounded to {places} ({_ROUNDING})."] = r
    hint = "Hint: which axis of your scaled scores runs over the keys?"
    return check_array(answer, w["right"], name="Exercise 3, attention weights", mistakes=mistakes, hint=hint,
                       exp=True)


@exercise_check
def check_output_query2(answer: object) -> Verdict:
    """Exercise 4: the output of query 2 (row index 1), weights[1] @ V, shape (d_v,)."""
    name = "Exercise 4, output of query 2"
    p = _parts()
    w, V, X, i = p["weights"], p["V"], EX_X, EX_QUERY
    out = {k: wk @ V for k, wk in w.items()}  # each (T, T) @ (T, d_v) -> (T, d_v)
    right = out["right"]  # (T, d_v)
    try:  # a ragged list or an odd object: check_array below says what is wrong with it
        got = None if answer is None or answer is Ellipsis else np.asarray(answer)
    except (TypeError, ValueError, OverflowError):
        got = None
    if got is not None:
        if got.shape == right.shape and got.dtype.kind in "iuf" and np.allclose(got, right):
            print(f"❌ {name}: this is the whole output (all {right.shape[0]} queries); query 2 is its row index 1.")
            return False
    mistakes = {
        "you weighted X instead of V: the output mixes the values, weights[1] @ V.": w["right"][i] @ X,
        "the attention weights came from softmax over the queries (axis 0); softmax over the keys (axis=-1).":
            out["axis0"][i],
        "the attention weights came from unscaled scores: divide Q Kᵀ by √d_k before softmax.": out["unscaled"][i],
        "the scores were divided by d_k; divide by √d_k.": out["by_dk"][i],
        "the scores came from Q @ K (K not transposed); use Q @ K.T.": out["no_transpose"][i],
        "this is query 1's output (row index 0); query 2 is row index 1.": right[0],
        "this is the third query's output (row index 2); query 2 is row index 1 (Python counts from 0).": right[2],
        "you used weights[:, 1], column 1 of the weights counting from 0 (what every query gives key 2); "
        "query 2's attention weights are the row weights[1].": w["right"][:, i] @ V,
        "these are query 2's weights, not its output: multiply these attention weights by V.": w["right"][i],
        "this is v_2, token 2's own value; the output mixes all the values, weighted.": V[i],
        "this is the plain average of the values (equal weights); use the attention weights.": V.mean(axis=0),
    }
    for d, r in _rounded(w["right"], range(4)).items():
        places = f"{d} decimal" + ("" if d == 1 else "s")
        mistakes[f"the attention weights were rounded to {places} before multiplying ({_ROUNDING})."] = (r @ V)[i]
    hint = "Hint: which row of your attention weights belongs to query 2 (NumPy counts from 0), and what does it mix?"
    return check_array(answer, right[i], name=name, mistakes=mistakes, hint=hint, exp=True)


# ------------------------------------------------------------------ Build: the student's self_attention


def _self_attention(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray) -> np.ndarray:
    """The right self_attention: softmax((X W_q)(X W_k)ᵀ/√d_k)(X W_v), (T, d_v), from helpers.attention."""
    return single_head_attention(X, W_q, W_k, W_v)[0]


def _attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, divisor: float, axis: int = -1) -> np.ndarray:
    """softmax(Q Kᵀ / divisor, axis) V: the right formula when divisor = √d_k and axis = -1."""
    return softmax(Q @ K.T / divisor, axis=axis) @ V  # (T, T) @ (T, d_v) -> (T, d_v)


def _root_dk(W_q: np.ndarray) -> float:
    return float(np.sqrt(W_q.shape[1]))  # √d_k


# Each typical mistake as the wrong function a student writes; the first whose output matches is named.
_SELF_ATTENTION_MISTAKES = {
    "W_q and W_k swapped (or K Qᵀ instead of Q Kᵀ): the queries are X @ W_q, the keys X @ W_k, and the scores "
    "Q Kᵀ have one row per query.": lambda X, W_q, W_k, W_v: _attention(X @ W_k, X @ W_q, X @ W_v, _root_dk(W_q)),
    "K is not transposed: Q @ K multiplies each query with the columns of K, not with the keys; use Q @ K.T "
    "(this only ran because T = d_k here).":
        lambda X, W_q, W_k, W_v: softmax((X @ W_q) @ (X @ W_k) / _root_dk(W_q)) @ (X @ W_v),
    "not scaled: divide the scores Q Kᵀ by √d_k (d_k = W_q.shape[1], the width of the queries and keys).":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_v, 1.0),
    "scaled by d_k instead of √d_k: divide the scores by np.sqrt(d_k).":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_v, W_q.shape[1]),
    "scaled by √d_in, the width of X (X.shape[1]); divide by √d_k, the width of the queries and keys "
    "(W_q.shape[1]).": lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_v, np.sqrt(X.shape[1])),
    "scaled by √d_v, the width of V; divide by √d_k, the width of the queries and keys (W_q.shape[1]).":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_v, np.sqrt(W_v.shape[1])),
    "scaled by √T, the number of tokens; divide by √d_k, the width of the queries and keys (W_q.shape[1]).":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_v, np.sqrt(X.shape[0])),
    "you divided after the softmax (the attention weights, or the output) by √d_k: divide the scores Q Kᵀ, "
    "before the softmax.": lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_v, 1.0) / _root_dk(W_q),
    "the weight matrices are transposed (X @ W.T): use each as it is, shape (d_in, d_out), Q = X @ W_q "
    "(this only ran because the shapes are square here).":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q.T, X @ W_k.T, X @ W_v.T, _root_dk(W_q)),
    "the attention weights mix the rows of X, not the values: multiply them by V = X @ W_v.":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X, _root_dk(W_q)),
    "V was made with W_k (a copied line?): V = X @ W_v.":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_k, _root_dk(W_q)),
    "K was made with W_q (a copied line?): K = X @ W_k.":
        lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_q, X @ W_v, _root_dk(W_q)),
    "W X instead of X W: tokens are the rows of X, so each projection is X @ W (this only ran because the "
    "shapes are square here).": lambda X, W_q, W_k, W_v: _attention(W_q @ X, W_k @ X, W_v @ X, _root_dk(W_q)),
    "the softmax ran over axis 0 (the queries), so each COLUMN of the attention weights sums to 1; each ROW "
    "must (axis=-1).": lambda X, W_q, W_k, W_v: _attention(X @ W_q, X @ W_k, X @ W_v, _root_dk(W_q), axis=0),
    "no softmax: the scaled scores Q Kᵀ/√d_k multiply V directly. Take the softmax of each row first.":
        lambda X, W_q, W_k, W_v: (X @ W_q) @ (X @ W_k).T / _root_dk(W_q) @ (X @ W_v),
    "you return the attention weights (T, T): the output is one more step, the attention weights @ V.":
        lambda X, W_q, W_k, W_v: softmax((X @ W_q) @ (X @ W_k).T / _root_dk(W_q)),
}


def _rng_case(T: int, d_in: int, d_k: int, d_v: int, seed: int, what: str = "") -> Case:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d_in))  # (T, d_in)
    W_q, W_k = rng.standard_normal((d_in, d_k)), rng.standard_normal((d_in, d_k))  # (d_in, d_k) each
    W_v = rng.standard_normal((d_in, d_v))  # (d_in, d_v)
    return Case(f"X of shape {(T, d_in)}, W_q and W_k {(d_in, d_k)}, W_v {(d_in, d_v)}{what} (random, seed {seed})",
                (X, W_q, W_k, W_v))


SPEC_SELF_ATTENTION = Spec(
    name="self_attention",
    broadcast=KEEPDIMS,  # a row max or sum written without keepdims=True: say so
    reference=_self_attention,
    cases=[
        Case("the exercises' EX_X, EX_WQ, EX_WK, EX_WV, all (4, 4)",
             tuple(M.astype(np.float64) for M in (EX_X, EX_WQ, EX_WK, EX_WV))),
        Case("the running sentence, X = embeddings() (8, 6) with pronoun_head()'s W_q, W_k, W_v (6, 2)",
             (embeddings(), *pronoun_head())),
        _rng_case(1, 3, 2, 4, 1, ", one token"),
        _rng_case(5, 3, 2, 6, 2),  # √d_v = √6: no other divisor here (√4 would be d_k = 2)
        _rng_case(3, 6, 3, 2, 3, ", T = d_k"),
        _rng_case(4, 4, 4, 4, 4, ", all square"),
    ],
    mistakes=_SELF_ATTENTION_MISTAKES,
    hint="Hint: first Q, K, V, each X @ its weight matrix; then attention as in 01 with Q and K in place of X: "
    "softmax(Q Kᵀ/√d_k) over each row, times V.",
    done=" (square and non-square weight matrices, one token, the running sentence)",
)


@exercise_check
def check_self_attention(fn: object) -> Verdict:
    """Build: the student's self_attention(X, W_q, W_k, W_v) -> (T, d_v), run on several inputs, mistakes named."""
    return check_function(fn, SPEC_SELF_ATTENTION)
