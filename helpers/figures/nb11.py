"""One-off figure of notebook 11 (induction heads): the residual stream of the two-layer model, stage by stage.

Shape notation: ``T`` positions (rows), ``d`` features of the residual stream (columns), in named blocks.
Importing this module draws nothing and changes nothing (no pyplot, no rcParams).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from helpers.panels import CMAP
from helpers.plots import new_figure, set_alt_text
from helpers.validate import MAX_INCHES, check_labels, check_matrix, check_titles, refuse_nonfinite

__all__ = ["plot_residual_stream", "stream_holds", "describe_residual_stream"]

HOLDS = 0.5  # a row "holds" a feature whose value is at least this (the colour scale runs 0..1)
EMPTY = 0.01  # a block is "empty" where every value is below this


def stream_holds(stream: object, block: slice, *, row_labels: Sequence[str], col_labels: Sequence[str]) -> str:
    """Which feature of ``block`` each row of the stream (T, d) holds (value >= HOLDS), in words:
    "F₃ holds A, C₄ holds F, ..." ("empty" where every value of the block is below EMPTY)."""
    x = check_matrix(stream, "stream", one_row=True).astype(np.float64)              # (T, d)
    T, d = x.shape
    if not isinstance(block, slice) or not 0 <= (block.start or 0) < (d if block.stop is None else block.stop) <= d:
        raise ValueError(f"block must be a slice of the stream's {d} features, got {block!r}")
    rows = check_labels(row_labels, T, "row_labels", against=f"the stream has {T} rows")
    cols = check_labels(col_labels, d, "col_labels", against=f"the stream has {d} features")[block]
    m = x[:, block]                                                                    # (T, block width)
    if m.size == 0 or np.abs(m).max() < EMPTY:
        return f"empty (every value below {EMPTY:g})"
    top = m.argmax(axis=1)                                                             # (T,) each row's largest
    holds = m[np.arange(T), top] >= HOLDS                                              # (T,)
    held = [f"{rows[i]} holds {cols[j]}" + ("" if m[i, j] >= 0.995 else f" ({m[i, j]:.2f})")
            for i, j in enumerate(top) if holds[i]]
    if not held:
        return f"no value reaches {HOLDS:g} (largest {m.max():.2f})"
    rest = np.abs(m[~holds]).max() if (~holds).any() else None
    if rest is None:
        return ", ".join(held)
    return ", ".join(held) + (" (the other rows empty)" if rest < EMPTY else f" (no other row reaches {HOLDS:g})")


def describe_residual_stream(streams: Sequence[np.ndarray], titles: Sequence[str], blocks: Mapping[str, slice], *,
                             row_labels: Sequence[str], col_labels: Sequence[str]) -> str:
    """The figure of ``plot_residual_stream`` in words (its alt text), from the same values: for each stage and
    block, which row holds which feature (``stream_holds``), "as above" where a block reads as in the stage above."""
    parts, before = [], {}
    for m, title in zip(streams, titles, strict=True):
        said = {name: stream_holds(m, s, row_labels=row_labels, col_labels=col_labels) for name, s in blocks.items()}
        parts.append(f"{title}: " + "; ".join(f"{name} block " + ("as above" if before.get(name) == text else text)
                                              for name, text in said.items()))
        before = said
    n = len(parts)
    return (f"Figure ({n} panel{'s' if n != 1 else ''}): the residual stream, one row per position, its features in "
            f"blocks {', '.join(blocks)}; a row holds a feature where its value is at least {HOLDS:g} (colour scale "
            f"0 to 1). " + ". ".join(parts) + ".")


def plot_residual_stream(
    streams: Sequence[object],
    titles: Sequence[str],
    blocks: Mapping[str, slice],
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    show: Sequence[str] | None = None,
    suptitle: str | None = None,
) -> Figure:
    """The residual stream (T, d) at several stages, stacked: one row per position, the features in named
    blocks (separated and titled), colour CMAP on the fixed scale 0..1 (values outside it clipped). ``show``
    names the blocks drawn (default: all), so a projector gets few, large columns."""
    if isinstance(streams, np.ndarray) or not isinstance(streams, Sequence) or not streams:
        raise TypeError(f"streams must be a non-empty list of (T, d) matrices, got {type(streams).__name__}")
    data = [check_matrix(s, f"streams[{k}]", one_row=True,
                         finite=False).astype(np.float64) for k, s in enumerate(streams)]
    for k, m in enumerate(data):
        refuse_nonfinite(m, f"streams[{k}]", "the residual stream of a working model holds finite numbers")
    shape = data[0].shape
    if any(m.shape != shape for m in data):
        raise ValueError(f"every stream must have the shape of streams[0], {shape}; got {[m.shape for m in data]}")
    titles = check_titles(titles, len(data), "stream")
    R, C = shape
    rows = check_labels(row_labels, R, "row_labels", against=f"the matrix has shape {shape}: need {R}")
    cols = check_labels(col_labels, C, "col_labels", against=f"the matrix has shape {shape}: need {C}")
    spans = list(blocks.items()) if isinstance(blocks, Mapping) else []
    edges = [0] + [s.stop for _, s in spans] if all(isinstance(s, slice) for _, s in spans) else None
    if not spans or edges is None or [s.start for _, s in spans] != edges[:-1] or edges[-1] != C:
        raise ValueError(f"blocks must map names to consecutive slices covering the {C} features, got {blocks!r}")
    names = [name for name, _ in spans]
    if show is None:
        show = names
    if isinstance(show, str) or not isinstance(show, Sequence) or not show or any(n not in names for n in show):
        raise ValueError(f"show must be a non-empty list of block names from {names}, got {show!r}")
    drawn = [(name, blocks[name]) for name in names if name in show]          # in the stream's order
    idx = np.concatenate([np.arange(s.start, s.stop) for _, s in drawn])     # (C',) the features drawn
    shown_cols = [cols[j] for j in idx]
    starts = np.cumsum([0] + [s.stop - s.start for _, s in drawn])           # block edges in the drawn columns
    cell = 0.34  # inches a side: 10-point labels stay legible when a projector shrinks the figure
    size = (round(1.3 + cell * len(idx) + 1.2, 1), round(len(data) * (cell * R + 1.0) + (0.4 if suptitle else 0), 1))
    if max(size) > MAX_INCHES:
        raise ValueError(f"{len(data)} streams of shape {shape} need a figure of {size[0]} × {size[1]} inches, above "
                         f"{MAX_INCHES:g} a side: show fewer stages, positions or features")
    fig = new_figure(size)
    axes = np.atleast_1d(fig.subplots(len(data), 1))
    norm = Normalize(0.0, 1.0)
    for ax, m, title in zip(axes, data, titles, strict=True):
        im = ax.imshow(np.clip(m[:, idx], 0, 1), cmap=CMAP, norm=norm, aspect="equal", interpolation="nearest")
        ax.set_yticks(range(R), labels=rows, fontsize=11)
        ax.set_xticks(range(len(idx)), labels=shown_cols, fontsize=10)
        ax.tick_params(length=0)
        ax.set_title(title, fontsize=13, loc="left", pad=32)  # above the block names
        for k, (name, _) in enumerate(drawn):
            if k > 0:
                ax.axvline(starts[k] - 0.5, color="white", lw=3)
            ax.text((starts[k] + starts[k + 1] - 1) / 2, -0.8, name, ha="center", va="bottom", fontsize=12)
        for spine in ax.spines.values():
            spine.set_visible(False)
    cbar = fig.colorbar(im, ax=list(axes), shrink=0.6, fraction=0.04)
    cbar.set_label("feature value", fontsize=11)
    cbar.ax.tick_params(labelsize=10)
    if suptitle:
        fig.suptitle(suptitle, fontsize=14)
    text = describe_residual_stream(data, titles, dict(drawn), row_labels=rows, col_labels=cols)
    return set_alt_text(fig, f"{suptitle}. {text}" if suptitle else text)
