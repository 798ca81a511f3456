"""Tests of notebook 09's exercise checks (helpers.checks.nb09) and its explorer (GenerationExplorer).

Checks, table-driven as tests/test_checks_nb08.py: every row calls one check with one answer and states
what the check must say: truthy and only "✅" lines for the right answer, falsy with the ✅/❌ line of each
part and the SPECIFIC explanation of the slip for each typical mistake the check claims to diagnose.
Right answers are computed here by hand in NumPy (never typed-in numbers); the slips are computed the way
a student would make them.

Explorer: its numbers are helpers' numbers at every step and every number of key/value heads, its
data-state recomputes through tests/ui/expected.py (the browser tests' expectation) to the same heatmap
texts, a slider step changes the numbers, and a refused state is told in words.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from helpers import causal_mask, multi_head_attention, softmax
from helpers.checks import Verdict, nb09
from helpers.explorer import state_from_html
from helpers.explorers import generation_explorer
from helpers.generation import mean_pool_kv_heads
from helpers.sentence import TOKENS, embeddings, two_heads

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
import expected as ui_expected  # noqa: E402
from check_table import marks_of  # noqa: E402
from html_cells import shown_cells  # noqa: E402

# ------------------------------------------------------------------------------------------ the table


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    args: tuple
    marks: str
    phrases: tuple[str, ...]


N_ARGS = {nb09.check_cache_bytes: 1, nb09.check_kv_head_of: 1, nb09.check_decode_step: 2}


def right(id: str, check: Callable[..., object], *args: object) -> Case:
    return Case(id, check, args, "✅" * N_ARGS[check], ("correct",))


def wrong(id: str, check: Callable[..., object], args: tuple, marks: str, *phrases: str) -> Case:
    return Case(id, check, args, marks, phrases)


# ------------------------------------------------------------------------------ exercise 1: bytes

C = nb09.EX_CONFIG
BYTES = 2 * C["n_layers"] * C["n_kv_heads"] * C["d_head"] * C["T"] * 2  # K and V, 2 bytes each, by hand

EX1 = [
    right("bytes/by-hand", nb09.check_cache_bytes, BYTES),
    right("bytes/array", nb09.check_cache_bytes, np.array([BYTES])),
    wrong("bytes/no-K-and-V", nb09.check_cache_bytes, (BYTES // 2,), "❌", "half of it"),
    wrong("bytes/query-heads", nb09.check_cache_bytes, (BYTES // C["n_kv_heads"] * C["n_heads"],), "❌",
          "you used the 16 query heads"),
    wrong("bytes/bits", nb09.check_cache_bytes, (BYTES * 8,), "❌", "bits, not bytes"),
    wrong("bytes/float32", nb09.check_cache_bytes, (BYTES * 2,), "❌", "float32"),
    wrong("bytes/one-layer", nb09.check_cache_bytes, (BYTES // C["n_layers"],), "❌", "that is one layer"),
    wrong("bytes/MiB", nb09.check_cache_bytes, (BYTES / 2**20,), "❌", "MiB"),
    wrong("bytes/none", nb09.check_cache_bytes, (None,), "❌", "Not answered yet"),
    wrong("bytes/unrecognised", nb09.check_cache_bytes, (12345,), "❌", "12345 is not it"),
    wrong("bytes/text", nb09.check_cache_bytes, ("201326592",), "❌", "expected one number, got text"),
]

# ------------------------------------------------------------------------------ exercise 2: which kv head

HEADS = [q * nb09.EX_G // nb09.EX_H for q in range(nb09.EX_H)]  # q·g/h rounded down = q // (h/g), by hand

EX2 = [
    right("kv-head/by-hand", nb09.check_kv_head_of, HEADS),
    right("kv-head/repeat", nb09.check_kv_head_of, np.repeat(np.arange(nb09.EX_G), nb09.EX_H // nb09.EX_G)),
    wrong("kv-head/from-1", nb09.check_kv_head_of, ([h + 1 for h in HEADS],), "❌", "counted from 1"),
    wrong("kv-head/modulo", nb09.check_kv_head_of, ([q % nb09.EX_G for q in range(nb09.EX_H)],), "❌",
          "deals the query heads out in turn"),
    wrong("kv-head/divide-by-g", nb09.check_kv_head_of, ([q // nb09.EX_G for q in range(nb09.EX_H)],), "❌",
          "divides by the number of key/value heads"),
    wrong("kv-head/per-kv-head", nb09.check_kv_head_of, ([0, 1],), "❌", "one number per key/value head"),
    wrong("kv-head/groups", nb09.check_kv_head_of, (np.arange(8).reshape(2, 4),), "❌", "query heads of each group"),
    wrong("kv-head/none", nb09.check_kv_head_of, (None,), "❌", "Not answered yet"),
    wrong("kv-head/wrong", nb09.check_kv_head_of, ([0] * 8,), "❌", "numbers differ"),
]

# ------------------------------------------------------------------------------ exercise 3: one step


def student_step(scale: float = 1 / math.sqrt(2), append: bool = True, axis: int = -1, heads: int = 2):
    """Token 4 decoded the way a student writes it: q, append k and v, softmax, weighted sum."""
    x = nb09.EX_X[3]
    K, V = nb09.EX_K_CACHE[0], nb09.EX_V_CACHE[0]  # (3, 2)
    if append:
        K = np.concatenate([K, (x @ nb09.EX_W_K)[None]])  # (4, 2)
        V = np.concatenate([V, (x @ nb09.EX_W_V)[None]])
    q = (x @ nb09.EX_W_Q).reshape(heads, -1)  # (2, 2)
    w = softmax(q @ K.T * scale, axis=axis)  # (2, t)
    return w, (w @ V).ravel()


W3, O3 = student_step()

EX3 = [
    right("step/by-hand", nb09.check_decode_step, W3, O3),
    right("step/lists", nb09.check_decode_step, W3.tolist(), O3.tolist()),
    wrong("step/no-append", nb09.check_decode_step, student_step(append=False), "❌❌",
          "own key and value are missing"),
    wrong("step/unscaled", nb09.check_decode_step, student_step(scale=1.0), "❌❌", "not scaled"),
    wrong("step/sqrt-d-model", nb09.check_decode_step, student_step(scale=0.5), "❌❌", "1/√(h·d_head)"),
    wrong("step/softmax-over-heads", nb09.check_decode_step, student_step(axis=0), "❌❌", "over the heads"),
    wrong("step/head-1-only", nb09.check_decode_step, (W3, O3[:2]), "✅❌", "head 1's output only"),
    wrong("step/stacked", nb09.check_decode_step, (W3, O3.reshape(2, 2)), "✅❌", "stacked as (h, d_head)"),
    wrong("step/none", nb09.check_decode_step, (None, None), "❌❌", "Not answered yet"),
    wrong("step/nan", nb09.check_decode_step, (np.full((2, 4), np.nan), O3), "❌✅", "exp overflow"),
]

CASES = EX1 + EX2 + EX3


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_says_what_is_right_or_what_is_wrong(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    verdict = case.check(*case.args)
    out = capsys.readouterr().out
    assert isinstance(verdict, Verdict)
    assert bool(verdict) == (set(case.marks) == {"✅"}), out
    assert marks_of(out) == case.marks, out
    for phrase in case.phrases:
        assert phrase in out, f"{phrase!r} not in {out!r}"


def test_the_exercise_data_is_what_the_notebook_says() -> None:
    # the cache after tokens 1-3 holds their keys and values, computed by hand
    np.testing.assert_array_equal(nb09.EX_K_CACHE[0], nb09.EX_X[:3] @ nb09.EX_W_K)
    np.testing.assert_array_equal(nb09.EX_V_CACHE[0], nb09.EX_X[:3] @ nb09.EX_W_V)
    # the right answer of exercise 3 is token 4's row of multi-head attention with the one kv head repeated
    W_k2, W_v2 = np.tile(nb09.EX_W_K, 2), np.tile(nb09.EX_W_V, 2)  # (3, 4): both query heads read kv head 1
    out, w = multi_head_attention(nb09.EX_X, nb09.EX_W_Q, W_k2, W_v2, 2, mask=causal_mask(4))
    np.testing.assert_allclose(W3, w[:, 3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(O3, out[3], rtol=0, atol=1e-12)
    assert not np.allclose(W3[0], W3[1])  # the two heads ask different questions


# =========================================================================== the explorer


def check_numbers(ex) -> dict:
    """data-state, weights, output and every heatmap cell == what expected recomputes from the inputs."""
    state = state_from_html(ex.readout.value)
    assert state["kind"] == "generation" and "error" not in state
    want = ui_expected.expected(state)
    np.testing.assert_allclose(ui_expected.number_array(state["weights"]), want.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ui_expected.number_array(state["output"]), want.output, rtol=0, atol=1e-12)
    assert shown_cells(ex) == ui_expected.cell_texts(want.tables)
    return state


def test_explorer_shows_helpers_numbers_at_every_step_and_kv_heads() -> None:
    X, (W_q, W_k, W_v) = embeddings(), two_heads()
    ex = generation_explorer(X, W_q, W_k, W_v, 2, TOKENS, step=1)
    assert ex.controls["n_kv_heads"].options == (2, 1)
    _, w_mha = multi_head_attention(X, W_q, W_k, W_v, 2, mask=causal_mask(8))  # (2, 8, 8)
    for g in (2, 1):
        for step in range(1, 9):
            ex.set(step=step, n_kv_heads=g)
            state = check_numbers(ex)
            assert state["cache_bytes"] == 2 * g * step * 2 * 8  # K and V, g heads, step rows, d_head 2, float64
            assert ex.weights.shape == (2, step)
            if g == 2:  # multi-head: the rows of 04's heads under the causal mask
                np.testing.assert_allclose(ex.weights, w_mha[:, step - 1, :step], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(state_from_html(ex.readout.value)["inputs"]["W_k"], mean_pool_kv_heads(W_k, 2, 1))


def test_one_slider_step_changes_the_numbers_and_the_inputs() -> None:
    ex = generation_explorer(embeddings(), *two_heads(), 2, TOKENS, step=6)
    before, state0 = shown_cells(ex), check_numbers(ex)
    ex.controls["step"].value = 7  # what ArrowRight does in the browser
    after, state1 = shown_cells(ex), check_numbers(ex)
    assert after != before and state1["inputs"] != state0["inputs"]
    assert "the new token is 'was'" in ex.readout.value and "<b>448 bytes</b>" in ex.readout.value
    ex.controls["n_kv_heads"].value = 1
    assert "<b>224 bytes</b>" in ex.readout.value and "mean-pooled" in ex.readout.value
    check_numbers(ex)


def test_a_refused_state_is_told_in_words() -> None:
    ex = generation_explorer(embeddings(), *two_heads(), 2, TOKENS, step=3)
    good = [v.snapshot() for v in ex.views]
    ex.controls["step"].max = 9  # a slider that (wrongly) allows a step beyond the tokens
    ex.controls["step"].value = 9
    state = state_from_html(ex.readout.value)
    assert "step must be 1 to 8" in state["error"] and "Refused" in ex.readout.value
    assert [v.snapshot() for v in ex.views] == good


def test_explorer_refuses_bad_construction() -> None:
    X, (W_q, W_k, W_v) = embeddings(), two_heads()
    with pytest.raises(ValueError, match=r"n_kv_heads must divide n_heads = 2: one of \[2, 1\], got 3"):
        generation_explorer(X, W_q, W_k, W_v, 2, n_kv_heads=3)
    with pytest.raises(ValueError, match="step must be 1 to 8"):
        generation_explorer(X, W_q, W_k, W_v, 2, step=9)
    with pytest.raises(ValueError, match="same width"):
        generation_explorer(X, W_q, W_k[:, :2], W_v[:, :2], 2)
    with pytest.raises(ValueError, match="token_labels has 3 labels"):
        generation_explorer(X, W_q, W_k, W_v, 2, ["a", "b", "c"])


def test_explorer_keeps_the_dom_contract_of_every_explorer() -> None:
    """tests/test_live.py's contract, for the generation explorer: classes, one data-state, figures per view."""
    from matplotlib.figure import Figure

    ex = generation_explorer(embeddings(), *two_heads(), 2, TOKENS, step=5)

    def walk(w):
        yield w
        for child in getattr(w, "children", ()):
            yield from walk(child)

    def classes(w) -> set:
        return set(getattr(w, "_dom_classes", ()))

    ws = list(walk(ex.widget))
    assert {"attn-explorer", "attn-explorer--generation"} <= classes(ex.widget)
    sliders = [w for w in ws if w.__class__.__name__.endswith("Slider")]
    assert [c for s in sliders for c in classes(s) if c.startswith("attn-slider--")] == ["attn-slider--step"]
    assert any("attn-control--n_kv_heads" in classes(w) for w in ws)
    heatmaps = [w for w in ws if "attn-heatmap" in classes(w)]
    assert heatmaps == list(ex.views) and all(h.snapshot()["tables"] for h in heatmaps)
    assert [w for w in ws if "attn-readout" in classes(w)] == [ex.readout]
    assert ex.readout.value.count("data-state=") == 1
    figs = ex.figures
    assert all(isinstance(f, Figure) for f in figs) and len(figs) == len(ex.views)
    n_tables = len(shown_cells(ex))
    assert sum(len([a for a in f.axes if a.images]) for f in figs) == n_tables  # one matplotlib axes per table
