"""Lesson 02's browser expectations (kinds qkv, scaling): what the pages of
``helpers.explorers.nb02`` show, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, get_array, steps

import helpers.attention as att


@expects("qkv")
def qkv(inp: dict) -> Expected:
    X, W_q, W_k, W_v = (get_array(inp, n, "qkv") for n in ("X", "W_q", "W_k", "W_v"))
    return steps(*att.project_qkv(X, W_q, W_k, W_v), float(inp["scale"]))


@expects("scaling")
def scaling(inp: dict) -> Expected:
    Q, K = get_array(inp, "Q", "scaling"), get_array(inp, "K", "scaling")  # (T, d_k) each
    assert Q.shape[1] == int(inp["d_k"]), f"Q has shape {Q.shape} but d_k is {inp['d_k']}"
    V = np.zeros((K.shape[0], 1))  # (T, 1) only the weights are shown
    _, scaled = att.scaled_dot_product_attention(Q, K, V)  # (T, T) scale 1/sqrt(d_k)
    _, unscaled = att.scaled_dot_product_attention(Q, K, V, scale=1.0)  # (T, T)
    return Expected(scaled, None, [unscaled, scaled])
