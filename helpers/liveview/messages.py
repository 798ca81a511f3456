"""What the live heatmaps send the browser, written once: the message types, the payload, the patch.

The same types are written as JSDoc ``@typedef`` at the top of ``heatmap.js`` (and ``readout.js``) beside
this file: change both together. Everything here is plain data (JSON types: dicts, lists, str, int,
None), so a message is what ``json.dumps`` makes of it.

- ``view_payload(view)``: a ``helpers.panels.View`` as the browser draws it (a ``ViewPayload``).
- ``patch(state, new)``: the message that turns what the browser shows (a ``ViewState``) into ``new``:
  a ``ViewMessage`` after a change of layout, else a ``CellsMessage`` with only what changed, or None.
- ``apply(state, message)``: the state after a message, as the browser's ``deliver`` and ``patchState``
  (``heatmap.js``) make it. ``HeatmapView.show`` (``helpers.liveview``) calls both; the tests replay the
  recorded messages with ``apply``.

Shape notation as in ``helpers.panels``: ``R`` rows, ``C`` columns; ``N`` colours in the colormap's table.
"""

from __future__ import annotations

import functools
from typing import Literal, NotRequired, TypedDict

from helpers.panels import View, color_bars, colormap_lut, text_colors

__all__ = ["Lut", "WeightsColorBar", "OwnColorBar", "Table", "ViewPayload", "ViewState", "CellsMessage", "ViewMessage",
           "ReadoutMessage", "lut_payload", "view_payload", "layout", "patch", "apply"]


class Lut(TypedDict):
    """The colormap's table (trait ``_lut``, sent once per widget): per row its CSS colour and text colour."""

    bg: list[str]  # (N,) "#rrggbb"
    white: list[int]  # (N,) 1 = white text on this colour (whichever of black and white contrasts more)


class WeightsColorBar(TypedDict):
    """The attention weights' colour bar (0..1), drawn after table ``after``."""

    label: str
    stops: list[str]  # (11,) CSS colours: the colormap from 0 to 1
    ticks: list[str]  # texts, spread evenly
    after: int


class OwnColorBar(TypedDict):
    """A scores or values colour bar, drawn under tables ``tables`` (neighbours that share it)."""

    label: str
    stops: list[str]  # (11,) CSS colours: the colormap from lo to hi
    ticks: list[list]  # [[percent of the way from lo to hi (int), text], ...]
    tables: list[int]


class Table(TypedDict):
    """One panel: its caption, axis names, labels, and per cell its text and row of the colormap's table."""

    caption: str
    axes: str  # "queries ↓ keys →"
    cols: list[str]  # (C,)
    rows: list[str]  # (R,)
    text: list[str]  # (R*C,) row by row
    color: list[int]  # (R*C,) rows of the Lut, -1 = NaN/±inf (a hatched grey cell)
    # (R*C,) 1 = an outlined cell (Panel.marked: differs from the reference); only if marked
    mark: NotRequired[list[int]]


class ViewPayload(TypedDict):
    """What ``view_payload`` returns: a whole View."""

    title: str
    ncols: int | None  # panels per row (None: as many as fit)
    weights_color_bar: WeightsColorBar | None
    color_bars: list[OwnColorBar]
    tables: list[Table]


class ViewState(ViewPayload, total=False):
    """Trait ``_view`` (what a browser view opened now starts from): a ViewPayload and its number ``rev``.

    ``rev`` counts the layouts (1, 2, ...); before the first View the state is only ``{"rev": 0, "tables": []}``."""

    rev: int


class _CellsRequired(TypedDict):
    type: Literal["attn-cells"]
    rev: int  # the ViewState it changes (a newer one waits in the browser for that View)
    caption: list[list]  # [[k, text], ...]: table k's new caption
    cells: list[list]  # [[k, [i], [text], [color]], ...]: table k's cells i (flat, row by row), their texts and colours
    # (and [mark] as a fifth item for a table with marks)


class CellsMessage(_CellsRequired, total=False):
    """The changes of one View shown: captions, cells, token labels of the same number, and the label and ticks of
    colour bars whose scale moved."""

    color_bars: list[list]  # [[n, label, ticks], ...]: scores or values bar n (ticks as in OwnColorBar)
    labels: list[list]  # [[k, cols, rows], ...]: table k's new column and row labels (as many as before)
    title: str  # the View's new title (it had one and keeps one)


