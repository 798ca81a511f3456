"""Live heatmaps drawn by the browser and updated in place: a ``View`` becomes one small widget.

The kernel sends numbers and texts, never markup: each ``Panel`` goes out as its caption, its labels,
its cell texts (``helpers.panels.format_matrix``) and each cell's row of the colormap's table
(``helpers.panels.cell_color_index``, -1 for NaN/±inf). The table itself (256 colours and, per colour,
whether its text is white) goes once per widget. The browser (the ES module below, run by
``anywidget``, sent from the kernel: no CDN, no build step) builds each table once; after that an
update carries only the cells whose text or colour changed (and captions that changed), and the
browser sets only their text, class and background. A change of shape or labels (another number of
heads, a longer cache) sends the whole View again and the browser builds it anew.

What the browser builds (the DOM contract of ``helpers.explorer``): a ``div.attn-view`` (its font size
in em), an optional ``div.attn-title``, one ``table.attn-hm`` per panel with a ``caption``, a header
row of ``th scope="col"`` (keys) and a ``th scope="row"`` per row (queries), ``td`` cells printing the
texts on their colour (class ``w``: white text, whichever of black and white contrasts more; class
``bad``: a hatched grey NaN/±inf cell), and a colour bar when a panel shows attention weights. Sizes
are in em, so browser zoom and ``helpers.presentation(True)`` scale everything crisply.

Shape notation as in ``helpers.panels``: ``R`` rows, ``C`` columns.
"""

from __future__ import annotations

import copy
import functools
import json
import numbers

import anywidget
import numpy as np
import traitlets

from helpers.panels import LEGEND_LABELS, View, cell_color_index, colormap_lut, text_colors

__all__ = ["HeatmapView", "view_payload"]

_CSS = """
.attn-view{display:flex;flex-wrap:wrap;gap:0.8em 1.2em;align-items:flex-start;contain:content;
  font-family:var(--jp-code-font-family,monospace);line-height:1.2;color:#111}
.attn-view table.attn-hm{border-collapse:collapse;font-size:0.8em;contain:content}
.attn-view .attn-hm caption{font-weight:bold;text-align:left;padding:0 0 0.2em 0;white-space:nowrap;
  font-family:var(--jp-ui-font-family,sans-serif)}
.attn-view .attn-hm th{font-weight:normal;padding:0 0.3em;white-space:nowrap;color:#222}
.attn-view .attn-hm thead th{text-align:center}
.attn-view .attn-hm tbody th{text-align:right}
.attn-view .attn-hm td{min-width:3.6em;height:2.2em;text-align:center;color:#000;padding:0 0.2em;white-space:nowrap}
.attn-view .attn-hm td.w{color:#fff}
.attn-view .attn-hm td.bad{background:repeating-linear-gradient(45deg,#d0d0d0 0 0.35em,#8c8c8c 0.35em 0.45em)}
.attn-view .attn-hm .axis{font-size:0.85em;color:#444}
.attn-view .attn-legend{font-size:0.75em;font-family:var(--jp-ui-font-family,sans-serif);color:#222}
.attn-view .attn-legend .bar{width:10em;height:0.8em;border:1px solid #888}
.attn-view .attn-legend .ticks{display:flex;justify-content:space-between;width:10em}
.attn-view .attn-title{flex-basis:100%;font-weight:bold;font-family:var(--jp-ui-font-family,sans-serif)}
"""

