"""The shared drawing of the course's figures: one heatmap helper, a grid of heads, the views, saving.

A figure that only one lesson draws lives in ``helpers.figures`` (one module per notebook) and builds
on these. The numbers, colours and texts come from ``helpers.panels``, as the live tables' do.

Shape notation (as in ``helpers.attention``): ``T`` tokens (``T_q`` queries as rows, ``T_k`` keys
as columns), ``d_model`` features, ``d_k`` features per head, ``h`` heads.

Conventions every figure here follows:

* rows are queries (y label "query"), columns are keys (x label "key");
* attention weights (``kind="weights"``) always use the fixed colour scale 0..1, never auto-scaled,
  so two frames or two heads can be compared by colour;
* scores and values (``kind="scores"`` / ``kind="values"``) get their own scale, and the colour bar
  says so; pass ``vmin`` / ``vmax`` to keep several frames comparable; in a View (``draw_view``) each
  gets a horizontal bar under it (``helpers.panels.color_bars``: shared by neighbours on one scale), ticked
  at its lo, middle and hi as the cells print numbers, while the attention weights share one bar 0..1;
* every cell prints its value (``format_value``), in black or white depending on the luminance of
  the cell colour (``text_colors``); NaN and ±inf cells are drawn grey and hatched and print "nan" / "inf";
* the colour limits (``helpers.panels.limits``) and the cell colours (``cell_colors``) are the ones the
  live tables show;
* one colour-blind-safe colormap, ``CMAP`` (viridis), for every heatmap.

Functions called without an ``ax`` / ``fig`` create a pyplot figure (so a notebook cell shows it
like any other figure); the explorers' static figures use ``plain_figure`` (not managed by pyplot,
so it is shown once). Importing this module changes nothing: no pyplot import, no rcParams.
"""

from __future__ import annotations

import functools
import math
import os
import textwrap
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure, SubFigure
from matplotlib.patches import Rectangle
from matplotlib.transforms import Bbox

from helpers import presentation, presenting  # presentation mode (helpers.presentation): one switch
from helpers.panels import (
    AXIS_LABELS,
    CMAP,
    COLOR_BAR_LABELS,
    KINDS,
    PRESENT_WIDTH_PX,
    STEP_KEYS,
    Panel,
    View,
    cell_colors,
    color_bars,
    colormap,
    describe_cells,
    format_matrix,
    format_value,
    limits,
    step_panels,
    text_colors,
)
from helpers.validate import (
    MAX_INCHES,
    check_choice,
    check_dpi,
    check_figsize,
    check_flag,
    check_fmt,
    check_fontsize,
    check_int,
    check_labels,
    check_limits,
    check_matrix,
    check_real,
    check_titles,
    check_weights_range,
    refuse_many_cells,
)

if TYPE_CHECKING:  # for the annotations only
    from matplotlib.axes import Axes

__all__ = [
    "CMAP",
    "KINDS",
    "STEP_KEYS",
    "Heatmap",
    "Panel",
    "View",
    "format_value",
    "heatmap",
    "heatmap_grid",
    "step_view",
    "presentation",
    "presenting",
    "draw_view",
    "view_size",
    "new_figure",
    "plain_figure",
    "save_figure",
    "alt_text",
    "set_alt_text",
    "describe_figures",
]

_HEATMAPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Axes -> the Heatmap drawn on it
_ALT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Figure -> the text alternative its maker computed
DPI = 100  # inline figures; make images saves at 2 * DPI (sharp on HiDPI screens)
# MAX_INCHES (a side of a figure) and MAX_CELLS (values printed in one figure) live in helpers.validate


# --------------------------------------------------------------------------- checks (the rest live in helpers.validate)


def _check_fig(fig: object) -> Figure | SubFigure | None:
    """A matplotlib Figure or SubFigure, or None (a matplotlib type: helpers.validate imports no matplotlib)."""
    if fig is not None and not isinstance(fig, (Figure, SubFigure)):
        raise TypeError(f"fig must be a matplotlib Figure (or SubFigure) or None, got {type(fig).__name__}")
    return fig


def _check_matrix(matrix: object, name: str = "matrix") -> np.ndarray:
    """A heatmap's matrix as float64 (R, C): a 1-D array becomes one query row; NaN and ±inf are drawn, not refused."""
    return check_matrix(matrix, name, one_row=True, finite=False).astype(np.float64)  # float16/32 exact in float64


def _check_labels(labels: object, n: int, name: str, shape: tuple) -> list[str]:
    return check_labels(labels, n, name, against=f"the matrix has shape {shape}: need {n}")


