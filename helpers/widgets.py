"""The generic pieces of the live explorers: matrix-shaped sliders, a fast figure-to-widget pipeline,
the readout, and the ``Explorer`` base class that ``helpers.explorers`` builds on.

DOM contract (the browser tests in ``tests/ui`` rely on it; keep it exactly):

* every explorer's root widget has the CSS classes ``attn-explorer`` and ``attn-explorer--<kind>``
  (kinds: ``no-weights``, ``qkv``, ``scaling``, ``overflow``, ``multihead``, ``widget-check``);
* every slider has ``attn-slider`` plus ``attn-slider--<matrix>-<i>-<j>`` for a matrix entry (matrix
  named as in the formula: ``X``, ``W_q``, ``W_k``, ``W_v``; ``i``, ``j`` index the FULL matrix, also
  when only a head's column block is shown) or ``attn-slider--<name>`` for a scalar control
  (``scale``, ``magnitude``, ``d_k``, ``heads``, ``head``, ``score``); toggles, dropdowns and buttons
  have ``attn-control`` plus ``attn-control--<name>`` (``scale``, ``dtype``, ``reset-<matrix>``);
* every live figure is an ``ipywidgets.Image`` with class ``attn-heatmap``;
* the readout is an ``ipywidgets.HTML`` with class ``attn-readout``. It shows the current attention
  weights (and output) as HTML tables with 4 decimals, and holds exactly one element with the
  attribute ``data-state`` whose JSON is
  ``{"kind": ..., "inputs": {name: nested lists / numbers / strings}, "weights": [[...]],
  "output": [[...]] or null, ...}``: ``inputs`` holds every slider value and every other parameter
  needed to recompute ``weights`` and ``output`` with ``helpers.attention``. NaN and ±inf are
  written as the strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no NaN). It is rewritten on
  every change.

Speed: a figure is built once on an Agg canvas that pyplot does not manage; ``LiveFigure`` draws
the static parts once (axes, tick labels, colour bars, titles), keeps that background, and per
update repaints only the heatmap cells whose colour or text changed, straight into the Agg
buffer with numpy (cell texts pasted from a cache of glyphs Agg rendered once), redraws the few
other changing artists (a title) by matplotlib over their restored background ("blitting"), and
encodes the buffer as PNG (filter "up", zlib level 1) into the ``Image`` widget. The figure's
own artists are kept up to date too, so ``display(fig)`` / ``savefig`` draw the same picture.

Event coalescing: slider callbacks only mark the explorer dirty and ask ``Coalescer`` for a render.
With no running event loop (scripts, tests, the benchmark) it renders at once. Inside a kernel it
renders at once when idle (leading edge) and otherwise at most once per interval (twice the last
render time, at least 30 ms), always finishing with the latest state (trailing edge), so a fast
drag never builds a backlog. ``Explorer.set`` and ``Explorer.update`` always render synchronously.
"""

from __future__ import annotations

import asyncio
import functools
import html
import io
import json
import math
import numbers
import struct
import time
import zlib
from collections.abc import Callable, Sequence

import ipywidgets as W
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from helpers.plots import DPI

__all__ = [
    "agg_figure",
    "LiveFigure",
    "Coalescer",
    "MatrixSliders",
    "scalar_slider",
    "mark_control",
    "to_jsonable",
    "matrix_table",
    "state_html",
    "state_from_html",
    "Explorer",
]


# --------------------------------------------------------------------------- figures


def _figure_png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, facecolor="white", metadata={"Software": None})
    return buf.getvalue()


def agg_figure(figsize: tuple[float, float], *, dpi: int = DPI) -> Figure:
    """A Figure on its own Agg canvas, not managed by pyplot (never shown twice, never leaked).

    ``display(fig)`` shows it as a PNG even when pyplot's inline backend is not active (the
    figure carries a ``_repr_png_``); with the inline backend active, that backend draws it.
    """
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    fig._repr_png_ = functools.partial(_figure_png, fig)
    return fig


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def _adler32_combine(a1: int, a2: int, len2: int) -> int:
    """Adler-32 of A + B from adler32(A), adler32(B) and len(B) (zlib's adler32_combine)."""
    base = 65521
    rem = len2 % base
    sum1 = a1 & 0xFFFF
    sum2 = (rem * sum1) % base
    sum1 += (a2 & 0xFFFF) + base - 1
    sum2 += ((a1 >> 16) & 0xFFFF) + ((a2 >> 16) & 0xFFFF) + base - rem
    sum1 -= base if sum1 >= base else 0
    sum1 -= base if sum1 >= base else 0
    sum2 -= (base << 1) if sum2 >= (base << 1) else 0
    sum2 -= base if sum2 >= base else 0
    return sum1 | (sum2 << 16)


_POOL = None