# The browser side. State (trait "_view"): {rev, title, ncols, legend, tables: [{caption, axes, cols, rows,
# text: [R*C], color: [R*C]}]}; a custom message {rev, caption: [[k, text]], cells: [[k, [i], [text], [color]]]}
# changes cells of the state with the same rev (a message for a newer rev waits for that state).
_ESM = r"""
function make(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Set what differs, nothing else: the text node's data, the class, the background.
function paint(td, text, color, lut) {
  if (td.firstChild.data !== text) td.firstChild.data = text;
  if (td.__attnColor === color) return;
  td.__attnColor = color;
  const cls = color < 0 ? "bad" : lut.white[color] ? "w" : "";
  if (td.className !== cls) td.className = cls;
  td.style.background = color < 0 ? "" : lut.bg[color];
}

function build(state, lut, size) {
  const view = make("div", "attn-view");
  view.style.fontSize = size + "em";
  if (state.title) view.appendChild(make("div", "attn-title", state.title));
  const tables = (state.tables || []).map((t, k) => {
    if (state.ncols && k && k % state.ncols === 0) {
      const br = make("div");
      br.style.cssText = "flex-basis:100%;height:0";  // a new row of panels
      view.appendChild(br);
    }
    const table = make("table", "attn-hm");
    const caption = table.appendChild(make("caption", "", t.caption));
    const head = table.appendChild(make("thead")).appendChild(make("tr"));
    const corner = head.appendChild(make("th", "axis", t.axes));
    corner.scope = "col";
    for (const c of t.cols) head.appendChild(make("th", "", c)).scope = "col";
    const body = table.appendChild(make("tbody"));
    const cells = [];
    const C = t.cols.length;
    t.rows.forEach((r, i) => {
      const tr = body.appendChild(make("tr"));
      tr.appendChild(make("th", "", r)).scope = "row";
      for (let j = 0; j < C; j++) {
        const td = tr.appendChild(make("td", "", ""));
        td.appendChild(document.createTextNode(""));
        paint(td, t.text[i * C + j], t.color[i * C + j], lut);
        cells.push(td);
      }
    });
    view.appendChild(table);
    return {caption, cells};
  });
  if (state.legend) {
    const lg = view.appendChild(make("div", "attn-legend"));
    lg.setAttribute("aria-hidden", "true");
    lg.appendChild(make("div", "", state.legend.label));
    lg.appendChild(make("div", "bar")).style.background = "linear-gradient(to right," + state.legend.stops.join(",") + ")";
    const ticks = lg.appendChild(make("div", "ticks"));
    for (const s of state.legend.ticks) ticks.appendChild(make("span", "", s));
  }
  return {view, tables};
}

// Apply a message to the model's state (so a view opened later starts from it) and to one view's cells.
function apply(state, msg, shown, lut) {
  for (const [k, text] of msg.caption) {
    state.tables[k].caption = text;
    if (shown && shown.tables[k].caption.textContent !== text) shown.tables[k].caption.textContent = text;
  }
  for (const [k, index, texts, colors] of msg.cells) {
    const t = state.tables[k];
    for (let n = 0; n < index.length; n++) {
      const i = index[n];
      t.text[i] = texts[n];
      t.color[i] = colors[n];
      if (shown) paint(shown.tables[k].cells[i], texts[n], colors[n], lut);
    }
  }
}

function render({ model, el }) {
  const lut = model.get("_lut");
  let shown = null, pending = [];
  const draw = () => {
    const state = model.get("_view");
    shown = build(state, lut, model.get("size"));
    el.replaceChildren(shown.view);
    for (const m of pending) if (m.rev === state.rev) apply(state, m, shown, lut);
    pending = pending.filter((m) => m.rev > state.rev);  // those for a View still to come
  };
  const onMessage = (msg) => {
    if (!msg || msg.type !== "attn-cells") return;
    const state = model.get("_view");
    if (msg.rev === state.rev) apply(state, msg, shown, lut);
    else if (msg.rev > state.rev) pending.push(msg);  // its View has not arrived yet
  };
  const onSize = () => { shown.view.style.fontSize = model.get("size") + "em"; };
  draw();
  model.on("change:_view", draw);
  model.on("change:size", onSize);
  model.on("msg:custom", onMessage);
  return () => {
    model.off("change:_view", draw);
    model.off("change:size", onSize);
    model.off("msg:custom", onMessage);
  };
}

export default { render };
"""


@functools.cache
def _lut_payload() -> dict:
    """The colormap's table as CSS colours, and per colour whether its text is white (sent once per widget)."""
    rgba = colormap_lut()  # (N, 4) uint8
    bg = [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgba[:, :3].tolist()]
    white = (text_colors(rgba / 255.0) == "white").astype(int).tolist()  # (N,) 1 = white text
    return {"bg": bg, "white": white}


@functools.cache
def _legend(kind: str = "weights") -> dict:
    """The colour bar of the attention weights: 11 stops of the colormap from 0 to 1, its ends and its meaning."""
    stops = cell_color_index(np.linspace(0.0, 1.0, 11)[None, :], 0.0, 1.0)[0]  # (11,)
    return {"label": LEGEND_LABELS[kind], "stops": [_lut_payload()["bg"][i] for i in stops.tolist()],
            "ticks": [f"{v:.3g}" for v in (0.0, 0.5, 1.0)]}


