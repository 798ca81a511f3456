"""Unit tests of every public function in helpers/attention.py.

Each bad input asserts the exception type and, through ``match``, that the message names the
argument and the shapes (or the offending value) the caller gave. Numeric checks state their
tolerance; "exact" means bit-for-bit equality.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from support import rx

from helpers.attention import (
    attention_steps,
    causal_mask,
    merge_heads,
    multi_head_attention,
    naive_softmax,
    project_qkv,
    scaled_dot_product_attention,
    self_attention,
    single_head_attention,
    softmax,
    split_heads,
    xavier_normal,
)

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
# Tolerance of "a row sums to 1" per dtype: a few units in the last place of 1.
ROW_SUM_ATOL = {np.float16: 4e-3, np.float32: 1e-6, np.float64: 1e-14}


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240101)


def qkv(rng, T_q=3, T_k=4, d_k=5, d_v=2, lead=()):
    Q = rng.normal(size=(*lead, T_q, d_k))  # (..., T_q, d_k)
    K = rng.normal(size=(*lead, T_k, d_k))  # (..., T_k, d_k)
    V = rng.normal(size=(*lead, T_k, d_v))  # (..., T_k, d_v)
    return Q, K, V


# =================================================================================== softmax


def test_softmax_known_values():
    # softmax([0, ln 2]) = [1/3, 2/3]; float64 rounding: atol 1e-15
    np.testing.assert_allclose(softmax([0.0, math.log(2.0)]), [1 / 3, 2 / 3], rtol=0, atol=1e-15)
    # equal scores -> equal weights, exactly
    np.testing.assert_array_equal(softmax([7.0, 7.0, 7.0, 7.0]), [0.25] * 4)


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        ([1e308, -1e308], [1.0, 0.0]),
        ([-1e308, 1e308], [0.0, 1.0]),
        ([1e308, 1e308], [0.5, 0.5]),
        ([-1e308, -1e308], [0.5, 0.5]),
        ([np.finfo(np.float64).max, -np.finfo(np.float64).max, 0.0], [1.0, 0.0, 0.0]),
        ([1000.0, 1000.0], [0.5, 0.5]),
        ([-1000.0, 0.0], [0.0, 1.0]),
    ],
)
def test_softmax_extreme_inputs_exact_and_silent(strict_fp, x, expected):
    # no RuntimeWarning, no floating-point exception, and the exact answer
    out = softmax(np.array(x))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, expected)


def test_softmax_extreme_inputs_2d_each_row(strict_fp):
    x = np.array([[1e308, -1e308], [-1e308, 1e308], [3.0, 3.0]])  # (3, 2)
    np.testing.assert_array_equal(softmax(x), [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])


def test_softmax_neg_inf_entries_weigh_exactly_zero(strict_fp):
    out = softmax(np.array([[0.0, -np.inf, 0.0], [-np.inf, 5.0, -np.inf]]))
    np.testing.assert_array_equal(out, [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax_keeps_float_dtype(dtype):
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]], dtype=dtype)
    out = softmax(x)
    assert out.dtype == dtype
    assert out.shape == x.shape
    np.testing.assert_allclose(out.sum(axis=-1).astype(np.float64), 1.0, rtol=0, atol=ROW_SUM_ATOL[dtype])
    # agrees with the float64 answer to the dtype's precision (3 units of its epsilon)
    ref = softmax(x.astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=0, atol=3 * float(np.finfo(dtype).eps))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_softmax_ints_are_computed_as_float64(dtype):
    x = np.array([1, 2, 3], dtype=dtype)
    out = softmax(x)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, softmax(np.array([1.0, 2.0, 3.0])))


def test_softmax_python_list_of_ints_is_float64():
    out = softmax([2, 4, 4])
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, [0.06337894, 0.46831053, 0.46831053], rtol=0, atol=1e-8)


def test_softmax_axis_argument():
    x = np.array([[1.0, 2.0], [3.0, 5.0], [0.0, 0.0]])  # (3, 2)
    np.testing.assert_array_equal(softmax(x, axis=0), softmax(x.T, axis=-1).T)
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(softmax(x, axis=1), softmax(x))


def test_softmax_does_not_modify_its_input():
    x = np.array([3.0, 1.0, -np.inf])
    before = x.copy()
    softmax(x)
    np.testing.assert_array_equal(x, before)


def test_softmax_float16_huge_range(strict_fp):
    out = softmax(np.array([60000.0, -60000.0], dtype=np.float16))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.array([1.0, 0.0], dtype=np.float16))


@pytest.mark.parametrize(
    ("x", "exc", "pattern"),
    [
        (
            np.array([[0.0, 1.0], [-np.inf, -np.inf]]),
            ValueError,
            rx("x has a row", "-inf", "index (1,)", "shape (2, 2)"),
        ),
        (np.array([-np.inf]), ValueError, rx("x", "-inf", "shape (1,)")),
        (np.array([1.0, np.nan]), ValueError, rx("x contains NaN", "(1,)", "shape (2,)")),
        (np.array([[1.0, np.inf]]), ValueError, rx("x contains +inf", "(0, 1)", "shape (1, 2)")),
        (np.array([]), ValueError, rx("x is empty", "shape (0,)")),
        (np.zeros((3, 0)), ValueError, rx("x is empty", "shape (3, 0)")),
        (np.float64(3.0), ValueError, rx("x must have at least 1 dimensions", "shape ()")),
        ("abc", TypeError, rx("x must be a numeric array", "str")),
        (np.array(["a", "b"]), TypeError, rx("x must hold real numbers", "<U1")),
        (np.array([1.0, None]), TypeError, rx("x must hold real numbers", "object")),
        (np.array([True, False]), TypeError, rx("x must hold real numbers", "bool")),
        (np.array([1j, 2.0]), TypeError, rx("x must hold real numbers", "complex128")),
        ([[1.0, 2.0], [3.0]], ValueError, rx("x must be a rectangular numeric array")),
    ],
)
def test_softmax_bad_input(x, exc, pattern):
    with pytest.raises(exc, match=pattern):
        softmax(x)


def test_softmax_bad_axis():
    with pytest.raises(ValueError, match=rx("axis 2", "out of range", "2 dimensions")):
        softmax(np.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match=rx("axis -3", "out of range", "2 dimensions")):
        softmax(np.ones((2, 3)), axis=-3)
    with pytest.raises(TypeError, match=rx("axis must be an integer", "0.5")):
        softmax(np.ones((2, 3)), axis=0.5)
    with pytest.raises(TypeError, match=rx("axis must be an integer", "True")):
        softmax(np.ones((2, 3)), axis=True)


# ============================================================================ naive_softmax


def test_naive_softmax_matches_stable_on_moderate_inputs():
    x = np.array([[1.0, 2.0, 3.0], [-5.0, 0.0, 5.0]])
    # both are a few float64 roundings from the truth: rtol 1e-14
    np.testing.assert_allclose(naive_softmax(x), softmax(x), rtol=1e-14, atol=0)


def test_naive_softmax_overflows_to_nan():
    # Its purpose: show the overflow the max-subtraction avoids. exp(1000) = inf, inf/inf = nan.
    with np.errstate(all="ignore"):
        out = naive_softmax(np.array([1000.0, 1000.0]))
    assert np.isnan(out).all()
    np.testing.assert_array_equal(softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])


def test_naive_softmax_overflow_warns():
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="warn", invalid="warn"):
        warnings.simplefilter("always")
        naive_softmax(np.array([1000.0, 1000.0]))
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert any("overflow" in m for m in messages), messages


def test_naive_softmax_float32_overflows_earlier():
    x = np.array([89.0, 89.0], dtype=np.float32)  # exp(89) > float32 max 3.4e38
    with np.errstate(all="ignore"):
        assert np.isnan(naive_softmax(x)).all()
    np.testing.assert_array_equal(softmax(x), np.array([0.5, 0.5], dtype=np.float32))


def test_naive_softmax_rejects_non_numeric():
    with pytest.raises(TypeError, match=rx("x must hold real numbers", "bool")):
        naive_softmax(np.array([True, False]))
    with pytest.raises(TypeError, match=rx("x must be a numeric array", "str")):
        naive_softmax("12")
    with pytest.raises(ValueError, match=rx("x must have at least 1 dimensions", "shape ()")):
        naive_softmax(1.0)


# ============================================================== scaled_dot_product_attention


def test_sdpa_matches_the_formula(rng):
    Q, K, V = qkv(rng)
    out, w = scaled_dot_product_attention(Q, K, V)
    s = Q @ K.T / math.sqrt(Q.shape[-1])  # (T_q, T_k)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w_ref = e / e.sum(axis=-1, keepdims=True)
    # the same float64 operations up to reordering: rtol 1e-13
    np.testing.assert_allclose(w, w_ref, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out, w_ref @ V, rtol=1e-13, atol=1e-15)
    assert out.shape == (3, 2)
    assert w.shape == (3, 4)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(out, w @ V)


def test_sdpa_scale_none_is_one_over_sqrt_dk(rng):
    Q, K, V = qkv(rng, d_k=9)
    out_none, w_none = scaled_dot_product_attention(Q, K, V)
    out_third, w_third = scaled_dot_product_attention(Q, K, V, scale=1 / 3)  # 1/sqrt(9)
    np.testing.assert_array_equal(w_none, w_third)
    np.testing.assert_array_equal(out_none, out_third)


def test_sdpa_scale_one_is_unscaled(rng):
    Q, K, V = qkv(rng, d_k=9)
    out, w = scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(w, softmax(Q @ K.T), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out, softmax(Q @ K.T) @ V, rtol=1e-13, atol=1e-15)
    _, w_scaled = scaled_dot_product_attention(Q, K, V)
    assert np.abs(w - w_scaled).max() > 1e-3  # scaling by 1/3 really changes the weights


def test_sdpa_integer_inputs_computed_as_float64():
    out, w = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]], scale=1.0)
    assert out.dtype == w.dtype == np.float64
    e = math.e
    np.testing.assert_allclose(w, [[e / (e + 1), 1 / (e + 1)]], rtol=1e-15)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_sdpa_keeps_float_dtype(rng, dtype):
    Q, K, V = (a.astype(dtype) for a in qkv(rng))
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.dtype == w.dtype == dtype
    np.testing.assert_allclose(w.sum(axis=-1).astype(np.float64), 1.0, rtol=0, atol=ROW_SUM_ATOL[dtype])


def test_sdpa_mixed_float_dtypes_promote(rng):
    Q, K, V = qkv(rng)
    out, w = scaled_dot_product_attention(Q.astype(np.float32), K.astype(np.float32), V)
    assert out.dtype == w.dtype == np.float64


def test_sdpa_mask_true_means_may_attend(rng):
    Q, K, V = qkv(rng, T_q=2, T_k=4)
    mask = np.array([[True, False, True, False], [False, False, False, True]])  # (T_q, T_k)
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert (w[~mask] == 0.0).all()  # masked keys: weight exactly 0
    assert (w[mask] > 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-15)
    # the visible keys get the softmax over the visible keys only
    s = Q @ K.T / math.sqrt(Q.shape[-1])  # (T_q, T_k)
    np.testing.assert_allclose(w[0, [0, 2]], softmax(s[0, [0, 2]]), rtol=1e-13)
    np.testing.assert_array_equal(w[1], [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(out[1], V[3])  # one visible key: its value, exactly


def test_sdpa_masked_keys_stay_at_zero_when_visible_scores_are_hugely_negative():
    # A "large negative number" mask (-1e9) would win here; a true mask must not.
    Q = np.array([[1e5, 0.0]])  # (1, 2)
    K = np.array([[-1e5, 0.0], [1e5, 0.0]])  # scores -1e10 (visible) and +1e10 (masked)
    V = np.array([[1.0], [2.0]])
    out, w = scaled_dot_product_attention(Q, K, V, mask=np.array([[True, False]]), scale=1.0)
    np.testing.assert_array_equal(w, [[1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0]])


def test_sdpa_causal_mask_row_zero_sees_only_itself(rng):
    T = 5
    Q, K, V = qkv(rng, T_q=T, T_k=T)
    out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(T))
    np.testing.assert_array_equal(w[0], [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(out[0], V[0])
    assert (w[np.triu_indices(T, k=1)] == 0.0).all()  # nothing above the diagonal: no peeking
    assert (w[np.tril_indices(T)] > 0).all()
    # the last row sees everything: equal to the unmasked last row
    _, w_full = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(w[-1], w_full[-1], rtol=1e-14)


def test_sdpa_key_padding_mask_broadcasts(rng):
    Q, K, V = qkv(rng, T_q=3, T_k=4)
    keep = np.array([True, True, False, True])  # (T_k,) broadcasts over the queries
    _, w = scaled_dot_product_attention(Q, K, V, mask=keep)
    assert (w[:, 2] == 0.0).all()
    _, w2 = scaled_dot_product_attention(Q, K, V, mask=np.tile(keep, (3, 1)))
    np.testing.assert_array_equal(w, w2)


def test_sdpa_mask_from_nested_list(rng):
    Q, K, V = qkv(rng, T_q=2, T_k=2)
    _, w = scaled_dot_product_attention(Q, K, V, mask=[[True, False], [True, True]])
    np.testing.assert_array_equal(w[0], [1.0, 0.0])


def test_sdpa_all_true_mask_changes_nothing(rng):
    Q, K, V = qkv(rng)
    out, w = scaled_dot_product_attention(Q, K, V)
    out_m, w_m = scaled_dot_product_attention(Q, K, V, mask=np.ones((3, 4), dtype=bool))
    np.testing.assert_array_equal(w, w_m)
    np.testing.assert_array_equal(out, out_m)


def test_sdpa_leading_batch_and_head_dims(rng):
    Q, K, V = qkv(rng, lead=(2, 3))  # (B=2, h=3, T, d)
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 3, 2)
    assert w.shape == (2, 3, 3, 4)
    for b in range(2):
        for h in range(3):
            o_bh, w_bh = scaled_dot_product_attention(Q[b, h], K[b, h], V[b, h])
            # batched and per-slice matmuls may sum in another order: rtol 1e-13
            np.testing.assert_allclose(w[b, h], w_bh, rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(out[b, h], o_bh, rtol=1e-13, atol=1e-15)


def test_sdpa_leading_dims_broadcast(rng):
    Q = rng.normal(size=(2, 3, 5))  # (B, T_q, d_k)
    K = rng.normal(size=(4, 5))  # (T_k, d_k) shared by the batch
    V = rng.normal(size=(4, 2))  # (T_k, d_v)
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 2)
    assert w.shape == (2, 3, 4)
    np.testing.assert_allclose(out[1], scaled_dot_product_attention(Q[1], K, V)[0], rtol=1e-13, atol=1e-15)


def test_sdpa_batched_mask(rng):
    Q, K, V = qkv(rng, T_q=3, T_k=3, lead=(2,))
    mask = np.stack([causal_mask(3), np.ones((3, 3), dtype=bool)])  # (B, T, T)
    _, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert (w[0][np.triu_indices(3, k=1)] == 0.0).all()
    assert (w[1] > 0).all()


def test_sdpa_overflow_only_in_masked_keys_is_allowed():
    Q = np.array([[1.0, 1.0], [1.0, 1.0]])  # (2, 2)
    K = np.array([[1.0, 1.0], [1e200, 1e200]])  # key 1 would overflow Q Kᵀ
    V = np.array([[3.0], [4.0]])
    out, w = scaled_dot_product_attention(Q, K, V, mask=np.array([True, False]))
    np.testing.assert_array_equal(w, [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(out, [[3.0], [3.0]])


def test_sdpa_returns_fresh_arrays_and_leaves_inputs(rng):
    Q, K, V = qkv(rng)
    copies = [a.copy() for a in (Q, K, V)]
    scaled_dot_product_attention(Q, K, V, mask=np.ones((3, 4), dtype=bool))
    for a, c in zip((Q, K, V), copies, strict=True):
        np.testing.assert_array_equal(a, c)


# ------------------------------------------------------------------ sdpa: bad input


def test_sdpa_q_k_inner_dims_differ():
    with pytest.raises(ValueError, match=rx("Q and K", "d_k", "Q has shape (3, 4)", "K has shape (3, 5)")):
        scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 2)))


def test_sdpa_k_v_lengths_differ():
    with pytest.raises(ValueError, match=rx("K and V", "K has shape (3, 4)", "V has shape (4, 2)")):
        scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones((4, 2)))


@pytest.mark.parametrize(
    ("which", "shape"),
    [("Q", (4,)), ("K", (4,)), ("V", (3,)), ("Q", ())],
)
def test_sdpa_wrong_number_of_dimensions(which, shape):
    args = {"Q": np.ones((3, 4)), "K": np.ones((3, 4)), "V": np.ones((3, 2))}
    args[which] = np.ones(shape)
    with pytest.raises(ValueError, match=rx(f"{which} must have at least 2 dimensions", f"shape {shape}")):
        scaled_dot_product_attention(args["Q"], args["K"], args["V"])


def test_sdpa_leading_dims_do_not_broadcast():
    with pytest.raises(
        ValueError, match=rx("leading", "Q (2, 3, 4)", "K (3, 3, 4)", "V (3, 3, 2)", "do not broadcast")
    ):
        scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 2)))


@pytest.mark.parametrize("mask_shape", [(2, 3), (4, 3), (2, 3, 4), (5,)])
def test_sdpa_mask_does_not_broadcast(mask_shape):
    with pytest.raises(ValueError, match=rx(f"mask has shape {mask_shape}", "(3, 4)")):
        scaled_dot_product_attention(
            np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 1)), mask=np.ones(mask_shape, bool)
        )


@pytest.mark.parametrize(
    ("mask", "dtype_name"),
    [(np.ones((3, 3), dtype=int), "int64"), (np.ones((3, 3)), "float64"), (np.array("abc"), "<U3")],
)
def test_sdpa_mask_not_bool(mask, dtype_name):
    with pytest.raises(TypeError, match=rx("mask must be a boolean array", dtype_name)):
        scaled_dot_product_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), mask=mask)


def test_sdpa_mask_ragged_names_mask():
    # a ragged nested list is a bad mask; the message must say it is the mask (not numpy's own words)
    with pytest.raises(ValueError, match=rx("mask")):
        scaled_dot_product_attention(
            np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask=[[True], [True, False]]
        )


def test_sdpa_query_row_with_every_key_masked():
    mask = np.array([[True, False, False], [False, False, False], [True, True, True]])
    with pytest.raises(ValueError, match=rx("mask leaves query 2 (counted from 1; NumPy row 1)", "every key masked")):
        scaled_dot_product_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), mask=mask)


def test_sdpa_fully_masked_row_in_batch_names_its_index():
    mask = np.ones((2, 3, 3), dtype=bool)
    mask[1, 2] = False
    with pytest.raises(ValueError, match=rx("query 3 (counted from 1; NumPy index (1, 2))", "every key masked")):
        scaled_dot_product_attention(np.ones((2, 3, 2)), np.ones((2, 3, 2)), np.ones((2, 3, 2)), mask=mask)


@pytest.mark.parametrize("which", ["Q", "K", "V"])
@pytest.mark.parametrize("shape", [(0, 4), (3, 0)])
def test_sdpa_empty_sequence(which, shape):
    args = {"Q": np.ones((3, 4)), "K": np.ones((3, 4)), "V": np.ones((3, 4))}
    args[which] = np.ones(shape)
    with pytest.raises(ValueError, match=rx(f"{which} is empty", f"shape {shape}")):
        scaled_dot_product_attention(args["Q"], args["K"], args["V"])


@pytest.mark.parametrize("which", ["Q", "K", "V"])
@pytest.mark.parametrize(
    ("bad", "exc", "words"),
    [
        (np.array([["a", "b"], ["c", "d"]]), TypeError, ("must hold real numbers", "<U1")),
        (np.array([[1.0, None], [2.0, 3.0]], dtype=object), TypeError, ("must hold real numbers", "object")),
        (np.ones((2, 2), dtype=bool), TypeError, ("must hold real numbers", "bool")),
        ("text", TypeError, ("must be a numeric array", "str")),
    ],
)
def test_sdpa_non_numeric(which, bad, exc, words):
    args = {"Q": np.ones((2, 2)), "K": np.ones((2, 2)), "V": np.ones((2, 2))}
    args[which] = bad
    with pytest.raises(exc, match=rx(which, *words)):
        scaled_dot_product_attention(args["Q"], args["K"], args["V"])


@pytest.mark.parametrize("which", ["Q", "K", "V"])
@pytest.mark.parametrize(
    ("value", "words"),
    [
        (np.nan, "contains NaN"),
        (np.inf, "contains an infinite value"),
        (-np.inf, "contains an infinite value"),
    ],
)
def test_sdpa_non_finite_inputs(which, value, words):
    args = {"Q": np.ones((2, 3)), "K": np.ones((2, 3)), "V": np.ones((2, 3))}
    args[which] = args[which].copy()
    args[which][1, 2] = value
    with pytest.raises(ValueError, match=rx(f"{which} {words}", "(1, 2)", "shape (2, 3)")):
        scaled_dot_product_attention(args["Q"], args["K"], args["V"])


@pytest.mark.parametrize(
    ("scale", "exc", "words"),
    [
        (0, ValueError, ("scale must be a finite number > 0", "got 0.0")),
        (0.0, ValueError, ("scale must be a finite number > 0", "got 0.0")),
        (-1.0, ValueError, ("scale must be a finite number > 0", "got -1.0")),
        (float("nan"), ValueError, ("scale must be a finite number > 0", "got nan")),
        (float("inf"), ValueError, ("scale must be a finite number > 0", "got inf")),
        ("0.5", TypeError, ("scale must be a real number or None", "'0.5'")),
        (True, TypeError, ("scale must be a real number or None", "True")),
        ([0.5], TypeError, ("scale must be a real number or None", "[0.5]")),
        (1j, TypeError, ("scale must be a real number or None", "1j")),
    ],
)
def test_sdpa_bad_scale(scale, exc, words):
    with pytest.raises(exc, match=rx(*words)):
        scaled_dot_product_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), scale=scale)


def test_sdpa_numpy_scalar_scale_accepted(rng):
    Q, K, V = qkv(rng)
    np.testing.assert_array_equal(
        scaled_dot_product_attention(Q, K, V, scale=np.float32(0.5))[1],
        scaled_dot_product_attention(Q, K, V, scale=0.5)[1],
    )


def test_sdpa_scores_overflow_float64():
    big = np.full((2, 2), 1e200)
    with pytest.raises(ValueError, match=rx("scores Q Kᵀ overflow float64", "|Q| 1e+200", "|K| 1e+200")):
        scaled_dot_product_attention(big, big, np.ones((2, 2)))


def test_sdpa_scores_overflow_float16():
    q = np.full((2, 2), 300.0, dtype=np.float16)  # 2 * 300² = 180000 > float16 max 65504
    with pytest.raises(ValueError, match=rx("overflow float16")):
        scaled_dot_product_attention(q, q, np.ones((2, 2), dtype=np.float16))


def test_sdpa_scores_overflow_through_scale():
    with pytest.raises(ValueError, match=rx("overflow float64")):
        scaled_dot_product_attention(
            np.full((2, 2), 1e10), np.full((2, 2), 1e10), np.ones((2, 2)), scale=1e300
        )


def test_sdpa_overflow_raises_no_warning(strict_fp):
    big = np.full((2, 2), 1e200)
    with pytest.raises(ValueError, match="overflow"):
        scaled_dot_product_attention(big, big, np.ones((2, 2)))


# ============================================================================ attention_steps


def test_attention_steps_intermediates_are_consistent(rng):
    Q, K, V = qkv(rng, T_q=4, T_k=4, d_k=4)
    steps = attention_steps(Q, K, V)
    assert list(steps) == ["scores", "scaled", "shifted", "exp", "row_sums", "weights", "output"]
    np.testing.assert_array_equal(steps["scores"], Q @ K.T)
    np.testing.assert_array_equal(steps["scaled"], steps["scores"] * 0.5)  # 1/sqrt(4), exact in binary
    np.testing.assert_array_equal(steps["shifted"].max(axis=-1), 0.0)
    np.testing.assert_array_equal(steps["exp"], np.exp(steps["shifted"]))
    np.testing.assert_array_equal(steps["exp"].max(axis=-1), 1.0)
    assert steps["row_sums"].shape == (4, 1)
    np.testing.assert_array_equal(steps["row_sums"], steps["exp"].sum(axis=-1, keepdims=True))
    # float64: exp / row_sums is the very division softmax does, bit for bit
    np.testing.assert_array_equal(steps["weights"], steps["exp"] / steps["row_sums"])
    out, w = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_array_equal(steps["weights"], w)
    np.testing.assert_array_equal(steps["output"], out)


def test_attention_steps_scale_argument(rng):
    Q, K, V = qkv(rng)
    steps = attention_steps(Q, K, V, scale=1.0)
    np.testing.assert_array_equal(steps["scaled"], steps["scores"])
    np.testing.assert_array_equal(steps["weights"], scaled_dot_product_attention(Q, K, V, scale=1.0)[1])


def test_attention_steps_integer_inputs():
    steps = attention_steps(
        [[1, 0, 2]], [[0, 1, 1], [4, 4, 0], [2, 3, 1]], [[1, 2, 3], [2, 8, 0], [2, 6, 3]], scale=1.0
    )
    np.testing.assert_array_equal(steps["scores"], [[2.0, 4.0, 4.0]])
    assert steps["scores"].dtype == np.float64


def test_attention_steps_bad_input():
    with pytest.raises(ValueError, match=rx("Q and K", "Q has shape (3, 4)", "K has shape (3, 5)")):
        attention_steps(np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=rx("scale must be a finite number > 0", "got 0.0")):
        attention_steps(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), scale=0)
    with pytest.raises(ValueError, match=rx("V contains NaN", "shape (2, 2)")):
        attention_steps(np.ones((2, 2)), np.ones((2, 2)), np.array([[1.0, np.nan], [0.0, 0.0]]))


# ============================================================================ self_attention


def test_self_attention_is_sdpa_of_x_with_itself(rng):
    X = rng.normal(size=(4, 3))
    out, w = self_attention(X)
    out_ref, w_ref = scaled_dot_product_attention(X, X, X)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_array_equal(w, w_ref)
    s = X @ X.T / math.sqrt(3)  # scale None: 1/sqrt(d) with d the width of X
    np.testing.assert_allclose(w, softmax(s), rtol=1e-13, atol=1e-15)


def test_self_attention_scale_and_batch(rng):
    X = rng.normal(size=(2, 4, 3))  # (B, T, d)
    out, w = self_attention(X, scale=1.0)
    assert out.shape == (2, 4, 3)
    assert w.shape == (2, 4, 4)
    np.testing.assert_allclose(w[1], softmax(X[1] @ X[1].T), rtol=1e-13, atol=1e-15)
    # X Xᵀ is symmetric, so the scores are; the weights are not (each row is normalised on its own)
    steps = attention_steps(X, X, X)
    np.testing.assert_array_equal(steps["scores"], np.swapaxes(steps["scores"], -1, -2))


@pytest.mark.parametrize(
    ("X", "exc", "pattern"),
    [
        (np.ones(3), ValueError, rx("X must have at least 2 dimensions", "shape (3,)")),
        (np.ones((0, 3)), ValueError, rx("X is empty", "shape (0, 3)")),
        (np.ones((3, 0)), ValueError, rx("X is empty", "shape (3, 0)")),
        (np.ones((2, 2), dtype=bool), TypeError, rx("X must hold real numbers", "bool")),
        ("tokens", TypeError, rx("X must be a numeric array", "str")),
        (np.array([[1.0, np.nan]]), ValueError, rx("X contains NaN", "shape (1, 2)")),
        (np.array([[1.0, np.inf]]), ValueError, rx("X contains an infinite value", "shape (1, 2)")),
    ],
)
def test_self_attention_bad_input(X, exc, pattern):
    with pytest.raises(exc, match=pattern):
        self_attention(X)


def test_self_attention_bad_scale():
    with pytest.raises(ValueError, match=rx("scale must be a finite number > 0", "-2.0")):
        self_attention(np.ones((2, 2)), scale=-2)


# =============================================================================== project_qkv


def test_project_qkv_is_three_matmuls(rng):
    X = rng.normal(size=(2, 5, 4))  # (B, T, d_in)
    W_q, W_k, W_v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 6))
    Q, K, V = project_qkv(X, W_q, W_k, W_v)
    assert (Q.shape, K.shape, V.shape) == ((2, 5, 3), (2, 5, 3), (2, 5, 6))
    np.testing.assert_array_equal(Q, X @ W_q)
    np.testing.assert_array_equal(K, X @ W_k)
    np.testing.assert_array_equal(V, X @ W_v)


def test_project_qkv_integers_exact():
    Q, K, V = project_qkv([[1, 2]], [[1, 0], [0, 1]], [[2, 0], [0, 2]], [[0, 1], [1, 0]])
    np.testing.assert_array_equal(Q, [[1.0, 2.0]])
    np.testing.assert_array_equal(K, [[2.0, 4.0]])
    np.testing.assert_array_equal(V, [[2.0, 1.0]])


@pytest.mark.parametrize("which", ["W_q", "W_k", "W_v"])
def test_project_qkv_weight_rows_must_match_x_features(which):
    good = np.ones((5, 3))
    args = {"W_q": good, "W_k": good, "W_v": good}
    args[which] = np.ones((4, 3))
    with pytest.raises(ValueError, match=rx(f"{which} has shape (4, 3) but X has 5 features", "(3, 5)")):
        project_qkv(np.ones((3, 5)), args["W_q"], args["W_k"], args["W_v"])


@pytest.mark.parametrize("which", ["W_q", "W_k", "W_v"])
@pytest.mark.parametrize("shape", [(5,), (5, 3, 1)])
def test_project_qkv_weight_must_be_2d(which, shape):
    good = np.ones((5, 3))
    args = {"W_q": good, "W_k": good, "W_v": good}
    args[which] = np.ones(shape)
    with pytest.raises(ValueError, match=rx(f"{which} must be a 2-D matrix", f"shape {shape}")):
        project_qkv(np.ones((3, 5)), args["W_q"], args["W_k"], args["W_v"])


@pytest.mark.parametrize("which", ["W_q", "W_k", "W_v"])
@pytest.mark.parametrize(
    ("value", "words"),
    [
        (np.nan, "contains NaN"),
        (np.inf, "contains an infinite value"),
        (-np.inf, "contains an infinite value"),
    ],
)
def test_project_qkv_non_finite_weights(which, value, words):
    good = np.ones((5, 3))
    args = {"W_q": good, "W_k": good, "W_v": good}
    args[which] = good.copy()
    args[which][4, 0] = value
    with pytest.raises(ValueError, match=rx(f"{which} {words}", "(4, 0)", "shape (5, 3)")):
        project_qkv(np.ones((3, 5)), args["W_q"], args["W_k"], args["W_v"])


@pytest.mark.parametrize(
    ("X", "exc", "pattern"),
    [
        (np.ones((3, 5), dtype=bool), TypeError, rx("X must hold real numbers", "bool")),
        (np.array([[1, None, 2, 3, 4]], dtype=object), TypeError, rx("X must hold real numbers", "object")),
        (np.full((1, 5), "a"), TypeError, rx("X must hold real numbers", "<U1")),
        ("hello", TypeError, rx("X must be a numeric array", "str")),
        (np.ones(5), ValueError, rx("X must have at least 2 dimensions", "shape (5,)")),
        (np.ones((0, 5)), ValueError, rx("X is empty", "shape (0, 5)")),
        (np.full((1, 5), np.nan), ValueError, rx("X contains NaN", "shape (1, 5)")),
    ],
)
def test_project_qkv_bad_x(X, exc, pattern):
    W = np.ones((5, 3))
    with pytest.raises(exc, match=pattern):
        project_qkv(X, W, W, W)


def test_project_qkv_bool_weight():
    with pytest.raises(TypeError, match=rx("W_k must hold real numbers", "bool")):
        project_qkv(np.ones((3, 5)), np.ones((5, 3)), np.ones((5, 3), dtype=bool), np.ones((5, 3)))


def test_projection_overflow_is_reported_without_warning(strict_fp):
    # X W_q overflows float64: a student must get a ValueError naming X and W_q (the arguments they
    # passed), not a RuntimeWarning from numpy nor a complaint about an internal "Q".
    X = np.full((2, 3), 1e200)
    W = np.full((3, 2), 1e200)
    with pytest.raises(ValueError, match=rx("overflow")) as info:
        single_head_attention(X, W, np.ones((3, 2)), np.ones((3, 2)))
    assert "X" in str(info.value) and "W_q" in str(info.value)


# ===================================================================== single_head_attention


def test_single_head_is_projection_then_sdpa(rng):
    X = rng.normal(size=(5, 4))
    W_q, W_k, W_v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    out, w = single_head_attention(X, W_q, W_k, W_v)
    out_ref, w_ref = scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_array_equal(w, w_ref)
    assert out.shape == (5, 2)
    assert w.shape == (5, 5)


def test_single_head_mask_and_scale(rng):
    X = rng.normal(size=(4, 4))
    W = rng.normal(size=(4, 4))
    out, w = single_head_attention(X, W, W, W, mask=causal_mask(4), scale=1.0)
    out_ref, w_ref = scaled_dot_product_attention(X @ W, X @ W, X @ W, mask=causal_mask(4), scale=1.0)
    np.testing.assert_array_equal(w, w_ref)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_array_equal(w[0], [1.0, 0.0, 0.0, 0.0])


def test_single_head_q_and_k_widths_differ():
    with pytest.raises(ValueError, match=rx("W_q has shape (5, 3) but W_k has shape (5, 2)", "d_k")):
        single_head_attention(np.ones((3, 5)), np.ones((5, 3)), np.ones((5, 2)), np.ones((5, 3)))


def test_single_head_bad_weight_rows():
    with pytest.raises(ValueError, match=rx("W_q has shape (4, 3) but X has 5 features")):
        single_head_attention(np.ones((3, 5)), np.ones((4, 3)), np.ones((5, 3)), np.ones((5, 3)))


def test_single_head_bad_mask_and_scale():
    W = np.ones((2, 2))
    with pytest.raises(ValueError, match=rx("mask has shape (2, 2)", "(3, 3)")):
        single_head_attention(np.ones((3, 2)), W, W, W, mask=np.ones((2, 2), bool))
    with pytest.raises(TypeError, match=rx("mask must be a boolean array", "int64")):
        single_head_attention(np.ones((3, 2)), W, W, W, mask=np.ones((3, 3), int))
    with pytest.raises(ValueError, match=rx("scale must be a finite number > 0", "nan")):
        single_head_attention(np.ones((3, 2)), W, W, W, scale=float("nan"))


# ================================================================= split_heads / merge_heads


def test_split_heads_small_example():
    x = np.arange(12.0).reshape(2, 6)  # (T=2, d_model=6)
    heads = split_heads(x, 3)
    assert heads.shape == (3, 2, 2)  # (h, T, d_head)
    for i in range(3):
        np.testing.assert_array_equal(heads[i], x[:, 2 * i : 2 * i + 2])  # head i = columns of block i
    np.testing.assert_array_equal(merge_heads(heads), x)


def test_split_heads_leading_dims():
    x = np.arange(2 * 3 * 4 * 8, dtype=float).reshape(2, 3, 4, 8)  # (B, C, T, d_model)
    heads = split_heads(x, 4)
    assert heads.shape == (2, 3, 4, 4, 2)  # (B, C, h, T, d_head)
    np.testing.assert_array_equal(heads[1, 2, 3], x[1, 2][:, 6:8])
    np.testing.assert_array_equal(merge_heads(heads), x)


def test_split_heads_one_head_adds_an_axis():
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(split_heads(x, 1), x[None])


def test_split_heads_accepts_numpy_int():
    assert split_heads(np.ones((3, 4)), np.int64(2)).shape == (2, 3, 2)


def test_merge_heads_shape():
    assert merge_heads(np.ones((5, 7, 3))).shape == (7, 15)
    assert merge_heads(np.ones((2, 5, 7, 3))).shape == (2, 7, 15)


def test_split_heads_not_divisible():
    with pytest.raises(
        ValueError,
        match=rx("(3, 5)", "hidden size 5", "is not a multiple of the number of attention heads", "2"),
    ):
        split_heads(np.ones((3, 5)), 2)


@pytest.mark.parametrize(
    ("n_heads", "exc", "words"),
    [
        (0, ValueError, ("n_heads must be at least 1", "got 0")),
        (-2, ValueError, ("n_heads must be at least 1", "got -2")),
        (2.0, TypeError, ("n_heads must be an integer", "2.0", "float")),
        ("2", TypeError, ("n_heads must be an integer", "'2'", "str")),
        (True, TypeError, ("n_heads must be an integer", "True", "bool")),
        (None, TypeError, ("n_heads must be an integer", "None")),
    ],
)
def test_split_heads_bad_n_heads(n_heads, exc, words):
    with pytest.raises(exc, match=rx(*words)):
        split_heads(np.ones((3, 4)), n_heads)


@pytest.mark.parametrize(
    ("x", "exc", "pattern"),
    [
        (np.ones(4), ValueError, rx("x must have at least 2 dimensions", "shape (4,)")),
        (np.ones((3, 4), dtype=bool), TypeError, rx("x must hold real numbers", "bool")),
        (np.ones((0, 4)), ValueError, rx("x is empty", "shape (0, 4)")),
    ],
)
def test_split_heads_bad_x(x, exc, pattern):
    with pytest.raises(exc, match=pattern):
        split_heads(x, 2)


@pytest.mark.parametrize(
    ("x", "exc", "pattern"),
    [
        (np.ones((3, 4)), ValueError, rx("x must have at least 3 dimensions", "shape (3, 4)")),
        ("abc", TypeError, rx("x must be a numeric array", "str")),
        (np.full((2, 2, 2), np.nan), ValueError, rx("x contains NaN", "shape (2, 2, 2)")),
    ],
)
def test_merge_heads_bad_x(x, exc, pattern):
    with pytest.raises(exc, match=pattern):
        merge_heads(x)


# ====================================================================== multi_head_attention


def _mha_weights(rng, d_in=6, d_model=8, d_v_model=None, d_out=5):
    d_v_model = d_model if d_v_model is None else d_v_model
    W_q = rng.normal(size=(d_in, d_model))
    W_k = rng.normal(size=(d_in, d_model))
    W_v = rng.normal(size=(d_in, d_v_model))
    W_o = rng.normal(size=(d_v_model, d_out))
    return W_q, W_k, W_v, W_o


def test_mha_shapes_with_and_without_w_o(rng):
    X = rng.normal(size=(2, 4, 6))  # (B, T, d_in)
    W_q, W_k, W_v, W_o = _mha_weights(rng)
    out, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=2, W_o=W_o)
    assert out.shape == (2, 4, 5)
    assert w.shape == (2, 2, 4, 4)  # (B, h, T, T)
    concat, w2 = multi_head_attention(X, W_q, W_k, W_v, n_heads=2)
    assert concat.shape == (2, 4, 8)
    np.testing.assert_array_equal(w, w2)
    np.testing.assert_array_equal(out, concat @ W_o)


def test_mha_w_o_none_returns_concatenated_heads(rng):
    X = rng.normal(size=(4, 6))
    W_q, W_k, W_v, _ = _mha_weights(rng)
    concat, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=4)
    for i in range(4):
        blk = slice(2 * i, 2 * i + 2)
        o_i, w_i = single_head_attention(X, W_q[:, blk], W_k[:, blk], W_v[:, blk])
        # batched over heads vs one head at a time: rtol 1e-12
        np.testing.assert_allclose(concat[:, blk], o_i, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(w[i], w_i, rtol=1e-12, atol=1e-14)


def test_mha_scales_by_head_width_not_model_width(rng):
    X = rng.normal(size=(4, 6))
    W_q, W_k, W_v, _ = _mha_weights(rng, d_model=8)
    _, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=2)  # d_head = 4
    blk = slice(0, 4)
    Q, K = X @ W_q[:, blk], X @ W_k[:, blk]
    np.testing.assert_allclose(w[0], softmax(Q @ K.T / 2.0), rtol=1e-12, atol=1e-14)  # 1/sqrt(4)
    wrong = softmax(Q @ K.T / math.sqrt(8))  # 1/sqrt(d_model): the classic bug
    assert np.abs(w[0] - wrong).max() > 1e-3


def test_mha_one_head_is_single_head(rng):
    X = rng.normal(size=(5, 6))
    W_q, W_k, W_v, _ = _mha_weights(rng)
    out, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=1)
    out_1, w_1 = single_head_attention(X, W_q, W_k, W_v)
    np.testing.assert_allclose(out, out_1, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(w[0], w_1, rtol=1e-13, atol=1e-15)


def test_mha_value_width_may_differ(rng):
    X = rng.normal(size=(3, 6))
    W_q, W_k, W_v, W_o = _mha_weights(rng, d_model=8, d_v_model=4, d_out=3)
    out, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=2, W_o=W_o)
    assert out.shape == (3, 3)
    assert w.shape == (2, 3, 3)


def test_mha_causal_mask_every_head(rng):
    X = rng.normal(size=(2, 5, 6))
    W_q, W_k, W_v, _ = _mha_weights(rng)
    _, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=4, mask=causal_mask(5))
    upper = np.triu(np.ones((5, 5), dtype=bool), k=1)
    assert (w[..., upper] == 0.0).all()
    np.testing.assert_array_equal(w[..., 0, :], np.broadcast_to([1.0, 0, 0, 0, 0], (2, 4, 5)))


def test_mha_per_batch_mask(rng):
    X = rng.normal(size=(2, 3, 6))
    W_q, W_k, W_v, _ = _mha_weights(rng)
    mask = np.stack([causal_mask(3), np.ones((3, 3), dtype=bool)])  # (B, T, T)
    _, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=2, mask=mask)
    upper = np.triu(np.ones((3, 3), dtype=bool), k=1)
    assert (w[0][..., upper] == 0.0).all()  # batch 0, every head: causal
    assert (w[1] > 0).all()  # batch 1: everything visible


@pytest.mark.parametrize(
    ("W_shapes", "n_heads", "words"),
    [
        (
            ((10, 16), (10, 16), (10, 16)),
            3,
            ("W_q", "(10, 16)", "hidden size 16", "is not a multiple of the number of attention heads", "3"),
        ),
        (
            ((10, 6), (10, 6), (10, 16)),
            3,
            ("W_v", "(10, 16)", "hidden size 16", "is not a multiple of the number of attention heads", "3"),
        ),
    ],
)
def test_mha_d_model_not_divisible(W_shapes, n_heads, words):
    Ws = [np.ones(s) for s in W_shapes]
    with pytest.raises(ValueError, match=rx(*words)):
        multi_head_attention(np.ones((3, 10)), *Ws, n_heads=n_heads)


@pytest.mark.parametrize(
    ("n_heads", "exc", "words"),
    [
        (0, ValueError, ("n_heads must be at least 1", "got 0")),
        (-1, ValueError, ("n_heads must be at least 1", "got -1")),
        (2.0, TypeError, ("n_heads must be an integer", "2.0")),
        (2.5, TypeError, ("n_heads must be an integer", "2.5")),
        ("2", TypeError, ("n_heads must be an integer", "'2'")),
        (None, TypeError, ("n_heads must be an integer", "None")),
    ],
)
def test_mha_bad_n_heads(n_heads, exc, words):
    W = np.ones((4, 4))
    with pytest.raises(exc, match=rx(*words)):
        multi_head_attention(np.ones((3, 4)), W, W, W, n_heads=n_heads)


@pytest.mark.parametrize(
    ("W_o", "exc", "pattern"),
    [
        (np.ones((8, 3)), ValueError, rx("W_o has shape (8, 3)", "16 columns", "(16, d_out)")),
        (np.ones(16), ValueError, rx("W_o has shape (16,)", "16 columns")),
        (np.ones((16, 3, 1)), ValueError, rx("W_o has shape (16, 3, 1)", "16 columns")),
        (np.full((16, 3), np.nan), ValueError, rx("W_o contains NaN", "shape (16, 3)")),
        (np.ones((16, 3), dtype=bool), TypeError, rx("W_o must hold real numbers", "bool")),
    ],
)
def test_mha_bad_w_o(W_o, exc, pattern):
    W = np.ones((10, 16))
    with pytest.raises(exc, match=pattern):
        multi_head_attention(np.ones((3, 10)), W, W, W, n_heads=2, W_o=W_o)


def test_mha_output_projection_overflow_is_reported(strict_fp):
    # concat @ W_o overflows float64: the output would be inf. It must be a ValueError naming W_o.
    X = np.ones((2, 4))
    W = np.eye(4)
    W_o = np.full((4, 2), 1e308)
    with pytest.raises(ValueError, match=rx("W_o", "overflow")):
        multi_head_attention(X * 10.0, W, W, W, n_heads=2, W_o=W_o)


def test_mha_q_and_k_widths_differ():
    with pytest.raises(ValueError, match=rx("W_q has shape (4, 4) but W_k has shape (4, 2)")):
        multi_head_attention(np.ones((3, 4)), np.ones((4, 4)), np.ones((4, 2)), np.ones((4, 4)), n_heads=2)


def test_mha_bad_weight_rows_and_x():
    W = np.ones((4, 4))
    with pytest.raises(ValueError, match=rx("W_k has shape (3, 4) but X has 4 features")):
        multi_head_attention(np.ones((3, 4)), W, np.ones((3, 4)), W, n_heads=2)
    with pytest.raises(ValueError, match=rx("X must have at least 2 dimensions", "shape (4,)")):
        multi_head_attention(np.ones(4), W, W, W, n_heads=2)
    with pytest.raises(TypeError, match=rx("X must hold real numbers", "bool")):
        multi_head_attention(np.ones((3, 4), dtype=bool), W, W, W, n_heads=2)


def test_mha_mask_does_not_broadcast():
    W = np.ones((4, 4))
    with pytest.raises(ValueError, match=rx("mask has shape (4, 4)", "(3, 3)", "X with shape (3, 4)")):
        multi_head_attention(np.ones((3, 4)), W, W, W, n_heads=2, mask=causal_mask(4))


def test_mha_batched_mask_message_names_the_callers_shape():
    # The message must show the shape the caller passed, (5, 3, 3), not an internal (5, 1, 3, 3).
    W = np.ones((4, 4))
    with pytest.raises(ValueError, match=rx("mask has shape (5, 3, 3)")):
        multi_head_attention(np.ones((4, 3, 4)), W, W, W, n_heads=2, mask=np.ones((5, 3, 3), dtype=bool))


def test_mha_mask_not_bool():
    W = np.ones((4, 4))
    with pytest.raises(TypeError, match=rx("mask must be a boolean array", "float64")):
        multi_head_attention(np.ones((3, 4)), W, W, W, n_heads=2, mask=np.ones((3, 3)))


# ============================================================================== causal_mask


def test_causal_mask_largest_T_is_far_above_the_notebooks():
    from helpers.attention import MAX_T

    assert MAX_T == 32_768 >= 8 * 4096  # notebook 08 measures attention up to T = 4,096
    m = causal_mask(2048)  # (T, T), the same as np.tril of ones
    np.testing.assert_array_equal(m, np.tril(np.ones((2048, 2048), dtype=bool)))


def test_causal_mask_values():
    m = causal_mask(4)
    assert m.dtype == bool
    assert m.shape == (4, 4)
    expected = np.array(
        [
            [1, 0, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 0],
            [1, 1, 1, 1],
        ],
        dtype=bool,
    )
    np.testing.assert_array_equal(m, expected)
    np.testing.assert_array_equal(causal_mask(1), [[True]])
    assert causal_mask(np.int64(3)).shape == (3, 3)


@pytest.mark.parametrize(
    ("T", "exc", "words"),
    [
        (0, ValueError, ("T must be at least 1", "got 0")),
        (-3, ValueError, ("T must be at least 1", "got -3")),
        (2.0, TypeError, ("T must be an integer", "2.0")),
        ("3", TypeError, ("T must be an integer", "'3'")),
        (True, TypeError, ("T must be an integer", "True")),
        (None, TypeError, ("T must be an integer", "None")),
        # a typo must not end in a raw MemoryError: the limit and the bytes it would have taken
        (10**6, ValueError, ("T = 1,000,000 is too large", "(T, T) boolean mask would take 1,000,000,000,000 bytes",
                             "(931 GiB)", "causal_mask accepts T up to 32,768")),
        (32_769, ValueError, ("T = 32,769 is too large", "1,073,807,361 bytes")),
    ],
)
def test_causal_mask_bad_T(T, exc, words):
    with pytest.raises(exc, match=rx(*words)):
        causal_mask(T)


# ============================================================================= xavier_normal


def test_xavier_shape_and_dtype():
    W = xavier_normal(3, 2, np.random.default_rng(0))
    assert W.shape == (3, 2)
    assert W.dtype == np.float64


def test_xavier_std_statistically():
    n_in, n_out = 300, 200  # 60 000 draws
    W = xavier_normal(n_in, n_out, np.random.default_rng(12345))
    std = math.sqrt(2.0 / (n_in + n_out))  # 0.0632
    n = W.size
    # standard errors: of the sample std ≈ std/sqrt(2n) (0.29 %), of the mean std/sqrt(n).
    # Tolerance: 5 standard errors (a false failure has probability < 1e-6); the seed is fixed.
    assert abs(W.std() / std - 1.0) < 5 / math.sqrt(2 * n)
    assert abs(W.mean()) < 5 * std / math.sqrt(n)
    # and a wrong formula would be caught: sqrt(1/(n_in+n_out)) or sqrt(2/n_in) are > 10 SE away
    assert abs(W.std() / math.sqrt(1.0 / (n_in + n_out)) - 1.0) > 0.1
    assert abs(W.std() / math.sqrt(2.0 / n_in) - 1.0) > 0.1


def test_xavier_same_seed_same_weights():
    a = xavier_normal(4, 3, np.random.default_rng(7))
    b = xavier_normal(4, 3, np.random.default_rng(7))
    c = xavier_normal(4, 3, np.random.default_rng(8))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_xavier_advances_the_generator():
    rng = np.random.default_rng(7)
    a = xavier_normal(4, 3, rng)
    b = xavier_normal(4, 3, rng)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize(
    ("rng_arg", "type_name"),
    [
        (None, "NoneType"),
        (0, "int"),
        (np.random.RandomState(0), "RandomState"),  # noqa: NPY002  the legacy API is the bad input
        (np.random.default_rng(0).bit_generator, "PCG64"),
    ],
)
def test_xavier_bad_rng(rng_arg, type_name):
    with pytest.raises(TypeError, match=rx("rng must be a numpy Generator", "default_rng", type_name)):
        xavier_normal(3, 2, rng_arg)


@pytest.mark.parametrize(
    ("n_in", "n_out", "exc", "words"),
    [
        (0, 2, ValueError, ("n_in must be at least 1", "got 0")),
        (3, -1, ValueError, ("n_out must be at least 1", "got -1")),
        (3.0, 2, TypeError, ("n_in must be an integer", "3.0")),
        (3, "2", TypeError, ("n_out must be an integer", "'2'")),
        (None, 2, TypeError, ("n_in must be an integer", "None")),
        (10**6, 10**6, ValueError, ("n_in = 1,000,000 and n_out = 1,000,000 are too large",
                                    "would take 8,000,000,000,000 bytes (7.28 TiB)", "at most 134,217,728 numbers")),
        (2**27 + 1, 1, ValueError, ("n_in = 134,217,729 and n_out = 1 are too large",)),
    ],
)
def test_xavier_bad_sizes(n_in, n_out, exc, words):
    with pytest.raises(exc, match=rx(*words)):
        xavier_normal(n_in, n_out, np.random.default_rng(0))
