"""Tests of the live views: controls, the HTML heatmaps, the Explorer protocol, every explorer's numbers.

What the page shows is read back out of the HTML (the heatmap tables' cells, the readout's data-state)
and compared with helpers.attention through the same expectations the browser tests use
(tests/ui/expected.py).
"""

from __future__ import annotations

import gc
import math
import re
import sys
import warnings
from html.parser import HTMLParser
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
from helpers.explorer import Explorer, Shown, presentation, state_from_html, state_html  # noqa: E402
from helpers.htmlview import panel_html, view_html  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
import expected as ui_expected  # noqa: E402

TOL = {"rtol": 1e-12, "atol": 1e-12}  # data-state numbers are the helper's numbers, up to float repr


class _Tables(HTMLParser):
    """The tables of an HTML string: caption, header texts and cell texts (and cell styles)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._in = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"caption": "", "th": [], "td": [], "style": [], "cls": [], "scope": []})
        elif tag in ("caption", "th", "td"):
            self._in = tag
            t = self.tables[-1]
            if tag == "th":
                t["th"].append("")
                t["scope"].append(a.get("scope"))
            if tag == "td":
                t["td"].append("")
                t["style"].append(a.get("style", ""))
                t["cls"].append(a.get("class", ""))

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "caption":
            self.tables[-1]["caption"] += data
        elif self._in in ("th", "td"):
            self.tables[-1][self._in][-1] += data


def tables(html: str) -> list[dict]:
    p = _Tables()
    p.feed(html)
    return p.tables


def shown_cells(ex: Explorer) -> list[list[str]]:
    """The cell texts of every heatmap table of the explorer, in page order."""
    return [[c.strip() for c in t["td"]] for v in ex._views for t in tables(v.value)]


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


EXPLORERS = {
    "no-weights": lambda: X.no_weights_explorer(E.T001_X, ["x1", "x2", "x3"]),
    "qkv": lambda: X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV),
    "scaling": lambda: X.scaling_explorer(d_k_max=64, seed=1, d_k=16),
    "overflow": lambda: X.overflow_explorer(),
    "multihead": lambda: X.multihead_explorer(E.T001_X, 4, seed=0),
    "widget-check": lambda: X.widget_check(),
    "positions": lambda: X.positions_explorer(S.embeddings(), *S.pronoun_head(), S.TOKENS, focus="it"),
    "masks": lambda: X.mask_explorer(S.embeddings(), *S.adjective_head(), S.TOKENS),
    "training": lambda: X.training_explorer(steps=20, snapshot_every=5),
    "tiles": lambda: X.tiles_explorer(),
}


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
    fig = draw_view(P.View([panel], legend=False), managed=False)
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


def test_panel_html_has_caption_headers_numbers_and_marks_nan():
    panel = P.Panel(np.array([[0.25, 0.75], [np.nan, 1.0]]), "weights", ["it", "cat"], ["k1", "k2"])
    (t,) = tables(panel_html(panel))
    assert t["caption"] == "weights"
    assert t["th"][1:3] == ["k1", "k2"] and t["th"][3] == "it" and t["th"][4] == "cat"
    assert t["scope"][:3] == ["col"] * 3 and t["scope"][3:] == ["row", "row"]
    assert t["td"] == ["0.250", "0.750", "nan", "1.000"]  # one style per matrix: not "1" beside "0.250"
    assert t["cls"][2] == "bad" and "background" not in t["style"][2]
    assert re.fullmatch(r"background:#[0-9a-f]{6}", t["style"][0])
    assert t["cls"][0] == "w" and t["cls"][3] == ""  # dark purple gets white text, yellow black


def test_html_and_matplotlib_print_the_same_texts():
    m = np.array([[1e-200, 12.0, 0.5], [3.0, -np.inf, 123456.0]])
    panel = P.Panel(m, "values", kind="values")
    from helpers.plots import draw_view

    fig = draw_view(P.View([panel]), managed=False)
    texts = [t.get_text() for t in fig.axes[0].texts]
    (t,) = tables(panel_html(panel))
    assert texts == t["td"] == ["1.0e-200", "12.00", "0.500", "3.000", "-inf", "1.2e+05"]


def test_view_html_sizes_are_in_em_and_presentation_enlarges():
    v = P.View([P.Panel(np.eye(2) * 0.5, "a")])
    assert 'font-size:1em' in view_html(v) and 'font-size:1.6em' in view_html(v, size=1.6)
    wide = X.no_weights_explorer(S.embeddings(), S.TOKENS, min=0, max=2, step=0.5)  # 6 columns of sliders, 8 keys
    presentation(True)
    try:
        size = float(re.search(r'class="attn-view" style="font-size:([\d.]+)em', wide._views[0].value).group(1))
        assert 1.0 < size < 1.6  # enlarged, but only as far as fits beside 6 columns of sliders
        assert not wide.controls["X"].sliders[0, 0].readout and wide.controls["X"].sliders[0, 0].layout.width == "72px"
    finally:
        presentation(False)
    assert wide.controls["X"].sliders[0, 0].readout and wide.controls["X"].sliders[0, 0].layout.width == "130px"
    assert not re.search(r"\d+px", view_html(v).split("</style>")[1])  # sizes of the tables in em only
    ex = X.widget_check()
    presentation(True)
    try:
        assert "font-size:1.6em" in ex._views[0].value and "attn-present" in _classes(ex.widget)
    finally:
        presentation(False)
    assert "font-size:1em" in ex._views[0].value and "attn-present" not in _classes(ex.widget)
    with pytest.raises(TypeError, match="on must be True or False"):
        presentation("yes")


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
    mt.buttons[0, 2].value = False
    assert len(seen) == 1 and not mt.value[0, 2] and mt.value.sum() == 8
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


def test_cell_texts_are_escaped():
    panel = P.Panel(np.eye(2) * 0.5, "<b>t</b>", ["<i>", "b"], fmt=lambda v: f"<b>{v}</b>")
    html = panel_html(panel)
    assert "<b>" not in html and "<i>" not in html and "&lt;b&gt;0.5&lt;/b&gt;" in html


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"value": 5, "min": 0, "max": 3}, ValueError, "starts at 5, outside its range"),
        ({"value": 0, "min": 3, "max": 0}, ValueError,
         r"min of the slider 's' must be at most max, got min=3 and max=0 \(are they swapped\?\)"),
        ({"value": 0, "min": 0, "max": 3, "step": 0}, ValueError, "step of the slider 's' must be > 0, got 0"),
        ({"value": 0, "min": 0, "max": 3, "step": 5}, ValueError, "step of the slider 's' must be at most max - min = 3"),
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
        assert "attn-present" in _classes(ex.widget) and "font-size:1.6em" in ex._views[0].value
        assert ex.widget.children[0].layout.flex_flow == "row nowrap"
    finally:
        presentation(False)
    ex.controls["s"].value = 2.5  # refused
    presentation(True)
    try:
        assert "font-size:1.6em" in ex._views[0].value  # the last good state, enlarged
    finally:
        presentation(False)
    from helpers import explorer as explorer_module

    assert ex in explorer_module._LIVE
    ex.close()
    assert ex not in explorer_module._LIVE  # presentation() no longer redraws a closed explorer


def test_a_refused_state_is_told_in_words_and_the_view_keeps_the_last_good_state():
    ex = _Tiny()
    ex.controls["s"].value = 1.0
    good = ex._views[0].value
    ex.controls["s"].value = 2.5  # the widget path: no exception reaches the browser
    state = state_from_html(ex.readout.value)
    assert state["error"] == "s = 2.5 is too large for this example"
    assert "Refused" in ex.readout.value and ex._views[0].value == good
    with pytest.raises(ValueError, match="too large"):  # the code path says it too
        ex.set(s=3.0)
    ex.set(s=-1.0)
    assert "error" not in state_from_html(ex.readout.value)


def test_widgets_are_built_once_and_only_their_values_change():
    ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    views, widgets = list(ex._views), {id(w) for w in _walk(ex.widget)}
    before = [v.value for v in views]
    figs = list(plt.get_fignums())
    for k in range(12):
        ex.controls["W_q"].sliders[k % 4, k % 3].value = (k % 5) - 2
        _check_numbers(ex)  # the heatmaps and the data-state follow every single event
    assert ex._views == views and {id(w) for w in _walk(ex.widget)} == widgets
    assert [v.value for v in views] != before
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
    assert heatmaps == ex._views and all("<table" in h.value for h in heatmaps)
    assert [w for w in ws if "attn-readout" in _classes(w)] == [ex.readout]
    assert ex.readout.value.count("data-state=") == 1
    _check_numbers(ex)
    figs = ex.figures
    assert all(isinstance(f, Figure) for f in figs) and len(figs) == len(ex._views)
    n_panels = sum(len(tables(v.value)) for v in ex._views)
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
    naive_table = tables(ex._views[0].value)[1]
    assert "nan" in naive_table["td"] and "bad" in naive_table["cls"]


def test_multihead_explorer_heads_are_divisors_and_a_slider_moves_only_its_head():
    ex = X.multihead_explorer(E.T001_X, 4, seed=0)
    assert list(ex.controls["heads"].options) == [1, 2, 4]
    ex.set(heads=2)
    before = ex.weights.copy()
    assert before.shape == (2, 3, 3) and len(tables(ex._views[0].value)) == 2
    ex.controls["W_q"].sliders[0, 2].value = 1.5  # column 3 (from 1): head 2 of 2
    assert ex.state()["inputs"]["W_q"][0][2] == 1.5
    np.testing.assert_array_equal(ex.weights[0], before[0])  # head 1 untouched
    assert not np.allclose(ex.weights[1], before[1])
    _check_numbers(ex)
    ex.set(heads=4)
    assert ex.weights.shape == (4, 3, 3) and len(tables(ex._views[0].value)) == 4
    _check_numbers(ex)


def test_widget_check_slider_changes_the_heatmap_and_the_number():
    ex = X.widget_check()
    html = ex._views[0].value
    ex.controls["score"].value = 2.0
    assert ex._views[0].value != html
    np.testing.assert_allclose(ex.weights, [[1 / (1 + math.e**2), 1 / (1 + math.e**-2)]], rtol=1e-12)
    assert shown_cells(ex) == [["0.119", "0.881"]]
    _check_numbers(ex)


def test_state_json_round_trips_and_spells_out_nan():
    st = {"kind": "k", "inputs": {"a": np.array([1.0, np.nan, -np.inf])}, "weights": [[1.0]]}
    back = state_from_html(state_html(st))
    assert back["inputs"]["a"] == [1.0, "nan", "-inf"]
    with pytest.raises(ValueError, match="exactly one data-state"):
        state_from_html("<div></div>")


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
