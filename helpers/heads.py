"""What each head of a trained model does: measurements on attention weights, ablations and circuits (lesson 13).

Shape notation: ``L`` layers, ``h`` heads, ``T`` tokens, ``V`` symbols, ``d_model`` the residual stream's
width, ``d_head`` = d_model / h, ``B`` sequences in a batch. Layers, heads and positions count from 0, as
the arrays index them: head (1, 1) is head 1 of layer 1, the model's second layer.

Measurements of an attention pattern ``weights`` (..., T, T) (rows queries, columns keys, causal):

    previous_token_score   mean over queries i >= 1 of the weight on key i − 1 (a pure previous-token head: 1)
    weight_by_offset       for k = 0 .. n − 1, mean over queries i >= k of the weight on key i − k (k = 1: the
                           previous-token score)
    induction_score        on a text of n symbols repeated twice (2n tokens): mean over j = 0 .. n − 1 of the
                           weight from query n + j (the second copy) to key j + 1, the token that followed the
                           first occurrence of the query's symbol (a pure induction pattern: 1)
    first_position_weight  mean over queries i >= 1 of the weight on key 0 (query 0 has only key 0)
    key_share              mean over queries of the weight on the keys a boolean mask picks (e.g. spaces)
    entropy                mean over queries of −Σ_j w_ij ln w_ij, in nats (all on one key: 0; even over
                           i + 1 keys: ln(i + 1))

On the model (``helpers.language_model``): ``head_weights`` and ``run_with_weights`` (with heads ablated:
their output set to 0 before W_o), ``induction_probe``, ``induction_scores`` (optionally with the ablation
reaching only the keys or only the queries: key-only or query-only patching) and ``repeated_loss`` (the
training log's measurements, which ``helpers.lm_train`` imports from here), ``position_losses`` and
``mean_loss``, ``ablation_effects`` (loss changes with each head removed), ``without_mlp`` (zero or mean
ablation of an MLP), ``k_composition`` with ``k_composition_score`` and two baselines,
``k_composition_baseline`` (Gaussian matrices of the same shapes) and ``k_composition_rotated`` (the trained
matrices turned by random rotations: the same singular values) (Elhage et al. 2021),
``ov_circuit`` / ``qk_circuit`` (a head's matrices read through the embeddings) with ``diagonal_share``,
and ``char_labels`` for axis labels.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import softmax_in_place
from helpers.language_model import (
    GPTConfig,
    attention_weights_unchecked,
    check_ablate,
    check_config,
    check_params,
    check_tokens,
    forward_unchecked,
)
from helpers.layers import LN_EPS
from helpers.numerics import log_softmax_unchecked
from helpers.validate import as_numeric, check_bool_matrix, check_int, check_weights_range

__all__ = [
    "previous_token_score",
    "weight_by_offset",
    "induction_score",
    "first_position_weight",
    "key_share",
    "entropy",
    "head_weights",
    "run_with_weights",
    "char_labels",
    "induction_probe",
    "induction_scores",
    "repeated_loss",
    "position_losses",
    "mean_loss",
    "ablation_effects",
    "without_mlp",
    "k_composition",
    "k_composition_baseline",
    "k_composition_rotated",
    "k_composition_score",
    "ov_circuit",
    "qk_circuit",
    "diagonal_share",
]


# --------------------------------------------------------------------------- measurements of a pattern


def _pattern(weights: object, name: str = "weights", min_T: int = 1) -> np.ndarray:
    """``weights`` (..., T, T) as float64, square in its last two axes, T >= min_T, values in [0, 1]."""
    w = as_numeric(weights, name, min_ndim=2).astype(np.float64)  # (..., T, T)
    if w.shape[-1] != w.shape[-2]:
        raise ValueError(f"{name} must be square in its last two axes (queries × keys), got shape {w.shape}")
    if w.shape[-1] < min_T:
        raise ValueError(
            f"{name} has T = {w.shape[-1]} tokens (shape {w.shape}); this measurement needs at least {min_T}"
        )
    check_weights_range(w, name)
    return w


def previous_token_score(weights: object) -> np.ndarray:
    """(...,) mean over queries i >= 1 of the weight on key i − 1, for weights (..., T, T), T >= 2."""
    w = _pattern(weights, min_T=2)  # (..., T, T)
    T = w.shape[-1]
    return w[..., np.arange(1, T), np.arange(T - 1)].mean(axis=-1)  # (..., T − 1) -> (...,)


def weight_by_offset(weights: object, n: int) -> np.ndarray:
    """(..., n) entry k: mean over queries i >= k of the weight on key i − k, for weights (..., T, T), 1 <= n <= T."""
    w = _pattern(weights)  # (..., T, T)
    T = w.shape[-1]
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= T:
        raise ValueError(f"n must be an integer from 1 to T = {T} (weights shape {w.shape}), got {n!r}")
    return np.stack([w[..., np.arange(k, T), np.arange(T - k)].mean(axis=-1) for k in range(n)], axis=-1)


def induction_score(weights: object) -> np.ndarray:
    """(...,) on a text repeated twice (T = 2n): mean over j < n of the weight from query n + j to key j + 1."""
    w = _pattern(weights, min_T=2)  # (..., 2n, 2n)
    if w.shape[-1] % 2:
        raise ValueError(f"weights has T = {w.shape[-1]} (shape {w.shape}): an induction probe is n symbols "
                         "repeated twice, so T must be even")
    n = w.shape[-1] // 2
    j = np.arange(n)
    return w[..., n + j, j + 1].mean(axis=-1)  # (..., n) -> (...,)


def first_position_weight(weights: object) -> np.ndarray:
    """(...,) mean over queries i >= 1 of the weight on key 0, for weights (..., T, T), T >= 2."""
    w = _pattern(weights, min_T=2)  # (..., T, T)
    return w[..., 1:, 0].mean(axis=-1)  # (..., T − 1) -> (...,)


def key_share(weights: object, keys: object) -> np.ndarray:
    """(...,) mean over queries of the weight on the keys where ``keys`` (T,) is True (e.g. the spaces)."""
    w = _pattern(weights)  # (..., T, T)
    mask = check_bool_matrix(np.atleast_2d(keys), "keys")[0] if np.ndim(keys) == 1 else None
    if mask is None or mask.shape != (w.shape[-1],):
        raise ValueError(f"keys must be a boolean vector (T,) = ({w.shape[-1]},), one per key, "
                         f"got shape {np.shape(keys)}")
    return (w * mask).sum(axis=-1).mean(axis=-1)  # (..., T, T) -> (..., T) -> (...,)


def entropy(weights: object) -> np.ndarray:
    """(...,) mean over queries of the entropy −Σ_j w_ij ln w_ij of each row, in nats (float64)."""
    w = _pattern(weights)  # (..., T, T)
    terms = np.where(w > 0, -w * np.log(np.where(w > 0, w, 1.0)), 0.0)  # (..., T, T); 0 ln 0 = 0
    return terms.sum(axis=-1).mean(axis=-1)  # (..., T) -> (...,)


# --------------------------------------------------------------------------- on the model


def _model(config: object, params: object, ablate: object) -> tuple[GPTConfig, dict, tuple]:
    config = check_config(config)
    return config, check_params(config, params), check_ablate(config, ablate)


def head_weights(config: GPTConfig, params: dict, tokens: object, *, ablate: object = ()) -> np.ndarray:
    """(L, h, T, T) every head's attention weights on one sequence (T,), with the heads in ``ablate`` removed."""
    config, params, ablate = _model(config, params, ablate)
    tokens = check_tokens(tokens, "tokens", config, ndims=(1,))  # (T,)
    return attention_weights_unchecked(config, params, tokens[None], ablate)[:, 0]  # (L, h, T, T)


