"""Tests of notebook 06's exercise checks (helpers.checks.nb06) and of its explorer (helpers.explorers).

Table-driven, as tests/test_checks.py: every row calls one check with one answer and states what the
check must say: truthy and "✅" for the right answer, falsy and "❌" with the SPECIFIC explanation of the
slip for each typical mistake the check claims to diagnose. Right answers are computed here with
``helpers`` (never typed-in numbers); the slips are computed the way a student would make them (plain
NumPy loops, comparisons and formulas), not with the check's own internals. Masks are compared exactly;
weights with ``np.allclose`` (rtol 1e-6, atol 1e-8).

A phrase asserted for a mistake must not occur in the same check's "Not answered yet" output (which
carries the hint), so a phrase cannot pass because the hint happens to contain it.

The explorer tests read what the page would show (the heatmap tables' cells and the readout's
data-state) and compare it with the helpers, through the browser tests' expectation
(tests/ui/expected.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.attention import (  # noqa: E402
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
    single_head_attention,
    softmax,
)
from helpers.checks import nb06  # noqa: E402
from helpers.explorer import state_from_html  # noqa: E402
from helpers.explorers import MaskExplorer, mask_explorer  # noqa: E402
from helpers.panels import format_matrix  # noqa: E402
from helpers.sentence import TOKENS, adjective_head, embed, embeddings, pronoun_head  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
import expected as ui_expected  # noqa: E402
from check_table import assert_verdict_and_message, first_right, nan_like  # noqa: E402
from expectations.nb06 import masks as expected_masks  # noqa: E402
from html_cells import shown_cells  # noqa: E402

# ------------------------------------------------------------------------------------------ the table


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    answer: object
    marks: str  # the ✅/❌ verdict line the check must print
    phrases: tuple[str, ...]  # each must occur in the printed output


def right(id: str, check: Callable[..., object], answer: object, *phrases: str) -> Case:
    return Case(id, check, answer, "✅", ("correct", *phrases))


def wrong(id: str, check: Callable[..., object], answer: object, *phrases: str) -> Case:
    return Case(id, check, answer, "❌", phrases)


# ------------------------------------------------------------------------------ exercise 1: causal mask

T1 = nb06.EX_T


def mask_by_loop(T: int, allowed: Callable[[int, int], bool], dtype: type = bool) -> np.ndarray:
    """A student's double loop over queries i and keys j."""
    m = np.zeros((T, T), dtype=dtype)
    for i in range(T):
        for j in range(T):
            m[i, j] = allowed(i, j)
    return m


EX1 = [
    right("causal/helper", nb06.check_causal_mask, causal_mask(T1)),
    right("causal/tril", nb06.check_causal_mask, np.tril(np.ones((T1, T1), dtype=bool))),
    right("causal/comparison", nb06.check_causal_mask, np.arange(T1)[None, :] <= np.arange(T1)[:, None]),
    right("causal/loop", nb06.check_causal_mask, mask_by_loop(T1, lambda i, j: j <= i)),
    right("causal/as-list", nb06.check_causal_mask, causal_mask(T1).tolist()),
    wrong("causal/upper", nb06.check_causal_mask, mask_by_loop(T1, lambda i, j: j >= i), "upper triangle", "FUTURE"),
    wrong("causal/swapped", nb06.check_causal_mask, mask_by_loop(T1, lambda i, j: j > i), "True and False are swapped"),
    wrong("causal/no-diagonal", nb06.check_causal_mask, mask_by_loop(T1, lambda i, j: j < i),
          "the diagonal is missing"),
    wrong("causal/all-true", nb06.check_causal_mask, np.ones((T1, T1), dtype=bool), "that is no mask"),
    wrong("causal/numbers", nb06.check_causal_mask, np.tril(np.ones((T1, T1))), "made of numbers", "dtype=bool"),
    wrong("causal/upper-numbers", nb06.check_causal_mask, np.triu(np.ones((T1, T1), dtype=int)), "upper triangle",
          "not the numbers 0/1"),
    wrong("causal/additive", nb06.check_causal_mask, np.where(causal_mask(T1), 0.0, -np.inf), "additive form"),
    wrong("causal/other-numbers", nb06.check_causal_mask, 2.0 * causal_mask(T1), "other numbers"),
    wrong("causal/other-size", nb06.check_causal_mask, causal_mask(4), "(4, 4)", "(5, 5)"),
    wrong("causal/one-wrong-entry", nb06.check_causal_mask, mask_by_loop(T1, lambda i, j: j <= i and (i, j) != (3, 1)),
          "index (3, 1) is False, expected True"),
]

