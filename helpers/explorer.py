"""The ``Explorer`` base class: declared controls, one pure function to what is shown, live views updated cell by cell.

Writing an explorer takes a kind, a list of controls, and ``show``, a pure function from the
controls' values to a ``Shown`` (the views to draw and the numbers behind them). The smallest one,
the whole of it (it is ``helpers.explorers.WidgetCheck``)::

    class WidgetCheck(Explorer):
        '''00: one slider moves the score of key 2; the two attention weights softmax([0, s]) follow.'''

        kind = "widget-check"
        about = "a slider moves a score; the heatmap shows softmax([0, s])"

        def __init__(self) -> None:
            super().__init__(score=scalar_slider("score", 0.0, min=-4, max=4, step=0.1,
                                                 description="score of key 2"))

        def show(self, score: float) -> Shown:
            w = softmax(np.array([[0.0, score]]))  # (1, 2)
            panel = Panel(w, "softmax([0, s])", row_labels=["q"], col_labels=["key 1", "key 2"])
            return Shown(View([panel]), inputs={"scores": [[0.0, score]]}, weights=w)

The base class builds the widgets once, calls ``show`` after every change, and hands each View to a
``helpers.liveview.HeatmapView``, which sends the browser only the cells that changed (numbers as
texts and colour indices, no markup); ``.figures`` draws the same Views with matplotlib
(``helpers.plots.draw_view``) for the static figure after each live cell. When ``show``
refuses its input (a ``ValueError`` or ``TypeError``, e.g. a query row with every key masked), the
readout says so in words and the views keep the last good state: never a traceback.

DOM contract (the browser tests in ``tests/ui`` rely on it; controls: see ``helpers.controls``):

* the root widget has ``attn-explorer`` and ``attn-explorer--<kind>``;
* each View is a ``helpers.liveview.HeatmapView`` widget with class ``attn-heatmap``; in the browser it
  holds a ``div.attn-view`` (font size in em) with one ``table.attn-hm`` per panel (a ``caption``,
  ``th`` headers with ``scope``); its ``td`` cells print the values as ``helpers.panels.format_matrix``
  does. Colour bars (``helpers.panels.color_bars``, ``div.attn-legend``, aria-hidden) follow the tables:
  the attention weights' one bar after the last weights table; a scores or values bar
  (``div.attn-legend.own``) under its table, or under the neighbours that share it, which then sit
  together in a ``div.attn-group`` (so a table is not always a child of ``div.attn-view``). An update
  changes the text, class and background of the changed cells in place, the header cells' texts when
  the labels changed, and a bar's label and ticks when its scale moved: the tables and cells stay the
  same DOM nodes while the layout (shapes, which panels share a bar) stays the same;
* the readout is a ``helpers.liveview.Readout`` (``.value`` is HTML, as an ``ipywidgets.HTML``'s) with
  class ``attn-readout``; its message also carries the heatmaps' changed cells (or a heatmap's whole
  new View), so an update is one message to the browser; it shows a short note, and exactly one
  element with ``data-state``, whose JSON is ``{"kind", "inputs", "weights", "output", ...}`` (every
  control value and parameter needed to recompute the panels with ``helpers``; NaN and ±inf are the
  strings "nan", "inf", "-inf"), or ``{"kind", "inputs", "error"}`` after a refusal;
* accessibility (issue 29): the readout also holds a hidden ``div.attn-say``, the main View in words
  (``helpers.panels.describe_view``), which its ``div.attn-live`` (role status, polite) announces once the
  controls have been still for a moment; its ``names`` (from ``MatrixSliders.names``,
  ``MatrixToggles.names`` and each single slider's description) name every slider handle and on/off cell
  in the page, and each on/off cell has ``aria-pressed``.

``presentation(True)`` enlarges the views of every explorer (for a projector); ``presentation(False)``
goes back.
"""

from __future__ import annotations

import html
import json
import math
import numbers
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import ipywidgets as W
import numpy as np

from helpers import presentation, presenting  # presentation mode: one switch for the package
from helpers.liveview import HeatmapView, Readout
from helpers.panels import PRESENT_WIDTH_PX, Panel, View, describe_view
from helpers.validate import check_choice, check_flag

if TYPE_CHECKING:  # for the annotations only
    from matplotlib.figure import Figure

__all__ = ["Explorer", "Shown", "presentation", "follow_presentation", "to_jsonable", "encode_json", "state_html",
           "state_from_html"]

PRESENT_SIZE = 1.6  # how much presentation mode enlarges the views, at most
PRESENT_SLIDER_PX = 72  # a matrix slider in presentation mode: no number beside it (the position shows it)
_LIVE: weakref.WeakSet = weakref.WeakSet()  # every explorer built in this kernel, for presentation()


