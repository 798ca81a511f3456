"""Generating text one token at a time: grouped-query attention, the key/value cache, one decoding step.

Shape notation used throughout this module (as in helpers/attention.py, plus the key/value heads):

    ...        any leading batch dimensions (broadcast)
    T          number of tokens (n: the positions held in a cache)
    d_in       features per input token (the width of X, or of one token's vector x)
    h          query heads (n_heads)
    g          key/value heads (n_kv_heads); h is a multiple of g
    r          query heads per key/value head, r = h // g (query head i reads key/value head i // r)
    d_head     width of one query, key or value vector (per head)
    d_out      output width of W_o

g == h is multi-head attention; g == 1 is multi-query attention (Shazeer 2019); anything between is
grouped-query attention (Ainslie et al. 2023). Tokens are rows; softmax runs over the keys (last axis).
``KVCache`` is also the small GPT's cache (``helpers.language_model``: one per layer, read by its ``block``).

Also here: ``step_flops`` and ``attention_parameters`` (what a step and a layer cost), ``kv_cache_bytes``,
``mean_pool_kv_heads`` (turning h key/value heads into g), ``layer_keys_values`` (the keys and values of
stacked layers, with or without the causal mask), and ``MODELS``, four published configurations
with their sources (notebook 09 uses them all).

Every public function checks its arguments and raises ``TypeError`` (wrong kind of thing) or
``ValueError`` (right kind, wrong shape or value) with a message that names the argument. ``decode_step``
scans its weight matrices for NaN/inf only when a step's result is not finite (it runs once per token).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from helpers.attention import attend, causal_mask, project_qkv, softmax_in_place
from helpers.validate import (
    FLOAT_DTYPES,
    as_numeric,
    check_flag,
    check_int,
    check_mask,
    refuse_overflow,
)

__all__ = [
    "grouped_query_attention",
    "KVCache",
    "decode_step",
    "kv_cache_bytes",
    "mean_pool_kv_heads",
    "step_flops",
    "attention_parameters",
    "layer_keys_values",
    "MODELS",
]


# --------------------------------------------------------------------------- checks


def _check_heads(n_heads: object, n_kv_heads: object) -> tuple[int, int]:
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    n_kv_heads = check_int(n_kv_heads, "n_kv_heads", minimum=1)
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_heads ({n_heads}) is not divisible by n_kv_heads ({n_kv_heads}): every key/value head "
            f"must serve the same number of query heads"
        )
    return n_heads, n_kv_heads


def _check_widths(W_q_shape: tuple, W_k_shape: tuple, W_v_shape: tuple, n_heads: int, n_kv_heads: int) -> int:
    """Return d_head = W_q's width / n_heads, after checking that W_k and W_v have n_kv_heads · d_head columns."""
    if W_q_shape[1] % n_heads:
        raise ValueError(
            f"W_q has shape {W_q_shape}: its {W_q_shape[1]} columns do not split into n_heads = {n_heads} "
            f"heads of equal width d_head"
        )
    d_head = W_q_shape[1] // n_heads
    for name, shape in (("W_k", W_k_shape), ("W_v", W_v_shape)):
        if shape[1] != n_kv_heads * d_head:
            raise ValueError(
                f"{name} has shape {shape} but needs n_kv_heads · d_head = {n_kv_heads} · {d_head} = "
                f"{n_kv_heads * d_head} columns (d_head = {d_head} from W_q's {W_q_shape[1]} columns / "
                f"n_heads = {n_heads})"
            )
    return d_head


def _matrix_unscanned(W: object, name: str) -> np.ndarray:
    """W as a float array, checked for kind and shape but not scanned for NaN/inf.

    For decode_step, which sees the same weight matrices at every token: scanning them each time would
    cost more than the step itself. A NaN or inf in W makes the product with W non-finite (0 · NaN and
    0 · inf are NaN), and the caller then names W (``_refuse_non_finite``, ``_explain_refusal``). Anything but
    a float ndarray is checked in full.
    """
    if not (isinstance(W, np.ndarray) and W.dtype in FLOAT_DTYPES):
        return as_numeric(W, name)
    if W.size == 0:
        raise ValueError(f"{name} is empty (shape {W.shape}): attention needs at least one token and one feature")
    return W