# ------------------------------------------------------------------------------ exercise 2: padding mask

LENGTHS, T2 = list(nb06.EX_LENGTHS), nb06.EX_T_PAD
B2 = len(LENGTHS)


def padding_by_loop(real: Callable[[int, int], bool], shape: str = "B1T", dtype: type = bool) -> np.ndarray:
    """A student's loop over sentences b and keys j, stored as (B, 1, T), (B, T), (B, T, 1) or (T, B)."""
    flat = np.zeros((B2, T2), dtype=dtype)
    for b, n in enumerate(LENGTHS):
        for j in range(T2):
            flat[b, j] = real(j, n)
    return {"B1T": flat[:, None, :], "BT": flat, "BT1": flat[:, :, None], "TB": flat.T}[shape]


RIGHT2 = padding_mask(LENGTHS, T2)  # (3, 1, 5)

EX2 = [
    right("padding/helper", nb06.check_padding_mask, RIGHT2),
    right("padding/loop", nb06.check_padding_mask, padding_by_loop(lambda j, n: j < n)),
    right("padding/comparison", nb06.check_padding_mask, (np.arange(T2) < np.array(LENGTHS)[:, None])[:, None, :]),
    right("padding/full-BTT", nb06.check_padding_mask, np.repeat(RIGHT2, T2, axis=1), "less memory"),
    wrong("padding/one-too-many", nb06.check_padding_mask, padding_by_loop(lambda j, n: j <= n),
          "one real token too many"),
    wrong("padding/one-too-few", nb06.check_padding_mask, padding_by_loop(lambda j, n: j < n - 1),
          "one real token too few"),
    wrong("padding/swapped", nb06.check_padding_mask, padding_by_loop(lambda j, n: j >= n),
          "True and False are swapped"),
    wrong("padding/left", nb06.check_padding_mask, padding_by_loop(lambda j, n: j >= T2 - n), "pads on the left"),
    wrong("padding/no-query-axis", nb06.check_padding_mask, padding_by_loop(lambda j, n: j < n, "BT"),
          "add the query axis"),
    wrong("padding/query-axis-last", nb06.check_padding_mask, padding_by_loop(lambda j, n: j < n, "BT1"),
          "would hide query ROWS"),
    wrong("padding/transposed", nb06.check_padding_mask, padding_by_loop(lambda j, n: j < n, "TB"),
          "the transpose (T, B)"),
    wrong("padding/numbers", nb06.check_padding_mask, padding_by_loop(lambda j, n: j < n, dtype=float),
          "made of numbers"),
    wrong("padding/other-size", nb06.check_padding_mask, padding_mask(LENGTHS, 6), "(3, 1, 6)", "(3, 1, 5)"),
]

# ------------------------------------------------------------------------------ exercise 3: a masked row

S3, KEEP3 = nb06.EX_SCORES.copy(), nb06.EX_KEEP.copy()


def softmax_by_hand(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max())
    return e / e.sum()


RIGHT3 = softmax(np.where(KEEP3, S3, -np.inf))  # (4,)
AFTER3 = softmax_by_hand(S3) * KEEP3  # (4,) masked after the softmax

EX3 = [
    right("row/helper", nb06.check_masked_row, RIGHT3),
    right("row/by-hand", nb06.check_masked_row, softmax_by_hand(np.where(KEEP3, S3, -np.inf))),
    right("row/after-renormalised", nb06.check_masked_row, AFTER3 / AFTER3.sum()),
    right("row/minus-1e9", nb06.check_masked_row, softmax_by_hand(np.where(KEEP3, S3, -1e9))),
    wrong("row/after-not-renormalised", nb06.check_masked_row, AFTER3, "did not renormalise", f"{AFTER3.sum():.4f}"),
    wrong("row/no-mask", nb06.check_masked_row, softmax_by_hand(S3), "the mask is not applied"),
    wrong("row/inverted", nb06.check_masked_row, softmax_by_hand(np.where(KEEP3, -np.inf, S3)),
          "you hid the keys that are True"),
    wrong("row/zero-score", nb06.check_masked_row, softmax_by_hand(S3 * KEEP3), "e^0 = 1 still counts"),
    wrong("row/dropped", nb06.check_masked_row, softmax_by_hand(S3[KEEP3]), "you dropped the hidden key"),
    wrong("row/other-shape", nb06.check_masked_row, np.zeros((2, 4)), "(2, 4)", "(4,)"),
]

# ------------------------------------------------------------------------------ exercise 4: cross-attention

