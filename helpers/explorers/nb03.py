"""The explorer of lesson 03, softmax overflow: the naive softmax turns NaN, the stable one never does."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from helpers.attention import naive_softmax, softmax
from helpers.controls import choice, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.validate import check_matrix, check_real, check_tokens

__all__ = ["OverflowExplorer", "overflow_explorer", "OVERFLOW_PATTERN"]


OVERFLOW_PATTERN = np.array([[1.0, 2.0, 3.0], [2.0, -1.0, 0.5], [0.2, 1.0, 0.6]])  # (3, 3) row maxima 3, 2, 1
_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


@register(demo=lambda: OverflowExplorer())
class OverflowExplorer(Explorer):
    """03: scores = pattern · 10**m in a chosen float type; naive softmax turns NaN, the stable one never does."""

    kind = "overflow"
    about = "a slider multiplies the scores by 10^m; naive softmax turns NaN, the stable one never does"
    yours_spec_name = "helpers.checks.nb03:SPEC_STABLE_SOFTMAX"  # yours=: the student's stable_softmax(S)

    def __init__(self, pattern: object = None, *, magnitude: float = 0.0, dtype: str = "float64",
                 m_min: float = -1.0, m_max: float = 3.0, token_labels: Sequence[str] | None = None,
                 yours: object = None) -> None:
        self.pattern = check_matrix(OVERFLOW_PATTERN if pattern is None else pattern, "pattern").astype(float)
        if self.pattern.shape[0] != self.pattern.shape[1]:
            raise ValueError(f"pattern must be square (T, T) scores, got shape {self.pattern.shape}")
        magnitude, m_min, m_max = (check_real(v, name, kind="a finite number", rule="a finite number")
                                   for name, v in (("magnitude", magnitude), ("m_min", m_min), ("m_max", m_max)))
        if not m_min <= magnitude <= m_max:
            raise ValueError(f"magnitude must lie in [m_min, m_max] = [{m_min}, {m_max}], got {magnitude}")
        if m_max > math.log10(np.finfo(np.float16).max / max(float(np.abs(self.pattern).max()), 1e-300)):
            raise ValueError(f"pattern · 10**m_max overflows float16 (max {np.finfo(np.float16).max:.0f}); lower m_max")
        self.tokens = check_tokens(token_labels, self.pattern.shape[0], of="pattern", what="rows")
        super().__init__(magnitude=scalar_slider("magnitude", float(magnitude), min=m_min, max=m_max, step=0.05,
                                                 description="m (scores × 10^m)", readout_format=".2f"),
                         dtype=choice("dtype", list(_DTYPES), dtype), yours=yours)

    def yours_args(self, values: dict) -> tuple:
        """stable_softmax(S) on the scores shown, in the float type chosen (compared at that type's precision)."""
        return ((self.pattern * 10.0 ** values["magnitude"]).astype(_DTYPES[values["dtype"]]),)  # (T, T) as shown

    def show(self, magnitude: float, dtype: str) -> Shown:
        scores = (self.pattern * 10.0**magnitude).astype(_DTYPES[dtype])  # (T, T) in the chosen float type
        with np.errstate(all="ignore"):  # the naive softmax overflows on purpose: inf, then inf/inf = nan
            naive = naive_softmax(scores)  # (T, T)
        stable = softmax(scores)  # (T, T) never NaN
        t = self.tokens
        panels = [Panel(scores, f"scaled scores × 10^m (m = {magnitude:.2f})", t, t, kind="scores"),
                  Panel(naive, "naive: exp(s) / Σ exp(s)", t, t), Panel(stable, "stable: s − row max first", t, t)]
        limit = math.log(float(np.finfo(_DTYPES[dtype]).max))
        note = (f"exp(x) overflows {dtype} for x &gt; ln(max) = {limit:.2f}; largest score: "
                f"{float(np.max(scores)):.4g}; naive NaN cells: <b>{int(np.isnan(naive).sum())}</b>")
        return Shown(View(panels), inputs={"pattern": self.pattern, "magnitude": magnitude, "dtype": dtype,
                                           "scores": scores}, weights=stable, note=note, extra={"naive_weights": naive})


overflow_explorer = OverflowExplorer
