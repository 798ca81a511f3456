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
    assert not v and "on X of shape (1, 4): one token: your function returned shape (3, 2), expected (1, 4)" in out


def test_exception_names_the_students_line(capsys):
    def broken(X):
        S = X @ X  # (T, d) @ (T, d): fails unless square
        return S

    v, out = run(broken, capsys)
    assert not v and "raised ValueError" in out and "at line 2 of broken: `S = X @ X" in out


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
    assert problem == "your function returned shape (3, 3), expected (3, 2)."


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


# ------------------------------------------------------------------ what the engine offers a Spec (nb15's needs)


def test_a_changed_array_inside_a_dict_is_named_by_its_key():
    spec = Spec(name="scale", reference=lambda p: p["w"] * 2, cases=[Case("p", ({"w": np.ones(2)},))])

    def writes(p):
        p["w"] *= 2  # the caller's parameters change
        return p["w"]

    problem = explain(writes, spec, ({"w": np.ones(2)},)).problem
    assert problem.startswith("your function changed its input p['w'] in place"), problem
    assert explain(lambda p: p["w"] * 2, spec, ({"w": np.ones(2)},)).ok


def test_a_tolerance_per_dtype_relative_to_the_largest_value():
    spec = Spec(name="big", reference=lambda x: x * 1000, cases=[Case("x", (np.ones(3),))], rtol=0, atol=0,
                tolerance={np.dtype(np.float64): 1e-7, np.dtype(np.float32): 1e-4})
    x = np.array([1.0, 0.001, 2.0])
    assert explain(lambda x: x * 1000 + 1e-5, spec, (x,)).ok  # 1e-5 <= 1e-7 * 2000 (the largest |value|)
    assert not explain(lambda x: x * 1000 + 1e-3, spec, (x,)).ok
    x32 = x.astype(np.float32)
    assert explain(lambda x: x * 1000 + 0.1, spec, (x32,)).ok  # float32: 0.1 <= 1e-4 * 2000
    assert not explain(lambda x: x * 1000 + 0.3, spec, (x32,)).ok


def test_integer_outputs_and_a_watch_after_a_right_output():
    reads = []

    def watch(args):
        reads.clear()
        return (args[0], reads), lambda: f"right, but it read {len(reads)} times." if len(reads) > 1 else None

    spec = Spec(name="ids", reference=lambda x, log=None: np.argsort(x), cases=[Case("x", (np.array([3.0, 1, 2]),))],
                rtol=0, atol=0, integers="token ids are integers: .astype(int).", watch=watch)
    x = np.array([3.0, 1, 2])
    assert explain(lambda x, log: log.append(1) or np.argsort(x), spec, (x,)).ok
    problem = explain(lambda x, log: np.argsort(x).astype(float), spec, (x,)).problem
    assert problem == "your function returned float64 numbers; token ids are integers: .astype(int)."
    problem = explain(lambda x, log: log.extend([1, 1, 1]) or np.argsort(x), spec, (x,)).problem
    assert problem == "right, but it read 3 times."
    assert explain(lambda x, log: np.argsort(-x), spec, (x,)).problem.startswith("the largest difference")


def test_a_mistake_that_does_not_apply_returns_none():
    spec = Spec(name="attend", reference=_attend, cases=SPEC.cases,
                mistakes={"only for one token": lambda X: None if len(X) > 1 else X,
                          "not scaled": SPEC.mistakes["not scaled"]})
    assert explain(SPEC.mistakes["not scaled"], spec, (np.eye(3),)).problem == "not scaled"
    assert explain(lambda X: np.full((), np.nan), spec, (np.eye(3),)).problem.startswith("your function returned shape")


def test_none_on_a_later_input_is_a_missing_return(capsys):
    v, out = run(lambda X: _attend(X) if X.shape == (3, 2) else None, capsys)
    assert not v and "on X of shape (1, 4): one token: your function returned None on this input" in out
    assert "is a `return` missing on some path?" in out and NOT_ANSWERED not in out


def _stub(X):
    ...


def test_a_name_that_is_none_on_the_failing_line_points_to_a_stub(capsys):
    def on_a_stub(X):
        h = _stub(X)  # a helper still `...`
        return h @ X

    v, out = run(on_a_stub, capsys)
    assert "raised ValueError" in out and "at line 3 of on_a_stub: `return h @ X`" in out, out
    assert "`h` is None there: does the function that made it (a stub above?) still return None?" in out
    v, out = run(lambda X: _stub(X) + 1, capsys)
    assert "at line 1 of your function" in out and "Something was None" in out and "a stub above?" in out, out


def test_a_broadcast_error_gets_the_specs_sentence_only_for_operands(capsys):
    def row_max(X):
        return X - X.max(axis=-1)  # (T, d) - (T,)

    def assigns(X):
        out = np.zeros((len(X), 1))
        out[:] = X  # an assignment of the wrong shape: not a missing axis
        return out

    plain = explain(row_max, SPEC, (np.ones((3, 2)),)).problem
    assert "operands could not be broadcast together" in plain and "keepdims" not in plain
    spec = Spec(name="attend", reference=_attend, cases=SPEC.cases, broadcast="Keep the axis: keepdims=True.")
    said = explain(row_max, spec, (np.ones((3, 2)),)).problem
    assert said.endswith("`. Keep the axis: keepdims=True."), said
    assigned = explain(assigns, spec, (np.ones((3, 2)),)).problem
    assert "could not broadcast input array" in assigned and "keepdims" not in assigned, assigned


def test_no_empty_backticks_when_the_source_line_is_unavailable():
    namespace = {"np": np}
    exec(compile("def hidden(X):\n    return X @ X\n", "<not a file>", "exec"), namespace)  # no source to read
    problem = explain(namespace["hidden"], SPEC, (np.ones((3, 2)),)).problem
    assert "at line 2 of hidden." in problem and "``" not in problem, problem


def test_a_list_with_the_right_numbers_says_so():
    assert explain(lambda X: _attend(X).tolist(), SPEC, (np.eye(3),)).problem.startswith(
        "your function returned a Python list, with the right numbers; return a NumPy array")
    assert explain(lambda X: [1.0], SPEC, (np.eye(3),)).problem.startswith(
        "your function returned a Python list; return a NumPy array")
