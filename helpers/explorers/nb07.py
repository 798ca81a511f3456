"""The explorers of lesson 07, attention learns: rates measured by nudging (a slider moves s; the curve, its
tangent and the measured rate are drawn), and a training-step slider over one layer trained on a toy task."""

from __future__ import annotations

import html
import numbers

from helpers.controls import checkbox, choice, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.rates import FUNCTIONS, RATE_COLUMNS, RULES, curve, rate_rows, rule_rate
from helpers.training import TASKS, letters, train

__all__ = ["RatesExplorer", "rates_explorer", "TrainingExplorer", "training_explorer", "EPSILONS"]


EPSILONS = ("1", "0.5", "0.1", "0.01", "0.001")  # the nudges of the rates explorer's menu (texts, as the menu shows)
_S_RANGE = (-1.5, 1.5)  # the s slider's range
_W, _H, _L, _R, _T, _B = 240, 150, 40, 234, 8, 126  # the drawing's box (SVG user units): width, height, plot edges


def _svg(name: str, s: float, eps: float, rate: float, slope: float, rule: bool) -> str:
    """The curve of ``name`` around s, its tangent at s (slope: the rule's rate, printed only with ``rule``) and the
    line through (s, f(s)) and (s + ε, f(s + ε)) (slope: the measured rate), as inline SVG drawn by the browser."""
    lo, hi = s - 1.0, s + 1.0  # the window: s ± 1, so every nudge of the menu (at most 1) stays in it
    xs, ys = curve(name, lo, hi, 41)  # (41,), (41,)
    f0, f1 = FUNCTIONS[name][-1].f(s), FUNCTIONS[name][-1].f(s + eps)  # the two points the rate is measured from
    y_lo, y_hi = float(ys.min()), float(ys.max())
    pad = 0.12 * (y_hi - y_lo or 1.0)
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def X(x: float) -> float:
        return _L + (x - lo) / (hi - lo) * (_R - _L)

    def Y(y: float) -> float:
        return _B - (y - y_lo) / (y_hi - y_lo) * (_B - _T)

    def line(m: float) -> str:  # a straight line through (s, f0) with slope m, across the window
        return f"{X(lo):.1f},{Y(f0 + m * (lo - s)):.1f} {X(hi):.1f},{Y(f0 + m * (hi - s)):.1f}"

    pts = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in zip(xs.tolist(), ys.tolist(), strict=True))
    tangent = f"tangent at s: slope {slope:.4g}" if rule else "tangent: touches the curve at s"
    say = (f"The curve of {name} from s = {lo:g} to {hi:g}; at s = {s:g} its {tangent} (dashed) and the line "
           f"through the point nudged by ε = {eps:g} (solid, slope {rate:.4g}).")
    return (
        f'<svg role="img" aria-label="{html.escape(say)}" viewBox="0 0 {_W} {_H}" width="24em" height="15em" '
        'style="display:block;font:9px sans-serif" class="attn-rate-plot">'
        f'<rect x="{_L}" y="{_T}" width="{_R - _L}" height="{_B - _T}" fill="none" stroke="#888"/>'
        f'<svg x="{_L}" y="{_T}" width="{_R - _L}" height="{_B - _T}" viewBox="{_L} {_T} {_R - _L} {_B - _T}">'
        f'<polyline points="{pts}" fill="none" stroke="#222" stroke-width="2"/>'
        f'<polyline points="{line(slope)}" fill="none" stroke="#b35806" stroke-width="1.5" stroke-dasharray="5 3"/>'
        f'<polyline points="{line(rate)}" fill="none" stroke="#3b528b" stroke-width="1.5"/>'
        f'<circle cx="{X(s):.1f}" cy="{Y(f0):.1f}" r="3" fill="#222"/>'
        f'<circle cx="{X(s + eps):.1f}" cy="{Y(f1):.1f}" r="3" fill="#3b528b"/></svg>'
        f'<text x="{X(s):.1f}" y="{_B + 11}" text-anchor="middle">s = {s:g}</text>'
        f'<text x="{_L}" y="{_B + 11}" text-anchor="start">{lo:g}</text>'
        f'<text x="{_R}" y="{_B + 11}" text-anchor="end">{hi:g}</text>'
        f'<text x="{_L - 3}" y="{_B}" text-anchor="end">{y_lo:.3g}</text>'
        f'<text x="{_L - 3}" y="{_T + 7}" text-anchor="end">{y_hi:.3g}</text>'
        f'<text x="{_L + 4}" y="{_T + 10}" fill="#b35806">- - {tangent}</text>'
        f'<text x="{_L + 4}" y="{_T + 21}" fill="#3b528b">— through s and s + ε: slope {rate:.4g}</text></svg>'
    )


