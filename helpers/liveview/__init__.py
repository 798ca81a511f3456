"""Live heatmaps drawn by the browser and updated in place: a ``View`` becomes one small widget.

The kernel sends numbers and texts, never markup: each ``Panel`` goes out as its caption, its labels,
its cell texts (``helpers.panels.format_matrix``) and each cell's row of the colormap's table
(``helpers.panels.cell_color_index``, -1 for NaN/±inf). The table itself (256 colours and, per colour,
whether its text is white) goes once per widget. The browser (the ES module ``heatmap.js`` beside this file,
run by ``anywidget``, sent from the kernel: no CDN, no build step) builds each table once; after that an
update carries only the cells whose text or colour changed (and the captions, labels and title that changed),
and the browser sets only their text, class and background (and a header's or the title's text, and a colour
bar's label and ticks when its scale moved). A change of shape (another number of heads, a longer cache) or
of which panels share a colour bar sends the whole View again and the browser builds it anew; new labels on a
table of the same shape (a window of keys that slides by one) or a new title do not.

An explorer's update is one message: its ``Readout`` (the note and data-state) carries the changed
cells of all its heatmaps, or a heatmap's whole new View, named by key (each extra comm message cost
5 to 9 ms end to end on the 2-core test machine).

What the browser builds (the DOM contract of ``helpers.explorer``): a ``div.attn-view`` (its font size
in em), an optional ``div.attn-title``, one ``table.attn-hm`` per panel with a ``caption``, a header
row of ``th scope="col"`` (keys) and a ``th scope="row"`` per row (queries), ``td`` cells printing the
texts on their colour (class ``w``: white text, whichever of black and white contrasts more; class
``bad``: a hatched grey NaN/±inf cell; class ``m`` and the title "differs from the reference": a cell outlined by a
white and a black ring, ``Panel.marked``), and the colour bars of ``helpers.panels.color_bars`` (each a
``div.attn-legend``, aria-hidden: the cells print their numbers): the attention weights' bar after the
last weights table; a scores or values bar (``div.attn-legend.own``) under its table, or under the
neighbours that share it, which then sit together in a ``div.attn-group``. Sizes are in em, so browser
zoom and ``helpers.presentation(True)`` scale everything crisply.

The messages (their types, the payload of a View, the patch from one View to the next) are written once,
in ``helpers.liveview.messages`` (and as JSDoc in ``heatmap.js``); the styles are ``liveview.css``.

A new lesson's explorer needs nothing here: it returns Views (``helpers.panels``) and the live view draws them.

Shape notation as in ``helpers.panels``: ``R`` rows, ``C`` columns.
"""

from __future__ import annotations

import copy
import json
import pathlib
import uuid

import anywidget
import ipywidgets
import traitlets

from helpers.liveview.messages import (
    CellsMessage,
    ReadoutMessage,
    ViewMessage,
    apply,
    lut_payload,
    patch,
    view_payload,
)
from helpers.panels import View
from helpers.validate import check_real

__all__ = ["HeatmapView", "Readout", "view_payload", "set_unsynced", "HEATMAP_JS", "READOUT_JS", "LIVEVIEW_CSS"]

_HERE = pathlib.Path(__file__).parent
HEATMAP_JS = _HERE / "heatmap.js"  # the heatmap's ES module: builds the tables, applies the messages
READOUT_JS = _HERE / "readout.js"  # the readout's ES module: hands the heatmaps their part of its message
LIVEVIEW_CSS = _HERE / "liveview.css"  # the heatmaps' styles (sizes in em)


def _json_types(value: object) -> object:
    """``value`` as JSON gives it back (lists for tuples), or ``value`` itself when that is equal."""
    if isinstance(value, (str, bool, int)) or value is None:
        return value  # JSON types already (a readout's HTML of 50 KB need not go through JSON and back)
    back = json.loads(json.dumps(value))
    return value if back == value else back


def set_unsynced(widget: ipywidgets.Widget, **values: object) -> dict:
    """Set synced traits of ``widget`` without the update message ipywidgets would send; returns the values set.

    For a caller whose own message (``Readout.update``'s) carries the new values to the browser."""
    # ipywidgets has no public way to do this. Its private Widget._lock_property(**state) is how it keeps a
    # change that came from the browser from being echoed back: while the lock is held, setting a trait sends
    # nothing when the JSON round trip of the trait's new value equals the locked value. It compares with the
    # locked value as given, so a tuple (a list after the round trip) never matches and the whole value goes out
    # after all, in a second, full update. So the values are made JSON types first, and the same objects are
    # locked and set. Its only use in helpers/; tests/test_live.py counts the messages it lets through: none.
    values = {name: _json_types(v) for name, v in values.items()}
    with widget._lock_property(**values):
        for name, v in values.items():
            setattr(widget, name, v)
    return values