def follow_presentation() -> None:
    """Give every live explorer the presentation mode now in force (``helpers.presentation`` calls this)."""
    for ex in list(_LIVE):
        ex._set_presenting(presenting())


@dataclass
class Shown:
    """What an explorer shows for one state: Views to draw, and the numbers for ``data-state``.

    ``note`` is HTML shown in the readout (escape any label you put in it).
    """

    views: View | list[View]
    inputs: dict
    weights: object
    output: object = None
    note: str = ""
    extra: dict = field(default_factory=dict)
    encoded: dict = field(default_factory=dict)  # JSON kept by the explorer for keys of its state (state_html)

    def __post_init__(self) -> None:
        if isinstance(self.views, View):
            self.views = [self.views]
        if not self.views or not all(isinstance(v, View) for v in self.views):
            raise TypeError(f"views must be a View or a non-empty list of View, got {self.views!r}")


# --------------------------------------------------------------------------- data-state


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


def encode_json(x: object) -> str:
    """``x`` as compact JSON (``to_jsonable``): what ``data-state`` holds for it, e.g. to encode once and keep."""
    return json.dumps(to_jsonable(x), separators=(",", ":"), allow_nan=False)


def state_html(state: dict, encoded: Mapping[str, str] | None = None) -> str:
    """The one hidden element that carries the explorer's state as JSON in ``data-state``.

    ``encoded``: JSON already made (``encode_json``) for some keys of ``state``, used as is (an explorer that shows
    the same large arrays again keeps their JSON: 13's 64 × 64 weights cost 1.5 ms to encode each time)."""
    if not isinstance(state, dict) or "kind" not in state:
        raise ValueError(f"state must be a dict with a 'kind', got {state!r}")
    encoded = dict(encoded or {})
    if not all(isinstance(v, str) for v in encoded.values()) or not set(encoded) <= set(state):
        raise ValueError(f"encoded must map keys of state to JSON strings, got keys {sorted(encoded)}")
    payload = encode_json({k: v for k, v in state.items() if k not in encoded})
    if encoded:
        payload = payload[:-1] + "".join(f",{json.dumps(k)}:{v}" for k, v in encoded.items()) + "}"
    return f'<div class="attn-state" hidden data-state="{html.escape(payload, quote=True)}"></div>'


def state_from_html(value: str) -> dict:
    """Parse the ``data-state`` JSON back out of a readout's HTML (the inverse of ``state_html``)."""
    import re

    found = re.findall(r'data-state="([^"]*)"', value)
    if len(found) != 1:
        raise ValueError(f"expected exactly one data-state attribute in the readout, found {len(found)}")
    return json.loads(html.unescape(found[0]))


# --------------------------------------------------------------------------- the base class


def _control_names(controls: dict) -> dict[str, str]:
    """What a screen reader says for each control, by the class suffix it carries (``attn-slider--<key>``):
    a grid's own names (``MatrixSliders.names``, ``MatrixToggles.names``), a single slider's description."""
    names = {}
    for name, control in controls.items():
        if isinstance(control, W.DOMWidget):  # a single slider: its description (dropdowns, checkboxes have labels)
            for cls in control._dom_classes:
                if cls.startswith("attn-slider--"):
                    names[cls.removeprefix("attn-slider--")] = control.description or name
        else:
            names.update(control.names)
    return names


_PX = 13  # JupyterLab's code font size, which the live views' em are of (liveview.css)
_CHAR = 0.6  # a character of a monospace font, in em


def _table_px(panel: Panel) -> float:
    """The width in pixels of ``panel``'s live table at size 1 (liveview.css: the table's font 0.8 em; a cell at
    least 3.6 em plus 0.4 em of padding; a header 0.6 em of padding; the corner's axis names in 0.85 em)."""
    texts = panel.texts()  # (R, C) what the cells print: "5.0e-04" is wider than 3.6 em
    cols = [max([len(row[j]) for row in texts] + [0]) for j in range(panel.matrix.shape[1])]
    cells = sum(max(3.6, _CHAR * n, _CHAR * len(str(label))) + 0.4 for n, label in zip(cols, panel.col_labels, strict=True))
    axes = " ".join(t for t in (f"{panel.ylabel} ↓" if panel.ylabel else "", f"{panel.xlabel} →" if panel.xlabel else "")
                    if t)
    rows = max([0.85 * _CHAR * len(axes)] + [_CHAR * len(str(r)) for r in panel.row_labels]) + 0.6
    return 0.8 * _PX * (cells + rows) + 2  # the table's border


def _text_box_px(box: W.Text) -> float:
    """A text box's width in pixels: its own width (in em) and its description beside it."""
    width = box.layout.width or ""
    em = float(width[:-2]) if width.endswith("em") else 24.0
    return em * _PX + _CHAR * _PX * len(box.description or "") + 20


