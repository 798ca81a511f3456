"""Build exercise of notebook 01: check_attend(fn) on the student's attend(X) = softmax(X Xᵀ/√d) X.

The student's functions are written here in plain NumPy, as a student writes them (never with the check's own
wrong functions): the right one passes, each typical mistake is named in words, and every way a function can
fail to be an answer (raises, wrong shape, list, None, changes X in place, only the running shape) gets its sentence.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED, Verdict
from helpers.checks.nb01 import SPEC_ATTEND, check_attend
from helpers.sentence import embeddings


def sm(S: np.ndarray, axis: int = -1) -> np.ndarray:
    """A student's softmax, written by hand."""
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attend(X):
    d = X.shape[1]
    weights = sm(X @ X.T / np.sqrt(d))  # (T, T)
    return weights @ X  # (T, d)


def run(fn, capsys) -> tuple[Verdict, str]:
    capsys.readouterr()
    v = check_attend(fn)
    out = capsys.readouterr().out
    assert isinstance(v, Verdict) and out.count("\n") == 1, out  # one verdict line
    return v, out


def test_the_worked_solution_passes(capsys):
    v, out = run(attend, capsys)
    assert v and out.startswith("✅ attend: correct on all") and "one token" in out


def test_helpers_self_attention_passes(capsys):
    from helpers import self_attention

    assert run(lambda X: self_attention(X)[0], capsys)[0]


MISTAKES = {
    "not scaled": (lambda X: sm(X @ X.T) @ X, "not scaled"),
    "by d": (lambda X: sm(X @ X.T / X.shape[1]) @ X, "scaled by d instead of √d"),
    "by sqrt T": (lambda X: sm(X @ X.T / np.sqrt(len(X))) @ X, "scaled by √T, the number of tokens"),
    "times sqrt d": (lambda X: sm(X @ X.T * np.sqrt(X.shape[1])) @ X, "multiplied the scores by √d"),
    "axis 0": (lambda X: sm(X @ X.T / np.sqrt(X.shape[1]), axis=0) @ X, "softmax ran over axis 0"),
    "no keepdims": (lambda X: (lambda e: e / e.sum(axis=-1))(np.exp(X @ X.T / np.sqrt(X.shape[1]))) @ X,
                    "softmax ran over axis 0"),
    "weights transposed": (lambda X: sm(X @ X.T / np.sqrt(X.shape[1])).T @ X, "softmax ran over axis 0"),
    "whole matrix": (lambda X: (lambda e: e / e.sum())(np.exp(X @ X.T / np.sqrt(X.shape[1]))) @ X,
                     "one softmax over the whole (T, T) matrix"),
    "no softmax": (lambda X: (X @ X.T / np.sqrt(X.shape[1])) @ X, "no softmax"),
    "forgot @ X": (lambda X: sm(X @ X.T / np.sqrt(X.shape[1])), "you return the attention weights (T, T)"),
    "divided after softmax": (lambda X: sm(X @ X.T) @ X / np.sqrt(X.shape[1]), "you divided after the softmax"),
    "X^T @ weights": (lambda X: X.T @ sm(X @ X.T / np.sqrt(X.shape[1])), "Xᵀ @ weights gives (d, T)"),
    "weights @ X^T": (lambda X: sm(X @ X.T / np.sqrt(X.shape[1])) @ X.T, "weights @ Xᵀ: multiply"),
    "X @ weights": (lambda X: X @ sm(X @ X.T / np.sqrt(X.shape[1])), "X @ weights: the weights go on the left"),
    "X^T X, then X @": (lambda X: X @ sm(X.T @ X / np.sqrt(X.shape[1])), "your scores are Xᵀ X, (d, d)"),
    "X^T X, then @ X": (lambda X: sm(X.T @ X / np.sqrt(X.shape[1])) @ X, "only ran because T = d here"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES), ids=list(MISTAKES))
def test_each_mistake_is_named(mistake, capsys):
    fn, words = MISTAKES[mistake]
    v, out = run(fn, capsys)
    assert not v and out.startswith("❌ attend: on ") and words in out, out
    assert words not in run(None, capsys)[1]  # the words come from the diagnosis, not from the hint


def test_at_least_four_distinct_mistakes_with_their_own_sentence(capsys):
    sentences = {run(fn, capsys)[1].split(": ", 2)[2] for fn, _ in MISTAKES.values()}
    assert len(sentences) == len(MISTAKES) - 2  # no keepdims and the weights transposed: axis 0's sentence


def test_unanswered_stub_and_none(capsys):
    def stub(X):
        ...

    for fn in (None, ..., stub):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ attend: {NOT_ANSWERED}") and "Hint:" in out


def test_a_function_that_raises_names_the_line(capsys):
    def broken(X):
        d = X.shape[2]  # X has two axes: IndexError
        return sm(X @ X.T / np.sqrt(d)) @ X

    v, out = run(broken, capsys)
    assert not v and "raised IndexError (tuple index out of range" in out
    assert "line 2 of broken: `d = X.shape[2]" in out and "on X of shape (4, 4)" in out


def test_wrong_shape_list_nan_and_mutation(capsys):
    assert "your function returned shape (4, 1), expected (4, 4)" in run(lambda X: attend(X)[:, :1], capsys)[1]
    transposed = run(lambda X: attend(X).T if len(X) == 8 else attend(X), capsys)[1]
    assert "on the running sentence" in transposed and "the transpose of the right shape" in transposed
    assert "returned a Python list" in run(lambda X: attend(X).tolist(), capsys)[1]
    assert "holds NaN" in run(lambda X: attend(X) * np.nan, capsys)[1]

    def mutating(X):
        X -= X.mean()  # centres X in place: the caller's X changes
        return attend(X + 0)

    v, out = run(mutating, capsys)
    assert not v and "changed its input X in place" in out


def test_right_only_for_the_running_shape_names_the_input(capsys):
    running = attend(embeddings())  # (8, 6)

    def memorised(X):
        return attend(X) if X.shape == (8, 6) else running

    v, out = run(memorised, capsys)
    assert not v and "on X of shape (4, 4)" in out and "expected (4, 4)" in out

    def fixed_d(X):
        return sm(X @ X.T / np.sqrt(6)) @ X  # d = 6 typed in from the running sentence

    v, out = run(fixed_d, capsys)
    assert not v and "on X of shape (4, 4)" in out and "largest difference" in out


def test_cases_beyond_the_running_example():
    shapes = [c.args[0].shape for c in SPEC_ATTEND.cases]
    assert (8, 6) in shapes and any(T == 1 for T, _ in shapes) and any(T == d for T, d in shapes)
    assert len(set(shapes)) == len(shapes) >= 5