def new_figure(figsize: tuple[float, float]) -> Figure:
    """A pyplot figure with the constrained layout (shown by the notebook like any other), pyplot imported lazily."""
    import matplotlib.pyplot as plt

    return plt.figure(figsize=figsize, layout="constrained")


# --------------------------------------------------------------------------- heatmap


class Heatmap:
    """Handle returned by ``heatmap``: the artists of one annotated matrix.

    Attributes: ``fig``, ``ax``, ``im`` (the AxesImage), ``texts`` (R, C) object array of Text,
    ``hatches`` (R, C) Rectangles shown on nan/inf cells, ``color_bar`` (or None), ``kind``,
    ``matrix`` (the values drawn, float64 copy), ``rgba`` (R, C, 4) the cell colours.
    """

    def __init__(
        self,
        ax: Axes,
        matrix: np.ndarray,
        *,
        row_labels: list[str],
        col_labels: list[str],
        title: str | None,
        kind: str,
        fmt: str | Callable[[float], str] | None,
        vmin: float | None,
        vmax: float | None,
        color_bar: bool,
        color_bar_label: str | None,
        xlabel: str | None,
        ylabel: str | None,
        fontsize: float | None,
    ) -> None:
        self.ax = ax
        self.fig = ax.get_figure()
        self.kind = kind
        self.fmt = fmt
        self.shape = matrix.shape
        R, C = matrix.shape
        self.norm = Normalize(*limits(matrix, kind, vmin, vmax))  # the live tables' scale: 0..1 for weights
        self.cmap = colormap()  # CMAP, NaN/±inf cells in NAN_COLOR
        self.im = ax.imshow(
            np.ma.masked_invalid(matrix), cmap=self.cmap, norm=self.norm, interpolation="nearest", aspect="equal"
        )
        if fontsize is None:
            fontsize = 10 if max(R, C) <= 3 else 9 if max(R, C) <= 5 else 7
        self.fontsize = fontsize
        self.texts = np.empty((R, C), dtype=object)
        self.hatches = np.empty((R, C), dtype=object)
        for i in range(R):
            for j in range(C):
                self.hatches[i, j] = ax.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="#8c8c8c",
                        linewidth=0, visible=False,
                    )
                )
                self.texts[i, j] = ax.text(j, i, "", ha="center", va="center", fontsize=fontsize)
        ax.set_xlim(-0.5, C - 0.5)
        ax.set_ylim(R - 0.5, -0.5)
        ax.set_xticks(range(C), labels=col_labels)
        if max(len(c) for c in col_labels) > 4 and C > 1:  # words as labels: slant them so they never collide
            ax.tick_params(axis="x", labelrotation=35)
            for t in ax.get_xticklabels():
                t.set_horizontalalignment("right")
                t.set_rotation_mode("anchor")
        ax.set_yticks(range(R), labels=row_labels)
        ax.tick_params(length=0, labelsize=max(fontsize - 1, 7))
        for spine in ax.spines.values():
            spine.set_visible(False)
        default_x, default_y = AXIS_LABELS[kind]
        ax.set_xlabel(default_x if xlabel is None else xlabel, fontsize=max(fontsize - 1, 7))
        ax.set_ylabel(default_y if ylabel is None else ylabel, fontsize=max(fontsize - 1, 7))
        if title:
            ax.set_title(title, fontsize=fontsize + 1)
        self.color_bar = None
        if color_bar:
            self.color_bar = self.fig.colorbar(self.im, ax=ax, fraction=0.046, pad=0.04)
            self.color_bar.set_label(color_bar_label or COLOR_BAR_LABELS[kind], fontsize=max(fontsize - 2, 7))
            self.color_bar.ax.tick_params(labelsize=7)
            if kind == "weights":
                self.color_bar.set_ticks([0, 0.25, 0.5, 0.75, 1])
        self.matrix = matrix.copy()
        self._paint(matrix)
        _HEATMAPS[ax] = self  # alt_text(fig) describes the figure from what its heatmaps print

    def _paint(self, data: np.ndarray) -> None:
        bad = ~np.isfinite(data)  # (R, C)
        self.im.set_data(data)  # the image draws NaN/inf cells in the colormap's "bad" colour
        self.rgba = cell_colors(data, self.norm.vmin, self.norm.vmax)  # (R, C, 4) uint8, as the live tables
        colors = text_colors(self.rgba / 255.0).tolist()  # (R, C) "black" / "white"
        strings = format_matrix(data, self.fmt)  # (R, C) the same texts as the live tables
        bad = bad.tolist()
        texts, hatches = self.texts, self.hatches
        for i, row in enumerate(strings):
            for j, s in enumerate(row):
                text = texts[i, j]
                if text.get_text() != s:
                    text.set_text(s)
                    text.set_fontsize(self.fontsize if len(s) < 8 else self.fontsize * 0.85)  # "1.7e-200" fits
                if text.get_color() != colors[i][j]:
                    text.set_color(colors[i][j])
                if hatches[i, j].get_visible() != bad[i][j]:
                    hatches[i, j].set_visible(bad[i][j])

    def cell_texts(self) -> list[list[str]]:
        """The strings printed on the cells, row by row."""
        return [[t.get_text() for t in row] for row in self.texts]


