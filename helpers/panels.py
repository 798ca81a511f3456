"""What a heatmap shows, independent of the medium: the numbers, their colours and their texts.

A ``Panel`` is one annotated matrix (values, title, labels, colour scale, and optionally cells ``marked`` to be
outlined: a student's output cells that differ from the reference's); a ``View`` is a row of
panels shown together (the step view, the heads of 04). The live explorers draw Views in the
browser as tables updated cell by cell (``helpers.liveview``); the static figures draw the same Views with matplotlib
(``helpers.plots.draw_view``). Both take the cell colours, the text colours and the cell texts
from here, so the two media cannot drift apart.

Shape notation (as in ``helpers.attention``): ``R`` rows (queries or tokens), ``C`` columns (keys or
features). Attention weights (``kind="weights"``) always use the fixed colour scale 0..1; scores
and values get the range of their own finite entries unless ``vmin``/``vmax`` are given.

Colour bars (``color_bars``): every View gets one bar for all its attention-weights panels (0..1), and
each scores or values panel a bar of its own under it, labelled with what its numbers are
(``Panel.color_bar_label``, default ``PANEL_BAR_LABELS``) and ticked at its lo, middle (under 3 columns or more)
and hi in the panel's own number format. Neighbours in a row of panels that share the scale, the label
and the format share one bar, drawn under them all.
Importing this module builds nothing and changes nothing (no pyplot, no rcParams).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from helpers.validate import (
    check_choice,
    check_finite_real,
    check_flag,
    check_fmt,
    check_int,
    check_labels,
    check_limits,
    check_matrix,
    check_weights_range,
)

if TYPE_CHECKING:  # for the annotations only
    from matplotlib.colors import Colormap

__all__ = [
    "CMAP",
    "NAN_COLOR",
    "KINDS",
    "STEP_KEYS",
    "Panel",
    "View",
    "format_value",
    "format_matrix",
    "describe_cells",
    "describe_view",
    "ColorBar",
    "color_bars",
    "color_bar_ticks",
    "cell_colors",
    "cell_color_index",
    "colormap",
    "colormap_lut",
    "text_colors",
    "contrast_ratio",
    "limits",
    "step_panels",
]

CMAP = "viridis"  # the one colormap of the project (colour-blind safe, monotone luminance)
NAN_COLOR = "#d0d0d0"  # cells that hold nan / ±inf: light grey, hatched, text "nan"
KINDS = ("weights", "scores", "values")
STEP_KEYS = ("scores", "scaled", "shifted", "exp", "row_sums", "weights", "output")
SCORE_KEYS = ("scores", "scaled", "shifted")  # the steps whose numbers are scores (their bars say "score")

# What a colour bar says its numbers are: COLOR_BAR_LABELS beside a heatmap (heatmap, heatmap_grid) and on the
# attention weights' bar of a View; PANEL_BAR_LABELS, shorter, under one scores or values panel of a View (its
# own scale is said by the ticks below it), unless the panel gives its own color_bar_label.
COLOR_BAR_LABELS = {
    "weights": "attention weight (fixed scale 0 to 1)",
    "scores": "score (own scale, not 0 to 1)",
    "values": "value (own scale, not 0 to 1)",
}
PANEL_BAR_LABELS = {"scores": "score (own scale)", "values": "value (own scale)"}
# presentation mode: the width of a notebook's output area in a 1280-pixel window (Lab, sidebar closed)
PRESENT_WIDTH_PX = 1040
AXIS_LABELS = {"weights": ("key", "query"), "scores": ("key", "query"), "values": ("feature", "token")}


# --------------------------------------------------------------------------- numbers as text


def format_value(
    value: float, fmt: str | Callable[[float], str] | None = None, *, integer: bool | None = None
) -> str:
    """The text printed on a heatmap cell: fmt (a format spec or a callable), or a readable default.

    The default keeps small cells short: exact zeros as "0", integers as integers, 3 decimals below
    10, fewer above, and scientific notation below 0.001 or from 100000 on, so exp(-460) prints as
    "1.7e-200" instead of "0.000". Non-finite values print as "nan", "inf", "-inf". ``integer``:
    None decides per value; heatmaps pass whether the WHOLE matrix is integer, so one panel never
    mixes "12" and "12.00".
    """
    if type(value) is not float and (  # a cell of format_matrix: skip the slower checks below
        isinstance(value, bool)
        or (not isinstance(value, numbers.Real)
            and not (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"))
    ):
        raise TypeError(f"value must be a real number (a cell of the matrix), got {value!r} ({type(value).__name__})")
    v = float(value)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if fmt is not None:
        return fmt(v) if callable(fmt) else format(v, fmt)
    if v == 0:
        return "0"
    a = abs(v)
    if a < 1e-3 or a >= 1e5:
        return f"{v:.1e}"
    if (v == round(v)) if integer is None else integer:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def format_matrix(matrix: object, fmt: str | Callable[[float], str] | None = None) -> list[list[str]]:
    """Every cell's text, row by row, with one integer style for the whole matrix (as both media print it)."""
    data = np.asarray(matrix, dtype=np.float64)  # (R, C)
    finite = data[np.isfinite(data)]
    integer = bool(np.all(finite == np.round(finite)))  # "12" or "12.00" for the whole matrix, never both
    return [[format_value(v, fmt, integer=integer) for v in row] for row in data.tolist()]


