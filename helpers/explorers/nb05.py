"""The explorer of lesson 05, positions: sinusoids, a learned table or rotary, and a shift of every position."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from helpers import sentence as S
from helpers.attention import project_qkv, scaled_dot_product_attention, single_head_attention
from helpers.controls import checkbox, choice, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.positions import learned_positions, rotary, sinusoidal_positions
from helpers.validate import check_int, check_matrix, check_tokens

__all__ = ["PositionsExplorer", "positions_explorer", "POSITION_ENCODINGS"]


POSITION_ENCODINGS = ("sinusoidal", "learned", "rotary")


@register(demo=lambda: PositionsExplorer(S.embeddings(), *S.pronoun_head(), S.TOKENS, focus="it"))
class PositionsExplorer(Explorer):
    """05: one head, positions off or on (sinusoids or a learned table added to X, or Q and K rotated);
    a slider shifts every position by s, so the tokens sit at p = s, s+1, ..., s+T-1."""

    kind = "positions"
    about = "positions on/off, their encoding, a slider that shifts every position; the attention weights"

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, encoding: str = "sinusoidal", positions: bool = True, max_shift: int = 10, seed: int = 0,
                 focus: str | None = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_model)
        self.W = {n: check_matrix(m, n).astype(float) for n, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
        single_head_attention(self.X, *self.W.values())  # checks every shape, naming the argument
        if self.W["W_q"].shape[1] % 2:
            raise ValueError(f"W_q has shape {self.W['W_q'].shape}: rotary turns pairs of features, so d_k must be "
                             "even")
        T, d = self.X.shape
        self.tokens = check_tokens(token_labels, T)
        self.seed, self.max_shift = check_int(seed, "seed", minimum=0), check_int(max_shift, "max_shift", minimum=1)
        if self.max_shift > 10_000:  # one slider position per shift, and a (T + max_shift, d_model) table
            raise ValueError(f"max_shift must be at most 10,000 (the slider's range of shifts), got {max_shift:,}")
        if focus is not None and focus not in self.tokens:
            raise ValueError(f"focus must be one of the tokens {self.tokens}, got {focus!r}")
        self.focus = None if focus is None else self.tokens.index(focus)
        self.table = learned_positions(T + self.max_shift, d, np.random.default_rng(seed))  # (T + max_shift, d_model)
        super().__init__(positions=checkbox("positions", positions, description="add positions"),
                         encoding=choice("encoding", POSITION_ENCODINGS, encoding),
                         shift=scalar_slider("shift", 0, min=0, max=self.max_shift, integer=True,
                                             description="shift every position by s"))

    def show(self, positions: bool, encoding: str, shift: int) -> Shown:
        T, d = self.X.shape
        p = np.arange(T) + shift  # (T,) the positions s, s+1, ..., s+T-1
        P = np.zeros((T, d))  # (T, d_model) what is added to X: nothing, unless below
        if positions and encoding == "sinusoidal":
            P = sinusoidal_positions(T + shift, d)[shift:]  # (T + s, d_model) -> rows s .. s+T-1
        elif positions and encoding == "learned":
            P = self.table[p]  # (T, d_model) rows s .. s+T-1 of the table
        Q, K, V = project_qkv(self.X + P, *self.W.values())  # (T, d_k), (T, d_k), (T, d_v)
        if positions and encoding == "rotary":
            Q, K = rotary(Q, positions=p), rotary(K, positions=p)  # pair i of token p turned by p·θ_i
        out, w = scaled_dot_product_attention(Q, K, V)  # (T, d_v), (T, T)
        how = {"sinusoidal": "sinusoids added to X", "learned": f"a random table (seed {self.seed}) added to X",
               "rotary": "Q and K rotated by p·θ"}[encoding] if positions else "no positions: nothing to shift"
        note = f"positions p = {shift} … {shift + T - 1} ({how})"
        if self.focus is not None:
            f, j = self.focus, int(np.argmax(w[self.focus]))
            note += (f"; '{html.escape(self.tokens[f])}' puts most weight on '{html.escape(self.tokens[j])}': "
                     f"<b>{w[f, j]:.4f}</b>")
        inputs = {"X": self.X, **self.W, "positions": positions, "encoding": encoding, "shift": shift,
                  "max_shift": self.max_shift, "seed": self.seed, "p": p, "P": P}
        title = (f"attention weights ({encoding}, p = {shift}…{shift + T - 1})" if positions
                 else "attention weights (no positions)")
        panel = Panel(w, title, self.tokens, self.tokens)
        return Shown(View([panel]), inputs=inputs, weights=w, output=out, note=note)


positions_explorer = PositionsExplorer
