"""The helper package of the attention notebooks: math, worked examples, figures, widgets.

``from helpers import softmax, single_head_attention, ...`` gives the math; figures live in
``helpers.plots`` (matplotlib) and ``helpers.htmlview`` (the live HTML tables), both drawing the
``Panel``/``View`` of ``helpers.panels``; controls in ``helpers.controls``; the explorer protocol in
``helpers.explorer`` and the explorers in ``helpers.explorers``; ``helpers.presentation(True)``
enlarges the live views for a projector; the
reference texts' numbers in ``helpers.examples``, and exercise checks in ``helpers.checks``.
Importing the package changes nothing (no seeding, no matplotlib styling).
"""

from helpers.attention import (
    attention_steps,
    causal_mask,
    merge_heads,
    multi_head_attention,
    naive_softmax,
    project_qkv,
    scaled_dot_product_attention,
    self_attention,
    single_head_attention,
    softmax,
    split_heads,
    xavier_normal,
)

__all__ = [
    "attention_steps",
    "causal_mask",
    "merge_heads",
    "multi_head_attention",
    "naive_softmax",
    "project_qkv",
    "scaled_dot_product_attention",
    "self_attention",
    "single_head_attention",
    "softmax",
    "split_heads",
    "xavier_normal",
    "presentation",
]


def presentation(on: bool = True) -> None:
    """Enlarge (True) or restore (False) every live explorer's views, for a classroom projector."""
    from helpers.explorer import presentation as _presentation  # imports ipywidgets only when used

    _presentation(on)
