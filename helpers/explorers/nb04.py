"""The explorer of lesson 04, multi-head attention: one heatmap per head."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as W
import numpy as np

from helpers import examples as E
from helpers.attention import multi_head_attention, xavier_normal
from helpers.controls import MatrixSliders
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.validate import check_int, check_matrix, check_range, check_tokens

__all__ = ["MultiheadExplorer", "multihead_explorer"]


min_ = min  # the builtin; MultiheadExplorer's keyword `min` hides it inside __init__


@register(demo=lambda: MultiheadExplorer(E.T001_X, 4, seed=0))
class MultiheadExplorer(Explorer):
    """04: the attention weights of every head on one 0..1 scale; a heads selector (divisors of d_model)
    and sliders on W_q, W_k, W_v (head j owns columns j·d_head+1 … (j+1)·d_head, counted from 1)."""

    kind = "multihead"
    about = "sliders on W_q, W_k, W_v and a heads selector; one attention-weights heatmap per head"
    yours_spec_name = "helpers.checks.nb04:SPEC_MULTI_HEAD_ATTENTION"  # yours=: multi_head_attention(X, ..., n_heads)

    def __init__(self, X: object, d_model: int, *, W_q: object = None, W_k: object = None, W_v: object = None,
                 seed: int = 0, n_heads: int | None = None, token_labels: Sequence[str] | None = None,
                 min: float = -2.0, max: float = 2.0, step: float = 0.05,
                 feature_labels: Sequence[str] | None = None, yours: object = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.d_model = check_int(d_model, "d_model", minimum=1)
        if self.d_model > 8:
            raise ValueError(f"d_model must be at most 8 here (one slider per entry), got {d_model}")
        self.options = [h for h in range(1, self.d_model + 1) if self.d_model % h == 0]
        check_int(seed, "seed", minimum=0)
        check_range(min, max, step, "the sliders of W_q, W_k, W_v")  # min and max first: then step
        n_heads = self.options[min_(1, len(self.options) - 1)] if n_heads is None else n_heads
        if n_heads not in self.options:
            raise ValueError(f"n_heads must divide d_model {d_model}: choose one of {self.options}, got {n_heads!r}")
        rng, d_in = np.random.default_rng(seed), self.X.shape[1]
        Ws = {}
        for name, given in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
            m = (np.round(xavier_normal(d_in, self.d_model, rng) / step) * step if given is None
                 else check_matrix(given, name).astype(float))  # (d_in, d_model), random ones on the slider grid
            if m.shape != (d_in, self.d_model):
                raise ValueError(f"{name} has shape {m.shape} but X has {d_in} features and d_model is {d_model}: "
                                 f"{name} needs shape ({d_in}, {d_model})")
            Ws[name] = MatrixSliders(name, np.clip(m, min, max) if given is None else m, min=min, max=max,
                                     step=step, integer=False, slider_width="120px", row_labels=feature_labels)
        self.tokens = check_tokens(token_labels, self.X.shape[0])
        heads = W.SelectionSlider(options=self.options, value=n_heads, description="heads", continuous_update=True)
        heads.add_class("attn-slider")
        heads.add_class("attn-slider--heads")
        # yours=: the student's function also takes W_o, which no slider moves; a fixed one from its own generator
        # (d_model, d_model)
        self.W_o = np.round(xavier_normal(self.d_model, self.d_model, np.random.default_rng([seed, 4])), 2)
        super().__init__(heads=heads, **Ws, yours=yours)

    def yours_args(self, values: dict) -> tuple:  # multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads)
        return self.X, values["W_q"], values["W_k"], values["W_v"], self.W_o, values["heads"]

    def show(self, heads: int, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray) -> Shown:
        out, w = multi_head_attention(self.X, W_q, W_k, W_v, heads)  # (T, d_model), (h, T, T)
        d_head, t = self.d_model // heads, self.tokens
        panels = [Panel(w[k], f"head {k + 1}: columns {k * d_head + 1}–{(k + 1) * d_head}", t, t)
                  for k in range(heads)]
        return Shown(View(panels, ncols=4), inputs={"X": self.X, "W_q": W_q, "W_k": W_k, "W_v": W_v,
                                                    "n_heads": heads}, weights=w, output=out,
                     note=f"{heads} heads of d_head = {d_head} columns; each head scaled by 1/√{d_head}")


multihead_explorer = MultiheadExplorer
