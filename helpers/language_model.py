"""A small GPT in NumPy: the block around attention, its backward pass by hand, sampling, and the cache at work.

Shape notation used throughout this module:

    B        sequences in a batch
    T        tokens (characters) in a sequence, at most ``context``
    n        positions the queries read: T, or every position a KVCache holds
    V        vocabulary size (``vocab_size``)
    d_model  width of the residual stream
    h        heads (``n_heads``); head i is column block i of width d_head = d_model / h (as split_heads in 04)
    d_ff     width of the MLP's hidden layer
    L        layers (``n_layers``)

The model (pre-LN, as GPT-2), for int tokens (B, T):

    x = tok_emb[tokens] + pos_emb[:T]                                              (B, T, d_model)
    for each layer:  x += concat_h(softmax(Q_h K_hᵀ/√d_head + causal mask) V_h) W_o, Q = LN₁(x) W_q (K, V alike)
                     x += GELU(LN₂(x) W_1 + b_1) W_2 + b_2
    logits = LN_f(x) W_out                                                         (B, T, V)

No biases in attention, no dropout. One function, ``block``, computes a layer: for the whole forward pass, for
09's cached one-token step (with a ``KVCache`` per layer: ``generate``, ``stream_losses``) and for 12's traced
generation (``helpers.sampling``). Where each formula lives: softmax in ``helpers.attention``, log-softmax in
``helpers.numerics``, LayerNorm, GELU and the cross-entropy (and their backward passes) in ``helpers.layers``,
the softmax's backward pass (07's) in ``helpers.backward``; here the chain rule that joins them, batched over
the heads, and the sampling distribution (temperature, top-k) that ``generate`` and ``helpers.sampling`` draw from.
Parameters are float32 unless ``init_params`` is given another float type; every gradient has its
parameter's dtype. Every public function checks its arguments and raises ``TypeError`` (wrong kind of
thing) or ``ValueError`` (right kind, wrong shape or value) naming the argument and the shapes it got; the
``..._unchecked`` functions and ``block`` take checked arrays (the other model modules call them).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from helpers.attention import softmax_in_place
from helpers.backward import softmax_backward_unchecked
from helpers.generation import KVCache
from helpers.layers import (
    cross_entropy_backward_unchecked,
    cross_entropy_unchecked,
    gelu_backward_unchecked,
    gelu_unchecked,
    layer_norm_backward_unchecked,
    layer_norm_unchecked,
)
from helpers.numerics import log_softmax_unchecked
from helpers.validate import check_index_pairs, check_int, check_real

__all__ = [
    "GPTConfig",
    "Tokenizer",
    "param_shapes",
    "init_params",
    "forward",
    "attention_weights",
    "loss_and_grads",
    "generate",
    "load_corpus",
    "load_model",
    "save_model",
    "n_params",
    "DATA",
    "CORPUS_PATH",
    "MODEL_PATH",
    "LOG_PATH",
    "stream_losses",  # notebook 14
]

DATA = Path(__file__).parent / "data"
CORPUS_PATH = DATA / "corpus.txt"  # written by `make corpus` (python -m helpers.corpus)
MODEL_PATH = DATA / "model.npz"  # written by `make model` (python -m helpers.lm_train)
LOG_PATH = DATA / "model_log.json"  # the training log of `make model`: snapshots of small measurements
VALID_FRACTION = 0.1  # the last 10 % of the corpus is the validation text, never trained on
_FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


# --------------------------------------------------------------------------- checks of this model's arguments
# (numbers and flags: helpers.validate; here only what knows the model: its config, parameters and token ids)


def check_tokens(
    tokens: object, name: str, config: GPTConfig, *, ndims: tuple = (1, 2), max_T: int | None = -1
) -> np.ndarray:
    """``tokens`` as an intp array of ids 0 .. V−1 with ndim in ``ndims`` and 1 <= T <= context (max_T)."""
    if isinstance(tokens, (str, bytes)):
        raise TypeError(f"{name} must be an integer array of token ids, got a {type(tokens).__name__}; "
                        "encode text with the tokenizer first")
    try:
        arr = np.asarray(tokens)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular integer array of token ids: {err}") from None
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): the model needs at least one token")
    if arr.dtype == bool or arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer token ids, got dtype {arr.dtype} with shape {arr.shape}")
    if arr.ndim not in ndims:
        want = " or ".join({1: "(T,)", 2: "(B, T)"}[n] for n in ndims)
        raise ValueError(f"{name} must have shape {want}, got shape {arr.shape}")
    max_T = config.context if max_T == -1 else max_T
    if max_T is not None and arr.shape[-1] > max_T:
        raise ValueError(f"{name} has shape {arr.shape}: T = {arr.shape[-1]} tokens, but the model reads at most "
                         f"context = {max_T}")
    bad = (arr < 0) | (arr >= config.vocab_size)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}{list(where)} = {int(arr[where])} is not a token id 0 .. {config.vocab_size - 1} "
                         f"(vocab_size = {config.vocab_size}); shape {arr.shape}")
    return arr.astype(np.intp, copy=False)


def check_config(config: object) -> GPTConfig:
    """``config`` itself if it is a GPTConfig, else a TypeError."""
    if not isinstance(config, GPTConfig):
        raise TypeError(f"config must be a GPTConfig, got {type(config).__name__}")
    return config


def check_params(config: GPTConfig, params: object, *, finite: bool = True) -> dict[str, np.ndarray]:
    """Every parameter present, of its shape, one float dtype for all, finite; each problem named."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays (init_params makes one), got {type(params).__name__}")
    shapes = param_shapes(config)
    missing = [n for n in shapes if n not in params]
    if missing:
        raise ValueError(f"params is missing {missing} (a model with {config} needs {len(shapes)} parameters)")
    extra = sorted(set(params) - set(shapes))
    if extra:
        raise ValueError(f"params has keys this config does not use: {extra} (n_layers = {config.n_layers})")
    dtype = None
    for name, shape in shapes.items():
        W = params[name]
        if not isinstance(W, np.ndarray) or W.dtype not in _FLOAT_DTYPES:
            raise TypeError(f"params[{name!r}] must be a float ndarray, got {type(W).__name__}"
                            + (f" of dtype {W.dtype}" if isinstance(W, np.ndarray) else ""))
        if W.shape != shape:
            raise ValueError(f"params[{name!r}] has shape {W.shape} but this config needs {shape}")
        if dtype is None:
            dtype = W.dtype
        elif W.dtype != dtype:
            raise TypeError(f"params[{name!r}] has dtype {W.dtype} but params['tok_emb'] has {dtype}: "
                            "give every parameter the same float type")
    if finite:
        for name in shapes:
            if not np.isfinite(params[name]).all():
                W = params[name]
                where = tuple(int(i) for i in np.argwhere(~np.isfinite(W))[0])
                raise ValueError(f"params[{name!r}] holds {W[where]} at index {where} (shape {W.shape}): "
                                 "every parameter must be finite")
    return params