@register(demo=lambda: RatesExplorer())
class RatesExplorer(Explorer):
    """07: measure a rate. A slider moves s, a menu picks the function and the nudge ε; the table shows f at s and at
    s + ε and the measured rate (f(s + ε) − f(s))/ε (for a product or a chain, of each part too); the drawing shows
    the curve, its tangent at s and the line through the two points. "show the rule" adds the rule's rate.

    ``state()`` names the whole function's numbers: ``at`` f(s), ``nudged`` f(s + ε), ``rate`` the measured rate (the
    table of every part is ``weights``, the field every explorer carries)."""

    kind = "rates"
    about = ("a slider moves s; the curve, its tangent and the rate measured with a nudge ε, for s², eˢ, a product, "
             "a chain")

    def __init__(self, function: str = "s²", s: float = 1.0, eps: str = "0.5", rule: bool = False) -> None:
        super().__init__(function=choice("function", list(FUNCTIONS), function),
                         s=scalar_slider("s", s, min=_S_RANGE[0], max=_S_RANGE[1], step=0.1, readout_format=".1f",
                                         description="s"),
                         eps=choice("eps", list(EPSILONS), eps, description="nudge ε"),
                         rule=checkbox("rule", rule, description="show the rule"))

    def show(self, function: str, s: float, eps: str, rule: bool) -> Shown:
        if eps not in EPSILONS:
            raise ValueError(f"eps must be one of {list(EPSILONS)}, got {eps!r}")
        s = round(float(s), 10)  # the slider's 0.30000000000000004 is 0.3
        labels, table = rate_rows(function, s, float(eps), rule)  # (R, 3) or (R, 4)
        cols = list(RATE_COLUMNS[: table.shape[1]])
        panel = Panel(table, f"{function} at s = {s:g}, nudged by ε = {eps}", labels, cols, kind="values",
                      xlabel="", ylabel="")
        rate, slope = float(table[-1, 2]), rule_rate(function, s)
        note = (f"measured rate of {html.escape(function)} at s = {s:g}: (f(s + ε) − f(s)) / ε = <b>{rate:.4f}</b>"
                + (f"; the rule: {html.escape(RULES[function])}, here {slope:.4f}" if rule else "")
                + _svg(function, s, float(eps), rate, slope, rule))
        # the table travels as `weights` (the field every explorer's page reads); the whole's numbers by name:
        at, nudged = float(table[-1, 0]), float(table[-1, 1])  # f(s), f(s + ε) of the whole function
        return Shown(View([panel]), inputs={"function": function, "s": s, "eps": eps, "rule": rule}, weights=table,
                     note=note, extra={"at": at, "nudged": nudged, "rate": rate})


rates_explorer = RatesExplorer


_PATTERNS = {"reverse": "the anti-diagonal", "previous": "the diagonal just below the main one (query 1: key 1)"}


@register(demo=lambda: TrainingExplorer(steps=20, snapshot_every=5))
class TrainingExplorer(Explorer):
    """07: a training-step slider and a task menu; the probe's attention weights as one layer learns.

    Both tasks are trained once, here (``helpers.training.train``, seeded); ``show`` only picks a snapshot.
    """

    kind = "training"
    about = "a training-step slider and a task menu; the probe sequence's attention weights as the layer learns"

    def __init__(self, task: str = "reverse", step: int = 0, *, steps: int = 300, seed: int = 0,
                 lr: float = 0.05, snapshot_every: int = 5) -> None:
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (step, steps, snapshot_every)):
            raise TypeError(f"step, steps and snapshot_every must be integers, got {step!r}, {steps!r}, "
                            f"{snapshot_every!r}")
        if steps < 1 or snapshot_every < 1 or steps % snapshot_every or not 0 <= step <= steps:
            raise ValueError(f"steps ({steps}) must be a positive multiple of snapshot_every ({snapshot_every}), "
                             f"and step ({step}) lie from 0 to steps")
        self.config = {"steps": int(steps), "seed": seed, "lr": lr, "snapshot_every": int(snapshot_every),
                       "batch_size": 32, "T": 6, "n_vocab": 8, "d_k": 8, "d_v": 8, "n_eval": 512}  # train's arguments
        self.runs = {t: train(t, **self.config) for t in TASKS}  # about 0.25 s each; checks every argument
        self.tokens = letters(self.runs["reverse"].probe)  # the probe B, C, D, E, F, G
        super().__init__(step=scalar_slider("step", step, min=0, max=steps, step=snapshot_every, integer=True,
                                            description="training step"),
                         task=choice("task", list(TASKS), task))

    def show(self, step: int, task: str) -> Shown:
        every = self.config["snapshot_every"]
        if step % every:
            raise ValueError(f"step must be a multiple of {every} (a snapshot is stored every {every} steps), got "
                             f"{step}")
        run = self.runs[task]
        snap = run.snapshots[step // every]  # (step, weights (T, T), loss, accuracy)
        panel = Panel(snap.weights, f"{task}: attention weights at step {snap.step}", self.tokens, self.tokens)
        note = (f"step {snap.step} of {self.config['steps']}: test loss <b>{snap.loss:.3g}</b>, accuracy "
                f"<b>{snap.accuracy:.1%}</b> on {self.config['n_eval']} test sequences; {task} needs "
                f"{_PATTERNS.get(task, 'its own pattern')}")
        return Shown(View([panel]), inputs={"task": task, "step": snap.step, "probe": run.probe, **self.config},
                     weights=snap.weights, note=note, extra={"loss": snap.loss, "accuracy": snap.accuracy})


training_explorer = TrainingExplorer