def _png_pool():
    """One small thread pool for the whole kernel, created on first use (zlib releases the GIL)."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="attn-png")
    return _POOL


class _PngEncoder:
    """PNG bytes of a canvas buffer, fast, for a figure that changes in places between frames.

    Rows are filtered "up" (each byte minus the byte above: unchanged areas become zeros) and cut
    into bands; each band is deflated on its own (zlib level 1, ended by a full flush, so bands
    can be concatenated) and kept, so a band whose bytes did not change since the last frame is
    not compressed again. Bands that changed are compressed on two threads (zlib releases the
    GIL). About 3x faster than Pillow at compress_level=1 here (Pillow tries every filter on
    every row and needs the alpha channel dropped first); the files are about as small.
    """

    BAND = 24  # rows per band

    def __init__(self) -> None:
        self._shape = None
        self._bands: list = []  # per band: (filtered bytes, deflated bytes, adler32)

    def encode(self, rgba: np.ndarray) -> bytes:
        """PNG bytes of an (H, W, 4) uint8 buffer; bands unchanged since the last frame are not compressed again."""
        H, Wd, _ = rgba.shape
        flat = rgba.reshape(H, Wd * 4)  # (H, W*4), a view of the contiguous buffer
        raw = np.empty((H, Wd * 4 + 1), np.uint8)  # (H, 1 + W*4) one filter byte per row
        raw[:, 0] = 2  # filter type 2 ("up")
        raw[0, 1:] = flat[0]
        np.subtract(flat[1:], flat[:-1], out=raw[1:, 1:])
        if self._shape != raw.shape:
            self._shape = raw.shape
            self._bands = [None] * math.ceil(H / self.BAND)
        todo = []
        for k in range(len(self._bands)):
            band = raw[k * self.BAND : (k + 1) * self.BAND]
            old = self._bands[k]
            if old is None or not np.array_equal(old[0], band):
                todo.append((k, band.copy()))
        if len(todo) > 4:
            half = len(todo) // 2
            parts = list(_png_pool().map(self._deflate_many, (todo[:half], todo[half:])))
            done = parts[0] + parts[1]
        else:
            done = self._deflate_many(todo)
        for k, item in done:
            self._bands[k] = item
        body, adler, = [b"\x78\x01"], 1  # zlib header: deflate, 32K window, fastest
        for band, deflated, a in self._bands:
            body.append(deflated)
            adler = _adler32_combine(adler, a, band.size)
        body.append(b"\x03\x00")  # the final (empty, fixed-Huffman) block
        body.append(struct.pack(">I", adler))
        header = struct.pack(">IIBBBBB", Wd, H, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
        return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", b"".join(body))
                + _png_chunk(b"IEND", b""))

    @staticmethod
    def _deflate_many(items: list) -> list:
        out = []
        for k, band in items:
            c = zlib.compressobj(1, zlib.DEFLATED, -15)  # raw deflate: the zlib header is written once
            out.append((k, (band, c.compress(band) + c.flush(zlib.Z_FULL_FLUSH), zlib.adler32(band))))
        return out


def _png(rgba: np.ndarray) -> bytes:
    """PNG bytes of an (H, W, 4) uint8 buffer (one frame, no band cache)."""
    return _PngEncoder().encode(rgba)


class _GlyphAtlas:
    """Coverage masks of single characters rendered once by Agg, pasted as strings with numpy.

    Matplotlib lays out and rasterises every Text on every draw (about 1 ms each here); a live
    heatmap has up to ~200 cell texts per frame. Cell texts are short numbers, so we render each
    character once per font size (exactly as Agg renders it) and assemble strings from those masks.
    """

    def __init__(self, fig: Figure) -> None:
        self.fig = fig
        self.dpi = fig.dpi
        self._glyphs: dict = {}
        self._strings: dict = {}
        self._center: dict = {}

    def _render(self, s: str, size: float, va: str, weight: str = "normal") -> tuple[np.ndarray, int, int]:
        """Alpha mask of ``s`` drawn left/``va``-aligned at a known origin; returns (mask, row0, col0) of the ink."""
        from matplotlib.backends.backend_agg import RendererAgg
        from matplotlib.text import Text
        from matplotlib.transforms import IdentityTransform

        px = int(math.ceil(size * self.dpi / 72))
        S = 6 * px + 8 * len(s) * px // 2
        r = RendererAgg(S, S, self.dpi)
        t = Text(S // 3, S // 2, s, fontsize=size, fontweight=weight, ha="left", va=va, color="black",
                 transform=IdentityTransform())
        t.set_figure(self.fig)
        t.draw(r)
        alpha = np.asarray(r.buffer_rgba())[..., 3]  # (S, S) coverage, rows top-down
        rows, cols = np.nonzero(alpha)
        if rows.size == 0:
            return np.zeros((0, 0), np.float32), 0, 0
        r0, r1, c0, c1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
        mask = alpha[r0:r1, c0:c1].astype(np.float32) / 255  # (h, w)
        # offsets of the ink relative to the origin (S // 3, S // 2) in buffer coordinates
        return mask, int(r0 - (S - S // 2)), int(c0 - S // 3)

    def _advance(self, ch: str, size: float, weight: str = "normal") -> float:
        from matplotlib.backends.backend_agg import RendererAgg
        from matplotlib.font_manager import FontProperties

        r = RendererAgg(8, 8, self.dpi)
        prop = FontProperties(size=size, weight=weight)
        w2 = r.get_text_width_height_descent(ch + ch, prop, False)[0]
        w1 = r.get_text_width_height_descent(ch, prop, False)[0]
        return w2 - w1

    def strip(self, ch: str, size: float, weight: str = "normal") -> np.ndarray:
        """(A + D, w) coverage of one character in a box one advance wide, baseline at row A."""
        key = (ch, size, weight)
        hit = self._glyphs.get(key)
        if hit is not None:
            return hit
        from matplotlib.backends.backend_agg import RendererAgg
        from matplotlib.text import Text
        from matplotlib.transforms import IdentityTransform

        adv = self._advance(ch, size, weight)
        w = max(1, round(adv))
        A, D = self._rows(size)
        S = 4 * (A + D) + 4 * w
        r = RendererAgg(S, S, self.dpi)
        ox, oy = S // 4, S // 2  # origin: column, and row counted from the bottom
        t = Text(ox + (w - adv) / 2, oy, ch, fontsize=size, fontweight=weight, ha="left", va="baseline",
                 color="black", transform=IdentityTransform())
        t.set_figure(self.fig)
        t.draw(r)
        alpha = np.asarray(r.buffer_rgba())[..., 3]  # (S, S) coverage, rows top-down
        base_row = S - oy
        hit = alpha[base_row - A : base_row + D, ox : ox + w].copy()  # (A + D, w) uint8 coverage
        self._glyphs[key] = hit
        return hit

    def _rows(self, size: float) -> tuple[int, int]:
        px = size * self.dpi / 72
        return math.ceil(1.25 * px), math.ceil(0.45 * px)  # rows above / below the baseline

    def center_to_baseline(self, size: float) -> int:
        """Rows from a va='center' anchor down to the baseline (same for every string of this size)."""
        if size not in self._center:
            _, dr_center, _ = self._render("0", size, "center")
            _, dr_base, _ = self._render("0", size, "baseline")
            self._center[size] = dr_center - dr_base
        return self._center[size]

    def string(self, s: str, size: float, weight: str = "normal") -> tuple[np.ndarray, int, int]:
        """(mask, row offset, col offset) of ``s`` centred on (0, 0) like Text(ha='center', va='center')."""
        key = (s, size, weight)
        hit = self._strings.get(key)
        if hit is not None:
            return hit
        strips = [self.strip(ch, size, weight) for ch in s]
        mask = np.concatenate(strips, axis=1) if len(strips) > 1 else strips[0]  # (A + D, w) the whole string
        hit = (mask, self.center_to_baseline(size) - self._rows(size)[0], -round(mask.shape[1] / 2))
        if len(self._strings) > 4096:
            self._strings.clear()
        self._strings[key] = hit
        return hit


@functools.lru_cache(maxsize=2048)
def _blend_table_cached(bg: int, ink: tuple) -> np.ndarray:
    rgba = np.array([bg], np.uint32).view(np.uint8).astype(np.float32)  # (4,) background R, G, B, A
    k = np.arange(256, dtype=np.float32)[:, None] / 255  # (256, 1) text coverage
    out = np.empty((256, 4), np.uint8)
    out[:, :3] = rgba[:3] + (np.asarray(ink, np.float32) - rgba[:3]) * k + 0.5  # (256, 3)
    out[:, 3] = 255
    return out.view(np.uint32)[:, 0]  # (256,) packed pixels


def _blend_table(bg: int, ink: np.ndarray) -> np.ndarray:
    """(256,) uint32 pixels: text of colour ``ink`` at coverage 0..255 over the packed colour ``bg``."""
    return _blend_table_cached(bg, tuple(float(v) for v in ink))


_ROUND = round  # how a text anchor snaps to the pixel grid (matched to Agg's own text placement)
_TEXT_RGB = {"black": np.zeros(3, np.float32), "white": np.full(3, 255, np.float32)}


class LiveFigure:
    """A figure shown in an ``ipywidgets.Image`` (class ``attn-heatmap``), updated without a full draw.

    ``heatmaps`` (``helpers.plots.Heatmap`` handles, or a callable returning them) are painted
    straight into the Agg buffer: each cell whose colour, text or NaN state changed is filled
    with numpy and its text pasted from a glyph atlas. ``artists`` (Text artists that change,
    e.g. titles, on a plain background) are wiped and re-pasted from the atlas when their text
    changes. Everything else is drawn once.
    A full redraw happens on the first render, when ``full=True``, when a heatmap's colour bar
    moved (``needs_full_draw``), or after anyone else drew the figure (``display(fig)``, savefig).
    The static figure (``fig`` printed or saved) always draws the real matplotlib artists.
    """

    def __init__(self, fig: Figure, heatmaps: Sequence | Callable[[], Sequence] = (), artists: Sequence = ()) -> None:
        if not isinstance(fig, Figure) or not isinstance(fig.canvas, FigureCanvasAgg):
            raise TypeError(f"fig must be a Figure on an Agg canvas (see agg_figure), got {type(fig).__name__}")
        self.fig = fig
        self._heatmaps = heatmaps
        self._artists = list(artists)
        self._bg = None  # (H, W, 4) uint8 copy of the static background
        self._drawing = False
        self._atlas = _GlyphAtlas(fig)
        self._encoder = _PngEncoder()
        self._cells: dict = {}  # id(heatmap) -> (edges, last keys)
        self._extents: dict = {}
        self.full_draws = 0
        self.image = W.Image(format="png", layout=W.Layout(max_width="100%", height="auto"))
        self.image.add_class("attn-heatmap")
        fig.canvas.mpl_connect("draw_event", self._on_draw)

    @property
    def heatmaps(self) -> list:
        """The ``Heatmap`` handles painted by the fast path (called afresh if given as a callable)."""
        return list(self._heatmaps() if callable(self._heatmaps) else self._heatmaps)

    def _on_draw(self, _event) -> None:
        if not self._drawing:  # someone else drew (a display or savefig): the buffer is not ours any more
            self._bg = None

    def _full_draw(self) -> np.ndarray:
        canvas = self.fig.canvas
        for hm in self.heatmaps:
            for a in hm.artists:
                a.set_animated(True)  # left out of the background, painted by us
        for a in self._artists:
            a.set_animated(True)
        self._drawing = True
        try:
            canvas.draw()
        finally:
            self._drawing = False
        if self.fig.get_layout_engine() is not None:
            self.fig.set_layout_engine("none")  # freeze positions: later prints cannot move things
        buf = np.asarray(canvas.get_renderer().buffer_rgba())  # (H, W, 4) writable view
        self._bg = buf.copy()
        self._cells.clear()
        self._extents.clear()
        for hm in self.heatmaps:
            hm.needs_full_draw = False
        self.full_draws += 1
        return buf

    def _geometry(self, hm) -> dict:
        """Pixel edges of a heatmap's cells in the buffer (computed once per full draw)."""
        R, C = hm.shape
        H = self._bg.shape[0]
        tr = hm.ax.transData
        xs = tr.transform(np.column_stack([np.arange(C + 1) - 0.5, np.zeros(C + 1)]))[:, 0]
        ys = tr.transform(np.column_stack([np.zeros(R + 1), np.arange(R + 1) - 0.5]))[:, 1]
        xe = np.round(xs).astype(int).tolist()  # (C + 1,) column edges, left to right
        ye = np.round(H - ys).astype(int).tolist()  # (R + 1,) row edges in buffer rows, top to bottom
        xc = tr.transform(np.column_stack([np.arange(C), np.zeros(C)]))[:, 0]  # (C,) exact cell centres
        yc = H - tr.transform(np.column_stack([np.zeros(R), np.arange(R)]))[:, 1]  # (R,) in buffer rows
        return {"xe": xe, "ye": ye, "xc": xc.tolist(), "yc": yc.tolist(), "last": {}}

    def _paint(self, buf: np.ndarray, hm) -> None:
        """Repaint the cells of a heatmap whose colour, text or NaN state changed, straight into the buffer."""
        geo = self._cells.get(id(hm))
        if geo is None:
            geo = self._cells[id(hm)] = self._geometry(hm)
        xe, ye, xc, yc, last = geo["xe"], geo["ye"], geo["xc"], geo["yc"], geo["last"]
        px = buf.view(np.uint32)[..., 0]  # (H, W) one uint32 per RGBA pixel (same byte order as rgba)
        packed = hm.rgba.view(np.uint32)[..., 0]  # (R, C) the cell colours as uint32
        colors = packed.tolist()
        bad = (~np.isfinite(hm.matrix)).tolist()
        atlas = self._atlas
        C = hm.shape[1]
        for k, text in enumerate(hm.texts.flat):
            i, j = divmod(k, C)
            s, color, size = text.get_text(), text.get_color(), text.get_fontsize()
            state = (colors[i][j], s, color, size)
            if last.get(k) == state:
                continue
            last[k] = state
            r0, r1, c0, c1 = ye[i], ye[i + 1], xe[j], xe[j + 1]
            px[r0:r1, c0:c1] = colors[i][j]
            if bad[i][j]:  # grey "/" hatching on nan / inf cells
                hatch = (np.arange(r0, r1)[:, None] + np.arange(c0, c1)[None, :]) % 9 == 0
                buf[r0:r1, c0:c1][hatch, :3] = 140
            if not s:
                continue
            alpha, dr, dc = atlas.string(s, size)  # (h, w) uint8 coverage
            tr0 = _ROUND(yc[i]) + dr  # text box in buffer coordinates
            tc0 = _ROUND(xc[j]) + dc
            p0, p1 = max(tr0, r0), min(tr0 + alpha.shape[0], r1)  # clip the text to its cell
            q0, q1 = max(tc0, c0), min(tc0 + alpha.shape[1], c1)
            if p1 <= p0 or q1 <= q0:
                continue
            a = alpha[p0 - tr0 : p1 - tr0, q0 - tc0 : q1 - tc0]
            ink = _TEXT_RGB.get(color)
            if ink is None:
                import matplotlib.colors as mcolors

                ink = np.array(mcolors.to_rgb(color), np.float32) * 255
            if bad[i][j]:  # composite over the hatching, channel by channel
                m = a[..., None].astype(np.float32) / 255
                region = buf[p0:p1, q0:q1, :3]
                region[...] = region * (1 - m) + ink * m + 0.5
            else:  # uniform background: a 256-entry table maps coverage to the final pixel
                px[p0:p1, q0:q1] = _blend_table(colors[i][j], ink)[a]

    def _paint_text(self, buf: np.ndarray, a) -> None:
        """Redraw a changing Text (a title) from the glyph atlas, if its text or style changed."""
        from matplotlib.text import Text

        if not isinstance(a, Text) or a.get_rotation() != 0:
            raise TypeError(f"LiveFigure artists must be unrotated Text artists (titles), got {type(a).__name__}")
        weight = a.get_fontweight()
        weight = "bold" if weight in ("bold", "heavy", "black", "extra bold", "demibold", "semibold") or (
            isinstance(weight, int) and weight >= 600) else "normal"
        state = (a.get_text() if a.get_visible() else "", a.get_color(), a.get_fontsize(), weight)
        geo = self._extents.get(id(a))
        if geo is None:
            renderer = self.fig.canvas.get_renderer()
            bb = a.get_window_extent(renderer)
            H = buf.shape[0]
            ha = a.get_horizontalalignment()
            x = bb.x0 if ha == "left" else bb.x1 if ha == "right" else (bb.x0 + bb.x1) / 2
            row, col = int(round(H - (bb.y0 + bb.y1) / 2)), int(round(x))
            bg = int(self._bg.view(np.uint32)[min(max(row, 0), H - 1), min(max(int(bb.x0) - 2, 0), buf.shape[1] - 1), 0])
            geo = self._extents[id(a)] = {"row": row, "col": col, "ha": ha, "bg": bg, "box": None, "state": None}
        if geo["state"] == state:
            return
        geo["state"] = state
        if geo["box"] is not None:  # wipe the previous text
            r0, r1, c0, c1 = geo["box"]
            buf[r0:r1, c0:c1] = self._bg[r0:r1, c0:c1]
            geo["box"] = None
        s, color, size, weight = state
        if not s:
            return
        alpha, dr, dc = self._atlas.string(s, size, weight)  # (h, w) uint8 coverage, centred
        w = alpha.shape[1]
        dc = 0 if geo["ha"] == "left" else -w if geo["ha"] == "right" else dc
        r0, c0 = geo["row"] + dr, geo["col"] + dc
        H, Wd = buf.shape[:2]
        p0, p1, q0, q1 = max(r0, 0), min(r0 + alpha.shape[0], H), max(c0, 0), min(c0 + w, Wd)
        if p1 <= p0 or q1 <= q0:
            return
        ink = _TEXT_RGB.get(color)
        if ink is None:
            import matplotlib.colors as mcolors

            ink = np.array(mcolors.to_rgb(color), np.float32) * 255
        px = buf.view(np.uint32)[..., 0]
        px[p0:p1, q0:q1] = _blend_table(geo["bg"], ink)[alpha[p0 - r0 : p1 - r0, q0 - c0 : q1 - c0]]
        geo["box"] = (p0, p1, q0, q1)

    def render(self, *, full: bool = False) -> bytes:
        """Repaint what changed (or everything), push the PNG into ``self.image``, return the PNG."""
        hms = self.heatmaps
        if full or self._bg is None or any(hm.needs_full_draw for hm in hms):
            buf = self._full_draw()
        else:
            buf = np.asarray(self.fig.canvas.get_renderer().buffer_rgba())
        for hm in hms:
            self._paint(buf, hm)
        for a in self._artists:
            self._paint_text(buf, a)
        png = self._encoder.encode(buf)
        self.image.value = png
        return png


