"""The Build exercise of notebook 06: check_causal_attention(fn) on a student's causal_attention(Q, K, V).

The right function passes; each typical mistake, written here as a student would write it (plain NumPy, not the
check module's own functions), gets its own sentence and the input it showed on; a function that raises, returns
the wrong shape, a list or None, or changes its input gets its sentence; one right only for the running sentence's
shape fails naming another input. Outputs are compared by the engine with np.allclose (rtol 1e-6, atol 1e-9).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED
from helpers.checks.nb06 import SPEC_CAUSAL_ATTENTION, check_causal_attention

SQUARE = "on Q, K, V of shape (4, 4) each (random numbers)"


def solution(Q, K, V):
    """The worked solution of the notebook."""
    T, d_k = Q.shape
    scores = Q @ K.T / np.sqrt(d_k)  # (T, T)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)  # future keys hidden
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)  # (T, T) rows sum to 1
    return weights @ V  # (T, d_v)


def with_sentinel(Q, K, V):
    """-1e9 instead of -inf: e^(-1e9 - max) is exactly 0, so the same numbers."""
    T = len(Q)
    scores = Q @ K.T / np.sqrt(K.shape[1])
    scores[np.triu_indices(T, k=1)] = -1e9
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ V


def masked_then_renormalised(Q, K, V):
    """Mask after the softmax AND renormalise: the same weights, so right."""
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w * np.tril(np.ones_like(w))
    return w / w.sum(-1, keepdims=True) @ V


def loop_version(Q, K, V):
    """Row by row: query i over keys 0..i."""
    out = np.zeros((Q.shape[0], V.shape[1]))
    for i in range(len(Q)):
        s = K[: i + 1] @ Q[i] / np.sqrt(Q.shape[1])  # (i+1,)
        w = np.exp(s - s.max())
        out[i] = (w / w.sum()) @ V[: i + 1]
    return out


def run(fn, capsys):
    capsys.readouterr()
    v = check_causal_attention(fn)
    return v, capsys.readouterr().out


@pytest.mark.parametrize("fn", [solution, with_sentinel, masked_then_renormalised, loop_version])
def test_right_functions_pass(fn, capsys):
    v, out = run(fn, capsys)
    assert v, out
    assert out.startswith(f"✅ causal_attention: correct on all {len(SPEC_CAUSAL_ATTENTION.cases)} inputs"), out


def _softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _tril(T, k=0):
    return np.tril(np.ones((T, T), dtype=bool), k=k)


MISTAKES = {  # a wrong function -> the words its verdict must hold
    "no-mask": (lambda Q, K, V: _softmax(Q @ K.T / np.sqrt(Q.shape[1])) @ V, "there is no causal mask"),
    "mask-after-softmax": (lambda Q, K, V: (_softmax(Q @ K.T / np.sqrt(Q.shape[1])) * _tril(len(Q))) @ V,
                           "masked AFTER the softmax and did not renormalise"),
    "mask-transposed": (lambda Q, K, V: _softmax(np.where(np.triu(np.ones((len(Q),) * 2)) > 0,
                                                          Q @ K.T / np.sqrt(Q.shape[1]), -np.inf)) @ V,
                        "the mask is transposed"),
    "strict-mask-inf": (lambda Q, K, V: _softmax(np.where(_tril(len(Q), -1), Q @ K.T / np.sqrt(Q.shape[1]),
                                                          -np.inf)) @ V, "its row is NaN"),
    "strict-mask-1e9": (lambda Q, K, V: _softmax(np.where(_tril(len(Q), -1), Q @ K.T / np.sqrt(Q.shape[1]),
                                                          -1e9)) @ V, "your -1e9 gives it uniform weights"),
    "mask-by-zeros": (lambda Q, K, V: _softmax(Q @ K.T / np.sqrt(Q.shape[1]) * _tril(len(Q))) @ V,
                      "multiplied the scores by the mask"),
    "not-scaled": (lambda Q, K, V: _softmax(np.where(_tril(len(Q)), Q @ K.T, -np.inf)) @ V,
                   "not scaled: divide Q Kᵀ by √d_k"),
    "scaled-by-d": (lambda Q, K, V: _softmax(np.where(_tril(len(Q)), Q @ K.T / K.shape[1], -np.inf)) @ V,
                    "divided by d_k: divide by √d_k"),
    "K-not-transposed": (lambda Q, K, V: _softmax(np.where(_tril(len(Q)), Q @ K / np.sqrt(Q.shape[1]),
                                                           -np.inf)) @ V, "K is not transposed"),
    "softmax-over-queries": (lambda Q, K, V: _softmax(np.where(_tril(len(Q)), Q @ K.T / np.sqrt(Q.shape[1]),
                                                               -np.inf), axis=0) @ V,
                             "the softmax ran over the queries (axis 0)"),
    "weights-not-output": (lambda Q, K, V: _softmax(np.where(_tril(len(Q)), Q @ K.T / np.sqrt(Q.shape[1]),
                                                             -np.inf)), "multiply them by V"),
}


def naive(Q, K, V):
    """Right, but the row maximum is not subtracted: e^s overflows on large scores."""
    T = len(Q)
    e = np.exp(np.where(_tril(T), Q @ K.T / np.sqrt(Q.shape[1]), -1e9))
    return (e / e.sum(axis=1, keepdims=True)) @ V


def test_an_overflowing_exp_is_named_on_the_large_scores(capsys):
    v, out = run(naive, capsys)
    assert not v and "on Q, K, V of shape (3, 2) with scores above 1,000: exp overflowed" in out, out
    assert "Subtract each row's maximum" in out, out


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_is_named(name, capsys):
    fn, words = MISTAKES[name]
    v, out = run(fn, capsys)
    assert not v
    assert out.startswith(f"❌ causal_attention: {SQUARE}: "), out
    assert words in out, out


def test_every_mistake_of_the_spec_is_reachable():
    """Each named mistake differs from the right answer and from the other mistakes on the first input."""
    args = SPEC_CAUSAL_ATTENTION.cases[0].args
    right = SPEC_CAUSAL_ATTENTION.reference(*args)
    with np.errstate(all="ignore"):
        made = {s: np.asarray(f(*args)) for s, f in SPEC_CAUSAL_ATTENTION.mistakes.items()
                if not s.startswith("exp overflowed")}  # right unless the scores are large: the last input
    for k, (s, a) in enumerate(made.items()):
        assert not (a.shape == right.shape and np.allclose(a, right, equal_nan=True)), s
        for t, b in list(made.items())[k + 1:]:
            assert not (a.shape == b.shape and np.allclose(a, b, equal_nan=True)), (s, t)
    assert len(made) >= 4


def test_the_inputs_cover_one_token_and_d_k_not_d_v():
    shapes = [tuple(a.shape for a in c.args) for c in SPEC_CAUSAL_ATTENTION.cases]
    assert ((1, 3), (1, 3), (1, 5)) in shapes
    assert any(q[1] != v[1] for q, _, v in shapes)
    assert ((8, 2), (8, 2), (8, 2)) in shapes  # the running sentence


def test_right_only_for_the_running_shape_names_the_input(capsys):
    def fixed(Q, K, V):
        return solution(Q, K, V) if Q.shape == (8, 2) else np.zeros((8, 2))

    v, out = run(fixed, capsys)
    assert not v and f"{SQUARE}: your function returned shape (8, 2), expected (4, 4)" in out, out


def test_one_token_only_fails_on_longer_inputs(capsys):
    def first_row_only(Q, K, V):  # right when T = 1 only: every query sees key 0
        w = np.ones((len(Q), 1))
        return w @ V[:1]

    v, out = run(first_row_only, capsys)
    assert not v and SQUARE in out and "the largest difference is at index" in out, out


def test_unanswered(capsys):
    for fn in (None, ..., lambda Q, K, V: None):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ causal_attention: {NOT_ANSWERED}") and "Hint: scores" in out, out


def test_raises_list_shape_and_mutation(capsys):
    def raising(Q, K, V):
        S = Q @ K.T / np.sqrt(Q.shape[1])
        return softmax(S) @ V  # noqa: F821 - a name the student never defined

    v, out = run(raising, capsys)
    assert not v and "raised NameError (name 'softmax' is not defined" in out, out
    assert "line 3 of raising: `return softmax(S) @ V" in out, out

    v, out = run(lambda Q, K, V: solution(Q, K, V).tolist(), capsys)
    assert not v and "return a NumPy array" in out, out

    v, out = run(lambda Q, K, V: solution(Q, K, V).T, capsys)  # square first case: the transpose still runs
    assert not v and SQUARE in out, out
    v, out = run(lambda Q, K, V: solution(Q, K, V)[:, :1], capsys)
    assert not v and "your function returned shape (4, 1), expected (4, 4)" in out, out

    def mutating(Q, K, V):
        Q /= np.sqrt(Q.shape[1])
        return solution(Q * np.sqrt(Q.shape[1]), K, V)

    v, out = run(mutating, capsys)
    assert not v and "changed its input Q in place" in out, out
