"""Lesson 16's browser expectation (kind causal-corner): what the page of ``helpers.explorers.nb16`` shows,
recomputed from the data-state with ``helpers`` (found by ``expected.py``). The two masks are written out here
(top-left: query i reads keys 0 .. i; lower-right: keys 0 .. i + T − n), not taken from the explorer."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, number_array

import helpers.attention as att


@expects("causal-corner")
def causal_corner(inputs: dict) -> Expected:
    missing = [n for n in ("X", "W_q", "W_k", "W_v", "n_queries") if n not in inputs]
    assert not missing, f"data-state of a 'causal-corner' explorer lacks {missing}; it has {sorted(inputs)}"
    X, W_q, W_k, W_v = (number_array(inputs[n]) for n in ("X", "W_q", "W_k", "W_v"))
    n, T = int(inputs["n_queries"]), X.shape[0]
    Q, K, V = att.project_qkv(X, W_q, W_k, W_v)  # (T, d_k) each
    top_left = np.tril(np.ones((n, T), dtype=bool))  # (n, T) query i reads keys 0 .. i
    lower_right = np.tril(np.ones((n, T), dtype=bool), k=T - n)  # (n, T) query i reads keys 0 .. i + T − n
    _, w_top = att.scaled_dot_product_attention(Q[T - n:], K, V, top_left)  # (n, T)
    out, w_low = att.scaled_dot_product_attention(Q[T - n:], K, V, lower_right)  # (n, d_v), (n, T)
    return Expected(w_low, out, [w_top, w_low])
