"""Lesson 00's browser expectation (kind widget-check): what the page of
``helpers.explorers.nb00`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, get_array

import helpers.attention as att


@expects("widget-check")
def softmax_row(inp: dict) -> Expected:
    w = np.atleast_2d(att.softmax(get_array(inp, "scores", "widget-check")))  # (1, T)
    return Expected(w, None, [w])
