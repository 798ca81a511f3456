"""The committed model computes what it computed before issue 36's refactor (tests/data/lm_reference.npz,
written by tests/tools/lm_reference.py): float64 logits, gradients, losses and attention weights to a relative
difference of 1e-12 (1e-10 for the gradients, sums over every position), float32 logits to float32 rounding,
and every generated text character for character."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))

from lm_reference import PATH, compute  # noqa: E402

REL_64 = 1e-12  # float64: relative to the array's largest entry
REL_GRAD = 1e-10  # float64 gradients: sums over 96 positions and 2 layers
REL_32 = 1e-5  # float32 logits: a few roundings of 6e-8 each, relative to the largest logit


@pytest.fixture(scope="module")
def pair():
    with np.load(PATH, allow_pickle=False) as f:
        saved = {k: f[k] for k in f.files}
    return saved, compute()


def test_the_reference_has_every_entry(pair):
    saved, now = pair
    assert sorted(saved) == sorted(now)
    assert PATH.stat().st_size < 25_000  # about 20 KB, not a model's worth


def test_texts_are_identical(pair):
    saved, now = pair
    texts = [k for k in saved if saved[k].dtype.kind == "U"]
    assert len(texts) == 8
    for k in texts:
        assert str(now[k]) == str(saved[k]), k


def test_float64_numbers_agree_to_1e_12(pair):
    saved, now = pair
    for k in saved:
        if saved[k].dtype == np.float64:
            assert now[k].dtype == np.float64 and now[k].shape == saved[k].shape, k
            tol = REL_GRAD if k.startswith("grad") else REL_64
            rel = np.abs(now[k] - saved[k]).max() / np.abs(saved[k]).max()
            assert rel <= tol, f"{k}: relative difference {rel:.2e} > {tol:g}"


def test_float32_logits_agree_to_float32_rounding(pair):
    saved, now = pair
    assert saved["logits32"].dtype == now["logits32"].dtype == np.float32
    rel = np.abs(now["logits32"] - saved["logits32"]).max() / np.abs(saved["logits32"]).max()
    assert rel <= REL_32, f"relative difference {rel:.2e}"
    np.testing.assert_array_equal(now["trace_n_keys"], saved["trace_n_keys"])