def _observe(control: object, fn) -> None:
    if isinstance(control, W.ValueWidget):
        control.observe(fn, "value")
    else:  # MatrixSliders, MatrixToggles
        control.observe(fn)


def _set(control: object, value: object, name: str) -> None:
    if isinstance(control, W.ValueWidget):
        if isinstance(control, (W.FloatSlider, W.IntSlider)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not control.min <= value <= control.max:
                raise ValueError(f"{name} must be a number from {control.min} to {control.max}, got {value!r}")
            if isinstance(control, W.IntSlider) and value != int(value):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
        elif isinstance(control, W.Checkbox):
            check_flag(value, name)
        elif isinstance(control, W.Text) and not isinstance(value, str):
            raise TypeError(f"{name} must be a string (the text box's text), got {type(value).__name__}")
        elif hasattr(control, "options"):
            check_choice(value, name, list(control.options))
        control.value = value
    else:
        control.set_value(value, notify=False)


class Explorer:
    """Base of every explorer: give controls to ``__init__`` (by name) and implement ``show``.

    ``show(**values)`` gets each control's current value under the control's name and returns a
    ``Shown``. Public: ``.widget`` (display it, or put the explorer last in a cell), ``.set(**values)``
    (set controls by name and redraw once), ``.update()``, ``.figure`` / ``.figures`` (matplotlib
    Figures of the current state), ``.state()``, ``.weights``, ``.output``, ``.renders``.
    """

    kind = "explorer"
    about = "an explorer"  # what it does, in a few words (the line shown where widgets cannot render)

    def __init__(self, **controls: object) -> None:
        if not controls:
            raise TypeError(f"{type(self).__name__} needs at least one control")
        self.controls = controls
        self.readout = Readout(layout=W.Layout(min_width="16em"), names=_control_names(controls))
        self.readout.add_class("attn-readout")
        self._quiet = False
        self._shown: Shown | None = None
        self._error: str | None = None
        self._views: list[HeatmapView] = []
        self._presenting = presenting()
        self.renders = 0
        for control in controls.values():
            _observe(control, self._changed)
        self._render()
        self.widget = self.layout()
        self.widget.add_class("attn-explorer")
        self.widget.add_class(f"attn-explorer--{self.kind}")
        if self._presenting:  # built while presentation mode is on: the whole layout, not only the tables
            self._set_presenting(True)
        _LIVE.add(self)

    # what a subclass writes ------------------------------------------------
    def show(self, **values: object) -> Shown:  # pragma: no cover - abstract
        """The views and numbers for these control values (pure: no widget is touched)."""
        raise NotImplementedError

    def layout(self) -> W.Box:
        """Controls on the left (two or more matrix grids as tabs), the first view and the readout on the
        right, further views below: the main heatmap and its controls fit a 1280×720 projector together."""
        grids = [c for c in self.controls.values() if not isinstance(c, W.DOMWidget)]
        boxes = [c for c in self.controls.values() if isinstance(c, W.DOMWidget)]
        if len(grids) > 1:
            boxes.append(W.Tab(children=[g.widget for g in grids], titles=[g.name for g in grids]))
        else:
            boxes.extend(g.widget for g in grids)
        self._top = W.HBox([W.VBox(boxes, layout=W.Layout(flex="0 0 auto")), W.VBox([self._views[0], self.readout])],
                           layout=W.Layout(align_items="flex-start", flex_flow="row wrap", grid_gap="0 1em"))
        return W.VBox([self._top, *self._views[1:]])

    # the machinery ---------------------------------------------------------
    def values(self) -> dict:
        """The current value of every control, by name."""
        return {name: c.value for name, c in self.controls.items()}

    def _changed(self, _change: object = None) -> None:
        if not self._quiet:
            self._render()

    def _render(self) -> None:
        values = self.values()
        try:
            shown = self.show(**values)
        except (ValueError, TypeError) as err:
            if self._shown is None:
                raise  # the start state itself is refused: that is the caller's error
            self._error = str(err)
            state = {"kind": self.kind, "inputs": values, "error": self._error}
            self.readout.value = (f'<div class="attn-error" style="color:#a00000;max-width:32em"><b>Refused:</b> '
                                  f"{html.escape(self._error)}</div>" + state_html(state))
            self.renders += 1
            return
        self._shown, self._error = shown, None
        cells = self._draw()
        note = f'<div style="max-width:32em">{shown.note}</div>' if shown.note else ""
        say = f'<div class="attn-say" hidden>{html.escape(describe_view(shown.views[0]))}</div>'  # the live region's
        self.readout.update(note + say + state_html(self.state(), shown.encoded), cells)  # one message: readout and changed cells
        self.renders += 1

    def _draw(self) -> dict:
        """Give the last good state's views to their widgets (built once); returns each widget's changed cells,
        for the readout to send with its own change in one message."""
        size, cells = self._size(), {}
        for k, view in enumerate(self._shown.views):
            if k == len(self._views):
                self._views.append(HeatmapView(view, size=size))
            elif k < len(self._views):
                self._views[k].set_size(size)  # sent only when it changes (presentation mode, a wider main view)
                cells[self._views[k]] = self._views[k].show(view, send=False)
        return cells

    def _size(self) -> float:
        return self._present_size() if self._presenting and self._shown is not None else 1.0

    def _grids(self) -> list:
        return [c for c in self.controls.values() if not isinstance(c, W.DOMWidget)]

    def _present_size(self) -> float:
        """As large as PRESENT_SIZE allows while the main heatmap still fits beside its controls."""
        per_col = {True: PRESENT_SLIDER_PX + 4, False: 40}  # a narrow slider, or an on/off cell of 2.2em
        controls = max([340] + [g.shape[1] * per_col[hasattr(g, "sliders")] + 110 for g in self._grids()]
                       + [_text_box_px(c) for c in self.controls.values() if isinstance(c, W.Text)])  # px
        fits = (PRESENT_WIDTH_PX - controls) / (1.03 * _table_px(self._shown.views[0].panels[0]))  # 3 % to spare
        return round(max(1.0, min(PRESENT_SIZE, fits)), 2)

    def _set_presenting(self, on: bool) -> None:
        self._presenting = on
        (self.widget.add_class if on else self.widget.remove_class)("attn-present")
        top = getattr(self, "_top", None)
        if top is not None:  # on a projector the main heatmap stays beside its controls, never below them
            top.layout.flex_flow = "row nowrap" if on else "row wrap"
        for grid in self._grids():  # matrix sliders get narrow: their positions show the values
            for slider in getattr(grid, "sliders", np.empty(0)).flat:
                slider.readout = not on
                slider.layout.width = f"{PRESENT_SLIDER_PX}px" if on else grid.slider_width
        for widget in self._views:  # the last good state, also while the current one is refused
            widget.set_size(self._size())

    def update(self) -> None:
        """Recompute and redraw now, from the current control values."""
        self._render()

    def set(self, **values: object) -> None:
        """Set controls by name (e.g. ``X=...``, ``scale=False``) and redraw once."""
        unknown = [k for k in values if k not in self.controls]
        if unknown:
            raise TypeError(f"{type(self).__name__}.set() got unknown names {unknown}; it accepts {list(self.controls)}")
        self._quiet = True
        try:
            for name, value in values.items():
                _set(self.controls[name], value, name)
        finally:  # also when a value is refused half-way: what is shown follows what the controls hold
            self._quiet = False
            self._render()
        if self._error is not None:
            raise ValueError(self._error)

    def state(self) -> dict:
        """The readout's data-state: kind, inputs, weights, output and the explorer's extras."""
        s = self._shown
        return {"kind": self.kind, "inputs": s.inputs, "weights": s.weights, "output": s.output, **s.extra}

    @property
    def weights(self) -> np.ndarray:
        """The current attention weights."""
        return np.asarray(self._shown.weights)

    @property
    def output(self) -> np.ndarray | None:
        """The current output (None where the explorer has none)."""
        return None if self._shown.output is None else np.asarray(self._shown.output)

    @property
    def views(self) -> tuple[HeatmapView, ...]:
        """The live views (``helpers.liveview.HeatmapView``), one per View of the last good state, in page order."""
        return tuple(self._views)

    @property
    def figures(self) -> list[Figure]:
        """Matplotlib Figures of the current views (the same panels, colours and numbers)."""
        from helpers.plots import draw_view

        return [draw_view(v, managed=False) for v in self._shown.views]

    def close(self) -> None:
        """Close the explorer's widgets and forget it (presentation() no longer redraws it)."""
        _LIVE.discard(self)
        stack = [self.widget]
        while stack:  # the widget tree: boxes, tabs, grids, sliders, the HTML views
            w = stack.pop()
            stack.extend(getattr(w, "children", ()))
            w.close()

    @property
    def figure(self) -> Figure:
        """The matplotlib Figure of the main view in its current state (``display(ex.figure)``)."""
        from helpers.plots import draw_view

        return draw_view(self._shown.views[0], managed=False)

    def _ipython_display_(self) -> None:
        """Show the live widget; where widgets cannot render (GitHub, an HTML export) a neutral line instead."""
        from IPython.display import display

        bundle = self.widget._repr_mimebundle_()
        if bundle:
            bundle["text/plain"] = (f"[live explorer: {self.about}. It is live when the notebook runs in Jupyter "
                                    "(if this line stays after you ran the cell, see 00-start-here, 'Check that "
                                    "widgets work'); a figure beside it shows one fixed state.]")
            display(bundle, raw=True)
