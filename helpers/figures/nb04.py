"""One-off figures of notebook 04 (multi-head attention): the split of X into heads, an image cut into patches.

Shape notation (as in ``helpers.attention``): ``T`` tokens, ``d_model`` features, ``h`` heads of ``d_head``
(``d_k``) features each. Importing this module draws nothing and changes nothing (no pyplot, no rcParams).
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from helpers.attention import split_heads
from helpers.panels import CMAP, format_value, text_colors
from helpers.plots import new_figure
from helpers.validate import check_flag, check_int, check_matrix, refuse_nonfinite

__all__ = ["plot_head_split", "show_image_patches"]


def plot_head_split(d_model: int, n_heads: int, wrong: bool = False, *, T: int = 3, name: str = "X") -> Figure:
    """Which column of `name` (T, d_model) lands in which head: reshape (T, h, d_head) + transpose, or the wrong (h, T,
    d_head)."""
    d_model = check_int(d_model, "d_model", minimum=1)
    n_heads = check_int(n_heads, "n_heads", minimum=1)
    T = check_int(T, "T", minimum=1)
    wrong = check_flag(wrong, "wrong")
    if d_model % n_heads:
        raise ValueError(f"d_model {d_model} is not a multiple of n_heads {n_heads}; each head needs d_model / n_heads "
                         "columns")
    if d_model > 16 or T > 6:
        raise ValueError(f"plot_head_split draws every cell: use d_model <= 16 and T <= 6, got d_model={d_model}, "
                         f"T={T}")
    if not isinstance(name, str):
        raise TypeError(f"name must be a string such as 'X' or 'Q', got {type(name).__name__}")
    d_k = d_model // n_heads
    code = np.arange(T * d_model).reshape(T, d_model)  # (T, d_model) cell (t, c) holds t * d_model + c
    if wrong:
        heads = code.reshape(n_heads, T, d_k)  # (T, d_model) -> (h, T, d_k): cuts across tokens
    else:
        heads = split_heads(code, n_heads).astype(int)  # (T, d_model) -> (T, h, d_k) -> (h, T, d_k)
    owner = np.empty((T, d_model), dtype=int)  # (T, d_model) the head each cell of X lands in
    for h in range(n_heads):
        for v in heads[h].ravel():
            owner[divmod(int(v), d_model)] = h
    palette = mpl.colormaps[CMAP](np.linspace(0.1, 0.9, n_heads) if n_heads > 1 else [0.55])  # (h, 4)
    cell = 0.5
    fig = new_figure((round(1.3 + cell * (d_model + n_heads * d_k) + 0.5 * n_heads, 1), round(1.5 + cell * T, 1)))
    axes = fig.subplots(1, 1 + n_heads, width_ratios=[d_model] + [d_k] * n_heads)

    def draw(ax, src, colors, rows, cols, title):
        ax.imshow(colors, aspect="equal")
        for (i, j), v in np.ndenumerate(src):
            t, c = divmod(int(v), d_model)
            ax.text(j, i, f"{t + 1},{c + 1}", ha="center", va="center", fontsize=7,
                    color=text_colors(colors[i, j]).item())
        ax.set_xticks(range(src.shape[1]), labels=cols)
        ax.set_yticks(range(src.shape[0]), labels=rows)
        ax.tick_params(length=0, labelsize=7)
        ax.set_title(title, fontsize=9)
        for spine in ax.spines.values():
            spine.set_visible(False)

    draw(axes[0], code, palette[owner], [f"t{t + 1}" for t in range(T)], [str(c + 1) for c in range(d_model)],
         f"{name} (T={T}, d_model={d_model})")
    axes[0].set_xlabel("column c (cell text: token,column, counted from 1)", fontsize=7)
    for h in range(n_heads):
        src_tok = heads[h] // d_model  # (T, d_k) the token each entry came from
        mixed = (src_tok != np.arange(T)[:, None]).any()
        draw(axes[1 + h], heads[h], np.broadcast_to(palette[h], (T, d_k, 4)), [f"r{t + 1}" for t in range(T)],
             [str(c + 1) for c in range(d_k)], f"head {h + 1}" + ("\n(row r ≠ token r!)" if mixed else ""))
    how = ("wrong: reshape straight to (h, T, d_head): row r of a head is no longer token r" if wrong
           else "right: reshape to (T, h, d_head), then swap T and h: head j gets columns (j−1)·d_head + 1 … j·d_head")
    fig.suptitle(how, fontsize=9)
    return fig

def show_image_patches(image: object, patch: int) -> Figure:
    """An image cut into patch x patch squares (numbered in reading order) and the tokens they become."""
    img = check_matrix(image, "image", one_row=True, finite=False).astype(np.float64)  # (H, W)
    refuse_nonfinite(img, "image", "every pixel must be a finite number")
    patch = check_int(patch, "patch", minimum=1)
    H, W = img.shape
    if H % patch or W % patch:
        raise ValueError(f"image has shape {img.shape}, which patch={patch} does not divide")
    if H * W > 1024:
        raise ValueError(f"show_image_patches prints every pixel: use at most 1024 pixels, got shape {img.shape}")
    nh, nw = H // patch, W // patch
    tokens = img.reshape(nh, patch, nw, patch).swapaxes(1, 2).reshape(nh * nw, patch * patch)
    # (H, W) -> (nh, p, nw, p) -> (nh, nw, p, p) -> (T = nh*nw, p*p): each patch read row by row
    cmap = mpl.colormaps["gray_r"]
    norm = Normalize(min(img.min(), 0), max(img.max(), 1))
    fig = new_figure((round(1.4 + 0.32 * (W + patch * patch), 1), round(1.2 + 0.32 * max(H, 2 * nh * nw), 1)))
    ax_img, ax_tok = fig.subplots(1, 2, width_ratios=[W, patch * patch])
    for ax, data in ((ax_img, img), (ax_tok, tokens)):
        ax.imshow(data, cmap=cmap, norm=norm, aspect="equal")
        ax.tick_params(length=0, labelsize=7)
    colors = text_colors(cmap(norm(tokens)))  # the token matrix prints its numbers; the picture does not
    for (i, j), v in np.ndenumerate(tokens):
        ax_tok.text(j, i, format_value(v), ha="center", va="center", fontsize=6, color=colors[i, j])
    edge = mpl.colormaps[CMAP](0.55)
    for k in range(nh * nw):
        r, c = divmod(k, nw)
        ax_img.add_patch(Rectangle((c * patch - 0.5, r * patch - 0.5), patch, patch, fill=False, edgecolor=edge,
                                   lw=2.5))
        ax_img.text(c * patch - 0.4, r * patch - 0.4, f"X{k + 1}", ha="left", va="top", fontsize=8,
                    color="white", bbox={"boxstyle": "round,pad=0.15", "facecolor": edge, "linewidth": 0})
    ax_img.set_xticks(range(W))
    ax_img.set_yticks(range(H))
    ax_img.set_title(f"image {H}×{W} cut into {nh * nw} patches of {patch}×{patch}", fontsize=9)
    ax_tok.set_yticks(range(nh * nw), labels=[f"X{k + 1}" for k in range(nh * nw)])
    ax_tok.set_xticks(range(patch * patch))
    ax_tok.set_xlabel("pixel of the patch, read row by row", fontsize=8)
    ax_tok.set_title(f"tokens: {nh * nw} rows of {patch * patch} numbers", fontsize=9)
    return fig
