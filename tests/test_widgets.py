"""Tests of helpers.widgets and helpers.explorers: sliders, the live-figure pipeline, the DOM contract,
and that every explorer's readout shows what helpers.attention computes."""

from __future__ import annotations

import functools
import gc
import importlib.util
import io
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
from matplotlib.colors import to_rgb  # noqa: E402
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
        (("W_q", [["a"]]), {}, TypeError, "matrix for W_q must hold real numbers"),
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


def _load_expected():
    """tests/ui/expected.py (the browser tests' kind -> helpers.attention mapping), loaded by path: no browser needed."""
    path = Path(__file__).resolve().parent / "ui" / "expected.py"
    spec = importlib.util.spec_from_file_location("attn_ui_expected", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # NamedTuple and friends look their module up by name
    spec.loader.exec_module(module)
    return module


ui_expected = _load_expected()


def _visible_numbers(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>([^<]*)</td>", html)


def _check_readout(ex) -> dict:
    """The readout's data-state recomputes (tests/ui/expected.py, helpers.attention) to its own weights/output,
    and the visible tables show exactly those numbers with 4 decimals."""
    state = Wd.state_from_html(ex.readout.value)
    assert state["kind"] == ex.kind
    want = ui_expected.expected(state)  # independent of the explorer: recomputed from the inputs alone
    weights, output = want.weights, want.output
    np.testing.assert_allclose(np.asarray(state["weights"], dtype=float), weights, **TOL)
    np.testing.assert_allclose(ex.weights, weights, **TOL)
    if output is None:
        assert state["output"] is None
    else:
        np.testing.assert_allclose(np.asarray(state["output"], dtype=float), output, **TOL)
        np.testing.assert_allclose(ex.output, output, **TOL)
    shown = _visible_numbers(ex.readout.value)
    assert shown == [cell for table in want.tables for cell in ui_expected.as_4_decimals(table)]  # page order
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
        for lf in ex.live:  # the custom PNG encoder, end to end: the widget's bytes decode to the painted buffer
            np.testing.assert_array_equal(_decode_png(lf.image.value), np.asarray(lf.fig.canvas.get_renderer().buffer_rgba()))
    assert plt.get_fignums() == figs_before
    gc.collect()
    assert sum(isinstance(o, Figure) for o in gc.get_objects()) == n_fig_objects
    assert [lf.full_draws for lf in ex.live] == full_draws  # updates are painted, not redrawn
    assert len(set(pngs)) > 1


def test_fast_rendering_matches_matplotlibs_own_drawing_as_a_whole():
    """Coarse, whole-figure check (layout, colours, colour bars); the cell texts are checked below, box by box."""
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


# ------------------------------------------------ cell texts and titles: fast painting vs matplotlib's own draw
#
# LiveFigure pastes cell texts and changing titles from a glyph atlas straight into the Agg buffer. Inside
# each Text's bounding box (its window extent on the Agg canvas) we compare that text's ink in the fast
# picture with its ink in matplotlib's own full draw of the same figure. "Ink" = how far each pixel moved
# from the text-free picture of the SAME renderer towards the text colour (0..1), so grey hatching on NaN
# cells, drawn differently by the two, cancels out. The atlas snaps every glyph to whole pixels where
# Agg places the string with sub-pixel precision, so both ink maps are blurred (Gaussian, sigma
# TEXT_BLUR px) and the fast one may move by up to TEXT_SHIFT px (steps of 1/4 px) to fit best. What is
# left must stay under TEXT_TOL of matplotlib's ink. Measured: at most 0.037 for correct rendering of
# the scenes below; >= 0.136 when every glyph is an "8"; 1.0 with no text; >= 0.42 with a 4 px shift.
# A single wrong glyph in a string is flagged in 80-93% of the texts: look-alikes such as "8" for "9"
# or "0.018" -> "0.019" stay below the noise of correct rendering.

TEXT_BLUR = 2.0  # px, sigma of the Gaussian applied to both ink maps
TEXT_SHIFT = 1.5  # px, largest offset searched between fast and reference
TEXT_TOL = 0.06  # allowed residual ink, as a fraction of the reference's ink in the box
TEXT_PAD = 3  # px added around each window extent


def _decode_png(png: bytes) -> np.ndarray:
    img = Image.open(io.BytesIO(png))
    assert img.format == "PNG" and img.mode == "RGBA"
    return np.asarray(img)  # (H, W, 4) uint8


def _live_texts(lf) -> list:
    """Every Text the LiveFigure paints itself: all heatmap cell texts, then the changing titles."""
    return [t for hm in lf.heatmaps for t in hm.texts.flat] + list(lf._artists)


def _set_texts(texts: list, strings: list[str]) -> None:
    for t, s in zip(texts, strings, strict=True):
        t.set_text(s)


def _fast_and_reference(lf) -> dict:
    """The fast picture as shown, its text-free twin, matplotlib's full draw and ITS text-free twin, the boxes.

    Also checks the custom PNG encoder end to end: the bytes handed to the ``ipywidgets.Image`` decode
    (Pillow) to exactly the Agg buffer LiveFigure painted.
    """
    canvas = lf.fig.canvas
    fast = _decode_png(lf.image.value)
    buffer = np.asarray(canvas.get_renderer().buffer_rgba())  # (H, W, 4) what LiveFigure painted
    np.testing.assert_array_equal(fast, buffer)  # lossless: exactly equal
    texts = _live_texts(lf)
    strings = [t.get_text() for t in texts]
    _set_texts(texts, [""] * len(texts))
    lf.render()  # the fast path repaints the cells without text and wipes the titles
    fast_bg = _decode_png(lf.image.value)
    _set_texts(texts, strings)
    # matplotlib's own full draw: LiveFigure marks its artists animated (left out of canvas.draw), undo that
    for a in [a for hm in lf.heatmaps for a in hm.artists] + list(lf._artists):
        a.set_animated(False)
    canvas.draw()
    slow = np.asarray(canvas.buffer_rgba()).copy()  # (H, W, 4)
    renderer = canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]  # display coordinates, y up
    _set_texts(texts, [""] * len(texts))
    canvas.draw()
    slow_bg = np.asarray(canvas.buffer_rgba()).copy()
    _set_texts(texts, strings)
    return {"texts": texts, "strings": strings, "boxes": boxes, "fast": fast, "fast_bg": fast_bg,
            "slow": slow, "slow_bg": slow_bg}


def _ink(img: np.ndarray, bg: np.ndarray, color) -> np.ndarray:
    """(h, w) in 0..1: how far each pixel moved from ``bg`` towards the text colour."""
    d = img[..., :3].astype(float) - bg[..., :3]  # (h, w, 3)
    v = np.array(to_rgb(color)) * 255 - bg[..., :3]  # (h, w, 3) from background to ink
    den = (v * v).sum(axis=-1)  # (h, w)
    return np.clip((d * v).sum(axis=-1) / np.maximum(den, 1e-9), 0.0, 1.0) * (den > 0)


def _blur(a: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur; the result is 2r larger on each axis so no ink is cut off."""
    r = math.ceil(3 * sigma)
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)  # (2r + 1,)
    k /= k.sum()
    p = np.pad(a, 2 * r)  # (h + 4r, w + 4r)
    h, w = a.shape[0] + 2 * r, a.shape[1] + 2 * r
    rows = sum(k[i] * p[i : i + h, :] for i in range(2 * r + 1))  # (h + 2r, w + 4r)
    return sum(k[i] * rows[:, i : i + w] for i in range(2 * r + 1))  # (h + 2r, w + 2r)


def _shifted(a: np.ndarray, limit: float, step: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """``a`` moved by every (dy, dx) in [-limit, limit]² on a ``step`` grid (bilinear): offsets, (n, n, h, w)."""
    n, m = round(limit / step), math.ceil(limit) + 1
    offsets = np.arange(-n, n + 1) * step  # (n,)
    p = np.pad(a, m)
    h, w = a.shape

    def rows(d):  # value at row y = a at row y - d
        i, f = math.floor(d), d - math.floor(d)
        return (1 - f) * p[m - i : m - i + h, :] + f * p[m - i - 1 : m - i - 1 + h, :]  # (h, w + 2m)

    def cols(b, d):
        i, f = math.floor(d), d - math.floor(d)
        return (1 - f) * b[:, m - i : m - i + w] + f * b[:, m - i - 1 : m - i - 1 + w]  # (h, w)

    return offsets, np.array([[cols(rows(dy), dx) for dx in offsets] for dy in offsets])


def _text_residual(fast_ink: np.ndarray, slow_ink: np.ndarray) -> tuple[float, float, float]:
    """(residual ink / reference ink, dy, dx) at the best offset of the fast ink within TEXT_SHIFT."""
    f, s = _blur(fast_ink, TEXT_BLUR), _blur(slow_ink, TEXT_BLUR)
    offsets, moved = _shifted(f, TEXT_SHIFT)  # (n,), (n, n, h, w)
    err = np.abs(moved - s).sum(axis=(2, 3)) / s.sum()  # (n, n)
    iy, ix = np.unravel_index(err.argmin(), err.shape)
    return float(err[iy, ix]), float(offsets[iy]), float(offsets[ix])


def _compare_texts(lf) -> list[tuple[str, float, bool]]:
    """(text, residual, flagged) for every non-empty Text LiveFigure paints, fast vs matplotlib's full draw."""
    pics = _fast_and_reference(lf)
    H, W_ = pics["fast"].shape[:2]
    out = []
    for t, s, bb in zip(pics["texts"], pics["strings"], pics["boxes"], strict=True):
        if not s:
            continue
        x0, x1 = max(math.floor(bb.x0) - TEXT_PAD, 0), min(math.ceil(bb.x1) + TEXT_PAD, W_)
        y0, y1 = max(math.floor(H - bb.y1) - TEXT_PAD, 0), min(math.ceil(H - bb.y0) + TEXT_PAD, H)  # rows top-down
        box = (slice(y0, y1), slice(x0, x1))
        slow_ink = _ink(pics["slow"][box], pics["slow_bg"][box], t.get_color())  # (h, w)
        assert slow_ink.sum() > 5, f"matplotlib drew no ink for {s!r} in {bb}: the comparison would be empty"
        fast_ink = _ink(pics["fast"][box], pics["fast_bg"][box], t.get_color())  # (h, w)
        residual, _, _ = _text_residual(fast_ink, slow_ink)
        out.append((s, residual, residual > TEXT_TOL))
    return out


def _scene(name: str) -> list:
    """The LiveFigures of a scene after slider events (so cells and titles were repainted, not redrawn)."""
    if name == "weights heatmap + step view":
        ex = X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
        ex.controls["W_q"].sliders[0, 0].value = 3
        ex.controls["scale"].value = False  # the step view's title "2  × 1" changes too
        assert [len(lf.heatmaps) for lf in ex.live] == [7, 1]
    elif name == "NaN cells":
        ex = X.overflow_explorer()
        ex.controls["magnitude"].value = 2.5  # float64: exp(3 * 10**2.5) overflows, the naive softmax is NaN
        assert any(h.get_visible() for hm in ex.live[0].heatmaps for h in hm.hatches.flat)
        assert "nan" in [t.get_text() for t in _live_texts(ex.live[0])]
    elif name == "bold titles":
        ex = X.multihead_explorer(E.T001_X, 4, seed=0)
        ex.controls["head"].value = 1
        assert [t.get_text() for t in ex.live[0]._artists if t.get_fontweight() == "bold"] == ["head 1  ◀ sliders"]
    else:
        raise AssertionError(name)
    assert all(lf.full_draws == 1 for lf in ex.live)  # after the first draw, only the fast path painted
    return ex.live


SCENES = ["weights heatmap + step view", "NaN cells", "bold titles"]


@pytest.mark.parametrize("scene", SCENES)
def test_fast_cell_texts_and_titles_match_matplotlibs_own_drawing_box_by_box(scene):
    results = [r for lf in _scene(scene) for r in _compare_texts(lf)]
    assert len(results) >= 9
    bad = [(s, round(r, 3)) for s, r, flagged in results if flagged]
    assert not bad, f"texts painted differently from matplotlib (residual > {TEXT_TOL}): {bad}"


def _empty_glyphs(atlas, s, size, weight="normal"):
    return np.zeros((0, 0), np.uint8), 0, 0


def _shift_glyphs(atlas, s, size, weight="normal"):
    mask, dr, dc = _ORIGINAL_STRING(atlas, s, size, weight)
    return mask, dr + 4, dc + 4  # 4 px down and right


def _eight_glyphs(atlas, s, size, weight="normal"):
    return _ORIGINAL_STRING(atlas, "8" * len(s), size, weight)


def _one_digit_off(atlas, s, size, weight="normal"):
    digits = [k for k, c in enumerate(s) if c.isdigit()]
    if digits:
        k = digits[-1]
        s = s[:k] + str((int(s[k]) + 1) % 10) + s[k + 1 :]  # "0.982" -> "0.983"
    return _ORIGINAL_STRING(atlas, s, size, weight)


_ORIGINAL_STRING = Wd._GlyphAtlas.string
MUTATIONS = {"no text": _empty_glyphs, "shifted 4 px": _shift_glyphs, "every glyph an 8": _eight_glyphs,
             "last digit + 1": _one_digit_off}


@pytest.mark.parametrize("mutation", list(MUTATIONS))
@pytest.mark.parametrize("scene", SCENES)
def test_the_text_comparison_flags_a_broken_glyph_painter(monkeypatch, scene, mutation):
    """The check above can fail: with the atlas's strings broken on purpose, it flags the texts."""
    monkeypatch.setattr(Wd._GlyphAtlas, "string", MUTATIONS[mutation])  # in this test process only
    results = [r for lf in _scene(scene) for r in _compare_texts(lf)]
    if mutation == "every glyph an 8":
        results = [r for r in results if set(r[0]) != {"8"}]  # an "8" drawn as an "8" is right
    elif mutation == "last digit + 1":
        results = [r for r in results if any(c.isdigit() for c in r[0])]
    flagged = [s for s, _, f in results if f]
    assert results
    if mutation == "last digit + 1":  # one glyph of several: most texts, not all (look-alikes, see above)
        assert len(flagged) >= 0.5 * len(results), [(s, round(r, 3)) for s, r, _ in results]
    else:
        missed = [(s, round(r, 3)) for s, r, f in results if not f]
        assert not missed, f"the comparison missed a broken text: {missed}"


def test_the_text_comparison_flags_a_bold_title_drawn_in_normal_weight(monkeypatch):
    def normal_weight(atlas, s, size, weight="normal"):
        return _ORIGINAL_STRING(atlas, s, size, "normal")

    monkeypatch.setattr(Wd._GlyphAtlas, "string", normal_weight)
    results = {s: flagged for lf in _scene("bold titles") for s, _, flagged in _compare_texts(lf)}
    assert results["head 1  ◀ sliders"] and not results["head 0"]


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


class _ManualLoop:
    """Stands in for the kernel's running event loop: ``call_later`` only records; the test fires timers."""

    def __init__(self) -> None:
        self.timers: list[list] = []  # [delay, callback, cancelled]

    def call_later(self, delay: float, callback, *args):
        timer = [delay, functools.partial(callback, *args), False]
        self.timers.append(timer)

        class Handle:
            def cancel(self) -> None:
                timer[2] = True

        return Handle()

    def fire_all(self) -> int:
        """Run every pending timer (as if its delay had passed); return how many ran."""
        pending, self.timers = [t for t in self.timers if not t[2]], []
        for _, callback, _ in pending:
            callback()
        return len(pending)


def test_events_inside_an_event_loop_are_coalesced_and_the_last_state_wins(monkeypatch):
    ex = X.widget_check()
    # a min interval no render can outlast: the timer alone decides when the trailing render runs, not the clock
    ex._coalescer = Wd.Coalescer(ex._render, min_interval=1e6)
    loop = _ManualLoop()
    monkeypatch.setattr(Wd.asyncio, "get_running_loop", lambda: loop)  # "inside a kernel"
    renders = ex.renders
    for k in range(20):  # a burst of slider events
        ex.controls["score"].value = round(-2 + 0.2 * k, 1)
    assert ex.renders == renders + 1  # leading edge: the first event renders at once ...
    assert Wd.state_from_html(ex.readout.value)["inputs"]["scores"] == [[0.0, -2.0]]
    assert len(loop.timers) == 1 and loop.timers[0][0] > 1e5  # ... the other 19 share ONE trailing render
    assert ex._coalescer.dirty
    assert loop.fire_all() == 1  # the interval has passed
    assert ex.renders == renders + 2 and not ex._coalescer.dirty
    assert Wd.state_from_html(ex.readout.value)["inputs"]["scores"] == [[0.0, 1.8]]  # the last state wins
    np.testing.assert_allclose(ex.weights, helpers.softmax(np.array([[0.0, 1.8]])), **TOL)
    assert loop.fire_all() == 0 and ex.renders == renders + 2  # nothing left over, no backlog
    ex.controls["score"].value = 0.5  # right after a render: waits for the next interval, no render now
    assert ex.renders == renders + 2 and len(loop.timers) == 1
    loop.fire_all()
    assert ex.renders == renders + 3 and ex.weights[0, 1] == pytest.approx(1 / (1 + math.exp(-0.5)), rel=1e-12)


def test_without_an_event_loop_every_event_renders_at_once():
    ex = X.widget_check()
    renders = ex.renders
    for k in range(5):
        ex.controls["score"].value = 0.5 * (k + 1)  # every value differs from the last: 5 events
    assert ex.renders == renders + 5 and not ex._coalescer.dirty


def test_importing_explorers_builds_nothing():
    import importlib

    gc.collect()
    n = sum(isinstance(o, Figure) for o in gc.get_objects())
    importlib.reload(X)
    gc.collect()
    assert sum(isinstance(o, Figure) for o in gc.get_objects()) == n
