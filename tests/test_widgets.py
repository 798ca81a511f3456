"""Tests of helpers.widgets and helpers.explorers: sliders, the live-figure pipeline, the DOM contract,
and that every explorer's readout shows what helpers.attention computes."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import math
import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

import helpers  # noqa: E402
from helpers import examples as E  # noqa: E402
from helpers import explorers as X  # noqa: E402
from helpers import widgets as Wd  # noqa: E402

TOL = {"rtol": 1e-12, "atol": 1e-12}  # readout numbers are the helper's numbers, up to float repr


# --------------------------------------------------------------------------- MatrixSliders


def test_matrix_sliders_shape_value_classes_and_reset():
    ms = Wd.MatrixSliders("W_q", E.T001_WQ)
    assert ms.shape == (4, 3) and ms.sliders.shape == (4, 3)
    np.testing.assert_array_equal(ms.value, E.T001_WQ)
    assert ms.integer and ms.value.dtype == np.int64
    assert set(ms.sliders[2, 1]._dom_classes) == {"attn-slider", "attn-slider--W_q-2-1"}
    assert "attn-control--reset-W_q" in ms.reset_button._dom_classes
    changes = []
    ms.observe(changes.append)
    ms.sliders[0, 0].value = 4
    assert changes[-1]["index"] == (0, 0) and changes[-1]["new"] == 4 and ms.value[0, 0] == 4
    with pytest.raises(ValueError, match=r"W_q has entries from -6 to 5, outside the slider range \[-5, 5\]"):
        ms.set_value(np.arange(12).reshape(4, 3) - 6)
    new = np.arange(12).reshape(4, 3) % 11 - 5  # -5..5
    ms.set_value(new)
    assert len(changes) == 2 and changes[-1]["index"] is None  # one notification for the whole matrix
    np.testing.assert_array_equal(ms.value, new)
    ms.reset_button.click()
    np.testing.assert_array_equal(ms.value, E.T001_WQ)


def test_matrix_sliders_offsets_name_the_full_matrix_entry_and_floats_work():
    ms = Wd.MatrixSliders("W_k", np.array([[0.25, -0.5], [1.0, 0.0]]), col_offset=2, step=0.05)
    assert not ms.integer
    assert "attn-slider--W_k-1-3" in ms.sliders[1, 1]._dom_classes
    np.testing.assert_allclose(ms.value, [[0.25, -0.5], [1.0, 0.0]], rtol=0, atol=0)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        (("W_q", np.zeros((2, 2, 2))), {}, ValueError, "matrix for W_q must be a non-empty 2-D"),
        (("W_q", [["a"]]), {}, TypeError, "matrix for W_q must hold numbers"),
        (("W q", np.eye(2)), {}, TypeError, "name must be a non-empty string without spaces"),
        (("X", np.eye(2) * 9), {"min": -1, "max": 1}, ValueError, "outside the slider range"),
        (("X", np.eye(2) / 2), {"integer": True}, ValueError, "integer=True but the matrix for X"),
    ],
)
def test_matrix_sliders_reject_bad_input(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        Wd.MatrixSliders(*args, **kwargs)


def test_matrix_sliders_set_value_checks_shape_and_range():
    ms = Wd.MatrixSliders("X", E.T001_X)
    with pytest.raises(ValueError, match=r"X has shape \(2, 2\) but its sliders have shape \(3, 4\)"):
        ms.set_value(np.eye(2))
    with pytest.raises(ValueError, match="outside the slider range"):
        ms.set_value(np.full((3, 4), 100))


# --------------------------------------------------------------------------- readout, state, PNG


def test_state_json_round_trips_and_spells_out_nan():
    state = {"kind": "overflow", "inputs": {"dtype": "float16", "m": 2.5}, "weights": np.array([[0.25, np.nan]]),
             "output": None, "naive_weights": np.array([[np.inf, -np.inf]])}
    html = Wd.state_html(state)
    back = Wd.state_from_html(html)
    assert back == {"kind": "overflow", "inputs": {"dtype": "float16", "m": 2.5}, "weights": [[0.25, "nan"]],
                    "output": None, "naive_weights": [["inf", "-inf"]]}
    json.dumps(back, allow_nan=False)  # valid JSON for a browser: no bare NaN
    with pytest.raises(ValueError, match="exactly one data-state"):
        Wd.state_from_html(html + html)


def test_matrix_table_prints_4_decimals():
    html = Wd.matrix_table(np.array([[0.06337894, np.nan]]), row_labels=["q"], col_labels=["a", "b"])
    assert ">0.0634<" in html and ">nan<" in html


def test_png_encoder_output_decodes_exactly_frame_after_frame():
    rng = np.random.default_rng(0)
    img = np.full((100, 80, 4), 255, np.uint8)
    enc = Wd._PngEncoder()
    for k in range(4):
        img[10 * k : 10 * k + 7, 5:60, :3] = rng.integers(0, 256, size=(7, 55, 3))  # change a few bands
        decoded = np.asarray(Image.open(io.BytesIO(enc.encode(img))))
        np.testing.assert_array_equal(decoded, img)


# --------------------------------------------------------------------------- explorers


def _recompute(state: dict):
    """(weights, output) from helpers.attention for a data-state, independently of the explorer."""
    kind, inp = state["kind"], state["inputs"]
    arr = {k: np.asarray(v, dtype=float) for k, v in inp.items() if isinstance(v, list)}
    if kind == "no-weights":
        out, w = helpers.self_attention(arr["X"], inp["scale"])
        return w, out
    if kind == "qkv":
        out, w = helpers.single_head_attention(arr["X"], arr["W_q"], arr["W_k"], arr["W_v"], scale=inp["scale"])
        return w, out
    if kind == "scaling":
        V = np.zeros((arr["Q"].shape[0], 1))
        return helpers.scaled_dot_product_attention(arr["Q"], arr["K"], V, scale=None)[1], None
    if kind == "overflow":
        return helpers.softmax(np.asarray(inp["scores"], dtype=inp["dtype"])), None
    if kind == "multihead":
        out, w = helpers.multi_head_attention(arr["X"], arr["W_q"], arr["W_k"], arr["W_v"], inp["n_heads"])
        return w, out
    if kind == "widget-check":
        return helpers.softmax(arr["scores"]), None
    raise AssertionError(f"unknown kind {kind}")


def _visible_numbers(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>([^<]*)</td>", html)


def _check_readout(ex) -> dict:
    """The readout's data-state recomputes to its own weights/output, and the visible tables show them."""
    state = Wd.state_from_html(ex.readout.value)
    assert state["kind"] == ex.kind
    weights, output = _recompute(state)
    np.testing.assert_allclose(np.asarray(state["weights"], dtype=float), weights, **TOL)
    np.testing.assert_allclose(ex.weights, weights, **TOL)
    if output is None:
        assert state["output"] is None
    else:
        np.testing.assert_allclose(np.asarray(state["output"], dtype=float), output, **TOL)
        np.testing.assert_allclose(ex.output, output, **TOL)
    shown = _visible_numbers(ex.readout.value)
    expected = [f"{v:.4f}" for v in np.ravel(weights)] + ([f"{v:.4f}" for v in np.ravel(output)] if output is not None else [])
    assert shown[: len(expected)] == expected
    return state