class Coalescer:
    """Run ``fn`` for the latest state only: at once when idle, else at most once per interval."""

    def __init__(self, fn: Callable[[], None], *, min_interval: float = 0.03) -> None:
        self._fn = fn
        self._min = min_interval
        self._interval = min_interval
        self._last = -math.inf
        self._handle = None
        self.dirty = False

    def request(self) -> None:
        """Ask for a render of the current state (called from widget callbacks)."""
        self.dirty = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (script, test, benchmark): render now
            self.flush()
            return
        if self._handle is not None:
            return  # a trailing render is already scheduled; it will see the latest state
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            self.flush()
        else:
            self._handle = loop.call_later(wait, self._on_timer)

    def _on_timer(self) -> None:
        self._handle = None
        if self.dirty:
            self.flush()

    def flush(self) -> None:
        """Render now (if anything changed since the last render, or always when called directly)."""
        self.dirty = False
        start = time.monotonic()
        self._fn()
        self._last = time.monotonic()
        self._interval = max(self._min, 2 * (self._last - start))


# --------------------------------------------------------------------------- controls


def _check_name(name: object, what: str = "name") -> str:
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise TypeError(f"{what} must be a non-empty string without spaces (it becomes a CSS class), got {name!r}")
    return name


def mark_control(widget: W.DOMWidget, name: str) -> W.DOMWidget:
    """Give a toggle / dropdown / button the classes ``attn-control attn-control--<name>``."""
    widget.add_class("attn-control")
    widget.add_class(f"attn-control--{_check_name(name)}")
    return widget


