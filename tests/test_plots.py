"""Tests of helpers.plots: the one heatmap helper, grids, the step view, saving (lesson figures: test_figures.py)."""

from __future__ import annotations

import math
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from PIL import Image  # noqa: E402

import helpers  # noqa: E402
from helpers import examples as E  # noqa: E402
from helpers import plots as P  # noqa: E402
from helpers.figures.nb04 import plot_head_split  # noqa: E402
from helpers.panels import NAN_COLOR  # noqa: E402

TOKENS = ["x1", "x2", "x3"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _weights_001() -> np.ndarray:
    return helpers.single_head_attention(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)[1]  # (3, 3)


# --------------------------------------------------------------------------- format_value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.67702032e-200, "1.7e-200"),
        (2.47576395e-312, "2.5e-312"),
        (0.0, "0"),
        (-0.0, "0"),
        (0.46831053, "0.468"),
        (8.9045e-04, "8.9e-04"),
        (21323.5, "21323.5"),
        (16.0, "16"),
        (-4.619, "-4.619"),
        (123456.0, "1.2e+05"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
    ],
)
def test_format_value_default_is_short_and_never_hides_tiny_numbers(value, text):
    assert P.format_value(value) == text


def test_format_value_fmt_and_integer_flag():
    assert P.format_value(0.46831053, ".4f") == "0.4683"
    assert P.format_value(0.5, lambda v: f"{v:.1%}") == "50.0%"
    assert P.format_value(12.0, integer=False) == "12.00"
    assert P.format_value(12.0, integer=True) == "12"
    assert P.format_value(float("nan"), ".4f") == "nan"  # fmt never turns nan into a number


# --------------------------------------------------------------------------- heatmap


def test_weights_heatmap_uses_the_fixed_scale_0_to_1_even_for_small_weights():
    small = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    hm = P.heatmap(small, row_labels=TOKENS, col_labels=TOKENS, title="w")
    assert hm.im.get_clim() == (0.0, 1.0)
    flat = P.heatmap(np.full((3, 3), 1 / 3))
    assert flat.im.get_clim() == (0.0, 1.0)  # never auto-scaled, not even for a constant matrix
    assert "0 to 1" in hm.color_bar.ax.get_ylabel()
    assert P.CMAP == hm.im.get_cmap().name.removesuffix("_r") == "viridis"


def test_heatmap_labels_rows_are_queries_columns_are_keys():
    hm = P.heatmap(_weights_001(), row_labels=TOKENS, col_labels=["k1", "k2", "k3"], title="weights")
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == TOKENS
    assert [t.get_text() for t in hm.ax.get_xticklabels()] == ["k1", "k2", "k3"]
    assert hm.ax.get_ylabel() == "query"
    assert hm.ax.get_xlabel() == "key"
    assert hm.ax.get_title() == "weights"


def test_cell_texts_equal_the_formatted_values():
    w = _weights_001()
    hm = P.heatmap(w)
    assert hm.cell_texts() == [[P.format_value(v) for v in row] for row in w]
    np.testing.assert_array_equal(hm.im.get_array(), w)  # exact: the same numbers, no tolerance


def test_text_colour_follows_the_cell_luminance():
    hm = P.heatmap(np.array([[0.0, 1.0]]))
    assert hm.texts[0, 0].get_color() == "white"  # dark purple end of viridis
    assert hm.texts[0, 1].get_color() == "black"  # yellow end


def test_nan_cells_are_drawn_visibly_grey_hatched_with_text_nan():
    with np.errstate(all="ignore"):
        naive = helpers.naive_softmax(np.array([[1.0, 2.0, 3.0], [800.0, 1.0, 0.0]]))
    assert np.isnan(naive[1, 0])
    hm = P.heatmap(naive)
    assert hm.texts[1, 0].get_text() == "nan"
    assert hm.hatches[1, 0].get_visible() and not hm.hatches[0, 0].get_visible()
    assert tuple(hm.rgba[1, 0]) == tuple(int(round(255 * c)) for c in to_rgba(NAN_COLOR))