def run_with_weights(config: GPTConfig, params: dict, tokens: object, *,
                     ablate: object = ()) -> tuple[np.ndarray, np.ndarray]:
    """(logits (T, V), attention weights (L, h, T, T)) of one sequence (T,) in one pass, heads in ``ablate`` removed."""
    config, params, ablate = _model(config, params, ablate)
    tokens = check_tokens(tokens, "tokens", config, ndims=(1,))  # (T,)
    logits, fwd = forward_unchecked(config, params, tokens[None], keep=True, ablate=ablate)  # (1, T, V)
    return logits[0], np.stack([values.P[0] for values in fwd.blocks])  # (T, V), (L, h, T, T)


def char_labels(text: str) -> list[str]:
    """One label per character, with a space shown as ␣ and a line break as ⏎ (for heatmap axes)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return [{" ": "␣", "\n": "⏎", "\t": "⇥"}.get(c, c) for c in text]


def induction_probe(vocab_size: int, n: int = 64, batch: int = 8, seed: int = 1234) -> np.ndarray:
    """(batch, 2n) rows of n random symbols (1 .. V−1) followed by the same n again."""
    rng = np.random.default_rng(seed)
    first = rng.integers(1, vocab_size, size=(batch, n))  # (batch, n)
    return np.concatenate([first, first], axis=1)  # (batch, 2n)


_ONLY = (None, "keys", "queries")


def induction_scores(config: GPTConfig, params: dict, probe: np.ndarray, *, ablate: object = (),
                     only: str | None = None) -> np.ndarray:
    """(L, h): each head's ``induction_score`` on the probe's rows (B, 2n), averaged over the rows, with the heads
    in ``ablate`` removed; ``only="keys"`` (or ``"queries"``): the removal reaches only every layer's keys (or
    queries), the rest read the full model's stream (key-only or query-only patching)."""
    config, params, ablate = _model(config, params, ablate)
    if only not in _ONLY:
        raise ValueError(f"only must be None, 'keys' or 'queries', got {only!r}")
    probe = check_tokens(probe, "probe", config, ndims=(2,))  # (B, 2n)
    if only is None:
        w = attention_weights_unchecked(config, params, probe, ablate)  # (L, B, h, 2n, 2n)
    else:
        w = _patched_weights(config, params, probe, ablate, only)  # (L, B, h, 2n, 2n)
    return induction_score(w).mean(axis=1)  # (L, B, h) -> (L, h)


