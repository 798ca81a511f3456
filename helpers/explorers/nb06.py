"""The explorer of lesson 06, masks: a grid of on/off cells beside one head's attention weights."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from helpers import sentence as S
from helpers.attention import causal_mask, padding_mask, project_qkv, single_head_attention
from helpers.controls import MatrixToggles
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.validate import check_bool_matrix, check_int, check_matrix, check_tokens

__all__ = ["MaskExplorer", "mask_explorer"]


@register(demo=lambda: MaskExplorer(S.embeddings(), *S.adjective_head(), S.TOKENS))
class MaskExplorer(Explorer):
    """06: a T×T grid of on/off cells (rows queries, columns keys) beside one head's attention weights.

    A cell switched off hides that key from that query: its weight becomes exactly 0 and the rest of
    the row is renormalised. Presets: none, causal, padding (the last ``n_padding`` tokens are
    padding keys) and both. A row with every key off is refused, in words, by the helpers.
    """

    kind = "masks"
    about = "a grid of on/off cells (the mask) beside one head's attention weights, which renormalise per row"
    yours_spec_name = "helpers.checks.nb06:SPEC_CAUSAL_ATTENTION"  # yours=: the student's causal_attention(Q, K, V)

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, n_padding: int = 2, mask: object = None, yours: object = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.W = {n: check_matrix(m, n).astype(float) for n, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
        self._w_all = single_head_attention(self.X, *self.W.values())[1]  # (T, T) no mask; checks every shape
        T = self.X.shape[0]
        self.tokens = check_tokens(token_labels, T)
        if check_int(n_padding, "n_padding", minimum=0) >= T:
            raise ValueError(f"n_padding must be an integer from 0 to {T - 1} (X has {T} tokens), got {n_padding!r}")
        pad = np.broadcast_to(padding_mask([T - n_padding], T)[0], (T, T))  # (1, T) -> (T, T) keys only
        presets = {"none": np.ones((T, T), bool), "causal": causal_mask(T), "padding": pad.copy(),
                   "both": causal_mask(T) & pad}  # (T, T) each
        start = presets["none"] if mask is None else check_bool_matrix(mask, "mask")  # (T, T) bool
        if start.shape != (T, T):
            raise ValueError(f"mask has shape {start.shape} but X has {T} tokens: it needs shape ({T}, {T})")
        super().__init__(mask=MatrixToggles("mask", start, row_labels=self.tokens, col_labels=self.tokens,
                                            label="mask", presets=presets), yours=yours)

    def yours_args(self, values: dict) -> tuple:
        """causal_attention(Q, K, V) of this head: it masks by itself (the grid's "causal" preset shows the same)."""
        return project_qkv(self.X, *self.W.values())  # (T, d_k), (T, d_k), (T, d_v)

    def show(self, mask: np.ndarray) -> Shown:
        out, w = single_head_attention(self.X, *self.W.values(), mask=mask)  # (T, d_v), (T, T); refuses an empty row
        t = self.tokens
        main = Panel(w, "attention weights with the mask", t, t)
        below = [Panel(self._w_all, "the same head, no mask", t, t),
                 Panel(out, "output = attention weights · V", t, [str(j + 1) for j in range(out.shape[1])],
                       kind="values")]
        note = (f"{int((~mask).sum())} of {mask.size} query–key pairs hidden; each row is renormalised over "
                "the keys it still sees, so it still sums to 1")
        return Shown([View([main]), View(below)], inputs={"X": self.X, **self.W, "mask": mask},
                     weights=w, output=out, note=note)


mask_explorer = MaskExplorer