# --------------------------------------------------------------------------- configuration and parameters


@dataclass(frozen=True)
class GPTConfig:
    """The model's sizes: vocab_size V, context (the most tokens read at once), d_model, n_heads, n_layers, d_ff."""

    vocab_size: int
    context: int
    d_model: int
    n_heads: int
    n_layers: int
    d_ff: int

    def __post_init__(self) -> None:
        for name in ("vocab_size", "context", "d_model", "n_heads", "n_layers", "d_ff"):
            check_int(getattr(self, name), name, minimum=2 if name == "vocab_size" else 1)
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads = {self.n_heads} does not divide d_model = {self.d_model}: each head is a "
                             f"block of d_model / n_heads columns")

    @property
    def d_head(self) -> int:
        """Width of one head's query, key and value vectors: d_model / n_heads."""
        return self.d_model // self.n_heads


def param_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in init_params' order."""
    config = check_config(config)
    V, D, F = config.vocab_size, config.d_model, config.d_ff
    shapes = {"tok_emb": (V, D), "pos_emb": (config.context, D)}
    for layer in range(config.n_layers):
        p = f"l{layer}."
        shapes.update({p + "ln1.g": (D,), p + "ln1.b": (D,),
                       p + "W_q": (D, D), p + "W_k": (D, D), p + "W_v": (D, D), p + "W_o": (D, D),
                       p + "ln2.g": (D,), p + "ln2.b": (D,),
                       p + "W_1": (D, F), p + "b_1": (F,), p + "W_2": (F, D), p + "b_2": (D,)})
    shapes.update({"ln_f.g": (D,), "ln_f.b": (D,), "W_out": (D, V)})
    return shapes


def n_params(config: GPTConfig) -> int:
    """How many numbers the model holds."""
    return sum(math.prod(s) for s in param_shapes(config).values())


