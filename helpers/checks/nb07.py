"""Exercise checks for notebook 07 (attention learns): the softmax Jacobian, dV and dP, Adam, a task's pattern.

The examples are small and hand-checkable:

    EX_P_ROW   (4,)     one row of attention weights, for the Jacobian diag(p) − p pᵀ (4, 4)
    EX_P       (3, 3)   attention weights P (rows sum to 1, not symmetric)
    EX_V       (3, 2)   values V (T = 3 tokens, d_v = 2)
    EX_DO      (3, 2)   dO = dL/d(output), the gradient arriving from the loss
    EX_W, EX_G (2, 3)   a weight matrix and its gradient, for one Adam step with EX_LR from the zero state
    EX_T                sequence length of the "next token" task whose attention pattern is asked for

Each ``check_...`` computes the right answer with ``helpers.backward`` / ``helpers.training`` and the
typical wrong ones (transposed, sign flipped, a missing term, ...), prints one verdict per array ("✅ ..."
or "❌ ...: what is wrong") and returns a Verdict (truthy when right). None raises on any answer.

The Build exercise: ``check_softmax_backward(fn)`` calls the student's ``softmax_backward(P, dP)`` (dS, row by row
over the last axis, any number of leading axes) on the inputs of ``SPEC_SOFTMAX_BACKWARD`` with the engine of
``helpers.checks.functions``, and names the typical mistakes (the sum over the wrong axis, the minus forgotten,
the diagonal of the Jacobian only, keepdims missing, ...).
"""

from __future__ import annotations

import numpy as np

from helpers.attention import causal_mask, softmax
from helpers.backward import attention_backward_steps, softmax_backward, softmax_jacobian
from helpers.checks import Verdict, answer_floats, check_array, exercise_check
from helpers.checks.functions import KEEPDIMS, Case, Spec, check_function
from helpers.training import adam_step, target_pattern

__all__ = [
    "EX_P_ROW",
    "EX_P",
    "EX_V",
    "EX_DO",
    "EX_W",
    "EX_G",
    "EX_LR",
    "EX_T",
    "check_softmax_jacobian",
    "check_dv_dp",
    "check_adam_step",
    "check_next_token_pattern",
    "SPEC_SOFTMAX_BACKWARD",
    "check_softmax_backward",
]

EX_P_ROW = np.array([0.1, 0.2, 0.3, 0.4])  # (T=4,) sums to 1
EX_P = np.array([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.25, 0.25, 0.5]])  # (T_q=3, T_k=3) rows sum to 1
EX_V = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])  # (T_k=3, d_v=2)
EX_DO = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]])  # (T_q=3, d_v=2)
EX_W = np.array([[0.7, -1.0, 2.0], [1.5, 0.8, -0.6]])  # (2, 3)
EX_G = np.array([[0.2, -0.5, 1.0], [-0.4, 0.1, 0.3]])  # (2, 3) its gradient
EX_LR = 0.1
EX_T = 5


@exercise_check
def check_softmax_jacobian(answer: object) -> Verdict:
    """Exercise 1: the Jacobian J[i, j] = ∂p_i/∂s_j = diag(p) − p pᵀ of the row EX_P_ROW, shape (4, 4)."""
    p = EX_P_ROW
    right = softmax_jacobian(p)  # (4, 4)
    mistakes = {
        "the sign is flipped: this is p pᵀ − diag(p); the diagonal p_i(1 − p_i) is positive.": -right,
        "this is −p pᵀ without diag(p): ∂p_i/∂s_i also has the term p_i (the diagonal is p_i − p_i²).":
            -np.outer(p, p),
        "this is diag(p) alone: every p_i also depends on the other scores, through −p_i p_j.": np.diag(p),
        "this is p pᵀ alone; J = diag(p) − p pᵀ.": np.outer(p, p),
        "you kept only the diagonal p_i(1 − p_i); the off-diagonal entries are −p_i p_j, not 0.":
            np.diag(p * (1 - p)),
        f"you subtracted the number p·p = {p @ p:g} (p.T @ p of a 1-D array is a dot product); "
        "the outer product p pᵀ is np.outer(p, p).": np.diag(p) - p @ p,
        "you subtracted p∘p (the squares p_j², the same in every row); the outer product p pᵀ has "
        "entries p_i p_j: np.outer(p, p).": np.diag(p) - p * p,
    }
    hint = "Hint: ∂p_i/∂s_j = p_i (1 − p_j) when i = j, and −p_i p_j otherwise."
    return check_array(answer, right, name="Exercise 1, softmax Jacobian", mistakes=mistakes, hint=hint)