def _patched_weights(config: GPTConfig, params: dict, tokens: np.ndarray, ablate: tuple, only: str) -> np.ndarray:
    """(L, B, h, T, T) every layer's attention weights with its keys (only="keys") or its queries (only="queries")
    from the run with ``ablate`` removed and the other side from the full run, for checked tokens (B, T)."""
    _, full = forward_unchecked(config, params, tokens, keep=True)
    _, cut = forward_unchecked(config, params, tokens, keep=True, ablate=ablate)
    T = tokens.shape[1]
    later = np.triu(np.ones((T, T), dtype=bool), k=1)  # (T, T) keys after the query
    out = []
    for a, b in zip(full.blocks, cut.blocks, strict=True):
        Q, K = (a.Q, b.K) if only == "keys" else (b.Q, a.K)  # (B, h, T, d_head) each, Q already / √d_head
        # (B, h, T, d_head) @ (B, h, d_head, T) -> (B, h, T, T)
        S = Q.astype(np.float64) @ K.astype(np.float64).swapaxes(-1, -2)
        S[..., later] = -np.inf  # causal mask
        out.append(softmax_in_place(S))  # (B, h, T, T)
    return np.stack(out)  # (L, B, h, T, T)


def repeated_loss(config: GPTConfig, params: dict, probe: np.ndarray, *, ablate: object = ()) -> tuple[float, float]:
    """(loss on the first copy, loss on the second copy) of the probe's repeated random rows, in nats."""
    config, params, ablate = _model(config, params, ablate)
    probe = check_tokens(probe, "probe", config, ndims=(2,), max_T=config.context + 1)  # (B, 2n)
    n = probe.shape[1] // 2
    losses = _losses(config, params, probe, ablate)  # (B, 2n − 1): position t predicts token t + 1
    return float(losses[:, :n - 1].mean()), float(losses[:, n:].mean())


def _losses(config: GPTConfig, params: dict, ids: np.ndarray, ablate: tuple) -> np.ndarray:
    """(B, T − 1) −ln p(ids[:, t + 1]) at each position t, in float64, for checked ids (B, T)."""
    logits, _ = forward_unchecked(config, params, ids[:, :-1], ablate=ablate)  # (B, T − 1, V)
    logp = log_softmax_unchecked(logits.astype(np.float64))  # (B, T − 1, V)
    return -np.take_along_axis(logp, ids[:, 1:, None], axis=-1)[..., 0]  # (B, T − 1)


def position_losses(config: GPTConfig, params: dict, ids: object, *, ablate: object = ()) -> np.ndarray:
    """(T − 1,) the loss −ln p(next) at each position t of one text ids (T,), T <= context + 1, in nats."""
    config, params, ablate = _model(config, params, ablate)
    ids = check_tokens(ids, "ids", config, ndims=(1,), max_T=config.context + 1)  # (T,)
    if len(ids) < 2:
        raise ValueError(f"ids has {len(ids)} token: a loss needs a token and the next one")
    return _losses(config, params, ids[None], ablate)[0]  # (T − 1,)


