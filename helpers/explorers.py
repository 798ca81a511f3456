"""One live explorer per notebook, built from ``helpers.widgets`` and ``helpers.plots``.

Every explorer has ``.widget`` (display it, or just put the explorer last in a cell),
``.set(**state)`` (fixed state, rendered synchronously: the plain nbval cell after the
interactive one), ``.update()``, ``.figure`` / ``.figures`` (matplotlib Figures in their current
state, for ``display(ex.figure)`` as the static figure), ``.state()`` (the readout's data-state
dict), ``.weights`` and ``.output``. All numbers come from ``helpers.attention``. The DOM
contract (CSS classes, the ``data-state`` JSON) is described in ``helpers.widgets``.

Shapes as in ``helpers.attention``: ``T`` tokens, ``d_in`` input features, ``d_model`` width of
the projections, ``d_k`` width per head, ``h`` heads.
"""

from __future__ import annotations

import builtins
import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

import ipywidgets as W
import numpy as np

from helpers.attention import (
    attention_steps,
    multi_head_attention,
    naive_softmax,
    project_qkv,
    scaled_dot_product_attention,
    single_head_attention,
    softmax,
    xavier_normal,
)
from helpers.plots import heatmap, heatmap_grid, step_view, step_view_size
from helpers.widgets import (
    Explorer,
    LiveFigure,
    MatrixSliders,
    agg_figure,
    check_matrix,
    mark_control,
    matrix_table,
    scalar_slider,
)

if TYPE_CHECKING:  # for the annotations only
    from matplotlib.figure import Figure

__all__ = [
    "no_weights_explorer",
    "qkv_explorer",
    "scaling_explorer",
    "overflow_explorer",
    "multihead_explorer",
    "widget_check",
    "NoWeightsExplorer",
    "QKVExplorer",
    "ScalingExplorer",
    "OverflowExplorer",
    "MultiheadExplorer",
    "WidgetCheck",
]


# --------------------------------------------------------------------------- small checks




def _tokens(token_labels: object, T: int) -> list[str]:
    if token_labels is None:
        return [f"x{t + 1}" for t in range(T)]
    if isinstance(token_labels, (str, bytes)) or not isinstance(token_labels, Sequence):
        raise TypeError(f"token_labels must be a list of {T} strings, got {type(token_labels).__name__}")
    if len(token_labels) != T:
        raise ValueError(f"token_labels has {len(token_labels)} labels but X has {T} tokens (rows)")
    return [str(s) for s in token_labels]


