"""The controls of the live explorers: matrix-shaped sliders, on/off grids, single sliders, choices.

Every control has ``.widget`` (what is displayed), ``.value`` (the current value), ``set_value(v,
notify=...)`` and ``observe(fn)``; plain ipywidgets sliders, dropdowns and checkboxes are used as they
are (their ``value`` trait). DOM contract (the browser tests in ``tests/ui`` rely on it):

* a matrix entry's slider has the classes ``attn-slider attn-slider--<matrix>-<i>-<j>`` (``i``, ``j``
  index the FULL matrix, counted from 0 as in NumPy; the labels beside the grid count from 1, as the
  notebooks count tokens and features), a single slider ``attn-slider attn-slider--<name>``;
* an on/off cell of a ``MatrixToggles`` grid has ``attn-toggle attn-toggle--<name>-<i>-<j>``;
* dropdowns, checkboxes, text boxes and buttons have ``attn-control attn-control--<name>``; a text box's
  ``description`` is its accessible name (the label ipywidgets ties to the input).

Shape notation: ``R`` rows, ``C`` columns of the matrix a grid stands for.
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Callable, Iterable, Sequence

import ipywidgets as W
import numpy as np

from helpers.validate import (
    check_bool_matrix,
    check_callable,
    check_choice,
    check_flag,
    check_labels,
    check_matrix,
    check_name,
    check_range,
    check_real,
)

__all__ = [
    "MatrixSliders",
    "MatrixToggles",
    "scalar_slider",
    "choice",
    "checkbox",
    "text_box",
    "mark_control",
]


def mark_control(widget: W.DOMWidget, name: str) -> W.DOMWidget:
    """Give a toggle / dropdown / button the classes ``attn-control attn-control--<name>``."""
    widget.add_class("attn-control")
    widget.add_class(f"attn-control--{check_name(name)}")
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
    check_name(name)
    check_real(value, f"value of the slider {name!r}", kind="a finite number", rule="a finite number")
    check_range(min, max, step, f"the slider {name!r}", allow_equal=True)
    if not min <= value <= max:
        raise ValueError(f"the slider {name!r} starts at {value}, outside its range [{min}, {max}]")
    if integer and any(v != int(v) for v in (value, min, max, step)):
        raise ValueError(f"the integer slider {name!r} needs whole numbers, got value={value}, min={min}, "
                         f"max={max}, step={step}")
    cls = W.IntSlider if integer else W.FloatSlider
    kw = {"readout_format": readout_format} if readout_format else {}
    slider = cls(
        value=value, min=min, max=max, step=step, description=name if description is None else description,
        continuous_update=True, style={"description_width": "initial"}, layout=W.Layout(width=width), **kw,
    )
    slider.add_class("attn-slider")
    slider.add_class(f"attn-slider--{name}")
    return slider


class _Grid:
    """What both grids of controls share: ``reset`` to the initial matrix and ``observe``."""

    _initial: np.ndarray
    _observers: list[Callable[[dict], None]]

    def set_value(self, matrix: object, *, notify: bool = True) -> None:  # pragma: no cover - each grid has its own
        raise NotImplementedError

    def reset(self) -> None:
        """Back to the matrix the grid was built with."""
        self.set_value(self._initial)

    def observe(self, fn: Callable[[dict], None]) -> None:
        """Call ``fn(change)`` after each change of any entry."""
        self._observers.append(check_callable(fn, "fn", "callable"))


class MatrixSliders(_Grid):
    """One slider per entry of a matrix, laid out as the matrix, with its name and a Reset button.

    Rows and columns are labelled from 1 (or by ``row_labels`` / ``col_labels``, e.g. feature names).

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
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
        slider_width: str = "130px",
    ) -> None:
        self.name = check_name(name)
        arr = check_matrix(matrix, f"matrix for {name}")  # (R, C)
        for arg, v in (("row_offset", row_offset), ("col_offset", col_offset)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
                raise TypeError(f"{arg} of {name} must be an integer >= 0 (where the grid sits in the full matrix), "
                                f"got {v!r}")
        if integer is None:
            integer = arr.dtype.kind in "iu"
        self.integer = bool(integer)
        if self.integer and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"integer=True but the matrix for {name} has non-integer entries")
        lo = float(np.floor(arr.min())) if min is None else min
        hi = float(np.ceil(arr.max())) if max is None else max
        if min is None:
            lo = lo if lo < -3 else -3.0 if not self.integer else -5.0
        if max is None:
            hi = hi if hi > 3 else 3.0 if not self.integer else 5.0
        step = (1 if self.integer else 0.1) if step is None else step
        check_range(lo, hi, step, f"the sliders of {name}")
        lo, hi = float(lo), float(hi)
        if arr.min() < lo or arr.max() > hi:
            raise ValueError(
                f"matrix for {name} has entries from {arr.min()} to {arr.max()}, outside the slider range [{lo}, {hi}]"
            )
        self.shape = arr.shape
        self.slider_width = slider_width
        self._dtype = np.int64 if self.integer else np.float64
        self._initial = arr.astype(self._dtype)  # (R, C)
        self._observers: list[Callable[[dict], None]] = []
        self._quiet = False
        R, C = arr.shape
        rows = check_labels(row_labels, R, "row_labels", against=f"the grid has {R}", start=row_offset + 1)
        cols = check_labels(col_labels, C, "col_labels", against=f"the grid has {C}", start=col_offset + 1)
        self.names = {  # what a screen reader says for each slider, e.g. "W_q, row 'animal', column 1"
            f"{name}-{i + row_offset}-{j + col_offset}": f"{label or name}, row {_say(rows[i], row_labels)}, "
                                                         f"column {_say(cols[j], col_labels)}"
            for i in range(R) for j in range(C)
        }
        self.sliders = np.empty((R, C), dtype=object)
        cls = W.IntSlider if self.integer else W.FloatSlider
        fmt = {} if self.integer else {"readout_format": ".1f" if step >= 0.1 else ".2f"}
        for (i, j), v in np.ndenumerate(self._initial):
            s = cls(
                value=v.item(), min=lo if not self.integer else int(lo), max=hi if not self.integer else int(hi),
                step=step, continuous_update=True, description="",
                tooltip=self.names[f"{name}-{i + row_offset}-{j + col_offset}"],
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
        grid = _labelled_grid(self.sliders, rows, cols)
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

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)