# --------------------------------------------------------------------------- colours


def _relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of sRGB colours (..., 3) with channels in 0..1."""
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)  # (..., 3) linear light
    return lin @ np.array([0.2126, 0.7152, 0.0722])  # (...,)


def contrast_ratio(rgb_a: object, rgb_b: object) -> np.ndarray:
    """WCAG 2 contrast ratio (1 to 21) between two sRGB colours (..., 3) with channels in 0..1."""
    la = _relative_luminance(np.asarray(rgb_a, dtype=float))
    lb = _relative_luminance(np.asarray(rgb_b, dtype=float))
    return (np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05)


def text_colors(rgba: object) -> np.ndarray:
    """'black' or 'white' per cell colour (..., 4) in 0..1, whichever contrasts more (WCAG luminance)."""
    lum = _relative_luminance(np.asarray(rgba, dtype=float)[..., :3])  # (...,)
    return np.where(lum > 0.179, "black", "white")  # 0.179: equal contrast against black and white


def limits(data: np.ndarray, kind: str, vmin: float | None = None, vmax: float | None = None) -> tuple[float, float]:
    """Colour limits: 0..1 for weights; else the fixed ones where given and the finite range for the rest."""
    if kind == "weights":
        return 0.0, 1.0
    finite = data[np.isfinite(data)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if lo == hi:  # a constant matrix still gets a visible, centred colour
        pad = max(abs(lo) * 0.5, 0.5)
        lo, hi = lo - pad, hi + pad
    lo = lo if vmin is None else float(vmin)
    hi = hi if vmax is None else float(vmax)
    if lo >= hi:  # every value lies beyond the one fixed limit: keep that limit, open the other side
        lo, hi = (lo, lo + 1.0) if vmin is not None else (hi - 1.0, hi)
    return lo, hi


@functools.cache
def _colormap():
    import matplotlib as mpl

    return mpl.colormaps[CMAP]  # a copy per lookup: keep one (its colour table is built on first use)


def colormap() -> Colormap:
    """The matplotlib colormap of the static figures: CMAP, with NaN/±inf (masked) cells in NAN_COLOR (a copy)."""
    return _colormap().with_extremes(bad=NAN_COLOR)


@functools.cache
def colormap_lut() -> np.ndarray:
    """(N, 4) uint8 RGBA: the colormap's own table (N = 256 for viridis); a cell's colour is one row of it."""
    cmap = _colormap()
    return cmap(np.arange(cmap.N), bytes=True)  # (N, 4) integer input: the table's entries themselves


def cell_color_index(data: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """(R, C) int: each cell's row of ``colormap_lut()`` on [lo, hi], as matplotlib picks it; -1 for NaN/±inf."""
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"colour limits must be finite with lo < hi, got lo={lo}, hi={hi}")
    data = np.asarray(data, dtype=np.float64)
    bad = ~np.isfinite(data)  # (R, C)
    n = _colormap().N
    scaled = np.clip((np.where(bad, lo, data) - lo) / (hi - lo), 0.0, 1.0) * n  # (R, C) in 0..N
    scaled[scaled == n] = n - 1  # as Colormap.__call__: x = 1 is the last entry, not one past it
    index = scaled.astype(np.int64)  # (R, C) truncated, as matplotlib does
    index[bad] = -1
    return index