class ViewMessage(TypedDict):
    """A whole new View (a new layout), as a change of the trait ``_view`` would bring it."""

    type: Literal["attn-view"]
    rev: int  # == view["rev"], one more than the state's
    view: ViewState


class _ReadoutRequired(TypedDict):
    type: Literal["attn-update"]
    views: dict[str, CellsMessage | ViewMessage]  # by the heatmap's trait ``_key``


class ReadoutMessage(_ReadoutRequired, total=False):
    """The ONE message of an explorer's update (a custom message of its ``Readout``): all heatmaps' changes."""

    value: str  # the readout's new HTML, when it changed


@functools.cache
@functools.cache
def _lut() -> tuple[tuple[str, ...], tuple[int, ...]]:
    rgba = colormap_lut()  # (N, 4) uint8
    bg = tuple(f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgba[:, :3].tolist())
    white = tuple((text_colors(rgba / 255.0) == "white").astype(int).tolist())  # (N,) 1 = white text
    return bg, white


def lut_payload() -> Lut:
    """The colormap's table as CSS colours, and per colour whether its text is white (sent once per widget)."""
    bg, white = _lut()  # worked out once per kernel (half a millisecond: not on every update)
    return {"bg": list(bg), "white": list(white)}


def view_payload(view: View) -> ViewPayload:
    """What the browser needs to draw ``view``: per panel its caption, labels, cell texts and colour rows."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a helpers.panels.View, got {type(view).__name__}")
    tables = []
    for p in view.panels:
        axes = " ".join(t for t in (f"{p.ylabel} ↓" if p.ylabel else "", f"{p.xlabel} →" if p.xlabel else "") if t)
        table = {"caption": p.title, "axes": axes, "cols": list(p.col_labels), "rows": list(p.row_labels),
                 "text": [t for row in p.texts() for t in row],  # (R*C,) row by row
                 "color": p.color_index().ravel().tolist()}  # (R*C,) rows of colormap_lut(), -1 = NaN/inf
        if p.marked is not None:
            table["mark"] = p.marked.ravel().astype(int).tolist()  # (R*C,) 1 = outlined
        tables.append(table)
    weights_bar, bars = None, []
    bg = _lut()[0]
    for bar in color_bars(view):  # helpers.panels.color_bars: the same bars draw_view draws
        stops = [bg[i] for i in bar.stops()]  # 11 CSS colours: the colormap from lo to hi
        if bar.kind == "weights":  # 0..1, its ticks spread evenly; after the last weights table
            weights_bar = {"label": bar.label, "stops": stops, "ticks": [t for _, t in bar.ticks],
                           "after": bar.panels[-1]}
            continue
        span = bar.hi - bar.lo
        bars.append({"label": bar.label, "stops": stops,
                     "ticks": [[round(100 * (v - bar.lo) / span), text] for v, text in bar.ticks],  # [percent, text]
                     "tables": list(bar.panels)})
    return {"title": view.title, "ncols": view.ncols, "weights_color_bar": weights_bar, "color_bars": bars,
            "tables": tables}


def layout(state: ViewPayload | ViewState) -> tuple | None:
    """Everything but the cells, captions, labels (their number is layout), the title's text (whether there is one
    is layout) and a bar's label and ticks: when it changes, the browser builds anew.

    None for the state before the first View."""
    if "title" not in state:
        return None
    after = None if state["weights_color_bar"] is None else state["weights_color_bar"]["after"]
    return (bool(state["title"]), state["ncols"], after, tuple(tuple(b["tables"]) for b in state["color_bars"]),
            tuple((t["axes"], len(t["cols"]), len(t["rows"]), "mark" in t) for t in state["tables"]))


def patch(state: ViewState, new: ViewPayload) -> CellsMessage | ViewMessage | None:
    """The message that turns ``state`` (what the browser shows) into ``new``; None if nothing shown changed.

    After a change of layout the whole View (numbered one more); else only the changed captions, labels and cells
    and the label and ticks of a colour bar whose scale moved (a window of keys that slides by one: new labels and
    cells in the same tables). Changes neither argument."""
    rev = state["rev"]
    if layout(new) != layout(state):
        return {"type": "attn-view", "rev": rev + 1, "view": {**new, "rev": rev + 1}}
    captions, cells, labels = [], [], []
    for k, (a, b) in enumerate(zip(state["tables"], new["tables"], strict=True)):
        if a["caption"] != b["caption"]:
            captions.append([k, b["caption"]])
        if a["cols"] != b["cols"] or a["rows"] != b["rows"]:
            labels.append([k, b["cols"], b["rows"]])
        ta, tb, ca, cb = a["text"], b["text"], a["color"], b["color"]
        if "mark" in b:  # a table with outlined cells (the same layout: "mark" in a too)
            ma, mb = a["mark"], b["mark"]
            index = [i for i in range(len(tb)) if ta[i] != tb[i] or ca[i] != cb[i] or ma[i] != mb[i]]
            if index:
                cells.append([k, index, [tb[i] for i in index], [cb[i] for i in index], [mb[i] for i in index]])
            continue
        index = [i for i in range(len(tb)) if ta[i] != tb[i] or ca[i] != cb[i]]
        if index:
            cells.append([k, index, [tb[i] for i in index], [cb[i] for i in index]])
    bars = [[n, b["label"], b["ticks"]] for n, (a,
                                                b) in enumerate(zip(state["color_bars"], new["color_bars"],
                                                                    strict=True))
            if (a["label"], a["ticks"]) != (b["label"], b["ticks"])]  # the scale moved (an auto-scaled panel)
    title = new["title"] if new["title"] != state["title"] else None
    if not captions and not cells and not bars and not labels and title is None:
        return None
    msg: CellsMessage = {"type": "attn-cells", "rev": rev, "caption": captions, "cells": cells}
    if bars:
        msg["color_bars"] = bars
    if labels:
        msg["labels"] = labels
    if title is not None:
        msg["title"] = title
    return msg


def apply(state: ViewState, message: CellsMessage | ViewMessage) -> ViewState:
    """The state after ``message``, as the browser makes it (``deliver`` and ``patchState`` in heatmap.js).

    A view message's View replaces ``state`` (returned as is); a cells message changes ``state`` in place
    (returned). A message the browser would not apply now (an older View, cells of another View) is a
    ValueError: ``patch`` never makes one."""
    kind = message.get("type") if isinstance(message, dict) else None
    if kind == "attn-view":
        if not message["rev"] == message["view"]["rev"] > state["rev"]:
            raise ValueError(f"a View numbered {message['rev']} (view {message['view']['rev']}) cannot replace "
                             f"View {state['rev']}: only a newer one can")
        return message["view"]
    if kind != "attn-cells":
        raise ValueError(f"message must be an attn-view or attn-cells message, got type {kind!r}")
    if message["rev"] != state["rev"]:
        raise ValueError(f"cells for View {message['rev']} cannot change View {state['rev']}")
    tables = state["tables"]
    for k, text in message["caption"]:
        tables[k]["caption"] = text
    for k, index, texts, colors, *marks in message["cells"]:
        ta, ca = tables[k]["text"], tables[k]["color"]
        for i, t, c in zip(index, texts, colors, strict=True):
            ta[i], ca[i] = t, c
        if marks:  # a table with outlined cells
            for i, m in zip(index, marks[0], strict=True):
                tables[k]["mark"][i] = m
    for n, label, ticks in message.get("color_bars", []):  # a colour bar whose scale moved
        state["color_bars"][n]["label"], state["color_bars"][n]["ticks"] = label, ticks
    for k, cols, rows in message.get("labels", []):  # the same number of labels (else the message is a View)
        if (len(cols), len(rows)) != (len(tables[k]["cols"]), len(tables[k]["rows"])):
            raise ValueError(f"labels of table {k}: {len(cols)} columns and {len(rows)} rows cannot replace "
                             f"{len(tables[k]['cols'])} and {len(tables[k]['rows'])} (a new shape is a new View)")
        tables[k]["cols"], tables[k]["rows"] = list(cols), list(rows)
    if "title" in message:
        if not message["title"] or not state["title"]:
            raise ValueError("a title cannot come or go in a cells message (whether there is one is layout)")
        state["title"] = message["title"]
    return state
