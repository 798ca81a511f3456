"""Measuring what attention costs: peak memory, the fastest of several runs, slopes on log-log axes.

Notebooks 08, 09 and 10 use them. Timings vary from run to run and machine to machine: the notebooks
show them only in cells whose output nbval ignores, and never assert on them. Peak memory is the same
count of bytes on every run, so its slopes are checked. Nothing here draws (no matplotlib).
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Sequence

import numpy as np

from helpers.validate import check_callable, check_flag, check_int

__all__ = ["peak_bytes", "fastest_seconds", "loglog_slope"]


def peak_bytes(fn: Callable[..., object], *args: object) -> int:
    """The largest total of live allocations while fn(*args) runs (NumPy reports its arrays to tracemalloc)."""
    check_callable(fn, "fn")
    if tracemalloc.is_tracing():
        raise RuntimeError("tracemalloc is already tracing: peak_bytes needs it for itself")
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def fastest_seconds(fn: Callable[..., object], *args: object, repeats: int = 3, cpu: bool = False) -> float:
    """The fastest of ``repeats`` runs of fn(*args), in seconds (the least disturbed by other work).

    cpu=True counts this process's CPU time (all its threads) instead of wall-clock time: on a busy
    machine other programs then barely change the result, since time spent waiting is not counted.
    """
    check_callable(fn, "fn")
    repeats = check_int(repeats, "repeats", minimum=1)
    cpu = check_flag(cpu, "cpu")
    clock = time.process_time if cpu else time.perf_counter
    best = float("inf")
    for _ in range(repeats):
        t0 = clock()
        fn(*args)
        best = min(best, clock() - t0)
    return best


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The slope of log y against log x (least squares): y grows like x**slope."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)  # (n,) each
    if x.ndim != 1 or x.shape != y.shape or x.size < 2:
        raise ValueError(f"x and y must be 1-D of the same length >= 2, got shapes {x.shape} and {y.shape}")
    if not (np.all(x > 0) and np.all(y > 0)):
        raise ValueError("x and y must be positive (their logarithms are taken)")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
