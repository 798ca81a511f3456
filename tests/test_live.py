"""Tests of the live views: controls, the live heatmaps, the Explorer protocol, every explorer's numbers.

What the page shows is read back out of what the kernel sends (the heatmap widgets' cells, the
readout's data-state) and compared with helpers.attention through the same expectations the browser
tests use (tests/ui/expected.py). The messages a heatmap sends per update are recorded and replayed
as the browser applies them.
"""

from __future__ import annotations

import copy
import gc
import json
import math
import re
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import helpers  # noqa: E402
from helpers import examples as E  # noqa: E402
from helpers import explorers as X  # noqa: E402
from helpers import panels as P  # noqa: E402
from helpers import sentence as S  # noqa: E402
from helpers.controls import MatrixSliders, MatrixToggles, choice, scalar_slider  # noqa: E402
from helpers.explorer import (  # noqa: E402
    Explorer,
    Shown,
    encode_json,
    presentation,
    state_from_html,
    state_html,
)
from helpers.liveview import (  # noqa: E402
    HEATMAP_JS,
    LIVEVIEW_CSS,
    READOUT_JS,
    HeatmapView,
    Readout,
    set_unsynced,
    view_payload,
)
from helpers.liveview import messages as M  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
import expected as ui_expected  # noqa: E402

_ESM, _CSS = HEATMAP_JS.read_text(), LIVEVIEW_CSS.read_text()  # what anywidget sends the browser
TOL = {"rtol": 1e-12, "atol": 1e-12}  # data-state numbers are the helper's numbers, up to float repr


def tables(view: HeatmapView) -> list[dict]:
    """The tables a heatmap widget shows: caption, labels, cell texts and colour rows (flat, row by row)."""
    return view.snapshot()["tables"]


def shown_cells(ex: Explorer) -> list[list[str]]:
    """The cell texts of every heatmap table of the explorer, in page order."""
    return [t for v in ex.views for t in v.cell_texts()]


def _check_numbers(ex: Explorer) -> dict:
    """data-state and heatmap cells == helpers.attention for the reported inputs (as the browser tests do)."""
    state = state_from_html(ex.readout.value)
    assert state["kind"] == ex.kind and "error" not in state
    want = ui_expected.expected(state)
    np.testing.assert_allclose(ui_expected.number_array(state["weights"]), want.weights, **TOL)
    np.testing.assert_allclose(ex.weights, want.weights, **TOL)
    if want.output is not None:
        np.testing.assert_allclose(ui_expected.number_array(state["output"]), want.output, **TOL)
    assert shown_cells(ex) == ui_expected.cell_texts(want.tables)
    return state


def _classes(widget) -> set:
    return set(getattr(widget, "_dom_classes", ()))


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


EXPLORERS = {kind: r.demo for kind, r in X.REGISTRY.items()}  # one small instance of every registered explorer


# --------------------------------------------------------------------------- panels and HTML


def test_every_colormap_colour_gets_text_with_wcag_aa_contrast():
    rgba = P.cell_colors(np.linspace(0, 1, 1001)[None, :], 0.0, 1.0)[0] / 255  # (1001, 4) the whole colormap
    ink = np.where(P.text_colors(rgba)[:, None] == "white", 1.0, 0.0) * np.ones(3)  # (1001, 3)
    ratios = P.contrast_ratio(rgba[:, :3], ink)
    assert ratios.min() >= 4.5, f"worst contrast {ratios.min():.2f} at {rgba[ratios.argmin()]}"
    nan_ratio = P.contrast_ratio(np.array([0xD0] * 3) / 255, np.zeros(3))  # "nan" in black on the grey
    assert nan_ratio >= 4.5
    assert P.contrast_ratio([1, 1, 1], [0, 0, 0]) == pytest.approx(21.0)  # the formula's known extreme


def test_cell_colours_are_exactly_the_colours_matplotlib_draws():
    """The live tables' cell colours equal the pixels matplotlib draws for the same panel (own scale too)."""
    from helpers.plots import draw_view

    rng = np.random.default_rng(0)
    m = rng.normal(size=(4, 5)) * 3  # (4, 5) scores on their own colour scale
    m[1, 2] = np.nan
    panel = P.Panel(m, "scores", kind="scores")
    fig = draw_view(P.View([panel], color_bars=False), managed=False)
    fig.canvas.draw()
    ax = [a for a in fig.axes if a.images][0]
    buf = np.asarray(fig.canvas.buffer_rgba())  # (H, W, 4) the drawn figure
    H = buf.shape[0]
    want = panel.colors()  # (4, 5, 4)
    for (i, j), v in np.ndenumerate(m):
        if not np.isfinite(v):
            continue
        x, y = ax.transData.transform((j + 0.42, i + 0.42))  # inside the cell, away from its text
        np.testing.assert_array_equal(buf[int(round(H - y)), int(round(x)), :3], want[i, j, :3])
    assert tuple(want[1, 2]) == (0xD0, 0xD0, 0xD0, 0xFF)  # NaN: the grey of NAN_COLOR


def test_colour_rows_pick_exactly_the_colours_matplotlib_picks():
    """cell_color_index + the colormap's table == what the colormap gives for the scaled value, ends included."""
    import matplotlib as mpl

    rng = np.random.default_rng(1)
    cmap = mpl.colormaps[P.CMAP]
    for lo, hi in ((0.0, 1.0), (-3.7, 5.2), (1e-5, 2e-5)):
        x = rng.uniform(lo - 1, hi + 1, 50_000)  # (n,) inside and outside the scale
        x[:4] = [lo, hi, np.nextafter(hi, lo), np.nextafter(lo, hi)]
        index = P.cell_color_index(x[None, :], lo, hi)[0]  # (n,)
        want = cmap(np.clip((x - lo) / (hi - lo), 0, 1), bytes=True)  # (n, 4)
        np.testing.assert_array_equal(P.colormap_lut()[index], want)
    assert P.cell_color_index(np.array([[np.nan, np.inf, -np.inf, 0.0]]), 0.0, 1.0).tolist() == [[-1, -1, -1, 0]]


