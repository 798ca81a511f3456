"""Lesson 09's browser expectation (kind generation): what the page of
``helpers.explorers.nb09`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, number_array

import helpers.attention as att


@expects("generation")
def generation(inputs: dict) -> Expected:
    """09: tokens 1..step decoded with a cache = causal grouped-query attention on X[:step], last row."""
    missing = [n for n in ("X", "W_q", "W_k", "W_v", "W_k_heads", "W_v_heads", "n_heads", "n_kv_heads", "step")
               if n not in inputs]
    assert not missing, f"data-state of a 'generation' explorer lacks {missing}; it has {sorted(inputs)}"
    from helpers.generation import grouped_query_attention, mean_pool_kv_heads

    X, W_q, W_k, W_v = (number_array(inputs[n]) for n in ("X", "W_q", "W_k", "W_v"))
    h, g, step = int(inputs["n_heads"]), int(inputs["n_kv_heads"]), int(inputs["step"])
    for name, pooled in (("W_k", W_k), ("W_v", W_v)):  # the shared heads are the mean of each group's heads
        np.testing.assert_allclose(pooled, mean_pool_kv_heads(number_array(inputs[f"{name}_heads"]), h, g),
                                   rtol=0, atol=1e-12, err_msg=f"data-state {name} != its mean-pooled heads")
    Xs = X[:step]  # (t, d_in) the tokens generated so far
    out, w = grouped_query_attention(Xs, W_q, W_k, W_v, h, g, mask=att.causal_mask(step))  # (t, h·d_head), (h, t, t)
    d_head = W_k.shape[1] // g
    K = (Xs @ W_k).reshape(step, g, d_head)  # (t, g·d_head) -> (t, g, d_head)
    V = (Xs @ W_v).reshape(step, g, d_head)  # (t, g, d_head)
    tables = [w[:, -1, :], *(K[:, j] for j in range(g)), *(V[:, j] for j in range(g))]  # (h, t), then (t, d_head)
    return Expected(w[:, -1, :], out[-1], tables)
