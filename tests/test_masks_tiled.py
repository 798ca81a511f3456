"""Tests of padding_mask, tiled_attention and online_softmax_steps (helpers/attention.py).

Masks: padded batches equal their unpadded sentences, masked keys weigh exactly 0, a causal
token never sees the future, cross-attention (T_q != T_k) shapes. Tiled attention: equal to
scaled_dot_product_attention (float64: 1e-12; float32: rtol 1e-5), the same refusals with the same
messages, and a peak memory far below the full (T_q, T_k) computation (tracemalloc; memory is
deterministic, time is not: nothing here is timed). Every tolerance is stated beside its assertion.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from support import rx

from helpers.attention import (
    causal_mask,
    multi_head_attention,
    online_softmax_steps,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
    tiled_attention,
)

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)
# float64: the tiled and the full computation differ only in the order of a few roundings (the
# rescaling by exp(m_old - m_new) adds one or two per block): a few eps relative to outputs of
# size <= 3. 1e-12 is ~1000 times that, and far below any real mistake (a missing rescale moves
# the output by more than 1e-3).
TOL64 = {"rtol": 1e-12, "atol": 1e-12}
# float32: eps = 1.2e-7; the same reasoning gives rtol 1e-5, with atol 1e-6 for outputs near 0.
TOL32 = {"rtol": 1e-5, "atol": 1e-6}


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240607)


def floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


# ============================================================================== padding_mask


def test_padding_mask_values_and_shape():
    m = padding_mask([2, 4, 1], 4)
    assert m.dtype == bool
    assert m.shape == (3, 1, 4)  # (B, 1, T): broadcasts over the queries
    expected = np.array(
        [
            [[1, 1, 0, 0]],
            [[1, 1, 1, 1]],
            [[1, 0, 0, 0]],
        ],
        dtype=bool,
    )
    np.testing.assert_array_equal(m, expected)


@pytest.mark.parametrize(
    "lengths", [(3, 1), np.array([3, 1]), np.array([3, 1], dtype=np.uint8), [np.int64(3), np.int32(1)]]
)
def test_padding_mask_accepts_integer_kinds(lengths):
    np.testing.assert_array_equal(padding_mask(lengths, np.int64(3)), [[[1, 1, 1]], [[1, 0, 0]]])


def test_padding_mask_broadcasts_like_a_key_padding_mask(rng):
    # (B, 1, T_k) against scores (B, T_q, T_k): every query row of sentence b sees the same keys
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    _, w = scaled_dot_product_attention(Q, K, V, mask=padding_mask([2, 5], 5))
    assert w.shape == (2, 3, 5)
    assert (w[0, :, 2:] == 0.0).all()
    assert (w[0, :, :2] > 0).all()
    assert (w[1] > 0).all()


@pytest.mark.parametrize(
    ("lengths", "T", "exc", "words"),
    [
        ([2, 0], 3, ValueError, ("lengths[1] is 0", "nothing to attend to")),
        ([-1], 3, ValueError, ("lengths[0] is -1", "at least 1")),
        ([2, 5], 4, ValueError, ("lengths[1] is 5 but T is 4", "longer than the padded length")),
        ([2.0, 1.0], 3, TypeError, ("lengths must hold integers", "float64", "2.0")),
        (np.array([2.0]), 3, TypeError, ("lengths must hold integers", "float64")),
        ([True, 2], 3, TypeError, ("lengths must hold integers", "True")),
        (np.array([True, False]), 3, TypeError, ("lengths must hold integers", "bool")),
        ([1, None], 3, TypeError, ("lengths must hold integers", "object")),
        (["2"], 3, TypeError, ("lengths must hold integers", "<U1")),
        ("12", 3, TypeError, ("lengths must be a 1-D sequence of integers", "str")),
        ([], 3, ValueError, ("lengths must be a non-empty 1-D sequence", "shape (0,)")),
        ([[1, 2]], 3, ValueError, ("lengths must be a non-empty 1-D sequence", "shape (1, 2)")),
        (3, 3, ValueError, ("lengths must be a non-empty 1-D sequence", "shape ()")),
        ([[1], [1, 2]], 3, ValueError, ("lengths must be a 1-D sequence of integers",)),
        ([1], 0, ValueError, ("T must be at least 1", "got 0")),
        ([1], -2, ValueError, ("T must be at least 1", "got -2")),
        ([1], 2.0, TypeError, ("T must be an integer", "2.0")),
        ([1], True, TypeError, ("T must be an integer", "True")),
        ([1], "4", TypeError, ("T must be an integer", "'4'")),
        ([1], None, TypeError, ("T must be an integer", "None")),
        ([1], 10**6, ValueError, ("T = 1,000,000 is too large", "(T, T) float64 attention weights it masks would take "
                                  "8,000,000,000,000 bytes (7.28 TiB)", "padding_mask accepts T up to 32,768")),
    ],
)
def test_padding_mask_bad_input(lengths, T, exc, words):
    with pytest.raises(exc, match=rx(*words)):
        padding_mask(lengths, T)


@st.composite
def padded_batches(draw):
    lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    T = max(lengths) + draw(st.integers(0, 2))
    d_in, h, d_head = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    X = draw(hnp.arrays(np.float64, (len(lengths), T, d_in), elements=floats(-2.0, 2.0)))
    W_q, W_k, W_v = (
        draw(hnp.arrays(np.float64, (d_in, h * d_head), elements=floats(-1.0, 1.0))) for _ in range(3)
    )
    W_o = draw(hnp.arrays(np.float64, (h * d_head, 2), elements=floats(-1.0, 1.0)))
    return lengths, X, (W_q, W_k, W_v), W_o, h


@SETTINGS
@given(padded_batches())
def test_padded_batch_equals_each_unpadded_sentence(args):
    lengths, X, Ws, W_o, h = args
    T = X.shape[1]
    out, w = multi_head_attention(X, *Ws, n_heads=h, W_o=W_o, mask=padding_mask(lengths, T))
    assert w.shape == (len(lengths), h, T, T)
    for b, L in enumerate(lengths):
        out_b, w_b = multi_head_attention(X[b, :L], *Ws, n_heads=h, W_o=W_o)  # the sentence alone
        # The same dot products; the padded keys add exact zeros to each softmax sum and to each
        # weighted sum, so only the summation order of BLAS may differ: |X| <= 2, |W| <= 1 and
        # d_in <= 4 keep every number below ~200, a few eps of which is < 1e-12; tolerance 1e-11.
        np.testing.assert_allclose(out[b, :L], out_b, rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(w[b, :, :L, :L], w_b, rtol=1e-11, atol=1e-11)
        assert (w[b, :, :, L:] == 0.0).all()  # every query, padded or not, gives the padding weight 0


def test_padding_content_changes_nothing_for_real_tokens(rng):
    X = rng.normal(size=(2, 5, 4))
    W = rng.normal(size=(4, 4))
    mask = padding_mask([3, 5], 5)
    out, w = multi_head_attention(X, W, W, W, n_heads=2, mask=mask)
    X2 = X.copy()
    X2[0, 3:] = rng.normal(size=(2, 4)) * 100  # new junk in sentence 0's padding
    out2, w2 = multi_head_attention(X2, W, W, W, n_heads=2, mask=mask)
    # weights of real keys are computed from real tokens only; 0 * junk = 0. BLAS may reorder sums
    # (the projections of other rows differ): rtol 1e-13.
    np.testing.assert_allclose(out2[0, :3], out[0, :3], rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(w2[0, :, :3], w[0, :, :3], rtol=1e-13, atol=1e-14)
    # and without the mask the same junk changes the real tokens' outputs: the test can fail
    free, _ = multi_head_attention(X, W, W, W, n_heads=2)
    free2, _ = multi_head_attention(X2, W, W, W, n_heads=2)
    assert np.abs(free2[0, :3] - free[0, :3]).max() > 1e-3


def test_masked_keys_get_weight_exactly_zero(rng, strict_fp):
    Q, K, V = rng.normal(size=(3, 6, 4)), rng.normal(size=(3, 6, 4)), rng.normal(size=(3, 6, 2))
    mask = padding_mask([1, 4, 6], 6) & causal_mask(6)  # (3, 6, 6): padding and no peeking
    _, w = scaled_dot_product_attention(Q * 30, K * 30, V, mask=mask)  # large scores, still exact
    assert (w[~mask] == 0.0).all()
    assert (w[mask] >= 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-14)  # <= 6 terms: ~8 eps
    np.testing.assert_array_equal(w[0, :, 0], 1.0)  # sentence 0 has one real token: all weight on it


def test_causal_output_at_token_i_ignores_later_tokens(rng):
    T = 6
    X = rng.normal(size=(T, 4))
    W_q, W_k, W_v, W_o = (rng.normal(size=(4, 4)) for _ in range(4))
    out, _ = multi_head_attention(X, W_q, W_k, W_v, n_heads=2, W_o=W_o, mask=causal_mask(T))
    for i in range(T - 1):
        X2 = X.copy()
        X2[i + 1 :] = rng.normal(size=(T - i - 1, 4)) * 5  # rewrite the future
        out2, _ = multi_head_attention(X2, W_q, W_k, W_v, n_heads=2, W_o=W_o, mask=causal_mask(T))
        # the same numbers reach tokens 0..i; only BLAS's ordering may differ: rtol 1e-13
        np.testing.assert_allclose(out2[: i + 1], out[: i + 1], rtol=1e-13, atol=1e-14)
        free, _ = multi_head_attention(X, W_q, W_k, W_v, n_heads=2, W_o=W_o)
        free2, _ = multi_head_attention(X2, W_q, W_k, W_v, n_heads=2, W_o=W_o)
        assert np.abs(free2[i] - free[i]).max() > 1e-3  # without the mask token i does see them


def test_cross_attention_shapes(rng):
    # queries from one sequence (T_q = 3), keys and values from another (T_k = 7)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 5))
    mask = padding_mask([7, 4], 7)  # (2, 1, 7): the second source sentence has 4 real tokens
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert out.shape == (2, 3, 5)  # (B, T_q, d_v)
    assert w.shape == (2, 3, 7)  # (B, T_q, T_k)
    assert (w[1, :, 4:] == 0.0).all()
    tiled = tiled_attention(Q, K, V, block_size=3, mask=mask)
    assert tiled.shape == (2, 3, 5)
    np.testing.assert_allclose(tiled, out, **TOL64)


# =========================================================================== tiled_attention


@pytest.mark.parametrize("block_size", [1, 2, 3, 4, 7, 9, 10, 11, 100])
def test_tiled_equals_full_for_any_block_size(rng, block_size):
    Q, K, V = rng.normal(size=(10, 4)), rng.normal(size=(10, 4)), rng.normal(size=(10, 3))  # T = 10
    out, _ = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(tiled_attention(Q, K, V, block_size), out, **TOL64)


@pytest.mark.parametrize("block_size", [1, 3, 4, 6])
def test_tiled_with_causal_mask(rng, block_size):
    T = 10
    Q, K, V = rng.normal(size=(T, 4)), rng.normal(size=(T, 4)), rng.normal(size=(T, 3))
    out, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(T))
    tiled = tiled_attention(Q, K, V, block_size, mask=causal_mask(T))
    np.testing.assert_allclose(tiled, out, **TOL64)
    np.testing.assert_array_equal(tiled[0], V[0])  # token 0 sees only itself: its value, exactly


@pytest.mark.parametrize("block_size", [1, 2, 3, 5])
def test_tiled_row_whose_first_blocks_are_all_masked(rng, strict_fp, block_size):
    # Row i may attend to keys i..T-1 only: for late rows, every key of the first blocks is masked,
    # so the running max stays -inf there. The guard must keep NaN (and warnings) out.
    T = 7
    Q, K, V = rng.normal(size=(T, 3)), rng.normal(size=(T, 3)), rng.normal(size=(T, 2))
    mask = ~np.tri(T, k=-1, dtype=bool)  # (T, T) True on and above the diagonal
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    tiled = tiled_attention(Q, K, V, block_size, mask=mask)
    assert np.isfinite(tiled).all()
    np.testing.assert_allclose(tiled, out, **TOL64)
    np.testing.assert_array_equal(tiled[-1], V[-1])  # the last row sees only the last key


def test_tiled_with_padding_mask_and_batch_dims(rng):
    Q = rng.normal(size=(3, 2, 6, 4))  # (B, h, T_q, d_k)
    K = rng.normal(size=(3, 2, 6, 4))
    V = rng.normal(size=(3, 2, 6, 5))
    mask = padding_mask([6, 2, 5], 6)[:, None]  # (B, 1, 1, T): one mask for every head
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_allclose(tiled_attention(Q, K, V, 4, mask=mask), out, **TOL64)


def test_tiled_broadcasts_leading_dims_like_the_full_version(rng):
    Q = rng.normal(size=(2, 5, 3))  # (B, T_q, d_k)
    K = rng.normal(size=(7, 3))  # (T_k, d_k) shared
    V = rng.normal(size=(4, 1, 7, 2))  # more leading dims than Q
    mask = rng.random((4, 2, 5, 7)) < 0.5
    mask[..., 0] = True  # no empty rows
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    tiled = tiled_attention(Q, K, V, 3, mask=mask)
    assert tiled.shape == out.shape == (4, 2, 5, 2)
    np.testing.assert_allclose(tiled, out, **TOL64)


@st.composite
def attention_cases(draw):
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    T_q, T_k = draw(st.integers(1, 9)), draw(st.integers(1, 12))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    Q = draw(hnp.arrays(np.float64, (*lead, T_q, d_k), elements=floats(-3.0, 3.0)))
    K = draw(hnp.arrays(np.float64, (*lead, T_k, d_k), elements=floats(-3.0, 3.0)))
    V = draw(hnp.arrays(np.float64, (*lead, T_k, d_v), elements=floats(-3.0, 3.0)))
    kind = draw(st.sampled_from(["none", "causal", "padding", "random"]))
    if kind == "causal":
        mask = np.tri(T_q, T_k, k=max(T_k - T_q, 0), dtype=bool)  # (T_q, T_k), the last query sees all
    elif kind == "padding":
        lengths = draw(st.lists(st.integers(1, T_k), min_size=1, max_size=1))
        mask = padding_mask(lengths, T_k)[0]  # (1, T_k)
    elif kind == "random":
        mask = draw(hnp.arrays(bool, (*lead, T_q, T_k)))
        mask[..., draw(st.integers(0, T_k - 1))] = True  # one key every row may see
    else:
        mask = None
    block_size = draw(st.integers(1, T_k + 2))
    return Q, K, V, mask, block_size


@SETTINGS
@given(attention_cases())
def test_tiled_equals_full_property_float64(case):
    Q, K, V, mask, block_size = case
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_allclose(tiled_attention(Q, K, V, block_size, mask=mask), out, **TOL64)


@SETTINGS
@given(attention_cases())
def test_tiled_equals_full_property_float32(case):
    Q, K, V, mask, block_size = (a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype != bool else a
                                 for a in case)
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    tiled = tiled_attention(Q, K, V, block_size, mask=mask)
    assert tiled.dtype == np.float32
    np.testing.assert_allclose(tiled, out, **TOL32)


def test_tiled_large_scores_float32(strict_fp):
    # Integer entries with d_k = 4: every score is an integer below 2**24, exact in float32 in both
    # computations, so only exp and the sums round. Scores reach ~1e3: exp(88.8) already overflows
    # float32, so a naive exp would give inf.
    rng = np.random.default_rng(5)
    Q = rng.integers(-20, 21, size=(2, 9, 4)).astype(np.float32)
    K = rng.integers(-20, 21, size=(2, 11, 4)).astype(np.float32)
    V = rng.normal(size=(2, 11, 3)).astype(np.float32)
    scores = Q @ np.swapaxes(K, -1, -2)  # (2, 9, 11), scale 1.0 below
    assert np.abs(scores).max() > 500
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(scores)).any()  # what the online max-subtraction avoids
    out, _ = scaled_dot_product_attention(Q, K, V, scale=1.0)
    for block_size in (1, 3, 4, 11):
        tiled = tiled_attention(Q, K, V, block_size, scale=1.0)
        assert np.isfinite(tiled).all()
        np.testing.assert_allclose(tiled, out, **TOL32)


def test_tiled_extreme_float64_scores_beyond_the_cheap_bound():
    # Scores of ±1e300: finite, but too large for the cheap a-priori bound, so both versions look at
    # the scores themselves. The answer is exact: all weight on the largest score (+1e300 for both
    # queries: key 0 for query 0, key 1 for query 1).
    Q = np.array([[1e150, 0.0], [-1e150, 0.0]])  # (2, 2)
    K = np.array([[1e150, 0.0], [-1e150, 0.0], [0.0, 1.0]])  # (3, 2)
    V = np.array([[1.0], [2.0], [3.0]])
    out, _ = scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_array_equal(out, [[1.0], [2.0]])
    for block_size in (1, 2, 3):
        np.testing.assert_array_equal(tiled_attention(Q, K, V, block_size, scale=1.0), out)


def test_scores_near_the_float32_limit_are_accepted_and_just_over_refused(strict_fp):
    # 1.3e19² = 1.69e38 < float32 max 3.4e38: finite, accepted by both (the cheap bound 2 · 1.69e38
    # is too close to the limit, so both look at the scores). 2e19² = 4e38 overflows: refused by both.
    V = np.array([[1.0], [2.0]], dtype=np.float32)
    ok = np.array([[1.3e19, 0.0], [0.0, 1.0]], dtype=np.float32)  # (2, 2)
    out, _ = scaled_dot_product_attention(ok, ok, V)
    np.testing.assert_array_equal(tiled_attention(ok, ok, V, 1), out)
    np.testing.assert_array_equal(out[0], [1.0])  # query 0 puts all its weight on key 0
    over = np.array([[2e19, 0.0], [0.0, 1.0]], dtype=np.float32)
    for attend in (lambda: scaled_dot_product_attention(over, over, V), lambda: tiled_attention(over, over, V, 1)):
        with pytest.raises(ValueError, match=rx("scores Q Kᵀ overflow float32", "largest |Q| 2e+19")):
            attend()


def test_float16_with_a_wide_d_k_checks_the_scores_themselves(rng):
    # d_k = 300: d_k · eps(float16) > 1/4, so the cheap bound does not apply; the result is the same.
    Q, K, V = (rng.normal(size=(4, 300)).astype(np.float16) / 8 for _ in range(3))
    out, _ = scaled_dot_product_attention(Q, K, V)
    assert np.isfinite(out).all()
    # tolerance as in test_tiled_float16_keeps_dtype_and_agrees: 1e-2
    np.testing.assert_allclose(tiled_attention(Q, K, V, 3).astype(float), out.astype(float), rtol=0, atol=1e-2)


def test_tiled_float16_keeps_dtype_and_agrees(rng):
    Q, K, V = (rng.normal(size=(5, 4)).astype(np.float16) for _ in range(3))
    out, _ = scaled_dot_product_attention(Q, K, V)
    tiled = tiled_attention(Q, K, V, 2)
    assert tiled.dtype == np.float16
    # the full version rounds the weights to float16 before weights @ V, the tiled one does not:
    # a few float16 units (eps 9.8e-4) of outputs below 3 in size; tolerance 1e-2.
    np.testing.assert_allclose(tiled.astype(np.float64), out.astype(np.float64), rtol=0, atol=1e-2)


def test_tiled_overflow_only_under_masked_keys_is_allowed():
    Q = np.array([[1.0, 1.0], [1.0, 1.0]])  # (2, 2)
    K = np.array([[1.0, 1.0], [1e200, 1e200]])  # key 1 would overflow Q Kᵀ
    V = np.array([[3.0], [4.0]])
    for block_size in (1, 2):
        out = tiled_attention(Q, K, V, block_size, mask=np.array([True, False]))
        np.testing.assert_array_equal(out, [[3.0], [3.0]])


def test_tiled_leaves_its_inputs_alone(rng):
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    copies = [a.copy() for a in (Q, K, V)]
    tiled_attention(Q, K, V, 4, mask=causal_mask(6)[:4])
    for a, c in zip((Q, K, V), copies, strict=True):
        np.testing.assert_array_equal(a, c)


def _bad(**changes):
    args = {"Q": np.ones((3, 2)), "K": np.ones((4, 2)), "V": np.ones((4, 2)), "mask": None, "scale": None}
    args.update(changes)
    return args


def _nan_at(shape, where):
    a = np.ones(shape)
    a[where] = np.nan
    return a


BAD_INPUTS = {
    "Q and K widths": _bad(K=np.ones((4, 3))),
    "K and V lengths": _bad(V=np.ones((5, 2))),
    "Q 1-D": _bad(Q=np.ones(2)),
    "empty K": _bad(K=np.ones((0, 2))),
    "NaN in V": _bad(V=_nan_at((4, 2), (2, 1))),
    "inf in Q": _bad(Q=np.array([[1.0, np.inf], [0, 0], [0, 0]])),
    "bool Q": _bad(Q=np.ones((3, 2), dtype=bool)),
    "batch dims": _bad(Q=np.ones((2, 3, 2)), K=np.ones((3, 4, 2)), V=np.ones((3, 4, 2))),
    "scale 0": _bad(scale=0.0),
    "scale str": _bad(scale="0.5"),
    "mask shape": _bad(mask=np.ones((2, 4), dtype=bool)),
    "mask dtype": _bad(mask=np.ones((3, 4))),
    "fully masked row": _bad(mask=np.array([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=bool)),
    "scores overflow float64": _bad(Q=np.full((3, 2), 1e200), K=np.full((4, 2), 1e200)),
    "scores overflow float16": _bad(
        Q=np.full((3, 2), 300.0, dtype=np.float16),
        K=np.full((4, 2), 300.0, dtype=np.float16),
        V=np.ones((4, 2), dtype=np.float16),
    ),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_tiled_refuses_what_the_full_version_refuses_with_the_same_message(name, strict_fp):
    args = BAD_INPUTS[name]
    with pytest.raises((TypeError, ValueError)) as full:
        scaled_dot_product_attention(**args)
    with pytest.raises(full.type) as tiled:
        tiled_attention(args["Q"], args["K"], args["V"], 3, mask=args["mask"], scale=args["scale"])
    assert str(tiled.value) == str(full.value)


@pytest.mark.parametrize(
    ("block_size", "exc", "words"),
    [
        (0, ValueError, ("block_size must be at least 1", "got 0")),
        (-4, ValueError, ("block_size must be at least 1", "got -4")),
        (2.0, TypeError, ("block_size must be an integer", "2.0", "float")),
        (True, TypeError, ("block_size must be an integer", "True", "bool")),
        ("4", TypeError, ("block_size must be an integer", "'4'")),
        (None, TypeError, ("block_size must be an integer", "None")),
    ],
)
def test_tiled_bad_block_size(block_size, exc, words):
    with pytest.raises(exc, match=rx(*words)):
        tiled_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), block_size)


def test_tiled_block_larger_than_T_k_is_one_block(rng):
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    out, _ = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(tiled_attention(Q, K, V, np.int64(1000)), out, **TOL64)


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_tiled_peak_memory_is_a_fraction_of_the_full_version(rng):
    # T = 1024, d = 32, float64: the full version holds the (T, T) weights, 8 MiB; the tiled one holds
    # one (T, 64) block of scores (0.5 MiB) and a few (T, 32) arrays. Measured: ~16 % (the output,
    # which both return, is counted too). A version that formed the (T, T) scores would be >= 100 %.
    T, d, block_size = 1024, 32, 64
    Q, K, V = (rng.normal(size=(T, d)) for _ in range(3))
    full = _peak_bytes(lambda: scaled_dot_product_attention(Q, K, V))
    tiled = _peak_bytes(lambda: tiled_attention(Q, K, V, block_size))
    assert full >= T * T * 8  # the weights alone
    assert tiled < 0.25 * full, f"tiled peak {tiled / 2**20:.2f} MiB vs full {full / 2**20:.2f} MiB"


# ====================================================================== online_softmax_steps


@SETTINGS
@given(
    hnp.arrays(np.float64, st.integers(1, 20), elements=floats(-50.0, 50.0)),
    st.integers(1, 22),
)
def test_online_softmax_steps_final_equals_softmax(x, block_size):
    steps, weights = online_softmax_steps(x, block_size)
    # l is built by rescaled partial sums instead of one sum: at most ~2 roundings per block,
    # <= 20 blocks, so ~40 eps relative: rtol 1e-13; atol 1e-300 for weights that underflow.
    np.testing.assert_allclose(weights, softmax(x), rtol=1e-13, atol=1e-300)
    assert len(steps) == math.ceil(x.size / block_size)
    assert [s["start"] for s in steps] == list(range(0, x.size, block_size))
    assert steps[-1]["stop"] == x.size
    maxima = [s["running_max"] for s in steps]
    assert all(a <= b for a, b in zip(maxima, maxima[1:], strict=False))  # never decreases
    for s in steps:
        assert s["running_max"] == x[: s["stop"]].max()  # exactly the max of what was seen
        assert s["block_max"] == x[s["start"] : s["stop"]].max()
        assert 0.0 <= s["rescale"] <= 1.0
        assert (s["rescale"] == 1.0) or (s["block_max"] > max(x[: s["start"]], default=-np.inf))
    # the last running sum is sum(exp(x - max)) computed directly (same rounding argument: 1e-13)
    np.testing.assert_allclose(steps[-1]["running_sum"], np.exp(x - x.max()).sum(), rtol=1e-13)


def test_online_softmax_steps_worked_example():
    x = np.array([1.0, 3.0, 2.0, 5.0, 0.0])
    steps, weights = online_softmax_steps(x, 2)
    assert [(s["start"], s["stop"]) for s in steps] == [(0, 2), (2, 4), (4, 5)]
    assert [s["running_max"] for s in steps] == [3.0, 5.0, 5.0]
    # block 2 raises the max from 3 to 5: the old sum is multiplied by exp(3 - 5)
    assert steps[1]["rescale"] == math.exp(-2.0)
    assert steps[2]["rescale"] == 1.0  # the max did not change
    l1 = math.exp(1 - 3) + 1.0  # block 1 under its own max 3
    # float64 rounding of three terms: rtol 1e-15
    np.testing.assert_allclose(steps[0]["running_sum"], l1, rtol=1e-15)
    np.testing.assert_allclose(steps[1]["running_sum"], l1 * math.exp(-2.0) + math.exp(-3.0) + 1.0, rtol=1e-15)
    np.testing.assert_allclose(weights, softmax(x), rtol=1e-15, atol=0)


def test_online_softmax_steps_masked_first_block(strict_fp):
    # -inf entries are masked keys: a first block of only -inf keeps m = -inf without a NaN
    x = np.array([-np.inf, -np.inf, 2.0, 0.0])
    steps, weights = online_softmax_steps(x, 2)
    assert steps[0]["running_max"] == -np.inf
    assert steps[0]["running_sum"] == 0.0
    np.testing.assert_allclose(weights, softmax(x), rtol=1e-15, atol=0)
    assert weights[0] == weights[1] == 0.0


@pytest.mark.parametrize(
    ("x", "block_size", "exc", "words"),
    [
        (np.ones((2, 3)), 2, ValueError, ("x must be one row (1-D)", "shape (2, 3)")),
        (np.array([-np.inf, -np.inf]), 1, ValueError, ("x is -inf everywhere", "shape (2,)")),
        (np.array([1.0, np.nan]), 1, ValueError, ("x contains NaN", "(1,)")),
        (np.array([1.0, np.inf]), 1, ValueError, ("x contains +inf", "(1,)")),
        (np.array([True, False]), 1, TypeError, ("x must hold real numbers", "bool")),
        (np.array([]), 1, ValueError, ("x is empty",)),
        ([1.0, 2.0], 0, ValueError, ("block_size must be at least 1", "got 0")),
        ([1.0, 2.0], 1.0, TypeError, ("block_size must be an integer", "1.0")),
    ],
)
def test_online_softmax_steps_bad_input(x, block_size, exc, words):
    with pytest.raises(exc, match=rx(*words)):
        online_softmax_steps(x, block_size)