class HeatmapView(anywidget.AnyWidget):
    """One live ``View`` (tables of coloured, numbered cells); ``.show(view)`` sends what changed.

    After a change of layout the whole View goes out; else only the changed cells and captions (and
    the label and ticks of a colour bar whose scale moved), as a cells message. ``show`` sends it
    itself (a new View as a change of the synced trait), or returns it (``send=False``: a view or
    cells message) for ``Readout.update`` to carry with the explorer's other changes in one message.
    ``.sent`` is the size in bytes (JSON) of that View or cells message (0 if nothing changed), counted when read
    (benchmarks and tests read it; an update does not pay for a second serialization).
    ``.snapshot()`` is a copy of what the browser shows (the state a new browser view starts from).
    """

    _esm = HEATMAP_JS
    _css = LIVEVIEW_CSS
    _lut = traitlets.Dict().tag(sync=True)
    _view = traitlets.Dict().tag(sync=True)
    _key = traitlets.Unicode().tag(sync=True)  # how the readout's message names this widget in the page
    size = traitlets.Float(1.0).tag(sync=True)

    def __init__(self, view: View | None = None, *, size: float = 1.0) -> None:
        self._last: object = None  # the last View or cells message, for .sent
        payload = {"rev": 0, "tables": []}
        if view is not None:  # the first View goes with the widget itself: one message, not two
            payload = {**view_payload(view), "rev": 1}
        super().__init__(_lut=lut_payload(), _view=payload, _key=uuid.uuid4().hex, size=_check_size(size))
        self.add_class("attn-heatmap")

    def show(self, view: View, *, send: bool = True) -> CellsMessage | ViewMessage | None:
        """Draw ``view``: the whole View after a change of layout, else its changed cells and captions.

        With ``send=True`` sends it and returns the cells message (None for a whole View or no change);
        with ``send=False`` returns the view or cells message (None: no change) for the caller
        (``Readout.update``) to send."""
        msg = patch(self._view, view_payload(view))  # helpers.liveview.messages: what changed, or None
        self._last = msg if msg is None or msg["type"] != "attn-view" else msg["view"]
        if msg is None:
            return None
        if msg["type"] == "attn-view":  # a new layout: the whole View
            if send:  # through the synced trait
                self._view = msg["view"]
                return None
            msg["view"] = set_unsynced(self, _view=msg["view"])["_view"]  # the caller's message carries it
            return msg
        apply(self._view, msg)  # in place: a browser view opened later gets the current cells
        if send:
            self.send(msg)
        return msg

    @property
    def sent(self) -> int:
        """The size in bytes (JSON) of the last View or cells message ``show`` made (0: nothing changed)."""
        return _size(self._last)

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
    """The explorer's readout: ``.value`` is HTML (a short note, the text to announce and the data-state element).

    In the page it is also the explorer's voice for assistive technology (``readout.js``): it gives each control
    of the explorer its accessible name (``names``) and each on/off cell its pressed state, and after a change
    announces the ``div.attn-say`` text of ``value`` in a polite live region, once the controls have been
    still for a moment (a dragged slider is announced once, where it stops).

    ``.update(value, cells)`` sends ONE message for a whole update: the new HTML and the view or cells
    messages of the explorer's heatmaps (by their keys), so a slider move costs the browser one
    message, as a bare widget's does. Setting ``.value`` directly (a refusal) syncs it as usual.
    ``.sent`` is the size in bytes (JSON) of the last update's message, counted when read.
    """

    _esm = READOUT_JS
    _css = LIVEVIEW_CSS  # the mark of an on/off cell, the hidden live region
    value = traitlets.Unicode("").tag(sync=True)
    # what a screen reader says for each control of the explorer, by class suffix: ``attn-slider--<key>`` names its
    # slider handle, ``attn-toggle--<key>`` its button (which also gets aria-pressed); sent once, applied in the page
    names = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._last: object = None  # the last update's message (or the value synced alone), for .sent

    def update(self, value: str, cells: dict[HeatmapView, CellsMessage | ViewMessage | None] | None = None) -> None:
        """Show ``value`` and the heatmaps' view or cells messages in the browser, in one message."""
        if not isinstance(value, str):
            raise TypeError(f"value must be an HTML string, got {type(value).__name__}")
        if cells is not None and (not isinstance(cells, dict) or not all(isinstance(v, HeatmapView) for v in cells)):
            raise TypeError("cells must be a dict from each HeatmapView to what its show(view, send=False) "
                            f"returned, got {type(cells).__name__}")
        views = {v._key: m for v, m in (cells or {}).items() if m is not None}
        if not views:  # no heatmap changed: the usual sync of the value
            self._last = value if value != self.value else None
            self.value = value
            return
        msg: ReadoutMessage = {"type": "attn-update", "views": views}
        if value != self.value:
            msg["value"] = value
            set_unsynced(self, value=value)  # the message below carries it: no separate sync
        self.send(msg)
        self._last = msg

    @property
    def sent(self) -> int:
        """The size in bytes (JSON) of the last update's message (0: nothing changed)."""
        return _size(self._last)


def _size(message: object) -> int:
    """The bytes of ``message`` as compact JSON; 0 for None (nothing sent)."""
    return 0 if message is None else len(json.dumps(message, separators=(",", ":")))


def _check_size(size: object) -> float:
    what = "a number of em between 0 and 10"
    return check_real(size, "size", low=0.0, high=10.0, kind=what, rule=what)