def cell_colors(data: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """(R, C, 4) uint8 RGBA of each cell from the colormap on [lo, hi]; NaN and ±inf get NAN_COLOR."""
    index = cell_color_index(data, lo, hi)  # (R, C)
    rgba = colormap_lut()[np.maximum(index, 0)]  # (R, C, 4) exactly the colours imshow gives
    rgba[index < 0] = (*(int(NAN_COLOR[k : k + 2], 16) for k in (1, 3, 5)), 255)  # NAN_COLOR
    return rgba


# --------------------------------------------------------------------------- what is shown


@dataclass
class Panel:
    """One annotated matrix: values (R, C), title, row/column labels, kind (colour scale) and format."""

    matrix: np.ndarray
    title: str = ""
    row_labels: Sequence[str] | None = None
    col_labels: Sequence[str] | None = None
    kind: str = "weights"
    xlabel: str | None = None
    ylabel: str | None = None
    fmt: str | Callable[[float], str] | None = None
    vmin: float | None = None
    vmax: float | None = None
    # what its colour bar says the numbers are (scores/values; default PANEL_BAR_LABELS)
    color_bar_label: str | None = None
    marked: np.ndarray | None = None  # (R, C) bool: cells drawn outlined (a student's cells that differ: yours=)

    def __post_init__(self) -> None:
        arr = check_matrix(self.matrix, "Panel matrix", one_row=True, finite=False, what="numeric").astype(np.float64)
        check_choice(self.kind, "kind", KINDS)  # (R, C) above: a 1-D row becomes one row
        if not isinstance(self.title, str):
            raise TypeError(f"title must be a string, got {type(self.title).__name__}")
        check_fmt(self.fmt)
        if self.color_bar_label is not None:
            if not isinstance(self.color_bar_label, str):
                raise TypeError(f"color_bar_label must be a string or None, got {type(self.color_bar_label).__name__}")
            if self.kind == "weights":
                raise ValueError(f"color_bar_label is for scores and values panels; the attention weights of panel "
                                 f"{self.title!r} share the fixed bar {COLOR_BAR_LABELS['weights']!r}")
        check_limits(self.vmin, self.vmax)
        if self.kind == "weights":
            check_weights_range(arr, f"panel {self.title!r}")
        R, C = arr.shape
        if self.marked is not None:
            marked = np.asarray(self.marked)
            if marked.dtype != bool or marked.shape != arr.shape:
                raise ValueError(f"marked must be None or a bool array of the matrix's shape {arr.shape}, got "
                                 f"{marked.dtype} of shape {marked.shape}")
            self.marked = marked
        self.matrix = arr
        self.row_labels = check_labels(self.row_labels, R, "row_labels",
                                       against=f"the matrix has shape {arr.shape}: need {R}")
        self.col_labels = check_labels(self.col_labels, C, "col_labels",
                                       against=f"the matrix has shape {arr.shape}: need {C}")
        default_x, default_y = AXIS_LABELS[self.kind]
        self.xlabel = default_x if self.xlabel is None else self.xlabel
        self.ylabel = default_y if self.ylabel is None else self.ylabel

    @property
    def limits(self) -> tuple[float, float]:
        """The colour scale (lo, hi) this panel is drawn on."""
        return limits(self.matrix, self.kind, self.vmin, self.vmax)

    @property
    def label(self) -> str:
        """What this panel's colour bar says its numbers are."""
        if self.color_bar_label is not None:
            return self.color_bar_label
        return COLOR_BAR_LABELS["weights"] if self.kind == "weights" else PANEL_BAR_LABELS[self.kind]

    def texts(self) -> list[list[str]]:
        """The text of every cell, row by row."""
        return format_matrix(self.matrix, self.fmt)

    def colors(self) -> np.ndarray:
        """(R, C, 4) uint8 cell colours."""
        return cell_colors(self.matrix, *self.limits)

    def color_index(self) -> np.ndarray:
        """(R, C) int: each cell's row of ``colormap_lut()``, -1 for NaN/±inf (what the live view sends)."""
        return cell_color_index(self.matrix, *self.limits)


@dataclass
class View:
    """Panels shown side by side (wrapping into rows of ``ncols`` when given), with an optional title.

    ``color_bars``: draw the View's colour bars (``color_bars(view)``); False for a View without any."""

    panels: list[Panel]
    title: str = ""
    ncols: int | None = None
    color_bars: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.panels, Panel):
            self.panels = [self.panels]
        if not self.panels or not all(isinstance(p, Panel) for p in self.panels):
            raise TypeError(f"View needs a non-empty list of Panel, got {self.panels!r}")
        if self.ncols is not None:
            self.ncols = check_int(self.ncols, "ncols", minimum=1)
        self.color_bars = check_flag(self.color_bars, "color_bars")


