"""The explorer of lesson 11, induction heads: two attention layers learn to compose."""

from __future__ import annotations

import math
import numbers

import numpy as np

from helpers.controls import choice, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.induction import TrainResult as InductionResult
from helpers.induction import labels as induction_labels
from helpers.induction import train as induction_train
from helpers.panels import Panel, View

__all__ = ["InductionExplorer", "induction_explorer"]


@register(demo=lambda: InductionExplorer(steps=20, snapshot_every=10))
class InductionExplorer(Explorer):
    """11: a training-step slider and a layer menu; both layers' attention weights on the probe sequence and
    the probe's loss at each position, as two attention layers learn to compose into an induction head.

    Trains once, here (``helpers.induction.train``, seeded), unless given the ``result`` of that call;
    ``show`` only picks a snapshot.
    """

    kind = "induction"
    about = ("a training-step slider and a layer menu; both layers' attention weights on the probe sequence and "
             "its loss at each position, as the two layers learn")
    LAYERS = ("layer 2", "layer 1")

    def __init__(self, step: int = 0, layer: str = "layer 2", *, result: object = None, steps: int = 600,
                 seed: int = 0, lr: float = 0.01, snapshot_every: int = 10) -> None:
        if result is None:
            result = induction_train(steps=steps, seed=seed, lr=lr, snapshot_every=snapshot_every)  # about 2 s
        elif not isinstance(result, InductionResult):
            raise TypeError(f"result must be what helpers.induction.train returned, got {type(result).__name__}")
        self.result, self.config = result, dict(result.config)
        every, total = self.config["snapshot_every"], self.config["steps"]
        if total % every:
            raise ValueError(f"the run's steps ({total}) must be a multiple of its snapshot_every ({every})")
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or not 0 <= step <= total or step % every:
            raise ValueError(f"step must be a multiple of {every} from 0 to {total}, got {step!r}")
        n = self.config["n_letters"]
        self.tokens = induction_labels(result.probe, n, positions=True)  # ^₁ A₂ F₃ C₄ E₅ A₆ ... F₁₁
        self.loss_max = max(float(np.ceil(max(s.probe_loss.max() for s in result.snapshots))), 1.0)  # one colour scale
        super().__init__(step=scalar_slider("step", step, min=0, max=total, step=every, integer=True,
                                            description="training step"),
                         layer=choice("layer", list(self.LAYERS), layer, description="main heatmap"))

    def show(self, step: int, layer: str) -> Shown:
        every = self.config["snapshot_every"]
        if step % every:
            raise ValueError(f"step must be a multiple of {every} (a snapshot is stored every {every} steps), got "
                             f"{step}")
        if layer not in self.LAYERS:
            raise ValueError(f"layer must be one of {list(self.LAYERS)}, got {layer!r}")
        snap = self.result.snapshots[step // every]
        t = self.tokens
        w = {"layer 1": snap.weights1, "layer 2": snap.weights2}
        what = {"layer 1": "previous-token head?", "layer 2": "induction head?"}
        other = self.LAYERS[1 - self.LAYERS.index(layer)]
        main = Panel(w[layer], f"{layer} ({what[layer]}) at step {snap.step}", t, t)
        loss = Panel(snap.probe_loss[None], "loss at each position (next token)", ["loss"], t[:-1], kind="values",
                     vmin=0.0, vmax=self.loss_max, xlabel="position (its token)", ylabel="",
                     color_bar_label="loss (same scale at every step)")
        below = Panel(w[other], f"{other} at step {snap.step}", t, t)
        sc = snap.results
        note = (f"step {snap.step} of {self.config['steps']}, on {self.config['n_eval']} test sequences: repeated "
                f"letters: loss <b>{sc.loss_repeat:.3g}</b>, accuracy <b>{sc.accuracy_repeat:.1%}</b>; first "
                f"occurrences: loss <b>{sc.loss_first:.3g}</b> (guessing: ln {self.config['n_letters']} = "
                f"{math.log(self.config['n_letters']):.2f})")
        inputs = {"step": snap.step, "layer": layer, "probe": self.result.probe, **self.config}
        # the loss strip in a row of its own: beside an (11, 11) heatmap it left a tall empty space above it
        return Shown([View([main]), View([below]), View([loss])], inputs=inputs, weights=w[layer], note=note,
                     extra={"weights1": snap.weights1, "weights2": snap.weights2, "probe_loss": snap.probe_loss,
                            "results": sc._asdict()})


induction_explorer = InductionExplorer
