"""Every figure of the attention notebooks: one heatmap helper, a grid of heads, the step view.

Shape notation (as in ``helpers.attention``): ``T`` tokens (``T_q`` queries as rows, ``T_k`` keys
as columns), ``d_model`` features, ``d_k`` features per head, ``h`` heads.

Conventions every figure here follows:

* rows are queries (y label "query"), columns are keys (x label "key");
* attention weights (``kind="weights"``) always use the fixed colour scale 0..1, never auto-scaled,
  so two frames or two heads can be compared by colour;
* scores and values (``kind="scores"`` / ``kind="values"``) get their own scale, and the colour bar
  says so; pass ``vmin`` / ``vmax`` to keep several frames comparable; in a View (``draw_view``) each
  gets a horizontal bar under it (``helpers.panels.legends``: shared by neighbours on one scale), ticked
  at its lo, middle and hi as the cells print numbers, while the attention weights share one bar 0..1;
* every cell prints its value (``format_value``), in black or white depending on the luminance of
  the cell colour; NaN and ±inf cells are drawn grey and hatched and print "nan" / "inf";
* one colour-blind-safe colormap, ``CMAP`` (viridis), for every heatmap.

Functions called without an ``ax`` / ``fig`` create a pyplot figure (so a notebook cell shows it
like any other figure); the explorers' static figures use ``plain_figure`` (not managed by pyplot,
so it is shown once). Importing this module changes nothing: no pyplot import, no rcParams.
"""

from __future__ import annotations

import math
import numbers
import os
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib as mpl
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure, SubFigure
from matplotlib.patches import Rectangle
from matplotlib.transforms import Bbox

from helpers.attention import MAX_BYTES, _size
from helpers.panels import (
    AXIS_LABELS,
    CMAP,
    KINDS,
    LEGEND_LABELS,
    NAN_COLOR,
    STEP_KEYS,
    Panel,
    View,
    check_fmt,
    format_matrix,
    format_value,
    legends,
    step_panels,
    text_colors,
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
    "draw_view",
    "view_size",
    "plain_figure",
    "plot_head_split",
    "show_image_patches",
    "save_figure",
    "formula_card",
    "plot_residual_stream",
]

DPI = 100  # inline figures; make images saves at 2 * DPI (sharp on HiDPI screens)
# Limits that keep a typo from freezing the kernel (notebooks stay far below: 14.5 inches, 10 × 10 cells, dpi 200)
MAX_INCHES = 100.0  # a side of a figure: 10,000 pixels at DPI
MAX_CELLS = 10_000  # cells that print their value in one figure (heatmap draws a 100 × 100 matrix in about 25 s)
_CBAR_LABELS = LEGEND_LABELS
_AXIS_LABELS = AXIS_LABELS
_text_colors = text_colors


# --------------------------------------------------------------------------- checks


def _check_matrix(matrix: object, name: str = "matrix") -> np.ndarray:
    """A 2-D float array (a 1-D array becomes one row), or a TypeError/ValueError naming ``name``."""
    if isinstance(matrix, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got a {type(matrix).__name__}")
    try:
        arr = np.asarray(matrix)
    except ValueError as err:
        raise ValueError(f"{name} must be a rectangular numeric array: {err}") from None
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (int or float), got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]  # (n,) -> (1, n): one query row
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (rows, columns), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    return arr.astype(np.float64)  # (R, C); float16/float32 values are exact in float64


def _refuse_nonfinite(arr: np.ndarray, name: str, why: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} contains {arr[where]} at index {where} (shape {arr.shape}); {why}")


def _check_labels(labels: object, n: int, name: str, shape: tuple) -> list[str]:
    if labels is None:
        return [str(i + 1) for i in range(n)]  # counted from 1, as everywhere in the series
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a list of {n} labels, got {type(labels).__name__}")
    labels = [str(s) for s in labels]
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} labels but the matrix has shape {shape}: need {n}")
    return labels