def _refuse_non_finite(product: np.ndarray, what: str, *weights: tuple[str, np.ndarray]) -> None:
    """Raise if ``product`` is not finite: name a weight matrix holding NaN/inf if one does, else an overflow."""
    if np.isfinite(product).all():
        return
    for name, W in weights:
        as_numeric(W, name)  # raises "W_q contains NaN (first at index ...)" when W holds one
    refuse_overflow(product, what)  # finite inputs: an overflow


def _check_w_o(W_o: object, width: int, *, scan: bool = True) -> np.ndarray | None:
    if W_o is None:
        return None
    W_o = as_numeric(W_o, "W_o") if scan else _matrix_unscanned(W_o, "W_o")
    if W_o.ndim != 2 or W_o.shape[0] != width:
        raise ValueError(
            f"W_o has shape {W_o.shape} but the concatenated heads have {width} columns; "
            f"W_o needs shape ({width}, d_out)"
        )
    return W_o


def _apply_w_o(concat: np.ndarray, W_o: np.ndarray | None) -> np.ndarray:
    if W_o is None:
        return concat
    with np.errstate(over="ignore", invalid="ignore"):
        out = concat @ W_o  # (..., h * d_head) @ (h * d_head, d_out) -> (..., d_out)
    _refuse_non_finite(out, f"concat(heads) {concat.shape} @ W_o {W_o.shape}", ("W_o", W_o))
    return out


# --------------------------------------------------------------------------- attention


