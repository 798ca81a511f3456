"""What helpers.attention computes for an explorer's state (the JSON of its readout's data-state).

``expected(state)`` maps the explorer kind (of ``helpers.explorers.REGISTRY``) to helper calls and returns
``Expected``: the weights and output the data-state must hold, and the matrix of every heatmap table
in the order the page shows them. The browser tests compare the numbers printed in the heatmaps'
cells with ``cell_texts`` of these (the format of ``helpers.panels.format_matrix``). A registered kind
missing from ``KINDS`` fails ``tests/test_registry.py`` (a normal test), so a new explorer cannot go
unchecked: adding an explorer means adding one function here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

import helpers.attention as att
from helpers.panels import STEP_KEYS, format_matrix
from helpers.training import train


class Expected(NamedTuple):
    weights: np.ndarray
    output: np.ndarray | None
    tables: list[np.ndarray]  # every heatmap table, in page order


def number_array(x: object) -> np.ndarray:
    """A data-state value as a float array; the strings "nan", "inf", "-inf" become those floats."""
    if isinstance(x, str):
        return np.asarray(float(x))
    if isinstance(x, list):
        return np.asarray([number_array(v) for v in x], dtype=float)
    return np.asarray(x, dtype=float)


def _get(inputs: dict, name: str, kind: str) -> np.ndarray:
    if name not in inputs:
        raise KeyError(f"data-state of a {kind!r} explorer has no input {name!r}; it has {sorted(inputs)}")
    return number_array(inputs[name])


def _steps(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float) -> Expected:
    """The weights heatmap, then the seven panels of the step view."""
    st = att.attention_steps(Q, K, V, scale)
    return Expected(st["weights"], st["output"], [st["weights"], *(st[k] for k in STEP_KEYS)])


def _no_weights(inp: dict) -> Expected:
    X = _get(inp, "X", "no-weights")  # (T, d)
    return _steps(X, X, X, float(inp["scale"]))


def _qkv(inp: dict) -> Expected:
    X, W_q, W_k, W_v = (_get(inp, n, "qkv") for n in ("X", "W_q", "W_k", "W_v"))
    return _steps(*att.project_qkv(X, W_q, W_k, W_v), float(inp["scale"]))


def _scaling(inp: dict) -> Expected:
    Q, K = _get(inp, "Q", "scaling"), _get(inp, "K", "scaling")  # (T, d_k) each
    assert Q.shape[1] == int(inp["d_k"]), f"Q has shape {Q.shape} but d_k is {inp['d_k']}"
    V = np.zeros((K.shape[0], 1))  # (T, 1) only the weights are shown
    _, scaled = att.scaled_dot_product_attention(Q, K, V)  # (T, T) scale 1/sqrt(d_k)
    _, unscaled = att.scaled_dot_product_attention(Q, K, V, scale=1.0)  # (T, T)
    return Expected(scaled, None, [unscaled, scaled])


_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


def _overflow(inp: dict) -> Expected:
    pattern = _get(inp, "pattern", "overflow")  # (T, T)
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
    return Expected(stable, None, [scores, naive, stable])


def _multihead(inp: dict) -> Expected:
    X, W_q, W_k, W_v = (_get(inp, n, "multihead") for n in ("X", "W_q", "W_k", "W_v"))
    out, w = att.multi_head_attention(X, W_q, W_k, W_v, int(inp["n_heads"]))  # (T, d_model), (h, T, T)
    return Expected(w, out, list(w))


def _softmax_row(inp: dict) -> Expected:
    w = np.atleast_2d(att.softmax(_get(inp, "scores", "widget-check")))  # (1, T)
    return Expected(w, None, [w])


def _positions(inp: dict) -> Expected:
    """05: one head on X + P (sinusoids or a learned table), or with Q and K rotated; every position shifted."""
    from helpers import positions as pos

    X, W_q, W_k, W_v = (_get(inp, n, "positions") for n in ("X", "W_q", "W_k", "W_v"))
    T, d = X.shape
    shift, encoding, on = int(inp["shift"]), inp["encoding"], bool(inp["positions"])
    p = np.arange(T) + shift  # (T,) the positions s .. s+T-1
    P = np.zeros((T, d))  # (T, d_model)
    if on and encoding == "sinusoidal":
        P = pos.sinusoidal_positions(T + shift, d)[shift:]  # (T, d_model)
    elif on and encoding == "learned":
        table = pos.learned_positions(T + int(inp["max_shift"]), d, np.random.default_rng(int(inp["seed"])))
        P = table[p]  # (T, d_model)
    np.testing.assert_array_equal(_get(inp, "p", "positions"), p, err_msg="data-state p != shift + arange(T)")
    np.testing.assert_allclose(_get(inp, "P", "positions"), P, rtol=0, atol=1e-12, err_msg="data-state P")
    Q, K, V = att.project_qkv(X + P, W_q, W_k, W_v)  # (T, d_k), (T, d_k), (T, d_v)
    if on and encoding == "rotary":
        Q, K = pos.rotary(Q, positions=p), pos.rotary(K, positions=p)
    out, w = att.scaled_dot_product_attention(Q, K, V)  # (T, d_v), (T, T)
    return Expected(w, out, [w])


def _rates(inp: dict) -> Expected:
    """07: a rate measured by nudging: each part's value at the point, nudged by ε, (f(x + ε) − f(x))/ε, the rule's."""
    from helpers.rates import FUNCTIONS

    s, eps = float(inp["s"]), float(inp["eps"])  # eps is the menu's text, e.g. "0.01"
    rows = []
    for part in FUNCTIONS[inp["function"]]:
        x = part.at(s)  # s, or u = e^s for a chain's outer part
        at, nudged = part.f(x), part.f(x + eps)
        rows.append([at, nudged, (nudged - at) / eps] + ([part.rule(s)] if inp["rule"] else []))
    table = np.array(rows)  # (parts, 3 or 4)
    return Expected(table, None, [table])


_TRAIN_ARGS = ("steps", "seed", "lr", "snapshot_every", "batch_size", "T", "n_vocab", "d_k", "d_v", "n_eval")


@functools.lru_cache(maxsize=8)
def _run(task: str, args: tuple) -> object:
    return train(task, **dict(zip(_TRAIN_ARGS, args, strict=True)))


def _training(inputs: dict) -> Expected:
    missing = [n for n in ("task", "step", "probe", *_TRAIN_ARGS) if n not in inputs]
    assert not missing, f"data-state of a 'training' explorer lacks {missing}; it has {sorted(inputs)}"
    args = tuple(float(inputs[n]) if n == "lr" else int(inputs[n]) for n in _TRAIN_ARGS)
    run = _run(str(inputs["task"]), args)
    snaps = {s.step: s for s in run.snapshots}
    step = int(inputs["step"])
    assert step in snaps, f"step {step} is not a snapshot step of this run ({sorted(snaps)})"
    np.testing.assert_array_equal(number_array(inputs["probe"]), run.probe, err_msg="data-state probe != train's")
    weights = snaps[step].weights  # (T, T) the probe's attention weights after `step` updates
    return Expected(weights, None, [weights])


def _masks(inputs: dict) -> Expected:
    missing = [n for n in ("X", "W_q", "W_k", "W_v", "mask") if n not in inputs]
    assert not missing, f"data-state of a 'masks' explorer lacks {missing}; it has {sorted(inputs)}"
    X, W_q, W_k, W_v = (number_array(inputs[n]) for n in ("X", "W_q", "W_k", "W_v"))
    mask = np.asarray(inputs["mask"])  # (T, T) from JSON true/false
    assert mask.dtype == bool, f"data-state mask must hold true/false, got dtype {mask.dtype}"
    out, w = att.single_head_attention(X, W_q, W_k, W_v, mask=mask)  # (T, d_v), (T, T)
    _, w_all = att.single_head_attention(X, W_q, W_k, W_v)  # (T, T) no mask
    return Expected(w, out, [w, w_all, out])


def _tiles(inputs: dict) -> Expected:
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


def _generation(inputs: dict) -> Expected:
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


def _long_context(inputs: dict) -> Expected:
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


_INDUCTION_ARGS = ("steps", "seed", "lr", "batch_size", "T", "n_letters", "d_head", "periods", "snapshot_every", "n_eval",
                   "layer1")


@functools.lru_cache(maxsize=4)
def _run_induction(args: tuple) -> object:
    from helpers.induction import train as induction_train

    return induction_train(**dict(zip(_INDUCTION_ARGS, args, strict=True)))


def _induction(inputs: dict) -> Expected:
    missing = [n for n in ("step", "layer", "probe", *_INDUCTION_ARGS) if n not in inputs]
    assert not missing, f"data-state of an 'induction' explorer lacks {missing}; it has {sorted(inputs)}"
    args = tuple(float(inputs[n]) if n == "lr" else tuple(int(p) for p in inputs[n]) if n == "periods"
                 else bool(inputs[n]) if n == "layer1" else int(inputs[n]) for n in _INDUCTION_ARGS)
    run = _run_induction(args)
    snaps = {s.step: s for s in run.snapshots}
    step = int(inputs["step"])
    assert step in snaps, f"step {step} is not a snapshot step of this run ({sorted(snaps)})"
    np.testing.assert_array_equal(number_array(inputs["probe"]), run.probe, err_msg="data-state probe != train's")
    s = snaps[step]
    main, other = (s.weights2, s.weights1) if inputs["layer"] == "layer 2" else (s.weights1, s.weights2)  # (T, T) each
    return Expected(main, None, [main, other, s.probe_loss[None]])  # the loss row (1, T-1)


def _sink(inputs: dict) -> Expected:
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


def _bounded_scores(inputs: dict) -> Expected:
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


def _layer_pattern(inputs: dict) -> Expected:
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


def _delta_rule(inputs: dict) -> Expected:
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
def _language_model(inputs: dict) -> Expected:
    """12: the text by ``language_model.generate`` (no trace), then one full forward pass over it (no cache):
    the next-character distribution's top 10 and each head's attention row of the newest character."""
    missing = [n for n in ("prompt", "temperature", "top_k", "step", "n_new", "seed", "window") if n not in inputs]
    assert not missing, f"data-state of a 'language-model' explorer lacks {missing}; it has {sorted(inputs)}"
    from helpers import language_model as lm

    config, params, tokenizer = lm.load_model()
    params = {k: v.astype(np.float64) for k, v in params.items()}  # the explorer's float64 model
    n_new, step, window, V = int(inputs["n_new"]), int(inputs["step"]), int(inputs["window"]), config.vocab_size
    ids = tokenizer.encode(inputs["prompt"], errors="replace")[-(config.context - n_new):]  # (T0,)
    top_k = int(inputs["top_k"])
    temperature = float(inputs["temperature"])
    tokens = lm.generate(config, params, ids, n_new, temperature=temperature, top_k=None if top_k >= V else top_k,
                         seed=int(inputs["seed"]))  # (T0 + n_new,)
    t = len(ids) + step
    z = lm.forward(config, params, tokens[:t])[-1]  # (V,) logits after the newest character
    if temperature == 0:
        p = (np.arange(V) == np.argmax(z)).astype(float)  # (V,)
    else:
        z = z / temperature
        if top_k < V:
            z = np.where(z >= np.sort(z)[-top_k], z, -np.inf)  # (V,) the top k (ties kept)
        p = np.exp(z - z.max())
        p /= p.sum()  # (V,)
    top = np.argsort(-p, kind="stable")[:10]  # (10,)
    rows = lm.attention_weights(config, params, tokens[:t])[:, :, -1, max(0, t - window):]  # (L, h, keep)
    return Expected(rows, p[top], [p[top][None], *rows])
@functools.lru_cache(maxsize=1)
def _model() -> tuple:
    from helpers.language_model import load_model

    return load_model()


def _heads(inputs: dict) -> Expected:
    """13: the chosen head's weights with the removed heads ablated; next-character probabilities of the 8 likeliest
    symbols with every head, with every head and without the removed ones."""
    from helpers.heads import head_weights
    from helpers.language_model import forward

    missing = [n for n in ("text", "layer", "head", "ablate") if n not in inputs]
    assert not missing, f"data-state of a 'heads' explorer lacks {missing}; it has {sorted(inputs)}"
    config, params, tokenizer = _model()
    ids = tokenizer.encode(inputs["text"])  # (T,)
    ablate = [tuple(int(v) for v in pair) for pair in inputs["ablate"]]
    w = head_weights(config, params, ids, ablate=ablate)[int(inputs["layer"]), int(inputs["head"])]  # (T, T)
    probs = []
    for cut in ((), ablate):
        z = forward(config, params, ids, ablate=cut)[-1].astype(np.float64)  # (V,)
        z = np.exp(z - z.max())
        probs.append(z / z.sum())  # (V,)
    top = np.argsort(-probs[0], kind="stable")[:8]  # (8,) the likeliest with every head
    table = np.stack([p[top] for p in probs])  # (2, 8)
    return Expected(w, table, [w, table])


KINDS: dict[str, Callable[[dict], Expected]] = {
    "no-weights": _no_weights,
    "qkv": _qkv,
    "scaling": _scaling,
    "overflow": _overflow,
    "multihead": _multihead,
    "widget-check": _softmax_row,
    "positions": _positions,
    "rates": _rates,
    "training": _training,
    "induction": _induction,
    "masks": _masks,
    "tiles": _tiles,
    "generation": _generation,
    "long-context": _long_context,
    "sink": _sink,
    "bounded-scores": _bounded_scores,
    "layer-pattern": _layer_pattern,
    "delta-rule": _delta_rule,
    "language-model": _language_model,
    "heads": _heads,
}


def expected(state: dict) -> Expected:
    """What helpers.attention gives for ``state["inputs"]`` of an explorer of ``state["kind"]``."""
    kind = state.get("kind")
    if kind not in KINDS:
        raise KeyError(
            f"no helper call known for explorer kind {kind!r} (known: {sorted(KINDS)}); add it to {__file__}"
        )
    return KINDS[kind](state.get("inputs", {}))


def cell_texts(matrices: list[np.ndarray]) -> list[list[str]]:
    """Every heatmap's cell texts, row by row, as the page prints them (one list per table)."""
    return [[t for row in format_matrix(m) for t in row] for m in matrices]