def init_params(config: GPTConfig, seed: int = 0, dtype: type = np.float32) -> dict[str, np.ndarray]:
    """GPT-2's initialisation: N(0, 0.02²) matrices and embeddings (W_o, W_2 scaled by 1/√(2L)), g = 1, b = 0."""
    config = check_config(config)
    seed = check_int(seed, "seed", minimum=0)
    dtype = np.dtype(dtype)
    if dtype not in _FLOAT_DTYPES:
        raise TypeError(f"dtype must be float16, float32 or float64, got {dtype}")
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(config).items():
        if name.endswith((".g",)):
            params[name] = np.ones(shape, dtype)  # (d_model,) LayerNorm starts as the identity
        elif name.endswith((".b", "b_1", "b_2")):
            params[name] = np.zeros(shape, dtype)  # biases start at 0
        else:
            std = 0.02 / math.sqrt(2 * config.n_layers) if name.endswith(("W_o", "W_2")) else 0.02
            params[name] = (std * rng.standard_normal(shape)).astype(dtype)  # shape of the parameter
    return params


# --------------------------------------------------------------------------- one block, the whole model


class BlockValues(NamedTuple):
    """What one block's backward pass needs from its forward pass (rows: the B·T tokens)."""

    h1: np.ndarray  # (B·T, d_model) LN₁(x), the input of W_q, W_k, W_v
    xhat1: np.ndarray  # (B·T, d_model) LN₁'s x̂
    rstd1: np.ndarray  # (B·T, 1) LN₁'s 1/√(var + eps)
    Q: np.ndarray  # (B, h, T, d_head) the queries, already divided by √d_head
    K: np.ndarray  # (B, h, n, d_head) the keys the queries read (n = T without a cache)
    V: np.ndarray  # (B, h, n, d_head) the values
    P: np.ndarray  # (B, h, T, n) attention weights
    concat: np.ndarray  # (B·T, d_model) the heads' outputs side by side, the input of W_o
    h2: np.ndarray  # (B·T, d_model) LN₂(x), the input of the MLP
    xhat2: np.ndarray  # (B·T, d_model)
    rstd2: np.ndarray  # (B·T, 1)
    a: np.ndarray  # (B·T, d_ff) h2 W_1 + b_1, the input of GELU
    g: np.ndarray  # (B·T, d_ff) GELU(a)
    s: np.ndarray  # (B·T, d_ff) ½(1 + tanh u) of GELU, re-used by its backward pass


class ForwardValues(NamedTuple):
    """What the whole model's backward pass needs: every block's values and the final LayerNorm's."""

    blocks: list[BlockValues]
    hf: np.ndarray  # (B·T, d_model) LN_f(x), the input of W_out
    xhatf: np.ndarray  # (B·T, d_model)
    rstdf: np.ndarray  # (B·T, 1)


_MASKS: dict[tuple[int, int, str], np.ndarray] = {}


def _causal_additive(T: int, n: int, dtype: np.dtype) -> np.ndarray:
    """(T, n): 0 where the query (the last T of n positions) may read the key, −inf on later keys: the causal mask."""
    key = (T, n, np.dtype(dtype).str)
    if key not in _MASKS:
        _MASKS[key] = np.where(np.triu(np.ones((T, n), bool), k=n - T + 1), -np.inf, 0).astype(dtype)  # (T, n)
    return _MASKS[key]


def _layer(p: dict[str, np.ndarray], layer: int) -> dict[str, np.ndarray]:
    """Layer ``layer``'s parameters by their short names: "W_q", "ln1.g", ... (as param_shapes lists them)."""
    return {name: p[f"l{layer}.{name}"] for name in _LAYER_NAMES}


_LAYER_NAMES = ("ln1.g", "ln1.b", "W_q", "W_k", "W_v", "W_o", "ln2.g", "ln2.b", "W_1", "b_1", "W_2", "b_2")