def _check_flag(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _check_real(value: object, name: str, what: str) -> float:
    """A finite real number > 0 (not a bool), or a TypeError/ValueError naming ``name`` and ``what`` it is."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {value!r} ({type(value).__name__})")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return float(value)


def _check_figsize(figsize: object, name: str = "figsize") -> tuple[float, float]:
    """(width, height) in inches, each a finite number > 0 and at most MAX_INCHES."""
    if isinstance(figsize, (str, bytes)) or not isinstance(figsize, Sequence | np.ndarray) or len(figsize) != 2:
        raise TypeError(f"{name} must be (width, height) in inches, such as (6.4, 4.8), got {figsize!r}")
    w, h = (_check_real(v, f"{name}[{k}]", "a width or height in inches, a number > 0") for k, v in enumerate(figsize))
    if max(w, h) > MAX_INCHES:
        raise ValueError(
            f"{name} = {figsize!r} is too large: a side of at most {MAX_INCHES:g} inches ({MAX_INCHES * DPI:,.0f} pixels "
            "on screen), so that a typo cannot freeze the kernel"
        )
    return w, h


def _check_dpi(dpi: object, figsize: tuple[float, float]) -> float:
    """dots per inch > 0 for a figure of ``figsize`` inches, whose image stays under Agg's 2**16 pixels and 1 GiB."""
    dpi = _check_real(dpi, "dpi", "dots per inch, a number > 0 (100 on screen, 200 for images/)")
    w, h = round(figsize[0] * dpi), round(figsize[1] * dpi)
    if max(w, h) >= 2**16 or 4 * w * h > MAX_BYTES:
        raise ValueError(
            f"dpi = {dpi:g} is too large for a figure of {figsize[0]:g} × {figsize[1]:g} inches: its image would be "
            f"{w:,} × {h:,} pixels ({_size(4 * w * h)}); at most 65,535 pixels a side and 1 GiB, so that a typo cannot "
            "exhaust the memory"
        )
    return dpi


def _check_fontsize(fontsize: object) -> float | None:
    if fontsize is None:
        return None
    size = _check_real(fontsize, "fontsize", "None or a size in points, such as 9")
    if size > 100:
        raise ValueError(f"fontsize must be at most 100 points, got {fontsize!r}")
    return size


def _check_cells(n_cells: int, what: str) -> None:
    """A ValueError if a figure would print more than MAX_CELLS values (a figure that takes minutes to draw)."""
    if n_cells > MAX_CELLS:
        raise ValueError(
            f"{what} has {n_cells:,} cells; a heatmap prints every value, so it draws at most {MAX_CELLS:,} "
            "(100 × 100, readable only far below that): show a slice, such as matrix[:10, :10]"
        )


def _check_fig(fig: object) -> Figure | SubFigure | None:
    if fig is not None and not isinstance(fig, (Figure, SubFigure)):
        raise TypeError(f"fig must be a matplotlib Figure (or SubFigure) or None, got {type(fig).__name__}")
    return fig


def _check_titles(titles: object, n: int, what: str) -> list:
    if isinstance(titles, (str, bytes)) or not isinstance(titles, Sequence | np.ndarray):
        raise TypeError(f"titles must be a list of {n} strings (one per {what}), got {titles!r}")
    if len(titles) != n:
        raise ValueError(f"titles must be a list of {n} strings (one per {what}), got {len(titles)}: {titles!r}")
    return list(titles)


def _check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return kind


_check_fmt = check_fmt


def _finite_range(data: np.ndarray) -> tuple[float, float]:
    finite = data[np.isfinite(data)]
    if finite.size == 0:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    if lo == hi:  # a constant matrix still gets a visible, centred colour
        pad = max(abs(lo) * 0.5, 0.5)
        return lo - pad, hi + pad
    return lo, hi


def _limits(data: np.ndarray, vmin: float | None, vmax: float | None) -> tuple[float, float]:
    """Colour limits: the fixed ones where given, the data's finite range for the others, never empty."""
    if vmin is not None and vmax is not None and not float(vmin) < float(vmax):
        raise ValueError(f"vmin must be smaller than vmax, got vmin={vmin}, vmax={vmax}")
    lo, hi = _finite_range(data)
    lo = lo if vmin is None else float(vmin)
    hi = hi if vmax is None else float(vmax)
    if lo >= hi:  # every value lies beyond the one fixed limit: keep that limit, open the other side
        lo, hi = (lo, lo + 1.0) if vmin is not None else (hi - 1.0, hi)
    return lo, hi


def _check_weights_range(data: np.ndarray, name: str) -> None:
    finite = data[np.isfinite(data)]
    if finite.size and (finite.min() < -1e-9 or finite.max() > 1 + 1e-9):
        raise ValueError(
            f"{name} has values from {finite.min():.4g} to {finite.max():.4g}, but kind='weights' draws "
            "attention weights on the fixed scale 0..1; use kind='scores' or kind='values' for other numbers"
        )


def _new_figure(figsize: tuple[float, float]) -> Figure:
    """A pyplot figure (shown by the notebook like any other), imported lazily."""
    import matplotlib.pyplot as plt

    return plt.figure(figsize=figsize, layout="constrained")


# --------------------------------------------------------------------------- heatmap


class Heatmap:
    """Handle returned by ``heatmap``: the artists of one annotated matrix.

    Attributes: ``fig``, ``ax``, ``im`` (the AxesImage), ``texts`` (R, C) object array of Text,
    ``hatches`` (R, C) Rectangles shown on nan/inf cells, ``colorbar`` (or None), ``kind``,
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
        colorbar: bool,
        cbar_label: str | None,
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
        if kind == "weights":
            vmin, vmax = 0.0, 1.0
        else:
            vmin, vmax = _limits(matrix, vmin, vmax)
        self.norm = Normalize(vmin=vmin, vmax=vmax)
        self.cmap = mpl.colormaps[CMAP].with_extremes(bad=NAN_COLOR)
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
        default_x, default_y = _AXIS_LABELS[kind]
        ax.set_xlabel(default_x if xlabel is None else xlabel, fontsize=max(fontsize - 1, 7))
        ax.set_ylabel(default_y if ylabel is None else ylabel, fontsize=max(fontsize - 1, 7))
        if title:
            ax.set_title(title, fontsize=fontsize + 1)
        self.colorbar = None
        if colorbar:
            self.colorbar = self.fig.colorbar(self.im, ax=ax, fraction=0.046, pad=0.04)
            self.colorbar.set_label(cbar_label or _CBAR_LABELS[kind], fontsize=max(fontsize - 2, 7))
            self.colorbar.ax.tick_params(labelsize=7)
            if kind == "weights":
                self.colorbar.set_ticks([0, 0.25, 0.5, 0.75, 1])
        self.matrix = matrix.copy()
        self._paint(matrix)

    def _paint(self, data: np.ndarray) -> None:
        bad = ~np.isfinite(data)  # (R, C)
        self.im.set_data(data)  # the image draws NaN/inf cells in the colormap's "bad" colour
        lo, hi = self.norm.vmin, self.norm.vmax
        scaled = np.clip((np.where(bad, 0.0, data) - lo) / (hi - lo), 0.0, 1.0)  # (R, C) in 0..1
        scaled[bad] = np.nan
        self.rgba = self.cmap(scaled, bytes=True)  # (R, C, 4) uint8, NaN -> NAN_COLOR
        colors = _text_colors(self.rgba / 255.0).tolist()  # (R, C) "black" / "white"
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
    colorbar: bool = True,
    cbar_label: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    fontsize: float | None = None,
    figsize: tuple[float, float] | None = None,
) -> Heatmap:
    """Draw a (R, C) matrix as an annotated heatmap; returns a ``Heatmap`` handle with ``.update``."""
    kind = _check_kind(kind)
    data = _check_matrix(matrix)
    _check_cells(data.size, f"matrix (shape {data.shape})")
    _check_fmt(fmt)
    colorbar = _check_flag(colorbar, "colorbar")
    fontsize = _check_fontsize(fontsize)
    if figsize is not None:
        figsize = _check_figsize(figsize)
    R, C = data.shape
    rows = _check_labels(row_labels, R, "row_labels", data.shape)
    cols = _check_labels(col_labels, C, "col_labels", data.shape)
    if kind == "weights":
        if (vmin not in (None, 0)) or (vmax not in (None, 1)):
            raise ValueError(
                f"kind='weights' always uses the fixed colour scale 0..1, got vmin={vmin}, vmax={vmax}; "
                "use kind='scores' or kind='values' for another scale"
            )
        _check_weights_range(data, "matrix")
    for name, v in (("vmin", vmin), ("vmax", vmax)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v)):
            raise TypeError(f"{name} must be a finite real number or None, got {v!r}")
    if vmin is not None and vmax is not None and not vmin < vmax:
        raise ValueError(f"vmin must be smaller than vmax, got vmin={vmin}, vmax={vmax}")
    if ax is None:
        if figsize is None:
            cell = 0.7 if max(R, C) <= 5 else 0.5
            figsize = (round(min(1.1 + cell * C + (1.2 if colorbar else 0), 10.0), 1), round(min(1.0 + cell * R, 8.0), 1))
        ax = _new_figure(figsize).add_subplot()
    elif not hasattr(ax, "imshow"):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return Heatmap(
        ax, data, row_labels=rows, col_labels=cols, title=title, kind=kind, fmt=fmt, vmin=vmin, vmax=vmax,
        colorbar=colorbar, cbar_label=cbar_label, xlabel=xlabel, ylabel=ylabel, fontsize=fontsize,
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
    kind = _check_kind(kind)
    if isinstance(matrices, np.ndarray):
        items = list(matrices) if matrices.ndim == 3 else None
    elif isinstance(matrices, Sequence) and not isinstance(matrices, (str, bytes)):
        items = list(matrices)
    else:
        items = None
    if not items:
        raise TypeError(
            f"matrices must be a non-empty list of 2-D matrices or an (n, R, C) array, got "
            f"{type(matrices).__name__}{'' if not isinstance(matrices, np.ndarray) else f' with shape {matrices.shape}'}"
        )
    data = [_check_matrix(m, f"matrices[{k}]") for k, m in enumerate(items)]
    _check_cells(sum(m.size for m in data), f"matrices ({len(data):,} of them)")
    shape = data[0].shape
    for k, m in enumerate(data):
        if m.shape != shape:
            raise ValueError(f"matrices[{k}] has shape {m.shape} but matrices[0] has shape {shape}; all must match")
    n = len(data)
    if titles is None:
        titles = [f"head {k + 1}" for k in range(n)]  # heads counted from 1, as everywhere
    else:
        titles = _check_titles(titles, n, "matrix")
    fig = _check_fig(fig)
    if figsize is not None:
        figsize = _check_figsize(figsize)
    if ncols is None:
        ncols = min(n, 4)
    if isinstance(ncols, bool) or not isinstance(ncols, numbers.Integral) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    ncols = min(int(ncols), n)
    nrows = math.ceil(n / ncols)
    if kind != "weights":
        lo, hi = _finite_range(np.stack(data))  # (n, R, C) one scale for all panels
        vmin = lo if vmin is None else vmin
        vmax = hi if vmax is None else vmax
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
        fig = _new_figure(figsize)
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
                fmt=fmt, vmin=vmin, vmax=vmax, colorbar=False,
                xlabel=None if r == nrows - 1 or k + ncols >= n else "",
                ylabel=None if c == 0 else "",
            )
        )
    cbar = fig.colorbar(handles[0].im, ax=[h.ax for h in handles], shrink=0.9, fraction=0.05)
    cbar.set_label(_CBAR_LABELS[kind], fontsize=8)
    cbar.ax.tick_params(labelsize=7)
    if kind == "weights":
        cbar.set_ticks([0, 0.25, 0.5, 0.75, 1])
    for h in handles:
        h.colorbar = None  # the shared bar belongs to the grid; its scale never moves
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    return fig.get_figure(root=True) if isinstance(fig, SubFigure) else fig, handles


# --------------------------------------------------------------------------- views (as the live explorers)


def plain_figure(figsize: tuple[float, float], *, dpi: int = DPI) -> Figure:
    """A Figure on its own Agg canvas that pyplot does not manage (``display(fig)`` shows it once)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figsize = _check_figsize(figsize)
    dpi = _check_dpi(dpi, figsize)
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)

    def _png() -> bytes:  # shown as PNG even where pyplot's inline backend is not active
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=fig.dpi, facecolor="white", metadata={"Software": None})
        return buf.getvalue()

    fig._repr_png_ = _png
    return fig


