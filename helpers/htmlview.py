"""Live heatmaps drawn by the browser: each ``Panel`` becomes an HTML table, each ``View`` a row of them.

Cells are coloured from the project's matplotlib colormap and print their value as text, with the
texts and colours of ``helpers.panels`` (the static matplotlib figures use the same ones). Sizes are
in ``em``, so browser zoom and ``helpers.presentation(True)`` scale everything crisply. Tables carry a
caption and header cells (``scope``), so a screen reader reads "query 'it', key 'cat': 0.912".
NaN and ±inf cells are grey and hatched and say "nan" / "inf". The text colour of a cell is black or
white, whichever contrasts more; for viridis that is at least 4.5:1 (WCAG AA) on every colour.

Shape notation as in ``helpers.panels``: ``R`` rows, ``C`` columns.
"""

from __future__ import annotations

import functools
import html

import numpy as np

from helpers.panels import LEGEND_LABELS, Panel, View, cell_colors, text_colors

__all__ = ["panel_html", "view_html", "legend_html"]

# One small stylesheet per view, scoped to .attn-view (repeating it is harmless).
_STYLE = (
    "<style>"
    ".attn-view{display:flex;flex-wrap:wrap;gap:0.8em 1.2em;align-items:flex-start;contain:content;"
    "font-family:var(--jp-code-font-family,monospace);line-height:1.2;color:#111}"
    ".attn-view table.attn-hm{border-collapse:collapse;font-size:0.8em;contain:content}"
    ".attn-view .attn-hm caption{font-weight:bold;text-align:left;padding:0 0 0.2em 0;white-space:nowrap;"
    "font-family:var(--jp-ui-font-family,sans-serif)}"
    ".attn-view .attn-hm th{font-weight:normal;padding:0 0.3em;white-space:nowrap;color:#222}"
    ".attn-view .attn-hm thead th{text-align:center}"
    ".attn-view .attn-hm tbody th{text-align:right}"
    ".attn-view .attn-hm td{min-width:3.6em;height:2.2em;text-align:center;color:#000;padding:0 0.2em;white-space:nowrap}"
    ".attn-view .attn-hm td.w{color:#fff}"
    ".attn-view .attn-hm td.bad{background:repeating-linear-gradient(45deg,#d0d0d0 0 0.35em,#8c8c8c 0.35em 0.45em)}"
    ".attn-view .attn-hm .axis{font-size:0.85em;color:#444}"
    ".attn-view .attn-legend{font-size:0.75em;font-family:var(--jp-ui-font-family,sans-serif);color:#222}"
    ".attn-view .attn-legend .bar{width:10em;height:0.8em;border:1px solid #888}"
    ".attn-view .attn-legend .ticks{display:flex;justify-content:space-between;width:10em}"
    ".attn-view .attn-title{flex-basis:100%;font-weight:bold;font-family:var(--jp-ui-font-family,sans-serif)}"
    "</style>"
)


def _hex(rgba: np.ndarray) -> str:
    r, g, b = (int(v) for v in rgba[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def panel_html(panel: Panel) -> str:
    """One panel as a <table>: caption, column headers (keys), row headers (queries), coloured cells."""
    if not isinstance(panel, Panel):
        raise TypeError(f"panel must be a helpers.panels.Panel, got {type(panel).__name__}")
    esc = html.escape
    rgba = panel.colors()  # (R, C, 4)
    ink = text_colors(rgba / 255.0)  # (R, C) "black" / "white"
    bad = ~np.isfinite(panel.matrix)  # (R, C)
    texts = panel.texts()
    axes = " ".join(t for t in (f"{panel.ylabel} ↓" if panel.ylabel else "", f"{panel.xlabel} →" if panel.xlabel else "") if t)
    corner = f'<th class="axis" scope="col">{esc(axes)}</th>'
    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in panel.col_labels)
    packed = (rgba[..., 0].astype(np.int64) << 16 | rgba[..., 1].astype(np.int64) << 8 | rgba[..., 2]).tolist()
    white, bad = (ink == "white").tolist(), bad.tolist()  # plain lists: fast to walk
    rows = []
    for i, label in enumerate(panel.row_labels):
        cells = []
        for j, text in enumerate(texts[i]):
            if bad[i][j]:
                cells.append(f'<td class="bad">{esc(text)}</td>')
            else:
                cls = ' class="w"' if white[i][j] else ""
                cells.append(f'<td{cls} style="background:#{packed[i][j]:06x}">{esc(text)}</td>')
        rows.append(f'<tr><th scope="row">{esc(label)}</th>{"".join(cells)}</tr>')
    return (f'<table class="attn-hm"><caption>{esc(panel.title)}</caption><thead><tr>{corner}{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


@functools.lru_cache(maxsize=64)
def legend_html(kind: str, lo: float = 0.0, hi: float = 1.0) -> str:
    """A colour bar: the colormap from ``lo`` to ``hi`` as a gradient, its ends and its meaning."""
    if kind not in LEGEND_LABELS:
        raise ValueError(f"kind must be one of {list(LEGEND_LABELS)}, got {kind!r}")
    stops = cell_colors(np.linspace(lo, hi, 11)[None, :], lo, hi)[0]  # (11, 4)
    gradient = ",".join(_hex(c) for c in stops)
    mid = (lo + hi) / 2
    ticks = "".join(f"<span>{v:.3g}</span>" for v in (lo, mid, hi))
    return (f'<div class="attn-legend" aria-hidden="true"><div>{html.escape(LEGEND_LABELS[kind])}</div>'
            f'<div class="bar" style="background:linear-gradient(to right,{gradient})"></div>'
            f'<div class="ticks">{ticks}</div></div>')


def view_html(view: View, *, size: float = 1.0) -> str:
    """A whole View as HTML: its title, its panels side by side, and a legend for the attention weights."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not 0 < size < 10:
        raise ValueError(f"size must be a number of em between 0 and 10, got {size!r}")
    parts = [_STYLE, f'<div class="attn-view" style="font-size:{float(size):g}em">']
    if view.title:
        parts.append(f'<div class="attn-title">{html.escape(view.title)}</div>')
    for k, panel in enumerate(view.panels):
        if view.ncols and k and k % view.ncols == 0:
            parts.append('<div style="flex-basis:100%;height:0"></div>')  # a new row of panels
        parts.append(panel_html(panel))
    kinds = {p.kind for p in view.panels}
    if view.legend and "weights" in kinds:
        parts.append(legend_html("weights"))
    parts.append("</div>")
    return "".join(parts)
