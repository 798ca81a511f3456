"""Lesson 05's browser expectation (kind positions): what the page of
``helpers.explorers.nb05`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, get_array

import helpers.attention as att


@expects("positions")
def positions(inp: dict) -> Expected:
    """05: one head on X + P (sinusoids or a learned table), or with Q and K rotated; every position shifted."""
    from helpers import positions as pos

    X, W_q, W_k, W_v = (get_array(inp, n, "positions") for n in ("X", "W_q", "W_k", "W_v"))
    T, d = X.shape
    shift, encoding, on = int(inp["shift"]), inp["encoding"], bool(inp["positions"])
    p = np.arange(T) + shift  # (T,) the positions s .. s+T-1
    P = np.zeros((T, d))  # (T, d_model)
    if on and encoding == "sinusoidal":
        P = pos.sinusoidal_positions(T + shift, d)[shift:]  # (T, d_model)
    elif on and encoding == "learned":
        table = pos.learned_positions(T + int(inp["max_shift"]), d, np.random.default_rng(int(inp["seed"])))
        P = table[p]  # (T, d_model)
    np.testing.assert_array_equal(get_array(inp, "p", "positions"), p, err_msg="data-state p != shift + arange(T)")
    np.testing.assert_allclose(get_array(inp, "P", "positions"), P, rtol=0, atol=1e-12, err_msg="data-state P")
    Q, K, V = att.project_qkv(X + P, W_q, W_k, W_v)  # (T, d_k), (T, d_k), (T, d_v)
    if on and encoding == "rotary":
        Q, K = pos.rotary(Q, positions=p), pos.rotary(K, positions=p)
    out, w = att.scaled_dot_product_attention(Q, K, V)  # (T, d_v), (T, T)
    return Expected(w, out, [w])
