"""Lesson 01's browser expectation (kind no-weights): what the page of
``helpers.explorers.nb01`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

from expected import Expected, expects, get_array, steps


@expects("no-weights")
def no_weights(inp: dict) -> Expected:
    X = get_array(inp, "X", "no-weights")  # (T, d)
    return steps(X, X, X, float(inp["scale"]))