def _classes(widget) -> set:
    return set(getattr(widget, "_dom_classes", ()))


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def _check_dom(ex) -> None:
    assert {"attn-explorer", f"attn-explorer--{ex.kind}"} <= _classes(ex.widget)
    widgets = list(_walk(ex.widget))
    sliders = [w for w in widgets if w.__class__.__name__.endswith("Slider")]
    assert sliders and all("attn-slider" in _classes(s) for s in sliders)
    assert all(any(c.startswith("attn-slider--") for c in _classes(s)) for s in sliders)
    images = [w for w in widgets if w.__class__.__name__ == "Image"]
    assert images and all("attn-heatmap" in _classes(i) for i in images)
    readouts = [w for w in widgets if "attn-readout" in _classes(w)]
    assert readouts == [ex.readout]
    assert ex.readout.value.count("data-state=") == 1


EXPLORERS = {
    "no-weights": lambda: X.no_weights_explorer(E.T001_X, ["x1", "x2", "x3"]),
    "qkv": lambda: X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV),
    "scaling": lambda: X.scaling_explorer(d_k_max=64, seed=1, d_k=16),
    "overflow": lambda: X.overflow_explorer(),
    "multihead": lambda: X.multihead_explorer(E.T001_X, 4, seed=0),
    "widget-check": lambda: X.widget_check(),
}


@pytest.mark.parametrize("kind", list(EXPLORERS))
def test_every_explorer_keeps_the_dom_contract_and_a_correct_readout(kind):
    ex = EXPLORERS[kind]()
    assert ex.kind == kind
    _check_dom(ex)
    _check_readout(ex)
    assert isinstance(ex.figure, Figure) and ex.figure in ex.figures


