"""The helper package of the attention notebooks: math, worked examples, figures, widgets.

``from helpers import softmax, single_head_attention, ...`` gives the math; figures live in
``helpers.plots``, sliders and explorers in ``helpers.widgets`` / ``helpers.explorers``, the
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
]
