"""The explorers of lesson 14, what today's models change in attention: a sink logit, bounded scores, a pattern of
local and global layers, the delta rule's memory."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from helpers import sentence as S
from helpers.attention import causal_mask, project_qkv, softmax
from helpers.controls import scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.longcontext import sliding_window_mask
from helpers.modern import (
    layer_kinds,
    pattern_reach,
    qk_norm_score_bound,
    recall_accuracy,
    recall_readout,
    recall_task,
    rms_norm,
    soft_cap,
    softmax_with_sink,
)
from helpers.panels import Panel, View
from helpers.validate import check_int, check_matrix, check_tokens

__all__ = ["SinkExplorer", "sink_explorer", "BoundedScoresExplorer", "bounded_scores_explorer", "LayerPatternExplorer",
           "layer_pattern_explorer", "DeltaRuleExplorer", "delta_rule_explorer", "SINK_LABEL"]

SINK_LABEL = "sink"  # the column that shows the weight the sink took


@register(demo=lambda: SinkExplorer(S.embeddings(), *S.pronoun_head(), S.TOKENS))
class SinkExplorer(Explorer):
    """14: one causal head whose softmax has an extra key, the sink, with a score set by a slider (GPT-OSS learns
    one per head). Its last column shows the weight the sink took, 1 − the row's sum; below, plain softmax."""

    kind = "sink"
    about = ("a slider sets the sink logit; each query row's attention weights with the sink (its last column: "
             "the weight the sink took) over plain causal softmax")

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, sink_logit: float = 0.0) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.W = {n: check_matrix(m, n).astype(float) for n, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
        Q, K, V = project_qkv(self.X, *self.W.values())  # (T, d_k), (T, d_k), (T, d_v): checks every shape
        T = self.X.shape[0]
        self.scores = np.where(causal_mask(T), Q @ K.T / np.sqrt(Q.shape[1]), -np.inf)  # (T, T) masked
        self.V = V
        self.tokens = check_tokens(token_labels, T)
        super().__init__(sink_logit=scalar_slider("sink_logit", float(sink_logit), min=-4.0, max=6.0, step=0.5,
                                                  description="sink logit", readout_format=".1f"))

    def show(self, sink_logit: float) -> Shown:
        w = softmax_with_sink(self.scores, sink_logit)  # (T, T) rows sum to < 1
        plain = softmax(self.scores)  # (T, T) rows sum to 1
        to_sink = 1.0 - w.sum(axis=1, keepdims=True)  # (T, 1) the weight the sink took
        t = self.tokens
        cols = [*t, SINK_LABEL]
        main = Panel(np.concatenate([w, to_sink], axis=1), f"with a sink, logit {sink_logit:.1f}", t, cols)
        ref = Panel(np.concatenate([plain, np.zeros((len(t), 1))], axis=1), "plain softmax (no sink)", t, cols)
        out = w @ self.V  # (T, T) @ (T, d_v) -> (T, d_v): the sink adds nothing
        norms = np.linalg.norm(out, axis=1)  # (T,)
        largest = int(np.argmax(w.max(axis=1)))  # the row that found something
        note = (f"weight the sink took, per query: {', '.join(f'{x:.2f}' for x in to_sink[:, 0])}; "
                f"largest weight on a key: {w.max():.3f} (query {largest + 1}, {html.escape(t[largest])}); "
                f"output length per query: {', '.join(f'{x:.2f}' for x in norms)}")
        inputs = {"X": self.X, **self.W, "sink_logit": sink_logit}
        return Shown([View([main]), View([ref], title="for reference: plain causal softmax")], inputs=inputs,
                     weights=w, output=out, note=note, extra={"to_sink": to_sink[:, 0]})


sink_explorer = SinkExplorer


@register(demo=lambda: DeltaRuleExplorer())
class DeltaRuleExplorer(Explorer):
    """14: n writes "key → value" into a memory of d_k one-hot keys (``helpers.modern.recall_task``); the state read
    at each key after linear attention's adding and after the delta rule, beside each key's latest value.
    ``.weights`` is the delta rule's readout (d_k, d_v), ``.output`` linear attention's (no attention weights here)."""

    kind = "delta-rule"
    about = ("sliders for the number of writes n, the write strength β and the gate α; what linear attention and "
             "the delta rule hold for each key, beside the value last written to it")

    def __init__(self, *, n: int = 8, beta: float = 1.0, alpha: float = 1.0, d_k: int = 4, d_v: int = 3,
                 seed: int = 0, n_max: int = 32) -> None:
        self.d_k = check_int(d_k, "d_k", minimum=1, maximum=12)
        self.d_v = check_int(d_v, "d_v", minimum=1, maximum=12)
        self.seed = check_int(seed, "seed", minimum=0)
        n_max = check_int(n_max, "n_max", minimum=1, maximum=200)
        super().__init__(
            n=scalar_slider("n", n, min=1, max=n_max, integer=True, description="writes n"),
            beta=scalar_slider("beta", float(beta), min=0.0, max=1.0, step=0.05, description="write strength β",
                               readout_format=".2f"),
            alpha=scalar_slider("alpha", float(alpha), min=0.5, max=1.0, step=0.05, description="gate α (1: keep)",
                                readout_format=".2f"),
        )

    def show(self, n: int, beta: float, alpha: float) -> Shown:
        # (n, d_k), (n, d_v), (d_k,)
        K, V, latest = recall_task(n, self.d_k, self.d_v, np.random.default_rng(self.seed))
        lin = recall_readout(K, V, "linear", beta, alpha)  # (d_k, d_v)
        delta = recall_readout(K, V, "delta", beta, alpha)  # (d_k, d_v)
        target = np.where(latest[:, None] >= 0, V[np.maximum(latest, 0)], np.nan)  # (d_k, d_v) nan: never written
        lim = float(np.nanmax(np.abs(np.concatenate([lin, delta, target])))) or 1.0
        rows = [f"key {s + 1}" for s in range(self.d_k)]
        cols = [f"v{j + 1}" for j in range(self.d_v)]
        axes = {"kind": "values", "xlabel": "value entry", "ylabel": "key read", "vmin": -lim, "vmax": lim}
        panels = [Panel(lin, "linear: S += β v kᵀ", rows, cols, **axes),
                  Panel(delta, "delta rule: erase, then write", rows, cols, **axes),
                  Panel(target, "value last written", rows, cols, kind="values", xlabel="value entry",
                        ylabel="key read", vmin=-lim, vmax=lim)]
        acc = {m: recall_accuracy(n, m, beta, alpha, d_k=self.d_k, d_v=self.d_v, seeds=50) for m in ("linear", "delta")}
        writes = np.argmax(K, axis=1) + 1  # (n,) the key of each write, from 1
        note = (f"writes to keys: {' '.join(str(int(s)) for s in writes)}; recalled (nearest value is the latest), "
                f"over 50 such tasks: linear <b>{acc['linear']:.0%}</b>, delta rule <b>{acc['delta']:.0%}</b>")
        inputs = {"K": K, "V": V, "n": n, "beta": beta, "alpha": alpha, "d_k": self.d_k, "d_v": self.d_v,
                  "seed": self.seed}
        return Shown(View(panels), inputs=inputs, weights=delta, output=lin, note=note,
                     extra={"accuracy": acc, "latest": latest})


delta_rule_explorer = DeltaRuleExplorer


@register(demo=lambda: BoundedScoresExplorer(S.embeddings(), S.TOKENS))
class BoundedScoresExplorer(Explorer):
    """14: 01's attention without weight matrices, queries = keys = a·X with a = 10^m; the attention weights of plain
    softmax, after QK-norm (``rms_norm`` with gain g on queries and keys) and after soft-capping at c."""

    kind = "bounded-scores"
    about = ("sliders for the size of the vectors (a = 10^m), the QK-norm gain g and the soft cap c; the attention "
             "weights of plain softmax, after QK-norm and after soft-capping, and each one's largest score")

    def __init__(self, X: object, token_labels: Sequence[str] | None = None, *, m: float = 0.0, gain: float = 1.0,
                 cap: float = 5.0) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d)
        self.tokens = check_tokens(token_labels, self.X.shape[0])
        super().__init__(
            m=scalar_slider("m", float(m), min=-1.0, max=2.0, step=0.25, description="size a = 10^m",
                            readout_format=".2f"),
            gain=scalar_slider("gain", float(gain), min=0.25, max=4.0, step=0.25, description="QK-norm gain g",
                               readout_format=".2f"),
            cap=scalar_slider("cap", float(cap), min=1.0, max=50.0, step=1.0, description="soft cap c",
                              readout_format=".0f"),
        )

    def show(self, m: float, gain: float, cap: float) -> Shown:
        d = self.X.shape[1]
        A = 10.0**m * self.X  # (T, d) queries and keys alike
        raw = A @ A.T / np.sqrt(d)  # (T, d) @ (d, T) -> (T, T) scaled scores
        g = np.full(d, gain)  # (d,)
        An = rms_norm(A, g)  # (T, d) each row: root mean square 1, times g
        normed = An @ An.T / np.sqrt(d)  # (T, T)
        capped = soft_cap(raw, cap)  # (T, T)
        ws = {"plain": softmax(raw), "QK-norm": softmax(normed), "soft cap": softmax(capped)}  # (T, T) each
        t = self.tokens
        panels = [Panel(ws["plain"], f"plain, a = 10^{m:.2f}", t, t),
                  Panel(ws["QK-norm"], f"QK-norm, g = {gain:g}", t, t),
                  Panel(ws["soft cap"], f"soft cap c = {cap:g}", t, t)]
        top = {"plain": np.abs(raw).max(), "QK-norm": np.abs(normed).max(), "soft cap": np.abs(capped).max()}
        bound = qk_norm_score_bound(d, g, g)
        note = (f"largest |scaled score|: plain <b>{top['plain']:.4g}</b>, QK-norm {top['QK-norm']:.3f} "
                f"(bound √d·g² = {bound:.3f}), soft cap {top['soft cap']:.3f} (bound c = {cap:g}); "
                f"exp overflows float32 above 88.72")
        inputs = {"X": self.X, "m": m, "gain": gain, "cap": cap}
        return Shown(View(panels), inputs=inputs, weights=ws["QK-norm"], output=None, note=note,
                     extra={"largest_score": top, "bound": bound})


