"""The Build exercises' engine (helpers.checks.functions): every kind of student mistake gets its own sentence."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.attention import softmax
from helpers.checks import NOT_ANSWERED
from helpers.checks.functions import Case, Spec, check_function, explain


def _attend(X):
    return softmax(X @ X.T / np.sqrt(X.shape[1])) @ X  # (T, T) @ (T, d) -> (T, d)


SPEC = Spec(
    name="attend",
    reference=_attend,
    cases=[Case("X of shape (3, 2)", (np.arange(6.0).reshape(3, 2) / 4,)),
           Case("X of shape (1, 4): one token", (np.ones((1, 4)),)),
           Case("X of shape (5, 3)", (np.random.default_rng(0).standard_normal((5, 3)),))],
    mistakes={"not scaled": lambda X: softmax(X @ X.T) @ X,
              "softmax over the wrong axis": lambda X: softmax(X @ X.T / np.sqrt(X.shape[1]), axis=0) @ X},
    hint="Hint: three lines.",
)


def run(fn, capsys):
    capsys.readouterr()
    v = check_function(fn, SPEC)
    return v, capsys.readouterr().out


def test_right_function_passes(capsys):
    v, out = run(_attend, capsys)
    assert v and out.startswith("✅ attend: correct on all 3 inputs")


@pytest.mark.parametrize("fn", [None, ..., lambda X: None])
def test_unanswered(fn, capsys):
    v, out = run(fn, capsys)
    assert not v and NOT_ANSWERED in out and "Hint: three lines." in out


def test_named_mistakes_and_the_input(capsys):
    v, out = run(SPEC.mistakes["not scaled"], capsys)
    assert not v and "on X of shape (3, 2): not scaled" in out
    v, out = run(lambda X: softmax(X @ X.T / np.sqrt(X.shape[1]), axis=0) @ X, capsys)
    assert not v and "softmax over the wrong axis" in out


def test_only_the_running_shape(capsys):
    def fixed(X):
        return _attend(X) if X.shape == (3, 2) else np.zeros((3, 2))

    v, out = run(fixed, capsys)
    assert not v and "on X of shape (1, 4): one token: your output has shape (3, 2), expected (1, 4)" in out


def test_exception_names_the_students_line(capsys):
    def broken(X):
        S = X @ X  # (T, d) @ (T, d): fails unless square
        return S

    v, out = run(broken, capsys)
    assert not v and "raised ValueError" in out and "line 2 of your function: `S = X @ X" in out


def test_list_nan_mutation_and_not_callable(capsys):
    assert "return a NumPy array" in run(lambda X: _attend(X).tolist(), capsys)[1]
    assert "holds NaN" in run(lambda X: _attend(X) * np.nan, capsys)[1]

    def mutating(X):
        X /= 2
        return _attend(X * 2)

    assert "changed its input X in place" in run(mutating, capsys)[1]
    assert "pass your function itself" in run(np.ones(3), capsys)[1]


def test_explain_for_a_live_view():
    X = np.eye(3)
    ok = explain(_attend, SPEC, (X,))
    assert ok.ok and ok.value.shape == (3, 3)
    wrong = explain(SPEC.mistakes["not scaled"], SPEC, (X,))
    assert wrong.problem == "not scaled" and wrong.value.shape == (3, 3)


def test_tuple_outputs():
    spec = Spec(name="pair", reference=lambda a: (a + 1, a * 2), outputs=("plus", "times"),
                cases=[Case("a = [1, 2]", (np.array([1.0, 2.0]),))])
    assert explain(lambda a: (a + 1, a * 2), spec, (np.ones(2),)).ok
    assert "return 2 things, (plus, times)" in explain(lambda a: a + 1, spec, (np.ones(2),)).problem
    assert explain(lambda a: (a + 1, a * 3), spec, (np.ones(2),)).problem.startswith("times: the largest difference")


def test_a_mistake_of_another_shape_is_named():
    spec = Spec(name="attend", reference=_attend, cases=SPEC.cases,
                mistakes={"forgot the final @ X": lambda X: softmax(X @ X.T / np.sqrt(X.shape[1]))})
    out = explain(lambda X: softmax(X @ X.T / np.sqrt(X.shape[1])), spec, (np.ones((3, 2)),))
    assert out.problem == "forgot the final @ X" and out.value.shape == (3, 3)
    problem = explain(lambda X: X @ X.T, spec, (np.ones((3, 2)),)).problem
    assert problem == "your output has shape (3, 3), expected (3, 2)."


def test_symptoms_before_the_difference():
    spec = Spec(name="attend", reference=_attend, cases=SPEC.cases,
                symptoms={"your result contains inf.": lambda got: np.isinf(got).any(),
                          "never applies": lambda got: got.no_such_attribute})
    X = np.eye(3)
    problem = explain(lambda X: _attend(X) + np.inf, spec, (X,)).problem
    assert problem.startswith("your result contains inf. the largest difference is at index (0, 0)")
    assert explain(lambda X: _attend(X) + 1, spec, (X,)).problem.startswith("the largest difference")


def test_may_overwrite_allows_an_in_place_function(capsys):
    def overwrite(X):
        X += 1
        return _attend(X - 1)

    assert "changed its input X in place" in explain(overwrite, SPEC, (np.eye(3),)).problem
    spec = Spec(name="attend", reference=_attend, cases=SPEC.cases, may_overwrite=True)
    X = np.eye(3)
    assert explain(overwrite, spec, (X,)).ok
    np.testing.assert_array_equal(X, np.eye(3))  # the caller's array: untouched, the engine passed a copy
    assert check_function(overwrite, spec) and "✅ attend" in capsys.readouterr().out


def test_a_later_exception_beats_a_bare_difference(capsys):
    def no_keepdims(X):  # runs on a square X (wrong numbers), raises on the others
        centred = X - X.mean(axis=-1)  # (T, d) - (T,): broadcasts only when d = T
        return _attend(centred)

    spec = Spec(name="attend", reference=_attend, cases=[Case("X of shape (2, 2)", (np.array([[1.0, 2], [0, 3]]),)),
                                                          *SPEC.cases])
    v, out = run_spec(no_keepdims, spec, capsys)
    assert not v and "on X of shape (3, 2): your function raised ValueError" in out and "line 2" in out
    v, out = run_spec(lambda X: _attend(X) + (len(X) == 2), spec, capsys)  # only a difference: the first input
    assert not v and "on X of shape (2, 2): the largest difference" in out
    assert explain(lambda X: _attend(X) + 1, spec, (np.eye(2),)).vague
    assert not explain(SPEC.mistakes["not scaled"], SPEC, (np.eye(2) * 3,)).vague


def test_float16_is_compared_at_float16_precision():
    spec = Spec(name="softmax", reference=softmax, cases=[Case("x", (np.zeros((1, 3)),))])
    x = np.array([[10.0, 12.0, 11.0]], dtype=np.float16)
    by_hand = np.exp(x - x.max()) / np.exp(x - x.max()).sum()  # float16 all the way: about 3 digits
    assert not np.allclose(by_hand, softmax(x.astype(np.float64)), rtol=1e-6)
    assert explain(lambda a: by_hand, spec, (x,)).ok
    assert not explain(lambda a: by_hand * 1.01, spec, (x,)).ok
    assert not explain(lambda a: softmax(x.astype(np.float64)) * (1 + 1e-5), spec, (x.astype(np.float64),)).ok


def run_spec(fn, spec, capsys):
    capsys.readouterr()
    v = check_function(fn, spec)
    return v, capsys.readouterr().out


@pytest.mark.parametrize(("a", "b"), [
    ([1.0, 2.0], [1.0, 2.0 + 1e-7]), ([1.0], [1.0 + 1e-5]), ([np.inf], [np.inf]), ([np.inf], [-np.inf]),
    ([np.inf], [1.0]), ([1e308], [np.inf]), ([np.inf], [1e308]), ([0.0], [1e-10]), ([0.0], [1e-8]),
    ([np.nan], [np.nan]), ([np.nan], [1.0]), ([1.0], [np.nan]), ([-np.inf, np.nan], [-np.inf, np.nan])])
def test_the_fast_comparison_is_np_allclose(a, b):
    from helpers.checks.functions import _allclose

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert _allclose(a, b, 1e-6, 1e-9) == np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)
