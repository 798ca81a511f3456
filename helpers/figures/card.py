"""The printable formula card in images/ (``make images``): the formulas, the shapes and text 001's example.

Shape notation (as in ``helpers.attention``): ``T`` tokens, ``d`` features, ``d_k`` features of a query or key.
Importing this module draws nothing and changes nothing (no pyplot, no rcParams).
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from helpers.attention import attention_steps, project_qkv
from helpers.examples import T001_WK, T001_WQ, T001_WV, T001_X
from helpers.panels import format_value
from helpers.plots import new_figure

__all__ = ["formula_card"]


def formula_card() -> Figure:
    """A printable one-page card (A4 landscape): the formulas, the shapes, and text 001's three-token example."""
    fig = new_figure((11.69, 8.27))
    fig.set_layout_engine("none")
    Q, K, V = project_qkv(T001_X, T001_WQ, T001_WK, T001_WV)  # (3, 3) each
    st = attention_steps(Q, K, V, scale=1 / math.sqrt(3))

    def mat(m: np.ndarray) -> str:
        rows = [" ".join(f"{format_value(v):>6}" for v in row) for row in np.atleast_2d(m)]
        return "\n".join(f"[{r} ]" for r in rows)

    left = [
        ("Attention by hand · formula card", 15, "bold"),
        ("", 6, "normal"),
        ("Q = X W_q      K = X W_k      V = X W_v", 12, "normal"),
        ("scores = Q Kᵀ            scaled scores = Q Kᵀ / √d_k", 12, "normal"),
        ("attention weights A = softmax(scaled scores), row by row (over the keys)", 12, "normal"),
        ("output = A V", 12, "normal"),
        ("softmax(x)_j = exp(x_j − max x) / Σ_k exp(x_k − max x)   (minus the row max: no overflow)", 11, "normal"),
        ("", 6, "normal"),
        ("multi-head: split d_model columns into h heads of d_head = d_model / h,", 12, "normal"),
        ("attend in each head (scale 1/√d_head), concatenate, then multiply by W_o", 12, "normal"),
        ("", 6, "normal"),
        ("Shapes (tokens are rows; counted from 1 in labels)", 12, "bold"),
        ("X (T, d)    W_q, W_k (d, d_k)    W_v (d, d_v)    W_o (h·d_head, d_out)", 11, "normal"),
        ("Q, K (T, d_k)    V (T, d_v)    scores, A (T_q, T_k)    output (T_q, d_v)", 11, "normal"),
        ("every row of A sums to 1; A[i, j] = how much token i takes from token j", 11, "normal"),
        ("", 6, "normal"),
        ("Words", 12, "bold"),
        ("attention weights = the softmax output A      weight matrices (parameters) = W_q, W_k, W_v, W_o",
         11, "normal"),
        ("scores = Q Kᵀ      scaled scores = Q Kᵀ/√d_k      d_k = width of a query/key vector", 11, "normal"),
    ]
    y = 0.96
    for text, size, weight in left:
        fig.text(0.05, y, text, fontsize=size, fontweight=weight, va="top")
        y -= 0.008 + size / 480
    y -= 0.01
    fig.text(0.05, y, "The three-token example (text 001), d_k = 3, scale 1/√3", fontsize=12, fontweight="bold",
             va="top")
    blocks = [("X", T001_X), ("W_q", T001_WQ), ("W_k", T001_WK), ("W_v", T001_WV), ("Q", Q), ("K", K), ("V", V),
              ("scaled scores", st["scaled"]), ("attention weights A", st["weights"]), ("output = A V", st["output"])]
    x, y0 = 0.05, y - 0.04
    for k, (name, m) in enumerate(blocks):
        col, row = k % 5, k // 5
        fig.text(x + col * 0.19, y0 - row * 0.115, f"{name} {tuple(np.shape(m))}\n{mat(m)}", fontsize=8,
                 family="monospace", va="top")
    return fig