def test_no_weights_set_matches_self_attention_and_the_text_001_numbers():
    ex = X.no_weights_explorer(E.T001_X)
    ex.set(X=E.T001_X, scale=False)
    state = _check_readout(ex)
    assert state["inputs"]["scale"] == 1.0 and state["inputs"]["scaled"] is False
    ex.set(scale=True)
    assert Wd.state_from_html(ex.readout.value)["inputs"]["scale"] == 0.5  # 1/sqrt(4)
    _check_readout(ex)


def test_qkv_set_reproduces_text_003_weights_and_output():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    ex.set(W_q=E.T001_WQ, scale=True)
    np.testing.assert_allclose(ex.weights, E.T003_WEIGHTS, rtol=5e-5, atol=5e-9)  # printed with 5 significant digits
    np.testing.assert_allclose(ex.output, E.T003_OUTPUT, rtol=0, atol=5e-5)  # printed with 4 decimals
    ex.set(scale=False)
    np.testing.assert_allclose(ex.weights[0], E.T001_SOFTMAX_QUERY1_EXACT_4DP, rtol=0, atol=5e-5)
    np.testing.assert_allclose(ex.output[0], E.T001_OUTPUT1_EXACT_4DP, rtol=0, atol=5e-5)
    _check_readout(ex)


def test_slider_events_update_readout_and_image_without_new_figures():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    figs_before = list(plt.get_fignums())
    gc.collect()
    n_fig_objects = sum(isinstance(o, Figure) for o in gc.get_objects())
    full_draws = [lf.full_draws for lf in ex.live]
    pngs = []
    for k in range(12):
        ex.controls["W_q"].sliders[k % 4, k % 3].value = (k % 5) - 2
        pngs.append(ex.live[0].image.value)
        _check_readout(ex)  # the readout follows every single event
    assert plt.get_fignums() == figs_before
    gc.collect()
    assert sum(isinstance(o, Figure) for o in gc.get_objects()) == n_fig_objects
    assert [lf.full_draws for lf in ex.live] == full_draws  # updates are painted, not redrawn
    assert len(set(pngs)) > 1


def test_fast_rendering_matches_matplotlibs_own_drawing():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    ex.controls["W_q"].sliders[0, 0].value = 3
    ex.set(scale=False)
    for lf in ex.live:
        fast = np.asarray(Image.open(io.BytesIO(lf.image.value))).astype(int)[..., :3]
        slow = np.asarray(Image.open(io.BytesIO(lf.fig._repr_png_()))).astype(int)[..., :3]  # a full draw
        assert fast.shape == slow.shape
        diff = np.abs(fast - slow)
        assert diff.mean() < 4, diff.mean()  # glyph anti-aliasing differs by a pixel here and there
        assert (diff.max(axis=2) > 128).mean() < 0.02  # nothing misplaced


def test_a_display_in_between_forces_a_clean_full_redraw():
    ex = X.widget_check()
    n = ex.live[0].full_draws
    ex.figure._repr_png_()  # what display(ex.figure) does
    ex.set(score=1.0)
    assert ex.live[0].full_draws == n + 1
    np.testing.assert_allclose(ex.weights, helpers.softmax(np.array([[0.0, 1.0]])), **TOL)