# --------------------------------------------------------------------------- colour bars


@dataclass(frozen=True)
class ColorBar:
    """One colour bar: its label, its scale lo..hi, its ticks (value, text) and the panels it serves (indices)."""

    kind: str
    label: str
    lo: float
    hi: float
    ticks: tuple[tuple[float, str], ...]
    panels: tuple[int, ...]

    def stops(self, n: int = 11) -> list[int]:
        """Rows of ``colormap_lut()`` at n evenly spaced values from lo to hi: the bar's colours, left to right.

        Taken at the fractions 0, 1/(n-1), ..., 1 of the way from lo to hi, so float rounding of lo + f·(hi − lo)
        never picks a neighbouring row: every bar shows the whole colormap, lo at its left end."""
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
            raise ValueError(f"n must be an integer of at least 2 (both ends of the bar), got {n!r}")
        return list(_stops(int(n)))


@functools.cache
def _stops(n: int) -> tuple[int, ...]:
    return tuple(cell_color_index(np.linspace(0.0, 1.0, n)[None, :], 0.0, 1.0)[0].tolist())  # (n,)


WEIGHTS_COLOR_BAR_TICKS = ((0.0, "0"), (0.5, "0.5"), (1.0, "1"))


def color_bar_ticks(lo: float, hi: float, fmt: str | Callable[[float], str] | None = None, *,
                 integer: bool = False, middle: bool = True) -> tuple[tuple[float, str], ...]:
    """Ticks of a bar on lo..hi: lo, the middle and hi, printed as the panel prints a cell.

    ``integer``: the panel holds only integers (its cells print "12", not "12.000"); the ticks print so
    too when they are integers. The middle is left out when ``middle`` is False (a bar under fewer than
    3 columns) or when the panel holds only integers and the middle is not one (a 0/1 mask: "0", "1")."""
    lo, hi = check_finite_real(lo, "lo"), check_finite_real(hi, "hi")
    if not lo < hi:
        raise ValueError(f"a colour bar needs lo < hi, got lo={lo}, hi={hi}")
    check_fmt(fmt)
    values = [lo, (lo + hi) / 2, hi]
    if not middle or (integer and values[1] != round(values[1])):
        values = [lo, hi]
    integer = integer and all(v == round(v) for v in values)  # limits padded around a constant: 0.5 .. 1.5
    return tuple((v, format_value(v, fmt, integer=integer)) for v in values)


