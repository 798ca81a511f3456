"""Lesson 08's browser expectation (kind tiles): what the page of
``helpers.explorers.nb08`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, number_array

import helpers.attention as att


@expects("tiles")
def tiles(inputs: dict) -> Expected:
    missing = [n for n in ("Q", "K", "V", "block_size", "block") if n not in inputs]
    assert not missing, f"data-state of a 'tiles' explorer lacks {missing}; it has {sorted(inputs)}"
    Q, K, V = (number_array(inputs[n]) for n in ("Q", "K", "V"))  # (T_q, d_k), (T_k, d_k), (T_k, d_v)
    size, block = int(inputs["block_size"]), int(inputs["block"])
    start, stop = (block - 1) * size, min(block * size, K.shape[0])  # this block: keys start..stop-1
    assert 0 <= start < stop, f"block {block} of size {size} lies beyond the {K.shape[0]} keys"
    seen = att.attention_steps(Q, K[:stop], V[:stop])  # every key up to this block, scale 1/sqrt(d_k)
    m = seen["scaled"].max(axis=-1, keepdims=True)  # (T_q, 1) the running max
    if start == 0:
        rescale = np.zeros_like(m)  # (T_q, 1) nothing summed before the first block
    else:
        before = att.attention_steps(Q, K[:start], V[:start])["scaled"].max(axis=-1, keepdims=True)  # (T_q, 1)
        rescale = np.exp(before - m)  # (T_q, 1)
    output, weights = att.scaled_dot_product_attention(Q, K, V)  # (T_q, d_v), (T_q, T_k) the full computation
    tables = [seen["scaled"][:, start:stop], m, rescale, seen["row_sums"], seen["output"], weights, output]
    return Expected(weights, seen["output"], tables)