def test_the_figure_draws_the_limits_colours_and_texts_of_helpers_panels_as_the_live_tables():
    from helpers import panels

    data = np.array([[0.0, 1.5, -2.0, 3.0], [7.25, -0.5, 2.0, 4.0]])  # (2, 4)
    hm = P.heatmap(data, kind="scores", vmax=5.0)
    lo, hi = panels.limits(data, "scores", None, 5.0)
    assert hm.im.get_clim() == (lo, hi) == (-2.0, 5.0)  # 7.25 lies beyond the fixed vmax: drawn at its colour
    np.testing.assert_array_equal(hm.rgba, panels.cell_colors(data, lo, hi))
    assert hm.cell_texts() == panels.format_matrix(data)
    assert [[t.get_color() for t in row] for row in hm.texts] == panels.text_colors(hm.rgba / 255).tolist()
    hm.fig.canvas.draw()
    pixels = np.asarray(hm.fig.canvas.buffer_rgba())  # (H, W, 4) uint8, row 0 at the top
    for (i, j), _ in np.ndenumerate(data):
        x, y = hm.ax.transData.transform((j - 0.3, i - 0.3))  # a corner of the cell, clear of its text
        np.testing.assert_array_equal(pixels[pixels.shape[0] - 1 - int(y), int(x)], hm.rgba[i, j])  # exact, uint8
    fig, grid = P.heatmap_grid([data, 2 * data], kind="values")
    assert all(h.im.get_clim() == panels.limits(np.stack([data, 2 * data]), "values") for h in grid)  # one scale
    _, grid = P.heatmap_grid([np.eye(2), 2 * np.eye(2)], kind="scores", vmin=5)  # every value below the one limit
    assert grid[0].im.get_clim() == panels.limits(np.eye(2), "scores", 5, None) == (5.0, 6.0)  # as heatmap and panels


def test_scores_heatmap_has_its_own_labelled_scale_and_fixed_limits_keep_frames_comparable():
    hs = P.heatmap(E.T000_F2_SCORES, kind="scores")
    lo, hi = hs.im.get_clim()
    assert (lo, hi) == (E.T000_F2_SCORES.min(), E.T000_F2_SCORES.max())
    assert "own scale" in hs.color_bar.ax.get_ylabel()
    fixed = P.heatmap(E.T001_Q @ E.T001_K.T / np.sqrt(3), kind="scores", vmin=0, vmax=20)
    assert fixed.im.get_clim() == (0.0, 20.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"matrix": np.zeros((2, 2, 2))}, ValueError, "matrix must be a 2-D"),
        ({"matrix": "abc"}, TypeError, "matrix must be a numeric array"),
        ({"matrix": np.array([[True, False]])}, TypeError, "matrix must hold real numbers"),
        ({"matrix": np.zeros((0, 3))}, ValueError, "matrix is empty"),
        ({"matrix": np.eye(3), "row_labels": ["a", "b"]}, ValueError, "row_labels has 2 labels"),
        ({"matrix": np.eye(3), "col_labels": "abc"}, TypeError, "col_labels must be a list"),
        ({"matrix": np.eye(3), "kind": "heat"}, ValueError, "kind must be one of"),
        ({"matrix": np.eye(3), "vmin": -1}, ValueError, "kind='weights' always uses the fixed colour scale"),
        ({"matrix": E.T000_F2_SCORES}, ValueError, "use kind='scores'"),
        ({"matrix": np.eye(3), "kind": "scores", "vmin": 2, "vmax": 1}, ValueError, "vmin must be smaller"),
        ({"matrix": np.eye(3), "fmt": 3}, TypeError, "fmt must be a format spec"),
        ({"matrix": np.eye(3), "fmt": ".4q"}, ValueError, "fmt '.4q' is not a valid"),
        ({"matrix": np.eye(3), "ax": "axes"}, TypeError, "ax must be a matplotlib Axes"),
    ],
)
def test_heatmap_rejects_bad_input_naming_the_argument(kwargs, error, words):
    matrix = kwargs.pop("matrix")
    with pytest.raises(error, match=words):
        P.heatmap(matrix, **kwargs)


# --------------------------------------------------------------------------- grid and step view


