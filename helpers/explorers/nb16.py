"""The explorer of lesson 16, PyTorch: where `is_causal` puts the diagonal when new queries meet cached keys."""

from __future__ import annotations

from collections.abc import Sequence

from helpers import sentence as S
from helpers.attention import causal_mask, project_qkv, scaled_dot_product_attention
from helpers.controls import scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.validate import check_int, check_matrix, check_tokens

__all__ = ["CausalCornerExplorer", "causal_corner_explorer"]


@register(demo=lambda: CausalCornerExplorer(S.embeddings(), *S.pronoun_head(), S.TOKENS))
class CausalCornerExplorer(Explorer):
    """16: the last n tokens of the sentence as new queries against all T keys (a cache): the attention weights
    under ``is_causal``'s top-left mask (the first n rows of the causal mask) beside the lower-right mask a cache
    needs (its last n rows, ``torch.nn.attention.bias.causal_lower_right``). With n = T they are one mask."""

    kind = "causal-corner"
    about = ("a slider for how many new queries meet the cached keys; their attention weights under is_causal's "
             "top-left mask beside the lower-right mask")

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, n_queries: int = 1) -> None:
        X = check_matrix(X, "X")  # (T, d_in)
        self.Q, self.K, self.V = project_qkv(X, W_q, W_k, W_v)  # (T, d_k), (T, d_k), (T, d_v); checks every shape
        self.X, self.W = X, {"W_q": W_q, "W_k": W_k, "W_v": W_v}
        T = X.shape[0]
        self.tokens = check_tokens(token_labels, T)
        n_queries = check_int(n_queries, "n_queries", minimum=1, maximum=T)
        super().__init__(n_queries=scalar_slider("n_queries", n_queries, min=1, max=T, integer=True,
                                                 description="new queries"))

    def show(self, n_queries: int) -> Shown:
        T = self.X.shape[0]
        full = causal_mask(T)  # (T, T) key j <= query i
        top_left = full[:n_queries]  # (n, T) is_causal=True: query i reads keys 0 .. i
        lower_right = full[T - n_queries:]  # (n, T) the newest n rows: query i reads keys 0 .. i + T − n
        Q = self.Q[T - n_queries:]  # (n, d_k) the newest n tokens ask
        _, w_top = scaled_dot_product_attention(Q, self.K, self.V, mask=top_left)  # (n, T)
        out, w_low = scaled_dot_product_attention(Q, self.K, self.V, mask=lower_right)  # (n, d_v), (n, T)
        rows, t = self.tokens[T - n_queries:], self.tokens
        view = View([Panel(w_top, "is_causal=True (top-left)", rows, t),
                     Panel(w_low, "causal_lower_right (a cache's)", rows, t)])
        wrong = int((top_left != lower_right).sum())
        note = (f"the newest {n_queries} of {T} tokens ask; top-left hides {wrong} key(s) they may read"
                if wrong else f"all {T} tokens ask: both corners give the same causal mask")
        return Shown(view, inputs={"X": self.X, **self.W, "n_queries": n_queries}, weights=w_low, output=out,
                     note=note)


causal_corner_explorer = CausalCornerExplorer
