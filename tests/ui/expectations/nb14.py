"""Lesson 14's browser expectations (kinds sink, bounded-scores, layer-pattern, delta-rule): what the pages of
``helpers.explorers.nb14`` show, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects, number_array

import helpers.attention as att


@expects("sink")
def sink(inputs: dict) -> Expected:
    """14: one causal head with a sink logit; its weights (T, T) and the sink's column 1 − row sum, then plain softmax.

    Independent of the explorer's path: the formula exp(s) / (exp(sink) + Σ exp(s)) on the unmasked entries."""
    missing = [n for n in ("X", "W_q", "W_k", "W_v", "sink_logit") if n not in inputs]
    assert not missing, f"data-state of a 'sink' explorer lacks {missing}; it has {sorted(inputs)}"
    X, W_q, W_k, W_v = (number_array(inputs[n]) for n in ("X", "W_q", "W_k", "W_v"))
    Q, K, V = att.project_qkv(X, W_q, W_k, W_v)  # (T, d_k), (T, d_k), (T, d_v)
    T = X.shape[0]
    e = np.exp(Q @ K.T / np.sqrt(Q.shape[1])) * att.causal_mask(T)  # (T, T) 0 above the diagonal (small scores here)
    w = e / (np.exp(float(inputs["sink_logit"])) + e.sum(axis=1, keepdims=True))  # (T, T)
    plain = e / e.sum(axis=1, keepdims=True)  # (T, T)
    main = np.concatenate([w, 1 - w.sum(axis=1, keepdims=True)], axis=1)  # (T, T + 1)
    ref = np.concatenate([plain, np.zeros((T, 1))], axis=1)  # (T, T + 1)
    return Expected(w, w @ V, [main, ref])


@expects("bounded-scores")
def bounded_scores(inputs: dict) -> Expected:
    """14: queries = keys = 10^m · X; plain softmax, after QK-norm with gain g, after soft-capping at c (formulas)."""
    missing = [n for n in ("X", "m", "gain", "cap") if n not in inputs]
    assert not missing, f"data-state of a 'bounded-scores' explorer lacks {missing}; it has {sorted(inputs)}"
    X = number_array(inputs["X"])  # (T, d)
    d, a, g, c = X.shape[1], 10.0 ** float(inputs["m"]), float(inputs["gain"]), float(inputs["cap"])
    A = a * X  # (T, d)
    An = A / np.sqrt((A**2).mean(axis=1, keepdims=True) + 1e-6) * g  # (T, d) RMS norm, gain g on every feature
    raw, normed = A @ A.T / np.sqrt(d), An @ An.T / np.sqrt(d)  # (T, T) each
    ws = [att.softmax(raw), att.softmax(normed), att.softmax(c * np.tanh(raw / c))]
    return Expected(ws[1], None, ws)


@expects("layer-pattern")
def layer_pattern(inputs: dict) -> Expected:
    """14: the band mask of one local layer, and the reach after the layers by paths (a loop, not a matrix product)."""
    missing = [n for n in ("T", "local_per_global", "window", "n_layers") if n not in inputs]
    assert not missing, f"data-state of a 'layer-pattern' explorer lacks {missing}; it has {sorted(inputs)}"
    T, r, w, L = (int(inputs[n]) for n in ("T", "local_per_global", "window", "n_layers"))
    band = np.array([[float(i - w < j <= i) for j in range(T)] for i in range(T)])  # (T, T)
    reach = [{i} for i in range(T)]  # token i depends on these tokens
    for layer in range(L):
        is_global = (layer + 1) % (r + 1) == 0
        reach = [set().union(*(reach[j] for j in range(i + 1) if is_global or i - j < w)) for i in range(T)]
    R = np.array([[float(j in reach[i]) for j in range(T)] for i in range(T)])  # (T, T)
    return Expected(R, None, [band, R])


@expects("delta-rule")
def delta_rule(inputs: dict) -> Expected:
    """14: the recall toy's readouts, from the writes K → V in the data-state, by the defining recurrences."""
    from helpers.modern import recall_task

    missing = [n for n in ("K", "V", "n", "beta", "alpha", "d_k", "d_v", "seed") if n not in inputs]
    assert not missing, f"data-state of a 'delta-rule' explorer lacks {missing}; it has {sorted(inputs)}"
    K, V = number_array(inputs["K"]), number_array(inputs["V"])  # (n, d_k), (n, d_v)
    K2, V2, latest = recall_task(int(inputs["n"]), int(inputs["d_k"]), int(inputs["d_v"]),
                                 np.random.default_rng(int(inputs["seed"])))
    np.testing.assert_allclose(K, K2, rtol=0, atol=1e-12, err_msg="data-state K != recall_task's")
    np.testing.assert_allclose(V, V2, rtol=0, atol=1e-12, err_msg="data-state V != recall_task's")
    beta, alpha = float(inputs["beta"]), float(inputs["alpha"])
    d_k = K.shape[1]
    S_lin, S_delta = np.zeros((V.shape[1], d_k)), np.zeros((V.shape[1], d_k))  # (d_v, d_k) each
    for k, v in zip(K, V, strict=True):
        S_lin = alpha * S_lin + beta * np.outer(v, k)
        S_delta = alpha * S_delta @ (np.eye(d_k) - beta * np.outer(k, k)) + beta * np.outer(v, k)
    lin, delta = S_lin.T, S_delta.T  # (d_k, d_v): row s = S e_s
    target = np.where(latest[:, None] >= 0, V[np.maximum(latest, 0)], np.nan)  # (d_k, d_v)
    return Expected(delta, lin, [lin, delta, target])