def block(x: np.ndarray, w: dict, B: int, n_heads: int, cache: KVCache | None = None,
          ablate: tuple[int, ...] = ()) -> tuple[np.ndarray, BlockValues]:
    """One pre-LN block on checked rows x (B·T, d_model): x + attention(LN₁(x)), then + MLP(LN₂(x)).

    With 09's ``cache`` (B = 1) the T new tokens' keys and values are appended to it and the queries read every
    position it holds (with a window: one token at a time). The heads in ``ablate`` output 0 before W_o."""
    BT, D = x.shape
    T, dh = BT // B, D // n_heads
    h1, xhat1, rstd1 = layer_norm_unchecked(x, w["ln1.g"], w["ln1.b"])  # (B·T, d_model)
    Q, K, V = (h1 @ w[name] for name in ("W_q", "W_k", "W_v"))  # (B·T, d_model) @ (d_model, d_model) each
    Q *= Q.dtype.type(1.0 / math.sqrt(dh))  # Q/√d_head: fewer products than scaling the (T, n) scores
    Q, K, V = (Y.reshape(B, T, n_heads, dh).transpose(0, 2, 1, 3) for Y in (Q, K, V))  # (B, h, T, d_head), views
    if cache is not None:
        cache.append_unchecked(K[0], V[0])  # (h, T, d_head) each, of the cache's dtype
        K, V = cache.K[None], cache.V[None]  # (1, h, n, d_head) each: every cached position, these T last
    P = Q @ K.swapaxes(-1, -2)  # (B, h, T, d_head) @ (B, h, d_head, n) -> (B, h, T, n) scaled scores
    if T > 1:  # one new token reads every key: nothing to mask
        P += _causal_additive(T, K.shape[-2], P.dtype)  # (B, h, T, n) + (T, n): −inf on later keys
    P = softmax_in_place(P)  # (B, h, T, n) attention weights, rows sum to 1 (in place unless float16)
    O = P @ V  # (B, h, T, n) @ (B, h, n, d_head) -> (B, h, T, d_head)
    if ablate:
        O[:, list(ablate)] = 0  # (B, len(ablate), T, d_head) removed heads write nothing
    concat = O.transpose(0, 2, 1, 3).reshape(BT, D)  # (B, T, h, d_head) -> (B·T, d_model), a copy
    x = x + concat @ w["W_o"]  # (B·T, d_model) @ (d_model, d_model): the residual stream
    h2, xhat2, rstd2 = layer_norm_unchecked(x, w["ln2.g"], w["ln2.b"])  # (B·T, d_model)
    a = h2 @ w["W_1"]  # (B·T, d_model) @ (d_model, d_ff) -> (B·T, d_ff)
    a += w["b_1"]
    g, s = gelu_unchecked(a)  # (B·T, d_ff) each: GELU(a) and s = ½(1 + tanh u)
    x = x + g @ w["W_2"]  # (B·T, d_ff) @ (d_ff, d_model) -> (B·T, d_model)
    x += w["b_2"]
    return x, BlockValues(h1, xhat1, rstd1, Q, K, V, P, concat, h2, xhat2, rstd2, a, g, s)


def forward_unchecked(config: GPTConfig, p: dict[str, np.ndarray], tokens: np.ndarray, keep: bool = False,
                      ablate: tuple[tuple[int, int], ...] = (), caches: list[KVCache] | None = None,
                      start: int = 0) -> tuple[np.ndarray, ForwardValues | None]:
    """logits (B, T, V) for checked tokens (B, T) at positions start .. start + T − 1, and (if keep) what the
    backward pass needs; through one KVCache per layer when ``caches`` is given (B = 1, 09's cached step)."""
    B, T = tokens.shape
    x = p["tok_emb"][tokens]  # (B, T) -> (B, T, d_model)
    x += p["pos_emb"][start:start + T]  # (B, T, d_model) + (T, d_model)
    x = x.reshape(B * T, config.d_model)  # (B·T, d_model) every token a row
    blocks = []  # with keep: each block's values, for the backward pass
    for i in range(config.n_layers):
        x, values = block(x, _layer(p, i), B, config.n_heads, None if caches is None else caches[i],
                          tuple(head for layer, head in ablate if layer == i))  # (B·T, d_model)
        blocks += [values] if keep else []
    hf, xhatf, rstdf = layer_norm_unchecked(x, p["ln_f.g"], p["ln_f.b"])  # (B·T, d_model)
    logits = hf @ p["W_out"]  # (B·T, d_model) @ (d_model, V) -> (B·T, V)
    return logits.reshape(B, T, config.vocab_size), ForwardValues(blocks, hf, xhatf, rstdf) if keep else None