XD, XE = embed(nb06.EX_TARGET_TWINS), embeddings()  # (3, 6), (8, 6)
WQ, WK, WV = adjective_head()  # (6, 2) each


def cross_by_hand(X_q: np.ndarray, X_kv: np.ndarray, *, scale: float = 1 / np.sqrt(2), axis: int = -1,
                  causal: bool = False) -> np.ndarray:
    """A student's softmax((X_q W_q)(X_kv W_k)ᵀ · scale), optionally over axis 0 or with np.tril as a mask."""
    S = (X_q @ WQ) @ (X_kv @ WK).T * scale
    if causal:
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_by_hand_rows(S: np.ndarray) -> np.ndarray:
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


RIGHT4 = cross_by_hand(XD, XE)  # (3, 8)

EX4 = [
    right("cross/by-hand", nb06.check_cross_weights, RIGHT4),
    right("cross/helper", nb06.check_cross_weights, scaled_dot_product_attention(XD @ WQ, XE @ WK, XE @ WV)[1]),
    wrong("cross/roles-swapped", nb06.check_cross_weights, cross_by_hand(XE, XD), "you swapped the roles"),
    wrong("cross/transposed", nb06.check_cross_weights, RIGHT4.T, "this is the transpose"),
    wrong("cross/K-Q-transposed", nb06.check_cross_weights,
          softmax_by_hand_rows(((XE @ WK) @ (XD @ WQ).T) / np.sqrt(2)), "this is softmax(K Qᵀ)"),
    wrong("cross/target-self", nb06.check_cross_weights, cross_by_hand(XD, XD), "self-attention of the target"),
    wrong("cross/source-self", nb06.check_cross_weights, cross_by_hand(XE, XE), "self-attention of the source"),
    wrong("cross/unscaled", nb06.check_cross_weights, cross_by_hand(XD, XE, scale=1.0), "not scaled"),
    wrong("cross/axis0", nb06.check_cross_weights, cross_by_hand(XD, XE, axis=0), "over the queries (axis 0)"),
    wrong("cross/causal", nb06.check_cross_weights, cross_by_hand(XD, XE, causal=True), "you applied a causal mask"),
    wrong("cross/other-shape", nb06.check_cross_weights, np.zeros((3, 5)), "(3, 5)", "(3, 8)"),
]



def causal_by_hand(Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, scale: bool = True) -> np.ndarray:
    """softmax(Q Kᵀ/√d_k + causal mask) V, as a student writes it (scale=False: the slip of no √d_k)."""
    T = len(Q)
    S = Q @ K.T / (np.sqrt(K.shape[1]) if scale else 1.0)  # (T, T)
    S = np.where(np.arange(T)[None, :] <= np.arange(T)[:, None], S, -np.inf)  # future keys hidden
    return softmax_by_hand_rows(S) @ V  # (T, d_v)


# Build: the student's own causal_attention(Q, K, V) (its own table: tests/test_build_nb06.py)
BUILD = [
    right("build/by-hand", nb06.check_causal_attention, causal_by_hand),
    wrong("build/not-scaled", nb06.check_causal_attention, lambda Q, K, V: causal_by_hand(Q, K, V, scale=False),
          "the scores are not scaled"),
]

CASES = [c._replace(id=f"ex{n}:{c.id}") for n, table in enumerate((EX1, EX2, EX3, EX4, BUILD), start=1)
         for c in table]