def test_heatmap_grid_shares_one_0_to_1_scale_and_one_color_bar():
    rng = np.random.default_rng(0)
    W = [rng.normal(size=(4, 4)) for _ in range(3)]
    _, weights = helpers.multi_head_attention(E.T001_X, *W, n_heads=2)  # (2, 3, 3)
    fig, handles = P.heatmap_grid(weights, ["head 0", "head 1"], row_labels=TOKENS, col_labels=TOKENS)
    assert len(handles) == 2
    assert all(h.im.get_clim() == (0.0, 1.0) for h in handles)
    assert len(fig.axes) == 3  # two heads + one shared colour bar
    assert [h.ax.get_title() for h in handles] == ["head 0", "head 1"]
    np.testing.assert_array_equal(handles[1].matrix, weights[1])


def test_heatmap_grid_rejects_mixed_shapes_and_wrong_titles():
    with pytest.raises(ValueError, match=r"matrices\[1\] has shape \(2, 2\) but matrices\[0\] has shape \(3, 3\)"):
        P.heatmap_grid([np.eye(3), np.eye(2)])
    with pytest.raises(ValueError, match="titles must be a list of 2"):
        P.heatmap_grid([np.eye(3), np.eye(3)], ["only one"])
    with pytest.raises(TypeError, match="matrices must be a non-empty list"):
        P.heatmap_grid(np.eye(3))


def _panel_axes(fig):
    return [ax for ax in fig.axes if ax.images]


