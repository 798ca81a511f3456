"""Live heatmaps drawn by the browser and updated in place: a ``View`` becomes one small widget.

The kernel sends numbers and texts, never markup: each ``Panel`` goes out as its caption, its labels,
its cell texts (``helpers.panels.format_matrix``) and each cell's row of the colormap's table
(``helpers.panels.cell_color_index``, -1 for NaN/±inf). The table itself (256 colours and, per colour,
whether its text is white) goes once per widget. The browser (the ES module below, run by
``anywidget``, sent from the kernel: no CDN, no build step) builds each table once; after that an
update carries only the cells whose text or colour changed (and captions that changed), and the
browser sets only their text, class and background (and a colour bar's label and ticks when its scale
moved). A change of shape or labels (another number of heads, a longer cache) or of which panels share
a colour bar sends the whole View again and the browser builds it anew.

An explorer's update is one message: its ``Readout`` (the note and data-state) carries the changed
cells of all its heatmaps, or a heatmap's whole new View, named by key (each extra comm message cost
5 to 9 ms end to end on the 2-core test machine).

What the browser builds (the DOM contract of ``helpers.explorer``): a ``div.attn-view`` (its font size
in em), an optional ``div.attn-title``, one ``table.attn-hm`` per panel with a ``caption``, a header
row of ``th scope="col"`` (keys) and a ``th scope="row"`` per row (queries), ``td`` cells printing the
texts on their colour (class ``w``: white text, whichever of black and white contrasts more; class
``bad``: a hatched grey NaN/±inf cell), and the colour bars of ``helpers.panels.legends`` (each a
``div.attn-legend``, aria-hidden: the cells print their numbers): the attention weights' bar after the
last weights table; a scores or values bar (``div.attn-legend.own``) under its table, or under the
neighbours that share it, which then sit together in a ``div.attn-group``. Sizes are in em, so browser
zoom and ``helpers.presentation(True)`` scale everything crisply.

Shape notation as in ``helpers.panels``: ``R`` rows, ``C`` columns.
"""

from __future__ import annotations

import copy
import functools
import json
import numbers
import uuid

import anywidget
import traitlets

from helpers.panels import View, colormap_lut, legends, text_colors

