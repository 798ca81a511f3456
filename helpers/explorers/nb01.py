"""The explorer of lesson 01, attention without weights: softmax(X Xᵀ/√d) X with a slider on every entry of X."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from helpers import examples as E
from helpers.controls import MatrixSliders, checkbox
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register, steps_shown
from helpers.validate import check_matrix, check_tokens

__all__ = ["NoWeightsExplorer", "no_weights_explorer"]


@register(demo=lambda: NoWeightsExplorer(E.T001_X, ["x1", "x2", "x3"]))
class NoWeightsExplorer(Explorer):
    """01: softmax(X Xᵀ · scale) X with a slider on every entry of X and a 1/√d on/off toggle."""

    kind = "no-weights"
    about = "a slider on every entry of X; the attention weights and every step of softmax(X Xᵀ/√d) X"
    yours_spec_name = "helpers.checks.nb01:SPEC_ATTEND"  # yours=: the student's attend(X)

    def __init__(self, X: object, token_labels: Sequence[str] | None = None, *, scaled: bool = True,
                 min: float | None = None, max: float | None = None, step: float | None = None,
                 feature_labels: Sequence[str] | None = None, yours: object = None) -> None:
        X = check_matrix(X, "X")  # (T, d)
        self.tokens, self.d = check_tokens(token_labels, X.shape[0]), X.shape[1]
        self.features = feature_labels
        if feature_labels is not None:
            check_tokens(feature_labels, self.d, "feature_labels", "features (columns of X)")
        super().__init__(X=MatrixSliders("X", X, min=min, max=max, step=step, row_labels=self.tokens,
                                         col_labels=feature_labels),
                         scale=checkbox("scale", scaled, description=f"scale by 1/√d (d = {self.d})"), yours=yours)

    def yours_args(self, values: dict) -> tuple:
        return (values["X"],)  # attend(X)

    def show(self, X: np.ndarray, scale: bool) -> Shown:
        s = 1 / math.sqrt(self.d) if scale else 1.0
        return steps_shown(X, X, X, s, self.tokens, {"X": X, "scaled": scale}, self.features)  # Q = K = V = X


no_weights_explorer = NoWeightsExplorer