def scalar_slider(
    name: str,
    value: float,
    *,
    min: float,
    max: float,
    step: float = 1,
    integer: bool = False,
    description: str | None = None,
    readout_format: str | None = None,
    width: str = "320px",
) -> W.IntSlider | W.FloatSlider:
    """A slider for one number with the classes ``attn-slider attn-slider--<name>``."""
    _check_name(name)
    cls = W.IntSlider if integer else W.FloatSlider
    kw = {"readout_format": readout_format} if readout_format else {}
    slider = cls(
        value=value, min=min, max=max, step=step, description=name if description is None else description,
        continuous_update=True, style={"description_width": "initial"}, layout=W.Layout(width=width), **kw,
    )
    slider.add_class("attn-slider")
    slider.add_class(f"attn-slider--{name}")
    return slider


def check_matrix(x: object, name: str) -> np.ndarray:
    """``x`` as a finite, non-empty 2-D array of real numbers, or a TypeError/ValueError naming ``name``."""
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be a 2-D numeric array, got {type(x).__name__}")
    arr = np.asarray(x)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D matrix (rows, columns), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf (shape {arr.shape})")
    return arr


class MatrixSliders:
    """One slider per entry of a matrix, laid out as the matrix, with its name and a Reset button.

    ``.value`` is the current matrix (a new np.ndarray), ``.set_value(m)`` sets all entries with
    one notification, ``.reset()`` restores the initial matrix, ``.observe(fn)`` calls
    ``fn(change)`` after every change (``change`` has "owner", "name", "index" ((i, j), or None
    for set_value/reset), "old", "new"), ``.widget`` is the box to display. Slider (i, j) has the
    classes ``attn-slider`` and ``attn-slider--<name>-<i + row_offset>-<j + col_offset>`` (offsets
    let a head's column block carry the indices of the full matrix).
    """

    def __init__(
        self,
        name: str,
        matrix: object,
        *,
        min: float | None = None,
        max: float | None = None,
        step: float | None = None,
        integer: bool | None = None,
        label: str | None = None,
        row_offset: int = 0,
        col_offset: int = 0,
        slider_width: str = "165px",
    ) -> None:
        self.name = _check_name(name)
        arr = check_matrix(matrix, f"matrix for {name}")  # (R, C)
        if integer is None:
            integer = arr.dtype.kind in "iu"
        self.integer = bool(integer)
        if self.integer and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"integer=True but the matrix for {name} has non-integer entries")
        lo = float(np.floor(arr.min())) if min is None else float(min)
        hi = float(np.ceil(arr.max())) if max is None else float(max)
        if min is None:
            lo = lo if lo < -3 else -3.0 if not self.integer else -5.0
        if max is None:
            hi = hi if hi > 3 else 3.0 if not self.integer else 5.0
        if not lo < hi:
            raise ValueError(f"min must be smaller than max for {name}, got min={lo}, max={hi}")
        if arr.min() < lo or arr.max() > hi:
            raise ValueError(
                f"matrix for {name} has entries from {arr.min()} to {arr.max()}, outside the slider range [{lo}, {hi}]"
            )
        step = (1 if self.integer else 0.1) if step is None else step
        if isinstance(step, bool) or not isinstance(step, numbers.Real) or not step > 0:
            raise ValueError(f"step must be a number > 0 for {name}, got {step!r}")
        self.shape = arr.shape
        self._dtype = np.int64 if self.integer else np.float64
        self._initial = arr.astype(self._dtype)  # (R, C)
        self._observers: list[Callable[[dict], None]] = []
        self._quiet = False
        R, C = arr.shape
        self.sliders = np.empty((R, C), dtype=object)
        cls = W.IntSlider if self.integer else W.FloatSlider
        fmt = {} if self.integer else {"readout_format": ".1f" if step >= 0.1 else ".2f"}
        for (i, j), v in np.ndenumerate(self._initial):
            s = cls(
                value=v.item(), min=lo if not self.integer else int(lo), max=hi if not self.integer else int(hi),
                step=step, continuous_update=True, description="",
                tooltip=f"{name}[{i + row_offset}, {j + col_offset}]",
                layout=W.Layout(width=slider_width, margin="0 2px"),
                style={"description_width": "0px"}, **fmt,
            )
            s.add_class("attn-slider")
            s.add_class(f"attn-slider--{name}-{i + row_offset}-{j + col_offset}")
            s.observe(self._make_handler((i, j)), "value")
            self.sliders[i, j] = s
        self.reset_button = mark_control(
            W.Button(description="reset", tooltip=f"reset {name}", layout=W.Layout(width="60px", height="24px")),
            f"reset-{name}",
        )
        self.reset_button.on_click(lambda _b: self.reset())
        header = [W.HTML("")] + [
            W.HTML(f"<small>{j + col_offset}</small>", layout=W.Layout(justify_content="center")) for j in range(C)
        ]
        cells = list(header)
        for i in range(R):
            cells.append(W.HTML(f"<small>{i + row_offset}</small>"))
            cells.extend(self.sliders[i])
        grid = W.GridBox(
            cells, layout=W.Layout(grid_template_columns=f"16px repeat({C}, auto)", grid_gap="0px 0px", width="max-content")
        )
        title = W.HTML(f"<b>{html.escape(label or name)}</b> <small>({R}×{C})</small>")
        self.widget = W.VBox([W.HBox([title, self.reset_button]), grid])
        self.widget.add_class("attn-matrix")

    def _make_handler(self, index: tuple[int, int]):
        def handler(change: dict) -> None:
            if not self._quiet:
                self._notify(index, change["old"], change["new"])

        return handler

    def _notify(self, index, old, new) -> None:
        change = {"owner": self, "name": self.name, "index": index, "old": old, "new": new}
        for fn in list(self._observers):
            fn(change)

    @property
    def value(self) -> np.ndarray:
        """The current matrix, shape ``self.shape`` (int64 for integer sliders, else float64)."""
        return np.array([[s.value for s in row] for row in self.sliders], dtype=self._dtype)  # (R, C)

    def set_value(self, matrix: object, *, notify: bool = True) -> None:
        """Set every slider from ``matrix`` (same shape, inside the range); observers are told once."""
        arr = np.asarray(matrix)
        if arr.dtype == bool or arr.dtype.kind not in "iuf":
            raise TypeError(f"{self.name} must hold numbers, got dtype {arr.dtype}")
        if arr.shape != self.shape:
            raise ValueError(f"{self.name} has shape {arr.shape} but its sliders have shape {self.shape}")
        s0 = self.sliders[0, 0]
        if not np.isfinite(arr).all() or arr.min() < s0.min or arr.max() > s0.max:
            raise ValueError(
                f"{self.name} has entries from {arr.min()} to {arr.max()}, outside the slider range "
                f"[{s0.min}, {s0.max}]"
            )
        if self.integer and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"{self.name} takes integers (integer sliders), got non-integer entries")
        old = self.value
        self._quiet = True
        try:
            for (i, j), v in np.ndenumerate(arr):
                self.sliders[i, j].value = int(v) if self.integer else float(v)
        finally:
            self._quiet = False
        if notify and not np.array_equal(old, self.value):
            self._notify(None, old, self.value)

    def reset(self) -> None:
        """Back to the matrix the sliders were built with."""
        self.set_value(self._initial)

    def observe(self, fn: Callable[[dict], None]) -> None:
        """Call ``fn(change)`` after each change of any entry."""
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self._observers.append(fn)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