__all__ = ["HeatmapView", "Readout", "view_payload"]

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
.attn-view .attn-group{display:flex;flex-direction:column;gap:0.3em;min-width:9em}
.attn-view .attn-group>.attn-tables{display:flex;gap:0.8em 1.2em;align-items:flex-start}
.attn-view .attn-legend.own{width:0;min-width:100%}
.attn-view .attn-legend.own .bar{width:100%;box-sizing:border-box}
.attn-view .attn-legend.own .ticks{position:relative;width:100%;height:1.3em}
.attn-view .attn-legend.own .ticks span{position:absolute;top:0;white-space:nowrap}
.attn-view .attn-title{flex-basis:100%;font-weight:bold;font-family:var(--jp-ui-font-family,sans-serif)}
"""

# The browser side. State (trait "_view"): {rev, title, ncols, legend: {label, stops, ticks, after} or null (the
# weights' bar, after table `after`), legends: [{label, stops, ticks: [[percent, text]], tables: [k]}] (a bar
# under tables k), tables: [{caption, axes, cols, rows, text: [R*C], color: [R*C]}]}; a cells message
# {type: "attn-cells", rev, caption: [[k, text]], cells: [[k, [i], [text], [color]]], legends?: [[n, label,
# ticks]]} changes cells and bars of the state with the same rev (one for a newer rev waits for that state);
# a view message {type: "attn-view", rev, view} replaces the state (a new layout), as a change of the trait would.
# Both come inside the readout's message (one message per update for the whole explorer); a cells message
# also comes on its own (a heatmap used without a readout).
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

// A colour bar: its label, the colormap from lo to hi, its ticks: at their percent of the way ([at, text], a
// scores or values bar) or spread evenly (texts, the attention weights' bar).
function fillLegend(lg, bar) {
  lg.replaceChildren(make("div", "", bar.label));
  lg.appendChild(make("div", "bar")).style.background = "linear-gradient(to right," + bar.stops.join(",") + ")";
  const ticks = lg.appendChild(make("div", "ticks"));
  for (const tick of bar.ticks) {
    if (typeof tick === "string") { ticks.appendChild(make("span", "", tick)); continue; }
    const [at, text] = tick;
    const span = ticks.appendChild(make("span", "", text));
    span.style.left = at + "%";
    span.style.transform = "translateX(-" + at + "%)";  // the end ticks stay inside the bar
  }
}

function build(state, lut, size) {
  const view = make("div", "attn-view");
  view.style.fontSize = size + "em";
  if (state.title) view.appendChild(make("div", "attn-title", state.title));
  const first = new Map((state.legends || []).map((bar, n) => [bar.tables[0], n]));
  const legends = [];
  let box = view, open = null;
  const tables = (state.tables || []).map((t, k) => {
    if (state.ncols && k && k % state.ncols === 0) {
      const br = make("div");
      br.style.cssText = "flex-basis:100%;height:0";  // a new row of panels
      view.appendChild(br);
    }
    if (first.has(k)) {  // a bar under this table (and the neighbours that share it)
      open = state.legends[first.get(k)];
      const group = view.appendChild(make("div", "attn-group"));
      box = group.appendChild(make("div", "attn-tables"));
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
    box.appendChild(table);
    if (open && open.tables[open.tables.length - 1] === k) {
      const lg = box.parentNode.appendChild(make("div", "attn-legend own"));
      lg.setAttribute("aria-hidden", "true");
      fillLegend(lg, open);
      legends.push(lg);
      box = view;
      open = null;
    }
    if (state.legend && state.legend.after === k) {
      const lg = view.appendChild(make("div", "attn-legend"));
      lg.setAttribute("aria-hidden", "true");
      fillLegend(lg, state.legend);
    }
    return {caption, cells};
  });
  return {view, tables, legends};
}

// Change the cells of a state (the model's, so a view opened later starts from it).
function patchState(state, msg) {
  for (const [k, text] of msg.caption) state.tables[k].caption = text;
  for (const [n, label, ticks] of msg.legends ?? []) Object.assign(state.legends[n], {label, ticks});
  for (const [k, index, texts, colors] of msg.cells) {
    const t = state.tables[k];
    for (let n = 0; n < index.length; n++) { t.text[index[n]] = texts[n]; t.color[index[n]] = colors[n]; }
  }
}

// Change the cells of one view on the page: only those the message names, only what differs.
function patchView(shown, msg, lut, state) {
  for (const [k, text] of msg.caption) {
    const caption = shown.tables[k].caption;
    if (caption.textContent !== text) caption.textContent = text;
  }
  for (const [k, index, texts, colors] of msg.cells) {
    const cells = shown.tables[k].cells;
    for (let n = 0; n < index.length; n++) paint(cells[index[n]], texts[n], colors[n], lut);
  }
  for (const [n] of msg.legends ?? []) fillLegend(shown.legends[n], state.legends[n]);  // patched just before
}

// Every heatmap model of the page by its key, so that one message (the readout's) can update them all.
const live = (globalThis.__attnLive ??= {models: new Map(), waiting: new Map()});

function initialize({ model }) {
  const key = model.get("_key");
  const entry = {model, views: new Set(), pending: []};
  entry.deliver = (msg) => {
    const state = model.get("_view");
    if (msg.type === "attn-view") {
      if (msg.rev > state.rev) model.set("_view", msg.view);  // kept here, not sent back: the kernel has it
      return;
    }
    if (msg.rev === state.rev) {
      patchState(state, msg);
      for (const view of entry.views) view(msg);
    } else if (msg.rev > state.rev) entry.pending.push(msg);  // for a View that has not arrived yet
  };
  live.models.set(key, entry);
  for (const msg of live.waiting.get(key) ?? []) entry.deliver(msg);
  live.waiting.delete(key);
  const onView = () => {  // a new View: the messages that waited for it (before the views redraw)
    const state = model.get("_view");
    for (const msg of entry.pending) if (msg.rev === state.rev) patchState(state, msg);
    entry.pending = entry.pending.filter((msg) => msg.rev > state.rev);
  };
  const onMessage = (msg) => { if (msg && msg.type === "attn-cells") entry.deliver(msg); };
  model.on("change:_view", onView);
  model.on("msg:custom", onMessage);
  return () => {
    live.models.delete(key);
    model.off("change:_view", onView);
    model.off("msg:custom", onMessage);
  };
}

function render({ model, el }) {
  const lut = model.get("_lut");
  let shown = null;
  const draw = () => {
    shown = build(model.get("_view"), lut, model.get("size"));
    el.replaceChildren(shown.view);
  };
  const onPatch = (msg) => patchView(shown, msg, lut, model.get("_view"));
  const onSize = () => { shown.view.style.fontSize = model.get("size") + "em"; };
  draw();
  const entry = live.models.get(model.get("_key"));
  entry?.views.add(onPatch);
  model.on("change:_view", draw);
  model.on("change:size", onSize);
  return () => {
    entry?.views.delete(onPatch);
    model.off("change:_view", draw);
    model.off("change:size", onSize);
  };
}

export default { initialize, render };
"""

