"""Lesson 06's browser expectation (kind masks): what the page of
``helpers.explorers.nb06`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, number_array

import helpers.attention as att


@expects("masks")
def masks(inputs: dict) -> Expected:
    missing = [n for n in ("X", "W_q", "W_k", "W_v", "mask") if n not in inputs]
    assert not missing, f"data-state of a 'masks' explorer lacks {missing}; it has {sorted(inputs)}"
    X, W_q, W_k, W_v = (number_array(inputs[n]) for n in ("X", "W_q", "W_k", "W_v"))
    mask = np.asarray(inputs["mask"])  # (T, T) from JSON true/false
    assert mask.dtype == bool, f"data-state mask must hold true/false, got dtype {mask.dtype}"
    out, w = att.single_head_attention(X, W_q, W_k, W_v, mask=mask)  # (T, d_v), (T, T)
    _, w_all = att.single_head_attention(X, W_q, W_k, W_v)  # (T, T) no mask
    return Expected(w, out, [w, w_all, out])
