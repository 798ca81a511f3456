"""Build exercise of notebook 02: check_self_attention(fn) on the student's self_attention(X, W_q, W_k, W_v).

The student's functions are written here in plain NumPy, as a student writes them: the right one passes, each
typical mistake is named in words, and raising, a wrong shape, a list, None, changing an input in place and a
function right only for the running sentence's shapes each get their sentence.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED, Verdict
from helpers.checks.nb02 import SPEC_SELF_ATTENTION, check_self_attention


def sm(S: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (T, d_k), (T, d_k), (T, d_v)
    d_k = K.shape[1]
    weights = sm(Q @ K.T / np.sqrt(d_k))  # (T, T)
    return weights @ V  # (T, d_v)


def run(fn, capsys) -> tuple[Verdict, str]:
    capsys.readouterr()
    v = check_self_attention(fn)
    out = capsys.readouterr().out
    assert isinstance(v, Verdict) and out.count("\n") == 1, out
    return v, out


def test_the_worked_solution_passes(capsys):
    v, out = run(self_attention, capsys)
    assert v and out.startswith("✅ self_attention: correct on all 6 inputs")


def test_helpers_single_head_attention_passes(capsys):
    from helpers import single_head_attention

    assert run(lambda X, W_q, W_k, W_v: single_head_attention(X, W_q, W_k, W_v)[0], capsys)[0]


def qkv_attention(X, W_q, W_k, W_v, *, q=None, k=None, v=None, divisor=None, axis=-1, transpose=True,
                  softmax=True, times_v=True):
    """The student's function with one slip switched on: other Q/K/V, divisor, axis, no transpose, ..."""
    Q = X @ W_q if q is None else q
    K = X @ W_k if k is None else k
    V = X @ W_v if v is None else v
    S = (Q @ K.T if transpose else Q @ K) / (np.sqrt(W_q.shape[1]) if divisor is None else divisor)
    w = sm(S, axis=axis) if softmax else S
    return w @ V if times_v else w


MISTAKES = {
    "W_q/W_k swapped": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, q=X @ Wk, k=X @ Wq), "W_q and W_k swapped"),
    "K Q^T": (lambda X, Wq, Wk, Wv: sm((X @ Wk) @ (X @ Wq).T / np.sqrt(Wq.shape[1])) @ (X @ Wv),
              "K Qᵀ instead of Q Kᵀ"),
    "K not transposed": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, transpose=False), "K is not transposed"),
    "not scaled": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, divisor=1.0), "not scaled"),
    "by d_k": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, divisor=Wq.shape[1]),
               "scaled by d_k instead of √d_k"),
    "by sqrt d_in": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, divisor=np.sqrt(X.shape[1])),
                     "scaled by √d_in, the width of X"),
    "by sqrt d_v": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, divisor=np.sqrt(Wv.shape[1])),
                    "scaled by √d_v, the width of V"),
    "by sqrt T": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, divisor=np.sqrt(len(X))),
                  "scaled by √T, the number of tokens"),
    "divided after softmax": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, divisor=1.0) / np.sqrt(Wq.shape[1]),
                              "you divided after the softmax"),
    "W transposed": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, q=X @ Wq.T, k=X @ Wk.T, v=X @ Wv.T),
                     "the weight matrices are transposed"),
    "X instead of V": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, v=X), "mix the rows of X, not the values"),
    "V from W_k": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, v=X @ Wk), "V was made with W_k"),
    "K from W_q": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, k=X @ Wq), "K was made with W_q"),
    "W X": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, q=Wq @ X, k=Wk @ X, v=Wv @ X), "W X instead of X W"),
    "axis 0": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, axis=0), "softmax ran over axis 0"),
    "no softmax": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, softmax=False), "no softmax"),
    "forgot @ V": (lambda X, Wq, Wk, Wv: qkv_attention(X, Wq, Wk, Wv, times_v=False),
                   "you return the attention weights (T, T)"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES), ids=list(MISTAKES))
