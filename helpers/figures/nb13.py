"""One-off figures of notebook 13 (inside the trained model): per-character losses, the training log, ablations.

Shape notation: ``L`` layers, ``h`` heads, ``n`` characters. Importing this module draws nothing and changes
nothing (no pyplot, no rcParams).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from helpers.panels import colormap
from helpers.plots import heatmap, new_figure
from helpers.validate import as_numeric, check_labels

__all__ = ["plot_heads", "plot_two_copies", "plot_training_log", "plot_ablation"]


def plot_two_copies(labels: Sequence[str], first: object, second: object, *, title: str = "") -> Figure:
    """The loss at each character (n,) of a phrase on its first and on its second occurrence, as paired bars."""
    a = as_numeric(first, "first", min_ndim=1).astype(np.float64)  # (n,)
    b = as_numeric(second, "second", min_ndim=1).astype(np.float64)  # (n,)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"first and second must be two vectors of one length, got shapes {a.shape} and {b.shape}")
    labels = check_labels(labels, len(a), "labels", against=f"first has {len(a)} characters")
    fig = new_figure((min(2.0 + 0.28 * len(a), 14.0), 3.0))
    ax = fig.add_subplot()
    x = np.arange(len(a))  # (n,)
    ax.bar(x - 0.2, a, width=0.4, color=colormap()(0.25), label="first occurrence")
    ax.bar(x + 0.2, b, width=0.4, color=colormap()(0.75), label="second occurrence")
    ax.set_xticks(x, labels)
    ax.set_xlabel("character predicted")
    ax.set_ylabel("loss (nats)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def plot_training_log(snapshots: Sequence[Mapping], layer: int, heads: Sequence[int], *,
                      mark: tuple[int, int] | None = None
                      ) -> Figure:
    """The training log of notebook 12 (its ``snapshots``): the induction score of ``heads`` of ``layer`` (left) and
    the losses on the validation text and on the two copies of repeated random text (right), against the step;
    ``mark`` shades a range of steps."""
    steps = np.array([s["step"] for s in snapshots])  # (S,)
    fig = new_figure((11.0, 3.4))
    left, right = fig.subplots(1, 2)
    for h in heads:
        left.plot(steps, [s["induction"][layer][h] for s in snapshots], lw=1.5, marker=".",
                  label=f"head ({layer}, {h})")
    left.set_ylim(0, 1)
    left.set_ylabel("induction score")
    left.set_title("the induction scores of layer 1's heads")
    for key, label in (("valid_loss", "validation text"), ("repeat_first", "repeated text, first copy"),
                       ("repeat_second", "repeated text, second copy")):
        right.plot(steps, [s[key] for s in snapshots], lw=1.5, marker=".", label=label)
    right.set_ylabel("loss (nats)")
    right.set_title("losses")
    for ax in (left, right):
        ax.set_xlabel("training step")
        if mark is not None:
            ax.axvspan(*mark, color="0.9", zorder=0)
        ax.legend(fontsize=8)
    return fig


def plot_ablation(tables: Sequence[object], titles: Sequence[str]) -> Figure:
    """Loss changes (L, h) under ablation, one heatmap per table, each on its own scale from 0 (rows layers,
    columns heads)."""
    fig = new_figure((4.6 * len(tables), 2.6))
    for ax, table, title in zip(fig.subplots(1, len(tables)), tables, titles, strict=True):
        t = as_numeric(table, "table", min_ndim=2).astype(np.float64)  # (L, h)
        heatmap(t, ax, row_labels=[f"layer {i}" for i in range(t.shape[0])],
                col_labels=[f"head {j}" for j in range(t.shape[1])], title=title, kind="values",
                vmin=min(0.0, float(t.min())), vmax=max(float(t.max()), 1e-3), fmt="+.2f",
                color_bar_label="loss change (nats)", xlabel="", ylabel="")
    return fig


def plot_heads(weights: object, labels: Sequence[str], *, title: str = "") -> Figure:
    """Every head's attention weights (L, h, T, T) as small colour maps on the fixed scale 0..1, without printed
    values (an overview of L·h·T² numbers: the explorer and printed lines give them), one colour bar."""
    w = as_numeric(weights, "weights", min_ndim=4).astype(np.float64)  # (L, h, T, T)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must have shape (L, h, T, T), got {w.shape}")
    L, H, T, _ = w.shape
    labels = check_labels(labels, T, "labels", against=f"weights has T = {T}")
    fig = new_figure((2.9 * H + 1.0, 3.0 * L + 0.4))
    axes = np.atleast_2d(fig.subplots(L, H, squeeze=False))  # (L, h)
    for (layer, head), ax in np.ndenumerate(axes):
        image = ax.imshow(w[layer, head], cmap=colormap(), vmin=0.0, vmax=1.0)
        ax.set_title(f"head ({layer}, {head})", fontsize=10)
        ax.set_xticks(range(T), labels, fontsize=7)
        ax.set_yticks(range(T), labels, fontsize=7)
        ax.tick_params(length=0)
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    if title:
        fig.suptitle(title)
    return fig
