"""The explorers of lesson 02, query, key, value: sliders on W_q, W_k, W_v, and why scores are scaled by 1/√d_k."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from helpers import examples as E
from helpers.attention import project_qkv, scaled_dot_product_attention, single_head_attention
from helpers.controls import MatrixSliders, checkbox, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register, steps_shown
from helpers.panels import Panel, View
from helpers.validate import check_int, check_matrix, check_tokens

__all__ = ["QKVExplorer", "qkv_explorer", "ScalingExplorer", "scaling_explorer"]


@register(demo=lambda: QKVExplorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV))
class QKVExplorer(Explorer):
    """02: softmax((X W_q)(X W_k)ᵀ · scale)(X W_v) with matrix sliders for W_q, W_k, W_v."""

    kind = "qkv"
    about = "sliders on W_q, W_k and W_v; the attention weights and every step of softmax(Q Kᵀ/√d_k) V"
    # yours=: the student's self_attention(X, W_q, W_k, W_v)
    yours_spec_name = "helpers.checks.nb02:SPEC_SELF_ATTENTION"

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, scaled: bool = True, min: float | None = None, max: float | None = None,
                 step: float | None = None, feature_labels: Sequence[str] | None = None, yours: object = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        Ws = {"W_q": check_matrix(W_q, "W_q"), "W_k": check_matrix(W_k, "W_k"), "W_v": check_matrix(W_v, "W_v")}
        single_head_attention(self.X, *Ws.values())  # checks every shape, naming the argument
        self.tokens, self.d_k = check_tokens(token_labels, self.X.shape[0]), Ws["W_q"].shape[1]
        sliders = {n: MatrixSliders(n, m, min=min, max=max, step=step, row_labels=feature_labels)
                   for n, m in Ws.items()}
        super().__init__(**sliders, scale=checkbox("scale", scaled, description=f"scale by 1/√d_k (d_k = {self.d_k})"),
                         yours=yours)

    def yours_args(self, values: dict) -> tuple:
        return self.X, values["W_q"], values["W_k"], values["W_v"]  # self_attention(X, W_q, W_k, W_v)

    def show(self, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, scale: bool) -> Shown:
        s = 1 / math.sqrt(self.d_k) if scale else 1.0
        Q, K, V = project_qkv(self.X, W_q, W_k, W_v)  # (T, d_k), (T, d_k), (T, d_v)
        return steps_shown(Q, K, V, s, self.tokens, {"X": self.X, "W_q": W_q, "W_k": W_k, "W_v": W_v, "scaled": scale})


@register(demo=lambda: ScalingExplorer(d_k_max=64, seed=1, d_k=16))
class ScalingExplorer(Explorer):
    """02: random unit-variance q, k; softmax(q·k) saturates as d_k grows, softmax(q·k/√d_k) does not."""

    kind = "scaling"
    about = "a d_k slider; attention weights of random queries and keys with and without 1/√d_k"

    def __init__(self, d_k_max: int = 256, seed: int = 0, *, d_k: int = 64, n_tokens: int = 5,
                 n_samples: int = 4000) -> None:
        for name, v, lo in (("d_k_max", d_k_max, 1), ("seed", seed, 0), ("d_k", d_k, 1), ("n_tokens", n_tokens, 1),
                            ("n_samples", n_samples, 2)):
            check_int(v, name, minimum=lo)
        if d_k > d_k_max or d_k_max > 1024 or n_tokens > 8:
            raise ValueError(f"need d_k <= d_k_max <= 1024 and n_tokens <= 8, got d_k={d_k}, d_k_max={d_k_max}, "
                             f"n_tokens={n_tokens}")
        if n_samples > 10_000:  # two (n_samples, d_k_max) float64 arrays: at most 2 · 82 MB
            raise ValueError(f"n_samples must be at most 10,000 (two arrays of n_samples × d_k_max random numbers are "
                             f"drawn; the default is 4,000), got {n_samples:,}")
        self.seed, self.n_samples, self.n_tokens = int(seed), int(n_samples), int(n_tokens)
        self.tokens = [f"t{t + 1}" for t in range(n_tokens)]
        rng = np.random.default_rng(seed)
        self._Q = rng.standard_normal((n_tokens, d_k_max))  # (T, d_k_max) every entry ~ N(0, 1)
        self._K = rng.standard_normal((n_tokens, d_k_max))  # (T, d_k_max)
        q = rng.standard_normal((n_samples, d_k_max))  # (n, d_k_max) many independent pairs q, k
        k = rng.standard_normal((n_samples, d_k_max))  # (n, d_k_max)
        self._var = np.cumsum(q * k, axis=1).var(axis=0)  # (d_k_max,) Var(q·k) using the first d components
        super().__init__(d_k=scalar_slider("d_k", int(d_k), min=1, max=int(d_k_max), integer=True))

    def show(self, d_k: int) -> Shown:
        Q, K = self._Q[:, :d_k], self._K[:, :d_k]  # (T, d_k) each
        V = np.zeros((self.n_tokens, 1))  # (T, 1) unused: only the attention weights are shown
        _, unscaled = scaled_dot_product_attention(Q, K, V, scale=1.0)  # (T, T)
        _, scaled = scaled_dot_product_attention(Q, K, V)  # (T, T) scale 1/sqrt(d_k)
        t = self.tokens
        panels = [Panel(unscaled, f"not scaled (d_k = {d_k})", t, t), Panel(scaled, f"scaled by 1/√{d_k}", t, t)]
        var = float(self._var[d_k - 1])
        note = (f"Var(q·k) over {self.n_samples} random pairs: <b>{var:.2f}</b> (theory: d_k = {d_k}); "
                f"after dividing by √d_k: <b>{var / d_k:.3f}</b> (theory: 1)")
        return Shown(View(panels), inputs={"d_k": d_k, "seed": self.seed, "Q": Q, "K": K}, weights=scaled, note=note,
                     extra={"weights_unscaled": unscaled,
                            "variance": {"unscaled": var, "scaled": var / d_k, "n_samples": self.n_samples}})


qkv_explorer = QKVExplorer
scaling_explorer = ScalingExplorer
