"""The explorer of lesson 07, attention learns: a training-step slider over one layer trained on a toy task."""

from __future__ import annotations

import numbers

from helpers.controls import choice, scalar_slider
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.panels import Panel, View
from helpers.training import TASKS, letters, train

__all__ = ["TrainingExplorer", "training_explorer"]


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