def mean_loss(config: GPTConfig, params: dict, ids: object, *, ablate: object = ()) -> float:
    """Mean loss (nats) over every position of the rows ids (B, T), T <= context + 1, each row read alone."""
    config, params, ablate = _model(config, params, ablate)
    ids = check_tokens(ids, "ids", config, ndims=(2,), max_T=config.context + 1)  # (B, T)
    return float(_losses(config, params, ids, ablate).mean())


def ablation_effects(config: GPTConfig, params: dict, text_ids: object, probe: object) -> dict[str, np.ndarray]:
    """Each head removed alone: (L, h) tables of the change in mean loss (nats) on the rows of ``text_ids`` (B, T)
    ("text"), on the second copy of ``probe``'s rows ("repeat") and on their first copy ("repeat_first"); the losses
    with every head in place are under the same names with "_base"."""
    config, params, _ = _model(config, params, ())
    text_ids = check_tokens(text_ids, "text_ids", config, ndims=(2,), max_T=config.context + 1)
    probe = check_tokens(probe, "probe", config, ndims=(2,), max_T=config.context + 1)
    n = probe.shape[1] // 2

    def losses(cut: tuple) -> tuple[float, float, float]:
        rep = _losses(config, params, probe, cut)  # (B, 2n − 1)
        return (float(_losses(config, params, text_ids, cut).mean()), float(rep[:, n:].mean()),
                float(rep[:, :n - 1].mean()))

    names = ("text", "repeat", "repeat_first")
    base = losses(())
    out = {name: np.zeros((config.n_layers, config.n_heads)) for name in names}  # (L, h) each
    for layer in range(config.n_layers):
        for head in range(config.n_heads):
            for name, value, b in zip(names, losses(((layer, head),)), base, strict=True):
                out[name][layer, head] = value - b
    return {**out, **{f"{name}_base": b for name, b in zip(names, base, strict=True)}}


def without_mlp(config: GPTConfig, params: dict, layer: int, *, mean_over: object = None) -> dict[str, np.ndarray]:
    """A copy of ``params`` whose MLP in ``layer`` writes nothing (zero ablation: W_2 and b_2 set to 0), or, with
    ``mean_over`` rows of ids (B, T), always its mean output on them (mean ablation: W_2 = 0, b_2 = that mean)."""
    config, params, _ = _model(config, params, ())
    layer = check_int(layer, "layer", minimum=0, maximum=config.n_layers - 1)
    out = dict(params)
    W_2, b_2 = params[f"l{layer}.W_2"], params[f"l{layer}.b_2"]  # (d_ff, d_model), (d_model,)
    out[f"l{layer}.W_2"] = np.zeros_like(W_2)
    if mean_over is None:
        out[f"l{layer}.b_2"] = np.zeros_like(b_2)
        return out
    ids = check_tokens(mean_over, "mean_over", config, ndims=(2,))  # (B, T)
    _, fwd = forward_unchecked(config, params, ids, keep=True)
    mean_g = fwd.blocks[layer].g.astype(np.float64).mean(axis=0)  # (B·T, d_ff) -> (d_ff,) mean GELU output
    # (d_ff,) @ (d_ff, d_model) -> (d_model,)
    out[f"l{layer}.b_2"] = (mean_g @ W_2.astype(np.float64) + b_2).astype(b_2.dtype)
    return out


# --------------------------------------------------------------------------- circuits


def _head_matrices(config: GPTConfig, params: dict, layer: int) -> tuple[np.ndarray, ...]:
    """(W_q, W_k, W_v) (h, d_model, d_head) and W_o (h, d_head, d_model) of one layer, in float64, with the
    layer's LayerNorm gain folded into the reading matrices (diag(g) W), the bias and centring left out."""
    H, dh, D = config.n_heads, config.d_head, config.d_model
    p = f"l{layer}."
    g = params[p + "ln1.g"].astype(np.float64)[:, None]  # (d_model, 1)
    split = lambda W: W.astype(np.float64).reshape(D, H, dh).transpose(1, 0, 2)  # noqa: E731 (d_model, d_model) -> (h, d_model, d_head)
    W_q, W_k, W_v = (split(g * params[p + n]) for n in ("W_q", "W_k", "W_v"))  # (h, d_model, d_head) each
    W_o = params[p + "W_o"].astype(np.float64).reshape(H, dh, D)  # (d_model, d_model) -> (h, d_head, d_model)
    return W_q, W_k, W_v, W_o


