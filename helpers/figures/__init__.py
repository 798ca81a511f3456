"""The one-off figures of a lesson: one module per notebook (``nb04``, ``nb11``, ...), as ``helpers.checks``.

A figure that only one lesson draws (04's split of X into heads, 11's residual stream) goes into that
lesson's module here; ``card`` draws the formula card of ``images/``. What every lesson shares stays in
``helpers.plots``: the annotated heatmap (``heatmap``, ``heatmap_grid``), the views of the live
explorers (``draw_view``, ``step_view``, ``view_size``, their colour bars), ``new_figure``,
``plain_figure`` and ``save_figure``. A figure here builds on those and on ``helpers.panels`` (the one
colormap, the cell texts and their colours), so it looks like the rest of the course; its argument checks
come from ``helpers.validate``.

A new lesson NN's one-off figures go into ``helpers/figures/nbNN.py``, and nothing else here changes:
``lessons()`` finds every ``nbNN`` module on disk. Importing this package imports none of its modules
(``from helpers.figures.nb04 import plot_head_split``); ``lessons()`` imports them all (matplotlib, no pyplot).
"""

from __future__ import annotations

from types import ModuleType

from helpers import lesson_modules

__all__ = ["lessons"]


def lessons() -> tuple[ModuleType, ...]:
    """Every lesson's module of figures (``helpers.figures.nb04`` ...), found on disk and imported, in lesson order."""
    return lesson_modules(__name__)