def _bool(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _scale_box(scaled: bool, d: int, what: str) -> W.Checkbox:
    box = W.Checkbox(value=scaled, description=f"scale by 1/√{what} (= {1 / math.sqrt(d):.4f}); off: scale 1",
                     indent=False, layout=W.Layout(width="auto"))
    return mark_control(box, "scale")


def _tables(*sections: tuple) -> str:
    """Readout HTML: (caption, matrix, row_labels, col_labels) tables side by side, then notes."""
    parts = []
    for caption, matrix, rows, cols in sections:
        parts.append(f'<div style="margin-right:14px">{matrix_table(matrix, row_labels=rows, col_labels=cols, caption=caption)}</div>')
    return '<div style="display:flex;flex-wrap:wrap;align-items:flex-start">' + "".join(parts) + "</div>"


# --------------------------------------------------------------------------- 01 and 02


class _StepExplorer(Explorer):
    """Shared by 01 and 02: a step view (main figure) plus a weights heatmap, driven by sliders."""

    def _build_figures(self, steps: dict, tokens: list[str], scale: float, feature_labels=None) -> None:
        T, d_v = steps["output"].shape
        fig = agg_figure(step_view_size(T, d_v))
        self.steps_view = step_view(steps, tokens, feature_labels=feature_labels, scale=scale, fig=fig)
        self.steps_live = LiveFigure(fig, list(self.steps_view.handles.values()), [self.steps_view._scale_title])
        cell = 0.55 if T <= 3 else 0.5
        fig2 = agg_figure((round(1.9 + 1.05 * cell * T, 1), round(1.0 + cell * T, 1)))
        self.weights_map = heatmap(steps["weights"], fig2.add_subplot(), row_labels=tokens, col_labels=tokens,
                                   title="attention weights")
        self.weights_live = LiveFigure(fig2, [self.weights_map])
        self.live = [self.steps_live, self.weights_live]

    @property
    def figures(self) -> list[Figure]:
        """[step view figure, weights heatmap figure]."""
        return [lf.fig for lf in self.live]

    def _layout(self, slider_boxes: list) -> W.Box:
        top = W.HBox(
            [W.VBox(slider_boxes), W.VBox([self.weights_live.image], layout=W.Layout(width="auto")), self.readout],
            layout=W.Layout(align_items="flex-start", flex_flow="row wrap"),
        )
        return W.VBox([top, self.steps_live.image])


class NoWeightsExplorer(_StepExplorer):
    """01: softmax(X Xᵀ · scale) X with a slider on every entry of X and a 1/√d on/off toggle."""

    kind = "no-weights"

    def __init__(
        self, X: object, token_labels: Sequence[str] | None = None, *, scaled: bool = True,
        min: float | None = None, max: float | None = None, step: float | None = None,
    ) -> None:
        super().__init__()
        X = check_matrix(X, "X")
        self.tokens = _tokens(token_labels, X.shape[0])
        self.d = X.shape[1]
        sliders = MatrixSliders("X", X, min=min, max=max, step=step)
        toggle = _scale_box(_bool(scaled, "scaled"), self.d, f"d, d = {self.d}")
        self.controls = {"X": sliders, "scale": toggle}
        sliders.observe(self._changed)
        toggle.observe(self._changed, "value")
        steps = attention_steps(X, X, X, self._scale())
        self._build_figures(steps, self.tokens, self._scale(), feature_labels=[str(j) for j in range(self.d)])
        self._finish(self._layout([sliders.widget, toggle]))

    def _scale(self) -> float:
        return 1 / math.sqrt(self.d) if self.controls["scale"].value else 1.0

    def _compute(self) -> None:
        X = self.controls["X"].value.astype(float)  # (T, d)
        scale = self._scale()
        steps = attention_steps(X, X, X, scale)  # Q = K = V = X
        self._steps = steps
        self._weights, self._output = steps["weights"], steps["output"]
        self.steps_view.update(steps, scale=scale)
        self.weights_map.update(steps["weights"])

    def state(self) -> dict:
        """The readout's data-state: kind, inputs (X, scale, scaled), weights, output."""
        X = self.controls["X"].value
        return {"kind": self.kind, "inputs": {"X": X, "scale": self._scale(), "scaled": self.controls["scale"].value},
                "weights": self._weights, "output": self._output}

    def _readout_body(self, st: dict) -> str:
        cols = [str(j) for j in range(self.d)]
        return _tables(("weights", st["weights"], self.tokens, self.tokens), ("output", st["output"], self.tokens, cols)) + (
            f"<div>scale = {st['inputs']['scale']:.4f}</div>")

    def _apply(self, key: str, value: object) -> None:
        if key == "X":
            self.controls["X"].set_value(value)
        else:
            self.controls["scale"].value = _bool(value, "scale")


def no_weights_explorer(
    X: object, token_labels: Sequence[str] | None = None, *, scaled: bool = True,
    min: float | None = None, max: float | None = None, step: float | None = None,
) -> NoWeightsExplorer:
    """01: sliders on every entry of X (T, d), a 1/√d toggle, the step view and the weights; set(X=..., scale=bool)."""
    return NoWeightsExplorer(X, token_labels, scaled=scaled, min=min, max=max, step=step)


class QKVExplorer(_StepExplorer):
    """02: softmax((X W_q)(X W_k)ᵀ · scale)(X W_v) with matrix sliders for W_q, W_k, W_v."""

    kind = "qkv"

    def __init__(
        self, X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None, *,
        scaled: bool = True, min: float | None = None, max: float | None = None, step: float | None = None,
    ) -> None:
        super().__init__()
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        Ws = {"W_q": check_matrix(W_q, "W_q"), "W_k": check_matrix(W_k, "W_k"), "W_v": check_matrix(W_v, "W_v")}
        single_head_attention(self.X, *Ws.values())  # checks every shape, naming the argument
        self.tokens = _tokens(token_labels, self.X.shape[0])
        self.d_k = Ws["W_q"].shape[1]
        self.controls = {name: MatrixSliders(name, m, min=min, max=max, step=step) for name, m in Ws.items()}
        self.controls["scale"] = _scale_box(_bool(scaled, "scaled"), self.d_k, f"d_k, d_k = {self.d_k}")
        for name in ("W_q", "W_k", "W_v"):
            self.controls[name].observe(self._changed)
        self.controls["scale"].observe(self._changed, "value")
        Q, K, V = project_qkv(self.X, *Ws.values())
        steps = attention_steps(Q, K, V, self._scale())
        self._build_figures(steps, self.tokens, self._scale())
        boxes = [self.controls[n].widget for n in ("W_q", "W_k", "W_v")] + [self.controls["scale"]]
        self._finish(self._layout(boxes))

    def _scale(self) -> float:
        return 1 / math.sqrt(self.d_k) if self.controls["scale"].value else 1.0

    def _Ws(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return tuple(self.controls[n].value for n in ("W_q", "W_k", "W_v"))

    def _compute(self) -> None:
        scale = self._scale()
        Q, K, V = project_qkv(self.X, *self._Ws())  # (T, d_k), (T, d_k), (T, d_v)
        steps = attention_steps(Q, K, V, scale)
        self._steps = steps
        self._weights, self._output = steps["weights"], steps["output"]
        self.steps_view.update(steps, scale=scale)
        self.weights_map.update(steps["weights"])

    def state(self) -> dict:
        """The readout's data-state: kind, inputs (X, W_q, W_k, W_v, scale, scaled), weights, output."""
        W_q, W_k, W_v = self._Ws()
        inputs = {"X": self.X, "W_q": W_q, "W_k": W_k, "W_v": W_v, "scale": self._scale(),
                  "scaled": self.controls["scale"].value}
        return {"kind": self.kind, "inputs": inputs, "weights": self._weights, "output": self._output}

    def _readout_body(self, st: dict) -> str:
        cols = [str(j) for j in range(st["output"].shape[1])]
        return _tables(("weights", st["weights"], self.tokens, self.tokens), ("output", st["output"], self.tokens, cols)) + (
            f"<div>scale = {st['inputs']['scale']:.4f}</div>")

    def _apply(self, key: str, value: object) -> None:
        if key == "scale":
            self.controls["scale"].value = _bool(value, "scale")
        else:
            self.controls[key].set_value(value)


def qkv_explorer(
    X: object, W_q: object, W_k: object, W_v: object, token_labels: Sequence[str] | None = None, *,
    scaled: bool = True, min: float | None = None, max: float | None = None, step: float | None = None,
) -> QKVExplorer:
    """02: matrix sliders for W_q, W_k, W_v (d_in, d_k), a 1/√d_k toggle, step view, weights and output."""
    return QKVExplorer(X, W_q, W_k, W_v, token_labels, scaled=scaled, min=min, max=max, step=step)


# --------------------------------------------------------------------------- 02: why 1/sqrt(d_k)


class ScalingExplorer(Explorer):
    """02: random unit-variance q, k; softmax(q·k) saturates as d_k grows, softmax(q·k/√d_k) does not."""

    kind = "scaling"

    def __init__(self, d_k_max: int = 256, seed: int = 0, *, d_k: int = 64, n_tokens: int = 5,
                 n_samples: int = 4000) -> None:
        super().__init__()
        for name, v, lo in (("d_k_max", d_k_max, 1), ("seed", seed, 0), ("d_k", d_k, 1), ("n_tokens", n_tokens, 1),
                            ("n_samples", n_samples, 2)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{name} must be an integer, got {v!r}")
            if v < lo:
                raise ValueError(f"{name} must be at least {lo}, got {v}")
        if d_k > d_k_max:
            raise ValueError(f"d_k {d_k} is larger than d_k_max {d_k_max}")
        if d_k_max > 1024 or n_tokens > 8:
            raise ValueError(f"use d_k_max <= 1024 and n_tokens <= 8, got d_k_max={d_k_max}, n_tokens={n_tokens}")
        self.seed, self.d_k_max, self.n_tokens = int(seed), int(d_k_max), int(n_tokens)
        rng = np.random.default_rng(seed)
        self._Q = rng.standard_normal((n_tokens, d_k_max))  # (T, d_k_max) every entry ~ N(0, 1)
        self._K = rng.standard_normal((n_tokens, d_k_max))  # (T, d_k_max)
        q = rng.standard_normal((n_samples, d_k_max))  # (n, d_k_max) many independent pairs q, k
        k = rng.standard_normal((n_samples, d_k_max))  # (n, d_k_max)
        self._var = np.cumsum(q * k, axis=1).var(axis=0)  # (d_k_max,) Var(q·k) using the first d components
        self.n_samples = int(n_samples)
        self.tokens = [f"t{t + 1}" for t in range(n_tokens)]
        self.controls = {"d_k": scalar_slider("d_k", int(d_k), min=1, max=self.d_k_max, integer=True)}
        self.controls["d_k"].observe(self._changed, "value")
        fig = agg_figure((round(2 * (0.8 + 0.5 * n_tokens) + 2.0, 1), round(1.4 + 0.5 * n_tokens, 1)))
        w0 = np.full((n_tokens, n_tokens), 1 / n_tokens)
        _, self.maps = heatmap_grid([w0, w0], ["no scaling", "scaled by 1/√d_k"], row_labels=self.tokens,
                                    col_labels=self.tokens, fig=fig)
        self.titles = [h.ax.title for h in self.maps]
        self.live = [LiveFigure(fig, self.maps, self.titles)]
        self._finish(W.VBox([self.controls["d_k"], W.HBox([self.live[0].image, self.readout],
                                                          layout=W.Layout(flex_flow="row wrap"))]))

    @property
    def figures(self) -> list[Figure]:
        """[one figure: the unscaled and the scaled weights side by side]."""
        return [self.figure]

    def _compute(self) -> None:
        d_k = int(self.controls["d_k"].value)
        Q, K = self._Q[:, :d_k], self._K[:, :d_k]  # (T, d_k) each
        V = np.zeros((self.n_tokens, 1))  # (T, 1) unused: only the weights matter here
        _, self._unscaled = scaled_dot_product_attention(Q, K, V, scale=1.0)  # (T, T)
        _, self._weights = scaled_dot_product_attention(Q, K, V, scale=None)  # (T, T) scale 1/sqrt(d_k)
        self._output = None
        self.maps[0].update(self._unscaled)
        self.maps[1].update(self._weights)
        self.titles[0].set_text(f"no scaling (d_k = {d_k})")
        self.titles[1].set_text(f"scaled by 1/√{d_k} = {1 / math.sqrt(d_k):.4g}")

    def state(self) -> dict:
        """The readout's data-state: kind, inputs (d_k, seed, Q, K), weights (scaled), weights_unscaled, variance."""
        d_k = int(self.controls["d_k"].value)
        var = float(self._var[d_k - 1])
        return {"kind": self.kind,
                "inputs": {"d_k": d_k, "seed": self.seed, "Q": self._Q[:, :d_k], "K": self._K[:, :d_k]},
                "weights": self._weights, "weights_unscaled": self._unscaled, "output": None,
                "variance": {"unscaled": var, "scaled": var / d_k, "n_samples": self.n_samples}}

    def _readout_body(self, st: dict) -> str:
        v = st["variance"]
        d_k = st["inputs"]["d_k"]
        return (f"<div>Var(q·k) over {v['n_samples']} random pairs: <b>{v['unscaled']:.2f}</b> "
                f"(theory: d_k = {d_k}); after dividing by √d_k: <b>{v['scaled']:.3f}</b> (theory: 1)</div>"
                + _tables(("weights, scaled", st["weights"], self.tokens, self.tokens),
                          ("weights, not scaled", st["weights_unscaled"], self.tokens, self.tokens)))

    def _apply(self, key: str, value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= self.d_k_max:
            raise ValueError(f"d_k must be an integer from 1 to {self.d_k_max}, got {value!r}")
        self.controls["d_k"].value = int(value)


def scaling_explorer(d_k_max: int = 256, seed: int = 0, *, d_k: int = 64, n_tokens: int = 5,
                     n_samples: int = 4000) -> ScalingExplorer:
    """02: a d_k slider; unscaled vs 1/√d_k-scaled weights of random q, k; Var(q·k) in the readout."""
    return ScalingExplorer(d_k_max, seed, d_k=d_k, n_tokens=n_tokens, n_samples=n_samples)


# --------------------------------------------------------------------------- 03: overflow

OVERFLOW_PATTERN = np.array([[1.0, 2.0, 3.0], [2.0, -1.0, 0.5], [0.2, 1.0, 0.6]])  # (3, 3) row maxima 3, 2, 1
_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


class OverflowExplorer(Explorer):
    """03: scores = pattern · 10**m in a chosen float type; naive softmax turns NaN, the stable one never does."""

    kind = "overflow"

    def __init__(self, pattern: object = None, *, magnitude: float = 0.0, dtype: str = "float64",
                 m_min: float = -1.0, m_max: float = 3.0, token_labels: Sequence[str] | None = None) -> None:
        super().__init__()
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
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {list(_DTYPES)}, got {dtype!r}")
        T = self.pattern.shape[0]
        self.tokens = _tokens(token_labels, T)
        self.controls = {
            "magnitude": scalar_slider("magnitude", float(magnitude), min=m_min, max=m_max, step=0.05,
                                       description="m (scores × 10^m)", readout_format=".2f"),
            "dtype": mark_control(W.Dropdown(options=list(_DTYPES), value=dtype, description="dtype",
                                             layout=W.Layout(width="180px")), "dtype"),
        }
        for c in self.controls.values():
            c.observe(self._changed, "value")
        fig = agg_figure((round(3 * (0.9 + 0.6 * T) + 1.3, 1), round(1.3 + 0.6 * T, 1)))
        axes = fig.subplots(1, 3)
        zero = np.zeros((T, T))
        self.scores_map = heatmap(zero, axes[0], row_labels=self.tokens, col_labels=self.tokens, kind="scores",
                                  colorbar=False, title="scores")
        self.naive_map = heatmap(zero, axes[1], row_labels=self.tokens, col_labels=self.tokens, colorbar=False,
                                 title="naive: exp(x) / Σ exp(x)", ylabel="")
        self.stable_map = heatmap(zero, axes[2], row_labels=self.tokens, col_labels=self.tokens, colorbar=False,
                                  title="stable: x − row max first", ylabel="")
        cbar = fig.colorbar(self.stable_map.im, ax=list(axes[1:]), shrink=0.9, fraction=0.05)
        cbar.set_label("attention weight (fixed scale 0 to 1)", fontsize=8)
        cbar.ax.tick_params(labelsize=7)
        cbar.set_ticks([0, 0.25, 0.5, 0.75, 1])
        self.scores_title = axes[0].title
        self.live = [LiveFigure(fig, [self.scores_map, self.naive_map, self.stable_map], [self.scores_title])]
        self._finish(W.VBox([W.HBox([self.controls["magnitude"], self.controls["dtype"]]), self.live[0].image,
                             self.readout]))

    @property
    def figures(self) -> list[Figure]:
        """[one figure: scores, naive softmax and stable softmax side by side]."""
        return [self.figure]

    def _scores(self) -> np.ndarray:
        m = float(self.controls["magnitude"].value)
        dtype = _DTYPES[self.controls["dtype"].value]
        return (self.pattern * 10.0**m).astype(dtype)  # (T, T) in the chosen float type

    def _compute(self) -> None:
        scores = self._scores()
        with np.errstate(all="ignore"):  # the naive softmax overflows on purpose: inf, then inf/inf = nan
            self._naive = naive_softmax(scores)  # (T, T)
        self._weights = softmax(scores)  # (T, T) never NaN
        self._output = None
        self._scores_now = scores
        self.scores_map.update(scores)
        self.naive_map.update(self._naive)
        self.stable_map.update(self._weights)
        m = float(self.controls["magnitude"].value)
        self.scores_title.set_text(f"scores, own colours (m = {m:.2f})")

    def state(self) -> dict:
        """The readout's data-state: kind, inputs (pattern, magnitude, dtype, scores), weights, naive_weights."""
        return {"kind": self.kind,
                "inputs": {"pattern": self.pattern, "magnitude": float(self.controls["magnitude"].value),
                           "dtype": self.controls["dtype"].value, "scores": self._scores_now},
                "weights": self._weights, "naive_weights": self._naive, "output": None}

    def _readout_body(self, st: dict) -> str:
        dtype = _DTYPES[st["inputs"]["dtype"]]
        limit = math.log(float(np.finfo(dtype).max))
        n_nan = int(np.isnan(np.asarray(self._naive, dtype=float)).sum())
        return (f"<div>exp(x) overflows {st['inputs']['dtype']} for x &gt; ln(max) = {limit:.2f}; "
                f"largest score: {float(np.max(self._scores_now)):.4g}; naive NaN cells: <b>{n_nan}</b></div>"
                + _tables(("stable softmax (weights)", st["weights"], self.tokens, self.tokens),
                          ("naive softmax", st["naive_weights"], self.tokens, self.tokens),
                          ("scores", st["inputs"]["scores"], self.tokens, self.tokens)))

    def _apply(self, key: str, value: object) -> None:
        if key == "dtype":
            if value not in _DTYPES:
                raise ValueError(f"dtype must be one of {list(_DTYPES)}, got {value!r}")
            self.controls["dtype"].value = value
        else:
            s = self.controls["magnitude"]
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not s.min <= value <= s.max:
                raise ValueError(f"magnitude must be a number in [{s.min}, {s.max}], got {value!r}")
            s.value = float(value)


def overflow_explorer(pattern: object = None, *, magnitude: float = 0.0, dtype: str = "float64",
                      m_min: float = -1.0, m_max: float = 3.0,
                      token_labels: Sequence[str] | None = None) -> OverflowExplorer:
    """03: a magnitude slider (scores = pattern × 10**m) and a float type; naive vs stable softmax."""
    return OverflowExplorer(pattern, magnitude=magnitude, dtype=dtype, m_min=m_min, m_max=m_max,
                            token_labels=token_labels)


# --------------------------------------------------------------------------- 04: heads


def _divisors(n: int) -> list[int]:
    return [h for h in range(1, n + 1) if n % h == 0]


class MultiheadExplorer(Explorer):
    """04: per-head weights on one 0..1 scale; choose the number of heads (divisors of d_model) and
    move the sliders of one head's column blocks of W_q, W_k, W_v."""

    kind = "multihead"

    def __init__(self, X: object, d_model: int, *, W_q: object = None, W_k: object = None, W_v: object = None,
                 seed: int = 0, n_heads: int | None = None, head: int = 0, token_labels: Sequence[str] | None = None,
                 min: float = -2.0, max: float = 2.0, step: float = 0.05) -> None:
        super().__init__()
        self.X = check_matrix(X, "X").astype(float)  # (T, d_in)
        if isinstance(d_model, bool) or not isinstance(d_model, numbers.Integral) or d_model < 1:
            raise TypeError(f"d_model must be a positive integer, got {d_model!r}")
        if d_model > 8:
            raise ValueError(f"d_model must be at most 8 here (one slider per weight), got {d_model}")
        T, d_in = self.X.shape
        self.d_model = int(d_model)
        self.options = _divisors(self.d_model)
        n_heads = self.options[builtins.min(1, len(self.options) - 1)] if n_heads is None else n_heads
        if n_heads not in self.options:
            raise ValueError(f"n_heads must divide d_model {d_model}: choose one of {self.options}, got {n_heads!r}")
        rng = np.random.default_rng(seed)
        self.W = {}
        for name, given in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
            if given is None:
                m = np.round(xavier_normal(d_in, self.d_model, rng) / step) * step  # (d_in, d_model) on the slider grid
            else:
                m = check_matrix(given, name).astype(float)
            if m.shape != (d_in, self.d_model):
                raise ValueError(f"{name} has shape {m.shape} but X has {d_in} features and d_model is {d_model}: "
                                 f"{name} needs shape ({d_in}, {d_model})")
            if m.min() < min or m.max() > max:
                raise ValueError(f"{name} has entries from {m.min():.3g} to {m.max():.3g}, outside the slider range "
                                 f"[{min}, {max}]; pass min= and max= to widen it")
            self.W[name] = np.clip(m, min, max)  # only the rounded random draws can stray, by less than a step
        self._range = (min, max, step)
        self.tokens = _tokens(token_labels, T)
        self.controls = {
            "heads": W.SelectionSlider(options=self.options, value=n_heads, description="heads",
                                       continuous_update=False, layout=W.Layout(width="260px")),
            "head": W.IntSlider(value=0, min=0, max=n_heads - 1, description="head", continuous_update=True,
                                layout=W.Layout(width="260px")),
        }
        for name in ("heads", "head"):
            self.controls[name].add_class("attn-slider")
            self.controls[name].add_class(f"attn-slider--{name}")
        self._grids: dict[int, tuple] = {}
        self.slider_box = W.VBox()
        self.image_box = W.Box()
        self._build_sliders()
        self.controls["heads"].observe(self._on_heads, "value")
        self.controls["head"].observe(self._on_head, "value")
        self._select_grid()
        self._finish(W.VBox([
            W.HBox([self.controls["heads"], self.controls["head"]]),
            W.HBox([self.slider_box, W.VBox([self.image_box, self.readout])],
                   layout=W.Layout(align_items="flex-start", flex_flow="row wrap")),
        ]))
        if head:
            self.set(head=head)

    # heads and sliders ------------------------------------------------------
    @property
    def n_heads(self) -> int:
        """The number of heads chosen (a divisor of d_model)."""
        return int(self.controls["heads"].value)

    @property
    def head(self) -> int:
        """The head whose column blocks of W_q, W_k, W_v the sliders show."""
        return int(self.controls["head"].value)

    def _block(self) -> slice:
        d_k = self.d_model // self.n_heads
        return slice(self.head * d_k, (self.head + 1) * d_k)

    def _build_sliders(self) -> None:
        lo, hi, step = self._range
        blk = self._block()
        cache = self.__dict__.setdefault("_slider_grids", {})  # (n_heads, head) -> grids: built once, reused
        key = (self.n_heads, self.head)
        if key in cache:
            self.blocks = cache[key]
            for name, ms in self.blocks.items():  # another head's grid may have changed these columns
                ms.set_value(self.W[name][:, blk], notify=False)
        else:
            self.blocks = {}
            for name in ("W_q", "W_k", "W_v"):
                ms = MatrixSliders(name, self.W[name][:, blk], min=lo, max=hi, step=step, integer=False,
                                   col_offset=blk.start, label=f"{name}[:, {blk.start}:{blk.stop}] (head {self.head})")
                ms.observe(self._on_block(name, blk))
                self.blocks[name] = ms
            cache[key] = self.blocks
        self.slider_box.children = [self.blocks[n].widget for n in ("W_q", "W_k", "W_v")]

    def _on_block(self, name: str, blk: slice):
        def handler(_change: dict) -> None:
            self.W[name][:, blk] = self.blocks[name].value
            self._changed()

        return handler

    def _grid(self, h: int) -> tuple:
        if h not in self._grids:
            T = self.X.shape[0]
            ncols = h if h <= 4 else math.ceil(h / 2)
            nrows = math.ceil(h / ncols)
            cell = 0.5
            fig = agg_figure((round(0.9 + ncols * (0.75 + cell * T) + 1.0, 1), round(0.4 + nrows * (0.85 + cell * T), 1)))
            eye = np.full((h, T, T), 1 / T)
            _, maps = heatmap_grid(eye, [f"head {k}" for k in range(h)], row_labels=self.tokens,
                                   col_labels=self.tokens, ncols=ncols, fig=fig)
            titles = [m.ax.title for m in maps]
            self._grids[h] = (LiveFigure(fig, maps, titles), maps, titles)
        return self._grids[h]

    def _select_grid(self) -> None:
        live, _, _ = self._grid(self.n_heads)
        self.live = [live]
        self.image_box.children = [live.image]

    def _on_heads(self, _change) -> None:
        h = self.n_heads
        head = self.controls["head"]
        with head.hold_trait_notifications():
            head.value = min(head.value, h - 1)
            head.max = h - 1
        self._build_sliders()
        self._select_grid()
        self._changed()

    def _on_head(self, _change) -> None:
        self._build_sliders()
        self._changed()

    # explorer hooks ---------------------------------------------------------
    def _compute(self) -> None:
        out, weights = multi_head_attention(self.X, self.W["W_q"], self.W["W_k"], self.W["W_v"], self.n_heads)
        self._output, self._weights = out, weights  # (T, d_model), (h, T, T)
        _, maps, titles = self._grid(self.n_heads)
        for k, m in enumerate(maps):
            m.update(weights[k])
            titles[k].set_text(f"head {k}" + ("  ◀ sliders" if k == self.head else ""))
            titles[k].set_fontweight("bold" if k == self.head else "normal")

    @property
    def figures(self) -> list[Figure]:
        """[one figure: the grid of per-head weights for the current number of heads]."""
        return [self.figure]

    def state(self) -> dict:
        """The readout's data-state: kind, inputs (X, W_q, W_k, W_v, n_heads, head), weights (h, T, T), output."""
        return {"kind": self.kind,
                "inputs": {"X": self.X, "W_q": self.W["W_q"], "W_k": self.W["W_k"], "W_v": self.W["W_v"],
                           "n_heads": self.n_heads, "head": self.head},
                "weights": self._weights, "output": self._output}

    def _readout_body(self, st: dict) -> str:
        heads = [(f"head {k} weights", w, self.tokens, self.tokens) for k, w in enumerate(st["weights"])]
        cols = [str(j) for j in range(self.d_model)]
        return _tables(*heads, ("output (heads concatenated)", st["output"], self.tokens, cols))

    def settable(self) -> list[str]:
        """The names ``set`` accepts."""
        return ["n_heads", "head", "W_q", "W_k", "W_v"]

    def _apply(self, key: str, value: object) -> None:
        if key == "n_heads":
            if value not in self.options:
                raise ValueError(f"n_heads must divide d_model {self.d_model}: one of {self.options}, got {value!r}")
            self.controls["heads"].value = value  # its observer rebuilds sliders and grid
        elif key == "head":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < self.n_heads:
                raise ValueError(f"head must be an integer from 0 to {self.n_heads - 1}, got {value!r}")
            self.controls["head"].value = int(value)  # its observer rebuilds the sliders
        else:
            m = check_matrix(value, key).astype(float)
            if m.shape != self.W[key].shape:
                raise ValueError(f"{key} has shape {m.shape} but the explorer's {key} has shape {self.W[key].shape}")
            lo, hi, _ = self._range
            if m.min() < lo or m.max() > hi:
                raise ValueError(f"{key} has entries outside the slider range [{lo}, {hi}]")
            self.W[key] = m.copy()
            self._build_sliders()


def multihead_explorer(
    X: object, d_model: int, *, W_q: object = None, W_k: object = None, W_v: object = None, seed: int = 0,
    n_heads: int | None = None, head: int = 0, token_labels: Sequence[str] | None = None,
    min: float = -2.0, max: float = 2.0, step: float = 0.05,
) -> MultiheadExplorer:
    """04: heads grid (shared 0..1 scale), a heads selector (divisors of d_model), a head selector, its W blocks."""
    return MultiheadExplorer(X, d_model, W_q=W_q, W_k=W_k, W_v=W_v, seed=seed, n_heads=n_heads, head=head,
                             token_labels=token_labels, min=min, max=max, step=step)


# --------------------------------------------------------------------------- 00


class WidgetCheck(Explorer):
    """00: one slider moves the score of key 2; the two weights softmax([0, s]) change live."""

    kind = "widget-check"

    def __init__(self) -> None:
        super().__init__()
        self.controls = {"score": scalar_slider("score", 0.0, min=-4, max=4, step=0.1, readout_format=".1f",
                                                description="score of key 2")}
        self.controls["score"].observe(self._changed, "value")
        fig = agg_figure((4.2, 1.7))
        self.map = heatmap(np.array([[0.5, 0.5]]), fig.add_subplot(), row_labels=["q"], col_labels=["key 1", "key 2"],
                           title="softmax([0, s])", cbar_label="weight (0 to 1)")
        self.live = [LiveFigure(fig, [self.map])]
        self._finish(W.VBox([self.controls["score"], W.HBox([self.live[0].image, self.readout])]))

    @property
    def figures(self) -> list[Figure]:
        """[one figure: the 1×2 weights heatmap]."""
        return [self.figure]

    def _compute(self) -> None:
        s = float(self.controls["score"].value)
        self._weights = softmax(np.array([[0.0, s]]))  # (1, 2)
        self._output = None
        self.map.update(self._weights)

    def state(self) -> dict:
        """The readout's data-state: kind, inputs (scores [[0, s]]), weights."""
        s = float(self.controls["score"].value)
        return {"kind": self.kind, "inputs": {"scores": [[0.0, s]]}, "weights": self._weights, "output": None}

    def _readout_body(self, st: dict) -> str:
        return _tables(("weights", st["weights"], ["q"], ["key 1", "key 2"]))

    def _apply(self, key: str, value: object) -> None:
        s = self.controls["score"]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not s.min <= value <= s.max:
            raise ValueError(f"score must be a number in [{s.min}, {s.max}], got {value!r}")
        s.value = float(value)


def widget_check() -> WidgetCheck:
    """00: a tiny live check that widgets work: moving the slider changes a 1×2 heatmap and the readout."""
    return WidgetCheck()
