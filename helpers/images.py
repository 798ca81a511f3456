"""Regenerate the static figures in images/ (``make images``, i.e. ``python -m helpers.images``).

Every figure the README shows is drawn here from helpers, never by hand. The browser
screenshots of the live explorers come from ``make screenshots`` instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from helpers.attention import attention_steps, multi_head_attention, project_qkv, xavier_normal
from helpers.examples import T001_WK, T001_WQ, T001_WV, T001_X, T003_IMAGE, T003_PATCH_SIZE


def _figures() -> dict[str, object]:
    """name -> matplotlib Figure, for every static image in images/."""
    from helpers.plots import heatmap_grid, plot_head_split, show_image_patches, step_view

    tokens = ["x1", "x2", "x3"]
    Q, K, V = project_qkv(T001_X, T001_WQ, T001_WK, T001_WV)  # (3, 3) each
    scale = 1 / np.sqrt(Q.shape[-1])
    figures: dict[str, object] = {
        "step-view-text-001.png": step_view(attention_steps(Q, K, V, scale=scale), tokens, scale=scale).fig,
        "head-split-right.png": plot_head_split(6, 2),
        "head-split-wrong.png": plot_head_split(6, 2, wrong=True),
        "image-patches-text-003.png": show_image_patches(T003_IMAGE, T003_PATCH_SIZE),
    }
    rng = np.random.default_rng(0)
    W_q, W_k, W_v = (xavier_normal(4, 4, rng) for _ in range(3))  # (4, 4) each
    _, weights = multi_head_attention(T001_X, W_q, W_k, W_v, n_heads=2)  # weights (2, 3, 3)
    fig, _ = heatmap_grid(weights, row_labels=tokens, col_labels=tokens, suptitle="two heads, one 0..1 scale")
    figures["two-heads.png"] = fig
    return figures


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