def _say(label: str, given: object) -> str:
    """A row or column label as a screen reader should say it: a given word quoted, a number bare."""
    return f"'{label}'" if given is not None else label


def _labelled_grid(cells: np.ndarray, rows: list[str], cols: list[str]) -> W.GridBox:
    """Widgets (R, C) in a grid with column labels on top and row labels on the left."""
    R, C = cells.shape
    items = [W.HTML("")] + [W.HTML(f"<small>{html.escape(c)}</small>", layout=W.Layout(justify_content="center"))
                            for c in cols]
    for i in range(R):
        items.append(W.HTML(f"<small>{html.escape(rows[i])}</small>"))
        items.extend(cells[i])
    return W.GridBox(items, layout=W.Layout(grid_template_columns=f"auto repeat({C}, auto)", grid_gap="0px 2px",
                                            width="max-content", align_items="center"))


class MatrixToggles(_Grid):
    """A grid of on/off buttons shaped like a boolean matrix (a T×T mask: rows queries, columns keys).

    ``.value`` is the current bool matrix (R, C), ``.set_value(m)`` sets every cell with one
    notification, ``.reset()`` restores the initial matrix, ``.observe(fn)`` is called after each change,
    ``.widget`` is the box to display. Cell (i, j) has ``attn-toggle attn-toggle--<name>-<i>-<j>``; a
    pressed (on) button means True (``on_means``: "may attend" unless told). ``presets`` (name -> bool matrix)
    adds one button per preset (class ``attn-control--<name>-<preset>``) that sets the whole grid.
    """

    def __init__(self, name: str, matrix: object, *, row_labels: Sequence[str] | None = None,
                 col_labels: Sequence[str] | None = None, label: str | None = None,
                 presets: dict[str, object] | None = None, on_means: str = "may attend") -> None:
        self.name = check_name(name)
        self._initial = check_bool_matrix(matrix, f"matrix for {name}")  # (R, C) bool
        self.shape = self._initial.shape
        R, C = self.shape
        self._observers: list[Callable[[dict], None]] = []
        self._quiet = False
        rows = check_labels(row_labels, R, "row_labels", against=f"the grid has {R}")
        cols = check_labels(col_labels, C, "col_labels", against=f"the grid has {C}")
        if not isinstance(on_means, str) or not on_means.strip():
            raise TypeError(f"on_means must be a non-empty string (what a pressed cell means), got {on_means!r}")

        # a mask: "query 'it' may attend to key 'cat'"; else "layer 0, head 1: in place"
        def says(i: int, j: int) -> str:
            if on_means == "may attend":
                return f"query {_say(rows[i], row_labels)} may attend to key {_say(cols[j], col_labels)}"
            return f"{rows[i]}, {cols[j]}: {on_means}"

        self.names = {f"{name}-{i}-{j}": says(i, j) for i in range(R) for j in range(C)}  # pressed = on_means
        self.buttons = np.empty((R, C), dtype=object)
        for (i, j), v in np.ndenumerate(self._initial):
            b = W.ToggleButton(value=bool(v), description="", tooltip=self.names[f"{name}-{i}-{j}"],
                               layout=W.Layout(width="2.2em", height="2.2em", padding="0"))
            b.add_class("attn-toggle")
            b.add_class(f"attn-toggle--{name}-{i}-{j}")
            b.observe(self._on_click, "value")
            self.buttons[i, j] = b
        self._paint()
        grid = _labelled_grid(self.buttons, rows, cols)
        self.presets = {}
        buttons = []
        for key, m in (presets or {}).items():
            self.presets[key] = self._check(m, f"preset {key!r}", self.shape)
            b = mark_control(W.Button(description=key, layout=W.Layout(width="auto")), f"{name}-{check_name(key)}")
            b.on_click(lambda _b, key=key: self.set_value(self.presets[key]))
            buttons.append(b)
        title = W.HTML(f"<b>{html.escape(label or name)}</b> <small>({R}×{C}; ✓ = {html.escape(on_means)})</small>")
        self.widget = W.VBox([title, grid, W.HBox(buttons)])
        self.widget.add_class("attn-matrix")

    @staticmethod
    def _check(matrix: object, what: str, shape: tuple) -> np.ndarray:
        arr = check_bool_matrix(matrix, what)  # (R, C) a copy
        if arr.shape != shape:
            raise ValueError(f"{what} has shape {arr.shape} but the toggles have shape {shape}")
        return arr

    def _paint(self) -> None:
        for b in self.buttons.flat:
            style, mark = ("primary", "✓") if b.value else ("", "")  # a mark as well as a colour (no icon font)
            if b.button_style != style or b.description != mark:
                with b.hold_sync():  # style and mark in one message to the browser, not two
                    b.button_style, b.description = style, mark

    def _on_click(self, change: dict) -> None:
        self._paint()
        if not self._quiet:
            for fn in list(self._observers):
                fn({"owner": self, "name": self.name, "old": change["old"], "new": change["new"]})

    @property
    def value(self) -> np.ndarray:
        """The current boolean matrix (R, C)."""
        return np.array([[b.value for b in row] for row in self.buttons], dtype=bool)  # (R, C)

    def set_value(self, matrix: object, *, notify: bool = True) -> None:
        """Set every cell from a boolean matrix of the same shape; observers are told once."""
        arr = self._check(matrix, self.name, self.shape)
        old = self.value
        self._quiet = True
        try:
            for (i, j), v in np.ndenumerate(arr):
                self.buttons[i, j].value = bool(v)
        finally:
            self._quiet = False
        if notify and not np.array_equal(old, arr):
            for fn in list(self._observers):
                fn({"owner": self, "name": self.name, "old": old, "new": arr})



