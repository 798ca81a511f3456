"""Lesson 03's browser expectation (kind overflow): what the page of
``helpers.explorers.nb03`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, get_array, number_array

import helpers.attention as att

_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


@expects("overflow")
def overflow(inp: dict) -> Expected:
    pattern = get_array(inp, "pattern", "overflow")  # (T, T)
    scores = (pattern * 10.0 ** float(inp["magnitude"])).astype(
        _DTYPES[inp["dtype"]]
    )  # (T, T) in that float type
    np.testing.assert_array_equal(
        number_array(inp["scores"]),
        scores.astype(float),
        err_msg="data-state scores != pattern * 10**magnitude",
    )
    stable = att.softmax(scores)  # (T, T)
    with np.errstate(all="ignore"):
        naive = att.naive_softmax(scores)  # (T, T) may hold nan
    return Expected(stable, None, [scores, naive, stable], main=3)  # one view of three tables