def test_each_mistake_is_named(mistake, capsys):
    fn, words = MISTAKES[mistake]
    v, out = run(fn, capsys)
    assert not v and out.startswith("❌ self_attention: on ") and words in out, out
    assert words not in run(None, capsys)[1]


def test_the_mistakes_get_their_own_sentences(capsys):
    sentences = {run(fn, capsys)[1].split(": ", 2)[2] for fn, _ in MISTAKES.values()}
    assert len(sentences) == len(MISTAKES) - 1  # "W_q/W_k swapped" and "K Qᵀ" are one mistake, one sentence


def test_the_square_slips_are_named_on_a_square_case(capsys):
    out = run(MISTAKES["K not transposed"][0], capsys)[1]
    assert "on the exercises' EX_X" in out and "only ran because T = d_k here" in out

    def k_not_transposed_on_t_equal_dk(X, W_q, W_k, W_v):  # right where the slip cannot run
        if X.shape[0] != W_q.shape[1] or X.shape == (4, 4):
            return self_attention(X, W_q, W_k, W_v)
        return qkv_attention(X, W_q, W_k, W_v, transpose=False)

    out = run(k_not_transposed_on_t_equal_dk, capsys)[1]
    assert "T = d_k (random, seed 3)" in out and "K is not transposed" in out


def test_unanswered_stub_and_none(capsys):
    def stub(X, W_q, W_k, W_v):
        ...

    for fn in (None, ..., stub):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ self_attention: {NOT_ANSWERED}") and "Hint:" in out


def test_a_function_that_raises_names_the_line(capsys):
    def broken(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        scores = Q @ K.T / np.sqrt(d_k)  # noqa: F821 - d_k never defined
        return sm(scores) @ V

    v, out = run(broken, capsys)
    assert not v and "on the exercises' EX_X" in out and "raised NameError (name 'd_k' is not defined" in out
    assert "line 3 of broken: `scores = Q @ K.T / np.sqrt(d_k)" in out


def test_wrong_shape_list_and_mutation(capsys):
    assert "your function returned shape (4, 1), expected (4, 4)" in run(
        lambda X, Wq, Wk, Wv: self_attention(X, Wq, Wk, Wv)[:, :1], capsys)[1]
    assert "returned a Python list" in run(lambda X, Wq, Wk, Wv: self_attention(X, Wq, Wk, Wv).tolist(), capsys)[1]
    assert "returned a Python tuple" in run(lambda X, Wq, Wk, Wv: (self_attention(X, Wq, Wk, Wv), None), capsys)[1]

    def mutating(X, W_q, W_k, W_v):
        W_q /= np.sqrt(W_q.shape[1])  # folds the scale into W_q, in place
        return sm((X @ W_q) @ (X @ W_k).T) @ (X @ W_v)

    v, out = run(mutating, capsys)
    assert not v and "changed its input W_q in place" in out


def test_right_only_for_the_running_shape_names_the_input(capsys):
    def memorised(X, W_q, W_k, W_v):
        if X.shape == (4, 4):
            return self_attention(X, W_q, W_k, W_v)
        return sm((X @ W_q) @ (X @ W_k).T / np.sqrt(3)) @ (X @ W_v)  # a d_k typed in: 3

    v, out = run(memorised, capsys)
    assert not v and "on the running sentence" in out and "largest difference" in out


def test_cases_beyond_the_running_example():
    shapes = [tuple(a.shape for a in c.args) for c in SPEC_SELF_ATTENTION.cases]
    assert ((8, 6), (6, 2), (6, 2), (6, 2)) in shapes
    assert any(x[0] == 1 for x, *_ in shapes)  # one token
    assert any(x[0] == wq[1] != x[1] for x, wq, _, _ in shapes)  # T = d_k, X not square
    assert any(wq[1] != wv[1] for _, wq, _, wv in shapes)  # d_v ≠ d_k