CHECKS = [nb06.check_causal_mask, nb06.check_padding_mask, nb06.check_masked_row, nb06.check_cross_weights,
          nb06.check_causal_attention]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_verdict_and_message(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    assert_verdict_and_message(case, 1, capsys)


def test_every_public_check_is_tested() -> None:
    tested = {c.check for c in CASES}
    for name in nb06.__all__:
        if name.startswith("check_"):
            assert getattr(nb06, name) in tested, f"nb06.{name} has no case"
            assert getattr(nb06, name) in CHECKS, f"nb06.{name} is not in CHECKS"


def test_every_listed_mistake_is_a_different_answer() -> None:
    """Two slips giving the same array would make one of the messages unreachable."""
    for table in (EX1, EX2, EX3, EX4):
        answers = [(c.id, np.asarray(c.answer, dtype=float)) for c in table if c.marks == "❌"]
        rights = [np.asarray(c.answer, dtype=float) for c in table if c.marks == "✅"]
        for k, (id_a, a) in enumerate(answers):
            if "numbers" in id_a:  # a right or listed pattern as 0/1 numbers: told apart by its dtype
                continue
            assert not any(a.shape == r.shape and np.allclose(a, r) for r in rights), f"{id_a} equals a right answer"
            for id_b, b in answers[k + 1 :]:
                if "numbers" in id_b:
                    continue
                assert not (a.shape == b.shape and np.allclose(a, b)), f"{id_a} and {id_b} give the same numbers"


def test_the_causal_mask_exercise_distinguishes_the_triangles() -> None:
    """The slips of exercise 1 are four different 5×5 patterns, none of them the causal mask."""
    ones = np.ones((T1, T1), dtype=bool)
    patterns = [np.triu(ones), np.triu(ones, k=1), np.tril(ones, k=-1), ones]
    for p in patterns:
        assert not np.array_equal(p, causal_mask(T1))
    assert len({p.tobytes() for p in patterns}) == len(patterns)


# unanswered, garbage, names, the exercise data unchanged: tests/test_checks_every_lesson.py (every lesson's)


# ------------------------------------------------------------------------------ the explorer


def _explorer() -> MaskExplorer:
    return mask_explorer(embeddings(), *adjective_head(), TOKENS)


def _check_page(ex: MaskExplorer) -> dict:
    """data-state and heatmap cells == the helpers for the reported inputs, through expected."""
    state = state_from_html(ex.readout.value)
    assert state["kind"] == "masks" and "error" not in state
    want = expected_masks(state["inputs"])
    np.testing.assert_allclose(ui_expected.number_array(state["weights"]), want.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ui_expected.number_array(state["output"]), want.output, rtol=0, atol=1e-12)
    assert shown_cells(ex) == ui_expected.cell_texts(want.tables)
    return state


def _classes(widget) -> set:
    return set(getattr(widget, "_dom_classes", ()))


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_mask_explorer_starts_unmasked_and_shows_the_helpers_numbers() -> None:
    ex = _explorer()
    assert ex.kind == "masks" and {"attn-explorer", "attn-explorer--masks"} <= _classes(ex.widget)
    state = _check_page(ex)
    assert np.asarray(state["inputs"]["mask"]).all()  # preset "none": every cell on
    out, w = single_head_attention(embeddings(), *adjective_head())
    np.testing.assert_array_equal(ex.weights, w)  # exact: the same helper call
    np.testing.assert_array_equal(ex.output, out)
    toggles = [c for w_ in _walk(ex.widget) for c in _classes(w_) if c.startswith("attn-toggle--")]
    assert len(toggles) == 64 and "attn-toggle--mask-0-0" in toggles and "attn-toggle--mask-7-7" in toggles
    presets = {c for w_ in _walk(ex.widget) for c in _classes(w_) if c.startswith("attn-control--mask-")}
    assert presets == {"attn-control--mask-none", "attn-control--mask-causal", "attn-control--mask-padding",
                       "attn-control--mask-both"}
    assert not [w_ for w_ in _walk(ex.widget) if "attn-slider" in _classes(w_)]  # toggles only


def test_clicking_the_first_toggle_changes_the_weights_and_the_data_state() -> None:
    """What the browser test does: click cell (row 1, key 1); the numbers and the inputs must change."""
    ex = _explorer()
    before_state, before_cells = _check_page(ex), shown_cells(ex)
    ex.controls["mask"].buttons[0, 0].value = False  # the first toggle cell, as a click sets it
    after_state, after_cells = _check_page(ex), shown_cells(ex)
    assert after_state["inputs"] != before_state["inputs"] and after_cells[0] != before_cells[0]
    assert ex.weights[0, 0] == 0 and abs(ex.weights[0].sum() - 1) < 1e-12  # hidden exactly; renormalised
    np.testing.assert_array_equal(ex.weights[1:], single_head_attention(embeddings(), *adjective_head())[1][1:])


def test_presets_match_the_helpers_masks() -> None:
    ex = _explorer()
    pad = np.broadcast_to(padding_mask([6], 8)[0], (8, 8))  # (8, 8) the last two keys are padding
    for name, want in {"causal": causal_mask(8), "padding": pad, "both": causal_mask(8) & pad,
                       "none": np.ones((8, 8), bool)}.items():
        (button,) = [w_ for w_ in _walk(ex.widget) if f"attn-control--mask-{name}" in _classes(w_)]
        button.click()
        np.testing.assert_array_equal(np.asarray(_check_page(ex)["inputs"]["mask"]), want)
        np.testing.assert_array_equal(ex.weights, single_head_attention(embeddings(), *adjective_head(), mask=want)[1])


def test_hiding_small_to_cat_moves_the_weight_to_it() -> None:
    """The notebook's fixed state: the adjective head's "small" loses "cat" and renormalises onto "it"."""
    ex = _explorer()
    mask = np.ones((8, 8), bool)
    mask[1, 2] = False  # query "small", key "cat"
    ex.set(mask=mask)
    _check_page(ex)
    small = ex.weights[1]
    assert small[2] == 0 and int(np.argmax(small)) == TOKENS.index("it")


def test_a_row_with_every_key_off_is_refused_in_words() -> None:
    ex = _explorer()
    good = [v.snapshot() for v in ex.views]
    mask = np.ones((8, 8), bool)
    mask[3] = False  # query "sat" may see nothing
    ex.controls["mask"].set_value(mask)  # the widget path (a click, a preset): nothing raises
    state = state_from_html(ex.readout.value)
    assert "every key masked" in state["error"] and "Refused" in ex.readout.value
    assert "Traceback" not in ex.readout.value and [v.snapshot() for v in ex.views] == good  # last good view kept
    assert np.asarray(state["inputs"]["mask"]).sum() == 56
    with pytest.raises(ValueError, match="every key masked"):  # the code path says it too
        ex.set(mask=mask)
    ex.set(mask=np.ones((8, 8), bool))
    _check_page(ex)


def test_expected_recomputes_other_heads_and_masks() -> None:
    """expected follows the data-state, not the start state: another head and sentence, a random mask."""
    X = embed(("dog", "bites", "man"))  # (3, 6)
    ex = mask_explorer(X, *pronoun_head(), ["dog", "bites", "man"], n_padding=1)
    rng = np.random.default_rng(0)
    for _ in range(5):
        mask = rng.random((3, 3)) < 0.6
        mask[np.arange(3), rng.integers(0, 3, 3)] = True  # every row keeps at least one key
        ex.set(mask=mask)
        _check_page(ex)
    assert ui_expected.cell_texts([ex.weights])[0] == [t for row in format_matrix(ex.weights) for t in row]


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"token_labels": ["a", "b"]}, ValueError, "token_labels has 2 labels"),
        ({"n_padding": 8}, ValueError, "n_padding must be an integer from 0 to 7"),
        ({"mask": np.ones((8, 8))}, TypeError, "boolean matrix"),
        ({"mask": np.zeros((8, 8), bool)}, ValueError, "every key masked"),
    ],
)
def test_mask_explorer_rejects_bad_input_naming_the_argument(kwargs, error, words) -> None:
    with pytest.raises(error, match=words):
        mask_explorer(embeddings(), *adjective_head(), **({"token_labels": TOKENS} | kwargs))