def choice(name: str, options: Sequence, value: object, *, description: str | None = None) -> W.Dropdown:
    """A dropdown with the classes ``attn-control attn-control--<name>``."""
    if isinstance(options, (str, bytes)) or not isinstance(options, Iterable):
        raise TypeError(f"the options of {name} must be a list, got {options!r}")
    options = list(options)
    if not options:
        raise ValueError(f"the options of {name} are empty: a dropdown needs at least one")
    check_choice(value, name, options)
    box = W.Dropdown(options=options, value=value, description=name if description is None else description,
                     style={"description_width": "initial"}, layout=W.Layout(width="auto"))
    return mark_control(box, name)


def checkbox(name: str, value: bool, *, description: str) -> W.Checkbox:
    """A checkbox with the classes ``attn-control attn-control--<name>``."""
    box = W.Checkbox(value=check_flag(value, name), description=description, indent=False,
                     layout=W.Layout(width="auto"))
    return mark_control(box, name)


def text_box(name: str, value: str, *, description: str, placeholder: str = "", width: str = "24em") -> W.Text:
    """A one-line text box with the classes ``attn-control attn-control--<name>``; it reports a new value when
    the reader presses Enter or leaves the box (``continuous_update=False``), not at every key."""
    if not isinstance(value, str):
        raise TypeError(f"the text box {name!r} starts from a string, got {type(value).__name__}")
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"the text box {name!r} needs a description: it is the box's accessible name")
    box = W.Text(value=value, description=description, placeholder=placeholder, continuous_update=False,
                 tooltip=description, style={"description_width": "initial"}, layout=W.Layout(width=width))
    return mark_control(box, name)
