"""One-off figure of notebook 07 (attention learns): a rate measured by nudging, drawn as the rates explorer draws it.

Importing this module draws nothing and changes nothing (no pyplot, no rcParams).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from helpers.plots import new_figure
from helpers.rates import FUNCTIONS, curve, measured_rate, rule_rate
from helpers.validate import check_flag, check_real

__all__ = ["plot_rate"]


def plot_rate(name: str, s: float, eps: float, rule: bool = False) -> Figure:
    """The curve of ``name`` (a key of ``helpers.rates.FUNCTIONS``) for s ± 1, its tangent at s and the line through
    (s, f(s)) and (s + eps, f(s + eps)), whose slope is the measured rate; with ``rule``, the tangent's slope too."""
    eps = check_real(eps, "eps", low=0.0, high=1.0 + 1e-12, rule="a nudge in (0, 1] (the figure shows s ± 1)")
    rule = check_flag(rule, "rule")
    xs, ys = curve(name, s - 1.0, s + 1.0, 81)  # (81,), (81,) checks name and s
    f = FUNCTIONS[name][-1].f
    f0, f1 = f(s), f(s + eps)
    rate, slope = measured_rate(f, s, eps), rule_rate(name, s)
    fig = new_figure((5.2, 3.2))
    ax = fig.subplots()
    ax.plot(xs, ys, color="#222222", lw=2, label=f"f(s) = {name.split()[-1]}")
    ends = xs[[0, -1]]  # (2,) the window's ends
    ax.plot(ends, f0 + slope * (ends - s), color="#b35806", lw=1.5, ls="--",
            label=f"tangent at s: slope {slope:.4f}" if rule else "tangent: touches the curve at s")
    ax.plot(ends, f0 + rate * (ends - s), color="#3b528b", lw=1.5,
            label=f"through s and s + ε: slope {rate:.4f} (measured)")
    ax.plot([s, s + eps], [f0, f1], "o", color="#3b528b", ms=5)
    pad = 0.12 * (float(ys.max() - ys.min()) or 1.0)
    ax.set_ylim(float(ys.min()) - pad, float(ys.max()) + pad)
    ax.set_xlim(float(xs[0]), float(xs[-1]))
    ax.set_xlabel("s")
    ax.set_title(f"{name} at s = {s:g}, nudged by ε = {eps:g}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return fig