@exercise_check
def check_dv_dp(dV: object, dP: object) -> Verdict:
    """Exercise 2: dV = Pᵀ dO (3, 2) and dP = dO Vᵀ (3, 3) for EX_P, EX_V, EX_DO."""
    P, V, dO = EX_P, EX_V, EX_DO
    # scores log P give softmax(log P) = P (each row of P sums to 1): the helper's backward pass on P itself
    st = attention_backward_steps(np.log(P), np.eye(3), V, dO, scale=1.0)  # Q (3, 3), K = I (3, 3), V (3, 2)
    right_dV, right_dP = st["dV"], st["dP"]  # Pᵀ dO (3, 2), dO Vᵀ (3, 3)
    dv_mistakes = {
        "this is P dO: a value row j is used by every query i with weight P[i, j], so it collects "
        "Σ_i P[i, j] dO[i], a column of P: Pᵀ dO.": P @ dO,
        "this is dO itself: each value row is mixed into the outputs by the weights, so its gradient "
        "is Pᵀ dO.": dO,
        "this is Pᵀ V (the forward mix, transposed); the gradient uses dO: Pᵀ dO.": P.T @ V,
        "the sign is flipped: dV = Pᵀ dO, no minus.": -right_dV,
    }
    dp_mistakes = {
        "this is V dOᵀ, the transpose: rows of dP are queries (like P), so dP = dO Vᵀ.": V @ dO.T,
        "you multiplied by P: that belongs to the next step (the softmax backward); dP = dO Vᵀ.": P * right_dP,
        "this is Pᵀ dO Vᵀ; the weights do not enter dP: dP = dO Vᵀ.": P.T @ right_dP,
        "the sign is flipped: dP = dO Vᵀ, no minus.": -right_dP,
    }
    ok = check_array(dV, right_dV, name="Exercise 2, dV", mistakes=dv_mistakes,
                     hint="Hint: dV has the shape of V, (3, 2); which matrix of shape (3, 3) can carry dO there?")
    ok_p = check_array(dP, right_dP, name="Exercise 2, dP", mistakes=dp_mistakes,
                       hint="Hint: dP has the shape of P, (3, 3): one row per query, one column per key.")
    return bool(ok) and bool(ok_p)


@exercise_check
def check_adam_step(answer: object) -> Verdict:
    """Exercise 3: EX_W after one Adam step with gradient EX_G, lr EX_LR, from the zero state (t = 1)."""
    W, g, lr, b1, b2, eps = EX_W, EX_G, EX_LR, 0.9, 0.999, 1e-8
    right = adam_step({"W": W}, {"W": g}, None, EX_LR)[0]["W"]  # (2, 3)
    m, v = (1 - b1) * g, (1 - b2) * g * g  # (2, 3) each, the moments after one step from 0
    mistakes = {
        "this is a plain gradient-descent step W − lr·g; Adam divides by √v̂, so each entry moves by "
        "about lr, whatever the size of its gradient.": W - lr * g,
        "you moved uphill: W + lr·m̂/√v̂; subtract the step to lower the loss.": W + lr * g / (np.abs(g) + eps),
        "you skipped the bias correction: after one step m = 0.1·g and v = 0.001·g², so divide by "
        "(1 − 0.9¹) and (1 − 0.999¹) first.": W - lr * m / (np.sqrt(v) + eps),
        "you divided by v̂, not by its square root √v̂.": W - lr * (m / (1 - b1)) / (v / (1 - b2) + eps),
        "this is the step −lr·m̂/(√v̂ + ε) alone; the new W is W plus that step.": right - W,
    }
    hint = "Hint: m̂ = g and v̂ = g² after the first step (with bias correction); W − lr·m̂/(√v̂ + ε)."
    # rtol 1e-5: with or without ε (10⁻⁸ next to √v̂ = |g| ≥ 0.1 here), a formula gets the same verdict
    return check_array(answer, right, name="Exercise 3, one Adam step", mistakes=mistakes, hint=hint, rtol=1e-5)


