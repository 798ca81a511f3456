"""Tests of notebook 07's exercise checks (helpers.checks.nb07) and its explorer (helpers.explorers).

Checks, table-driven as in tests/test_checks.py: every row calls one check with one answer and states
what it must print: "✅ ... correct" for the right answer, "❌" with the SPECIFIC explanation for each
typical slip the check claims to diagnose. Right answers are computed here with plain NumPy from the
formulas (never typed-in numbers); slips the way a student would make them. The checks compare with
np.allclose (rtol 1e-6, atol 1e-8).

Explorer: its numbers equal helpers.training.train's snapshots exactly (the same seeded run), one
step of the slider changes the weights visibly (by more than 0.001, the printed precision), and its
data-state recomputes through the browser test's expectation (tests/ui/expected.py) to 1e-9.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from helpers.checks import Verdict, nb07
from helpers.explorer import state_from_html, to_jsonable
from helpers.training import TASKS, default_probe, target_pattern, train

sys.path.insert(0, str(Path(__file__).parent / "ui"))  # the browser tests' expectation module
from check_table import (  # noqa: E402
    assert_phrases_not_in_hint,
    first_right,
    marks_of,
    nan_like,
)
from expectations.nb07 import training as expected_training  # noqa: E402

# ------------------------------------------------------------------------------------------ the table


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    answer: object
    marks: str  # the ✅/❌ verdict lines the check must print, in order
    phrases: tuple[str, ...]  # each must occur in the printed output


def right(id: str, check: Callable[..., object], answer: object, marks: str = "✅") -> Case:
    return Case(id, check, answer, marks, ("correct",))


def wrong(id: str, check: Callable[..., object], answer: object, *phrases: str, marks: str = "❌") -> Case:
    return Case(id, check, answer, marks, phrases)


def dv_dp(answers: object) -> object:
    """check_dv_dp takes two answers; anything else means the same answer for both."""
    return nb07.check_dv_dp(*(answers if isinstance(answers, tuple) else (answers,) * 2))


p = nb07.EX_P_ROW  # (4,)
J = np.diag(p) - np.outer(p, p)  # (4, 4) the formula, by hand
P, V, dO = nb07.EX_P, nb07.EX_V, nb07.EX_DO  # (3, 3), (3, 2), (3, 2)
dV = P.T @ dO  # (3, 2)
dP = dO @ V.T  # (3, 3)
W, g, lr = nb07.EX_W, nb07.EX_G, nb07.EX_LR  # (2, 3), (2, 3), float
m1, v1 = 0.1 * g, 0.001 * g * g  # the moments after one step from 0 (β1 = 0.9, β2 = 0.999)
ADAM = W - lr * (m1 / 0.1) / (np.sqrt(v1 / 0.001) + 1e-8)  # (2, 3)
T5 = nb07.EX_T
NEXT = np.zeros((T5, T5))
NEXT[np.arange(T5), np.minimum(np.arange(T5) + 1, T5 - 1)] = 1  # (5, 5) row i: 1 at column i+1, last on itself

CASES = [
    right("jacobian/right", nb07.check_softmax_jacobian, J),
    right("jacobian/right-as-list", nb07.check_softmax_jacobian, J.tolist()),
    right("jacobian/right-within-rtol", nb07.check_softmax_jacobian, J * (1 + 1e-9)),
    wrong("jacobian/sign", nb07.check_softmax_jacobian, np.outer(p, p) - np.diag(p), "sign is flipped"),
    wrong("jacobian/no-diag", nb07.check_softmax_jacobian, -np.outer(p, p), "without diag(p)"),
    wrong("jacobian/diag-only", nb07.check_softmax_jacobian, np.diag(p), "diag(p) alone"),
    wrong("jacobian/outer-only", nb07.check_softmax_jacobian, np.outer(p, p), "p pᵀ alone"),
    wrong("jacobian/diagonal-only", nb07.check_softmax_jacobian, np.diag(p * (1 - p)), "only the diagonal"),
    wrong("jacobian/p.T@p", nb07.check_softmax_jacobian, np.diag(p) - p.T @ p, "is a dot product"),
    wrong("jacobian/p*p", nb07.check_softmax_jacobian, np.diag(p) - p * p, "the squares p_j²"),
    wrong("jacobian/transposed-shape", nb07.check_softmax_jacobian, J[:, :3], "(4, 3)", "(4, 4)"),
    right("dv_dp/right", dv_dp, (dV, dP), marks="✅✅"),
    wrong("dv_dp/P-not-transposed", dv_dp, (P @ dO, dP), "this is P dO", marks="❌✅"),
    wrong("dv_dp/dO-itself", dv_dp, (dO.copy(), dP), "this is dO itself", marks="❌✅"),
    wrong("dv_dp/forward-mix", dv_dp, (P.T @ V, dP), "Pᵀ V", marks="❌✅"),
    wrong("dv_dp/dV-sign", dv_dp, (-dV, dP), "sign is flipped", marks="❌✅"),
    wrong("dv_dp/dV-transposed", dv_dp, (dO.T @ P, dP), "(2, 3)", "transpose of the right one", marks="❌✅"),
    wrong("dv_dp/dP-transposed", dv_dp, (dV, V @ dO.T), "V dOᵀ, the transpose", marks="✅❌"),
    wrong("dv_dp/dP-times-P", dv_dp, (dV, P * dP), "you multiplied by P", marks="✅❌"),
    wrong("dv_dp/dP-sign", dv_dp, (dV, -dP), "sign is flipped", marks="✅❌"),
    right("adam/right", nb07.check_adam_step, ADAM),
    right("adam/sign-without-eps", nb07.check_adam_step, W - lr * np.sign(g)),
    wrong("adam/gradient-descent", nb07.check_adam_step, W - lr * g, "plain gradient-descent step"),
    wrong("adam/uphill", nb07.check_adam_step, W + lr * np.sign(g), "you moved uphill"),
    wrong("adam/no-bias-correction", nb07.check_adam_step, W - lr * m1 / np.sqrt(v1), "skipped the bias correction"),
    wrong("adam/no-bias-correction-eps", nb07.check_adam_step, W - lr * m1 / (np.sqrt(v1) + 1e-8),
          "skipped the bias correction"),
    wrong("adam/no-sqrt", nb07.check_adam_step, W - lr * g / (g * g), "not by its square root"),
    wrong("adam/step-only", nb07.check_adam_step, -lr * np.sign(g), "the step −lr·m̂/(√v̂ + ε) alone"),
    right("next/right", nb07.check_next_token_pattern, NEXT),
    right("next/right-int", nb07.check_next_token_pattern, NEXT.astype(int)),
    wrong("next/transposed", nb07.check_next_token_pattern, NEXT.T, "this is the transpose"),
    wrong("next/previous", nb07.check_next_token_pattern, target_pattern("previous", T5), "previous-token pattern"),
    wrong("next/last-row-missing", nb07.check_next_token_pattern, np.eye(T5, k=1), "row 5 is all zeros"),
    wrong("next/identity", nb07.check_next_token_pattern, np.eye(T5), "this is the identity"),
    wrong("next/reverse", nb07.check_next_token_pattern, target_pattern("reverse", T5), "reversal pattern"),
    wrong("next/row-sum", nb07.check_next_token_pattern, np.ones((T5, T5)), "row 1 (index 0) sums to 5"),
    wrong("next/one-row-sums-to-1.5", nb07.check_next_token_pattern,
          NEXT + 0.5 * (np.arange(T5)[:, None] == 2) * (np.arange(T5) == 0), "row 3 (index 2) sums to 1.5"),
    wrong("next/shape", nb07.check_next_token_pattern, NEXT[:4], "(4, 5)", "(5, 5)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_says_what_is_wrong(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    verdict = case.check(case.answer)
    out = capsys.readouterr().out
    assert isinstance(verdict, Verdict)
    assert bool(verdict) == (case.marks == "✅" * len(case.marks)), out
    assert marks_of(out) == case.marks, out
    for phrase in case.phrases:
        assert phrase in out, f"{phrase!r} not in:\n{out}"


CHECKS = {
    "jacobian": nb07.check_softmax_jacobian,
    "dv_dp": dv_dp,
    "adam": nb07.check_adam_step,
    "next": nb07.check_next_token_pattern,
}


@pytest.mark.parametrize("name", CHECKS)
def test_phrases_are_not_in_the_hint(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert_phrases_not_in_hint(CHECKS[name], [c for c in CASES if c.id.startswith(name + "/")], capsys)


# ------------------------------------------------------------------------------------------ the explorer

EVERY = 5


@pytest.fixture(scope="module")
def explorer():
    from helpers.explorers import training_explorer

    return training_explorer()


@pytest.fixture(scope="module")
def runs():
    return {t: train(t, steps=300, seed=0, lr=0.05, snapshot_every=EVERY) for t in TASKS}


def test_explorer_starts_before_training(explorer):
    explorer.set(task="reverse", step=0)
    st = explorer.state()
    assert st["kind"] == "training"
    assert st["inputs"]["task"] == "reverse" and st["inputs"]["step"] == 0
    np.testing.assert_array_equal(st["inputs"]["probe"], default_probe(6, 8))
    assert explorer.controls["step"].min == 0 and explorer.controls["step"].max == 300
    assert explorer.controls["step"].step == EVERY


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("step", [0, 5, 20, 150, 300])
def test_explorer_numbers_are_train_snapshots(explorer, runs, task, step):
    explorer.set(task=task, step=step)
    snap = runs[task].snapshots[step // EVERY]
    assert snap.step == step
    np.testing.assert_array_equal(explorer.weights, snap.weights)  # exact: the same seeded run
    st = explorer.state()
    assert st["loss"] == snap.loss and st["accuracy"] == snap.accuracy
    assert f"{snap.loss:.3g}" in explorer.readout.value
    explorer.set(task="reverse", step=0)


def test_one_slider_step_changes_the_printed_weights(explorer):
    """The browser test presses ArrowRight once on the step slider and needs other cell texts."""
    explorer.set(task="reverse", step=0)
    w0, inputs0 = explorer.weights.copy(), explorer.state()["inputs"]
    explorer.set(step=EVERY)
    assert np.abs(explorer.weights - w0).max() > 1e-3  # shown with 3 decimals
    assert explorer.state()["inputs"] != inputs0
    explorer.set(step=0)


@pytest.mark.parametrize(("task", "step"), [("reverse", 0), ("reverse", 25), ("previous", 300)])
def test_data_state_recomputes_through_the_browser_expectation(explorer, task, step):
    explorer.set(task=task, step=step)
    state = state_from_html(explorer.readout.value)  # what the page carries, through JSON
    assert state == json.loads(json.dumps(to_jsonable(explorer.state())))
    want = expected_training(state["inputs"])
    np.testing.assert_allclose(np.asarray(state["weights"]), want.weights, rtol=0, atol=1e-9)
    assert len(want.tables) == 1
    np.testing.assert_allclose(want.tables[0], explorer.weights, rtol=0, atol=1e-9)
    explorer.set(task="reverse", step=0)


def test_explorer_refuses_a_step_between_snapshots(explorer):
    with pytest.raises(ValueError, match="multiple of 5"):
        explorer.set(step=7)
    explorer.set(task="reverse", step=0)
    assert "error" not in explorer.state()


def test_trained_patterns_are_the_tasks_patterns(runs):
    for task, run in runs.items():
        final = run.snapshots[-1]
        assert final.accuracy >= 0.99
        np.testing.assert_array_equal(final.weights.argmax(axis=1), target_pattern(task, 6).argmax(axis=1))


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"steps": 301}, ValueError), ({"snapshot_every": 0}, ValueError), ({"step": 1.5}, TypeError),
    ({"task": "sort"}, ValueError), ({"steps": 10, "step": 20}, ValueError),
])
def test_explorer_checks_its_arguments(kwargs, error):
    from helpers.explorers import TrainingExplorer

    with pytest.raises(error):
        TrainingExplorer(**{"steps": 10, **kwargs})


# ------------------------------------------------------- a NaN answer: the exp hint only where there is an exp

EXP_CHECKS = set()  # the exercises that compute an exp (a softmax): only they may ask "did exp overflow?"
_FIRST_RIGHT = first_right(CASES)


@pytest.mark.parametrize("case", _FIRST_RIGHT, ids=[c.id for c in _FIRST_RIGHT])
def test_nan_answer_blames_exp_only_where_the_exercise_has_one(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    verdict = case.check(nan_like(case.answer))
    out = capsys.readouterr().out
    assert not verdict and "NaN" in out, out
    assert ("did exp overflow" in out) is (case.check in EXP_CHECKS), out