def grouped_query_attention(
    X: object,
    W_q: object,
    W_k: object,
    W_v: object,
    n_heads: int,
    n_kv_heads: int,
    W_o: object = None,
    mask: object = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention whose h query heads share g key/value heads: query head i reads head i // (h // g).

    W_q (d_in, h · d_head), W_k and W_v (d_in, g · d_head). Returns (output (..., T, d_out), weights
    (..., h, T, T)); with W_o=None the output is the concatenated heads (..., T, h · d_head). Scale
    1/√d_head. With n_kv_heads == n_heads it is multi_head_attention.
    """
    n_heads, n_kv_heads = _check_heads(n_heads, n_kv_heads)
    Q, K, V = project_qkv(X, W_q, W_k, W_v)  # (..., T, h·d_head), (..., T, g·d_head) twice; checks X and W
    d_head = _check_widths(np.shape(W_q), np.shape(W_k), np.shape(W_v), n_heads, n_kv_heads)
    W_o = _check_w_o(W_o, n_heads * d_head)
    g, r = n_kv_heads, n_heads // n_kv_heads
    *lead, T, _ = Q.shape
    if mask is not None:
        shape = (*lead, T, T)
        mask = check_mask(mask, shape, f"(..., T, T) = {shape} for X with shape {np.shape(X)}")
        if mask.ndim >= 3:  # a per-batch mask (..., T, T) lines up with (..., g, r, T, T) once it has two head axes
            mask = mask[..., None, None, :, :]  # (..., 1, 1, T, T)
    Qh = Q.reshape(*lead, T, g, r, d_head)  # (..., T, h·d_head) -> (..., T, g, r, d_head): head i = (i // r, i % r)
    Qh = np.moveaxis(Qh, -4, -2)  # (..., T, g, r, d_head) -> (..., g, r, T, d_head), a view
    Kh = np.swapaxes(K.reshape(*lead, T, g, d_head), -3, -2)[..., :, None, :, :]  # (..., g, 1, T, d_head)
    Vh = np.swapaxes(V.reshape(*lead, T, g, d_head), -3, -2)[..., :, None, :, :]  # (..., g, 1, T, d_head)
    out, weights = attend(Qh, Kh, Vh, mask, scale=1.0 / math.sqrt(d_head))  # (..., g, r, T, d_head), (..., g, r, T, T)
    weights = weights.reshape(*lead, n_heads, T, T)  # (..., g, r, T, T) -> (..., h, T, T), query head order
    out = np.moveaxis(out, -2, -4)  # (..., g, r, T, d_head) -> (..., T, g, r, d_head)
    concat = out.reshape(*lead, T, n_heads * d_head)  # (..., T, g, r, d_head) -> (..., T, h·d_head)
    return _apply_w_o(concat, W_o), weights


# --------------------------------------------------------------------------- the cache


class KVCache:
    """The keys and values of the positions seen so far, per key/value head: K and V (g, n, d_head).

    ``append(k, v)`` adds t >= 1 positions (k and v of shape (g, t, d_head)). With ``window=w`` only the
    last w positions are kept (sliding-window attention); with ``sinks=s`` as well, the first s positions are
    kept too (StreamingLLM, Xiao et al. 2023): the cache then holds the positions j of the mask "j < s or
    i − j < w" for the newest position i, at most s + w of them. ``K`` and ``V`` are read-only views that stay
    valid after later appends (a later append never overwrites a position an earlier view shows; once sinks
    and window are apart, they are a fresh copy of both). The dtype is that of the first append; later
    appends must match it. Without a window every position is kept and ``sinks`` changes nothing.
    """

    def __init__(self, n_kv_heads: int, d_head: int, window: int | None = None, sinks: int = 0) -> None:
        self.n_kv_heads = check_int(n_kv_heads, "n_kv_heads", minimum=1)
        self.d_head = check_int(d_head, "d_head", minimum=1)
        self.window = None if window is None else check_int(window, "window", minimum=1)
        self.sinks = check_int(sinks, "sinks", minimum=0)
        self._n_slots = self.sinks if self.window is not None else 0  # sink rows kept apart (none without a window)
        self._k: np.ndarray | None = None  # (g, capacity, d_head) buffer; rows start..stop-1 are the rolling part
        self._v: np.ndarray | None = None  # (g, capacity, d_head)
        self._sk: np.ndarray | None = None  # (g, sinks, d_head) the first positions, kept for good
        self._sv: np.ndarray | None = None  # (g, sinks, d_head)
        self._n_sink = 0  # sink rows filled
        self._start = 0  # first cached row in the buffers
        self._stop = 0  # one past the last cached row
        self._seen = 0  # positions appended since creation (the next position's index)

    def __len__(self) -> int:
        return self._n_sink + self._stop - self._start

    def __repr__(self) -> str:
        window = "" if self.window is None else f", window={self.window}"
        sinks = f", sinks={self.sinks}" if self.sinks else ""
        return (
            f"KVCache(n_kv_heads={self.n_kv_heads}, d_head={self.d_head}{window}{sinks}): {len(self)} positions "
            f"cached of {self._seen} seen, {self.nbytes} bytes"
        )

    @property
    def n_seen(self) -> int:
        """How many positions were appended since the cache was made (more than len(cache) with a window)."""
        return self._seen

    @property
    def positions(self) -> np.ndarray:
        """The positions (counted from 0) of the cached rows, oldest first: shape (n,)."""
        rolling = self._stop - self._start
        return np.concatenate([np.arange(self._n_sink), np.arange(self._seen - rolling, self._seen)])  # (n,)

    def _view(self, buf: np.ndarray | None, sink: np.ndarray | None) -> np.ndarray:
        if buf is None and sink is None:
            return np.zeros((self.n_kv_heads, 0, self.d_head))  # (g, 0, d_head) nothing cached yet
        if self._n_sink == 0:
            view = buf[:, self._start : self._stop]  # (g, n, d_head) a view, no copy
        elif buf is None or self._stop == self._start:
            view = sink[:, : self._n_sink]  # (g, n_sink, d_head) only sinks so far
        else:  # the sinks, then the rolling window: a copy (they are not next to each other in memory)
            view = np.concatenate([sink[:, : self._n_sink], buf[:, self._start : self._stop]], axis=1)  # (g, n, d_head)
        view.flags.writeable = False
        return view

    @property
    def K(self) -> np.ndarray:
        """The cached keys, oldest first: (g, n, d_head), read-only."""
        return self._view(self._k, self._sk)

    @property
    def V(self) -> np.ndarray:
        """The cached values, oldest first: (g, n, d_head), read-only."""
        return self._view(self._v, self._sv)

    @property
    def dtype(self) -> np.dtype | None:
        """The float type of the cached keys and values, set by the first append (None before it)."""
        buf = self._k if self._k is not None else self._sk
        return None if buf is None else buf.dtype

    @contextmanager
    def transaction(self) -> Iterator[KVCache]:
        """``with cache.transaction():`` appends in the block are undone if the block raises.

        An append writes only rows past the cached ones, or into a new buffer (the old one is kept), so
        restoring the buffers and the counters restores the cache exactly.
        """
        saved = (self._k, self._v, self._sk, self._sv, self._n_sink, self._start, self._stop, self._seen)
        try:
            yield self
        except BaseException:
            self._k, self._v, self._sk, self._sv, self._n_sink, self._start, self._stop, self._seen = saved
            raise

    @property
    def nbytes(self) -> int:
        """Bytes of the cached keys and values: 2 · g · n · d_head · bytes per number (0 when empty)."""
        if self.dtype is None:
            return 0
        return 2 * self.n_kv_heads * len(self) * self.d_head * self.dtype.itemsize

    def _check_new(self, x: object, name: str) -> np.ndarray:
        x = as_numeric(x, name, min_ndim=3)
        if x.ndim != 3 or x.shape[0] != self.n_kv_heads or x.shape[2] != self.d_head:
            raise ValueError(
                f"{name} has shape {x.shape} but this cache holds n_kv_heads = {self.n_kv_heads} heads of "
                f"d_head = {self.d_head}: {name} needs shape ({self.n_kv_heads}, t, {self.d_head})"
            )
        if self.dtype is not None and x.dtype != self.dtype:
            raise TypeError(f"{name} has dtype {x.dtype} but this cache holds {self.dtype} (set by the first append)")
        return x

    def append(self, k: object, v: object) -> None:
        """Add t >= 1 positions: k and v of shape (g, t, d_head); with a window, drop the oldest beyond it."""
        k = self._check_new(k, "k")  # (g, t, d_head)
        v = self._check_new(v, "v")  # (g, t, d_head)
        if k.shape != v.shape or k.dtype != v.dtype:
            raise ValueError(
                f"k and v must have the same shape and dtype, got {k.shape} {k.dtype} and {v.shape} {v.dtype}"
            )
        self.append_unchecked(k, v)

    def append_unchecked(self, k: np.ndarray, v: np.ndarray) -> None:
        """append without its checks: k and v are (g, t, d_head) float arrays of the cache's dtype (decode_step
        and the small GPT's ``helpers.language_model.block`` call it once per token, on arrays they made)."""
        if self._n_sink < self._n_slots:  # the first positions go to the sinks, kept for good
            if self._sk is None:
                self._sk = np.empty((self.n_kv_heads, self._n_slots, self.d_head), dtype=k.dtype)  # (g, s, d_head)
                self._sv = np.empty_like(self._sk)  # (g, s, d_head)
            m = min(k.shape[1], self._n_slots - self._n_sink)  # positions that still fit among the sinks
            self._sk[:, self._n_sink : self._n_sink + m] = k[:, :m]  # (g, m, d_head)
            self._sv[:, self._n_sink : self._n_sink + m] = v[:, :m]
            self._n_sink += m
            self._seen += m
            k, v = k[:, m:], v[:, m:]  # (g, t - m, d_head) the rest rolls
            if k.shape[1] == 0:
                return
        t = k.shape[1]
        self._seen += t
        if self.window is not None and t > self.window:  # only the last w new positions can stay
            k, v, t = k[:, -self.window :], v[:, -self.window :], self.window
        if self._k is None:
            capacity = max(16, 2 * t) if self.window is None else 2 * self.window
            self._k = np.empty((self.n_kv_heads, capacity, self.d_head), dtype=k.dtype)  # (g, capacity, d_head)
            self._v = np.empty_like(self._k)  # (g, capacity, d_head)
        if self._stop + t > self._k.shape[1]:  # full: move the kept rows to a new buffer (old views stay valid)
            keep = len(self) if self.window is None else min(len(self), self.window - t)
            capacity = max(2 * self._k.shape[1], keep + t) if self.window is None else self._k.shape[1]
            k_new = np.empty((self.n_kv_heads, capacity, self.d_head), dtype=self._k.dtype)  # (g, capacity, d_head)
            v_new = np.empty_like(k_new)  # (g, capacity, d_head)
            k_new[:, :keep] = self._k[:, self._stop - keep : self._stop]  # (g, keep, d_head)
            v_new[:, :keep] = self._v[:, self._stop - keep : self._stop]  # (g, keep, d_head)
            self._k, self._v, self._start, self._stop = k_new, v_new, 0, keep
        self._k[:, self._stop : self._stop + t] = k  # (g, t, d_head) into rows stop..stop+t-1
        self._v[:, self._stop : self._stop + t] = v  # (g, t, d_head)
        self._stop += t
        if self.window is not None:
            self._start = max(self._start, self._stop - self.window)  # keep the last w rows


# --------------------------------------------------------------------------- one decoding step


def decode_step(
    x: object,
    cache: KVCache,
    W_q: object,
    W_k: object,
    W_v: object,
    n_heads: int,
    n_kv_heads: int,
    W_o: object = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One token: append its key and value to ``cache``, attend its query to everything cached.

    x (d_in,). Returns (output (d_out,) or (h · d_head,) without W_o, weights (h, n)) with n = len(cache)
    after the append. Decoding X's rows one by one gives grouped_query_attention(X, ..., mask=causal_mask(T)).
    """
    n_heads, n_kv_heads = _check_heads(n_heads, n_kv_heads)
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache, got {type(cache).__name__}")
    fast = isinstance(x, np.ndarray) and x.dtype in FLOAT_DTYPES and x.ndim == 1 and x.size and np.isfinite(x).all()
    x = x if fast else as_numeric(x, "x", min_ndim=1)  # the full check (and its message) only when needed
    if x.ndim != 1:
        raise ValueError(
            f"x must be one token's vector of shape (d_in,), got shape {x.shape}; "
            "for many tokens at once use grouped_query_attention"
        )
    Ws = []
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        W = _matrix_unscanned(W, name)  # scanned for NaN/inf only if a product is not finite (below)
        if W.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix (d_in, d_out), got shape {W.shape}")
        if W.shape[0] != x.shape[0]:
            raise ValueError(
                f"x has {x.shape[0]} features but {name} has shape {W.shape}: {name} needs {x.shape[0]} rows"
            )
        Ws.append(W)
    W_q, W_k, W_v = Ws
    d_head = _check_widths(W_q.shape, W_k.shape, W_v.shape, n_heads, n_kv_heads)
    if cache.n_kv_heads != n_kv_heads or cache.d_head != d_head:
        raise ValueError(
            f"the cache holds n_kv_heads = {cache.n_kv_heads}, d_head = {cache.d_head} but this call has "
            f"n_kv_heads = {n_kv_heads}, d_head = {d_head}: one cache per layer, made with the layer's head counts"
        )
    W_o = _check_w_o(W_o, n_heads * d_head, scan=False)
    g = n_kv_heads
    # One errstate for the whole step, and two finiteness checks (the scores and the output): each costs
    # microseconds, and a step at d_model = 512 costs a few hundred. A NaN or inf anywhere upstream reaches
    # one of the two; only then does _explain_refusal look for its cause.
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        q = x @ W_q  # (d_in,) @ (d_in, h·d_head) -> (h·d_head,)
        k = x @ W_k  # (d_in,) @ (d_in, g·d_head) -> (g·d_head,)
        v = x @ W_v  # (d_in,) @ (d_in, g·d_head) -> (g·d_head,)
        if cache.dtype is not None and k.dtype != cache.dtype:
            raise TypeError(f"this step computes {k.dtype} keys but the cache holds {cache.dtype} (set by its "
                            "first append): give x and the weight matrices the cache's float type")
        with cache.transaction():  # a refused step leaves the cache as it was
            cache.append_unchecked(k.reshape(g, 1, d_head), v.reshape(g, 1, d_head))  # (g·d_head,) -> (g, 1, d_head)
            result = _attend_cached(q, cache, n_heads, n_kv_heads, d_head, W_o)  # (output, weights) or None
            if result is None:
                _explain_refusal(x, {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": W_o}, {"W_q": q, "W_k": k, "W_v": v})
        return result


def _attend_cached(
    q: np.ndarray, cache: KVCache, n_heads: int, n_kv_heads: int, d_head: int, W_o: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """decode_step after the append (in its errstate): q (h·d_head,) against the cache; (output, weights (h, n)),
    or None if the scores or the output are not finite."""
    g, r = n_kv_heads, n_heads // n_kv_heads
    K, V = cache.K, cache.V  # (g, n, d_head) each: the cached keys and values, read-only views
    scores = q.reshape(g, r, d_head) @ np.swapaxes(K, -1, -2)  # (g, r, d_head) @ (g, d_head, n) -> (g, r, n)
    scores *= scores.dtype.type(1.0 / math.sqrt(d_head))  # (g, r, n) scaled by 1/√d_head, in place
    if not np.isfinite(scores).all():  # also an overflow to -inf, which softmax would take for "weight 0"
        return None
    weights = softmax_in_place(scores)  # (g, r, n) every row sums to 1
    out = weights @ V  # (g, r, n) @ (g, n, d_head) -> (g, r, d_head)
    output = out.reshape(n_heads * d_head)  # (g, r, d_head) -> (h·d_head,), query head order
    if W_o is not None:
        output = output @ W_o  # (h·d_head,) @ (h·d_head, d_out) -> (d_out,)
    if not np.isfinite(output).all():
        return None
    return output, weights.reshape(n_heads, -1)  # (d_out,) or (h·d_head,), (h, n)


def _explain_refusal(x: np.ndarray, weights: dict, products: dict) -> None:
    """Raise (always) the reason a decoding step was not finite: a weight matrix holding NaN/inf, else the first
    overflow."""
    for name, W in weights.items():
        if W is not None:
            as_numeric(W, name)  # raises "W_q contains NaN (first at index ...)" when W holds one
    for name, p in products.items():
        refuse_overflow(p, f"x {x.shape} @ {name} {weights[name].shape}")  # raises if this one overflowed
    raise ValueError(
        f"the scores q Kᵀ or the output overflow {np.result_type(*products.values())}: use smaller inputs or "
        "weight matrices, or a wider float type"
    )


def layer_keys_values(
    X: object, layers: object, n_heads: int, *, causal: bool = True
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each layer's keys and values (T, h·d_head) when attention layers are stacked: a layer's output is the next X.

    ``layers`` is a list of (W_q, W_k, W_v), one per layer, each multi-head attention with n_heads heads
    (layer i+1's W have as many rows as layer i's W_v has columns). Attention only: a real layer's
    residual connection and MLP act on each token alone, so they change no row's dependence on other
    tokens. With ``causal=False`` no mask is applied: every row of a layer's output depends on every token.
    """
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    causal = check_flag(causal, "causal")
    if not isinstance(layers, (list, tuple)) or not layers:
        raise TypeError(f"layers must be a non-empty list of (W_q, W_k, W_v), got {layers!r:.80}")
    X = as_numeric(X, "X", min_ndim=2)
    if X.ndim != 2:
        raise ValueError(f"X must be one sequence of shape (T, d_in), got shape {X.shape}")
    mask = causal_mask(X.shape[0]) if causal else None  # (T, T) or None
    result = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, (list, tuple)) or len(layer) != 3:
            raise TypeError(f"layers[{i}] must be a tuple (W_q, W_k, W_v), got {type(layer).__name__}")
        try:
            _, K, V = project_qkv(X, *layer)  # (T, h·d_head) each: this layer's keys and values
            X, _ = grouped_query_attention(X, *layer, n_heads, n_heads, mask=mask)  # (T, h·d_head): the next X
        except ValueError as err:
            raise ValueError(f"layers[{i}]: {err}") from None
        result.append((K, V))
    return result


# --------------------------------------------------------------------------- memory


def kv_cache_bytes(
    n_layers: int, n_kv_heads: int, d_head: int, T: int, batch: int = 1, bytes_per_value: int = 2
) -> int:
    """Bytes of a full key/value cache: 2 (K and V) · layers · g · d_head · T · batch · bytes per number."""
    values = [
        check_int(value, name, minimum=1)
        for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads), ("d_head", d_head),
                            ("T", T), ("batch", batch), ("bytes_per_value", bytes_per_value))
    ]
    return 2 * math.prod(values)  # Python ints: exact at any size