def _k_scores(W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, W_o: np.ndarray) -> np.ndarray:
    """(h1, h2) K-composition of every (earlier head, later head): ‖W_QK W_OVᵀ‖ / (‖W_QK‖ ‖W_OV‖), Frobenius norms;
    W_v, W_o (h1, ...) of the earlier layer, W_q, W_k (h2, ...) of the later one."""
    W_ov = W_v @ W_o  # (h1, d_model, d_head) @ (h1, d_head, d_model) -> (h1, d_model, d_model)
    W_qk = W_q @ W_k.swapaxes(-1, -2)  # (h2, d_model, d_head) @ (h2, d_head, d_model) -> (h2, d_model, d_model)
    prod = W_qk[None] @ W_ov.swapaxes(-1, -2)[:, None]  # (1, h2, D, D) @ (h1, 1, D, D) -> (h1, h2, D, D)
    norm = lambda M: np.sqrt((M * M).sum(axis=(-2, -1)))  # noqa: E731 (..., D, D) -> (...,) Frobenius
    return norm(prod) / (norm(W_ov)[:, None] * norm(W_qk)[None, :])  # (h1, h2)


def k_composition_score(W_qk: object, W_ov: object) -> float:
    """‖W_QK W_OVᵀ‖_F / (‖W_QK‖_F ‖W_OV‖_F) of one later head's W_QK (d, d) and one earlier head's W_OV (d, d)."""
    A = as_numeric(W_qk, "W_qk", min_ndim=2).astype(np.float64)  # (d, d)
    B = as_numeric(W_ov, "W_ov", min_ndim=2).astype(np.float64)  # (d, d)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"W_qk and W_ov must be matrices with the same number of columns (the stream's width), "
                         f"got shapes {A.shape} and {B.shape}")
    d = A.shape[1]
    return float(_k_scores(A[None], np.eye(d)[None], B[None], np.eye(d)[None])[0, 0])  # W_q = W_qk, W_k = I


def k_composition(config: GPTConfig, params: dict, earlier: int = 0, later: int = 1) -> np.ndarray:
    """(h, h): how much each head of layer ``later`` builds its keys from what each head of layer ``earlier``
    writes (Elhage et al. 2021): ‖W_QK W_OVᵀ‖_F / (‖W_QK‖_F ‖W_OV‖_F), rows the earlier heads.

    Row vectors: head a of ``earlier`` adds x W_OV (W_OV = W_v W_o) to the stream; head b of ``later`` scores
    query x_i against key x_j as x_i W_QK x_jᵀ (W_QK = W_q W_kᵀ); a key made of head a's write scores
    x_i W_QK W_OVᵀ yᵀ. LayerNorm gains are folded in; its centring, scale and biases are left out.
    """
    config, params, _ = _model(config, params, ())
    earlier = check_int(earlier, "earlier", minimum=0, maximum=config.n_layers - 1)
    later = check_int(later, "later", minimum=earlier + 1, maximum=config.n_layers - 1)
    _, _, W_v, W_o = _head_matrices(config, params, earlier)
    W_q, W_k, _, _ = _head_matrices(config, params, later)
    return _k_scores(W_q, W_k, W_v, W_o)  # (h, h)


def k_composition_baseline(config: GPTConfig, n_draws: int = 20, seed: int = 0) -> tuple[float, float]:
    """(mean, standard deviation) of the K-composition score of random Gaussian matrices of the model's shapes
    (controls for the shapes only: Gaussian matrices stretch every direction about evenly, trained ones do not)."""
    config = check_config(config)
    n_draws = check_int(n_draws, "n_draws", minimum=1, maximum=1000)
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    D, dh, H = config.d_model, config.d_head, config.n_heads
    scores = []
    for _ in range(n_draws):
        W_q, W_k, W_v = rng.standard_normal((3, H, D, dh))  # (h, d_model, d_head) each
        W_o = rng.standard_normal((H, dh, D))  # (h, d_head, d_model)
        scores.append(_k_scores(W_q, W_k, W_v, W_o).ravel())  # (h·h,)
    s = np.concatenate(scores)  # (n_draws·h·h,)
    return float(s.mean()), float(s.std())