def view_payload(view: View) -> dict:
    """What the browser needs to draw ``view``: per panel its caption, labels, cell texts and colour rows."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    tables = []
    for p in view.panels:
        axes = " ".join(t for t in (f"{p.ylabel} ↓" if p.ylabel else "", f"{p.xlabel} →" if p.xlabel else "") if t)
        tables.append({"caption": p.title, "axes": axes, "cols": list(p.col_labels), "rows": list(p.row_labels),
                       "text": [t for row in p.texts() for t in row],  # (R*C,) row by row
                       "color": p.color_index().ravel().tolist()})  # (R*C,) rows of colormap_lut(), -1 = NaN/inf
    legend = _legend() if view.legend and any(p.kind == "weights" for p in view.panels) else None
    return {"title": view.title, "ncols": view.ncols, "legend": legend, "tables": tables}


def _layout(payload: dict) -> tuple:
    """Everything but the cells and captions: when it changes, the browser builds the View anew."""
    return (payload["title"], payload["ncols"], payload["legend"] is not None,
            tuple((t["axes"], tuple(t["cols"]), tuple(t["rows"])) for t in payload["tables"]))


class HeatmapView(anywidget.AnyWidget):
    """One live ``View`` (tables of coloured, numbered cells); ``.show(view)`` sends what changed.

    ``.sent`` is the size in bytes (JSON) of what the last ``show`` sent to the browser: the whole
    View after a change of layout, else only the changed cells and captions (0 if nothing changed).
    ``.snapshot()`` is a copy of what the browser shows (the state a new browser view starts from).
    """

    _esm = _ESM
    _css = _CSS
    _lut = traitlets.Dict().tag(sync=True)
    _view = traitlets.Dict().tag(sync=True)
    size = traitlets.Float(1.0).tag(sync=True)

    def __init__(self, view: View | None = None, *, size: float = 1.0) -> None:
        self._rev, self._shape, self.sent = 0, None, 0
        payload = {"rev": 0, "tables": []}
        if view is not None:  # the first View goes with the widget itself: one message, not two
            payload = view_payload(view)
            self._rev, self._shape = 1, _layout(payload)
            payload["rev"] = 1
        super().__init__(_lut=_lut_payload(), _view=payload, size=_check_size(size))
        self.add_class("attn-heatmap")

    def show(self, view: View) -> int:
        """Draw ``view``: only its changed cells and captions if its layout is the one shown; returns ``.sent``."""
        new = view_payload(view)
        layout = _layout(new)
        if layout != self._shape:  # a new layout: the whole View, through the synced trait
            self._rev += 1
            self._shape = layout
            new["rev"] = self._rev
            self._view = new
            self.sent = len(json.dumps(new, separators=(",", ":")))
            return self.sent
        old = self._view  # changed in place below: a browser view opened later gets the current cells
        captions, cells = [], []
        for k, (a, b) in enumerate(zip(old["tables"], new["tables"], strict=True)):
            if a["caption"] != b["caption"]:
                a["caption"] = b["caption"]
                captions.append([k, b["caption"]])
            ta, tb, ca, cb = a["text"], b["text"], a["color"], b["color"]
            index = [i for i in range(len(tb)) if ta[i] != tb[i] or ca[i] != cb[i]]
            if index:
                texts, colors = [tb[i] for i in index], [cb[i] for i in index]
                for i, t, c in zip(index, texts, colors, strict=True):
                    ta[i], ca[i] = t, c
                cells.append([k, index, texts, colors])
        if not captions and not cells:
            self.sent = 0
            return 0
        msg = {"type": "attn-cells", "rev": self._rev, "caption": captions, "cells": cells}
        self.send(msg)
        self.sent = len(json.dumps(msg, separators=(",", ":")))
        return self.sent

    def set_size(self, size: float) -> None:
        """The font size of the whole View in em (1 normally; presentation mode enlarges it)."""
        self.size = _check_size(size)

    def snapshot(self) -> dict:
        """A copy of what the browser shows: title, ncols, legend and per table caption, labels, texts, colours."""
        return copy.deepcopy(self._view)

    def cell_texts(self) -> list[list[str]]:
        """The cell texts of every table, row by row (flat), one list per table."""
        return [list(t["text"]) for t in self._view["tables"]]


def _check_size(size: object) -> float:
    if isinstance(size, bool) or not isinstance(size, numbers.Real) or not 0 < size < 10:
        raise ValueError(f"size must be a number of em between 0 and 10, got {size!r}")
    return float(size)