def _is_integer(matrix: np.ndarray) -> bool:
    finite = matrix[np.isfinite(matrix)]
    return bool(np.all(finite == np.round(finite)))


def color_bars(view: View) -> list[ColorBar]:
    """The colour bars of ``view`` (none if ``view.color_bars`` is False), in the order of their last panels.

    One bar serves every attention-weights panel (fixed 0..1). Each scores or values panel gets its own
    bar, except that neighbours in one row of panels with the same fixed scale (vmin and vmax given), label
    and number format share one. Panels scaled to their own data never share: their grouping would change
    with the data (two ranges that happen to be equal), and a live view would be rebuilt instead of patched.
    A bar under fewer than 3 columns of cells is ticked at its two ends only (3 numbers would collide)."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    if not view.color_bars:
        return []
    out: list[ColorBar] = []
    weights = tuple(k for k, p in enumerate(view.panels) if p.kind == "weights")
    n = view.ncols or len(view.panels)
    group: list[int] = []
    key: tuple | None = None

    def close() -> None:
        if group:
            kind, label, lo, hi, fmt = key[:5]
            columns = sum(view.panels[k].matrix.shape[1] for k in group)
            integer = all(_is_integer(view.panels[k].matrix) for k in group)
            ticks = color_bar_ticks(lo, hi, fmt, integer=integer, middle=columns >= 3)
            out.append(ColorBar(kind, label, lo, hi, ticks, tuple(group)))

    for k, p in enumerate(view.panels):
        if p.kind == "weights":
            close()
            group, key = [], None
            if k == weights[-1]:
                out.append(ColorBar("weights", COLOR_BAR_LABELS["weights"], 0.0, 1.0, WEIGHTS_COLOR_BAR_TICKS, weights))
            continue
        fixed = p.vmin is not None and p.vmax is not None
        new = (p.kind, p.label, *p.limits, p.fmt, k if not fixed else None)  # k: a scale of its own data, alone
        if group and new == key and k % n:  # the same fixed scale, beside the last one in the same row of panels
            group.append(k)
            continue
        close()
        group, key = [k], new
    close()
    return out


# --------------------------------------------------------------------------- the step view

STEP_TITLES = {
    "scores": "1 scores Q·Kᵀ",
    "scaled": "2 scaled scores × {scale}",
    "shifted": "3 minus the row max",
    "exp": "4 exp(·)",
    "row_sums": "5 row sums Σ",
    "weights": "6 attention weights = exp / Σ",
    "output": "7 output = attention weights · V",
}


def step_panels(
    steps: Mapping[str, object],
    token_labels: Sequence[str] | None = None,
    *,
    feature_labels: Sequence[str] | None = None,
    scale: float | None = None,
    fmt: str | Callable[[float], str] | None = None,
) -> list[Panel]:
    """The seven panels of ``helpers.attention_steps(...)``: scores -> scaled scores -> ... -> output."""
    if not isinstance(steps, Mapping):
        raise TypeError(
            f"steps must be the dict returned by helpers.attention_steps(Q, K, V, scale), got {type(steps).__name__}"
        )
    missing = [k for k in STEP_KEYS if k not in steps]
    if missing:
        raise ValueError(f"steps lacks {missing}; expected the keys {list(STEP_KEYS)} of helpers.attention_steps")
    data = {k: np.asarray(steps[k]) for k in STEP_KEYS}
    for key, arr in data.items():
        if arr.ndim != 2:
            raise ValueError(
                f"steps[{key!r}] has shape {arr.shape}; the step view draws one sequence, so it needs 2-D "
                "matrices (no batch or head axis)"
            )
    T_q, T_k = data["scores"].shape
    toks = token_labels
    if toks is not None and T_q != T_k:
        raise ValueError(f"token_labels needs T_q == T_k (self-attention), got scores of shape {(T_q, T_k)}")
    s = "scale" if scale is None else f"{float(scale):.4g}"
    panels = []
    for key in STEP_KEYS:
        cols = ["Σ"] if key == "row_sums" else feature_labels if key == "output" else toks
        panels.append(Panel(
            data[key], STEP_TITLES[key].format(scale=s), row_labels=toks, col_labels=cols,
            kind="weights" if key == "weights" else "scores" if key in SCORE_KEYS else "values", fmt=fmt,
            xlabel="feature" if key == "output" else "" if key == "row_sums" else "key", ylabel="query",
        ))
    return panels


# --------------------------------------------------------------------------- in words


def _quote(label: str) -> str:
    return label if label.isdigit() else f"'{label}'"


def describe_cells(matrix: np.ndarray, texts: Sequence[Sequence[str]] | None, rows: Sequence[str], cols: Sequence[str],
                   *, kind: str = "weights", title: str = "", rows_shown: int = 4,
                   fmt: str | Callable[[float], str] | None = None) -> str:
    """A heatmap in words, from the texts it prints: its title, shape, and the largest cell of each row (of the
    ``rows_shown`` rows whose largest cells stand out most above their row's mean), e.g. "'it' → 'cat' 0.82".

    ``texts=None``: the cells named are formatted here, as ``format_matrix(matrix, fmt)`` prints them (only those:
    a live view's announcement of a 64 × 64 table costs a few cells, not 4,096)."""
    data = np.asarray(matrix, dtype=np.float64)  # (R, C)
    if texts is None:
        finite_cells = data[np.isfinite(data)]
        integer = bool(np.all(finite_cells == np.round(finite_cells)))  # as format_matrix decides it

        def text(i: int, j: int) -> str:
            return format_value(float(data[i, j]), fmt, integer=integer)
    else:

        def text(i: int, j: int) -> str:
            return texts[i][j]
    R, C = data.shape
    title = title or {"weights": "attention weights", "scores": "scores", "values": "values"}[kind]
    what = {"weights": f"attention weights, {R} quer{'ies' if R > 1 else 'y'} × {C} key{'s' if C > 1 else ''}",
            "scores": f"scores, {R} × {C}", "values": f"values, {R} × {C}"}[kind]
    finite = np.where(np.isfinite(data), data, -np.inf)  # (R, C): NaN/±inf are never "largest"
    best = finite.argmax(axis=1)  # (R,) the column of each row's largest cell
    ok = np.isfinite(data)  # (R, C)
    mean = np.where(ok, data, 0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1)  # (R,)
    stand_out = finite[np.arange(R), best] - mean  # (R,) how far each row's largest cell is above its mean
    picked = sorted(sorted(range(R), key=lambda i: -stand_out[i])[:rows_shown])
    cells = ", ".join(f"{_quote(rows[i])} → {_quote(cols[best[i]])} {text(i, best[i])}" for i in picked)
    head = "largest in each row" if R <= rows_shown else f"largest in the {len(picked)} rows where it stands out most"
    bad = int((~np.isfinite(data)).sum())
    return f"{title} ({what}); {head}: {cells}" + (f"; {bad} cells nan or inf" if bad else "")


def describe_view(view: View, rows_shown: int = 4) -> str:
    """A View in words (the live view's announcement, the figure's alt text): each panel by ``describe_cells``."""
    n = len(view.panels)
    shown = rows_shown if n == 1 else 3 if n == 2 else 2 if n <= 4 else 1
    parts = []
    for p in view.panels:
        R, C = p.matrix.shape
        rows = list(p.row_labels) if p.row_labels is not None else [str(i + 1) for i in range(R)]
        cols = list(p.col_labels) if p.col_labels is not None else [str(j + 1) for j in range(C)]
        parts.append(describe_cells(p.matrix, None, rows, cols, kind=p.kind, title=p.title, rows_shown=shown,
                                    fmt=p.fmt))
    return (f"{view.title}: " if view.title else "") + ". ".join(parts) + "."