def step_flops(t: int, d_in: int, n_heads: int, n_kv_heads: int, d_head: int, *, cache: bool) -> int:
    """Floating-point operations of one attention layer (no W_o) to produce the output of token t.

    A multiplication and an addition count as one operation each, so a (m, n) @ (n, p) product costs
    2·m·n·p. With the cache: project one token, 2·d_in·(h + 2g)·d_head, then its query meets t keys
    and t values, 4·h·t·d_head. Without it: project all t tokens, 2·t·d_in·(h + 2g)·d_head, then the
    whole (t, t) attention of every head, 4·h·t²·d_head (the row of token t is the only new one).
    """
    n_heads, n_kv_heads = _check_heads(n_heads, n_kv_heads)
    t = check_int(t, "t", minimum=1)
    d_in = check_int(d_in, "d_in", minimum=1)
    d_head = check_int(d_head, "d_head", minimum=1)
    cache = check_flag(cache, "cache")
    rows = 1 if cache else t  # tokens projected at this step
    projections = 2 * rows * d_in * (n_heads + 2 * n_kv_heads) * d_head  # q for h heads, k and v for g heads
    attention = 4 * n_heads * rows * t * d_head  # scores q·k and weights·v: 2·rows·t·d_head each, per head
    return projections + attention


def attention_parameters(d_model: int, n_heads: int, n_kv_heads: int, d_head: int) -> int:
    """Numbers in W_q (d_model, h·d_head), W_k and W_v (d_model, g·d_head) and W_o (h·d_head, d_model); no biases."""
    n_heads, n_kv_heads = _check_heads(n_heads, n_kv_heads)
    d_model = check_int(d_model, "d_model", minimum=1)
    d_head = check_int(d_head, "d_head", minimum=1)
    return 2 * d_model * n_heads * d_head + 2 * d_model * n_kv_heads * d_head  # W_q and W_o, then W_k and W_v


