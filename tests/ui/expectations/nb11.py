"""Lesson 11's browser expectation (kind induction): what the page of
``helpers.explorers.nb11`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import functools

import numpy as np
from expected import Expected, expects, number_array

_INDUCTION_ARGS = ("steps", "seed", "lr", "batch_size", "T", "n_letters", "d_head", "periods", "snapshot_every",
                   "n_eval",
                   "layer1")


@functools.lru_cache(maxsize=4)
def _run_induction(args: tuple) -> object:
    from helpers.induction import train as induction_train

    return induction_train(**dict(zip(_INDUCTION_ARGS, args, strict=True)))


@expects("induction")
def induction(inputs: dict) -> Expected:
    missing = [n for n in ("step", "layer", "probe", *_INDUCTION_ARGS) if n not in inputs]
    assert not missing, f"data-state of an 'induction' explorer lacks {missing}; it has {sorted(inputs)}"
    args = tuple(float(inputs[n]) if n == "lr" else tuple(int(p) for p in inputs[n]) if n == "periods"
                 else bool(inputs[n]) if n == "layer1" else int(inputs[n]) for n in _INDUCTION_ARGS)
    run = _run_induction(args)
    snaps = {s.step: s for s in run.snapshots}
    step = int(inputs["step"])
    assert step in snaps, f"step {step} is not a snapshot step of this run ({sorted(snaps)})"
    np.testing.assert_array_equal(number_array(inputs["probe"]), run.probe, err_msg="data-state probe != train's")
    s = snaps[step]
    main, other = (s.weights2, s.weights1) if inputs["layer"] == "layer 2" else (s.weights1, s.weights2)  # (T, T) each
    return Expected(main, None, [main, other, s.probe_loss[None]])  # the loss row (1, T-1)
