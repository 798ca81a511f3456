"""The helper package of the attention notebooks: math, worked examples, figures, widgets.

``from helpers import softmax, single_head_attention, ...`` gives the math; figures live in
``helpers.plots`` (matplotlib) and ``helpers.liveview`` (the live tables, updated cell by cell), both drawing the
``Panel``/``View`` of ``helpers.panels``; controls in ``helpers.controls``; the explorer protocol in
``helpers.explorer`` and the explorers in ``helpers.explorers``; ``helpers.presentation(True)``
enlarges the live views for a projector; the
reference texts' numbers in ``helpers.examples``, exercise checks in ``helpers.checks``, and the
argument checks every module shares (one wording for each mistake) in ``helpers.validate``.
Importing the package changes nothing (no seeding, no matplotlib styling).
"""

from helpers.attention import (
    attention_steps,
    causal_mask,
    merge_heads,
    multi_head_attention,
    naive_softmax,
    online_softmax_steps,
    padding_mask,
    project_qkv,
    scaled_dot_product_attention,
    self_attention,
    single_head_attention,
    softmax,
    split_heads,
    tiled_attention,
    xavier_normal,
)
from helpers.backward import attention_backward, softmax_backward, softmax_jacobian
from helpers.generation import KVCache, decode_step, grouped_query_attention, kv_cache_bytes
from helpers.longcontext import (
    latent_attention,
    linear_attention,
    linear_attention_recurrent,
    sliding_window_mask,
)
from helpers.positions import rotary, sinusoidal_positions

__all__ = [
    "KVCache",
    "attention_backward",
    "attention_steps",
    "causal_mask",
    "decode_step",
    "grouped_query_attention",
    "kv_cache_bytes",
    "latent_attention",
    "linear_attention",
    "linear_attention_recurrent",
    "merge_heads",
    "multi_head_attention",
    "naive_softmax",
    "online_softmax_steps",
    "padding_mask",
    "project_qkv",
    "rotary",
    "scaled_dot_product_attention",
    "self_attention",
    "single_head_attention",
    "sliding_window_mask",
    "sinusoidal_positions",
    "softmax",
    "softmax_backward",
    "softmax_jacobian",
    "split_heads",
    "tiled_attention",
    "xavier_normal",
    "presentation",
]


def presentation(on: bool = True) -> None:
    """Enlarge (True) or restore (False) every live explorer's views, for a classroom projector."""
    from helpers.explorer import presentation as _presentation  # imports ipywidgets only when used

    _presentation(on)
