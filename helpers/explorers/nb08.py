"""The explorer of lesson 08, the cost of attention: exact attention over blocks of keys (running max and sum)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from helpers.attention import scaled_dot_product_attention, tiled_attention_steps
from helpers.controls import scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.validate import check_matrix, check_tokens

__all__ = ["TilesExplorer", "tiles_explorer", "TILES_Q", "TILES_K", "TILES_V"]


TILES_Q = np.array([[1, 0], [0, 2], [-1, 1], [2, 1], [0, -2], [1, 2], [-2, 0], [1, -1]], dtype=float)  # (8, 2)
TILES_K = np.array([[0, 1], [1, -1], [-1, 0], [2, 2], [0, -2], [-1, 2], [2, -1], [1, 1]], dtype=float)  # (8, 2)
TILES_V = np.array([[1, 0], [0, 1], [2, 1], [-1, 0], [0, 2], [1, -1], [2, 0], [0, -1]], dtype=float)  # (8, 2)


@register(demo=lambda: TilesExplorer())
class TilesExplorer(Explorer):
    """08: a block slider walks through the keys in blocks: the block's scaled scores, the running max m,
    the rescale factor exp(m_old − m), the running sum ℓ and the output so far; the full softmax below."""

    kind = "tiles"
    about = "a block slider walks through the keys block by block: running max, running sum, output so far"

    def __init__(self, Q: object = None, K: object = None, V: object = None, *, block_size: int = 3, block: int = 1,
                 token_labels: Sequence[str] | None = None) -> None:
        self.Q, self.K, self.V = (check_matrix(default if m is None else m, name).astype(float)  # (T, d) each
                                  for m, name, default in ((Q, "Q", TILES_Q), (K, "K", TILES_K), (V, "V", TILES_V)))
        self.steps = tiled_attention_steps(self.Q, self.K, self.V, block_size)  # checks shapes and block_size
        self.block_size, n = int(block_size), len(self.steps)
        self.full, self.w = scaled_dot_product_attention(self.Q, self.K, self.V)  # (T_q, d_v), (T_q, T_k)
        t = [str(i + 1) for i in range(max(self.w.shape))] if token_labels is None else check_tokens(
            token_labels, max(self.w.shape), what="tokens (rows of Q and K)", of="the example")
        self.rows, self.keys = t[: self.w.shape[0]], t[: self.w.shape[1]]
        self.ranges = {k: (min(float(s[k].min()) for s in self.steps), max(float(s[k].max()) for s in self.steps))
                       for k in ("scores", "running_max", "running_sum", "output")}  # one colour scale per panel
        self.ranges["rescale"] = (0.0, 1.0)
        super().__init__(block=scalar_slider("block", block, min=1, max=n, integer=True,
                                             description=f"key block (of {n}; {self.block_size} keys each)"))

    def show(self, block: int) -> Shown:
        n = len(self.steps)
        if not 1 <= block <= n:
            raise ValueError(f"block must be 1 to {n} (keys in blocks of {self.block_size}), got {block}")
        s, r, f = self.steps[block - 1], self.rows, [f"feature {j + 1}" for j in range(self.V.shape[1])]
        keys = self.keys[s["start"] : s["stop"]]
        live = [Panel(s[k], title, r, cols, kind="scores" if k == "scores" else "values", vmin=self.ranges[k][0],
                      vmax=self.ranges[k][1], xlabel="key" if k == "scores" else "", ylabel="query")
                for k, title, cols in (("scores", "scaled scores", keys), ("running_max", "max m", ["m"]),
                                       ("rescale", "× rescale", ["e^(m_old−m)"]), ("running_sum", "sum ℓ", ["ℓ"]),
                                       ("output", "output so far", f))]
        ref = [Panel(self.w, "attention weights (full softmax)", r, self.keys),
               Panel(self.full, "full output", r, f, kind="values", xlabel="", ylabel="query")]
        grew = [html.escape(r[i]) for i in np.flatnonzero(s["rescale"][:, 0] < 1)]
        note = ("First block: nothing was summed before, so the rescale factor is 0." if block == 1 else
                f"The running max grew in row{'s' * (len(grew) > 1)} {', '.join(grew)}: the old ℓ and acc there "
                "were multiplied by e^(m_old − m) &lt; 1." if grew
                else "No running max grew: every rescale factor is 1.")
        if block == n:
            note += (" <b>All keys seen: the output equals the full softmax output</b> "
                     f"(max |difference| {float(np.abs(s['output'] - self.full).max()):.1e}).")
        title = f"block {block} of {n}: keys {keys[0]}–{keys[-1]}"
        return Shown([View(live, title=title), View(ref, title="for reference: the full computation")],
                     inputs={"Q": self.Q, "K": self.K, "V": self.V, "block_size": self.block_size, "block": block},
                     weights=self.w, output=s["output"], note=html.escape(f"{title}. ") + note)


tiles_explorer = TilesExplorer