def test_view_payload_has_caption_headers_texts_colour_rows_and_marks_nan():
    panel = P.Panel(np.array([[0.25, 0.75], [np.nan, 1.0]]), "weights", ["it", "cat"], ["k1", "k2"])
    (t,) = view_payload(P.View([panel]))["tables"]
    assert t["caption"] == "weights" and t["cols"] == ["k1", "k2"] and t["rows"] == ["it", "cat"]
    assert t["axes"] == "query ↓ key →"
    assert t["text"] == ["0.250", "0.750", "nan", "1.000"]  # one style per matrix: not "1" beside "0.250"
    assert t["color"][2] == -1  # NaN: the hatched grey cell
    lut = HeatmapView()._lut
    np.testing.assert_array_equal([int(lut["bg"][c][1:], 16) for c in (t["color"][0], t["color"][3])],
                                  [int.from_bytes(bytes(rgb), "big") for rgb in panel.colors()[[0, 1], [0, 1], :3]])
    assert lut["white"][t["color"][0]] == 1 and lut["white"][t["color"][3]] == 0  # dark purple: white text


def test_the_colour_table_sent_once_is_the_colormap_with_wcag_text():
    lut = HeatmapView()._lut
    rgba = P.colormap_lut()  # (256, 4)
    assert lut["bg"] == [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgba[:, :3].tolist()]
    ink = np.where(np.array(lut["white"])[:, None] == 1, 1.0, 0.0) * np.ones(3)  # (256, 3)
    assert P.contrast_ratio(rgba[:, :3] / 255, ink).min() >= 4.5  # WCAG AA on every colour of the table


def test_live_and_matplotlib_print_the_same_texts():
    m = np.array([[1e-200, 12.0, 0.5], [3.0, -np.inf, 123456.0]])
    panel = P.Panel(m, "values", kind="values")
    from helpers.plots import draw_view

    fig = draw_view(P.View([panel]), managed=False)
    texts = [t.get_text() for t in fig.axes[0].texts]
    (t,) = view_payload(P.View([panel]))["tables"]
    assert texts == t["text"] == ["1.0e-200", "12.00", "0.500", "3.000", "-inf", "1.2e+05"]
    assert t["color"][4] == -1


def test_view_sizes_are_in_em_and_presentation_enlarges():
    sizes = re.findall(r"(?:font-size|width|height|padding|gap):([^;}]*)", _CSS)
    assert sizes and not [v for v in sizes if "px" in v]  # sizes in em only (a hairline border may be 1px)
    assert 'style.fontSize = size + "em"' in _ESM and 'model.get("size") + "em"' in _ESM
    wide = X.no_weights_explorer(S.embeddings(), S.TOKENS, min=0, max=2, step=0.5)  # 6 columns of sliders, 8 keys
    presentation(True)
    try:
        assert 1.0 < wide.views[0].size < 1.6  # enlarged, but only as far as fits beside 6 columns of sliders
        assert not wide.controls["X"].sliders[0, 0].readout and wide.controls["X"].sliders[0, 0].layout.width == "72px"
    finally:
        presentation(False)
    assert wide.views[0].size == 1.0
    assert wide.controls["X"].sliders[0, 0].readout and wide.controls["X"].sliders[0, 0].layout.width == "130px"
    ex = X.widget_check()
    presentation(True)
    try:
        assert ex.views[0].size == 1.6 and "attn-present" in _classes(ex.widget)
    finally:
        presentation(False)
    assert ex.views[0].size == 1.0 and "attn-present" not in _classes(ex.widget)
    with pytest.raises(TypeError, match="on must be True or False"):
        presentation("yes")
    with pytest.raises(ValueError, match="size must be a number of em"):
        ex.views[0].set_size(0)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"matrix": np.eye(2), "kind": "scores", "vmin": float("nan")}, TypeError, "vmin must be a finite"),
        ({"matrix": np.eye(2), "kind": "scores", "vmin": 5, "vmax": 1}, ValueError, "vmin must be smaller"),
        ({"matrix": np.eye(2), "fmt": 3}, TypeError, "fmt must be a format spec"),
        ({"matrix": np.eye(2), "title": 5}, TypeError, "title must be a string"),
        ({"matrix": "ab"}, TypeError, "must be numeric"),
        ({"matrix": np.ones((2, 2), bool)}, TypeError, "real numbers"),
        ({"matrix": np.ones((2, 2, 2))}, ValueError, "2-D"),
        ({"matrix": np.full((2, 2), 2.0)}, ValueError, "fixed scale 0..1"),
        ({"matrix": np.eye(2), "kind": "other"}, ValueError, "kind must be one of"),
        ({"matrix": np.eye(2), "row_labels": ["a"]}, ValueError, "row_labels has 1 labels"),
    ],
)
def test_panel_rejects_bad_input(kwargs, error, words):
    with pytest.raises(error, match=words):
        P.Panel(**kwargs)


# --------------------------------------------------------------------------- controls


def test_matrix_sliders_shape_value_classes_labels_and_reset():
    ms = MatrixSliders("W_q", E.T001_WQ)
    assert ms.shape == (4, 3) and ms.value.dtype == np.int64
    np.testing.assert_array_equal(ms.value, E.T001_WQ)
    assert "attn-slider--W_q-3-2" in _classes(ms.sliders[3, 2])
    labels = [w.value for w in _walk(ms.widget) if w.__class__.__name__ == "HTML"]
    assert "<small>1</small>" in labels and "<small>0</small>" not in labels  # counted from 1
    seen = []
    ms.observe(seen.append)
    ms.sliders[0, 0].value = 2
    assert seen[-1]["index"] == (0, 0) and ms.value[0, 0] == 2
    ms.reset()
    np.testing.assert_array_equal(ms.value, E.T001_WQ)
    with pytest.raises(ValueError, match=r"W_q has shape \(3, 3\) but its sliders have shape \(4, 3\)"):
        ms.set_value(np.eye(3))