def _backward(config: GPTConfig, p: dict, tokens: np.ndarray, dlogits: np.ndarray, fwd: ForwardValues) -> dict:
    """Every parameter's gradient from dL/dlogits (B·T, V) and the forward pass's values, in init_params' order."""
    B, T = tokens.shape
    D, H, dh = config.d_model, config.n_heads, config.d_head
    scale = dlogits.dtype.type(1.0 / math.sqrt(dh))
    grads = {"W_out": fwd.hf.T @ dlogits}  # (d_model, B·T) @ (B·T, V) -> (d_model, V)
    dhf = dlogits @ p["W_out"].T  # (B·T, V) @ (V, d_model) -> (B·T, d_model)
    dx, grads["ln_f.g"], grads["ln_f.b"] = layer_norm_backward_unchecked(dhf, fwd.xhatf, fwd.rstdf, p["ln_f.g"])
    for layer in reversed(range(config.n_layers)):
        q, v, w = f"l{layer}.", fwd.blocks[layer], _layer(p, layer)  # the names, the saved values, the parameters
        # the MLP: x += GELU(h2 W_1 + b_1) W_2 + b_2; dx flows on unchanged through the residual
        grads[q + "b_2"] = dx.sum(axis=0)  # (d_model,)
        grads[q + "W_2"] = v.g.T @ dx  # (d_ff, B·T) @ (B·T, d_model) -> (d_ff, d_model)
        da = gelu_backward_unchecked(dx @ w["W_2"].T, v.a, v.s)  # (B·T, d_model) @ (d_model, d_ff) -> (B·T, d_ff)
        grads[q + "b_1"] = da.sum(axis=0)  # (d_ff,)
        grads[q + "W_1"] = v.h2.T @ da  # (d_model, B·T) @ (B·T, d_ff) -> (d_model, d_ff)
        dh2 = da @ w["W_1"].T  # (B·T, d_ff) @ (d_ff, d_model) -> (B·T, d_model)
        dx2, grads[q + "ln2.g"], grads[q + "ln2.b"] = layer_norm_backward_unchecked(dh2, v.xhat2, v.rstd2, w["ln2.g"])
        dx += dx2  # (B·T, d_model)
        # attention: x += concat W_o; 07's backward (helpers.backward) for all heads at once
        grads[q + "W_o"] = v.concat.T @ dx  # (d_model, B·T) @ (B·T, d_model) -> (d_model, d_model)
        dO = (dx @ w["W_o"].T).reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B·T, d_model) -> (B, h, T, d_head)
        _, dS = softmax_backward_unchecked(v.P, dO @ v.V.swapaxes(-1, -2))  # dP = dO Vᵀ (B, h, T, T) -> dS
        dY = {"W_q": dS @ v.K * scale,  # dQ = dS K/√d_head: (B, h, T, T) @ (B, h, T, d_head)
              "W_k": dS.swapaxes(-1, -2) @ v.Q,  # dK = dSᵀ Q/√d_head
              "W_v": v.P.swapaxes(-1, -2) @ dO}  # dV = Pᵀ dO
        dh1 = 0
        for name, d in dY.items():
            d = d.transpose(0, 2, 1, 3).reshape(B * T, D)  # (B, h, T, d_head) -> (B·T, d_model), a copy
            grads[q + name] = v.h1.T @ d  # (d_model, B·T) @ (B·T, d_model) -> (d_model, d_model)
            dh1 = dh1 + d @ w[name].T  # (B·T, d_model) @ (d_model, d_model): the three paths into LN₁(x) add up
        dx1, grads[q + "ln1.g"], grads[q + "ln1.b"] = layer_norm_backward_unchecked(dh1, v.xhat1, v.rstd1, w["ln1.g"])
        dx += dx1  # (B·T, d_model)
    grads["pos_emb"] = np.zeros_like(p["pos_emb"])  # (context, d_model): positions >= T get 0
    grads["pos_emb"][:T] = dx.reshape(B, T, D).sum(axis=0)  # (T, d_model)
    onehot = np.zeros((B * T, config.vocab_size), dtype=dx.dtype)  # (B·T, V)
    onehot[np.arange(B * T), tokens.ravel()] = 1
    grads["tok_emb"] = onehot.T @ dx  # (V, B·T) @ (B·T, d_model): each row sums its token's positions
    return {name: grads[name] for name in p}  # init_params' order


# --------------------------------------------------------------------------- the public model


def check_ablate(config: GPTConfig, ablate: object) -> tuple[tuple[int, int], ...]:
    """``ablate`` as a tuple of distinct (layer, head) int pairs within the config, or a named error."""
    return check_index_pairs(ablate, "ablate", (config.n_layers, config.n_heads), ("layer", "head"))


def forward(config: GPTConfig, params: dict[str, np.ndarray], tokens: object, *, ablate: object = ()) -> np.ndarray:
    """logits (B, T, V) for int tokens (B, T); one sequence (T,) gives (T, V). T <= context.

    ``ablate``: (layer, head) pairs, counted from 0, whose head output (before W_o) is set to 0.
    """
    config = check_config(config)
    params = check_params(config, params)
    ablate = check_ablate(config, ablate)
    tokens = check_tokens(tokens, "tokens", config)  # (B, T) or (T,)
    logits, _ = forward_unchecked(config, params, tokens.reshape(-1, tokens.shape[-1]), ablate=ablate)  # (B, T, V)
    return logits.reshape(*tokens.shape, config.vocab_size)


