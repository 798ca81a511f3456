"""The live explorers of the notebooks: each declares its controls and one pure ``show`` function.

How to write one: see ``helpers.explorer`` (its docstring holds the smallest explorer, ``WidgetCheck``
below, in full). Every explorer has ``.widget``, ``.set(**values)`` (a fixed state, for the plain
nbval cell after the live one), ``.figure`` / ``.figures`` (matplotlib Figures of the current
state), ``.state()``, ``.weights`` and ``.output``. All numbers come from ``helpers.attention``.

Shapes as in ``helpers.attention``: ``T`` tokens, ``d_in`` input features, ``d_model`` width of
the projections, ``d_k`` width per head (``d_head`` in multi-head attention), ``h`` heads.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Sequence

import ipywidgets as W
import numpy as np

from helpers.attention import (
    attention_steps,
    causal_mask,
    merge_heads,
    multi_head_attention,
    naive_softmax,
    padding_mask,
    project_qkv,
    scaled_dot_product_attention,
    single_head_attention,
    softmax,
    split_heads,
    tiled_attention_steps,
    xavier_normal,
)
from helpers.controls import (
    MatrixSliders,
    MatrixToggles,
    check_matrix,
    check_range,
    checkbox,
    choice,
    scalar_slider,
)
from helpers.explorer import Explorer, Shown
from helpers.generation import KVCache, decode_step, kv_cache_bytes, mean_pool_kv_heads
from helpers.induction import TrainResult as InductionResult
from helpers.induction import labels as induction_labels
from helpers.induction import train as induction_train
from helpers.longcontext import (
    latent_attention,
    latent_cache_bytes,
    linear_attention_weights,
    linear_state_bytes,
    low_rank_kv,
    sliding_window_mask,
)
from helpers.panels import Panel, View, step_panels
from helpers.positions import learned_positions, rotary, sinusoidal_positions
from helpers.training import TASKS, letters, train

__all__ = [
    "WidgetCheck",
    "NoWeightsExplorer",
    "QKVExplorer",
    "ScalingExplorer",
    "OverflowExplorer",
    "MultiheadExplorer",
    "PositionsExplorer",
    "MaskExplorer",
    "TilesExplorer",
    "TrainingExplorer",
    "GenerationExplorer",
    "LongContextExplorer",
    "InductionExplorer",
    "widget_check",
    "no_weights_explorer",
    "qkv_explorer",
    "scaling_explorer",
    "overflow_explorer",
    "multihead_explorer",
    "positions_explorer",
    "mask_explorer",
    "tiles_explorer",
    "training_explorer",
    "generation_explorer",
    "long_context_explorer",
    "induction_explorer",
]


def _tokens(token_labels: object, T: int, name: str = "token_labels", what: str = "tokens (rows)",
            of: str = "X") -> list[str]:
    if token_labels is None:
        return [f"x{t + 1}" for t in range(T)]
    if isinstance(token_labels, (str, bytes)) or not isinstance(token_labels, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a list of {T} strings, got {type(token_labels).__name__}")
    if len(token_labels) != T:
        raise ValueError(f"{name} has {len(token_labels)} labels but {of} has {T} {what}")
    return [str(s) for s in token_labels]


def _int(value: object, name: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < lo:
        raise ValueError(f"{name} must be at least {lo}, got {value}")
    return int(value)


def _steps_shown(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float, tokens: list[str], inputs: dict,
                 features: Sequence[str] | None = None) -> Shown:
    """01 and 02: the attention weights beside the controls, the seven steps below."""
    steps = attention_steps(Q, K, V, scale)
    main = Panel(steps["weights"], "attention weights", row_labels=tokens, col_labels=tokens)
    feats = list(features) if features is not None else [str(j + 1) for j in range(V.shape[1])]
    panels = step_panels(steps, tokens, feature_labels=feats, scale=scale)
    wide = sum(p.matrix.shape[1] for p in panels) > 21  # as plots.step_view: two rows of panels when wide
    return Shown([View([main]), View(panels, ncols=4 if wide else None)],
                 inputs={**inputs, "scale": scale}, weights=steps["weights"], output=steps["output"],
                 note=f"scale = {scale:.4f}")


# --------------------------------------------------------------------------- 00


class WidgetCheck(Explorer):
    """00: one slider moves the score of key 2; the two attention weights softmax([0, s]) follow."""

    kind = "widget-check"
    about = "a slider moves a score; the heatmap shows softmax([0, s])"

    def __init__(self) -> None:
        super().__init__(score=scalar_slider("score", 0.0, min=-4, max=4, step=0.1, readout_format=".1f",
                                             description="score of key 2"))

    def show(self, score: float) -> Shown:
        w = softmax(np.array([[0.0, score]]))  # (1, 2)
        panel = Panel(w, "softmax([0, s])", row_labels=["q"], col_labels=["key 1", "key 2"])
        return Shown(View([panel]), inputs={"scores": [[0.0, score]]}, weights=w)


# --------------------------------------------------------------------------- 01 and 02


class NoWeightsExplorer(Explorer):
    """01: softmax(X Xᵀ · scale) X with a slider on every entry of X and a 1/√d on/off toggle."""

    kind = "no-weights"
    about = "a slider on every entry of X; the attention weights and every step of softmax(X Xᵀ/√d) X"

    def __init__(self, X: object, token_labels: Sequence[str] | None = None, *, scaled: bool = True,
                 min: float | None = None, max: float | None = None, step: float | None = None,
                 feature_labels: Sequence[str] | None = None) -> None:
        X = check_matrix(X, "X")  # (T, d)
        self.tokens, self.d = _tokens(token_labels, X.shape[0]), X.shape[1]
        self.features = feature_labels
        if feature_labels is not None:
            _tokens(feature_labels, self.d, "feature_labels", "features (columns of X)")
        super().__init__(X=MatrixSliders("X", X, min=min, max=max, step=step, row_labels=self.tokens,
                                         col_labels=feature_labels),
                         scale=checkbox("scale", scaled, description=f"scale by 1/√d (d = {self.d})"))

    def show(self, X: np.ndarray, scale: bool) -> Shown:
        s = 1 / math.sqrt(self.d) if scale else 1.0
        return _steps_shown(X, X, X, s, self.tokens, {"X": X, "scaled": scale}, self.features)  # Q = K = V = X


class QKVExplorer(Explorer):
    """02: softmax((X W_q)(X W_k)ᵀ · scale)(X W_v) with matrix sliders for W_q, W_k, W_v."""

    kind = "qkv"
    about = "sliders on W_q, W_k and W_v; the attention weights and every step of softmax(Q Kᵀ/√d_k) V"

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, scaled: bool = True, min: float | None = None, max: float | None = None,
                 step: float | None = None, feature_labels: Sequence[str] | None = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        Ws = {"W_q": check_matrix(W_q, "W_q"), "W_k": check_matrix(W_k, "W_k"), "W_v": check_matrix(W_v, "W_v")}
        single_head_attention(self.X, *Ws.values())  # checks every shape, naming the argument
        self.tokens, self.d_k = _tokens(token_labels, self.X.shape[0]), Ws["W_q"].shape[1]
        sliders = {n: MatrixSliders(n, m, min=min, max=max, step=step, row_labels=feature_labels)
                   for n, m in Ws.items()}
        super().__init__(**sliders, scale=checkbox("scale", scaled, description=f"scale by 1/√d_k (d_k = {self.d_k})"))

    def show(self, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, scale: bool) -> Shown:
        s = 1 / math.sqrt(self.d_k) if scale else 1.0
        Q, K, V = project_qkv(self.X, W_q, W_k, W_v)  # (T, d_k), (T, d_k), (T, d_v)
        return _steps_shown(Q, K, V, s, self.tokens, {"X": self.X, "W_q": W_q, "W_k": W_k, "W_v": W_v, "scaled": scale})


class ScalingExplorer(Explorer):
    """02: random unit-variance q, k; softmax(q·k) saturates as d_k grows, softmax(q·k/√d_k) does not."""

    kind = "scaling"
    about = "a d_k slider; attention weights of random queries and keys with and without 1/√d_k"

    def __init__(self, d_k_max: int = 256, seed: int = 0, *, d_k: int = 64, n_tokens: int = 5,
                 n_samples: int = 4000) -> None:
        for name, v, lo in (("d_k_max", d_k_max, 1), ("seed", seed, 0), ("d_k", d_k, 1), ("n_tokens", n_tokens, 1),
                            ("n_samples", n_samples, 2)):
            _int(v, name, lo)
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


# --------------------------------------------------------------------------- 03: overflow

OVERFLOW_PATTERN = np.array([[1.0, 2.0, 3.0], [2.0, -1.0, 0.5], [0.2, 1.0, 0.6]])  # (3, 3) row maxima 3, 2, 1
_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


class OverflowExplorer(Explorer):
    """03: scores = pattern · 10**m in a chosen float type; naive softmax turns NaN, the stable one never does."""

    kind = "overflow"
    about = "a slider multiplies the scores by 10^m; naive softmax turns NaN, the stable one never does"

    def __init__(self, pattern: object = None, *, magnitude: float = 0.0, dtype: str = "float64",
                 m_min: float = -1.0, m_max: float = 3.0, token_labels: Sequence[str] | None = None) -> None:
        self.pattern = check_matrix(OVERFLOW_PATTERN if pattern is None else pattern, "pattern").astype(float)
        if self.pattern.shape[0] != self.pattern.shape[1]:
            raise ValueError(f"pattern must be square (T, T) scores, got shape {self.pattern.shape}")
        for name, v in (("magnitude", magnitude), ("m_min", m_min), ("m_max", m_max)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise TypeError(f"{name} must be a finite number, got {v!r}")
        if not m_min <= magnitude <= m_max:
            raise ValueError(f"magnitude must lie in [m_min, m_max] = [{m_min}, {m_max}], got {magnitude}")
        if m_max > math.log10(np.finfo(np.float16).max / max(float(np.abs(self.pattern).max()), 1e-300)):
            raise ValueError(f"pattern · 10**m_max overflows float16 (max {np.finfo(np.float16).max:.0f}); lower m_max")
        self.tokens = _tokens(token_labels, self.pattern.shape[0], of="pattern", what="rows")
        super().__init__(magnitude=scalar_slider("magnitude", float(magnitude), min=m_min, max=m_max, step=0.05,
                                                 description="m (scores × 10^m)", readout_format=".2f"),
                         dtype=choice("dtype", list(_DTYPES), dtype))

    def show(self, magnitude: float, dtype: str) -> Shown:
        scores = (self.pattern * 10.0**magnitude).astype(_DTYPES[dtype])  # (T, T) in the chosen float type
        with np.errstate(all="ignore"):  # the naive softmax overflows on purpose: inf, then inf/inf = nan
            naive = naive_softmax(scores)  # (T, T)
        stable = softmax(scores)  # (T, T) never NaN
        t = self.tokens
        panels = [Panel(scores, f"scaled scores × 10^m (m = {magnitude:.2f})", t, t, kind="scores"),
                  Panel(naive, "naive: exp(s) / Σ exp(s)", t, t), Panel(stable, "stable: s − row max first", t, t)]
        limit = math.log(float(np.finfo(_DTYPES[dtype]).max))
        note = (f"exp(x) overflows {dtype} for x &gt; ln(max) = {limit:.2f}; largest score: "
                f"{float(np.max(scores)):.4g}; naive NaN cells: <b>{int(np.isnan(naive).sum())}</b>")
        return Shown(View(panels), inputs={"pattern": self.pattern, "magnitude": magnitude, "dtype": dtype,
                                           "scores": scores}, weights=stable, note=note, extra={"naive_weights": naive})


# --------------------------------------------------------------------------- 04: heads


class MultiheadExplorer(Explorer):
    """04: the attention weights of every head on one 0..1 scale; a heads selector (divisors of d_model)
    and sliders on W_q, W_k, W_v (head j owns columns j·d_head+1 … (j+1)·d_head, counted from 1)."""

    kind = "multihead"
    about = "sliders on W_q, W_k, W_v and a heads selector; one attention-weights heatmap per head"

    def __init__(self, X: object, d_model: int, *, W_q: object = None, W_k: object = None, W_v: object = None,
                 seed: int = 0, n_heads: int | None = None, token_labels: Sequence[str] | None = None,
                 min: float = -2.0, max: float = 2.0, step: float = 0.05,
                 feature_labels: Sequence[str] | None = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.d_model = _int(d_model, "d_model", 1)
        if self.d_model > 8:
            raise ValueError(f"d_model must be at most 8 here (one slider per entry), got {d_model}")
        self.options = [h for h in range(1, self.d_model + 1) if self.d_model % h == 0]
        _int(seed, "seed", 0)
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
        self.tokens = _tokens(token_labels, self.X.shape[0])
        heads = W.SelectionSlider(options=self.options, value=n_heads, description="heads", continuous_update=True)
        heads.add_class("attn-slider")
        heads.add_class("attn-slider--heads")
        super().__init__(heads=heads, **Ws)

    def show(self, heads: int, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray) -> Shown:
        out, w = multi_head_attention(self.X, W_q, W_k, W_v, heads)  # (T, d_model), (h, T, T)
        d_head, t = self.d_model // heads, self.tokens
        panels = [Panel(w[k], f"head {k + 1}: columns {k * d_head + 1}–{(k + 1) * d_head}", t, t)
                  for k in range(heads)]
        return Shown(View(panels, ncols=4), inputs={"X": self.X, "W_q": W_q, "W_k": W_k, "W_v": W_v,
                                                    "n_heads": heads}, weights=w, output=out,
                     note=f"{heads} heads of d_head = {d_head} columns; each head scaled by 1/√{d_head}")


# --------------------------------------------------------------------------- 05: positions
POSITION_ENCODINGS = ("sinusoidal", "learned", "rotary")


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
            raise ValueError(f"W_q has shape {self.W['W_q'].shape}: rotary turns pairs of features, so d_k must be even")
        T, d = self.X.shape
        self.tokens, self.seed, self.max_shift = _tokens(token_labels, T), _int(seed, "seed", 0), _int(max_shift, "max_shift", 1)
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
        title = f"attention weights ({encoding}, p = {shift}…{shift + T - 1})" if positions else "attention weights (no positions)"
        panel = Panel(w, title, self.tokens, self.tokens)
        return Shown(View([panel]), inputs=inputs, weights=w, output=out, note=note)


# --------------------------------------------------------------------------- 06: masks


class MaskExplorer(Explorer):
    """06: a T×T grid of on/off cells (rows queries, columns keys) beside one head's attention weights.

    A cell switched off hides that key from that query: its weight becomes exactly 0 and the rest of
    the row is renormalised. Presets: none, causal, padding (the last ``n_padding`` tokens are
    padding keys) and both. A row with every key off is refused, in words, by the helpers.
    """

    kind = "masks"
    about = "a grid of on/off cells (the mask) beside one head's attention weights, which renormalise per row"

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None,
                 *, n_padding: int = 2, mask: object = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.W = {n: check_matrix(m, n).astype(float) for n, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
        self._w_all = single_head_attention(self.X, *self.W.values())[1]  # (T, T) no mask; checks every shape
        T = self.X.shape[0]
        self.tokens = _tokens(token_labels, T)
        if _int(n_padding, "n_padding", 0) >= T:
            raise ValueError(f"n_padding must be an integer from 0 to {T - 1} (X has {T} tokens), got {n_padding!r}")
        pad = np.broadcast_to(padding_mask([T - n_padding], T)[0], (T, T))  # (1, T) -> (T, T) keys only
        presets = {"none": np.ones((T, T), bool), "causal": causal_mask(T), "padding": pad.copy(),
                   "both": causal_mask(T) & pad}  # (T, T) each
        start = presets["none"] if mask is None else MatrixToggles._check(mask, "mask", None)  # (T, T) bool
        if start.shape != (T, T):
            raise ValueError(f"mask has shape {start.shape} but X has {T} tokens: it needs shape ({T}, {T})")
        super().__init__(mask=MatrixToggles("mask", start, row_labels=self.tokens, col_labels=self.tokens,
                                            label="mask", presets=presets))

    def show(self, mask: np.ndarray) -> Shown:
        out, w = single_head_attention(self.X, *self.W.values(), mask=mask)  # (T, d_v), (T, T); refuses an empty row
        t = self.tokens
        main = Panel(w, "attention weights with the mask", t, t)
        below = [Panel(self._w_all, "the same head, no mask", t, t),
                 Panel(out, "output = attention weights · V", t, [str(j + 1) for j in range(out.shape[1])], kind="values")]
        note = (f"{int((~mask).sum())} of {mask.size} query–key pairs hidden; each row is renormalised over "
                "the keys it still sees, so it still sums to 1")
        return Shown([View([main]), View(below)], inputs={"X": self.X, **self.W, "mask": mask},
                     weights=w, output=out, note=note)


# --------------------------------------------------------------------------- 08: tiles

# The explorer's example: T = 8 tokens, d_k = d_v = 2, small integers a student can multiply by hand.
TILES_Q = np.array([[1, 0], [0, 2], [-1, 1], [2, 1], [0, -2], [1, 2], [-2, 0], [1, -1]], dtype=float)  # (8, 2)
TILES_K = np.array([[0, 1], [1, -1], [-1, 0], [2, 2], [0, -2], [-1, 2], [2, -1], [1, 1]], dtype=float)  # (8, 2)
TILES_V = np.array([[1, 0], [0, 1], [2, 1], [-1, 0], [0, 2], [1, -1], [2, 0], [0, -1]], dtype=float)  # (8, 2)


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
        t = [str(i + 1) for i in range(max(self.w.shape))] if token_labels is None else _tokens(
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
                "were multiplied by e^(m_old − m) &lt; 1." if grew else "No running max grew: every rescale factor is 1.")
        if block == n:
            note += (" <b>All keys seen: the output equals the full softmax output</b> "
                     f"(max |difference| {float(np.abs(s['output'] - self.full).max()):.1e}).")
        title = f"block {block} of {n}: keys {keys[0]}–{keys[-1]}"
        return Shown([View(live, title=title), View(ref, title="for reference: the full computation")],
                     inputs={"Q": self.Q, "K": self.K, "V": self.V, "block_size": self.block_size, "block": block},
                     weights=self.w, output=s["output"], note=html.escape(f"{title}. ") + note)


# --------------------------------------------------------------------------- 07: training

_PATTERNS = {"reverse": "the anti-diagonal", "previous": "the diagonal just below the main one (query 1: key 1)"}


class TrainingExplorer(Explorer):
    """07: a training-step slider and a task menu; the probe's attention weights as one layer learns.

    Both tasks are trained once, here (``helpers.training.train``, seeded); ``show`` only picks a snapshot.
    """

    kind = "training"
    about = "a training-step slider and a task menu; the probe sequence's attention weights as the layer learns"

    def __init__(self, task: str = "reverse", step: int = 0, *, steps: int = 300, seed: int = 0,
                 lr: float = 0.05, snapshot_every: int = 5) -> None:
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (step, steps, snapshot_every)):
            raise TypeError(f"step, steps and snapshot_every must be integers, got {step!r}, {steps!r}, {snapshot_every!r}")
        if steps < 1 or snapshot_every < 1 or steps % snapshot_every or not 0 <= step <= steps:
            raise ValueError(f"steps ({steps}) must be a positive multiple of snapshot_every ({snapshot_every}), "
                             f"and step ({step}) lie from 0 to steps")
        self.config = {"steps": int(steps), "seed": seed, "lr": lr, "snapshot_every": int(snapshot_every),
                       "batch_size": 32, "T": 6, "n_vocab": 8, "d_k": 8, "d_v": 8, "n_eval": 512}  # train's arguments
        self.runs = {t: train(t, **self.config) for t in TASKS}  # about 0.25 s each; checks every argument
        self.tokens = letters(self.runs["reverse"].probe)  # the probe B, C, D, E, F, G
        super().__init__(step=scalar_slider("step", step, min=0, max=steps, step=snapshot_every, integer=True,
                                            description="training step"),
                         task=choice("task", list(TASKS), task))

    def show(self, step: int, task: str) -> Shown:
        every = self.config["snapshot_every"]
        if step % every:
            raise ValueError(f"step must be a multiple of {every} (a snapshot is stored every {every} steps), got {step}")
        run = self.runs[task]
        snap = run.snapshots[step // every]  # (step, weights (T, T), loss, accuracy)
        panel = Panel(snap.weights, f"{task}: attention weights at step {snap.step}", self.tokens, self.tokens)
        note = (f"step {snap.step} of {self.config['steps']}: test loss <b>{snap.loss:.3g}</b>, accuracy "
                f"<b>{snap.accuracy:.1%}</b> on {self.config['n_eval']} test sequences; {task} needs "
                f"{_PATTERNS.get(task, 'its own pattern')}")
        return Shown(View([panel]), inputs={"task": task, "step": snap.step, "probe": run.probe, **self.config},
                     weights=snap.weights, note=note, extra={"loss": snap.loss, "accuracy": snap.accuracy})


# --------------------------------------------------------------------------- 09: generation


class GenerationExplorer(Explorer):
    """09: a step slider generates the tokens one by one with a key/value cache; a key/value-heads menu.

    At step t the cache holds the keys and values of tokens 1..t (one (t, d_head) block per key/value
    head); the new token's query of each head attends to them (the main view, (h, t)). With fewer
    key/value heads than query heads, each group's W_k and W_v are mean-pooled (Ainslie et al. 2023's
    conversion of a multi-head model): query heads j·r+1 … (j+1)·r read key/value head j+1 (from 1).
    """

    kind = "generation"
    about = "a step slider generates the sentence token by token: the cached keys and values grow a row, the new query's attention weights per head"

    def __init__(self, X: object, W_q: object, W_k: object, W_v: object, n_heads: int,
                 token_labels: Sequence[str] | None = None, *, step: int | None = None,
                 n_kv_heads: int | None = None) -> None:
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        self.W = {n: check_matrix(m, n).astype(float) for n, m in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
        self.n_heads = _int(n_heads, "n_heads", 1)
        multi_head_attention(self.X, *self.W.values(), self.n_heads)  # checks every shape, naming the argument
        if self.W["W_k"].shape[1] != self.W["W_q"].shape[1] or self.W["W_v"].shape[1] != self.W["W_q"].shape[1]:
            raise ValueError(f"W_q, W_k, W_v must have the same width (one key/value head per query head to start "
                             f"from), got {self.W['W_q'].shape}, {self.W['W_k'].shape}, {self.W['W_v'].shape}")
        T = self.X.shape[0]
        self.tokens = _tokens(token_labels, T)
        self.d_head = self.W["W_q"].shape[1] // self.n_heads
        self.options = [g for g in range(self.n_heads, 0, -1) if self.n_heads % g == 0]  # h first: multi-head
        n_kv_heads = self.n_heads if n_kv_heads is None else n_kv_heads
        if n_kv_heads not in self.options:
            raise ValueError(f"n_kv_heads must divide n_heads = {self.n_heads}: one of {self.options}, got {n_kv_heads!r}")
        step = T if step is None else _int(step, "step", 1)
        if step > T:
            raise ValueError(f"step must be 1 to {T} (X has {T} tokens), got {step}")
        self.kv = {g: (mean_pool_kv_heads(self.W["W_k"], self.n_heads, g), mean_pool_kv_heads(self.W["W_v"], self.n_heads, g))
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
                                       ylabel="token", legend_label=f"{name} (same scale at every step)"))
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


# --------------------------------------------------------------------------- 10: long texts

LONG_METHODS = ("full", "sliding window", "latent", "linear")
LONG_TS = (4096, 32768, 131072)  # the "long T" choices for the cache bytes


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
        self.n_heads = _int(n_heads, "n_heads", 1)
        T = self.X.shape[0]
        _, self._w_full = multi_head_attention(self.X, *self.W.values(), self.n_heads,
                                               mask=causal_mask(T))  # (h, T, T); checks every shape
        self.tokens = _tokens(token_labels, T)
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


# --------------------------------------------------------------------------- 11: induction heads


class InductionExplorer(Explorer):
    """11: a training-step slider and a layer menu; both layers' attention weights on the probe sequence and
    the probe's loss at each position, as two attention layers learn to compose into an induction head.

    Trains once, here (``helpers.induction.train``, seeded), unless given the ``result`` of that call;
    ``show`` only picks a snapshot.
    """

    kind = "induction"
    about = ("a training-step slider and a layer menu; both layers' attention weights on the probe sequence and "
             "its loss at each position, as the two layers learn")
    LAYERS = ("layer 2", "layer 1")

    def __init__(self, step: int = 0, layer: str = "layer 2", *, result: object = None, steps: int = 600,
                 seed: int = 0, lr: float = 0.01, snapshot_every: int = 10) -> None:
        if result is None:
            result = induction_train(steps=steps, seed=seed, lr=lr, snapshot_every=snapshot_every)  # about 2 s
        elif not isinstance(result, InductionResult):
            raise TypeError(f"result must be what helpers.induction.train returned, got {type(result).__name__}")
        self.result, self.config = result, dict(result.config)
        every, total = self.config["snapshot_every"], self.config["steps"]
        if total % every:
            raise ValueError(f"the run's steps ({total}) must be a multiple of its snapshot_every ({every})")
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or not 0 <= step <= total or step % every:
            raise ValueError(f"step must be a multiple of {every} from 0 to {total}, got {step!r}")
        n = self.config["n_letters"]
        self.tokens = induction_labels(result.probe, n, positions=True)  # ^₁ A₂ F₃ C₄ E₅ A₆ ... F₁₁
        self.loss_max = max(float(np.ceil(max(s.probe_loss.max() for s in result.snapshots))), 1.0)  # one colour scale
        super().__init__(step=scalar_slider("step", step, min=0, max=total, step=every, integer=True,
                                            description="training step"),
                         layer=choice("layer", list(self.LAYERS), layer, description="main heatmap"))

    def show(self, step: int, layer: str) -> Shown:
        every = self.config["snapshot_every"]
        if step % every:
            raise ValueError(f"step must be a multiple of {every} (a snapshot is stored every {every} steps), got {step}")
        if layer not in self.LAYERS:
            raise ValueError(f"layer must be one of {list(self.LAYERS)}, got {layer!r}")
        snap = self.result.snapshots[step // every]
        t = self.tokens
        w = {"layer 1": snap.weights1, "layer 2": snap.weights2}
        what = {"layer 1": "previous-token head?", "layer 2": "induction head?"}
        other = self.LAYERS[1 - self.LAYERS.index(layer)]
        main = Panel(w[layer], f"{layer} ({what[layer]}) at step {snap.step}", t, t)
        loss = Panel(snap.probe_loss[None], "loss at each position (next token)", ["loss"], t[:-1], kind="values",
                     vmin=0.0, vmax=self.loss_max, xlabel="position (its token)", ylabel="",
                     legend_label="loss (same scale at every step)")
        below = Panel(w[other], f"{other} at step {snap.step}", t, t)
        sc = snap.results
        note = (f"step {snap.step} of {self.config['steps']}, on {self.config['n_eval']} test sequences: repeated "
                f"letters: loss <b>{sc.loss_repeat:.3g}</b>, accuracy <b>{sc.accuracy_repeat:.1%}</b>; first "
                f"occurrences: loss <b>{sc.loss_first:.3g}</b> (guessing: ln {self.config['n_letters']} = "
                f"{math.log(self.config['n_letters']):.2f})")
        inputs = {"step": snap.step, "layer": layer, "probe": self.result.probe, **self.config}
        # the loss strip in a row of its own: beside an (11, 11) heatmap it left a tall empty space above it
        return Shown([View([main]), View([below]), View([loss])], inputs=inputs, weights=w[layer], note=note,
                     extra={"weights1": snap.weights1, "weights2": snap.weights2, "probe_loss": snap.probe_loss,
                            "results": sc._asdict()})


min_ = min  # the builtin; MultiheadExplorer's keyword `min` hides it inside __init__

widget_check = WidgetCheck
no_weights_explorer = NoWeightsExplorer
qkv_explorer = QKVExplorer
scaling_explorer = ScalingExplorer
overflow_explorer = OverflowExplorer
multihead_explorer = MultiheadExplorer
positions_explorer = PositionsExplorer
training_explorer = TrainingExplorer
mask_explorer = MaskExplorer
tiles_explorer = TilesExplorer
generation_explorer = GenerationExplorer
long_context_explorer = LongContextExplorer
induction_explorer = InductionExplorer