def test_the_static_figures_print_the_numbers_of_the_live_views() -> None:
    ex = _explorer()
    mask = causal_mask(8)
    ex.set(mask=mask)
    drawn = [[t.get_text() for t in ax.texts] for fig in ex.figures for ax in fig.axes if ax.images]
    assert drawn == shown_cells(ex)


def test_the_grid_and_the_main_heatmap_stay_side_by_side_on_a_projector() -> None:
    """In presentation mode the top row never wraps, and the grid does not shrink (its last column stays visible)."""
    from helpers.explorer import presentation

    ex = _explorer()
    top = ex.widget.children[0]
    presentation(True)
    try:
        assert top.layout.flex_flow == "row nowrap"
    finally:
        presentation(False)
    assert top.layout.flex_flow == "row wrap"
    controls, right = top.children
    assert controls.layout.flex == "0 0 auto" and ex.controls["mask"].widget in controls.children
    assert right.children[0] is ex.views[0] and right.children[1] is ex.readout


# ------------------------------------------------------- a NaN answer: the exp hint only where there is an exp

# the exercises that compute an exp (a softmax): only they may ask "did exp overflow?"
EXP_CHECKS = {nb06.check_masked_row, nb06.check_cross_weights}
_FIRST_RIGHT = first_right(CASES)


@pytest.mark.parametrize("case", _FIRST_RIGHT, ids=[c.id for c in _FIRST_RIGHT])
def test_nan_answer_blames_exp_only_where_the_exercise_has_one(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    verdict = case.check(nan_like(case.answer))
    out = capsys.readouterr().out
    assert not verdict, out
    if case.check not in (nb06.check_causal_mask, nb06.check_padding_mask):  # masks: "holds other numbers"
        assert "NaN" in out, out
    assert ("did exp overflow" in out) is (case.check in EXP_CHECKS), out


def test_the_nan_table_covers_every_check() -> None:
    assert {c.check for c in _FIRST_RIGHT} == set(CHECKS)
