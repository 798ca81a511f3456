"""The explorer of lesson 10, attention for long texts: full, sliding window, latent and linear attention."""

from __future__ import annotations

import html
from collections.abc import Sequence

from helpers import sentence as S
from helpers.attention import causal_mask, merge_heads, multi_head_attention, project_qkv, split_heads
from helpers.controls import choice, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.generation import kv_cache_bytes
from helpers.longcontext import (
    latent_attention,
    latent_cache_bytes,
    linear_attention_weights,
    linear_state_bytes,
    low_rank_kv,
    sliding_window_mask,
)
from helpers.panels import Panel, View
from helpers.validate import check_int, check_matrix, check_tokens

__all__ = ["LongContextExplorer", "long_context_explorer", "LONG_METHODS", "LONG_TS"]


LONG_METHODS = ("full", "sliding window", "latent", "linear")
LONG_TS = (4096, 32768, 131072)  # the "long T" choices for the cache bytes


@register(demo=lambda: LongContextExplorer(S.embeddings(), *S.two_heads(), S.TOKENS))
class LongContextExplorer(Explorer):
    """10: one causal multi-head layer computed four ways (a method selector): full attention, a sliding
    window of w keys, a latent of d_c numbers per token (keys and values from the best rank-d_c factors
    of [W_k | W_v] for X, ``helpers.longcontext.low_rank_kv``), or linear attention (φ = elu + 1).
    The readout gives each method's cache or state in bytes (16-bit numbers, one layer) at T = 8 and at
    a chosen long T."""

    kind = "long-context"
    about = ("a method selector (full, sliding window, latent, linear), a window slider and a latent-width slider; "
             "each head's attention weights and the cache or state bytes at T = 8 and at a long T")

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, n_heads: int = 2, method: str = "sliding window", window: int = 3, d_c: int = 1,
                 long_T: int = 32768) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.W = {n: check_matrix(m, n).astype(float) for n, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
        self.n_heads = check_int(n_heads, "n_heads", minimum=1)
        T = self.X.shape[0]
        _, self._w_full = multi_head_attention(self.X, *self.W.values(), self.n_heads,
                                               mask=causal_mask(T))  # (h, T, T); checks every shape
        self.tokens = check_tokens(token_labels, T)
        self.d_head = self.W["W_q"].shape[1] // self.n_heads
        self.d_v = self.W["W_v"].shape[1] // self.n_heads
        if self.W["W_k"].shape[1] != self.W["W_v"].shape[1]:
            raise ValueError(f"W_k has shape {self.W['W_k'].shape} but W_v has shape {self.W['W_v'].shape}: "
                             "the cache bytes assume keys and values of the same width")
        d_max = self.W["W_k"].shape[1] + self.W["W_v"].shape[1]  # a latent this wide stores as much as K and V
        super().__init__(
            method=choice("method", LONG_METHODS, method),
            window=scalar_slider("window", window, min=1, max=T, integer=True, description="window w (keys)"),
            d_c=scalar_slider("d_c", d_c, min=1, max=d_max, integer=True, description="latent width d_c"),
            long_T=choice("long_T", LONG_TS, long_T, description="long T"),
        )
        self.controls["method"].observe(self._enable, "value")
        self._enable()

    def _enable(self, _change: object = None) -> None:
        """Grey out the slider the chosen method ignores (linear attention has none)."""
        method = self.controls["method"].value
        self.controls["window"].disabled = method != "sliding window"
        self.controls["d_c"].disabled = method != "latent"

    def _bytes(self, T: int, window: int, d_c: int) -> dict[str, int]:
        """Cache or state bytes of one layer at T tokens, 2 bytes a number, for every method."""
        g, d = self.n_heads, self.d_head
        return {"full": kv_cache_bytes(1, g, d, T), "sliding window": kv_cache_bytes(1, g, d, min(T, window)),
                "latent": latent_cache_bytes(1, d_c, T), "linear": linear_state_bytes(d, self.d_v, n_heads=g)}

    def show(self, method: str, window: int, d_c: int, long_T: int) -> Shown:
        if method not in LONG_METHODS:
            raise ValueError(f"method must be one of {list(LONG_METHODS)}, got {method!r}")
        X, (W_q, W_k, W_v), h = self.X, self.W.values(), self.n_heads
        T = X.shape[0]
        if method == "full":
            out, w = multi_head_attention(X, W_q, W_k, W_v, h, mask=causal_mask(T))  # (T, h·d_v), (h, T, T)
            what = "full causal attention"
        elif method == "sliding window":
            out, w = multi_head_attention(X, W_q, W_k, W_v, h, mask=sliding_window_mask(T, window))
            what = f"sliding window, w = {window}"
        elif method == "latent":
            W_dkv, W_uk, W_uv = low_rank_kv(W_k, W_v, d_c, X=X)  # (d_in, d_c), (d_c, h·d_head), (d_c, h·d_v)
            out, w = latent_attention(X, W_q, W_dkv, W_uk, W_uv, h, mask=causal_mask(T), absorb=True)
            what = f"latent, d_c = {d_c}"
        else:
            Q, K, V = project_qkv(X, W_q, W_k, W_v)  # (T, h·d_head), (T, h·d_head), (T, h·d_v)
            Qh, Kh, Vh = (split_heads(M, h) for M in (Q, K, V))  # (h, T, d_head) each
            w = linear_attention_weights(Qh, Kh, causal=True)  # (h, T, T)
            out = merge_heads(w @ Vh)  # (h, T, T) @ (h, T, d_v) -> (h, T, d_v) -> (T, h·d_v)
            what = "linear attention, φ = elu + 1"
        t = self.tokens
        main = [Panel(w[i], f"head {i + 1}: {what}", t, t) for i in range(h)]
        ref = [Panel(self._w_full[i], f"head {i + 1}: full causal attention", t, t) for i in range(h)]
        short, long = self._bytes(T, window, d_c), self._bytes(long_T, window, d_c)
        bold = {m: " style='font-weight:bold'" if m == method else "" for m in LONG_METHODS}
        rows = "".join(f"<tr{bold[m]}><td>{html.escape(m)}</td><td style='text-align:right'>{short[m]:,}</td>"
                       f"<td style='text-align:right'>{long[m]:,}</td></tr>" for m in LONG_METHODS)
        note = (f"Cache (state, for linear) of this layer in bytes, 16-bit numbers:"
                f"<table class='attn-bytes'><tr><th>method</th><th>T = {T}</th><th>T = {long_T:,}</th></tr>"
                f"{rows}</table>")
        inputs = {"X": X, "W_q": W_q, "W_k": W_k, "W_v": W_v, "n_heads": h, "method": method, "window": window,
                  "d_c": d_c, "long_T": long_T}
        return Shown([View(main), View(ref, title="for reference: full causal attention")], inputs=inputs,
                     weights=w, output=out, note=note, extra={"bytes": {"T": T, "short": short, "long_T": long_T,
                                                                        "long": long}})


long_context_explorer = LongContextExplorer