def heatmap(
    matrix: object,
    ax: Axes | None = None,
    *,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    title: str | None = None,
    kind: str = "weights",
    fmt: str | Callable[[float], str] | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    color_bar: bool = True,
    color_bar_label: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    fontsize: float | None = None,
    figsize: tuple[float, float] | None = None,
) -> Heatmap:
    """Draw a (R, C) matrix as an annotated heatmap; returns its ``Heatmap`` handle (the artists drawn)."""
    kind = check_choice(kind, "kind", KINDS)
    data = _check_matrix(matrix)
    refuse_many_cells(data.size, f"matrix (shape {data.shape})")
    check_fmt(fmt)
    color_bar = check_flag(color_bar, "color_bar")
    fontsize = check_fontsize(fontsize)
    if figsize is not None:
        figsize = check_figsize(figsize, screen_dpi=DPI)
    R, C = data.shape
    rows = _check_labels(row_labels, R, "row_labels", data.shape)
    cols = _check_labels(col_labels, C, "col_labels", data.shape)
    if kind == "weights":
        if (vmin not in (None, 0)) or (vmax not in (None, 1)):
            raise ValueError(
                f"kind='weights' always uses the fixed colour scale 0..1, got vmin={vmin}, vmax={vmax}; "
                "use kind='scores' or kind='values' for another scale"
            )
        check_weights_range(data, "matrix")
    check_limits(vmin, vmax)
    if ax is None:
        if figsize is None:
            cell = 0.7 if max(R, C) <= 5 else 0.5
            figsize = (round(min(1.1 + cell * C + (1.2 if color_bar else 0), 10.0), 1),
                       round(min(1.0 + cell * R, 8.0), 1))
        ax = new_figure(figsize).add_subplot()
    elif not hasattr(ax, "imshow"):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return Heatmap(
        ax, data, row_labels=rows, col_labels=cols, title=title, kind=kind, fmt=fmt, vmin=vmin, vmax=vmax,
        color_bar=color_bar, color_bar_label=color_bar_label, xlabel=xlabel, ylabel=ylabel, fontsize=fontsize,
    )