def k_composition_rotated(config: GPTConfig, params: dict, earlier: int = 0, later: int = 1, n_draws: int = 100,
                          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(mean (h, h), standard deviation (h, h)) of each pair's K-composition score when the earlier head's W_OV is
    turned by a random rotation R (W_OV R, R orthogonal, drawn uniformly): each matrix keeps its singular values
    (how unevenly it stretches), only the directions the two heads write and read become random."""
    config, params, _ = _model(config, params, ())
    earlier = check_int(earlier, "earlier", minimum=0, maximum=config.n_layers - 1)
    later = check_int(later, "later", minimum=earlier + 1, maximum=config.n_layers - 1)
    n_draws = check_int(n_draws, "n_draws", minimum=2, maximum=10000)
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    _, _, W_v, W_o = _head_matrices(config, params, earlier)
    W_q, W_k, _, _ = _head_matrices(config, params, later)
    D = config.d_model
    scores = []
    for _ in range(n_draws):
        Z = rng.standard_normal((D, D))  # (d_model, d_model)
        R, U = np.linalg.qr(Z)  # R orthogonal; with the signs below, uniformly distributed (Haar)
        R *= np.sign(np.diag(U))  # (d_model, d_model)
        scores.append(_k_scores(W_q, W_k, W_v, W_o @ R))  # (h, d_head, d_model) @ (d_model, d_model) -> (h, h)
    s = np.stack(scores)  # (n_draws, h, h)
    return s.mean(axis=0), s.std(axis=0)


def _embedded(config: GPTConfig, params: dict) -> np.ndarray:
    """(V, d_model) each symbol's embedding, centred and scaled as a LayerNorm does (gain and bias left out)."""
    E = params["tok_emb"].astype(np.float64)  # (V, d_model)
    E = E - E.mean(axis=1, keepdims=True)  # (V, d_model)
    return E / np.sqrt((E * E).mean(axis=1, keepdims=True) + LN_EPS)  # (V, d_model)


def ov_circuit(config: GPTConfig, params: dict, layer: int, head: int) -> np.ndarray:
    """(V, V): row a = the change in the logits when the head reads symbol a: E W_v W_o diag(g_f) W_out, with E
    the layer-normed embeddings (the direct path: later layers and LayerNorm's scale left out)."""
    config, params, pairs = _model(config, params, ((layer, head),))
    layer, head = pairs[0]
    _, _, W_v, W_o = _head_matrices(config, params, layer)
    W_u = params["ln_f.g"].astype(np.float64)[:, None] * params["W_out"].astype(np.float64)  # (d_model, V)
    return _embedded(config, params) @ W_v[head] @ W_o[head] @ W_u  # (V, D) @ (D, dh) @ (dh, D) @ (D, V) -> (V, V)


def qk_circuit(config: GPTConfig, params: dict, head: tuple[int, int], through: tuple[int, int]) -> np.ndarray:
    """(V, V): entry (a, b) = the scaled score of head ``head``'s query at symbol a on a key built only from what
    head ``through`` (an earlier layer's) writes when it reads symbol b; a previous-token head writes the previous
    symbol, so an induction head should score highest on the diagonal (b = a)."""
    config, params, pairs = _model(config, params, (head, through))
    (layer, h2), (layer1, h1) = pairs
    if layer1 >= layer:
        raise ValueError(f"through = {through} must be a head of an earlier layer than head = {head}")
    W_q, W_k, _, _ = _head_matrices(config, params, layer)
    _, _, W_v, W_o = _head_matrices(config, params, layer1)
    E = _embedded(config, params)  # (V, d_model)
    write = E @ W_v[h1] @ W_o[h1]  # (V, d_model) @ (d_model, dh) @ (dh, d_model) -> (V, d_model)
    write = write - write.mean(axis=1, keepdims=True)  # (V, d_model) centred, as the later LayerNorm does
    write /= np.sqrt((write * write).mean(axis=1, keepdims=True) + LN_EPS)  # (V, d_model) unit scale per row
    Q = E @ W_q[h2]  # (V, d_model) @ (d_model, d_head) -> (V, d_head)
    K = write @ W_k[h2]  # (V, d_model) @ (d_model, d_head) -> (V, d_head)
    return Q @ K.T / math.sqrt(config.d_head)  # (V, d_head) @ (d_head, V) -> (V, V)


def diagonal_share(M: object, rows: object = None) -> float:
    """The share of rows (those in ``rows``, default all) of a square matrix M (V, V) whose largest entry is on
    the diagonal."""
    M = as_numeric(M, "M", min_ndim=2)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix (V, V), got shape {M.shape}")
    idx = np.arange(M.shape[0]) if rows is None else np.asarray(rows, dtype=np.intp)  # (n,)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= M.shape[0]:
        raise ValueError(f"rows must be a non-empty list of indices 0 .. {M.shape[0] - 1}, got {rows!r}")
    return float((M[idx].argmax(axis=1) == idx).mean())