# The readout: a short note and the data-state element (HTML from the kernel, as ipywidgets.HTML shows it).
# Its message {type: "attn-update", value?, views: {key: cells or view message}} is the one message of an
# update: the readout's new HTML and the changed cells (or new View) of every heatmap of the explorer.
_READOUT_ESM = r"""
const live = (globalThis.__attnLive ??= {models: new Map(), waiting: new Map()});

function initialize({ model }) {
  const onMessage = (msg) => {
    if (!msg || msg.type !== "attn-update") return;
    for (const [key, cells] of Object.entries(msg.views)) {
      const entry = live.models.get(key);
      if (entry) entry.deliver(cells);
      else live.waiting.set(key, [...(live.waiting.get(key) ?? []), cells]);  // its model is still loading
    }
    if (msg.value !== undefined) model.set("value", msg.value);  // as the kernel has it: no message back
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

function render({ model, el }) {
  const box = document.createElement("div");
  el.appendChild(box);
  const show = () => { box.innerHTML = model.get("value"); };
  show();
  model.on("change:value", show);
  return () => model.off("change:value", show);
}

export default { initialize, render };
"""


@functools.cache
def _lut_payload() -> dict:
    """The colormap's table as CSS colours, and per colour whether its text is white (sent once per widget)."""
    rgba = colormap_lut()  # (N, 4) uint8
    bg = [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgba[:, :3].tolist()]
    white = (text_colors(rgba / 255.0) == "white").astype(int).tolist()  # (N,) 1 = white text
    return {"bg": bg, "white": white}


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
    legend, bars = None, []
    bg = _lut_payload()["bg"]
    for lg in legends(view):  # helpers.panels.legends: the same bars draw_view draws
        stops = [bg[i] for i in lg.stops()]  # 11 CSS colours: the colormap from lo to hi
        if lg.kind == "weights":  # 0..1, its ticks spread evenly; after the last weights table
            legend = {"label": lg.label, "stops": stops, "ticks": [t for _, t in lg.ticks], "after": lg.panels[-1]}
            continue
        span = lg.hi - lg.lo
        bars.append({"label": lg.label, "stops": stops,
                     "ticks": [[round(100 * (v - lg.lo) / span), text] for v, text in lg.ticks],  # [percent, text]
                     "tables": list(lg.panels)})
    return {"title": view.title, "ncols": view.ncols, "legend": legend, "legends": bars, "tables": tables}


def _layout(payload: dict) -> tuple:
    """Everything but the cells, captions and a bar's label and ticks: when it changes, the browser builds anew."""
    after = None if payload["legend"] is None else payload["legend"]["after"]
    return (payload["title"], payload["ncols"], after, tuple(tuple(b["tables"]) for b in payload["legends"]),
            tuple((t["axes"], tuple(t["cols"]), tuple(t["rows"])) for t in payload["tables"]))


