"""Build exercise of notebook 04: check_multi_head_attention(fn) on the student's
multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads) -> (T, d_model), head i = column block i.

The student's functions are written here in plain NumPy (a loop over the heads, or reshapes), as a student writes
them: the right ones pass, each typical mistake is named in words, and raising, a wrong shape, a list, None,
changing an input in place and a function right only for the running sentence's shapes each get their sentence.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED, Verdict
from helpers.checks.nb04 import SPEC_MULTI_HEAD_ATTENTION, check_multi_head_attention


def sm(S: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads):
    """The worked solution: a loop over the heads' column blocks."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (T, d_model) each
    d_head = Q.shape[1] // n_heads
    outputs = []
    for i in range(n_heads):
        cols = slice(i * d_head, (i + 1) * d_head)  # head i's column block
        weights = sm(Q[:, cols] @ K[:, cols].T / np.sqrt(d_head))  # (T, T)
        outputs.append(weights @ V[:, cols])  # (T, d_head)
    return np.concatenate(outputs, axis=1) @ W_o  # (T, d_model) @ (d_model, d_model)


def mha(X, W_q, W_k, W_v, W_o, n_heads, *, split="right", merge="right", divisor=None, axis=-1, use_w_o=True):
    """The reshape version, with one slip switched on."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    T, d_model = Q.shape
    h, d_head = n_heads, d_model // n_heads
    splits = {
        "right": lambda M: M.reshape(T, h, d_head).transpose(1, 0, 2),
        "bare": lambda M: M.reshape(h, T, d_head),
        "no transpose": lambda M: M.reshape(T, h, d_head),
        "every h-th column": lambda M: np.stack([M[:, i::h] for i in range(h)]),
    }
    merges = {
        "right": lambda O: O.transpose(1, 0, 2).reshape(T, d_model),
        "bare": lambda O: O.reshape(T, d_model),
        "reversed": lambda O: np.concatenate([O[i] for i in reversed(range(h))], axis=1),
        "interleaved": lambda O: np.stack(list(O), axis=-1).reshape(T, d_model),
    }
    Qh, Kh, Vh = (splits[split](M) for M in (Q, K, V))
    S = Qh @ Kh.swapaxes(-1, -2) / (np.sqrt(d_head) if divisor is None else divisor)
    concat = merges[merge](sm(S, axis=axis) @ Vh)
    return concat @ W_o if use_w_o else concat


def run(fn, capsys) -> tuple[Verdict, str]:
    capsys.readouterr()
    v = check_multi_head_attention(fn)
    out = capsys.readouterr().out
    assert isinstance(v, Verdict) and out.count("\n") == 1, out
    return v, out


@pytest.mark.parametrize("fn", [multi_head_attention, mha], ids=["loop", "reshape"])
def test_the_worked_solutions_pass(fn, capsys):
    v, out = run(fn, capsys)
    assert v and out.startswith("✅ multi_head_attention: correct on all 6 inputs")


def test_helpers_multi_head_attention_passes(capsys):
    from helpers import multi_head_attention as helper

    assert run(lambda X, W_q, W_k, W_v, W_o, n_heads: helper(X, W_q, W_k, W_v, n_heads, W_o=W_o)[0], capsys)[0]


def slip(**kw):
    return lambda X, W_q, W_k, W_v, W_o, n_heads: mha(X, W_q, W_k, W_v, W_o, n_heads, **kw)


MISTAKES = {
    "bare reshape": (slip(split="bare", merge="bare"),
                     "bare reshape, Q.reshape(n_heads, T, d_head), with no transpose"),
    "no transpose": (slip(split="no transpose", merge="bare"), "the first two axes were never swapped"),
    "merge without transpose": (slip(merge="bare"), "merged by a bare reshape"),
    "reversed heads": (slip(merge="reversed"), "concatenated in the wrong order"),
    "every h-th column": (slip(split="every h-th column", merge="interleaved"), "every n_heads-th column"),
    "interleaved merge": (slip(merge="interleaved"), "interleaved when merging"),
    "W_o missing": (slip(use_w_o=False), "W_o is missing"),
    "W_o transposed": (lambda X, W_q, W_k, W_v, W_o, n: mha(X, W_q, W_k, W_v, W_o.T, n), "W_o is transposed"),
    "sqrt d_model": (lambda X, W_q, W_k, W_v, W_o, n: mha(X, W_q, W_k, W_v, W_o, n, divisor=np.sqrt(W_q.shape[1])),
                     "scaled by √d_model instead of √d_head"),
    "not scaled": (slip(divisor=1.0), "not scaled"),
    "by d_head": (lambda X, W_q, W_k, W_v, W_o, n: mha(X, W_q, W_k, W_v, W_o, n, divisor=W_q.shape[1] // n),
                  "scaled by d_head instead of √d_head"),
    "axis -2": (slip(axis=-2), "the softmax ran over the queries (axis -2)"),
    "axis 0": (slip(axis=0), "the softmax ran over the heads"),
    "one head": (lambda X, W_q, W_k, W_v, W_o, n: multi_head_attention(X, W_q, W_k, W_v, W_o, 1),
                 "this is ONE head over all d_model columns"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES), ids=list(MISTAKES))
def test_each_mistake_is_named(mistake, capsys):
    fn, words = MISTAKES[mistake]
    v, out = run(fn, capsys)
    assert not v and out.startswith("❌ multi_head_attention: on ") and words in out, out
    assert words not in run(None, capsys)[1]


def test_the_mistakes_get_their_own_sentences(capsys):
    sentences = {run(fn, capsys)[1].split(": ", 2)[2] for fn, _ in MISTAKES.values()}
    assert len(sentences) == len(MISTAKES)


def test_unanswered_stub_and_none(capsys):
    def stub(X, W_q, W_k, W_v, W_o, n_heads):
        ...

    for fn in (None, ..., stub):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ multi_head_attention: {NOT_ANSWERED}") and "Hint:" in out


def test_a_function_that_raises_names_the_line(capsys):
    def broken(X, W_q, W_k, W_v, W_o, n_heads):
        Q = X @ W_q
        heads = Q.reshape(len(X), n_heads, 3)  # d_head = 3 typed in
        return heads.reshape(len(X), -1) @ W_o

    v, out = run(broken, capsys)
    assert not v and "on X of shape (5, 3)" in out and "raised ValueError (cannot reshape array" in out
    assert "line 3 of broken: `heads = Q.reshape(len(X), n_heads, 3)" in out


def test_wrong_shape_list_and_mutation(capsys):
    out = run(lambda *a: multi_head_attention(*a)[:, :2], capsys)[1]
    assert "your function returned shape (5, 2), expected (5, 6)" in out
    assert "returned a Python list" in run(lambda *a: multi_head_attention(*a).tolist(), capsys)[1]

    def mutating(X, W_q, W_k, W_v, W_o, n_heads):
        W_o[:] = W_o.T  # "fixes" the orientation of W_o in place
        return multi_head_attention(X, W_q, W_k, W_v, W_o.T, n_heads)

    v, out = run(mutating, capsys)
    assert not v and "changed its input W_o in place" in out


def test_right_only_for_the_running_shape_names_the_input(capsys):
    def two_heads_only(X, W_q, W_k, W_v, W_o, n_heads):
        return multi_head_attention(X, W_q, W_k, W_v, W_o, 2)  # n_heads = 2 typed in

    v, out = run(two_heads_only, capsys)
    assert not v and "on X of shape (5, 3), W_q, W_k, W_v (3, 6), n_heads = 3" in out


def test_cases_beyond_the_running_example():
    cases = SPEC_MULTI_HEAD_ATTENTION.cases
    assert any("the running sentence" in c.label for c in cases)
    assert {c.args[-1] for c in cases} >= {1, 2, 3, 4}  # numbers of heads
    assert any(c.args[0].shape[0] == 1 for c in cases)  # one token
    assert any(c.args[0].shape[1] != c.args[1].shape[1] for c in cases)  # d_in ≠ d_model