bounded_scores_explorer = BoundedScoresExplorer


@register(demo=lambda: LayerPatternExplorer())
class LayerPatternExplorer(Explorer):
    """14: L layers of T tokens, r local layers (a window of w keys) per global one: whom each token can draw on
    after the layers (``helpers.modern.pattern_reach``), and how many positions the layers' caches hold."""

    kind = "layer-pattern"
    about = ("sliders for the local layers per global one, the window and the number of layers; who can draw on "
             "whom after the layers, and the positions their caches hold")

    def __init__(self, T: int = 12, *, local_per_global: int = 1, window: int = 3, n_layers: int = 2) -> None:
        self.T = check_int(T, "T", minimum=2, maximum=40)
        super().__init__(
            local_per_global=scalar_slider("local_per_global", local_per_global, min=0, max=5, integer=True,
                                           description="local layers per global"),
            window=scalar_slider("window", window, min=1, max=self.T, integer=True, description="window w"),
            n_layers=scalar_slider("n_layers", n_layers, min=1, max=6, integer=True, description="layers L"),
        )

    def show(self, local_per_global: int, window: int, n_layers: int) -> Shown:
        kinds = layer_kinds(n_layers, local_per_global)
        R = pattern_reach(self.T, window, kinds).astype(float)  # (T, T) 1 = token i can draw on token j
        band = sliding_window_mask(self.T, window).astype(float)  # (T, T) one local layer
        labels = [str(i + 1) for i in range(self.T)]
        panels = [Panel(band, f"one local layer, w = {window}", labels, labels, kind="values", vmin=0, vmax=1,
                        xlabel="key", ylabel="query"),
                  Panel(R, f"after {n_layers}: {', '.join(kinds)}", labels, labels, kind="values", vmin=0, vmax=1,
                        xlabel="token j", ylabel="token i")]
        cached = sum(min(self.T, window) if k == "local" else self.T for k in kinds)
        note = (f"layers: {', '.join(kinds)}; the last token draws on tokens {int(np.argmax(R[-1])) + 1}–{self.T}; "
                f"positions cached at T = {self.T}: <b>{cached}</b> (all global: {n_layers * self.T})")
        inputs = {"T": self.T, "local_per_global": local_per_global, "window": window, "n_layers": n_layers}
        return Shown(View(panels, color_bars=False), inputs=inputs, weights=R, output=None, note=note,
                     extra={"kinds": kinds, "cached": cached})


layer_pattern_explorer = LayerPatternExplorer
