"""What helpers.attention computes for an explorer's state (the JSON of its readout's data-state).

``expected(state)`` maps the explorer kind (of ``helpers.explorers.REGISTRY``) to helper calls and returns
``Expected``: the weights and output the data-state must hold, and the matrix of every heatmap table
in the order the page shows them. The browser tests compare the numbers printed in the heatmaps'
cells with ``cell_texts`` of these (the format of ``helpers.panels.format_matrix``).

Each lesson's expectations live in ``expectations/nbNN.py`` beside this file, as its explorers live in
``helpers/explorers/nbNN.py``: one function per kind, decorated with ``@expects("kind")``. Every module
there is found on disk and imported at the end of this one, which fills ``KINDS``; there is no list to edit.
A registered kind missing from ``KINDS`` fails ``tests/test_registry.py`` (a normal test), so a new
explorer cannot go unchecked: adding an explorer means adding its function to its lesson's module there.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

import helpers.attention as att
from helpers.panels import STEP_KEYS, format_matrix


class Expected(NamedTuple):
    weights: np.ndarray
    output: np.ndarray | None
    tables: list[np.ndarray]  # every heatmap table, in page order
    main: int = 1  # how many of the tables the main view holds: a yours= view (issue 37) comes right after them


def number_array(x: object) -> np.ndarray:
    """A data-state value as a float array; the strings "nan", "inf", "-inf" become those floats."""
    if isinstance(x, str):
        return np.asarray(float(x))
    if isinstance(x, list):
        return np.asarray([number_array(v) for v in x], dtype=float)
    return np.asarray(x, dtype=float)


def get_array(inputs: dict, name: str, kind: str) -> np.ndarray:
    if name not in inputs:
        raise KeyError(f"data-state of a {kind!r} explorer has no input {name!r}; it has {sorted(inputs)}")
    return number_array(inputs[name])


def steps(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float) -> Expected:
    """The weights heatmap, then the seven panels of the step view."""
    st = att.attention_steps(Q, K, V, scale)
    return Expected(st["weights"], st["output"], [st["weights"], *(st[k] for k in STEP_KEYS)])


KINDS: dict[str, Callable[[dict], Expected]] = {}  # kind -> its expectation, filled by @expects


def expects(kind: str) -> Callable[[Callable[[dict], Expected]], Callable[[dict], Expected]]:
    """Decorator: the expectation of explorers of ``kind`` (a function of the data-state's inputs)."""

    def add(func: Callable[[dict], Expected]) -> Callable[[dict], Expected]:
        taken = KINDS.get(kind)
        if taken is not None and (taken.__module__, taken.__qualname__) != (func.__module__, func.__qualname__):
            raise ValueError(f"kind {kind!r} of {func.__module__}.{func.__name__} is taken by "
                             f"{taken.__module__}.{taken.__name__}")
        KINDS[kind] = func
        return func

    return add


def expected(state: dict) -> Expected:
    """What helpers.attention gives for ``state["inputs"]`` of an explorer of ``state["kind"]``."""
    kind = state.get("kind")
    if kind not in KINDS:
        raise KeyError(
            f"no helper call known for explorer kind {kind!r} (known: {sorted(KINDS)}); add it to a module of "
            f"{EXPECTATIONS}"
        )
    want = KINDS[kind](state.get("inputs", {}))
    return want if "yours" not in state else with_yours(want, state["yours"])


def with_yours(want: Expected, yours: dict) -> Expected:
    """``want`` with the view of ``yours=`` (the reference's output, then the student's) after the main view, as the
    data-state reports both: the page must print what the kernel computed. (The reference is the Build exercise's own
    function on the explorer's inputs, not always the explorer's output: 04's adds a fixed W_o, 06's is always causal,
    12's compares logits; tests/test_yours.py checks it against the helpers.)"""
    ref = number_array(yours["reference"])
    ref2 = ref.reshape(1, -1) if ref.ndim < 2 else ref  # (R, C) one row for a vector
    tables = [ref2]
    if yours.get("output") is not None:
        mine = number_array(yours["output"])
        if mine.size == ref2.size and mine.shape == ref.shape:
            tables.append(mine.reshape(ref2.shape))
        elif mine.ndim in (1, 2) and 0 < mine.size <= 4 * ref.size:  # a wrong shape, drawn as it is
            tables.append(mine.reshape(1, -1) if mine.ndim == 1 else mine)
    k = want.main
    return want._replace(tables=[*want.tables[:k], *tables, *want.tables[k:]])


def cell_texts(matrices: list[np.ndarray]) -> list[list[str]]:
    """Every heatmap's cell texts, row by row, as the page prints them (one list per table)."""
    return [[t for row in format_matrix(m) for t in row] for m in matrices]


EXPECTATIONS = Path(__file__).resolve().parent / "expectations"  # nb00.py, nb01.py, ...: one module per lesson
for _module in sorted(m.name for m in pkgutil.iter_modules([str(EXPECTATIONS)])):
    importlib.import_module(f"expectations.{_module}")  # its @expects fill KINDS
