"""Tests of notebook 13's exercise checks (helpers.checks.nb13) and its explorer (helpers.explorers.nb13).

Checks, table-driven as in tests/test_checks_nb11.py: every row calls one check with one answer and states
what it must print. Right answers are built here with plain NumPy from the exercise text.

Explorer: its numbers equal helpers.heads on the committed model, its data-state recomputes through the
browser test's expectation (tests/ui/expected.py) to the printed digits, and bad text is refused in words.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from helpers.checks import Verdict, nb13
from helpers.explorer import state_from_html
from helpers.heads import head_weights
from helpers.language_model import forward, load_model

sys.path.insert(0, str(Path(__file__).parent / "ui"))  # the browser tests' expectation module
from check_table import assert_phrases_not_in_hint, marks_of  # noqa: E402
from expected import cell_texts, expected  # noqa: E402


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    answer: object
    marks: str
    phrases: tuple[str, ...]


def right(id: str, check: Callable[..., object], answer: object, *phrases: str) -> Case:
    return Case(id, check, answer, "✅", ("correct", *phrases))


def wrong(id: str, check: Callable[..., object], answer: object, *phrases: str) -> Case:
    return Case(id, check, answer, "❌", phrases)


W = nb13.EX_PATTERN
PREVIOUS = [W[i, i - 1] for i in range(1, len(W))]  # the weights one key left of the diagonal
A, B = nb13.EX_W_QK, nb13.EX_W_OV


def frobenius(M: np.ndarray) -> float:
    return float(np.sqrt((M * M).sum()))


K_RIGHT = frobenius(A @ B.T) / (frobenius(A) * frobenius(B))

CASES = [
    right("previous/right", nb13.check_previous_score, sum(PREVIOUS) / len(PREVIOUS)),
    right("previous/numpy-scalar", nb13.check_previous_score, np.float32(sum(PREVIOUS) / len(PREVIOUS))),
    wrong("previous/self", nb13.check_previous_score, np.mean([W[i, i] for i in range(1, 5)]), "ITSELF"),
    wrong("previous/with-query-0", nb13.check_previous_score, np.mean([W[i, i] for i in range(5)]), "query 0's own"),
    wrong("previous/over-T", nb13.check_previous_score, sum(PREVIOUS) / 5, "divides by T = 5"),
    wrong("previous/sum", nb13.check_previous_score, sum(PREVIOUS), "their mean"),
    wrong("previous/next", nb13.check_previous_score, 0.0, "the next token"),
    wrong("previous/other", nb13.check_previous_score, 0.5, "is not it"),
    right("harm/right", nb13.check_most_harmful, (0, 1), "from 0.70 to 0.14"),
    right("harm/runner-up", nb13.check_most_harmful, (0, 1), "next: (0, 2), to 0.33"),
    right("harm/list", nb13.check_most_harmful, [0, 1]),
    right("harm/numpy", nb13.check_most_harmful, np.array([0, 1])),
    wrong("harm/other", nb13.check_most_harmful, (0, 2), "another head of layer 0 lowers it more"),
    wrong("harm/itself", nb13.check_most_harmful, (1, 3), "OUTPUT to 0"),
    wrong("harm/layer-1", nb13.check_most_harmful, (1, 1), "Pick a head of layer 0"),
    wrong("harm/range", nb13.check_most_harmful, (0, 4), "is not a head"),
    wrong("harm/floats", nb13.check_most_harmful, (0.0, 1.0), "pair of integers"),
    wrong("harm/list-of-pairs", nb13.check_most_harmful, [(0, 1)], "expected one"),
    right("k/right", nb13.check_k_composition, K_RIGHT),
    wrong("k/no-transpose", nb13.check_k_composition, frobenius(A @ B) / (frobenius(A) * frobenius(B)),
          "without the transpose"),
    wrong("k/unnormalised", nb13.check_k_composition, frobenius(A @ B.T), "without dividing"),
    wrong("k/one-norm", nb13.check_k_composition, frobenius(A @ B.T) / frobenius(A), "divides by ‖W_QK‖ only"),
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


CHECKS = {"previous": nb13.check_previous_score, "harm": nb13.check_most_harmful, "k": nb13.check_k_composition}


@pytest.mark.parametrize("name", CHECKS)
def test_phrases_are_not_in_the_hint(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert_phrases_not_in_hint(CHECKS[name], [c for c in CASES if c.id.startswith(name + "/")], capsys)


# ------------------------------------------------------------------------------------------ the explorer

TEXT = "the cat sat. the cat sa"


@pytest.fixture(scope="module")
def model():
    return load_model()


@pytest.fixture(scope="module")
def explorer(model):
    from helpers.explorers import heads_explorer

    return heads_explorer(TEXT, layer=1, head=1, model=model)


@pytest.mark.parametrize("ablate", [(), ((0, 1),), ((0, 1), (0, 3))])
@pytest.mark.parametrize(("layer", "head"), [(1, 1), (0, 3)])
def test_explorer_numbers_are_the_helpers_and_the_browser_expectation(explorer, model, layer, head, ablate):
    config, params, tokenizer = model
    keep = np.ones((2, 4), dtype=bool)
    for i, j in ablate:
        keep[i, j] = False
    explorer.set(layer=layer, head=head, heads=keep)
    ids = tokenizer.encode(TEXT)
    np.testing.assert_array_equal(explorer.weights, head_weights(config, params, ids, ablate=ablate)[layer, head])
    st = state_from_html(explorer.readout.value)
    assert st["kind"] == "heads" and st["inputs"]["ablate"] == [list(p) for p in ablate]
    z0 = forward(config, params, tokenizer.encode(TEXT))[-1].astype(np.float64)  # every head in place
    assert st["symbols"] == [int(i) for i in np.argsort(-z0, kind="stable")[:8]]  # the same columns whatever is removed
    e = expected(st)
    shown = [p.matrix for v in explorer._shown.views for p in v.panels]
    assert cell_texts(e.tables) == cell_texts(shown)
    assert [t for row in explorer._shown.views[0].panels[0].texts() for t in row] == cell_texts([e.weights])[0]
    z = forward(config, params, ids, ablate=ablate)[-1].astype(np.float64)
    p = np.exp(z - z.max())
    np.testing.assert_allclose(explorer.output[1], (p / p.sum())[st["symbols"]], rtol=1e-12)
    explorer.set(layer=1, head=1, heads=np.ones((2, 4), dtype=bool))


@pytest.mark.parametrize(
    ("text", "phrase"),
    [("héllo", "not in the vocabulary: ['é']"), ("", "type at least 2"), ("x" * 65, "at most 64")],
)
def test_explorer_refuses_bad_text_in_words_and_keeps_the_last_good_state(explorer, text, phrase):
    with pytest.raises(ValueError, match=phrase.replace("[", r"\[").replace("]", r"\]")):
        explorer.set(text=text)
    assert "Refused" in explorer.readout.value
    explorer.set(text=TEXT)
    assert "Refused" not in explorer.readout.value


@pytest.mark.parametrize(
    ("kwargs", "error", "phrase"),
    [({"layer": 2}, ValueError, "layer must be at most 1"), ({"head": 1.0}, TypeError, "head must be an integer"),
     ({"ablate": [(0, 4)]}, ValueError, "ablate[0]"), ({"text": 5}, TypeError, "text must be a str")],
)
def test_explorer_refuses_bad_arguments_in_words(model, kwargs, error, phrase):
    from helpers.explorers import heads_explorer

    with pytest.raises(error) as info:
        heads_explorer(**{"text": TEXT, **kwargs}, model=model)
    assert phrase in str(info.value)