def attention_weights_unchecked(config: GPTConfig, params: dict, tokens: np.ndarray, ablate: tuple = ()) -> np.ndarray:
    """(L, B, h, T, T) for checked tokens (B, T): every head's attention weights (no argument checks)."""
    _, fwd = forward_unchecked(config, params, tokens, keep=True, ablate=ablate)
    return np.stack([values.P for values in fwd.blocks])  # (L, B, h, T, T)


def attention_weights(config: GPTConfig, params: dict[str, np.ndarray], tokens: object) -> np.ndarray:
    """Every head's attention weights (L, h, T, T) for one sequence of int tokens (T,)."""
    config = check_config(config)
    params = check_params(config, params)
    if np.ndim(tokens) == 2 and not isinstance(tokens, (str, bytes)):
        raise ValueError(f"tokens has shape {np.shape(tokens)}: attention_weights reads one sequence (T,), "
                         "not a batch; call it once per row")
    tokens = check_tokens(tokens, "tokens", config, ndims=(1,))  # (T,)
    return attention_weights_unchecked(config, params, tokens[None])[:, 0]  # (L, h, T, T)


def loss_and_grads(
    config: GPTConfig, params: dict[str, np.ndarray], tokens: object, targets: object
) -> tuple[float, dict[str, np.ndarray]]:
    """(mean cross-entropy over all B·T positions in nats, {name: gradient}) for tokens and targets (B, T) or (T,)."""
    config = check_config(config)
    params = check_params(config, params)
    tokens = check_tokens(tokens, "tokens", config)  # (B, T) or (T,)
    targets = check_tokens(targets, "targets", config, max_T=None)
    if targets.shape != tokens.shape:
        raise ValueError(f"targets has shape {targets.shape} but tokens has shape {tokens.shape}: "
                         "one target (the next token) per token, in the tokens' shape")
    tokens = tokens.reshape(-1, tokens.shape[-1])  # (B, T); one sequence is a batch of 1
    logits, fwd = forward_unchecked(config, params, tokens, keep=True)  # (B, T, V)
    loss, probs = cross_entropy_unchecked(logits.reshape(-1, config.vocab_size), targets.reshape(-1))  # probs (B·T, V)
    dlogits = cross_entropy_backward_unchecked(probs, targets.reshape(-1))  # (B·T, V)
    return loss, _backward(config, params, tokens, dlogits, fwd)


# --------------------------------------------------------------------------- generation


def next_token_probs_unchecked(logits: np.ndarray, temperature: float, top_k: int | None) -> np.ndarray:
    """The distribution a token is drawn from, (V,) float64: softmax(logits / temperature) over the ``top_k``
    largest logits (ties with the k-th kept), 0 elsewhere; at temperature 0 all of it on the (first) argmax."""
    if temperature == 0:
        p = np.zeros(len(logits))  # (V,)
        p[int(np.argmax(logits))] = 1.0
        return p
    z = logits.astype(np.float64) / temperature  # (V,)
    if top_k is not None and top_k < len(z):
        z[z < np.partition(z, -top_k)[-top_k]] = -np.inf  # (V,) below the k-th largest: never drawn
    return softmax_in_place(z)  # (V,)


def sample_next(logits: np.ndarray, temperature: float, top_k: int | None, rng: np.random.Generator) -> int:
    """One token id drawn from next_token_probs_unchecked with one uniform number; at temperature 0 the argmax
    (no number drawn)."""
    p = next_token_probs_unchecked(logits, temperature, top_k)  # (V,)
    if temperature == 0:
        return int(np.argmax(p))
    cdf = np.cumsum(p)  # (V,)
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), len(p) - 1))


def new_caches(config: GPTConfig, window: int | None = None, sinks: int = 0) -> list[KVCache]:
    """One empty KVCache(h, d_head, window, sinks) per layer, for forward_unchecked's cached steps."""
    return [KVCache(config.n_heads, config.d_head, window=window, sinks=sinks) for _ in range(config.n_layers)]