def _next_pattern(T: int) -> np.ndarray:
    """Output i is the input token at position i+1; the last position outputs its own token."""
    source = np.minimum(np.arange(T) + 1, T - 1)  # (T,) the position each output copies from
    return np.eye(T)[source]  # (T, T) row i one-hot at source[i]


@exercise_check
def check_next_token_pattern(answer: object) -> Verdict:
    """Exercise 4: the attention weights (EX_T, EX_T) that solve the "next token" task (0s and 1s)."""
    name = "Exercise 4, next-token pattern"
    T = EX_T
    right = _next_pattern(T)  # (T, T)
    mistakes = {
        "this is the transpose: row i is query i (where position i LOOKS), so row i has its 1 in column i+1.":
            right.T,
        "this is the previous-token pattern (below the diagonal); the next token is to the right, "
        "above the diagonal.": target_pattern("previous", T),
        f"row {T} is all zeros, but every row of attention weights sums to 1: the last position has no "
        f"next token, so it copies its own (column {T}).": np.eye(T, k=1),
        "this is the identity: every position copies itself, which leaves the sequence unchanged.": np.eye(T),
        "this is the reversal pattern (the anti-diagonal).": target_pattern("reverse", T),
    }
    got = answer_floats(answer)
    if got is not None and got.shape == right.shape and np.isfinite(got).all():
        known = [right, *mistakes.values()]
        sums = got.sum(axis=-1)  # (T,) one sum per query row
        bad = np.flatnonzero(np.abs(sums - 1) > 1e-6)
        if bad.size and not any(np.allclose(got, m) for m in known):
            i = int(bad[0])
            print(f"❌ {name}: row {i + 1} (index {i}) sums to {sums[i]:.4g}, but every row of attention "
                  "weights sums to 1 (a single 1 where that query looks).")
            return False
    hint = "Hint: row i is query i; put a 1 in the column of the key it must copy (Python counts from 0)."
    return check_array(answer, right, name=name, mistakes=mistakes, hint=hint)


# --------------------------------------------------------------------------- the Build exercise

# The typical mistakes, each a wrong softmax_backward(P, dP) on (..., T_q, T_k), as a student would write it.


def _sum_over_queries(P, dP):
    return P * (dP - np.sum(dP * P, axis=-2, keepdims=True))  # a column sum: axis 0 of a matrix, axis=1 of a batch


def _sum_over_batch(P, dP):
    return P * (dP - np.sum(dP * P, axis=0, keepdims=True))  # axis=0 of a batch of matrices


def _sum_of_everything(P, dP):
    return P * (dP - np.sum(dP * P))  # no axis: one number for all rows


def _no_keepdims(P, dP):
    return P * (dP - np.sum(dP * P, axis=-1))  # (..., T_q) broadcast along the rows: runs when T_q = T_k


def _no_minus(P, dP):
    return P * dP  # the diagonal term only, for every entry: dS = P ∘ dP


def _diagonal_only(P, dP):
    return dP * P * (1 - P)  # J's diagonal p_i (1 - p_i), the off-diagonal -p_i p_j dropped


def _sign_flipped(P, dP):
    return P * (np.sum(dP * P, axis=-1, keepdims=True) - dP)  # p pᵀ − diag(p) times dP


def _outer_p_missing(P, dP):
    return dP - np.sum(dP * P, axis=-1, keepdims=True)  # not multiplied by P


def _matrix_product(P, dP):
    return P * (dP - dP @ np.swapaxes(P, -1, -2))  # (..., T_q, T_q): runs when T_q = T_k


def _times_p_not_dp(P, dP):
    return P * (P - np.sum(P * P, axis=-1, keepdims=True))  # the Jacobian times P, not dP