# --------------------------------------------------------------------------- readout


def to_jsonable(x: object) -> object:
    """Nested lists of floats for JSON; NaN / ±inf become the strings "nan" / "inf" / "-inf"."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "iub" or (x.dtype.kind == "f" and np.isfinite(x).all()):
            return x.astype(np.float64).tolist() if x.dtype.kind == "f" else x.tolist()  # fast path
        return to_jsonable(x.tolist())
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        v = float(x)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    return x


def matrix_table(
    matrix: object,
    *,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    caption: str | None = None,
    decimals: int = 4,
) -> str:
    """An HTML table of a 2-D matrix, every entry with ``decimals`` decimals (nan/inf spelled out)."""
    arr = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    if arr.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {arr.shape}")
    R, C = arr.shape
    rows = [str(s) for s in row_labels] if row_labels is not None else [str(i) for i in range(R)]
    cols = [str(s) for s in col_labels] if col_labels is not None else [str(j) for j in range(C)]
    if len(rows) != R or len(cols) != C:
        raise ValueError(f"row_labels/col_labels ({len(rows)}, {len(cols)}) do not match the matrix shape {arr.shape}")

    def cell(v: float) -> str:
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{decimals}f}"

    out = ['<table class="attn-table" style="border-collapse:collapse;font-family:monospace;font-size:12px">']
    if caption:
        out.append(f'<caption style="text-align:left;font-weight:bold">{html.escape(caption)}</caption>')
    out.append("<tr><th></th>" + "".join(f'<th style="padding:0 6px">{html.escape(c)}</th>' for c in cols) + "</tr>")
    for i in range(R):
        tds = "".join(f'<td style="padding:0 6px;text-align:right">{cell(float(v))}</td>' for v in arr[i])
        out.append(f'<tr><th style="padding:0 6px">{html.escape(rows[i])}</th>{tds}</tr>')
    out.append("</table>")
    return "".join(out)


def state_html(state: dict) -> str:
    """The one hidden element that carries the explorer's state as JSON in ``data-state``."""
    if not isinstance(state, dict) or "kind" not in state:
        raise ValueError(f"state must be a dict with a 'kind', got {state!r}")
    payload = json.dumps(to_jsonable(state), separators=(",", ":"), allow_nan=False)
    return f'<div class="attn-state" hidden data-state="{html.escape(payload, quote=True)}"></div>'