def test_step_view_panels_show_attention_steps():
    Q, K, V = helpers.project_qkv(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    steps = helpers.attention_steps(Q, K, V, scale=1 / np.sqrt(3))
    fig = P.step_view(steps, TOKENS, scale=1 / np.sqrt(3))
    axes = _panel_axes(fig)
    assert len(axes) == len(P.STEP_KEYS)
    for key, ax in zip(P.STEP_KEYS, axes, strict=True):
        np.testing.assert_array_equal(ax.images[0].get_array(), steps[key])
        assert [t.get_text() for t in ax.texts] == [t for row in P.format_matrix(steps[key]) for t in row]
    assert axes[5].images[0].get_clim() == (0.0, 1.0)  # attention weights: fixed 0..1
    assert axes[0].get_title() == "1 scores Q·Kᵀ" and axes[1].get_title() == "2 scaled scores × 0.5774"


def test_step_view_layout_one_row_for_three_tokens_two_rows_for_five():
    Q, K, V = helpers.project_qkv(E.T000_F2_X, E.T000_F2_WQ, E.T000_F2_WK, E.T000_F2_WV)
    fig5 = P.step_view(helpers.attention_steps(Q, K, V, scale=0.5), list("abcde"))
    fig5.canvas.draw()
    assert len({round(ax.get_position().y0, 2) for ax in _panel_axes(fig5)}) == 2
    Q, K, V = helpers.project_qkv(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    fig3 = P.step_view(helpers.attention_steps(Q, K, V), TOKENS)
    fig3.canvas.draw()
    assert len({round(ax.get_position().y0, 2) for ax in _panel_axes(fig3)}) == 1


def test_presentation_mode_draws_views_large_and_within_a_projectors_width():
    """helpers.presentation(True): the step view's numbers in 11 points (not 7), every row of panels within the
    width of a 1280-pixel window's output area, so the browser does not shrink it; False restores the old figure."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 2))  # 8 tokens: 02's step view (7 panels of up to 8 × 8)
    steps = helpers.attention_steps(X, X, X, scale=1 / np.sqrt(2))
    labels = list("abcdefgh")
    before = P.step_view(steps, labels)
    size_before = tuple(before.get_size_inches())
    helpers.presentation(True)
    try:
        assert P.presenting()
        fig = P.step_view(steps, labels)
        fig.canvas.draw()
        width, _ = fig.get_size_inches()
        assert width * P.DPI <= P.PRESENT_WIDTH_PX, f"{width} in at {P.DPI} dpi is wider than {P.PRESENT_WIDTH_PX} px"
        renderer = fig.canvas.get_renderer()
        right = max(ax.get_tightbbox(renderer).x1 for ax in fig.axes)  # labels and bars included, in pixels
        assert right <= fig.bbox.x1 + 1, f"something is drawn beyond the figure's right edge: {right} > {fig.bbox.x1}"
        sizes = {t.get_fontsize() for ax in _panel_axes(fig) for t in ax.texts if len(t.get_text()) < 8}
        assert sizes == {11.0}, f"cell numbers in {sizes} points"
        rows = len({round(ax.get_window_extent().y1, -1) for ax in _panel_axes(fig)})  # pixels: rows are subfigures
        assert rows == 4, f"7 panels of 8 columns in {rows} rows (2 fit across)"
    finally:
        helpers.presentation(False)
    assert not P.presenting()
    assert tuple(P.step_view(steps, labels).get_size_inches()) == size_before
    plt.close("all")


def test_step_view_rejects_what_is_not_attention_steps():
    Q, K, V = helpers.project_qkv(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    steps = helpers.attention_steps(Q, K, V)
    with pytest.raises(TypeError, match="steps must be the dict returned by helpers.attention_steps"):
        P.step_view([1, 2, 3])
    with pytest.raises(ValueError, match=r"steps lacks \['exp'\]"):
        P.step_view({k: v for k, v in steps.items() if k != "exp"})
    batched = {k: v[None] for k, v in steps.items()}
    with pytest.raises(ValueError, match="needs 2-D matrices"):
        P.step_view(batched)
    with pytest.raises(TypeError, match="view must be a helpers.panels.View"):
        P.draw_view([P.Panel(np.eye(2))])


# --------------------------------------------------------------------------- saving


def test_save_figure_has_a_stable_size_and_identical_bytes(tmp_path):
    fig = plot_head_split(4, 2)
    a = P.save_figure(fig, tmp_path / "sub" / "a.png")
    b = P.save_figure(plot_head_split(4, 2), tmp_path / "b.png")  # a fresh figure: `make images` twice
    assert a.read_bytes() == b.read_bytes()
    w, h = fig.get_size_inches() * 2 * P.DPI  # saved at 2x: sharp on HiDPI screens
    assert Image.open(a).size == (round(w), round(h))
    with pytest.raises(ValueError, match="path must end in .png or .svg"):
        P.save_figure(fig, tmp_path / "c.jpg")
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        P.save_figure("fig", tmp_path / "d.png")


def test_importing_plots_imports_neither_pyplot_nor_ipywidgets_and_changes_no_rcparams():
    code = (
        "import sys, matplotlib as mpl\n"
        "before = {k: mpl.rcParams[k] for k in mpl.rcParams if k != 'backend'}  # reading 'backend' loads pyplot\n"
        "import helpers.plots\n"
        "assert sys.modules.get('matplotlib.pyplot') is None, 'pyplot imported'\n"
        "assert sys.modules.get('ipywidgets') is None, 'ipywidgets imported'\n"
        "changed = [k for k in before if mpl.rcParams[k] != before[k]]\n"
        "assert not changed, changed\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


# --------------------------------------------------------------------------- bad input: a message naming the argument


def _steps():
    Q, K, V = helpers.project_qkv(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)  # (3, 3) each
    return helpers.attention_steps(Q, K, V)


def _view():
    return P.View([P.Panel(np.eye(3), "eye")], "one panel")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # plain_figure: figsize not a pair (was "object of type 'int' has no len()"), too large, a bad dpi
        (lambda: P.plain_figure(3), TypeError, "figsize must be (width, height) in inches, such as (6.4, 4.8), got 3"),
        (lambda: P.plain_figure(None), TypeError,
         "figsize must be (width, height) in inches, such as (6.4, 4.8), got None"),
        (lambda: P.plain_figure("abc"), TypeError,
         "figsize must be (width, height) in inches, such as (6.4, 4.8), got 'abc'"),
        (lambda: P.plain_figure([[1.0, 2.0], [3.0]]), TypeError,
         "figsize[0] must be a width or height in inches, a number > 0, got [1.0, 2.0] (list)"),
        (lambda: P.plain_figure((3, True)), TypeError,
         "figsize[1] must be a width or height in inches, a number > 0, got True (bool)"),
        (lambda: P.plain_figure((0, 2)), ValueError,
         "figsize[0] must be a width or height in inches, a number > 0, got 0"),
        (lambda: P.plain_figure((-3, 2)), ValueError,
         "figsize[0] must be a width or height in inches, a number > 0, got -3"),
        (lambda: P.plain_figure((3, math.nan)), ValueError,
         "figsize[1] must be a width or height in inches, a number > 0, got nan"),
        (lambda: P.plain_figure((10**12, 2)), ValueError,
         "figsize = (1000000000000, 2) is too large: a side of at most 100 inches (10,000 pixels on screen)"),
        (lambda: P.plain_figure((3, 2), dpi="abc"), TypeError,
         "dpi must be dots per inch, a number > 0 (100 on screen, 200 for images/), got 'abc' (str)"),
        (lambda: P.plain_figure((3, 2), dpi=0), ValueError,
         "dpi must be dots per inch, a number > 0 (100 on screen, 200 for images/), got 0"),
        (lambda: P.plain_figure((3, 2), dpi=10**12), ValueError,
         "dpi = 1e+12 is too large for a figure of 3 × 2 inches: its image would be 3,000,000,000,000 × "
         "2,000,000,000,000 pixels (2.18e+13 TiB); at most 65,535 pixels a side and 1 GiB"),
        # heatmap and heatmap_grid: figsize, fontsize, color_bar, fig, titles; a matrix too large to print
        (lambda: P.heatmap(np.eye(3), figsize=2.5), TypeError, "figsize must be (width, height) in inches"),
        (lambda: P.heatmap(np.eye(3), fontsize="abc"), TypeError,
         "fontsize must be None or a size in points, such as 9, got 'abc' (str)"),
        (lambda: P.heatmap(np.eye(3), fontsize=[]), TypeError,
         "fontsize must be None or a size in points, such as 9, got [] (list)"),
        (lambda: P.heatmap(np.eye(3), fontsize=-3), ValueError,
         "fontsize must be None or a size in points, such as 9, got -3"),
        (lambda: P.heatmap(np.eye(3), fontsize=10**12), ValueError,
         "fontsize must be at most 100 points, got 1000000000000"),
        (lambda: P.heatmap(np.eye(3), color_bar="abc"), TypeError, "color_bar must be True or False, got 'abc'"),
        (lambda: P.heatmap(np.zeros((101, 100)), kind="values"), ValueError,
         "matrix (shape (101, 100)) has 10,100 cells; a heatmap prints every value, so it draws at most 10,000"),
        (lambda: P.heatmap_grid([np.eye(3)] * 2, 0), TypeError,
         "titles must be a list of 2 strings (one per matrix), got 0"),
        (lambda: P.heatmap_grid([np.eye(3)] * 2, ["one"]), ValueError,
         "titles must be a list of 2 strings (one per matrix), got 1: ['one']"),
        (lambda: P.heatmap_grid([np.eye(3)] * 2, fig="abc"), TypeError,
         "fig must be a matplotlib Figure (or SubFigure) or None, got str"),
        (lambda: P.heatmap_grid([np.eye(3)] * 2, figsize=(3, None)), TypeError,
         "figsize[1] must be a width or height in inches"),
        (lambda: P.heatmap_grid([np.zeros((10, 10))] * 101), ValueError,
         "matrices (101 of them) has 10,100 cells; a heatmap prints every value"),
        (lambda: P.heatmap_grid([np.eye(2)] * 1000, ncols=1), ValueError,
         "1000 matrices of shape (2, 2) in 1 columns need a figure of"),
        # views: view_size and draw_view of something else (was "'NoneType' object has no attribute 'ncols'")
        (lambda: P.view_size(None), TypeError, "view must be a helpers.panels.View, got NoneType"),
        (lambda: P.draw_view(_view(), fig=3), TypeError,
         "fig must be a matplotlib Figure (or SubFigure) or None, got int"),
        (lambda: P.draw_view(_view(), managed="abc"), TypeError, "managed must be True or False, got 'abc'"),
        (lambda: P.draw_view(P.View([P.Panel(np.eye(60), k) for k in "abc"])), ValueError,
         "the view (3 panels) has 10,800 cells; a heatmap prints every value, so it draws at most 10,000"),
        # step_view: scale (was "could not convert string to float"), labels named as the caller named them
        (lambda: P.step_view(_steps(), scale="abc"), TypeError,
         "scale must be None or the number the scores were multiplied by, got 'abc'"),
        (lambda: P.step_view(_steps(), scale=[1.0]), TypeError, "scale must be None or the number"),
        (lambda: P.step_view(_steps(), scale=math.nan), ValueError,
         "scale must be a finite number (the one the scores were multiplied by), got nan"),
        (lambda: P.step_view(_steps(), "abc"), TypeError, "token_labels must be a list of 3 labels, got str"),
        (lambda: P.step_view(_steps(), ["a", "b"]), ValueError,
         "token_labels has 2 labels but the matrix has shape (3, 3): need 3"),
        (lambda: P.step_view(_steps(), feature_labels=0), TypeError,
         "feature_labels must be a list of 3 labels, got int"),
        (lambda: P.save_figure(P.plain_figure((3, 2)), None), TypeError,
         "path must be a file name (str or pathlib.Path) ending in .png or .svg, got None"),
        (lambda: P.save_figure(P.plain_figure((3, 2)), "a.png", dpi=math.nan), ValueError,
         "dpi must be dots per inch, a number > 0 (100 on screen, 200 for images/), got nan"),
        (lambda: P.save_figure(P.plain_figure((3, 2)), "a.png", dpi=10**5), ValueError,
         "dpi = 100000 is too large for a figure of 3 × 2 inches: its image would be 300,000 × 200,000 pixels"),
    ],
)
def test_bad_input_gets_a_message_naming_the_argument(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_the_limits_leave_room_for_what_the_notebooks_draw():
    # 07's widest grid; a (100, 100) matrix is allowed
    hm = P.heatmap(np.zeros((3, 3)), figsize=(14.5, 3.6), fontsize=9)
    assert tuple(hm.fig.get_size_inches()) == (14.5, 3.6)
    assert tuple(P.plain_figure((11.69, 8.27), dpi=2 * P.DPI).get_size_inches()) == (11.69, 8.27)  # the formula card


# --------------------------------------------------------------------------- colour bars of scores and values


def _bars(fig):
    """The horizontal colour bars of a drawn View (a colorbar's axes hold no image of a panel)."""
    return [ax for ax in fig.axes if hasattr(ax, "_colorbar") and ax._colorbar.orientation == "horizontal"]


def test_a_values_panel_gets_its_bar_under_it_with_its_scale_ticks_and_label():
    from helpers.panels import Panel, View, color_bars

    loss = Panel(np.array([[1.864, 1.822, 2.766, 2.27]]), "loss at each position", kind="values", vmin=0.0, vmax=3.0,
                 color_bar_label="loss (same scale at every step)")
    w = Panel(_weights_001(), "attention weights")
    view = View([w, loss])
    fig = P.draw_view(view, managed=False)
    fig.canvas.draw()
    (cax,) = _bars(fig)
    cbar = cax._colorbar
    assert (cbar.norm.vmin, cbar.norm.vmax) == (0.0, 3.0) and cbar.cmap.name.startswith(P.CMAP)
    (bar,) = [lg for lg in color_bars(view) if lg.kind == "values"]
    assert [t.get_text() for t in cax.get_xticklabels()] == [t for _, t in bar.ticks] == ["0", "1.500", "3.000"]
    np.testing.assert_allclose(cax.get_xticks(), [0.0, 1.5, 3.0])
    assert cax.get_xlabel() == "loss (same scale at every step)"
    vertical = [ax for ax in fig.axes if hasattr(ax, "_colorbar") and ax._colorbar.orientation == "vertical"]
    assert len(vertical) == 1 and vertical[0]._colorbar.norm.vmax == 1.0  # the weights' bar stays as it was
    panel_ax = [ax for ax in fig.axes if ax.images and ax.get_title() == "loss at each position"][0]
    r = fig.canvas.get_renderer()
    under = panel_ax.xaxis.get_tightbbox(r)  # the panel's tick labels and x label
    box, img = cax.get_window_extent(r), panel_ax.get_window_extent(r)
    assert box.y1 < under.y0  # under the panel and its labels, not over them
    assert box.x0 == pytest.approx(img.x0, abs=1) and box.x1 == pytest.approx(img.x1, abs=1)  # as wide as it
    # the bar's pixels are the colormap at lo..hi: sample it left to right
    buf = np.asarray(fig.canvas.buffer_rgba())  # (H, W, 4)
    H = buf.shape[0]
    y = int(round(H - (box.y0 + box.y1) / 2))
    lut = helpers.panels.colormap_lut()[:, :3].astype(int)  # (256, 3)
    for f in (0.05, 0.3, 0.5, 0.7, 0.95):
        x = int(round(box.x0 + f * box.width))
        row = int(np.abs(lut - buf[y, x, :3].astype(int)).sum(axis=1).argmin())  # the nearest colour of the table
        assert abs(row - f * 255) <= 3, f"at {f} of the bar: colour row {row}"


def test_neighbours_on_one_scale_share_one_bar_spanning_them_and_color_bars_false_draws_none():
    from helpers.panels import Panel, View

    rng = np.random.default_rng(0)
    K = [Panel(rng.normal(size=(4, 2)), f"K, kv {j}", kind="values", vmin=-3.0, vmax=3.0) for j in (1, 2)]
    V = [Panel(rng.normal(size=(4, 2)), f"V, kv {j}", kind="values", vmin=-2.0, vmax=2.5) for j in (1, 2)]
    fig = P.draw_view(View([*K, *V], "the cache"), managed=False)
    fig.canvas.draw()
    bars = _bars(fig)
    assert [(b._colorbar.norm.vmin, b._colorbar.norm.vmax) for b in bars] == [(-3.0, 3.0), (-2.0, 2.5)]
    r = fig.canvas.get_renderer()
    panels = [ax.get_window_extent(r) for ax in fig.axes if ax.images]  # K1, K2, V1, V2
    k_bar = bars[0].get_window_extent(r)
    assert k_bar.x0 == pytest.approx(panels[0].x0, abs=1) and k_bar.x1 == pytest.approx(panels[1].x1, abs=1)
    assert bars[1].get_window_extent(r).x0 > panels[1].x1  # the V bar starts under V1, not under the K panels
    assert _bars(P.draw_view(View([*K, *V], color_bars=False), managed=False)) == []


def test_step_view_has_a_bar_under_every_panel_but_the_attention_weights():
    Q, K, V = helpers.project_qkv(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    steps = helpers.attention_steps(Q, K, V)
    fig = P.step_view(steps, TOKENS)
    fig.canvas.draw()
    bars = _bars(fig)
    assert len(bars) == 6  # scores, scaled, shifted, exp, row sums, output; the weights keep the 0..1 bar
    for bar, key in zip(bars, ("scores", "scaled", "shifted", "exp", "row_sums", "output"), strict=True):
        assert (bar._colorbar.norm.vmin, bar._colorbar.norm.vmax) == (steps[key].min(), steps[key].max())
    texts = [b.get_xlabel() for b in bars]
    assert texts[:4] == ["score (own scale)"] * 3 + ["value (own scale)"]  # scores, scaled, shifted; exp
    r = fig.canvas.get_renderer()
    boxes = [b.get_tightbbox(r) for b in bars]  # bars, ticks and labels never overlap each other
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert a.x1 <= b.x0 + 1
    (weights_bar,) = [ax for ax in fig.axes if hasattr(ax, "_colorbar") and ax._colorbar.orientation == "vertical"]
    panel6, wbar = _panel_axes(fig)[5].get_window_extent(r), weights_bar.get_window_extent(r)
    assert panel6.y0 - 1 <= wbar.y0 and wbar.y1 <= panel6.y1 + 1  # beside panel 6, not reaching over its title


@pytest.mark.parametrize(("value", "on"), [("1", True), ("0", False), (None, False)])
def test_presentation_starts_on_where_the_classroom_view_asks(value, on):
    """`make present` sets ATTN_PRESENTATION=1 for its kernels: a projected lesson is large from its first figure."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ATTN_PRESENTATION"}
    if value is not None:
        env["ATTN_PRESENTATION"] = value
    run = subprocess.run([sys.executable, "-c", "import helpers; print(helpers.presenting())"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(on)
