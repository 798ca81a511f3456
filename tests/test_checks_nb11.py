"""Tests of notebook 11's exercise checks (helpers.checks.nb11) and its explorer (helpers.explorers).

Checks, table-driven as in tests/test_checks_nb07.py: every row calls one check with one answer and
states what it must print: "✅ ... correct" for the right answer, "❌" with the SPECIFIC explanation
for each typical slip the check claims to diagnose. Right answers are built here with plain NumPy
loops from the exercise text (never typed-in numbers). The checks compare with np.allclose (rtol 1e-6,
atol 1e-8).

Explorer: its numbers equal helpers.induction.train's snapshots exactly (the same seeded run, or the
run it is given), and its data-state recomputes through the browser test's expectation
(tests/ui/expected.py) to the printed digits.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from helpers.checks import Verdict, nb11
from helpers.explorer import state_from_html
from helpers.induction import blocks, designed_params, forward, train

sys.path.insert(0, str(Path(__file__).parent / "ui"))  # the browser tests' expectation module
from check_table import assert_phrases_not_in_hint, marks_of  # noqa: E402
from expected import cell_texts, expected  # noqa: E402


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    answer: object
    marks: str
    phrases: tuple[str, ...]


def right(id: str, check: Callable[..., object], answer: object) -> Case:
    return Case(id, check, answer, "✅", ("correct",))


def wrong(id: str, check: Callable[..., object], answer: object, *phrases: str) -> Case:
    return Case(id, check, answer, "❌", phrases)


SEQ, N = nb11.EX_SEQ, nb11.EX_N_LETTERS  # ^ D B G D B G D
T = len(SEQ)
PREV = np.zeros((T, N))  # row i: the letter at i-1 (none before the first letter)
for i in range(2, T):
    PREV[i, SEQ[i - 1]] = 1
OWN = np.zeros((T, N))  # row i: its own letter
for i in range(1, T):
    OWN[i, SEQ[i]] = 1
NEXT = np.zeros((T, N))  # row i: the letter at i+1
for i in range(T - 1):
    NEXT[i, SEQ[i + 1]] = 1
FIRST_OWN = PREV.copy()
FIRST_OWN[1, SEQ[1]] = 1

PATTERN = np.zeros((T, T))  # layer 2: the keys whose previous letter is mine, else ^
for i in range(T):
    keys = [j for j in range(2, i + 1) if SEQ[j - 1] == SEQ[i]]
    if keys:
        PATTERN[i, keys] = 1 / len(keys)
    else:
        PATTERN[i, 0] = 1
OCCURRENCE = np.zeros((T, T))  # the earlier occurrence itself
for i in range(T):
    keys = [j for j in range(1, i) if SEQ[j] == SEQ[i]]
    if keys:
        OCCURRENCE[i, keys] = 1 / len(keys)
    else:
        OCCURRENCE[i, 0] = 1
FIRST_MATCH = np.zeros((T, T))
for i in range(T):
    FIRST_MATCH[i, np.flatnonzero(PATTERN[i])[0]] = 1
SELF = PATTERN.copy()
for i in range(T):
    if PATTERN[i, 0] == 1:
        SELF[i] = 0
        SELF[i, i] = 1

T5 = nb11.EX_T
KEYS = np.zeros((T5, T5))  # row j = e_(j+1)
for j in range(T5 - 1):
    KEYS[j, j + 1] = 1

CASES = [
    right("previous/right", nb11.check_previous_block, PREV),
    right("previous/right-int-list", nb11.check_previous_block, PREV.astype(int).tolist()),
    right("previous/designed-model", nb11.check_previous_block,
          forward(designed_params(T, N), SEQ).x1[:, blocks(T, N)["previous"]]),
    wrong("previous/own-letter", nb11.check_previous_block, OWN, "OWN letter"),
    wrong("previous/next-letter", nb11.check_previous_block, NEXT, "the NEXT letter"),
    wrong("previous/first-own", nb11.check_previous_block, FIRST_OWN, "row 2 (the first letter, D) must be all zeros"),
    wrong("previous/shape", nb11.check_previous_block, PREV[:, :4], "(8, 4)", "(8, 8)"),
    right("pattern/right", nb11.check_induction_pattern, PATTERN),
    right("pattern/designed-model", nb11.check_induction_pattern,
          forward(designed_params(T, N), SEQ).weights2),  # the helper's own weights, within 1e-3
    wrong("pattern/occurrence", nb11.check_induction_pattern, OCCURRENCE, "earlier occurrence of the same letter"),
    wrong("pattern/first-match", nb11.check_induction_pattern, FIRST_MATCH, "each gets 1/2"),
    wrong("pattern/self", nb11.check_induction_pattern, SELF, "not at itself"),
    wrong("pattern/transposed", nb11.check_induction_pattern, PATTERN.T, "transpose"),
    right("keys/right", nb11.check_previous_keys, KEYS),
    wrong("keys/next", nb11.check_previous_keys, KEYS.T, "the NEXT position"),
    wrong("keys/identity", nb11.check_previous_keys, np.eye(T5), "looks at itself"),
    wrong("keys/wrap", nb11.check_previous_keys, KEYS + np.eye(T5, k=-(T5 - 1)), "no wrap-around"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_says_what_is_wrong(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    verdict = case.check(case.answer)
    out = capsys.readouterr().out
    assert isinstance(verdict, Verdict)
    assert bool(verdict) == (case.marks == "✅"), out
    assert marks_of(out) == case.marks, out
    for phrase in case.phrases:
        assert phrase in out, f"{phrase!r} not in:\n{out}"


CHECKS = {"previous": nb11.check_previous_block, "pattern": nb11.check_induction_pattern,
          "keys": nb11.check_previous_keys}


@pytest.mark.parametrize("name", CHECKS)
def test_phrases_are_not_in_the_hint(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert_phrases_not_in_hint(CHECKS[name], [c for c in CASES if c.id.startswith(name + "/")], capsys)


# ------------------------------------------------------------------------------------------ the explorer

RUN = {"steps": 600, "seed": 0, "lr": 0.01, "snapshot_every": 10}


@pytest.fixture(scope="module")
def run():
    return train(**RUN)


@pytest.fixture(scope="module")
def explorer(run):
    from helpers.explorers import induction_explorer

    return induction_explorer(result=run)


def test_explorer_builds_its_own_run_equal_to_train():
    from helpers.explorers import induction_explorer

    ex = induction_explorer(steps=20, snapshot_every=10)  # a short run: the same seeded training
    short = train(steps=20, seed=0, lr=0.01, snapshot_every=10)
    ex.set(step=20, layer="layer 1")
    np.testing.assert_array_equal(ex.weights, short.snapshots[-1].weights1)


@pytest.mark.parametrize("layer", ["layer 1", "layer 2"])
@pytest.mark.parametrize("step", [0, 10, 200, 600])
def test_explorer_numbers_are_train_snapshots_and_the_browser_expectation(explorer, run, layer, step):
    explorer.set(step=step, layer=layer)
    snap = run.snapshots[step // 10]
    assert snap.step == step
    np.testing.assert_array_equal(explorer.weights, snap.weights1 if layer == "layer 1" else snap.weights2)
    st = state_from_html(explorer.readout.value)
    assert st["kind"] == "induction" and st["inputs"]["step"] == step and st["inputs"]["layer"] == layer
    e = expected(st)  # the browser test's recomputation (its own train call, cached)
    shown = [p.matrix for v in explorer._shown.views for p in v.panels]
    assert cell_texts(e.tables) == cell_texts(shown)
    assert f"{snap.results.loss_repeat:.3g}" in explorer.readout.value
    explorer.set(step=0, layer="layer 2")


def test_explorer_refuses_a_step_between_snapshots_in_words(explorer):
    with pytest.raises(ValueError, match="a multiple of 10"):
        explorer.set(step=15)
    explorer.set(step=0, layer="layer 2")
    assert "Refused" not in explorer.readout.value


@pytest.mark.parametrize(
    "kwargs, error, phrase",
    [
        ({"result": "run"}, TypeError, "helpers.induction.train"),
        ({"step": 5}, ValueError, "a multiple of 10"),
        ({"step": 2000}, ValueError, "from 0 to 600"),
        ({"layer": "layer 3"}, ValueError, "layer must be one of"),
    ],
)
def test_explorer_arguments_are_checked(run, kwargs, error, phrase):
    from helpers.explorers import induction_explorer

    kwargs = {"result": run, **kwargs}
    with pytest.raises(error, match=phrase):
        induction_explorer(**kwargs)


def test_explorer_keeps_the_dom_contract_and_its_tables_print_the_expected_numbers(explorer):
    """As tests/test_live.py checks the other explorers: classes, one slider to move, the live tables'
    cell texts equal the browser expectation, and one matplotlib axes per table in the static figures."""
    from matplotlib.figure import Figure

    explorer.set(step=300, layer="layer 1")

    def walk(w):
        yield w
        for c in getattr(w, "children", ()):
            yield from walk(c)

    classes = lambda w: set(getattr(w, "_dom_classes", ()))  # noqa: E731
    ws = list(walk(explorer.widget))
    assert {"attn-explorer", "attn-explorer--induction"} <= classes(explorer.widget)
    sliders = [w for w in ws if w.__class__.__name__.endswith("Slider")]
    assert len(sliders) == 1 and "attn-slider--step" in classes(sliders[0])
    assert [w for w in ws if "attn-heatmap" in classes(w)] == list(explorer.views)
    assert explorer.readout.value.count("data-state=") == 1
    cells = [t for v in explorer.views for t in v.cell_texts()]  # what the browser's tables print
    want = expected(state_from_html(explorer.readout.value))
    assert cells == cell_texts(want.tables)
    figs = explorer.figures
    assert all(isinstance(f, Figure) for f in figs) and len(figs) == 3  # main, the other layer, the loss strip
    assert sum(len([a for a in f.axes if a.images]) for f in figs) == 3  # main heatmap, other layer, loss row
    explorer.set(step=0, layer="layer 2")