def state_from_html(value: str) -> dict:
    """Parse the ``data-state`` JSON back out of a readout's HTML (the inverse of ``state_html``)."""
    import re

    found = re.findall(r'data-state="([^"]*)"', value)
    if len(found) != 1:
        raise ValueError(f"expected exactly one data-state attribute in the readout, found {len(found)}")
    return json.loads(html.unescape(found[0]))


# --------------------------------------------------------------------------- explorer base


class Explorer:
    """Base of every explorer: a root widget (``.widget``), live figures, a readout, ``set``/``update``.

    Subclasses build ``self.controls`` (dict name -> widget or MatrixSliders), ``self.live``
    (list of LiveFigure, the first one is ``.figure``), implement ``_compute()`` (recompute the
    numbers and update the artists) and ``state()``, and call ``_finish(layout)``.
    """

    kind = "explorer"

    def __init__(self) -> None:
        self.controls: dict = {}
        self.live: list[LiveFigure] = []
        self.readout = W.HTML(layout=W.Layout(min_width="240px"))
        self.readout.add_class("attn-readout")
        self.widget: W.Box | None = None
        self.renders = 0
        self._coalescer = Coalescer(self._render)

    # subclass hooks -------------------------------------------------------
    def _compute(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def state(self) -> dict:  # pragma: no cover - abstract
        """The data-state dict: kind, inputs, weights, output (and extras)."""
        raise NotImplementedError

    def _readout_body(self, state: dict) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _apply(self, key: str, value: object) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # shared machinery -----------------------------------------------------
    def _finish(self, body: W.Box) -> None:
        body.add_class("attn-explorer")
        body.add_class(f"attn-explorer--{self.kind}")
        self.widget = body
        self._render()

    def _changed(self, _change: object = None) -> None:
        self._coalescer.request()

    def _render(self) -> None:
        self._compute()
        for lf in self.live:
            lf.render()
        st = self.state()
        self.readout.value = self._readout_body(st) + state_html(st)
        self.renders += 1

    @property
    def figure(self) -> Figure:
        """The matplotlib Figure of the main view, in its current state (``display(ex.figure)``)."""
        return self.live[0].fig

    def update(self) -> None:
        """Recompute and redraw now, from the current control values."""
        self._render()

    def set(self, **state: object) -> None:
        """Set controls by name (e.g. ``X=...``, ``scale=False``) and redraw once, synchronously."""
        known = self.settable()
        unknown = [k for k in state if k not in known]
        if unknown:
            raise TypeError(f"{type(self).__name__}.set() got unknown names {unknown}; it accepts {known}")
        with self._hold():
            for key, value in state.items():
                self._apply(key, value)
        self._render()

    def settable(self) -> list[str]:
        """The names ``set`` accepts."""
        return list(self.controls)

    def _hold(self):
        outer = self

        class _Hold:
            def __enter__(self):
                outer._coalescer_saved = outer._coalescer.request
                outer._coalescer.request = lambda: None  # set() renders once at the end
                return self

            def __exit__(self, *exc):
                outer._coalescer.request = outer._coalescer_saved
                return False

        return _Hold()

    @property
    def weights(self) -> np.ndarray:
        """The current attention weights (as in the readout)."""
        return np.asarray(self._weights)

    @property
    def output(self) -> np.ndarray | None:
        """The current output (None where the explorer has none)."""
        return None if getattr(self, "_output", None) is None else np.asarray(self._output)

    def _ipython_display_(self) -> None:
        """Show the live widget; where widgets cannot render (GitHub, nbviewer, an HTML export)
        the text says so instead of a ``VBox(children=...)`` repr."""
        from IPython.display import display

        bundle = self.widget._repr_mimebundle_()
        if bundle:
            bundle["text/plain"] = (
                f"[live explorer '{self.kind}': run this cell in JupyterLab to get its sliders; the next cell "
                "draws a fixed state. If this text is still here after the cell ran, widgets do not render in "
                "this JupyterLab: see 00-start-here, 'Check that widgets work'.]"
            )
            display(bundle, raw=True)