def heatmap_grid(
    matrices: object,
    titles: Sequence[str] | None = None,
    *,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    ncols: int | None = None,
    kind: str = "weights",
    suptitle: str | None = None,
    fmt: str | Callable[[float], str] | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    fig: Figure | SubFigure | None = None,
    figsize: tuple[float, float] | None = None,
) -> tuple[Figure, list[Heatmap]]:
    """Several same-shape matrices (a list or an (n, R, C) array, e.g. heads) on one shared scale and colour bar."""
    kind = check_choice(kind, "kind", KINDS)
    if isinstance(matrices, np.ndarray):
        items = list(matrices) if matrices.ndim == 3 else None
    elif isinstance(matrices, Sequence) and not isinstance(matrices, (str, bytes)):
        items = list(matrices)
    else:
        items = None
    if not items:
        raise TypeError(
            f"matrices must be a non-empty list of 2-D matrices or an (n, R, C) array, got {type(matrices).__name__}"
            f"{'' if not isinstance(matrices, np.ndarray) else f' with shape {matrices.shape}'}"
        )
    data = [_check_matrix(m, f"matrices[{k}]") for k, m in enumerate(items)]
    refuse_many_cells(sum(m.size for m in data), f"matrices ({len(data):,} of them)")
    shape = data[0].shape
    for k, m in enumerate(data):
        if m.shape != shape:
            raise ValueError(f"matrices[{k}] has shape {m.shape} but matrices[0] has shape {shape}; all must match")
    n = len(data)
    if titles is None:
        titles = [f"head {k + 1}" for k in range(n)]  # heads counted from 1, as everywhere
    else:
        titles = check_titles(titles, n, "matrix")
    fig = _check_fig(fig)
    if figsize is not None:
        figsize = check_figsize(figsize, screen_dpi=DPI)
    if ncols is None:
        ncols = min(n, 4)
    ncols = min(check_int(ncols, "ncols", minimum=1), n)
    nrows = math.ceil(n / ncols)
    if kind != "weights":
        check_limits(vmin, vmax)
        vmin, vmax = limits(np.stack(data), kind, vmin, vmax)  # (n, R, C): one scale for all panels
    R, C = shape
    if fig is None:
        if figsize is None:
            cell = 0.5 if max(R, C) <= 4 else 0.4
            figsize = (0.9 + ncols * (0.8 + cell * C) + 1.0, 0.3 + nrows * (0.85 + cell * R) + (0.4 if suptitle else 0))
            if max(figsize) > MAX_INCHES:
                raise ValueError(
                    f"{n} matrices of shape {shape} in {ncols} columns need a figure of {figsize[0]:.1f} × "
                    f"{figsize[1]:.1f} inches, above {MAX_INCHES:g} inches a side: draw fewer, or more columns (ncols)"
                )
        fig = new_figure(figsize)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    handles = []
    for k, ax in enumerate(axes):
        if k >= n:
            ax.remove()
            continue
        r, c = divmod(k, ncols)
        handles.append(
            heatmap(
                data[k], ax, row_labels=row_labels, col_labels=col_labels, title=titles[k], kind=kind,
                fmt=fmt, vmin=vmin, vmax=vmax, color_bar=False,
                xlabel=None if r == nrows - 1 or k + ncols >= n else "",
                ylabel=None if c == 0 else "",
            )
        )
    cbar = fig.colorbar(handles[0].im, ax=[h.ax for h in handles], shrink=0.9, fraction=0.05)
    cbar.set_label(COLOR_BAR_LABELS[kind], fontsize=8)
    cbar.ax.tick_params(labelsize=7)
    if kind == "weights":
        cbar.set_ticks([0, 0.25, 0.5, 0.75, 1])
    for h in handles:
        h.color_bar = None  # the shared bar belongs to the grid; its scale never moves
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    return fig.get_figure(root=True) if isinstance(fig, SubFigure) else fig, handles


# --------------------------------------------------------------------------- views (as the live explorers)


def plain_figure(figsize: tuple[float, float], *, dpi: int = DPI) -> Figure:
    """A Figure on its own Agg canvas that pyplot does not manage (``display(fig)`` shows it once)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figsize = check_figsize(figsize, screen_dpi=DPI)
    dpi = check_dpi(dpi, figsize)
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)

    def _png() -> bytes:  # shown as PNG even where pyplot's inline backend is not active
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=fig.dpi, facecolor="white", metadata={"Software": None})
        return buf.getvalue()

    fig._repr_png_ = _png
    return fig


# --------------------------------------------------------------------------- presentation mode (a projector)

# In presentation mode (``helpers.presentation(True)``; ``presenting()`` tells) ``draw_view`` (``step_view``, and every
# explorer's static figure) prints its numbers, labels and titles PRESENT_ZOOM times larger and wraps its panels into
# as many rows as it takes to fit PRESENT_WIDTH_PX at DPI, so the browser never shrinks the figure.
PRESENT_ZOOM = 11 / 7  # presentation mode: a cell's number in 11 points, not 7 (about 15 px at 100 dpi)
PRESENT_CELL = 1.25  # ... in cells 1.25 times as wide (the numbers fit: a 5-character number is 0.42 in at 11 pt)


@dataclass(frozen=True)
class _Sizes:
    """The sizes ``view_size`` and ``draw_view`` use: a cell's side in inches and font sizes in points."""

    cell: float
    zoom: float = 1.0  # fonts and the room for labels, titles and bars

    def font(self, points: float) -> float:
        return round(points * self.zoom, 1)


def _sizes(view: View) -> _Sizes:
    cell = 0.45 if max(max(p.matrix.shape) for p in view.panels) <= 4 else 0.4
    return _Sizes(cell * PRESENT_CELL, PRESENT_ZOOM) if presenting() else _Sizes(cell)


def _row_width(panels: Sequence[Panel], sizes: _Sizes) -> float:
    return sum(p.matrix.shape[1] * sizes.cell + 0.45 * sizes.zoom for p in panels) + 0.6 * sizes.zoom


def _for_projector(view: View) -> View:
    """``view`` with as many panels per row as fit PRESENT_WIDTH_PX at DPI with the weights' bar (at least one)."""
    n = len(view.panels)
    while n > 1 and _present_width(replace(view, ncols=n)) > PRESENT_WIDTH_PX / DPI:
        n -= 1
    return replace(view, ncols=n)