class HeatmapView(anywidget.AnyWidget):
    """One live ``View`` (tables of coloured, numbered cells); ``.show(view)`` sends what changed.

    After a change of layout the whole View goes out; else only the changed cells and captions (and
    the label and ticks of a colour bar whose scale moved), as a cells message. ``show`` sends it
    itself (a new View as a change of the synced trait), or returns it (``send=False``: a view or
    cells message) for ``Readout.update`` to carry with the explorer's other changes in one message.
    ``.sent`` is the size in bytes (JSON) of that View or cells message (0 if nothing changed).
    ``.snapshot()`` is a copy of what the browser shows (the state a new browser view starts from).
    """

    _esm = _ESM
    _css = _CSS
    _lut = traitlets.Dict().tag(sync=True)
    _view = traitlets.Dict().tag(sync=True)
    _key = traitlets.Unicode().tag(sync=True)  # how the readout's message names this widget in the page
    size = traitlets.Float(1.0).tag(sync=True)

    def __init__(self, view: View | None = None, *, size: float = 1.0) -> None:
        self._rev, self._shape, self.sent = 0, None, 0
        payload = {"rev": 0, "tables": []}
        if view is not None:  # the first View goes with the widget itself: one message, not two
            payload = view_payload(view)
            self._rev, self._shape = 1, _layout(payload)
            payload["rev"] = 1
        super().__init__(_lut=_lut_payload(), _view=payload, _key=uuid.uuid4().hex, size=_check_size(size))
        self.add_class("attn-heatmap")

    def show(self, view: View, *, send: bool = True) -> dict | None:
        """Draw ``view``: the whole View after a change of layout, else its changed cells and captions.

        With ``send=True`` sends it and returns the cells message (None for a whole View or no change);
        with ``send=False`` returns the view or cells message (None: no change) for the caller
        (``Readout.update``) to send."""
        new = view_payload(view)
        layout = _layout(new)
        if layout != self._shape:  # a new layout: the whole View
            self._rev += 1
            self._shape = layout
            new["rev"] = self._rev
            self.sent = len(json.dumps(new, separators=(",", ":")))
            if send:  # through the synced trait
                self._view = new
                return None
            with self._lock_property(_view=new):  # the caller's message carries it: no separate sync
                self._view = new
            return {"type": "attn-view", "rev": self._rev, "view": new}
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
        bars = []
        for n, (a, b) in enumerate(zip(old["legends"], new["legends"], strict=True)):
            if (a["label"], a["ticks"]) != (b["label"], b["ticks"]):  # the scale moved (an auto-scaled panel)
                a["label"], a["ticks"] = b["label"], b["ticks"]
                bars.append([n, b["label"], b["ticks"]])
        if not captions and not cells and not bars:
            self.sent = 0
            return None
        msg = {"type": "attn-cells", "rev": self._rev, "caption": captions, "cells": cells}
        if bars:
            msg["legends"] = bars
        if send:
            self.send(msg)
        self.sent = len(json.dumps(msg, separators=(",", ":")))
        return msg

    def set_size(self, size: float) -> None:
        """The font size of the whole View in em (1 normally; presentation mode enlarges it)."""
        self.size = _check_size(size)

    def snapshot(self) -> dict:
        """A copy of what the browser shows: title, ncols, colour bars and per table caption, labels, texts, colours."""
        return copy.deepcopy(self._view)

    def cell_texts(self) -> list[list[str]]:
        """The cell texts of every table, row by row (flat), one list per table."""
        return [list(t["text"]) for t in self._view["tables"]]


class Readout(anywidget.AnyWidget):
    """The explorer's readout: ``.value`` is HTML (a short note and the data-state element).

    ``.update(value, cells)`` sends ONE message for a whole update: the new HTML and the view or cells
    messages of the explorer's heatmaps (by their keys), so a slider move costs the browser one
    message, as a bare widget's does. Setting ``.value`` directly (a refusal) syncs it as usual.
    ``.sent`` is the size in bytes (JSON) of the last update's message.
    """

    _esm = _READOUT_ESM
    value = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.sent = 0

    def update(self, value: str, cells: dict[HeatmapView, dict | None] | None = None) -> int:
        """Show ``value`` and the heatmaps' view or cells messages in the browser, in one message; returns ``.sent``."""
        if not isinstance(value, str):
            raise TypeError(f"value must be an HTML string, got {type(value).__name__}")
        if cells is not None and (not isinstance(cells, dict) or not all(isinstance(v, HeatmapView) for v in cells)):
            raise TypeError("cells must be a dict from each HeatmapView to what its show(view, send=False) "
                            f"returned, got {type(cells).__name__}")
        views = {v._key: m for v, m in (cells or {}).items() if m is not None}
        if not views:  # no heatmap changed: the usual sync of the value
            self.sent = len(json.dumps(value)) if value != self.value else 0
            self.value = value
            return self.sent
        msg = {"type": "attn-update", "views": views}
        if value != self.value:
            msg["value"] = value
            with self._lock_property(value=value):  # the message below carries it: no separate sync
                self.value = value
        self.send(msg)
        self.sent = len(json.dumps(msg, separators=(",", ":")))
        return self.sent


def _check_size(size: object) -> float:
    if isinstance(size, bool) or not isinstance(size, numbers.Real) or not 0 < size < 10:
        raise ValueError(f"size must be a number of em between 0 and 10, got {size!r}")
    return float(size)
