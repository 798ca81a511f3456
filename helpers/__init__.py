"""The helper package of the attention notebooks: math, worked examples, figures, widgets, checks.

``from helpers import softmax, single_head_attention, ...`` gives the math. Where everything lives:

- the math, one module per concern: ``attention`` (softmax, heads, masks, tiling), ``rates`` (07: rates
  measured by nudging), ``backward``, ``numerics``, ``positions``, ``training``, ``generation``,
  ``longcontext``, ``induction``, ``heads`` (13: what each head does), ``modern`` (14: sinks, bounded scores,
  local/global layers, the delta rule); the
  reference texts' numbers in ``examples`` and the series' running sentence in ``sentence``;
- argument checks that every module shares (one wording for each mistake): ``validate``;
- what a heatmap shows, in any medium (numbers, colours, texts, colour bars): ``panels``;
- figures: the shared drawing (heatmaps, views, their colour bars, saving) in ``plots``; one-off
  figures of a lesson in ``figures`` (``figures.nb04`` ...); ``images`` makes ``images/``;
- live views (tables drawn by the browser, updated cell by cell): ``liveview``; the controls in
  ``controls``; the explorer protocol in ``explorer`` (``helpers.presentation(True)`` enlarges the
  live views for a projector) and the explorers, one module per lesson, in ``explorers``;
- exercise checks (a student's answer, explained), one module per lesson: ``checks``.

A new lesson NN puts its math in a math module (a new one for a new concern), its argument checks
through ``validate`` (a check two modules need is added there, never copied), its exercise checks in
``checks/nbNN.py``, its explorer in ``explorers/nbNN.py`` and its one-off figures in ``figures/nbNN.py``:
``lesson_modules`` finds each of these on disk, so no list in any ``__init__.py`` is edited (its browser
expectation goes into ``tests/ui/expectations/nbNN.py``, found the same way). Presentation mode is one switch,
``presentation`` here, which the static figures and the live explorers read. Importing the package changes
nothing (no seeding, no matplotlib styling).
"""

import importlib
import os
import pkgutil
import re
import sys
from types import ModuleType

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
    streaming_mask,
)
from helpers.modern import gated_delta_rule, rms_norm, soft_cap, softmax_with_sink
from helpers.positions import rotary, sinusoidal_positions
from helpers.validate import check_flag

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
    "streaming_mask",
    "sinusoidal_positions",
    "softmax",
    "softmax_backward",
    "softmax_jacobian",
    "softmax_with_sink",
    "soft_cap",
    "rms_norm",
    "gated_delta_rule",
    "split_heads",
    "tiled_attention",
    "xavier_normal",
    "presentation",
    "presenting",
]


# --------------------------------------------------------------- presentation mode, for the whole package

# The one switch: read by helpers.plots (static figures) and helpers.explorer (live views). It starts on where the
# kernel's environment says ATTN_PRESENTATION=1: `make present` (the classroom view) sets it, so a projected lesson
# draws large from its first figure; nothing else changes on import.
_presenting = os.environ.get("ATTN_PRESENTATION") == "1"


def presentation(on: bool = True) -> None:
    """Enlarge (True) or restore (False) every live explorer's views for a classroom projector, and draw the
    step-by-step figures (``helpers.plots.draw_view``) run after it large, in rows that fit the screen."""
    global _presenting
    _presenting = check_flag(on, "on")
    explorer = sys.modules.get("helpers.explorer")  # no explorer exists before that module is imported
    if explorer is not None:
        explorer.follow_presentation()


def presenting() -> bool:
    """Whether presentation mode is on (``presentation``)."""
    return _presenting


# --------------------------------------------------------------- lessons, found on disk

LESSON_MODULE = re.compile(r"nb\d\d")  # a lesson's module: nb00 ... nb99, the notebook notebooks/NN-*.ipynb


def lesson_modules(package: str) -> tuple[ModuleType, ...]:
    """Every lesson module ``nbNN`` of ``package`` (e.g. "helpers.checks"), found on disk and imported, in lesson
    order: a new lesson's module is found without any list to edit."""
    pkg = importlib.import_module(package)
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if LESSON_MODULE.fullmatch(m.name))
    return tuple(importlib.import_module(f"{package}.{name}") for name in names)