def _present_width(view: View) -> float:
    """The width of ``view`` in presentation mode: its widest row, with the weights' bar in the row that holds it."""
    sizes, n = _sizes(view), view.ncols or len(view.panels)
    weights = {k for bar in color_bars(view) if bar.kind == "weights" for k in bar.panels}  # the bar beside these
    return max(_row_width(view.panels[k : k + n], sizes) + (1.0 * sizes.zoom if weights & set(range(k, k + n)) else 0)
               for k in range(0, len(view.panels), n))


_BAR_FONT = 7  # points: a bar's label and ticks


def _bar_label(label: str, columns: int, sizes: _Sizes) -> str:
    """A bar's label, wrapped to about the width of the panels above it (at least 10 characters a line)."""
    chars = max(10, int((columns * sizes.cell + 0.3 * sizes.zoom) * 72 / (0.55 * sizes.font(_BAR_FONT))))
    return textwrap.fill(label, chars, break_long_words=False)


def _span(axes: list[Axes]):
    """An axes locator: the height the layout gave the bar, the width of the images of ``axes`` (computed at draw)."""

    def locate(cax: Axes, renderer: object) -> Bbox:
        for a in axes:
            a.apply_aspect()  # the image's own box (aspect equal), not the layout's cell
        boxes = [a.get_position() for a in axes]  # figure fractions
        own = cax.get_position(original=True)  # where the layout put the bar's row
        return Bbox.from_extents(min(b.x0 for b in boxes), own.y0, max(b.x1 for b in boxes), own.y1)

    return locate


def _beside(axes: list[Axes], shrink: float = 1.0):
    """An axes locator: the width the layout gave a vertical bar, ``shrink`` of the height of the images of ``axes``."""

    def locate(cax: Axes, renderer: object) -> Bbox:
        for a in axes:
            a.apply_aspect()
        boxes = [a.get_position() for a in axes]  # figure fractions
        lo, hi = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
        pad = (hi - lo) * (1 - shrink) / 2
        own = cax.get_position(original=True)
        return Bbox.from_extents(own.x0, lo + pad, own.x1, hi - pad)

    return locate