def test_set_rejects_unknown_names_and_bad_values():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    with pytest.raises(TypeError, match=r"unknown names \['W_o'\]"):
        ex.set(W_o=np.eye(3))
    with pytest.raises(TypeError, match="scale must be True or False"):
        ex.set(scale=0.5)
    with pytest.raises(ValueError, match=r"W_q has shape \(3, 3\) but its sliders have shape \(4, 3\)"):
        ex.set(W_q=np.eye(3))
    o = X.overflow_explorer()
    with pytest.raises(ValueError, match="dtype must be one of"):
        o.set(dtype="float128")
    with pytest.raises(ValueError, match="magnitude must be a number in"):
        o.set(magnitude=10)


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: X.qkv_explorer(E.T001_X, np.eye(3), E.T001_WK, E.T001_WV), ValueError, "W_q has shape"),
        (lambda: X.qkv_explorer(E.T001_X, E.T001_WQ, np.ones((4, 2)), E.T001_WV), ValueError, "W_k has shape"),
        (lambda: X.no_weights_explorer("X"), TypeError, "X must be a 2-D numeric array"),
        (lambda: X.no_weights_explorer(E.T001_X, ["a"]), ValueError, "token_labels has 1 labels but X has 3"),
        (lambda: X.multihead_explorer(E.T001_X, 4, n_heads=3), ValueError, r"n_heads must divide d_model 4"),
        (lambda: X.multihead_explorer(E.T001_X, 4, W_q=np.ones((4, 3))), ValueError, r"W_q needs shape \(4, 4\)"),
        (lambda: X.scaling_explorer(d_k_max=8, d_k=16), ValueError, "d_k 16 is larger than d_k_max 8"),
        (lambda: X.scaling_explorer(seed=1.5), TypeError, "seed must be an integer"),
        (lambda: X.overflow_explorer(np.ones((2, 3))), ValueError, "pattern must be square"),
        (lambda: X.overflow_explorer(m_max=5.0), ValueError, "overflows float16"),
    ],
)
def test_explorers_reject_bad_input_naming_the_argument(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_scaling_explorer_shows_saturation_and_the_variance_of_q_dot_k():
    ex = X.scaling_explorer(d_k_max=256, seed=0, d_k=4)
    ex.set(d_k=256)
    state = _check_readout(ex)
    var = state["variance"]
    assert abs(var["unscaled"] / 256 - 1) < 0.1 and abs(var["scaled"] - 1) < 0.1  # 4000 samples: ~2% error
    unscaled = np.asarray(state["weights_unscaled"], dtype=float)
    assert unscaled.max(axis=1).mean() > np.asarray(state["weights"], dtype=float).max(axis=1).mean()
    assert f"{var['unscaled']:.2f}" in ex.readout.value


def test_overflow_explorer_naive_turns_nan_past_the_threshold_and_prints_nothing(capsys):
    ex = X.overflow_explorer()
    threshold = math.log10(math.log(np.finfo(np.float64).max) / 3)  # row 0 has max 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the test
        ex.set(dtype="float64", magnitude=round(threshold - 0.05, 2))
        state = _check_readout(ex)
        assert "nan" not in json.dumps(state["naive_weights"])
        ex.set(magnitude=round(threshold + 0.05, 2))
        state = _check_readout(ex)
        assert "nan" in state["naive_weights"][0]
        assert np.isfinite(ex.weights).all()
        np.testing.assert_allclose(ex.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        ex.set(dtype="float16", magnitude=3.0)
        _check_readout(ex)
    assert capsys.readouterr() == ("", "")
    assert ex.live[0].heatmaps[1].texts[0, 2].get_text() == "nan"


def test_multihead_explorer_heads_are_divisors_and_a_block_slider_moves_only_its_head():
    ex = X.multihead_explorer(E.T001_X, 4, seed=0)
    assert list(ex.controls["heads"].options) == [1, 2, 4]
    ex.set(n_heads=2, head=1)
    before = ex.weights.copy()
    assert before.shape == (2, 3, 3)
    slider = ex.blocks["W_q"].sliders[0, 0]
    assert "attn-slider--W_q-0-2" in slider._dom_classes  # head 1 of 2 owns columns 2..3 of W_q
    slider.value = 1.5
    assert ex.state()["inputs"]["W_q"][0][2] == 1.5
    np.testing.assert_array_equal(ex.weights[0], before[0])  # head 0 untouched
    assert not np.allclose(ex.weights[1], before[1])
    _check_readout(ex)
    ex.set(n_heads=4)
    assert ex.weights.shape == (4, 3, 3) and ex.controls["head"].max == 3
    _check_dom(ex)
    _check_readout(ex)


def test_widget_check_slider_changes_the_heatmap_and_the_number():
    ex = X.widget_check()
    png = ex.live[0].image.value
    ex.controls["score"].value = 2.0
    assert ex.live[0].image.value != png
    np.testing.assert_allclose(ex.weights, [[1 / (1 + math.e**2), 1 / (1 + math.e**-2)]], rtol=1e-12)
    assert ex.map.cell_texts() == [["0.119", "0.881"]]
    _check_readout(ex)


def test_events_inside_an_event_loop_are_coalesced_and_the_last_state_wins():
    async def drag():
        ex = X.widget_check()
        renders = ex.renders
        for k in range(20):  # a burst of events with no chance for the loop to run in between
            ex.controls["score"].value = round(-2 + 0.2 * k, 1)
        assert ex.renders == renders + 1  # the first event renders at once, the rest wait
        for _ in range(500):  # the trailing render comes after the interval (bounded wait, not a timing test)
            await asyncio.sleep(0.01)
            if not ex._coalescer.dirty:
                break
        assert ex.renders == renders + 2
        assert Wd.state_from_html(ex.readout.value)["inputs"]["scores"] == [[0.0, 1.8]]
        np.testing.assert_allclose(ex.weights, helpers.softmax(np.array([[0.0, 1.8]])), **TOL)

    asyncio.run(drag())


def test_importing_explorers_builds_nothing():
    import importlib

    gc.collect()
    n = sum(isinstance(o, Figure) for o in gc.get_objects())
    importlib.reload(X)
    gc.collect()
    assert sum(isinstance(o, Figure) for o in gc.get_objects()) == n