def _cell_inches(view: View) -> float:
    return 0.45 if max(max(p.matrix.shape) for p in view.panels) <= 4 else 0.4


_BAR_FONT = 7  # points: a bar's label and ticks


def _bar_label(label: str, columns: int, cell: float) -> str:
    """A bar's label, wrapped to about the width of the panels above it (at least 10 characters a line)."""
    chars = max(10, int((columns * cell + 0.3) * 72 / (0.55 * _BAR_FONT)))  # characters across the bar and a gap
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
    """The figsize ``draw_view`` picks: 0.45 inch per cell, panels in rows of ``view.ncols``, room for the bars."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    rows = _view_rows(view)
    cell = _cell_inches(view)
    every = legends(view)
    bars = [lg for lg in every if lg.kind != "weights"]
    width = max(sum(p.matrix.shape[1] * cell + 0.45 for p in r) for r in rows) + 0.6
    width += 1.0 if len(bars) < len(every) else 0  # the attention weights' bar beside the panels
    height = (0.3 if view.title else 0)
    n = view.ncols or len(view.panels)
    for k, r in enumerate(rows):
        height += max(p.matrix.shape[0] for p in r) * cell + 0.95
        lines = [_bar_label(lg.label, sum(view.panels[i].matrix.shape[1] for i in lg.panels), cell).count("\n") + 1
                 for lg in bars if lg.panels[0] // n == k]
        height += 0.55 + 0.13 * max(lines) if lines else 0  # the bar, its ticks and its label under the row
    return round(width, 1), round(height, 1)


def _view_rows(view: View) -> list[list[Panel]]:
    n = view.ncols or len(view.panels)
    return [view.panels[k : k + n] for k in range(0, len(view.panels), n)]


def draw_view(view: View, *, fig: Figure | None = None, managed: bool = True) -> Figure:
    """Draw a ``helpers.panels.View`` with matplotlib: the same panels, colours and texts as the live tables."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    _check_cells(sum(p.matrix.size for p in view.panels), f"the view ({len(view.panels)} panels)")
    fig = _check_fig(fig)
    managed = _check_flag(managed, "managed")
    if fig is None:
        size = view_size(view)
        if max(size) > MAX_INCHES:
            raise ValueError(f"the view needs a figure of {size[0]} × {size[1]} inches, above {MAX_INCHES:g} a side: "
                             "fewer panels, or more of them per row (View.ncols)")
        fig = _new_figure(size) if managed else plain_figure(size)
    rows = _view_rows(view)
    hosts = list(fig.subfigures(len(rows), 1)) if len(rows) > 1 else [fig]
    width = max(sum(p.matrix.shape[1] + 1 for p in r) for r in rows)
    every = legends(view)
    bars = [lg for lg in every if lg.kind != "weights"]
    n, cell = view.ncols or len(view.panels), _cell_inches(view)
    handles, bar_axes, low = [], [], []
    for r, (host, row) in enumerate(zip(hosts, rows, strict=True)):
        used = sum(p.matrix.shape[1] + 1 for p in row)
        if len(rows) > 1 and used < width - 0.5:  # a shorter row keeps the cell size; its rest stays empty
            host = host.subfigures(1, 2, width_ratios=[used, width - used])[0]
        below = [lg for lg in bars if lg.panels[0] // n == r]  # the bars under this row's panels
        grid = host.add_gridspec(2 if below else 1, len(row), width_ratios=[p.matrix.shape[1] for p in row],
                                 height_ratios=[max(p.matrix.shape[0] for p in row) * cell, 0.11] if below else None)
        axes = [host.add_subplot(grid[0, c]) for c in range(len(row))]
        for lg in below:  # a bar spans the grid columns of its panels; _span trims it to their images
            c0, c1 = lg.panels[0] - r * n, lg.panels[-1] - r * n
            bar_axes.append(host.add_subplot(grid[1, c0 : c1 + 1]))
        for c, (p, ax) in enumerate(zip(row, axes, strict=True)):
            hm = heatmap(p.matrix, ax, row_labels=p.row_labels, col_labels=p.col_labels, title=p.title, kind=p.kind,
                         fmt=p.fmt, vmin=p.vmin if p.kind != "weights" else None,
                         vmax=p.vmax if p.kind != "weights" else None, colorbar=False, xlabel=p.xlabel,
                         ylabel=p.ylabel if c == 0 else "", fontsize=8 if max(p.matrix.shape) <= 4 else 7)
            hm.ax.title.set_fontsize(8)
            handles.append(hm)
            if below:
                low.append(hm.ax)
    for lg in every:
        if lg.kind == "weights":
            weights = [handles[k] for k in lg.panels]
            cbar = fig.colorbar(weights[0].im, ax=[h.ax for h in weights], shrink=0.9, fraction=0.05)
            cbar.set_label(_CBAR_LABELS["weights"], fontsize=7)
            cbar.ax.tick_params(labelsize=7)
            cbar.set_ticks([0, 0.25, 0.5, 0.75, 1])
            if all(h.ax in low for h in weights):  # panels sit low in a row with bars: the bar beside them, not above
                cbar.ax.set_axes_locator(_beside([h.ax for h in weights]))
    for ax in low:  # in a row with bars (after the weights' bar, which anchors its panels at the middle right)
        ax.set_anchor("S")  # any room the layout leaves goes above a panel, not between it and its bar
    for lg, cax in zip(bars, bar_axes, strict=True):  # a scores or values bar under its panel(s)
        cax.set_axes_locator(_span([handles[k].ax for k in lg.panels]))
        cbar = fig.colorbar(handles[lg.panels[0]].im, cax=cax, orientation="horizontal")
        cbar.set_ticks([v for v, _ in lg.ticks], labels=[t for _, t in lg.ticks])
        columns = sum(handles[k].shape[1] for k in lg.panels)
        if columns > 1:  # the end ticks inside the bar (as in the browser), not out over the gap to the next panel
            first, *_, last = cax.get_xticklabels()
            first.set_horizontalalignment("left")
            last.set_horizontalalignment("right")
        cbar.set_label(_bar_label(lg.label, columns, cell), fontsize=_BAR_FONT, labelpad=1)
        cbar.ax.tick_params(labelsize=_BAR_FONT, length=2, pad=1)
        cbar.outline.set_linewidth(0.5)
    if view.title:
        fig.suptitle(view.title, fontsize=9)
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
        if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
            raise TypeError(f"scale must be None or the number the scores were multiplied by, got {scale!r}")
        if not math.isfinite(scale):
            raise ValueError(f"scale must be a finite number (the one the scores were multiplied by), got {scale!r}")
    panels = step_panels(steps, None, scale=scale, fmt=fmt)  # checks steps; the labels are checked below by name
    (T_q, T_k), d_v = panels[0].matrix.shape, panels[-1].matrix.shape[1]
    if token_labels is not None and T_q == T_k:
        _check_labels(token_labels, T_q, "token_labels", (T_q, T_k))
    if feature_labels is not None:
        _check_labels(feature_labels, d_v, "feature_labels", panels[-1].matrix.shape)
    panels = step_panels(steps, token_labels, feature_labels=feature_labels, scale=scale, fmt=fmt)
    if one_row is None:
        one_row = sum(p.matrix.shape[1] for p in panels) <= 21
    if not isinstance(one_row, (bool, np.bool_)):
        raise TypeError(f"one_row must be True, False or None (automatic), got {one_row!r}")
    if title is None:
        title = "softmax(Q·Kᵀ × scale)·V, step by step (attention weights on 0..1; other panels each on their own range)"
    return draw_view(View(panels, title, ncols=None if one_row else 4))


# --------------------------------------------------------------------------- one-off figures


def _check_pos_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def plot_head_split(d_model: int, n_heads: int, wrong: bool = False, *, T: int = 3, name: str = "X") -> Figure:
    """Which column of `name` (T, d_model) lands in which head: reshape (T, h, d_head) + transpose, or the wrong (h, T, d_head)."""
    from helpers.attention import split_heads

    d_model = _check_pos_int(d_model, "d_model")
    n_heads = _check_pos_int(n_heads, "n_heads")
    T = _check_pos_int(T, "T")
    wrong = _check_flag(wrong, "wrong")
    if d_model % n_heads:
        raise ValueError(f"d_model {d_model} is not a multiple of n_heads {n_heads}; each head needs d_model / n_heads columns")
    if d_model > 16 or T > 6:
        raise ValueError(f"plot_head_split draws every cell: use d_model <= 16 and T <= 6, got d_model={d_model}, T={T}")
    if not isinstance(name, str):
        raise TypeError(f"name must be a string such as 'X' or 'Q', got {type(name).__name__}")
    d_k = d_model // n_heads
    code = np.arange(T * d_model).reshape(T, d_model)  # (T, d_model) cell (t, c) holds t * d_model + c
    if wrong:
        heads = code.reshape(n_heads, T, d_k)  # (T, d_model) -> (h, T, d_k): cuts across tokens
    else:
        heads = split_heads(code, n_heads).astype(int)  # (T, d_model) -> (T, h, d_k) -> (h, T, d_k)
    owner = np.empty((T, d_model), dtype=int)  # (T, d_model) the head each cell of X lands in
    for h in range(n_heads):
        for v in heads[h].ravel():
            owner[divmod(int(v), d_model)] = h
    palette = mpl.colormaps[CMAP](np.linspace(0.1, 0.9, n_heads) if n_heads > 1 else [0.55])  # (h, 4)
    cell = 0.5
    fig = _new_figure((round(1.3 + cell * (d_model + n_heads * d_k) + 0.5 * n_heads, 1), round(1.5 + cell * T, 1)))
    axes = fig.subplots(1, 1 + n_heads, width_ratios=[d_model] + [d_k] * n_heads)

    def draw(ax, src, colors, rows, cols, title):
        ax.imshow(colors, aspect="equal")
        for (i, j), v in np.ndenumerate(src):
            t, c = divmod(int(v), d_model)
            ax.text(j, i, f"{t + 1},{c + 1}", ha="center", va="center", fontsize=7,
                    color=_text_colors(colors[i, j]).item())
        ax.set_xticks(range(src.shape[1]), labels=cols)
        ax.set_yticks(range(src.shape[0]), labels=rows)
        ax.tick_params(length=0, labelsize=7)
        ax.set_title(title, fontsize=9)
        for spine in ax.spines.values():
            spine.set_visible(False)

    draw(axes[0], code, palette[owner], [f"t{t + 1}" for t in range(T)], [str(c + 1) for c in range(d_model)],
         f"{name} (T={T}, d_model={d_model})")
    axes[0].set_xlabel("column c (cell text: token,column, counted from 1)", fontsize=7)
    for h in range(n_heads):
        src_tok = heads[h] // d_model  # (T, d_k) the token each entry came from
        mixed = (src_tok != np.arange(T)[:, None]).any()
        draw(axes[1 + h], heads[h], np.broadcast_to(palette[h], (T, d_k, 4)), [f"r{t + 1}" for t in range(T)],
             [str(c + 1) for c in range(d_k)], f"head {h + 1}" + ("\n(row r ≠ token r!)" if mixed else ""))
    how = ("wrong: reshape straight to (h, T, d_head): row r of a head is no longer token r" if wrong
           else "right: reshape to (T, h, d_head), then swap T and h: head j gets columns (j−1)·d_head + 1 … j·d_head")
    fig.suptitle(how, fontsize=9)
    return fig


def show_image_patches(image: object, patch: int) -> Figure:
    """An image cut into patch x patch squares (numbered in reading order) and the tokens they become."""
    img = _check_matrix(image, "image")
    _refuse_nonfinite(img, "image", "every pixel must be a finite number")
    patch = _check_pos_int(patch, "patch")
    H, W = img.shape
    if H % patch or W % patch:
        raise ValueError(f"image has shape {img.shape}, which patch={patch} does not divide")
    if H * W > 1024:
        raise ValueError(f"show_image_patches prints every pixel: use at most 1024 pixels, got shape {img.shape}")
    nh, nw = H // patch, W // patch
    tokens = img.reshape(nh, patch, nw, patch).swapaxes(1, 2).reshape(nh * nw, patch * patch)
    # (H, W) -> (nh, p, nw, p) -> (nh, nw, p, p) -> (T = nh*nw, p*p): each patch read row by row
    cmap = mpl.colormaps["gray_r"]
    norm = Normalize(min(img.min(), 0), max(img.max(), 1))
    fig = _new_figure((round(1.4 + 0.32 * (W + patch * patch), 1), round(1.2 + 0.32 * max(H, 2 * nh * nw), 1)))
    ax_img, ax_tok = fig.subplots(1, 2, width_ratios=[W, patch * patch])
    for ax, data in ((ax_img, img), (ax_tok, tokens)):
        ax.imshow(data, cmap=cmap, norm=norm, aspect="equal")
        ax.tick_params(length=0, labelsize=7)
    colors = _text_colors(cmap(norm(tokens)))  # the token matrix prints its numbers; the picture does not
    for (i, j), v in np.ndenumerate(tokens):
        ax_tok.text(j, i, format_value(v), ha="center", va="center", fontsize=6, color=colors[i, j])
    edge = mpl.colormaps[CMAP](0.55)
    for k in range(nh * nw):
        r, c = divmod(k, nw)
        ax_img.add_patch(Rectangle((c * patch - 0.5, r * patch - 0.5), patch, patch, fill=False, edgecolor=edge, lw=2.5))
        ax_img.text(c * patch - 0.4, r * patch - 0.4, f"X{k + 1}", ha="left", va="top", fontsize=8,
                    color="white", bbox={"boxstyle": "round,pad=0.15", "facecolor": edge, "linewidth": 0})
    ax_img.set_xticks(range(W))
    ax_img.set_yticks(range(H))
    ax_img.set_title(f"image {H}×{W} cut into {nh * nw} patches of {patch}×{patch}", fontsize=9)
    ax_tok.set_yticks(range(nh * nw), labels=[f"X{k + 1}" for k in range(nh * nw)])
    ax_tok.set_xticks(range(patch * patch))
    ax_tok.set_xlabel("pixel of the patch, read row by row", fontsize=8)
    ax_tok.set_title(f"tokens: {nh * nw} rows of {patch * patch} numbers", fontsize=9)
    return fig


def formula_card() -> Figure:
    """A printable one-page card (A4 landscape): the formulas, the shapes, and text 001's three-token example."""
    from helpers.attention import attention_steps, project_qkv
    from helpers.examples import T001_WK, T001_WQ, T001_WV, T001_X

    fig = _new_figure((11.69, 8.27))
    fig.set_layout_engine("none")
    Q, K, V = project_qkv(T001_X, T001_WQ, T001_WK, T001_WV)  # (3, 3) each
    st = attention_steps(Q, K, V, scale=1 / math.sqrt(3))

    def mat(m: np.ndarray) -> str:
        rows = [" ".join(f"{format_value(v):>6}" for v in row) for row in np.atleast_2d(m)]
        return "\n".join(f"[{r} ]" for r in rows)

    left = [
        ("Attention by hand · formula card", 15, "bold"),
        ("", 6, "normal"),
        ("Q = X W_q      K = X W_k      V = X W_v", 12, "normal"),
        ("scores = Q Kᵀ            scaled scores = Q Kᵀ / √d_k", 12, "normal"),
        ("attention weights A = softmax(scaled scores), row by row (over the keys)", 12, "normal"),
        ("output = A V", 12, "normal"),
        ("softmax(x)_j = exp(x_j − max x) / Σ_k exp(x_k − max x)   (minus the row max: no overflow)", 11, "normal"),
        ("", 6, "normal"),
        ("multi-head: split d_model columns into h heads of d_head = d_model / h,", 12, "normal"),
        ("attend in each head (scale 1/√d_head), concatenate, then multiply by W_o", 12, "normal"),
        ("", 6, "normal"),
        ("Shapes (tokens are rows; counted from 1 in labels)", 12, "bold"),
        ("X (T, d)    W_q, W_k (d, d_k)    W_v (d, d_v)    W_o (h·d_head, d_out)", 11, "normal"),
        ("Q, K (T, d_k)    V (T, d_v)    scores, A (T_q, T_k)    output (T_q, d_v)", 11, "normal"),
        ("every row of A sums to 1; A[i, j] = how much token i takes from token j", 11, "normal"),
        ("", 6, "normal"),
        ("Words", 12, "bold"),
        ("attention weights = the softmax output A      weight matrices (parameters) = W_q, W_k, W_v, W_o", 11, "normal"),
        ("scores = Q Kᵀ      scaled scores = Q Kᵀ/√d_k      d_k = width of a query/key vector", 11, "normal"),
    ]
    y = 0.96
    for text, size, weight in left:
        fig.text(0.05, y, text, fontsize=size, fontweight=weight, va="top")
        y -= 0.008 + size / 480
    y -= 0.01
    fig.text(0.05, y, "The three-token example (text 001), d_k = 3, scale 1/√3", fontsize=12, fontweight="bold", va="top")
    blocks = [("X", T001_X), ("W_q", T001_WQ), ("W_k", T001_WK), ("W_v", T001_WV), ("Q", Q), ("K", K), ("V", V),
              ("scaled scores", st["scaled"]), ("attention weights A", st["weights"]), ("output = A V", st["output"])]
    x, y0 = 0.05, y - 0.04
    for k, (name, m) in enumerate(blocks):
        col, row = k % 5, k // 5
        fig.text(x + col * 0.19, y0 - row * 0.115, f"{name} {tuple(np.shape(m))}\n{mat(m)}", fontsize=8,
                 family="monospace", va="top")
    return fig


def plot_residual_stream(
    streams: Sequence[object],
    titles: Sequence[str],
    blocks: Mapping[str, slice],
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    suptitle: str | None = None,
) -> Figure:
    """The residual stream (T, d) at several stages, stacked: one row per position, the features in named
    blocks (separated and titled), colour CMAP on the fixed scale 0..1 (values outside it clipped)."""
    if isinstance(streams, np.ndarray) or not isinstance(streams, Sequence) or not streams:
        raise TypeError(f"streams must be a non-empty list of (T, d) matrices, got {type(streams).__name__}")
    data = [_check_matrix(s, f"streams[{k}]") for k, s in enumerate(streams)]
    for k, m in enumerate(data):
        _refuse_nonfinite(m, f"streams[{k}]", "the residual stream of a working model holds finite numbers")
    shape = data[0].shape
    if any(m.shape != shape for m in data):
        raise ValueError(f"every stream must have the shape of streams[0], {shape}; got {[m.shape for m in data]}")
    titles = _check_titles(titles, len(data), "stream")
    R, C = shape
    rows = _check_labels(row_labels, R, "row_labels", shape)
    cols = _check_labels(col_labels, C, "col_labels", shape)
    spans = list(blocks.items()) if isinstance(blocks, Mapping) else []
    edges = [0] + [s.stop for _, s in spans] if all(isinstance(s, slice) for _, s in spans) else None
    if not spans or edges is None or [s.start for _, s in spans] != edges[:-1] or edges[-1] != C:
        raise ValueError(f"blocks must map names to consecutive slices covering the {C} features, got {blocks!r}")
    cell = 0.19
    size = (round(1.2 + cell * C + 1.0, 1), round(len(data) * (cell * R + 0.75) + (0.3 if suptitle else 0), 1))
    if max(size) > MAX_INCHES:
        raise ValueError(f"{len(data)} streams of shape {shape} need a figure of {size[0]} × {size[1]} inches, above "
                         f"{MAX_INCHES:g} a side: show fewer stages, positions or features")
    fig = _new_figure(size)
    axes = np.atleast_1d(fig.subplots(len(data), 1))
    norm = Normalize(0.0, 1.0)
    for ax, m, title in zip(axes, data, titles, strict=True):
        im = ax.imshow(np.clip(m, 0, 1), cmap=CMAP, norm=norm, aspect="equal", interpolation="nearest")
        ax.set_yticks(range(R), labels=rows, fontsize=7)
        ax.set_xticks(range(C), labels=cols, fontsize=6)
        ax.tick_params(length=0)
        ax.set_title(title, fontsize=9, loc="left", pad=24)  # above the block names
        for name, s in spans:
            if s.start > 0:
                ax.axvline(s.start - 0.5, color="white", lw=2.5)
            ax.text((s.start + s.stop - 1) / 2, -0.9, name, ha="center", va="bottom", fontsize=8)
        for spine in ax.spines.values():
            spine.set_visible(False)
    cbar = fig.colorbar(im, ax=list(axes), shrink=0.6, fraction=0.04)
    cbar.set_label("feature value", fontsize=7)
    cbar.ax.tick_params(labelsize=7)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    return fig


def save_figure(fig: Figure, path: str | Path, *, dpi: int = 2 * DPI) -> Path:
    """Save ``fig`` at a fixed size and dpi (no tight bbox), without a timestamp, for ``make images``."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file name (str or pathlib.Path) ending in .png or .svg, got {path!r}")
    dpi = _check_dpi(dpi, tuple(fig.get_size_inches()))
    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg"):
        raise ValueError(f"path must end in .png or .svg, got {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"Software": None} if path.suffix.lower() == ".png" else {"Date": None}
    fig.savefig(path, dpi=dpi, facecolor="white", metadata=metadata)
    return path
