"""The explorer of lesson 00, start here: the widget check."""

from __future__ import annotations

import numpy as np

from helpers.attention import softmax
from helpers.controls import scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View

__all__ = ["WidgetCheck", "widget_check"]


@register(demo=lambda: WidgetCheck())
class WidgetCheck(Explorer):
    """00: one slider moves the score of key 2; the two attention weights softmax([0, s]) follow."""

    kind = "widget-check"
    about = "a slider moves a score; the heatmap shows softmax([0, s])"

    def __init__(self) -> None:
        super().__init__(score=scalar_slider("score", 0.0, min=-4, max=4, step=0.1, readout_format=".1f",
                                             description="score of key 2"))

    def show(self, score: float) -> Shown:
        w = softmax(np.array([[0.0, score]]))  # (1, 2)
        panel = Panel(w, "softmax([0, s])", row_labels=["q"], col_labels=["key 1", "key 2"])
        return Shown(View([panel]), inputs={"scores": [[0.0, score]]}, weights=w)


widget_check = WidgetCheck