def view_size(view: View) -> tuple[float, float]:
    """The figsize ``draw_view`` picks: 0.45 inch per cell, panels in rows of ``view.ncols``, room for the bars
    (in presentation mode larger, in rows that fit a projector's width: ``presentation``)."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    if presenting():
        view = _for_projector(view)
    rows = _view_rows(view)
    sizes = _sizes(view)
    z = sizes.zoom
    every = color_bars(view)
    bars = [bar for bar in every if bar.kind != "weights"]
    width = max(_row_width(r, sizes) for r in rows)
    width += 1.0 * z if len(bars) < len(every) else 0  # the attention weights' bar beside the panels
    if presenting():  # rows packed to the screen's width: the bar counts in its own row only
        width = _present_width(view)
    height = (0.3 * z if view.title else 0)
    n = view.ncols or len(view.panels)
    for k, r in enumerate(rows):
        height += max(p.matrix.shape[0] for p in r) * sizes.cell + 0.95 * z
        lines = [_bar_label(bar.label, sum(view.panels[i].matrix.shape[1] for i in bar.panels), sizes).count("\n") + 1
                 for bar in bars if bar.panels[0] // n == k]
        height += (0.55 + 0.13 * max(lines)) * z if lines else 0  # the bar, its ticks and its label under the row
    return round(width, 1), round(height, 1)


def _view_rows(view: View) -> list[list[Panel]]:
    n = view.ncols or len(view.panels)
    return [view.panels[k : k + n] for k in range(0, len(view.panels), n)]


def _outline(hm: Heatmap, marked: np.ndarray) -> None:
    """Outline the marked cells (R, C) as the live table does (liveview.css ``td.m``): a white ring and a black one
    inside it, seen on every colour of the colormap without telling colours apart; their numbers in bold."""
    for i, j in np.argwhere(marked).tolist():
        for pad, color, width in ((0.05, "white", 2.4), (0.14, "black", 1.6)):
            hm.ax.add_patch(Rectangle((j - 0.5 + pad, i - 0.5 + pad), 1 - 2 * pad, 1 - 2 * pad, fill=False,
                                      edgecolor=color, linewidth=width))
        hm.texts[i, j].set_fontweight("bold")


def draw_view(view: View, *, fig: Figure | None = None, managed: bool = True) -> Figure:
    """Draw a ``helpers.panels.View`` with matplotlib: the same panels, colours and texts as the live tables."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    refuse_many_cells(sum(p.matrix.size for p in view.panels), f"the view ({len(view.panels)} panels)")
    fig = _check_fig(fig)
    managed = check_flag(managed, "managed")
    if presenting():
        view = _for_projector(view)
    if fig is None:
        size = view_size(view)
        if max(size) > MAX_INCHES:
            raise ValueError(f"the view needs a figure of {size[0]} × {size[1]} inches, above {MAX_INCHES:g} a side: "
                             "fewer panels, or more of them per row (View.ncols)")
        fig = new_figure(size) if managed else plain_figure(size)
    rows = _view_rows(view)
    hosts = list(fig.subfigures(len(rows), 1)) if len(rows) > 1 else [fig]
    width = max(sum(p.matrix.shape[1] + 1 for p in r) for r in rows)
    every = color_bars(view)
    bars = [bar for bar in every if bar.kind != "weights"]
    n, sizes = view.ncols or len(view.panels), _sizes(view)
    handles, bar_axes, low = [], [], []
    for r, (host, row) in enumerate(zip(hosts, rows, strict=True)):
        used = sum(p.matrix.shape[1] + 1 for p in row)
        if presenting():  # in inches, labels and the weights' bar included: their room is large beside a cell's
            used, width = _present_width(replace(view, panels=row, ncols=None)), fig.get_size_inches()[0]
        if len(rows) > 1 and used < width - 0.5:  # a shorter row keeps the cell size; its rest stays empty
            host = host.subfigures(1, 2, width_ratios=[used, width - used])[0]
        below = [bar for bar in bars if bar.panels[0] // n == r]  # the bars under this row's panels
        grid = host.add_gridspec(2 if below else 1, len(row), width_ratios=[p.matrix.shape[1] for p in row],
                                 height_ratios=[max(p.matrix.shape[0] for p in row) * sizes.cell,
                                                0.11 * sizes.zoom] if below else None)
        axes = [host.add_subplot(grid[0, c]) for c in range(len(row))]
        for bar in below:  # a bar spans the grid columns of its panels; _span trims it to their images
            c0, c1 = bar.panels[0] - r * n, bar.panels[-1] - r * n
            bar_axes.append(host.add_subplot(grid[1, c0 : c1 + 1]))
        for c, (p, ax) in enumerate(zip(row, axes, strict=True)):
            hm = heatmap(p.matrix, ax, row_labels=p.row_labels, col_labels=p.col_labels, title=p.title, kind=p.kind,
                         fmt=p.fmt, vmin=p.vmin if p.kind != "weights" else None,
                         vmax=p.vmax if p.kind != "weights" else None, color_bar=False, xlabel=p.xlabel,
                         ylabel=p.ylabel if c == 0 else "",
                         fontsize=sizes.font(8 if max(p.matrix.shape) <= 4 else 7))
            hm.ax.title.set_fontsize(sizes.font(8))
            if p.marked is not None:
                _outline(hm, p.marked)
            handles.append(hm)
            if below:
                low.append(hm.ax)
    for bar in every:
        if bar.kind == "weights":
            weights = [handles[k] for k in bar.panels]
            cbar = fig.colorbar(weights[0].im, ax=[h.ax for h in weights], shrink=0.9, fraction=0.05)
            cbar.set_label(COLOR_BAR_LABELS["weights"], fontsize=sizes.font(7))
            cbar.ax.tick_params(labelsize=sizes.font(7))
            cbar.set_ticks([0, 0.25, 0.5, 0.75, 1])
            if all(h.ax in low for h in weights):  # panels sit low in a row with bars: the bar beside them, not above
                cbar.ax.set_axes_locator(_beside([h.ax for h in weights]))
    for ax in low:  # in a row with bars (after the weights' bar, which anchors its panels at the middle right)
        ax.set_anchor("S")  # any room the layout leaves goes above a panel, not between it and its bar
    for bar, cax in zip(bars, bar_axes, strict=True):  # a scores or values bar under its panel(s)
        cax.set_axes_locator(_span([handles[k].ax for k in bar.panels]))
        cbar = fig.colorbar(handles[bar.panels[0]].im, cax=cax, orientation="horizontal")
        cbar.set_ticks([v for v, _ in bar.ticks], labels=[t for _, t in bar.ticks])
        columns = sum(handles[k].shape[1] for k in bar.panels)
        if columns > 1:  # the end ticks inside the bar (as in the browser), not out over the gap to the next panel
            first, *_, last = cax.get_xticklabels()
            first.set_horizontalalignment("left")
            last.set_horizontalalignment("right")
        cbar.set_label(_bar_label(bar.label, columns, sizes), fontsize=sizes.font(_BAR_FONT), labelpad=1)
        cbar.ax.tick_params(labelsize=sizes.font(_BAR_FONT), length=2, pad=1)
        cbar.outline.set_linewidth(0.5)
    if view.title:
        fig.suptitle(view.title, fontsize=sizes.font(9))
    return fig


def step_view(
    steps: Mapping[str, object],
    token_labels: Sequence[str] | None = None,
    *,
    feature_labels: Sequence[str] | None = None,
    scale: float | None = None,
    one_row: bool | None = None,
    title: str | None = None,
    fmt: str | Callable[[float], str] | None = None,
) -> Figure:
    """Draw helpers.attention_steps(...) as seven annotated matrices, scores -> ... -> output (as the live view)."""
    if scale is not None:
        check_real(scale, "scale", kind="None or the number the scores were multiplied by",
                   rule="a finite number (the one the scores were multiplied by)")
    panels = step_panels(steps, None, scale=scale, fmt=fmt)  # checks steps; the labels are checked below by name
    (T_q, T_k), d_v = panels[0].matrix.shape, panels[-1].matrix.shape[1]
    if token_labels is not None and T_q == T_k:
        _check_labels(token_labels, T_q, "token_labels", (T_q, T_k))
    if feature_labels is not None:
        _check_labels(feature_labels, d_v, "feature_labels", panels[-1].matrix.shape)
    panels = step_panels(steps, token_labels, feature_labels=feature_labels, scale=scale, fmt=fmt)
    if one_row is None:
        one_row = sum(p.matrix.shape[1] for p in panels) <= 21
    one_row = check_flag(one_row, "one_row")  # None was decided above
    if title is None:
        title = ("softmax(Q·Kᵀ × scale)·V, step by step (attention weights on 0..1; other panels each on their "
                 "own range)")
    return draw_view(View(panels, title, ncols=None if one_row else 4))


def save_figure(fig: Figure, path: str | Path, *, dpi: int = 2 * DPI) -> Path:
    """Save ``fig`` at a fixed size and dpi (no tight bbox), without a timestamp, for ``make images``."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file name (str or pathlib.Path) ending in .png or .svg, got {path!r}")
    dpi = check_dpi(dpi, tuple(fig.get_size_inches()))
    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg"):
        raise ValueError(f"path must end in .png or .svg, got {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"Software": None} if path.suffix.lower() == ".png" else {"Date": None}
    fig.savefig(path, dpi=dpi, facecolor="white", metadata=metadata)
    return path


# --------------------------------------------------------------------------- text alternatives


def _describe_heatmap(hm: Heatmap, rows_shown: int = 4) -> str:
    """One heatmap in words, from what it prints (``helpers.panels.describe_cells``)."""
    rows = [t.get_text() for t in hm.ax.get_yticklabels()]
    cols = [t.get_text() for t in hm.ax.get_xticklabels()]
    return describe_cells(hm.matrix, hm.cell_texts(), rows, cols, kind=hm.kind, title=hm.ax.get_title(),
                          rows_shown=rows_shown)


def _describe_axes(ax: Axes) -> str | None:
    """A chart that is not a heatmap in words: its title, axes, lines (their labels and last values)."""
    if getattr(ax, "_colorbar", None) is not None or not ax.get_visible():
        return None  # a colour bar: the heatmap's text says what the colours mean
    parts = [ax.get_title() or "chart"]
    xlabel, ylabel = ax.get_xlabel(), ax.get_ylabel()
    if xlabel or ylabel:
        parts.append(f"{ylabel or 'y'} against {xlabel or 'x'}")
    lines = [line for line in ax.get_lines() if line.get_visible() and len(np.atleast_1d(line.get_xdata()))]
    named = [line.get_label() for line in lines if not line.get_label().startswith("_")]
    if lines:
        x = np.concatenate([np.asarray(line.get_xdata(), dtype=float).ravel() for line in lines])
        parts.append(f"{len(lines)} line{'s' if len(lines) > 1 else ''}" + (f" ({', '.join(named)})" if named else "")
                     + f", x from {format_value(np.nanmin(x))} to {format_value(np.nanmax(x))}")
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_visible() and p.get_width() and p.get_height()]
    if bars:
        parts.append(f"{len(bars)} bars")
    texts = [t.get_text() for t in ax.texts if t.get_visible() and t.get_text().strip()]
    if texts and len(texts) <= 6:
        parts.append("labels: " + ", ".join(texts))
    if len(parts) == 1 and not ax.get_title() and not ax.images:
        return None  # an empty axes (a spacer)
    return parts[0] + (": " + "; ".join(parts[1:]) if parts[1:] else "")


def _axes_of(fig: Figure | SubFigure) -> list:
    """Every Axes of a figure and its subfigures, in drawing order."""
    out = []
    for child in fig.get_children():
        if isinstance(child, SubFigure):
            out.extend(_axes_of(child))
        elif hasattr(child, "get_xaxis"):
            out.append(child)
    return out


def alt_text(fig: Figure) -> str:
    """A short text alternative of ``fig``, from what it draws: each heatmap's title and largest printed numbers,
    each other chart's title, axes and lines. Never hand-written, so it cannot go stale. A figure whose maker
    gave it its own description (``set_alt_text``, computed from the values it draws) gets that one."""
    _check_fig(fig)
    if fig in _ALT:
        return _ALT[fig]
    parts = []
    heatmaps = [a for a in _axes_of(fig) if a in _HEATMAPS]
    rows_shown = 4 if len(heatmaps) == 1 else 3 if len(heatmaps) == 2 else 2 if len(heatmaps) <= 4 else 1
    for ax in _axes_of(fig):
        text = _describe_heatmap(_HEATMAPS[ax], rows_shown) if ax in _HEATMAPS else _describe_axes(ax)
        if text:
            parts.append(text)
    title = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    n = len(parts)
    head = f"Figure{': ' + title if title else ''} ({n} panel{'s' if n != 1 else ''})" if n != 1 or title else "Figure"
    return head + ". " + ". ".join(parts) + "." if parts else head + "."


def set_alt_text(fig: Figure, text: str) -> Figure:
    """Give ``fig`` its own text alternative (what ``alt_text`` returns), for a one-off figure whose maker can say
    what it shows better than the generic description of its axes; the maker computes ``text`` from the values it
    draws. Returns ``fig``."""
    if _check_fig(fig) is None:
        raise TypeError("fig must be a matplotlib Figure, got None")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError(f"text must say something, got {text!r}")
    _ALT[fig] = text
    return fig


def _png_with_description(printer: Callable) -> Callable:
    """The PNG printer ``printer`` (IPython's print_figure with the inline backend's options), writing the
    figure's alt text into the PNG as its Description text chunk."""

    def png(fig: Figure):
        if isinstance(printer, functools.partial):
            return printer.func(fig, *printer.args, **{**printer.keywords, "metadata": {"Description": alt_text(fig)}})
        return printer(fig)

    png.describes = printer  # what it wraps
    return png


def _load_backend() -> None:
    """Import matplotlib's backend module (pyplot does so lazily, on its first figure): the inline backend
    registers IPython's PNG printer of Figures when it is imported."""
    import importlib

    import matplotlib

    backend = matplotlib.get_backend(auto_select=False)  # no auto-selection here (that would load one)
    if isinstance(backend, str) and backend.startswith("module://"):
        importlib.import_module(backend.removeprefix("module://"))


def _described(shell) -> Callable:
    """IPython's mimebundle printer for a Figure: the alt text as the PNG's metadata, and the PNG printer wrapped
    (again, after matplotlib's inline backend registered its own: it does so when pyplot first draws)."""

    def bundle(fig: Figure):
        png = shell.display_formatter.formatters["image/png"]
        if Figure not in png.type_printers:  # pyplot has not loaded its backend yet, which registers the printer
            _load_backend()
        printer = png.type_printers.get(Figure)
        if printer is not None and not hasattr(printer, "describes"):
            png.for_type(Figure, _png_with_description(printer))
        return {}, {"image/png": {"alt": alt_text(fig)}}

    return bundle


def describe_figures(on: bool = True) -> None:
    """Give every matplotlib figure this kernel shows (True) or none (False) a text alternative, ``alt_text(fig)``.

    It goes with the PNG twice: as the output's metadata ``image/png.alt`` (the convention nbconvert's classic
    template reads; the classroom view's and ``make html``'s templates write it as the image's ``alt``), and in
    the PNG itself, as its standard ``Description`` text chunk, from which the live views' script
    (``helpers/liveview/readout.js``) sets the ``alt`` in JupyterLab and Notebook 7, whose image renderer
    ignores output metadata. An explicit call (it changes how IPython displays Figures), in each lesson's first
    cell."""
    on = check_flag(on, "on")
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return  # not in IPython: nothing displays figures
    formatters = shell.display_formatter
    if on:
        formatters.mimebundle_formatter.for_type(Figure, _described(shell))
        return
    formatters.mimebundle_formatter.pop(Figure, None)
    png = formatters.formatters["image/png"]
    printer = png.lookup_by_type(Figure) if Figure in png.type_printers else None
    if hasattr(printer, "describes"):
        png.for_type(Figure, printer.describes)