def test_matrix_toggles_value_presets_classes_and_checks():
    T = 3
    mt = MatrixToggles("mask", np.ones((T, T), bool), presets={"causal": np.tril(np.ones((T, T), bool))})
    assert "attn-toggle--mask-2-1" in _classes(mt.buttons[2, 1])
    seen = []
    mt.observe(seen.append)
    sent = []
    mt.buttons[0, 2].comm.send = lambda data=None, metadata=None, buffers=None: sent.append(data)
    mt.buttons[0, 2].value = False
    assert len(seen) == 1 and not mt.value[0, 2] and mt.value.sum() == 8
    painted = [d["state"] for d in sent if "button_style" in d["state"] or "description" in d["state"]]
    assert painted == [{"button_style": "", "description": ""}]  # one message to the browser, not one per trait
    assert mt.buttons[0, 2].button_style == "" and mt.buttons[0, 0].button_style == "primary"
    (preset,) = [w for w in _walk(mt.widget) if "attn-control--mask-causal" in _classes(w)]
    preset.click()
    np.testing.assert_array_equal(mt.value, np.tril(np.ones((T, T), bool)))
    assert len(seen) == 2  # one notification for the whole preset
    mt.reset()
    assert mt.value.all()
    with pytest.raises(TypeError, match="boolean matrix"):
        mt.set_value(np.ones((T, T)))
    with pytest.raises(ValueError, match=r"has shape \(2, 2\) but the toggles have shape \(3, 3\)"):
        mt.set_value(np.ones((2, 2), bool))


# --------------------------------------------------------------------------- the protocol


class _Tiny(Explorer):
    kind = "tiny"

    def __init__(self):
        super().__init__(s=scalar_slider("s", 0.0, min=-3, max=3, step=0.5))

    def show(self, s):
        if s > 2:
            raise ValueError(f"s = {s} is too large for this example")
        w = helpers.softmax(np.array([[0.0, s]]))  # (1, 2)
        return Shown(P.View([P.Panel(w, "w")]), inputs={"s": s}, weights=w)


