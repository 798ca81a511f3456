"""The explorer of lesson 09, generating text: a key/value cache that grows token by token."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from helpers import sentence as S
from helpers.attention import multi_head_attention
from helpers.controls import choice, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.generation import KVCache, decode_step, mean_pool_kv_heads
from helpers.panels import Panel, View
from helpers.validate import check_int, check_matrix, check_tokens

__all__ = ["GenerationExplorer", "generation_explorer"]


@register(demo=lambda: GenerationExplorer(
    S.embeddings(), *np.random.default_rng(0).normal(size=(3, 6, 4)).round(1), 2, S.TOKENS, step=3))
class GenerationExplorer(Explorer):
    """09: a step slider generates the tokens one by one with a key/value cache; a key/value-heads menu.

    At step t the cache holds the keys and values of tokens 1..t (one (t, d_head) block per key/value
    head); the new token's query of each head attends to them (the main view, (h, t)). With fewer
    key/value heads than query heads, each group's W_k and W_v are mean-pooled (Ainslie et al. 2023's
    conversion of a multi-head model): query heads j·r+1 … (j+1)·r read key/value head j+1 (from 1).
    """

    kind = "generation"
    about = ("a step slider generates the sentence token by token: the cached keys and values grow a row, the new "
             "query's attention weights per head")

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, n_heads: int,
                 token_labels: Sequence[str] | None = None, *, step: int | None = None,
                 n_kv_heads: int | None = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.W = {n: check_matrix(m, n).astype(float) for n, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
        self.n_heads = check_int(n_heads, "n_heads", minimum=1)
        multi_head_attention(self.X, *self.W.values(), self.n_heads)  # checks every shape, naming the argument
        if self.W["W_k"].shape[1] != self.W["W_q"].shape[1] or self.W["W_v"].shape[1] != self.W["W_q"].shape[1]:
            raise ValueError(f"W_q, W_k, W_v must have the same width (one key/value head per query head to start "
                             f"from), got {self.W['W_q'].shape}, {self.W['W_k'].shape}, {self.W['W_v'].shape}")
        T = self.X.shape[0]
        self.tokens = check_tokens(token_labels, T)
        self.d_head = self.W["W_q"].shape[1] // self.n_heads
        self.options = [g for g in range(self.n_heads, 0, -1) if self.n_heads % g == 0]  # h first: multi-head
        n_kv_heads = self.n_heads if n_kv_heads is None else n_kv_heads
        if n_kv_heads not in self.options:
            raise ValueError(f"n_kv_heads must divide n_heads = {self.n_heads}: one of {self.options}, got "
                             f"{n_kv_heads!r}")
        step = T if step is None else check_int(step, "step", minimum=1)
        if step > T:
            raise ValueError(f"step must be 1 to {T} (X has {T} tokens), got {step}")
        self.kv = {g: (mean_pool_kv_heads(self.W["W_k"], self.n_heads, g),
                       mean_pool_kv_heads(self.W["W_v"], self.n_heads, g))
                   for g in self.options}  # (d_in, g·d_head) each: W_k and W_v of every choice, built once
        self.ranges = {}  # one colour scale per matrix over every step and choice: frames stay comparable
        for name, i in (("K", 0), ("V", 1)):
            every = np.concatenate([(self.X @ self.kv[g][i]).ravel() for g in self.options])
            lo, hi = float(every.min()), float(every.max())
            self.ranges[name] = (lo, hi) if lo < hi else (lo - 1.0, hi + 1.0)
        super().__init__(step=scalar_slider("step", step, min=1, max=T, integer=True,
                                            description=f"step (tokens generated, of {T})"),
                         n_kv_heads=choice("n_kv_heads", self.options, n_kv_heads, description="key/value heads"))

    def show(self, step: int, n_kv_heads: int) -> Shown:
        T, h, g, d = self.X.shape[0], self.n_heads, n_kv_heads, self.d_head
        if not 1 <= step <= T or g not in self.options:
            raise ValueError(f"step must be 1 to {T} and n_kv_heads one of {self.options}, got {step}, {g}")
        W_k, W_v = self.kv[g]
        cache = KVCache(g, d)
        for t in range(step):  # generate tokens 1..step, one at a time
            out, w = decode_step(self.X[t], cache, self.W["W_q"], W_k, W_v, h, g)  # (h·d_head,), (h, t+1)
        r, toks, cols = h // g, self.tokens[:step], [str(j + 1) for j in range(d)]
        reads = [f"head {i + 1} (kv {i // r + 1})" for i in range(h)]  # query head i+1 reads kv head i//r + 1
        main = Panel(w, f"step {step}: the query of '{self.tokens[step - 1]}' over {step} cached keys", reads, toks,
                     xlabel="cached key", ylabel="query head")
        kv_panels = []
        for name, M in (("K", cache.K), ("V", cache.V)):  # (g, step, d_head) each
            for j in range(g):
                kv_panels.append(Panel(M[j], f"{name}, kv {j + 1}", toks, cols, kind="values",
                                       vmin=self.ranges[name][0], vmax=self.ranges[name][1], xlabel="column",
                                       ylabel="token", color_bar_label=f"{name} (same scale at every step)"))
        serves = "; ".join(f"kv {j + 1}: query head{'s' * (r > 1)} {j * r + 1}" + (f"–{(j + 1) * r}" if r > 1 else "")
                           for j in range(g))
        note = (f"step {step} of {T}: the new token is '{html.escape(self.tokens[step - 1])}'. The cache holds "
                f"{g} key/value head{'s' * (g > 1)} × {step} position{'s' * (step > 1)} × {d} numbers × 2 (K and V) "
                f"× {cache.K.itemsize} bytes = <b>{cache.nbytes} bytes</b>"
                + ("" if g == h else f"; each key/value head serves {r} query heads (W_k, W_v mean-pooled)"))
        inputs = {"X": self.X, "W_q": self.W["W_q"], "W_k": W_k, "W_v": W_v, "W_k_heads": self.W["W_k"],
                  "W_v_heads": self.W["W_v"], "n_heads": h, "n_kv_heads": g, "step": step}
        cache_view = View(kv_panels, title=f"the cache ({serves})", ncols=2 * g if g <= 2 else g)
        return Shown([View([main]), cache_view], inputs=inputs, weights=w,
                     output=out, note=note, extra={"cache_bytes": cache.nbytes, "cache_shape": list(cache.K.shape)})


generation_explorer = GenerationExplorer