def mean_pool_kv_heads(W: object, n_heads: int, n_kv_heads: int) -> np.ndarray:
    """W_k or W_v of h heads (d_in, h·d_head) -> (d_in, g·d_head): each group's heads averaged.

    Ainslie et al. (2023, section 2.1) turn a multi-head checkpoint into a grouped-query one this way
    ("mean-pooled"), then train a little more. Group j holds query heads j·r … (j+1)·r − 1, r = h // g.
    """
    n_heads, n_kv_heads = _check_heads(n_heads, n_kv_heads)
    W = as_numeric(W, "W")
    if W.ndim != 2 or W.shape[1] % n_heads:
        raise ValueError(
            f"W has shape {W.shape}: it needs 2 dimensions and a number of columns divisible by n_heads = {n_heads}"
        )
    d_in, d_head = W.shape[0], W.shape[1] // n_heads
    groups = W.reshape(d_in, n_kv_heads, n_heads // n_kv_heads, d_head)  # (d_in, h·d_head) -> (d_in, g, r, d_head)
    return groups.mean(axis=2).reshape(d_in, n_kv_heads * d_head)  # (d_in, g, d_head) -> (d_in, g·d_head)


# --------------------------------------------------------------------------- published configurations
#
# Four decoders as published. Every value is cited beside it; tests/test_generation.py recounts each
# parameter count from the architecture. d_head = d_model / n_heads in all four. "context" is the
# longest input the released model was trained for; "window" is a sliding attention window (Mistral).
#
# GPT-2 small: Radford et al. 2019, "Language Models are Unsupervised Multitask Learners", Table 2
#   (12 layers, d_model 768; the table's "117M" parameters was a miscount); openai-community/gpt2
#   config.json: n_layer 12, n_head 12, n_embd 768, n_positions 1024, vocab_size 50257. Parameters of
#   the released checkpoint, counted (tied input/output embedding counted once): 124,439,808.
# Llama 2 7B: Touvron et al. 2023, "Llama 2", Table 1 (context length 4k, GQA only for 34B and 70B)
#   and section 2.2; meta-llama/Llama-2-7b-hf config.json: num_hidden_layers 32, num_attention_heads
#   32, num_key_value_heads 32, hidden_size 4096, intermediate_size 11008, vocab_size 32000,
#   max_position_embeddings 4096. Parameters (model card / safetensors): 6,738,415,616.
# Llama 3 8B: Llama 3 model card (GQA for 8B and 70B, context 8k) and Dubey et al. 2024, "The Llama 3
#   Herd of Models", Table 3 (32 layers, model dimension 4096, 32 attention heads, 8 key/value heads);
#   meta-llama/Meta-Llama-3-8B config.json: num_key_value_heads 8, intermediate_size 14336, vocab_size
#   128256, max_position_embeddings 8192 (Llama 3.1 8B: the same layers, 131072). Parameters: 8,030,261,248.
# Mistral 7B: Jiang et al. 2023, "Mistral 7B", Table 1: dim 4096, n_layers 32, head_dim 128,
#   hidden_dim 14336, n_heads 32, n_kv_heads 8, window_size 4096, context_len 8192, vocab_size 32000;
#   section 2 "Rolling Buffer Cache": the cache holds W = 4096 positions. Parameters
#   (mistralai/Mistral-7B-v0.1, safetensors): 7,241,732,096.
MODELS: dict[str, dict[str, object]] = {
    "GPT-2 small": {"n_layers": 12, "n_heads": 12, "n_kv_heads": 12, "d_head": 64, "d_model": 768,
                    "parameters": 124_439_808, "context": 1024, "window": None,
                    "source": "Radford et al. 2019, Table 2; config.json (openai-community/gpt2)"},
    "Llama 2 7B": {"n_layers": 32, "n_heads": 32, "n_kv_heads": 32, "d_head": 128, "d_model": 4096,
                   "parameters": 6_738_415_616, "context": 4096, "window": None,
                   "source": "Touvron et al. 2023, Table 1; config.json (meta-llama/Llama-2-7b-hf)"},
    "Llama 3 8B": {"n_layers": 32, "n_heads": 32, "n_kv_heads": 8, "d_head": 128, "d_model": 4096,
                   "parameters": 8_030_261_248, "context": 8192, "window": None,
                   "source": "Dubey et al. 2024, Table 3; model card; config.json (meta-llama/Meta-Llama-3-8B)"},
    "Mistral 7B": {"n_layers": 32, "n_heads": 32, "n_kv_heads": 8, "d_head": 128, "d_model": 4096,
                   "parameters": 7_241_732_096, "context": 8192, "window": 4096,
                   "source": "Jiang et al. 2023, Table 1; config.json (mistralai/Mistral-7B-v0.1)"},
}
