"""Lesson 10's browser expectation (kind long-context): what the page of
``helpers.explorers.nb10`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

from expected import Expected, expects, number_array

import helpers.attention as att


@expects("long-context")
def long_context(inputs: dict) -> Expected:
    """10: one causal multi-head layer, computed as the chosen method; full causal attention below.

    Independent of the explorer's own path where it can be: latent attention in its plain (not absorbed)
    form, linear attention's output by its recurrent form."""
    from helpers import longcontext as lc

    missing = [n for n in ("X", "W_q", "W_k", "W_v", "n_heads", "method", "window", "d_c") if n not in inputs]
    assert not missing, f"data-state of a 'long-context' explorer lacks {missing}; it has {sorted(inputs)}"
    X, W_q, W_k, W_v = (number_array(inputs[n]) for n in ("X", "W_q", "W_k", "W_v"))
    h, method, T = int(inputs["n_heads"]), inputs["method"], X.shape[0]
    causal = att.causal_mask(T)
    if method == "full":
        out, w = att.multi_head_attention(X, W_q, W_k, W_v, h, mask=causal)  # (T, h·d_v), (h, T, T)
    elif method == "sliding window":
        out, w = att.multi_head_attention(X, W_q, W_k, W_v, h, mask=lc.sliding_window_mask(T, int(inputs["window"])))
    elif method == "latent":
        W_dkv, W_uk, W_uv = lc.low_rank_kv(W_k, W_v, int(inputs["d_c"]), X=X)
        out, w = lc.latent_attention(X, W_q, W_dkv, W_uk, W_uv, h, mask=causal)  # plain: K and V formed
    elif method == "linear":
        Q, K, V = (att.split_heads(M, h) for M in att.project_qkv(X, W_q, W_k, W_v))  # (h, T, d) each
        w = lc.linear_attention_weights(Q, K)  # (h, T, T)
        out = att.merge_heads(lc.linear_attention_recurrent(Q, K, V))  # (h, T, d_v) -> (T, h·d_v)
    else:
        raise AssertionError(f"unknown method {method!r} in the data-state of a 'long-context' explorer")
    _, full = att.multi_head_attention(X, W_q, W_k, W_v, h, mask=causal)  # (h, T, T)
    return Expected(w, out, [*w, *full])
