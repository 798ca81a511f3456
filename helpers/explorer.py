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
* with ``yours=``: a View titled "your <name> beside the reference" right after the main one (its second table
  the student's output, outlined cells ``td.m``), a ``div.attn-yours`` in the readout with the verdict, and a
  ``"yours"`` entry in ``data-state`` ({"name", "ok", "problem", "reference", "output", "differ"});
* accessibility (issue 29): the readout also holds a hidden ``div.attn-say``, the main View in words
  (``helpers.panels.describe_view``), which its ``div.attn-live`` (role status, polite) announces once the
  controls have been still for a moment; its ``names`` (from ``MatrixSliders.names``,
  ``MatrixToggles.names`` and each single slider's description) name every slider handle and on/off cell
  in the page, and each on/off cell has ``aria-pressed``.

``presentation(True)`` enlarges the views of every explorer (for a projector); ``presentation(False)``
goes back.

The student's own function, live (``yours=``, issue 37): an explorer of a lesson with a Build exercise names the
exercise's ``Spec`` (``yours_spec_name``, e.g. ``"helpers.checks.nb01:SPEC_ATTEND"``) and maps its control values
to the student's arguments (``yours_args``). Given ``yours=fn``, every update also runs ``fn`` on those arguments
through the check's own engine (``helpers.checks.functions.explain``: the same sentences as the Build check), draws
a View with the reference's output and the student's side by side on one colour scale (``Panel.marked`` outlines
each cell of theirs that differs beyond the Spec's tolerance), and says the verdict in the readout
(``div.attn-yours``; ``.yours_verdict`` is that line as text; ``data-state`` gets a ``"yours"`` entry). Their
exception, wrong shape or None is said in the readout: it never breaks the widget.
"""

from __future__ import annotations

import dataclasses
import html
import importlib
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
from helpers.panels import PRESENT_WIDTH_PX, Panel, View, describe_view, limits
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
    cells = sum(
        max(3.6, _CHAR * n, _CHAR * len(str(label))) + 0.4 for n, label in zip(cols, panel.col_labels, strict=True)
    )
    axes = " ".join(
        t for t in (f"{panel.ylabel} ↓" if panel.ylabel else "", f"{panel.xlabel} →" if panel.xlabel else "") if t
    )
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
            if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                    or not control.min <= value <= control.max):
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
    yours_spec_name: str | None = None  # "module:SPEC_NAME": the Build exercise whose function ``yours=`` takes
    yours_unit = "output"  # what the numbers of the student's output are, on the colour bar of both

    def __init__(self, *, yours: object = None, **controls: object) -> None:
        if not controls:
            raise TypeError(f"{type(self).__name__} needs at least one control")
        if yours is not None and self.yours_spec_name is None:
            raise TypeError(f"{type(self).__name__} does not take yours=: its lesson has no Build exercise to run "
                            "live (the explorers of 01, 02, 03, 04, 06 and 12 do)")
        self._yours = yours  # the student's function (or None): run on every update beside the reference
        self.yours_verdict = ""  # what the readout says about it, in one line ("" without yours=)
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
        if self._yours is not None:
            shown = self._with_yours(shown, values)
        self._shown, self._error = shown, None
        cells = self._draw()
        note = f'<div style="max-width:32em">{shown.note}</div>' if shown.note else ""
        if self._yours is not None:
            note += shown.extra["yours"].pop("html")
        words = describe_view(shown.views[0]) + (f" {self.yours_verdict}" if self._yours is not None else "")
        say = f'<div class="attn-say" hidden>{html.escape(words)}</div>'  # the live region's (and yours=' verdict)
        # one message: readout and changed cells
        self.readout.update(note + say + state_html(self.state(), shown.encoded), cells)
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

    # the student's function (yours=) ----------------------------------------
    @property
    def yours(self) -> object:
        """The student's function given as ``yours=`` (None without it). Another one may be set (``ex.yours = fn``:
        redrawn at once); whether there is one is fixed when the explorer is built (its View is part of the layout)."""
        return self._yours

    @yours.setter
    def yours(self, fn: object) -> None:
        if (fn is None) != (self._yours is None):
            raise TypeError(f"yours is given when the explorer is built ({type(self).__name__}(..., yours=fn)): "
                            "it adds a View to the layout; build a new explorer to add or remove it")
        self._yours = fn
        self._render()

    def yours_spec(self) -> object:
        """The Build exercise's ``helpers.checks.functions.Spec`` (named by ``yours_spec_name``, imported when used)."""
        module, _, name = self.yours_spec_name.partition(":")
        return getattr(importlib.import_module(module), name)

    def yours_args(self, values: dict) -> tuple:  # pragma: no cover - abstract
        """The student's arguments for these control values (the same inputs the reference gets)."""
        raise NotImplementedError

    def yours_outcome(self, values: dict) -> tuple[np.ndarray, object, str | None, float, float]:
        """(the reference's output, the student's output or None, the check's sentence or None when right, rtol,
        atol) for these control values: the Build check's own engine (``helpers.checks.functions.explain``) on the
        arguments ``yours_args`` gives."""
        from helpers.checks.functions import explain, reference_outputs  # the right output and its tolerance

        spec, args = self.yours_spec(), self.yours_args(values)
        outcome = explain(self.yours, spec, args)
        want, (rtol, atol) = reference_outputs(spec, args)  # float64 arrays, one per output; float16: coarser
        got = None if outcome.value is None else outcome.value[0] if spec.outputs else outcome.value
        return want[0], got, outcome.problem, rtol, atol  # a tuple's first part: the output

    def yours_name(self) -> str:
        """The student's function's name, as the check says it ("attend")."""
        return self.yours_spec().name

    def yours_axes(self, shape: tuple[int, int]) -> dict:
        """Labels of an (R, C) output panel (``Panel`` keywords): the explorer's tokens on the rows when R matches,
        the features 1 .. C on the columns."""
        tokens = getattr(self, "tokens", None)
        rows = list(tokens) if tokens is not None and len(tokens) == shape[0] else None
        return {"row_labels": rows, "col_labels": [str(j + 1) for j in range(shape[1])]}

    def yours_title(self, name: str) -> str:
        """The title of the View of the student's output beside the reference's."""
        return f"your {name} beside the reference"

    def _with_yours(self, shown: Shown, values: dict) -> Shown:
        """``shown`` with the student's output beside the reference's (a View after the main one), the differing
        cells marked, and the verdict in the readout (the check's sentence) and in data-state."""
        name = self.yours_name()
        want, got, problem, rtol, atol = self.yours_outcome(values)
        want2 = want.reshape(1, -1) if want.ndim < 2 else want  # (R, C) one row for a vector
        mine, marked = None, None
        if got is not None:
            got = np.asarray(got, dtype=np.float64)
            if got.shape == want.shape:
                mine = got.reshape(want2.shape)
                marked = ~np.isclose(mine, want2, rtol=rtol, atol=atol, equal_nan=True)  # (R, C) the differing cells
            elif got.ndim in (1, 2) and 0 < got.size <= 4 * want.size:  # a wrong shape, drawn as it is: no cell right
                mine = got.reshape(1, -1) if got.ndim == 1 else got
                marked = np.ones(mine.shape, bool)
        both = [want2] if mine is None else [want2, mine]
        finite = np.concatenate([m[np.isfinite(m)] for m in both])
        lo, hi = limits(finite, "values")  # one fixed scale for both: their colours compare cell by cell
        scale = {"kind": "values", "vmin": lo, "vmax": hi, "color_bar_label": f"{self.yours_unit} (one scale for both)"}
        panels = [Panel(want2, f"reference {name}", **scale, **self.yours_axes(want2.shape))]
        n_diff = 0 if marked is None else int(marked.sum())
        if mine is not None:
            title = f"your {name}" + (f": shape {mine.shape}, not {want2.shape}" if mine.shape != want2.shape
                                      else f": {n_diff} cells differ" if n_diff > 1 else ": 1 cell differs" if n_diff
                                      else "")
            panels.append(Panel(mine, title, **scale, marked=marked, **self.yours_axes(mine.shape)))
        if problem is None:
            line = f"✅ your {name} gives the same output as the reference here."
        else:
            line = f"❌ your {name}: {problem}"
            if mine is not None and n_diff and mine.shape == want2.shape:
                line += (f" ({n_diff} of {marked.size} cells differ from the reference's: outlined in your output.)"
                         if n_diff > 1 else f" (1 of {marked.size} cells differs from the reference's: outlined.)")
        self.yours_verdict = line
        title = self.yours_title(name) if mine is not None else f"your {name}: no output"
        views = [shown.views[0], View(panels, title), *shown.views[1:]]
        colour = "#006400" if problem is None else "#a00000"
        box = (f'<div class="attn-yours" style="color:{colour};max-width:32em;margin-top:0.3em">'
               f"{html.escape(line)}</div>")
        state = {"name": name, "ok": problem is None, "problem": problem, "reference": want,
                 "output": None if got is None else got,
                 "differ": [] if marked is None else np.argwhere(marked).tolist(), "html": box}
        return dataclasses.replace(shown, views=views, extra={**shown.extra, "yours": state})

    def update(self) -> None:
        """Recompute and redraw now, from the current control values."""
        self._render()

    def set(self, **values: object) -> None:
        """Set controls by name (e.g. ``X=...``, ``scale=False``) and redraw once."""
        unknown = [k for k in values if k not in self.controls]
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.set() got unknown names {unknown}; it accepts {list(self.controls)}"
            )
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
