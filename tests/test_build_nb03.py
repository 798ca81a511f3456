"""Build exercise of notebook 03: check_stable_softmax(fn) on the student's stable_softmax(S), now on the engine.

Over the last axis, any number of leading axes (none, one, three), finite for scores up to ±1e4, rows holding
-inf entries (not all). The student's functions are written here in plain NumPy: the right one passes, each
typical mistake is named in words, and raising, a wrong shape, a list, None and a function right only for 2-D
scores get their sentence. An in-place softmax is a right answer (the engine passes copies).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED, Verdict
from helpers.checks.nb03 import SOFTMAX_CASES, SPEC_STABLE_SOFTMAX, check_stable_softmax


def stable_softmax(S):
    e = np.exp(S - np.max(S, axis=-1, keepdims=True))  # every exponent <= 0
    return e / np.sum(e, axis=-1, keepdims=True)


def run(fn, capsys) -> tuple[Verdict, str]:
    capsys.readouterr()
    v = check_stable_softmax(fn)
    out = capsys.readouterr().out
    assert isinstance(v, Verdict) and out.count("\n") == 1, out
    return v, out


def test_the_worked_solution_passes(capsys):
    v, out = run(stable_softmax, capsys)
    assert v and out.startswith(f"✅ stable softmax: correct on all {len(SOFTMAX_CASES)} inputs")


def test_an_in_place_softmax_passes_and_the_cases_stay(capsys):
    before = [x.copy() for _, x in SOFTMAX_CASES]

    def in_place(S):
        S -= np.max(S, axis=-1, keepdims=True)
        np.exp(S, out=S)
        S /= np.sum(S, axis=-1, keepdims=True)
        return S

    assert run(in_place, capsys)[0]
    for b, (label, x) in zip(before, SOFTMAX_CASES, strict=True):
        np.testing.assert_array_equal(x, b, err_msg=label)


def test_the_new_cases_are_hard():
    """Scores of ±1e4, rows with -inf beside them, three leading axes and none: the naive softmax fails each."""
    labels = {label: x for label, x in SOFTMAX_CASES}
    assert np.abs(labels["scores of ±1e4"]).max() == 1e4
    masked = labels["rows holding -inf beside scores of ±1e4"]
    assert np.isneginf(masked).any(axis=-1).all() and np.isfinite(masked).any(axis=-1).all()
    assert labels["four axes, shape (2, 1, 2, 3), with -inf"].ndim == 4
    assert labels["one row of shape (4,), no leading axis"].ndim == 1
    with np.errstate(all="ignore"):
        for label in ("scores of ±1e4", "rows holding -inf beside scores of ±1e4",
                      "four axes, shape (2, 1, 2, 3), with -inf",
                      "one row of shape (4,), no leading axis"):
            x = labels[label]
            assert np.isnan(np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)).any(), label


def e_over_rows(x, shift, total=False):
    e = np.exp(x - shift)
    return e / (np.sum(e) if total else np.sum(e, axis=-1, keepdims=True))


MISTAKES = {
    "naive": (lambda S: np.exp(S) / np.sum(np.exp(S), axis=-1, keepdims=True), "this is the naive softmax"),
    "minimum": (lambda S: e_over_rows(S, np.min(S, axis=-1, keepdims=True)), "subtracted the minimum"),
    "global max": (lambda S: e_over_rows(S, np.max(S)), "one global maximum"),
    "axis 0": (lambda S: (lambda e: e / e.sum(axis=0, keepdims=True))(np.exp(S - S.max(axis=0, keepdims=True))),
               "axis 0 normalises the columns"),
    "axis 1": (lambda S: (lambda e: e / e.sum(axis=1, keepdims=True))(np.exp(S - S.max(axis=1, keepdims=True))),
               "axis=1 is not the last axis"),
    "no division": (lambda S: np.exp(S - np.max(S, axis=-1, keepdims=True)), "the rows do not sum to 1"),
    "whole sum": (lambda S: e_over_rows(S, np.max(S, axis=-1, keepdims=True), total=True), "sum of the whole array"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES), ids=list(MISTAKES))
def test_each_mistake_is_named(mistake, capsys):
    fn, words = MISTAKES[mistake]
    v, out = run(fn, capsys)
    assert not v and out.startswith("❌ stable softmax: on ") and words in out, out
    assert words not in run(None, capsys)[1]


def test_large_scores_and_masks_name_the_input(capsys):
    def naive_beyond_5000(S):  # right up to ±5000, naive beyond (as if the max were subtracted only sometimes)
        big = np.abs(S[np.isfinite(S)]).max() > 5000
        return np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True) if big else stable_softmax(S)

    v, out = run(naive_beyond_5000, capsys)
    assert not v and "on scores of ±1e4: your result contains nan: this is the naive softmax" in out

    def mask_by_zero(S):  # -inf replaced by 0 before the softmax: the masked keys get weight again
        return stable_softmax(np.where(np.isneginf(S), 0.0, S))

    v, out = run(mask_by_zero, capsys)
    assert not v and "on -inf entries (masked keys): the numbers differ from softmax" in out

    def exp_beyond_5000(S):
        return np.exp(S) if np.abs(S[np.isfinite(S)]).max() > 5000 else stable_softmax(S)

    v, out = run(exp_beyond_5000, capsys)
    assert not v and "on scores of ±1e4: your result contains inf: exp overflowed; the largest difference" in out


def test_unanswered_stub_and_none(capsys):
    def stub(S):
        ...

    for fn in (None, ..., stub):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ stable softmax: {NOT_ANSWERED}") and "Hint:" in out


def test_a_forgotten_keepdims_reports_the_students_line(capsys):
    def no_keepdims(S):
        e = np.exp(S - np.max(S, axis=-1))  # runs on the square first case (wrongly), raises on (2, 3)
        return e / np.sum(e, axis=-1)

    v, out = run(no_keepdims, capsys)
    assert not v and "on large positive scores: your function raised ValueError" in out
    assert "line 2 of no_keepdims: `e = np.exp(S - np.max(S, axis=-1))" in out and "keepdims=True" in out


def test_wrong_shape_list_and_a_2d_only_function(capsys):
    assert "your function returned shape (3,), expected (3, 3)" in run(lambda S: stable_softmax(S)[..., 0], capsys)[1]
    assert "returned a Python list" in run(lambda S: stable_softmax(S).tolist(), capsys)[1]

    def rows_of_a_matrix(S):  # a loop over the first axis: right with leading axes, wrong for one row
        return np.array([stable_softmax(row) for row in S])

    v, out = run(rows_of_a_matrix, capsys)
    assert not v and "on one row of shape (4,), no leading axis" in out

    def two_d_only(S):
        m = S.max(axis=1)[:, None]  # (T, 1): only for two axes
        e = np.exp(S - m)
        return e / e.sum(axis=1)[:, None]

    v, out = run(two_d_only, capsys)
    assert not v and "on a batch of heads, shape (2, 2, 3)" in out


def test_cases_are_the_spec_cases():
    assert [c.label for c in SPEC_STABLE_SOFTMAX.cases] == [label for label, _ in SOFTMAX_CASES]
    assert {x.ndim for _, x in SOFTMAX_CASES} == {1, 2, 3, 4}
