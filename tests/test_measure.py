"""Tests of helpers/measure.py: peak memory sees an array's bytes, slopes of exact powers, bad input refused."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from helpers.measure import fastest_seconds, loglog_slope, peak_bytes


def test_peak_bytes_sees_the_array_a_function_makes():
    n = 1_000_000
    peak = peak_bytes(np.ones, n)  # one float64 array of n numbers
    assert 8 * n <= peak <= 8 * n + 100_000  # its bytes, plus a little bookkeeping
    assert not tracemalloc.is_tracing()


def test_peak_bytes_refuses_to_nest():
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="already tracing"):
            peak_bytes(np.ones, 10)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0, 3.0])
def test_loglog_slope_of_an_exact_power(power):
    x = np.array([256, 512, 1024, 4096])
    assert abs(loglog_slope(x, 3.0 * x**power) - power) < 1e-12


@pytest.mark.parametrize("cpu", [False, True])
def test_fastest_seconds_is_a_positive_time(cpu):
    assert 0 < fastest_seconds(sum, range(100_000), repeats=2, cpu=cpu) < 5.0  # a sanity bound, not a speed goal


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: loglog_slope([1, 2], [1, 2, 3]), ValueError, "same length"),
    (lambda: loglog_slope([1], [1]), ValueError, ">= 2"),
    (lambda: loglog_slope([1, 0], [1, 2]), ValueError, "positive"),
    (lambda: fastest_seconds(sum, [1], repeats=0), ValueError, "repeats must be at least 1"),
    (lambda: fastest_seconds("f"), TypeError, "fn must be a function"),
    (lambda: peak_bytes(3), TypeError, "fn must be a function"),
    (lambda: fastest_seconds(sum, [1], cpu="yes"), TypeError, "cpu must be True or False"),
])
def test_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()