def generate(
    config: GPTConfig,
    params: dict[str, np.ndarray],
    prompt: object,
    n_new: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int = 0,
    use_cache: bool = True,
) -> np.ndarray:
    """prompt (T0,) int -> (T0 + n_new,), prompt first: each new token drawn from the model's next-token logits.

    ``temperature=0`` is greedy (argmax); otherwise a draw from softmax(logits / temperature) restricted to the
    ``top_k`` largest logits when given, with ``np.random.default_rng(seed)`` (one uniform number per token).
    ``use_cache=True`` keeps each layer's keys and values in 09's ``KVCache`` and runs one token per step;
    ``use_cache=False`` recomputes the whole sequence for every token. Both give the same logits up to float
    rounding (about 1e-6 in float32), hence the same tokens unless a draw lands within rounding of a boundary.

    Beyond ``context``: the model has learned absolute positions 0 .. context−1, so it reads only the last
    ``context`` tokens, at positions 0 .. context−1. Once the text is longer, every step shifts every token to a
    new position, and cached keys and values (computed at the old positions) no longer apply: a cache cannot
    slide. Both ways then recompute the last ``context`` tokens for each new token (the cache speeds up only
    the first ``context`` tokens). The prompt may be longer than ``context``; only its last ``context`` tokens
    are read.
    """
    config = check_config(config)
    params = check_params(config, params)
    prompt = check_tokens(prompt, "prompt", config, ndims=(1,), max_T=None)
    n_new = check_int(n_new, "n_new", minimum=0)
    temperature = check_real(temperature, "temperature", low=0.0, low_open=False, rule="a finite number >= 0.0")
    if top_k is not None:
        top_k = check_int(top_k, "top_k", minimum=1, maximum=config.vocab_size)
    seed = check_int(seed, "seed", minimum=0)
    if not isinstance(use_cache, (bool, np.bool_)):
        raise TypeError(f"use_cache must be True or False, got {use_cache!r}")
    rng = np.random.default_rng(seed)
    C = config.context
    out = list(prompt.tolist())
    caches = None
    for _ in range(n_new):
        n = len(out)
        if use_cache and n <= C:  # the prompt at once, then one token per step, through one cache per layer
            if caches is None:
                caches, new = new_caches(config), out
            else:
                new = out[-1:]
            logits = forward_unchecked(config, params, np.asarray([new], np.intp), caches=caches, start=n - len(new))[0]
        else:  # recompute: no cache, or past the context (positions shift: the cache cannot slide)
            logits = forward_unchecked(config, params, np.asarray([out[-C:]], np.intp))[0]  # (1, T, V)
        out.append(sample_next(logits[0, -1], temperature, top_k, rng))
    return np.asarray(out, dtype=np.int64)  # (T0 + n_new,)


# --------------------------------------------------------------------------- text, corpus, checkpoint


class Tokenizer:
    """Characters <-> ids. ``symbols[0]`` is the unknown symbol, which stands for every rare character."""

    def __init__(self, symbols: str, unknown: str = "\ufffd") -> None:
        if not isinstance(symbols, str) or len(set(symbols)) != len(symbols) or not symbols:
            raise ValueError(f"symbols must be a non-empty string of distinct characters, got {symbols!r:.60}")
        if symbols[0] != unknown:
            raise ValueError(f"symbols[0] must be the unknown symbol {unknown!r}, got {symbols[0]!r}")
        self.symbols = symbols
        self.unknown = unknown
        self._ids = {c: i for i, c in enumerate(symbols)}

    def __len__(self) -> int:
        return len(self.symbols)

    def __repr__(self) -> str:
        return f"Tokenizer({len(self)} symbols, unknown {self.unknown!r})"

    def encode(self, text: str, errors: str = "strict") -> np.ndarray:
        """text -> ids (len(text),); a character outside the vocabulary raises (named), or with errors="replace"
        becomes the unknown symbol (id 0)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if errors not in ("strict", "replace"):
            raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
        ids = np.fromiter((self._ids.get(c, -1) for c in text), dtype=np.int64, count=len(text))  # (len(text),)
        if (ids < 0).any():
            if errors == "strict":
                unseen = sorted({c for c in text if c not in self._ids})
                raise ValueError(f"text holds characters that are not in the vocabulary: {unseen[:10]!r}"
                                 f"{' ...' if len(unseen) > 10 else ''} (first at index {int(np.argmax(ids < 0))}); "
                                 f"use encode(text, errors='replace') to map them to {self.unknown!r}")
            ids[ids < 0] = 0
        return ids

    def decode(self, ids: object) -> str:
        """ids -> text; every id must be 0 .. len(symbols)−1."""
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"ids must be integer token ids, got a {type(ids).__name__}")
        arr = np.asarray(ids)
        if arr.size and (arr.dtype == bool or arr.dtype.kind not in "iu"):
            raise TypeError(f"ids must hold integer token ids, got dtype {arr.dtype}")
        if arr.ndim != 1:
            raise ValueError(f"ids must be one sequence (T,), got shape {arr.shape}")
        if arr.size and ((arr < 0).any() or (arr >= len(self)).any()):
            bad = int(arr[(arr < 0) | (arr >= len(self))][0])
            raise ValueError(f"ids holds {bad}, not a token id 0 .. {len(self) - 1}")
        return "".join(self.symbols[i] for i in arr.tolist())


def corpus_sha256() -> str:
    """The SHA-256 of the committed corpus file: the checkpoint records the one it was trained on."""
    return hashlib.sha256(CORPUS_PATH.read_bytes()).hexdigest()


def load_corpus() -> tuple[str, str]:
    """(train_text, valid_text): the course's own prose (helpers/data/corpus.txt), its last 10 % for validation."""
    if not CORPUS_PATH.exists():
        raise FileNotFoundError(f"{CORPUS_PATH} is missing: run `make corpus`")
    text = CORPUS_PATH.read_text(encoding="utf-8")
    cut = int(round(len(text) * (1 - VALID_FRACTION)))
    return text[:cut], text[cut:]


