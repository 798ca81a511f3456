"""The Build exercise of notebook 07: check_softmax_backward(fn) on a student's softmax_backward(P, dP).

The right function passes (vectorised, and row by row with the Jacobian); each typical mistake, written here as a
student would write it (plain NumPy, not the check module's own functions), gets its own sentence and the input it
showed on; a function that raises, returns the wrong shape, a list or None, or changes its input gets its
sentence; one right only for matrices (no leading axes) fails naming the batch input. Outputs are compared by the
engine with np.allclose (rtol 1e-6, atol 1e-9).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED
from helpers.checks.nb07 import SPEC_SOFTMAX_BACKWARD, check_softmax_backward

EXAMPLE = "on P = EX_P (3, 3) and dP = EX_DO @ EX_V.T, the lesson's example"
BATCH = "on P, dP of shape (2, 3, 4): a batch of 2"


def solution(P, dP):
    """The worked solution of the notebook."""
    row_dot = np.sum(dP * P, axis=-1, keepdims=True)  # (..., T_q, 1)
    return P * (dP - row_dot)  # (..., T_q, T_k)


def jacobian_rows(P, dP):
    """Row by row with the Jacobian diag(p) − p pᵀ, over any leading axes."""
    dS = np.zeros_like(P, dtype=float)
    for idx in np.ndindex(P.shape[:-1]):
        p = P[idx]
        dS[idx] = (np.diag(p) - np.outer(p, p)) @ dP[idx]
    return dS


def einsum_version(P, dP):
    return P * dP - P * np.einsum("...j,...j->...", P, dP)[..., None]


def run(fn, capsys):
    capsys.readouterr()
    v = check_softmax_backward(fn)
    return v, capsys.readouterr().out


@pytest.mark.parametrize("fn", [solution, jacobian_rows, einsum_version])
def test_right_functions_pass(fn, capsys):
    v, out = run(fn, capsys)
    assert v, out
    assert out.startswith(f"✅ softmax_backward: correct on all {len(SPEC_SOFTMAX_BACKWARD.cases)} inputs"), out


MISTAKES = {  # a wrong function -> (the words its verdict must hold, the input it must show on)
    "sum-over-axis-0": (lambda P, dP: P * (dP - (dP * P).sum(axis=0, keepdims=True)),
                        "the row sums ran over the wrong axis", EXAMPLE),
    "axis-1-on-batches": (lambda P, dP: P * (dP - (dP * P).sum(axis=1, keepdims=True)),
                          "the row sums ran over the wrong axis", BATCH),
    "axis-0-on-batches": (lambda P, dP: P * (dP - (dP * P).sum(axis=0 if P.ndim > 2 else -1, keepdims=True)),
                          "the sum ran over axis 0, the batch axis", BATCH),
    "no-axis": (lambda P, dP: P * (dP - (dP * P).sum()), "the sum has no axis", EXAMPLE),
    "no-keepdims": (lambda P, dP: P * (dP - (dP * P).sum(axis=-1)), "keepdims=True is missing", EXAMPLE),
    "forgot-the-minus": (lambda P, dP: P * dP, "the minus term is forgotten", EXAMPLE),
    "diagonal-only": (lambda P, dP: dP * (P - P**2), "the Jacobian's diagonal p_i (1 − p_i) only", EXAMPLE),
    "sign-flipped": (lambda P, dP: -solution(P, dP), "the sign is flipped", EXAMPLE),
    "outer-P-missing": (lambda P, dP: dP - (dP * P).sum(axis=-1, keepdims=True), "the outer P ∘ is missing", EXAMPLE),
    "matrix-product": (lambda P, dP: P * (dP - dP @ P.T), "the matrix product dP @ Pᵀ", EXAMPLE),
    "times-P": (lambda P, dP: solution(P, P), "the Jacobian times P, not times dP", EXAMPLE),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_is_named(name, capsys):
    fn, words, where = MISTAKES[name]
    v, out = run(fn, capsys)
    assert not v
    assert out.startswith(f"❌ softmax_backward: {where}: "), out
    assert words in out, out


def test_every_mistake_of_the_spec_is_reachable():
    """Each named mistake differs from the right answer and from the other mistakes on the input it is named on:
    the lesson's example, or the batch for the batch axis."""
    for k in (0, 4):
        args = SPEC_SOFTMAX_BACKWARD.cases[k].args
        right = SPEC_SOFTMAX_BACKWARD.reference(*args)
        made = {}
        for s, f in SPEC_SOFTMAX_BACKWARD.mistakes.items():
            if k == 0 and "the batch axis" in s:
                continue  # a matrix has no batch axis: axis 0 is the queries' axis there, named first
            try:
                made[s] = np.asarray(f(*args))
            except ValueError:  # the keepdims and matrix-product slips run only when T_q = T_k
                assert k == 4 and ("keepdims" in s or "matrix product" in s), s
        for s, a in made.items():
            assert not (a.shape == right.shape and np.allclose(a, right)), s
            assert sum(a.shape == b.shape and np.allclose(a, b) for b in made.values()) == 1, s


def test_only_matrices_fails_on_the_batch(capsys):
    def matrices_only(P, dP):  # a loop over the first axis: right for (T_q, T_k), wrong with leading axes
        dS = np.zeros_like(P)
        for i in range(P.shape[0]):
            J = np.diag(P[i]) - np.outer(P[i], P[i])
            dS[i] = J @ dP[i]
        return dS

    v, out = run(matrices_only, capsys)
    assert not v and BATCH in out, out


def test_right_only_for_the_example_shape_names_the_input(capsys):
    def fixed(P, dP):
        return solution(P, dP) if P.shape == (3, 3) else np.zeros((3, 3))

    v, out = run(fixed, capsys)
    assert not v, out
    assert "on P, dP of shape (1, 4): one query: your function returned shape (3, 3), expected (1, 4)" in out, out


def test_unanswered(capsys):
    for fn in (None, ..., lambda P, dP: None):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ softmax_backward: {NOT_ANSWERED}") and "Hint: for each row" in out, out


def test_raises_list_shape_and_mutation(capsys):
    def raising(P, dP):
        J = np.diag(P) - np.outer(P, P)  # a matrix P: np.diag gives its diagonal (T,), the outer product (T², T²)
        return J @ dP

    v, out = run(raising, capsys)
    assert not v and "raised ValueError" in out and "line 2 of raising: `J = np.diag(P) - np.outer(P, P)" in out

    v, out = run(lambda P, dP: solution(P, dP).tolist(), capsys)
    assert not v and "return a NumPy array" in out, out

    v, out = run(lambda P, dP: solution(P, dP).sum(axis=-1), capsys)
    assert not v and f"{EXAMPLE}: your function returned shape (3,), expected (3, 3)." in out, out

    def mutating(P, dP):
        dP -= (dP * P).sum(axis=-1, keepdims=True)
        return P * dP

    v, out = run(mutating, capsys)
    assert not v and "changed its input dP in place" in out, out
