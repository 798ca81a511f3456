"""Lesson 07's browser expectations (kinds rates and training): what the page of
``helpers.explorers.nb07`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import functools

import numpy as np
from expected import Expected, expects, number_array

from helpers.training import train

_TRAIN_ARGS = ("steps", "seed", "lr", "snapshot_every", "batch_size", "T", "n_vocab", "d_k", "d_v", "n_eval")


@functools.lru_cache(maxsize=8)
def _run(task: str, args: tuple) -> object:
    return train(task, **dict(zip(_TRAIN_ARGS, args, strict=True)))


@expects("training")
def training(inputs: dict) -> Expected:
    missing = [n for n in ("task", "step", "probe", *_TRAIN_ARGS) if n not in inputs]
    assert not missing, f"data-state of a 'training' explorer lacks {missing}; it has {sorted(inputs)}"
    args = tuple(float(inputs[n]) if n == "lr" else int(inputs[n]) for n in _TRAIN_ARGS)
    run = _run(str(inputs["task"]), args)
    snaps = {s.step: s for s in run.snapshots}
    step = int(inputs["step"])
    assert step in snaps, f"step {step} is not a snapshot step of this run ({sorted(snaps)})"
    np.testing.assert_array_equal(number_array(inputs["probe"]), run.probe, err_msg="data-state probe != train's")
    weights = snaps[step].weights  # (T, T) the probe's attention weights after `step` updates
    return Expected(weights, None, [weights])


@expects("rates")
def rates(inputs: dict) -> Expected:
    """A rate measured by nudging: each part's value at the point, nudged by ε, (f(x + ε) − f(x))/ε, the rule's."""
    from helpers.rates import FUNCTIONS

    s, eps = float(inputs["s"]), float(inputs["eps"])  # eps is the menu's text, e.g. "0.01"
    rows = []
    for part in FUNCTIONS[inputs["function"]]:
        x = part.at(s)  # s, or u = e^s for a chain's outer part
        at, nudged = part.f(x), part.f(x + eps)
        rows.append([at, nudged, (nudged - at) / eps] + ([part.rule(s)] if inputs["rule"] else []))
    table = np.array(rows)  # (parts, 3 or 4)
    return Expected(table, None, [table])
