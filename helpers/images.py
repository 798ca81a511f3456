"""Regenerate the static figures in images/ (``make images``, i.e. ``python -m helpers.images``).

Every figure the README shows is drawn here from helpers, never by hand. The browser
screenshots of the live explorers come from ``make screenshots`` instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from helpers.attention import attention_steps, project_qkv
from helpers.examples import T001_WK, T001_WQ, T001_WV, T001_X


def _figures() -> dict[str, object]:
    """name -> matplotlib Figure, for every static image the README shows."""
    from helpers.figures.card import formula_card
    from helpers.figures.nb04 import plot_head_split
    from helpers.plots import heatmap, step_view
    from helpers.positions import sinusoidal_positions

    tokens = ["x1", "x2", "x3"]
    Q, K, V = project_qkv(T001_X, T001_WQ, T001_WK, T001_WV)  # (3, 3) each
    scale = 1 / np.sqrt(Q.shape[-1])
    return {
        "step-view-text-001.png": step_view(attention_steps(Q, K, V, scale=scale), tokens, scale=scale),
        "formula-card.png": formula_card(),
        "positions-sinusoidal.png": heatmap(
            sinusoidal_positions(16, 8), kind="values", fmt=".2f", title="sinusoidal positions PE (T = 16, d = 8):\n"
            "row p is added to the token at position p", xlabel="feature j", ylabel="position p",
            row_labels=[str(p) for p in range(16)], col_labels=[str(j) for j in range(8)], figsize=(5.6, 7.2)).fig,
        "head-split-right.png": plot_head_split(6, 2),
        "head-split-wrong.png": plot_head_split(6, 2, wrong=True),
    }


def main(out_dir: str | Path = "images") -> list[Path]:
    """Write every figure of ``_figures`` into ``out_dir`` and return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from helpers.plots import save_figure

    written = []
    for name, fig in _figures().items():
        written.append(save_figure(fig, Path(out_dir) / name))
        plt.close(fig)
    for path in written:
        print(path)
    return written


if __name__ == "__main__":
    main(*sys.argv[1:])