def save_model(path: Path, config: GPTConfig, params: dict[str, np.ndarray], tokenizer: Tokenizer, **extra) -> None:
    """One .npz file: config, parameters (float32), vocabulary, and any extra arrays (e.g. training snapshots)."""
    arrays = {f"param/{n}": np.asarray(W, np.float32) for n, W in params.items()}
    arrays["config"] = np.array(astuple(config), dtype=np.int64)  # (6,) in GPTConfig's field order
    arrays["symbols"] = np.array(tokenizer.symbols)  # a unicode scalar
    arrays.update(extra)
    np.savez_compressed(path, **arrays)


def load_model(path: str | Path | None = None) -> tuple[GPTConfig, dict[str, np.ndarray], Tokenizer]:
    """(config, params (float32), tokenizer) of the committed model (helpers/data/model.npz), or of ``path``."""
    path = MODEL_PATH if path is None else Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `make model`")
    with np.load(path, allow_pickle=False) as f:
        config = GPTConfig(*(int(v) for v in f["config"]))
        params = {n: f[f"param/{n}"].astype(np.float32) for n in param_shapes(config)}
        tokenizer = Tokenizer(str(f["symbols"]))
    check_params(config, params)
    return config, params, tokenizer


# --------------------------------------------------------------------------- reading through a sliding cache (14)


def stream_losses(
    config: GPTConfig, params: dict[str, np.ndarray], tokens: object, *, window: int | None = None, sinks: int = 0
) -> np.ndarray:
    """Next-token losses (T−1,) in nats for tokens (T,) read one at a time through KVCache(h, d_head, window, sinks).

    Loss t is −log p(tokens[t+1] | what the caches hold after tokens[t]), computed in float64 from the float32
    logits. Every layer keeps its own cache: with ``window=w`` the last w positions, with ``sinks=s`` as well
    the first s (StreamingLLM, Xiao et al. 2023), i.e. key j is visible to query i when j <= i and
    (j < s or i − j < w). ``window=None`` keeps every position: the losses are ``forward``'s cross-entropy per
    position (to float32 rounding, about 1e-5 nats); ``sinks`` then changes nothing, as in ``KVCache``.

    The model's positions are learned and absolute: tokens keep their positions 0 .. T−1, so T <= context.
    (StreamingLLM with rotary positions re-numbers the cached positions and can read on forever; this model
    cannot, so what this measures is what evicting keys does to its loss, within its context.)
    """
    config = check_config(config)
    params = check_params(config, params)
    tokens = check_tokens(tokens, "tokens", config, ndims=(1,), max_T=None)  # (T,)
    T = tokens.shape[0]
    if T < 2:
        raise ValueError(f"tokens has shape {tokens.shape}: a loss needs a next token, so at least 2 tokens")
    if T > config.context:
        raise ValueError(f"tokens has shape {tokens.shape}: T = {T}, but this model has learned positions "
                         f"0 .. {config.context - 1} only (context = {config.context}); a sliding cache does not "
                         "re-number them, so give at most context tokens")
    window = None if window is None else check_int(window, "window", minimum=1)
    sinks = check_int(sinks, "sinks", minimum=0)
    caches = new_caches(config, window, sinks)
    losses = np.empty(T - 1)  # (T−1,) float64
    for t in range(T - 1):
        logits = forward_unchecked(config, params, tokens[None, t:t + 1], caches=caches, start=t)[0]  # (1, 1, V)
        losses[t] = -log_softmax_unchecked(logits[0, 0].astype(np.float64))[tokens[t + 1]]  # −log p(next)
    return losses