def _build_cases() -> list[Case]:
    rng = np.random.default_rng(7)

    def weights(*shape: int) -> np.ndarray:
        return softmax(rng.standard_normal(shape))  # (..., T_q, T_k) rows sum to 1

    causal = softmax(np.where(causal_mask(4), rng.standard_normal((4, 4)), -np.inf))  # (4, 4) zeros above
    return [
        Case("P = EX_P (3, 3) and dP = EX_DO @ EX_V.T, the lesson's example", (EX_P.copy(), EX_DO @ EX_V.T)),
        Case("P, dP of shape (1, 4): one query", (weights(1, 4), rng.standard_normal((1, 4)))),
        Case("P, dP of shape (2, 5): 2 queries, 5 keys", (weights(2, 5), rng.standard_normal((2, 5)))),
        Case("causal weights P of shape (4, 4) (zeros above the diagonal)", (causal, rng.standard_normal((4, 4)))),
        Case("P, dP of shape (2, 3, 4): a batch of 2", (weights(2, 3, 4), rng.standard_normal((2, 3, 4)))),
        Case("P, dP of shape (2, 2, 3, 3): batch and heads", (weights(2, 2, 3, 3), rng.standard_normal((2, 2, 3, 3)))),
    ]


SPEC_SOFTMAX_BACKWARD = Spec(
    name="softmax_backward",
    broadcast=KEEPDIMS,  # a row max or sum written without keepdims=True: say so
    reference=softmax_backward,
    cases=_build_cases(),
    mistakes={
        "the row sums ran over the wrong axis (down the columns, over the queries): each query's softmax has its "
        "own sum over its keys, the LAST axis: np.sum(dP * P, axis=-1, keepdims=True) (axis=-1 also works with "
        "leading batch axes).": _sum_over_queries,
        "the sum ran over axis 0, the batch axis: each row has its own sum over its keys, the last axis "
        "(axis=-1, keepdims=True).": _sum_over_batch,
        "the sum has no axis, so it added up every entry of dP ∘ P: each row needs its own sum, "
        "np.sum(dP * P, axis=-1, keepdims=True).": _sum_of_everything,
        "keepdims=True is missing: the row sums, shape (..., T_q), were broadcast along each row instead of down "
        "it; np.sum(dP * P, axis=-1, keepdims=True) keeps them as a column (..., T_q, 1).": _no_keepdims,
        "this is P ∘ dP: the minus term is forgotten. Each p_i also depends on every other score (through −p_i p_j): "
        "dS = P ∘ (dP − rowsum(dP ∘ P)).": _no_minus,
        "this is dP ∘ P ∘ (1 − P), the Jacobian's diagonal p_i (1 − p_i) only: the off-diagonal entries −p_i p_j "
        "count too: dS = P ∘ (dP − rowsum(dP ∘ P)).": _diagonal_only,
        "the sign is flipped: dS = P ∘ (dP − rowsum(dP ∘ P)), not P ∘ (rowsum − dP).": _sign_flipped,
        "the outer P ∘ is missing: dS = P ∘ (dP − rowsum(dP ∘ P)); without it a masked key (P = 0) would still "
        "get a gradient.": _outer_p_missing,
        "you used the matrix product dP @ Pᵀ where each row needs its own dot product of dP's row with P's row: "
        "np.sum(dP * P, axis=-1, keepdims=True).": _matrix_product,
        "this is the Jacobian times P, not times dP: dS = P ∘ (dP − rowsum(dP ∘ P)).": _times_p_not_dp,
    },
    hint="Hint: for each row, dS = P ∘ (dP − rowsum(dP ∘ P)), the row's Jacobian diag(p) − p pᵀ times dP's row; "
         "sum over the last axis with keepdims=True, so that leading axes work too.",
    done=": the lesson's example, one query, non-square, causal zeros, and leading batch axes",
)


@exercise_check
def check_softmax_backward(fn: object) -> Verdict:
    """The Build exercise: the student's softmax_backward(P, dP) -> dS, on several inputs; names the mistake."""
    return check_function(fn, SPEC_SOFTMAX_BACKWARD)
