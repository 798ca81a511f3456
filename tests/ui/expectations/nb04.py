"""Lesson 04's browser expectation (kind multihead): what the page of
``helpers.explorers.nb04`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

from expected import Expected, expects, get_array

import helpers.attention as att


@expects("multihead")
def multihead(inp: dict) -> Expected:
    X, W_q, W_k, W_v = (get_array(inp, n, "multihead") for n in ("X", "W_q", "W_k", "W_v"))
    out, w = att.multi_head_attention(X, W_q, W_k, W_v, int(inp["n_heads"]))  # (T, d_model), (h, T, T)
    return Expected(w, out, list(w), main=len(w))  # one view: a table per head