def test_texts_are_sent_as_text_and_shown_as_text():
    panel = P.Panel(np.eye(2) * 0.5, "<b>t</b>", ["<i>", "b"], fmt=lambda v: f"<b>{v}</b>")
    (t,) = view_payload(P.View([panel]))["tables"]
    assert t["caption"] == "<b>t</b>" and t["rows"] == ["<i>", "b"] and t["text"][0] == "<b>0.5</b>"
    assert "innerHTML" not in _ESM and "insertAdjacentHTML" not in _ESM  # the browser sets text nodes only


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"value": 5, "min": 0, "max": 3}, ValueError, "starts at 5, outside its range"),
        ({"value": 0, "min": 3, "max": 0}, ValueError,
         r"min of the slider 's' must be at most max, got min=3 and max=0 \(are they swapped\?\)"),
        ({"value": 0, "min": 0, "max": 3, "step": 0}, ValueError, "step of the slider 's' must be > 0, got 0"),
        ({"value": 0, "min": 0, "max": 3, "step": 5}, ValueError,
         "step of the slider 's' must be at most max - min = 3"),
        ({"value": 0, "min": "0", "max": 3}, TypeError, "min of the slider 's' must be a number, got '0'"),
        ({"value": 0, "min": 0, "max": float("inf")}, ValueError, "max of the slider 's' must be a finite number"),
        ({"value": "a", "min": 0, "max": 3}, TypeError, "value of the slider 's' must be a finite number"),
        ({"value": 0.5, "min": 0, "max": 3, "integer": True}, ValueError, "whole numbers"),
    ],
)
def test_scalar_slider_refuses_what_ipywidgets_would_silently_clamp(kwargs, error, words):
    with pytest.raises(error, match=words):
        scalar_slider("s", **kwargs)


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        # the range is checked where every slider grid is built (controls.check_range): min/max before step
        (lambda: MatrixSliders("W", np.zeros((2, 2)), min=3, max=-3), ValueError,
         r"min of the sliders of W must be smaller than max, got min=3 and max=-3 \(are they swapped\?\)"),
        (lambda: MatrixSliders("W", np.zeros((2, 2)), min=1, max=1), ValueError,
         "min of the sliders of W must be smaller than max, got min=1 and max=1$"),
        (lambda: MatrixSliders("W", np.zeros((2, 2)), min="a"), TypeError, "min of the sliders of W must be a number"),
        (lambda: MatrixSliders("W", np.zeros((2, 2)), step=-1), ValueError, "step of the sliders of W must be > 0"),
        (lambda: X.multihead_explorer(np.eye(3, 4), 4, min=3, max=-3), ValueError,
         r"min of the sliders of W_q, W_k, W_v must be smaller than max, got min=3 and max=-3"),
        (lambda: X.multihead_explorer(np.eye(3, 4), 4, step=10), ValueError,
         r"step of the sliders of W_q, W_k, W_v must be at most max - min = 4.0, got 10"),
        (lambda: X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV, min=2, max=-2), ValueError,
         "min of the sliders of W_q must be smaller than max"),
        (lambda: X.no_weights_explorer(S.embeddings(), S.TOKENS, min=None, max=None, step=True), TypeError,
         "step of the sliders of X must be a number, got True"),
    ],
)
def test_a_slider_range_blames_the_argument_that_is_wrong(make, error, words):
    with pytest.raises(error, match=words):
        make()


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: MatrixSliders("W", [[1.0, 2.0], [3.0]]), ValueError,
         "matrix for W must be a rectangular matrix: its rows have different lengths"),
        (lambda: MatrixToggles("m", [[True], [True, False]]), ValueError,
         "matrix for m must be a rectangular matrix: its rows have different lengths"),
        (lambda: X.no_weights_explorer([[1.0, 2.0], [3.0]]), ValueError, "X must be a rectangular matrix"),
        (lambda: MatrixSliders("W", np.zeros((2, 2)), row_offset=None), TypeError,
         "row_offset of W must be an integer >= 0"),
        (lambda: MatrixSliders("W", np.zeros((2, 2)), col_offset=-1), TypeError,
         "col_offset of W must be an integer >= 0"),
        (lambda: choice("c", None, 1), TypeError, "the options of c must be a list, got None"),
        (lambda: choice("c", "ab", "a"), TypeError, "the options of c must be a list, got 'ab'"),
        (lambda: choice("c", [], 1), ValueError, "the options of c are empty"),
        (lambda: X.scaling_explorer(n_samples=10**12), ValueError, "n_samples must be at most 10,000"),
        (lambda: X.positions_explorer(S.embeddings()[:3, :4], np.eye(4), np.eye(4), np.eye(4), max_shift=10**12),
         ValueError, "max_shift must be at most 10,000"),
        (lambda: X.mask_explorer(np.eye(3), np.eye(3), np.eye(3), np.eye(3), mask=[[True], [True, False]]),
         ValueError, "mask must be a rectangular matrix"),
        (lambda: X.mask_explorer(np.eye(3), np.eye(3), np.eye(3), np.eye(3), mask=np.ones((3, 3))), TypeError,
         "mask must be a boolean matrix"),
    ],
)
def test_a_bad_control_argument_is_named(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_set_with_a_refused_value_leaves_the_view_in_step_with_the_controls():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    with pytest.raises(TypeError, match="scale must be True or False"):
        ex.set(W_q=np.zeros((4, 3)), scale=0.5)  # W_q is applied, then scale is refused
    np.testing.assert_array_equal(ex.controls["W_q"].value, np.zeros((4, 3)))
    np.testing.assert_array_equal(state_from_html(ex.readout.value)["inputs"]["W_q"], np.zeros((4, 3)))
    _check_numbers(ex)


def test_presentation_applies_to_explorers_built_later_and_to_a_refused_state():
    presentation(True)
    try:
        ex = _Tiny()
        assert "attn-present" in _classes(ex.widget) and ex.views[0].size == 1.6
        assert ex.widget.children[0].layout.flex_flow == "row nowrap"
    finally:
        presentation(False)
    ex.controls["s"].value = 2.5  # refused
    presentation(True)
    try:
        assert ex.views[0].size == 1.6  # the last good state, enlarged
    finally:
        presentation(False)
    from helpers import explorer as explorer_module

    assert ex in explorer_module._LIVE
    ex.close()
    assert ex not in explorer_module._LIVE  # presentation() no longer redraws a closed explorer


def test_a_refused_state_is_told_in_words_and_the_view_keeps_the_last_good_state():
    ex = _Tiny()
    ex.controls["s"].value = 1.0
    good = ex.views[0].snapshot()
    ex.controls["s"].value = 2.5  # the widget path: no exception reaches the browser
    state = state_from_html(ex.readout.value)
    assert state["error"] == "s = 2.5 is too large for this example"
    assert "Refused" in ex.readout.value and ex.views[0].snapshot() == good
    with pytest.raises(ValueError, match="too large"):  # the code path says it too
        ex.set(s=3.0)
    ex.set(s=-1.0)
    assert "error" not in state_from_html(ex.readout.value)


def test_widgets_are_built_once_and_only_their_values_change():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    views, widgets = list(ex.views), {id(w) for w in _walk(ex.widget)}
    before = [v.snapshot() for v in views]
    figs = list(plt.get_fignums())
    for k in range(12):
        ex.controls["W_q"].sliders[k % 4, k % 3].value = (k % 5) - 2
        _check_numbers(ex)  # the heatmaps and the data-state follow every single event
    assert list(ex.views) == views and {id(w) for w in _walk(ex.widget)} == widgets
    assert [v.snapshot() for v in views] != before
    assert plt.get_fignums() == figs  # no pyplot figure per event


@pytest.mark.parametrize("kind", list(EXPLORERS))
def test_every_explorer_keeps_the_dom_contract_and_shows_the_helpers_numbers(kind):
    ex = EXPLORERS[kind]()
    assert ex.kind == kind
    assert {"attn-explorer", f"attn-explorer--{kind}"} <= _classes(ex.widget)
    ws = list(_walk(ex.widget))
    sliders = [w for w in ws if w.__class__.__name__.endswith("Slider")]
    toggles = [w for w in ws if "attn-toggle" in _classes(w)]
    assert sliders or toggles, f"{kind}: nothing to move"
    assert all(any(c.startswith("attn-slider--") for c in _classes(s)) for s in sliders)
    assert all(any(c.startswith("attn-toggle--") for c in _classes(t)) for t in toggles)
    heatmaps = [w for w in ws if "attn-heatmap" in _classes(w)]
    assert heatmaps == list(ex.views) and all(tables(h) for h in heatmaps)
    assert [w for w in ws if "attn-readout" in _classes(w)] == [ex.readout]
    assert ex.readout.value.count("data-state=") == 1
    _check_numbers(ex)
    figs = ex.figures
    assert all(isinstance(f, Figure) for f in figs) and len(figs) == len(ex.views)
    n_panels = sum(len(tables(v)) for v in ex.views)
    assert sum(len([a for a in f.axes if a.images]) for f in figs) == n_panels  # one matplotlib axes per table


def test_the_static_figure_prints_the_numbers_of_the_live_view():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    fig = ex.figures[1]  # the step view
    drawn = [[t.get_text() for t in ax.texts] for ax in fig.axes if ax.images]
    assert drawn == shown_cells(ex)[1:]


def test_no_weights_set_matches_self_attention_and_the_text_001_numbers():
    ex = X.no_weights_explorer(E.T001_X)
    ex.set(X=E.T001_X, scale=False)
    state = _check_numbers(ex)
    assert state["inputs"]["scale"] == 1.0 and state["inputs"]["scaled"] is False
    ex.set(scale=True)
    assert state_from_html(ex.readout.value)["inputs"]["scale"] == 0.5  # 1/sqrt(4)
    _check_numbers(ex)


def test_qkv_set_reproduces_text_003_weights_and_output():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    ex.set(W_q=E.T001_WQ, scale=True)
    np.testing.assert_allclose(ex.weights, E.T003_WEIGHTS, rtol=5e-5, atol=5e-9)  # printed with 5 significant digits
    np.testing.assert_allclose(ex.output, E.T003_OUTPUT, rtol=0, atol=5e-5)  # printed with 4 decimals
    ex.set(scale=False)
    np.testing.assert_allclose(ex.weights[0], E.T001_SOFTMAX_QUERY1_EXACT_4DP, rtol=0, atol=5e-5)
    np.testing.assert_allclose(ex.output[0], E.T001_OUTPUT1_EXACT_4DP, rtol=0, atol=5e-5)
    _check_numbers(ex)


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
    with pytest.raises(ValueError, match="magnitude must be a number from"):
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
        (lambda: X.scaling_explorer(d_k_max=8, d_k=16), ValueError, "need d_k <= d_k_max"),
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
    state = _check_numbers(ex)
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
        state = _check_numbers(ex)
        assert "nan" not in str(state["naive_weights"])
        ex.set(magnitude=round(threshold + 0.05, 2))
        state = _check_numbers(ex)
        assert "nan" in state["naive_weights"][0]
        assert np.isfinite(ex.weights).all()
        ex.set(dtype="float16", magnitude=3.0)
        _check_numbers(ex)
    assert capsys.readouterr() == ("", "")
    naive_table = tables(ex.views[0])[1]
    nan = naive_table["text"].index("nan")
    assert naive_table["color"][nan] == -1  # the hatched grey cell


def test_multihead_explorer_heads_are_divisors_and_a_slider_moves_only_its_head():
    ex = X.multihead_explorer(E.T001_X, 4, seed=0)
    assert list(ex.controls["heads"].options) == [1, 2, 4]
    ex.set(heads=2)
    before = ex.weights.copy()
    assert before.shape == (2, 3, 3) and len(tables(ex.views[0])) == 2
    ex.controls["W_q"].sliders[0, 2].value = 1.5  # column 3 (from 1): head 2 of 2
    assert ex.state()["inputs"]["W_q"][0][2] == 1.5
    np.testing.assert_array_equal(ex.weights[0], before[0])  # head 1 untouched
    assert not np.allclose(ex.weights[1], before[1])
    _check_numbers(ex)
    ex.set(heads=4)
    assert ex.weights.shape == (4, 3, 3) and len(tables(ex.views[0])) == 4
    _check_numbers(ex)


def test_widget_check_slider_changes_the_heatmap_and_the_number():
    ex = X.widget_check()
    before = ex.views[0].snapshot()
    ex.controls["score"].value = 2.0
    assert ex.views[0].snapshot() != before
    np.testing.assert_allclose(ex.weights, [[1 / (1 + math.e**2), 1 / (1 + math.e**-2)]], rtol=1e-12)
    assert shown_cells(ex) == [["0.119", "0.881"]]
    _check_numbers(ex)


def test_state_json_round_trips_and_spells_out_nan():
    st = {"kind": "k", "inputs": {"a": np.array([1.0, np.nan, -np.inf])}, "weights": [[1.0]]}
    back = state_from_html(state_html(st))
    assert back["inputs"]["a"] == [1.0, "nan", "-inf"]
    with pytest.raises(ValueError, match="exactly one data-state"):
        state_from_html("<div></div>")


def test_state_html_splices_json_encoded_in_advance_as_it_would_encode_it():
    rng = np.random.default_rng(0)
    w = rng.random((5, 5)).astype(np.float32)  # float32, as the language model's weights: exact in float64
    st = {"kind": "k", "inputs": {"t": "ab"}, "weights": w, "output": None}
    kept = state_html(st, {"weights": encode_json(w)})
    assert state_from_html(kept) == state_from_html(state_html(st))
    assert state_from_html(kept)["weights"] == w.astype(np.float64).tolist()
    with pytest.raises(ValueError, match="encoded must map keys of state to JSON strings"):
        state_html(st, {"nope": "1"})
    with pytest.raises(ValueError, match="encoded must map keys of state to JSON strings"):
        state_html(st, {"weights": w})


def test_heads_explorer_data_state_is_the_shown_heads_weights_after_a_head_change():
    ex = X.heads_explorer("the cat sat. the cat sa", layer=1, head=1)
    for layer, head in [(0, 2), (1, 3), (1, 1)]:
        ex.set(layer=layer, head=head)
        state = state_from_html(ex.readout.value)
        np.testing.assert_array_equal(np.array(state["weights"]), ex.weights)  # exact: the same float64 values
        assert state["inputs"]["layer"] == layer and state["inputs"]["head"] == head


def test_importing_explorers_builds_nothing():
    import importlib

    gc.collect()
    n = sum(isinstance(o, Figure) for o in gc.get_objects())
    importlib.reload(X)
    gc.collect()
    assert sum(isinstance(o, Figure) for o in gc.get_objects()) == n


def test_no_hand_written_image_encoding_remains():
    src = "".join(p.read_text() for p in Path(helpers.__file__).parent.rglob("*.py"))
    for word in ("zlib", "adler32", "struct.pack", "_GlyphAtlas", "buffer_rgba", "Coalescer"):
        assert word not in src, f"{word} is back in helpers/"


# --------------------------------------------------------------------------- what goes to the browser


class _Wire:
    """Records what an explorer's heatmaps and readout send, and applies it to copies of their states as the
    browser does: a new View replaces a heatmap's state; the readout's message carries the readout's HTML
    and, by key, the changed cells or the new View of the heatmaps (applied with helpers.liveview.messages.apply,
    the kernel's own, as heatmap.js applies them: tests/ui/test_liveview_ui.py replays them into that)."""

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.sent = ex, []
        self.state = {v._key: v.snapshot() for v in ex.views}  # what browser views opened now start from
        self.readout = ex.readout.value
        for w in [*ex.views, ex.readout]:
            original = w.comm.send

            def send(data=None, metadata=None, buffers=None, w=w, original=original):
                self.sent.append((w, copy.deepcopy(data)))
                return original(data=data, metadata=metadata, buffers=buffers)

            w.comm.send = send

    def _cells(self, key: str, msg: dict) -> None:
        self.state[key] = M.apply(self.state[key], copy.deepcopy(msg))  # ValueError: a View or cells out of turn

    def take(self) -> list[tuple]:
        out, self.sent = self.sent, []
        for w, data in out:
            if data["method"] == "update" and "_view" in data["state"]:
                self.state[w._key] = copy.deepcopy(data["state"]["_view"])
            elif data["method"] == "update" and "value" in data["state"]:
                self.readout = data["state"]["value"]
            elif data["method"] == "custom" and w is self.ex.readout:
                for key, msg in data["content"]["views"].items():
                    self._cells(key, msg)
                self.readout = data["content"].get("value", self.readout)
            elif data["method"] == "custom":
                self._cells(w._key, data["content"])
        return out


def _only_numbers_and_texts(x: object) -> bool:
    if isinstance(x, dict):
        return all(isinstance(k, str) and _only_numbers_and_texts(v) for k, v in x.items())
    if isinstance(x, list):
        return all(_only_numbers_and_texts(v) for v in x)
    return isinstance(x, (int, str)) and not isinstance(x, bool) and not (isinstance(x, str) and "<" in x)


def test_a_slider_move_sends_one_message_with_only_the_changed_cells_as_texts_and_colour_rows():
    ex = X.multihead_explorer(E.T001_X, 4, seed=0, n_heads=2)
    view = ex.views[0]
    wire = _Wire(ex)
    before = view.snapshot()
    ex.controls["W_q"].sliders[0, 2].value = 1.5  # column 3: head 2 of 2 only
    ((sender, data),) = wire.take()  # ONE message for the whole update: the readout's, no View sent again
    assert sender is ex.readout and data["method"] == "custom"
    assert data["content"]["type"] == "attn-update" and data["content"]["value"] == ex.readout.value
    assert state_from_html(data["content"]["value"])["inputs"]["W_q"][0][2] == 1.5
    (msg,) = data["content"]["views"].values()
    assert list(data["content"]["views"]) == [view._key]
    assert msg["type"] == "attn-cells" and msg["rev"] == before["rev"] and msg["caption"] == []
    assert [k for k, *_ in msg["cells"]] == [1]  # head 1's table untouched
    ((_, index, texts, colors),) = msg["cells"]
    after = view.snapshot()["tables"][1]
    changed = [i for i in range(9) if (after["text"][i], after["color"][i]) !=
               (before["tables"][1]["text"][i], before["tables"][1]["color"][i])]
    assert index == changed and texts == [after["text"][i] for i in index]
    assert colors == [after["color"][i] for i in index]
    assert _only_numbers_and_texts(msg)  # numbers and texts, no markup
    assert view.sent == len(json.dumps(msg, separators=(",", ":"))) < 300  # bytes counted; an HTML View was ~2 KB
    assert ex.readout.sent == len(json.dumps(data["content"], separators=(",", ":")))
    assert wire.state[view._key] == view.snapshot() == view.get_state()["_view"]  # browser, kernel, a new view
    assert wire.readout == ex.readout.value == ex.readout.get_state()["value"]


def test_nothing_is_sent_when_nothing_shown_changes_and_a_new_layout_is_sent_whole():
    ex = X.multihead_explorer(E.T001_X, 4, seed=0, n_heads=2)
    view = ex.views[0]
    wire = _Wire(ex)
    ex.update()  # the same state again
    assert wire.take() == [] and view.sent == 0 and ex.readout.sent == 0
    rev = view.snapshot()["rev"]
    ex.set(heads=4)  # four tables instead of two: the browser builds the View anew
    ((sender, data),) = wire.take()  # still ONE message: the readout's, carrying the whole new View
    assert sender is ex.readout and data["method"] == "custom" and data["content"]["value"] == ex.readout.value
    assert list(data["content"]["views"]) == [view._key]
    msg = data["content"]["views"][view._key]
    assert msg["type"] == "attn-view" and msg["rev"] == rev + 1
    new = msg["view"]
    assert new["rev"] == rev + 1 and len(new["tables"]) == 4
    assert new == view.snapshot() == view.get_state()["_view"]  # the kernel's trait has it for views opened later
    assert view.sent == len(json.dumps(new, separators=(",", ":")))
    assert _only_numbers_and_texts({k: v for k, v in new.items() if k != "ncols"})
    assert wire.state[view._key] == view.snapshot() and wire.readout == ex.readout.value


def test_a_heatmap_alone_sends_its_own_cells_message_and_its_new_views_as_the_trait():
    panel = lambda w: P.View([P.Panel(np.array([[w, 1 - w]]), "w")])  # noqa: E731
    view = HeatmapView(panel(0.25))
    sent = []
    original = view.comm.send
    view.comm.send = lambda data=None, metadata=None, buffers=None: (sent.append(data), original(data=data))
    msg = view.show(panel(0.5))
    assert [d["method"] for d in sent] == ["custom"] and sent[0]["content"] == msg
    assert msg["cells"] == [[0, [0, 1], ["0.500", "0.500"], msg["cells"][0][3]]]
    assert view.show(panel(0.5)) is None and len(sent) == 1  # nothing changed: nothing sent
    wide = P.View([P.Panel(np.array([[0.25, 0.25, 0.5]]), "w")])  # three columns: a new layout
    assert view.show(wide) is None and [d["method"] for d in sent[1:]] == ["update"]
    assert sent[1]["state"]["_view"] == view.snapshot() and view.snapshot()["rev"] == 2


def test_the_patch_from_one_view_to_the_next_is_pure_and_applying_it_gives_the_next():
    panel = lambda *w, title="w": P.View([P.Panel(np.array([w]), title)])  # noqa: E731
    old = {**view_payload(panel(0.25, 0.75)), "rev": 1}
    for new in (view_payload(panel(0.5, 0.5)), view_payload(panel(0.25, 0.75, title="v")),
                view_payload(panel(0.25, 0.25, 0.5))):  # cells, a caption, a new layout
        before, kept = copy.deepcopy(old), copy.deepcopy(new)
        msg = M.patch(old, new)
        assert old == before and new == kept, "patch changed its arguments"
        got = M.apply(copy.deepcopy(old), msg)
        assert {k: v for k, v in got.items() if k != "rev"} == new and got["rev"] == msg["rev"]
        assert msg["type"] == ("attn-view" if len(new["tables"][0]["cols"]) == 3 else "attn-cells")
    assert M.patch(old, {k: v for k, v in old.items() if k != "rev"}) is None  # nothing changed
    with pytest.raises(ValueError, match="cells for View 1 cannot change View 2"):
        M.apply({**old, "rev": 2}, M.patch(old, view_payload(panel(0.5, 0.5))))


def test_new_labels_on_tables_of_the_same_shape_are_a_patch_and_a_new_number_of_labels_is_a_new_view():
    """A window of keys that slides (12's step slider): the labels and cells change in place, the tables stay."""
    panel = lambda cols, w: P.View([P.Panel(np.array([w]), "w", ["q"], cols)])  # noqa: E731
    old = {**view_payload(panel(["a", "b"], [0.25, 0.75])), "rev": 1}
    new = view_payload(panel(["b", "c"], [0.5, 0.5]))
    msg = M.patch(old, new)
    assert msg["type"] == "attn-cells" and msg["labels"] == [[0, ["b", "c"], ["q"]]]
    got = M.apply(copy.deepcopy(old), msg)
    assert {k: v for k, v in got.items() if k != "rev"} == new and got["rev"] == 1
    labels_only = M.patch(old, view_payload(panel(["b", "c"], [0.25, 0.75])))
    assert labels_only["cells"] == [] and labels_only["labels"] == [[0, ["b", "c"], ["q"]]]  # not "nothing changed"
    assert M.patch(old, view_payload(panel(["a", "b", "c"], [0.2, 0.3, 0.5])))["type"] == "attn-view"
    with pytest.raises(ValueError, match="labels of table 0: 3 columns and 1 rows cannot replace 2 and 1"):
        M.apply(copy.deepcopy(old), {**msg, "labels": [[0, ["a", "b", "c"], ["q"]]]})
    titled = lambda title, w: P.View([P.Panel(np.array([w]), "w")], title)  # noqa: E731
    before = {**view_payload(titled("block 1 of 3", [0.5, 0.5])), "rev": 1}
    retitled = M.patch(before, view_payload(titled("block 2 of 3", [0.5, 0.5])))  # 08's tiles: another block
    assert retitled["type"] == "attn-cells" and retitled["title"] == "block 2 of 3" and retitled["cells"] == []
    assert M.apply(copy.deepcopy(before), retitled)["title"] == "block 2 of 3"
    assert M.patch(before, view_payload(titled("", [0.5, 0.5])))["type"] == "attn-view"  # no title: a new layout


def test_a_value_the_readouts_message_carries_is_not_synced_again_even_when_it_holds_tuples():
    """set_unsynced, the one use of ipywidgets' private _lock_property: a trait set for a message that carries it
    sends nothing of its own (one message per update), also when the value holds tuples (JSON gives lists back,
    and ipywidgets compares the round trip with the locked value as given: a tuple would send the whole value)."""
    panel = lambda *w: P.View([P.Panel(np.array([w]), "w")])  # noqa: E731
    view, readout, sent = HeatmapView(panel(0.25, 0.75)), Readout(), []
    for w in (view, readout):
        def send(data=None, metadata=None, buffers=None, w=w, original=w.comm.send):
            sent.append((w, copy.deepcopy(data)))
            return original(data=data, metadata=metadata, buffers=buffers)

        w.comm.send = send
    msg = view.show(panel(0.25, 0.25, 0.5), send=False)  # a new layout: the whole View, for the readout to carry
    assert msg["type"] == "attn-view" and sent == [] and view.snapshot() == msg["view"]
    readout.update("<b>3 keys</b>", {view: msg})
    assert [(w, d["method"]) for w, d in sent] == [(readout, "custom")]  # ONE message: no sync of _view or value
    assert sent[0][1]["content"]["views"][view._key]["view"] == view.get_state()["_view"]
    state = {**copy.deepcopy(msg["view"]), "rev": 3}
    tuples = {**state, "tables": [{**t, "cols": tuple(t["cols"]), "color": tuple(t["color"])} for t in state["tables"]]}
    got = set_unsynced(view, _view=tuples)["_view"]
    assert len(sent) == 1, "a value holding tuples was synced again in full"
    assert got == state
    assert view.snapshot() == state and type(view._view["tables"][0]["cols"]) is list
    view._view = {**state, "rev": 4}  # set as usual: ipywidgets syncs it (so the counts above can fail)
    assert [d["method"] for _, d in sent[1:]] == ["update"]


def test_the_message_types_are_written_the_same_in_python_and_in_the_es_module():
    """The TypedDicts of helpers.liveview.messages and the JSDoc @typedef of heatmap.js name the same fields."""
    js = re.sub(r"\n\s*\*", " ", _ESM)  # a typedef continued on the next comment line
    typedefs = {name: body for body, name in re.findall(r"@typedef \{\{(.*?)\}\} (\w+)", js)}
    for name in ("Lut", "WeightsColorBar", "OwnColorBar", "Table", "ViewState", "CellsMessage", "ViewMessage",
                 "ReadoutMessage"):
        fields = set(re.findall(r"(?:^|,)\s*(\w+)\??:", typedefs[name]))
        assert fields == set(getattr(M, name).__annotations__), f"{name}: heatmap.js and messages.py differ"
    assert "ReadoutMessage" in READOUT_JS.read_text() and "messages.py" in READOUT_JS.read_text()


@pytest.mark.parametrize("kind", list(EXPLORERS))
def test_the_browser_replaying_the_messages_shows_what_show_returns(kind):
    """After a sweep of control changes, the state built from the messages alone == the Views of the last
    state, for every explorer (in-place cell changes and new layouts alike)."""
    ex = EXPLORERS[kind]()
    wire = _Wire(ex)
    moved = 0
    for c in ex.controls.values():
        cells = list(getattr(c, "sliders", getattr(c, "buttons", np.empty(0))).ravel()[:3]) or [c]
        for w in cells:
            if isinstance(w.value, bool):
                if kind == "masks" and w is c.buttons[0, 0]:
                    continue  # row 1 sees only key 1 after a causal preset: never empty a row here
                w.value = not w.value
            elif hasattr(w, "options"):
                w.value = list(w.options)[-1] if w.value != list(w.options)[-1] else list(w.options)[0]
            elif isinstance(w.value, str):  # a text box: the same characters backwards, a new layout if T changes
                w.value = w.value[::-1]
            else:
                w.value = w.max if w.value != w.max else w.min
            moved += 1
            wire.take()
            for view, shown in zip(ex.views, ex._shown.views, strict=True):
                got = {k: v for k, v in wire.state[view._key].items() if k != "rev"}
                want = view_payload(shown)
                assert got == want, f"{kind}: after a change the browser's state differs from the View"
                assert json.loads(json.dumps(want)) == want, f"{kind}: the payload is not all JSON types (a tuple?)"
            assert wire.readout == ex.readout.value
    assert moved


def test_no_html_string_path_remains():
    """The heatmap tables are built by the browser (liveview's ES module) and nowhere else."""
    root = Path(helpers.__file__).parent
    assert not (root / "htmlview.py").exists()
    for path in root.rglob("*.py"):
        src = path.read_text()
        for word in ("view_html", "panel_html", 'class="attn-hm"', "class='attn-hm'", "class=\\\"attn-hm"):
            assert word not in src, f"{word} is back in {path.name}: live heatmaps send numbers and texts, not markup"


# --------------------------------------------------------------------------- colour bars of scores and values


def test_a_values_panel_gets_its_own_bar_in_the_payload_with_the_colormap_and_ticks():
    import matplotlib as mpl

    loss = P.Panel(np.array([[0.5, 2.0, 1.0]]), "loss", kind="values", vmin=0.0, vmax=3.0, color_bar_label="loss")
    payload = view_payload(P.View([loss]))
    assert payload["weights_color_bar"] is None  # no attention weights: no 0..1 bar that the loss could be read on
    (bar,) = payload["color_bars"]
    assert bar["label"] == "loss" and bar["tables"] == [0]
    assert bar["ticks"] == [[0, "0"], [50, "1.500"], [100, "3.000"]]  # [percent of the way, text] at 0, 1.5, 3
    want = mpl.colormaps[P.CMAP](np.linspace(0, 1, 11), bytes=True)[:, :3]  # the colormap from vmin to vmax
    assert bar["stops"] == [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in want.tolist()]
    mixed = view_payload(P.View([P.Panel(np.full((2, 2), 0.5), "w"), loss]))
    assert mixed["weights_color_bar"]["after"] == 0 and [b["tables"] for b in mixed["color_bars"]] == [[1]]
    assert {k: v for k, v in mixed["weights_color_bar"].items() if k != "after"} == payload_weights_color_bar()
    assert _only_numbers_and_texts(payload["color_bars"])  # numbers and texts, no markup


def payload_weights_color_bar() -> dict:
    """The attention weights' bar as it always was: its label, 11 stops from 0 to 1, ticks 0, 0.5, 1."""
    lut = HeatmapView()._lut["bg"]
    stops = P.cell_color_index(np.linspace(0, 1, 11)[None, :], 0.0, 1.0)[0]
    return {"label": P.COLOR_BAR_LABELS["weights"], "stops": [lut[i] for i in stops], "ticks": ["0", "0.5", "1"]}


def test_a_moving_scale_sends_the_bars_new_ticks_and_only_a_new_bar_is_a_new_layout():
    panel = lambda m, **kw: P.Panel(np.array(m, dtype=float), "v", kind="values", **kw)  # noqa: E731
    view = HeatmapView(P.View([panel([[0, 1, 2]]), panel([[0, 1, 2]])]))  # scaled to their data: a bar each
    assert [b["tables"] for b in view.snapshot()["color_bars"]] == [[0], [1]]
    rev = view.snapshot()["rev"]
    msg = view.show(P.View([panel([[0, 1, 4]]), panel([[0, 1, 2]])]), send=False)  # the first scale moved: 0..4
    assert msg["type"] == "attn-cells" and msg["color_bars"] == [[0, "value (own scale)",
                                                                  [[0, "0"], [50, "2"], [100, "4"]]]]
    assert view.snapshot()["color_bars"][0]["ticks"] == [[0, "0"], [50, "2"], [100, "4"]]
    same = view.show(P.View([panel([[0, 1, 4]]), panel([[0, 1, 2]])]), send=False)
    assert same is None  # nothing moved: nothing sent
    msg = view.show(P.View([panel([[0, 1, 4]]), panel([[0, 1, 4]])]), send=False)  # equal ranges again: still
    assert msg["type"] == "attn-cells" and view.snapshot()["rev"] == rev  # patched, not rebuilt
    fixed = lambda m: panel(m, vmin=0.0, vmax=4.0)  # noqa: E731  a fixed scale: neighbours share one bar
    msg = view.show(P.View([fixed([[0, 1, 4]]), fixed([[0, 1, 2]])]), send=False)
    assert msg["type"] == "attn-view" and msg["rev"] == rev + 1
    assert [b["tables"] for b in msg["view"]["color_bars"]] == [[0, 1]]
    msg = view.show(P.View([fixed([[0, 1, 4]]), fixed([[0, 1, 2]])], color_bars=False), send=False)  # the bars go
    assert msg["type"] == "attn-view" and msg["view"]["color_bars"] == [] and msg["view"]["weights_color_bar"] is None
    msg = view.show(P.View([fixed([[0, 1, 4]]), fixed([[0, 1, 2]])]), send=False)  # and come back
    assert msg["type"] == "attn-view" and len(msg["view"]["color_bars"]) == 1
    w = P.Panel(np.array([[0.5, 0.5]]), "w")
    view = HeatmapView(P.View([w]))
    assert view.show(P.View([w], color_bars=False), send=False)["type"] == "attn-view"  # the weights' bar goes


def test_the_browser_module_draws_the_bars_it_is_sent():
    assert "attn-legend own" in _ESM and "attn-group" in _ESM and 'setAttribute("aria-hidden", "true")' in _ESM
    assert "msg.color_bars" in _ESM  # a cells message may move a bar's ticks
    assert "fillColorBar(shown.colorBars[n], state.color_bars[n])" in _ESM


def test_the_readout_refuses_cells_that_are_not_heatmaps_in_words():
    readout = Readout()
    for bad in ({"key": {"type": "attn-cells"}}, [HeatmapView()], "cells"):
        with pytest.raises(TypeError, match="cells must be a dict from each HeatmapView"):
            readout.update("<b>x</b>", bad)
    assert readout.value == "" and readout.sent == 0  # nothing shown, nothing sent
