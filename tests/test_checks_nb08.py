"""Tests of notebook 08's exercise checks (helpers.checks.nb08) and its explorer (helpers.explorers).

Checks, table-driven as tests/test_checks.py: every row calls one check with one answer and states what
the check must say: truthy and only "✅" lines for the right answer, falsy with the ✅/❌ line of each
part and the SPECIFIC explanation of the slip for each typical mistake the check claims to diagnose.
Right answers are computed here with ``helpers`` or plain arithmetic (never typed-in numbers); the slips
are computed the way a student would make them, not with the check's own internals. The checks compare
numbers with relative tolerance 1e-6.

Explorer: its numbers are helpers' numbers, its data-state recomputes through tests/ui/expected.py
(the browser tests' expectation) to the same heatmap texts, a slider step changes the numbers, and a
refused state is told in words.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from helpers.attention import (
    online_softmax_steps,
    scaled_dot_product_attention,
    softmax,
    tiled_attention,
    tiled_attention_steps,
)
from helpers.checks import nb08
from helpers.explorer import state_from_html
from helpers.explorers import TILES_K, TILES_Q, TILES_V, tiles_explorer

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
import expected as ui_expected  # noqa: E402
from check_table import assert_verdict_and_message, nan_like, run  # noqa: E402
from expectations.nb08 import tiles as expected_tiles  # noqa: E402
from html_cells import shown_cells  # noqa: E402

# ------------------------------------------------------------------------------------------ the table


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    args: tuple  # the answers, one per argument of the check
    marks: str  # the ✅/❌ verdict lines the check must print, in order
    phrases: tuple[str, ...]  # each must occur in the printed output


def right(id: str, check: Callable[..., object], *args: object) -> Case:
    n = {nb08.check_online_update: 2, nb08.check_merge: 3}.get(check, 1)
    return Case(id, check, args, "✅" * n, ("correct",))


def wrong(id: str, check: Callable[..., object], args: tuple, marks: str, *phrases: str) -> Case:
    return Case(id, check, args, marks, phrases)


# ------------------------------------------------------------------------------ exercise 1: one step

M0, L0, BLOCK = nb08.EX_M_OLD, nb08.EX_L_OLD, nb08.EX_BLOCK
M1 = max(M0, float(BLOCK.max()))  # 5.0, by hand
L1 = math.exp(M0 - M1) * L0 + sum(math.exp(x - M1) for x in BLOCK)  # the student's loop
ROW = np.concatenate([nb08.EX_SEEN, BLOCK])  # (5,)

EX1 = [
    right("update/by-hand", nb08.check_online_update, M1, L1),
    right("update/whole-row", nb08.check_online_update, ROW.max(), np.exp(ROW - ROW.max()).sum()),
    right("update/helper", nb08.check_online_update, *(online_softmax_steps(ROW, 3)[0][1][k]
                                                      for k in ("running_max", "running_sum"))),
    right("update/one-element-arrays", nb08.check_online_update, np.array([M1]), [L1]),
    wrong("update/old-max", nb08.check_online_update, (M0, L1), "❌✅", "this is the old max"),
    wrong("update/maxima-added", nb08.check_online_update, (M0 + BLOCK.max(), L1), "❌✅", "added the two maxima"),
    wrong("update/block-min", nb08.check_online_update, (BLOCK.min(), L1), "❌✅", "smallest score of the block"),
    wrong("update/upside-down", nb08.check_online_update,
          (M1, math.exp(M1 - M0) * L0 + np.exp(BLOCK - M1).sum()), "✅❌", "upside down", "exp(m_old − m_new)"),
    wrong("update/not-rescaled", nb08.check_online_update, (M1, L0 + np.exp(BLOCK - M1).sum()), "✅❌",
          "forgot to rescale the old sum"),
    wrong("update/block-old-max", nb08.check_online_update,
          (M1, math.exp(M0 - M1) * L0 + np.exp(BLOCK - M0).sum()), "✅❌", "still use the old max"),
    wrong("update/old-sum-missing", nb08.check_online_update, (M1, np.exp(BLOCK - M1).sum()), "✅❌",
          "the old sum is missing"),
    wrong("update/no-exp", nb08.check_online_update, (M1, (M0 - M1) * L0 + np.exp(BLOCK - M1).sum()), "✅❌",
          "multiplied by m_old − m_new itself"),
    wrong("update/unshifted", nb08.check_online_update, (M1, np.exp(ROW).sum()), "✅❌", "no max subtracted"),
    wrong("update/both-wrong", nb08.check_online_update, (M0, L0 + np.exp(BLOCK - M1).sum()), "❌❌",
          "this is the old max", "forgot to rescale"),
    wrong("update/array", nb08.check_online_update, (M1, np.exp(BLOCK - M1)), "✅❌", "expected one number",
          "shape (2,)"),
    wrong("update/unrecognised", nb08.check_online_update, (M1, 1.0), "✅❌", "1 is not it"),
]

# ------------------------------------------------------------------------------ exercise 2: merge

A, B = nb08.EX_A, nb08.EX_B
MAB = max(A["m"], B["m"])
FA, FB = math.exp(A["m"] - MAB), math.exp(B["m"] - MAB)
LAB = FA * A["l"] + FB * B["l"]
OAB = (FA * A["l"] * A["o"] + FB * B["l"] * B["o"]) / LAB  # (2,)
UA, UB = math.exp(MAB - A["m"]), math.exp(MAB - B["m"])  # the upside-down factors


EX2 = [
    right("merge/by-hand", nb08.check_merge, MAB, LAB, OAB),
    right("merge/as-lists", nb08.check_merge, [MAB], LAB, OAB.tolist()),
    wrong("merge/m-min", nb08.check_merge, (min(A["m"], B["m"]), LAB, OAB), "❌✅✅", "the smaller max"),
    wrong("merge/m-sum", nb08.check_merge, (A["m"] + B["m"], LAB, OAB), "❌✅✅", "you added the maxima"),
    wrong("merge/m-mean", nb08.check_merge, ((A["m"] + B["m"]) / 2, LAB, OAB), "❌✅✅", "mean of the maxima"),
    wrong("merge/l-sum", nb08.check_merge, (MAB, A["l"] + B["l"], OAB), "✅❌✅", "added the sums as they are"),
    wrong("merge/l-upside-down", nb08.check_merge, (MAB, UA * A["l"] + UB * B["l"], OAB), "✅❌✅", "upside down"),
    wrong("merge/l-one-half", nb08.check_merge, (MAB, B["l"], OAB), "✅❌✅", "the larger max only"),
    wrong("merge/o-average", nb08.check_merge, (MAB, LAB, (A["o"] + B["o"]) / 2), "✅✅❌", "plain average"),
    wrong("merge/o-l-weighted", nb08.check_merge,
          (MAB, LAB, (A["l"] * A["o"] + B["l"] * B["o"]) / (A["l"] + B["l"])), "✅✅❌", "without rescaling"),
    wrong("merge/o-upside-down", nb08.check_merge,
          (MAB, LAB, (UA * A["l"] * A["o"] + UB * B["l"] * B["o"]) / (UA * A["l"] + UB * B["l"])), "✅✅❌",
          "upside down"),
    wrong("merge/o-not-divided", nb08.check_merge, (MAB, LAB, FA * A["l"] * A["o"] + FB * B["l"] * B["o"]),
          "✅✅❌", "forgot to divide by ℓ"),
    wrong("merge/o-one-half", nb08.check_merge, (MAB, LAB, B["o"].copy()), "✅✅❌", "larger max only"),
    wrong("merge/o-divided-by-raw-sum", nb08.check_merge,
          (MAB, LAB, (FA * A["l"] * A["o"] + FB * B["l"] * B["o"]) / (A["l"] + B["l"])), "✅✅❌",
          "divided by ℓ_A + ℓ_B"),
    wrong("merge/o-shape", nb08.check_merge, (MAB, LAB, OAB[None, :]), "✅✅❌", "(1, 2)", "(2,)"),
]

# ------------------------------------------------------------------------------ exercise 3: bytes

T3 = nb08.EX_T_BYTES
BYTES = T3 * T3 * 4  # float32: 4 bytes

EX3 = [
    right("bytes/int", nb08.check_matrix_bytes, BYTES),
    right("bytes/numpy", nb08.check_matrix_bytes, np.int64(T3) ** 2 * np.dtype(np.float32).itemsize),
    right("bytes/float", nb08.check_matrix_bytes, float(BYTES)),
    right("bytes/list", nb08.check_matrix_bytes, [BYTES]),
    wrong("bytes/bits", nb08.check_matrix_bytes, (T3 * T3 * 32,), "❌", "these are bits, not bytes"),
    wrong("bytes/float64", nb08.check_matrix_bytes, (T3 * T3 * 8,), "❌", "that is float64"),
    wrong("bytes/float16", nb08.check_matrix_bytes, (T3 * T3 * 2,), "❌", "that is float16"),
    wrong("bytes/numbers", nb08.check_matrix_bytes, (T3 * T3,), "❌", "this counts the numbers"),
    wrong("bytes/not-squared", nb08.check_matrix_bytes, (T3 * 4,), "❌", "square T first"),
    wrong("bytes/GiB", nb08.check_matrix_bytes, (BYTES / 2**30,), "❌", "that is in GiB"),
    wrong("bytes/MiB", nb08.check_matrix_bytes, (BYTES / 2**20,), "❌", "that is in MiB"),
    wrong("bytes/GB", nb08.check_matrix_bytes, (BYTES / 1e9,), "❌", "that is in GB"),
    wrong("bytes/MB", nb08.check_matrix_bytes, (BYTES / 1e6,), "❌", "that is in MB"),
    wrong("bytes/unrecognised", nb08.check_matrix_bytes, (12345,), "❌", "12345 is not it"),
]

# ------------------------------------------------------------------------------ exercise 4: FLOPs

T4, D4 = nb08.EX_T_FLOPS, nb08.EX_D
FLOPS = 2 * T4 * T4 * D4 + 2 * T4 * T4 * D4  # Q Kᵀ, then weights · V

EX4 = [
    right("flops/int", nb08.check_flops, FLOPS),
    right("flops/float", nb08.check_flops, 4.0 * T4**2 * D4),
    wrong("flops/2T2d", nb08.check_flops, (2 * T4 * T4 * D4,), "❌", "2·T²·d is one product only"),
    wrong("flops/T2d", nb08.check_flops, (T4 * T4 * D4,), "❌", "T²·d counts the multiplications"),
    wrong("flops/8T2d", nb08.check_flops, (8 * T4 * T4 * D4,), "❌", "counts each product twice"),
    wrong("flops/4Td2", nb08.check_flops, (4 * T4 * D4 * D4,), "❌", "cost of projections"),
    wrong("flops/no-d", nb08.check_flops, (4 * T4 * T4,), "❌", "d is missing"),
    wrong("flops/GFLOP", nb08.check_flops, (FLOPS / 1e9,), "❌", "that is in GFLOP"),
    wrong("flops/unrecognised", nb08.check_flops, (1e6,), "❌", "1e+06 is not it"),
]

TABLES = (EX1, EX2, EX3, EX4)
CASES = [c._replace(id=f"ex{n}:{c.id}") for n, table in enumerate(TABLES, start=1) for c in table]
CHECKS = {nb08.check_online_update: 2, nb08.check_merge: 3, nb08.check_matrix_bytes: 1, nb08.check_flops: 1}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_verdict_and_message(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    assert_verdict_and_message(case, CHECKS[case.check], capsys)


def test_every_public_check_is_tested() -> None:
    tested = {c.check for c in CASES}
    for name in nb08.__all__:
        if name.startswith("check_"):
            assert getattr(nb08, name) in tested, f"nb08.{name} has no case"
            assert getattr(nb08, name) in CHECKS, f"nb08.{name} is not in CHECKS"


def test_every_listed_mistake_is_a_different_answer() -> None:
    """Two slips giving the same numbers would make one of the messages unreachable."""
    for table in TABLES:
        wrongs = [c for c in table if "❌" in c.marks and "unrecognised" not in c.id and "shape" not in c.id
                  and "array" not in c.id and "both" not in c.id]
        rights = [c for c in table if "❌" not in c.marks]
        for k, a in enumerate(wrongs):
            for b in [*rights, *wrongs[k + 1:]]:
                same = all(np.shape(x) == np.shape(y) and np.allclose(np.asarray(x, float), np.asarray(y, float))
                           for x, y in zip(a.args, b.args, strict=True))
                assert not same, f"{a.id} and {b.id} give the same numbers"


def test_a_wrong_number_that_is_no_known_slip_is_not_revealed(capsys: pytest.CaptureFixture[str]) -> None:
    for check, args, answer in [(nb08.check_matrix_bytes, (1.0,), BYTES), (nb08.check_flops, (3.0,), FLOPS),
                                (nb08.check_online_update, (M1, 0.5), L1)]:
        _, out = run(check, args, capsys)
        assert f"{answer:.6g}" not in out and f"{answer:.4g}" not in out, out


def test_merge_formula_is_attention_over_all_keys() -> None:
    """The merge the check accepts is exact attention over both halves of a real row."""
    rng = np.random.default_rng(3)
    scores, V = rng.normal(size=8) * 3, rng.normal(size=(8, 2))  # (8,), (8, 2)
    halves = []
    for part in (slice(0, 4), slice(4, 8)):
        m = float(scores[part].max())
        e = np.exp(scores[part] - m)  # (4,)
        halves.append({"m": m, "l": float(e.sum()), "o": e @ V[part] / e.sum()})
    a, b = halves
    m = max(a["m"], b["m"])
    fa, fb = math.exp(a["m"] - m), math.exp(b["m"] - m)
    l = fa * a["l"] + fb * b["l"]
    o = (fa * a["l"] * a["o"] + fb * b["l"] * b["o"]) / l
    np.testing.assert_allclose(o, softmax(scores) @ V, rtol=1e-12)
    np.testing.assert_allclose(l, np.exp(scores - scores.max()).sum(), rtol=1e-12)


# unanswered, garbage, names, the exercise data unchanged: tests/test_checks_every_lesson.py (every lesson's)


# =========================================================================== tiled_attention_steps


@pytest.mark.parametrize("block_size", [1, 2, 3, 4, 7, 8, 11])
def test_steps_end_at_tiled_attention_and_each_step_is_attention_over_the_keys_seen(block_size: int) -> None:
    rng = np.random.default_rng(block_size)
    Q, K, V = rng.normal(size=(5, 3)) * 2, rng.normal(size=(8, 3)) * 2, rng.normal(size=(8, 2))  # T_q=5, T_k=8
    steps = tiled_attention_steps(Q, K, V, block_size)
    assert [s["start"] for s in steps] == list(range(0, 8, block_size))
    assert steps[-1]["stop"] == 8
    np.testing.assert_allclose(steps[-1]["output"], tiled_attention(Q, K, V, block_size), rtol=0, atol=1e-12)
    S = Q @ K.T / np.sqrt(3)  # (5, 8)
    previous = None
    for s in steps:
        seen = S[:, : s["stop"]]  # (5, stop) every score so far
        m = seen.max(axis=1, keepdims=True)
        np.testing.assert_allclose(s["running_max"], m, rtol=1e-14)
        np.testing.assert_allclose(s["running_sum"], np.exp(seen - m).sum(axis=1, keepdims=True), rtol=1e-12)
        np.testing.assert_allclose(s["output"], scaled_dot_product_attention(Q, K[: s["stop"]], V[: s["stop"]])[0],
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(s["scores"], S[:, s["start"] : s["stop"]], rtol=1e-14, atol=1e-14)
        want = np.zeros_like(m) if previous is None else np.exp(previous - m)
        np.testing.assert_allclose(s["rescale"], want, rtol=1e-14)
        assert (s["rescale"] <= 1).all()
        previous = m


@pytest.mark.parametrize(("args", "match"), [
    ((np.ones((2, 3, 2)), np.ones((2, 3, 2)), np.ones((2, 3, 2)), 2), "2-D"),
    ((np.ones((3, 2)), np.ones((4, 2)), np.ones((3, 2)), 2), "K and V must have the same number of tokens"),
    ((np.ones((3, 2)), np.ones((3, 3)), np.ones((3, 2)), 2), "same last dimension"),
    ((np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), 0), "block_size must be at least 1"),
    ((np.full((3, 2), 1e200), np.full((3, 2), 1e200), np.ones((3, 2)), 2), "overflow"),
])
def test_steps_refuse_bad_arguments_by_name(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        tiled_attention_steps(*args)


# =========================================================================== the explorer


def check_numbers(ex) -> dict:
    """data-state, weights, output and every heatmap cell == what expected recomputes from the inputs."""
    state = state_from_html(ex.readout.value)
    assert state["kind"] == "tiles" and "error" not in state
    want = expected_tiles(state["inputs"])
    np.testing.assert_allclose(ui_expected.number_array(state["weights"]), want.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ui_expected.number_array(state["output"]), want.output, rtol=0, atol=1e-12)
    assert shown_cells(ex) == ui_expected.cell_texts(want.tables)
    return state


def test_explorer_shows_helpers_numbers_at_every_block() -> None:
    ex = tiles_explorer()
    out, weights = scaled_dot_product_attention(TILES_Q, TILES_K, TILES_V)
    n = len(tiled_attention_steps(TILES_Q, TILES_K, TILES_V, 3))
    assert n == 3 and ex.controls["block"].max == n and ex.controls["block"].min == 1
    for block in range(1, n + 1):
        ex.set(block=block)
        state = check_numbers(ex)
        assert state["inputs"]["block"] == block and state["inputs"]["block_size"] == 3
        np.testing.assert_allclose(ex.weights, weights, rtol=0, atol=1e-15)  # the same at every step
    np.testing.assert_allclose(ex.output, out, rtol=0, atol=1e-12)  # the last block: the full output
    assert "equals the full softmax output" in ex.readout.value


def test_one_slider_step_changes_the_numbers_and_the_inputs() -> None:
    ex = tiles_explorer()
    before, state0 = shown_cells(ex), check_numbers(ex)
    ex.controls["block"].value = 2  # what ArrowRight does in the browser
    after, state1 = shown_cells(ex), check_numbers(ex)
    assert after != before and state1["inputs"] != state0["inputs"]
    assert "grew in rows 1, 2, 3, 4, 5, 6:" in ex.readout.value


def test_explorer_on_other_inputs_and_block_sizes() -> None:
    rng = np.random.default_rng(7)
    Q, K, V = rng.integers(-2, 3, size=(7, 2)), rng.integers(-2, 3, size=(7, 2)), rng.normal(size=(7, 3))
    for block_size in (1, 2, 4, 7):
        ex = tiles_explorer(Q, K, V, block_size=block_size, token_labels=list("abcdefg"))
        for block in range(1, ex.controls["block"].max + 1):
            ex.set(block=block)
            check_numbers(ex)


def test_a_refused_state_is_told_in_words() -> None:
    ex = tiles_explorer()
    good = [v.snapshot() for v in ex.views]
    ex.controls["block"].max = 5  # a slider that (wrongly) allows a block beyond the keys
    ex.controls["block"].value = 5  # the widget path: no exception reaches the browser
    state = state_from_html(ex.readout.value)
    assert "block must be 1 to 3" in state["error"] and "Refused" in ex.readout.value
    assert [v.snapshot() for v in ex.views] == good  # the views keep the last good state
    with pytest.raises(ValueError, match="block must be 1 to 3"):  # the code path says it too
        ex.set(block=4)
    ex.set(block=2)
    assert "error" not in state_from_html(ex.readout.value)


def test_explorer_refuses_bad_construction() -> None:
    with pytest.raises(ValueError, match="block_size must be at least 1"):
        tiles_explorer(block_size=0)
    with pytest.raises(ValueError, match="K and V must have the same number of tokens"):
        tiles_explorer(V=np.ones((5, 2)))
    with pytest.raises(TypeError):
        tiles_explorer(Q="not a matrix")


# ------------------------------------------------------- a NaN answer: the exp hint only where there is an exp

EXP_CHECKS = {nb08.check_online_update, nb08.check_merge}  # exercises 1 and 2 compute exps; 3 and 4 count
_FIRST_RIGHT = list({c.check: c for c in reversed(CASES) if c.marks and set(c.marks) == {"✅"}}.values())


def test_the_nan_table_covers_every_check() -> None:
    assert {c.check for c in _FIRST_RIGHT} == set(CHECKS)


@pytest.mark.parametrize("case", _FIRST_RIGHT, ids=[c.id for c in _FIRST_RIGHT])
def test_nan_answer_blames_exp_only_where_the_exercise_has_one(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    verdict, out = run(case.check, nan_like(case.args), capsys)
    assert not verdict and "NaN" in out, out
    assert ("did exp overflow" in out) is (case.check in EXP_CHECKS), out
    if case.check not in EXP_CHECKS:
        assert "0/0 or inf − inf" in out, out
