"""Tests of helpers.numerics (float limits, log-sum-exp, mask sentinels) and the notebook 03 checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from helpers import examples, naive_softmax, softmax
from helpers.checks import nb03
from helpers.numerics import (
    FLOAT_TYPES,
    SentinelResult,
    call_catching_warnings,
    compare_mask_sentinels,
    exp_limits,
    float_class,
    format_sentinel_table,
    log_softmax,
    logsumexp,
    naive_vs_stable,
    score_spread,
)

# --------------------------------------------------------------------------- exp_limits


def _exp(dtype, x):
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(np.dtype(dtype).type(x))


def _up(dtype, x):
    t = np.dtype(dtype).type
    return np.nextafter(t(x), t(np.inf))


def _down(dtype, x):
    t = np.dtype(dtype).type
    return np.nextafter(t(x), t(-np.inf))


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=lambda t: np.dtype(t).name)
def test_exp_limits_are_the_exact_last_floats(dtype):
    lim = exp_limits(dtype)
    tiny = np.finfo(dtype).tiny
    assert lim.dtype == np.dtype(dtype).name
    assert np.isfinite(_exp(dtype, lim.max_finite)) and np.isinf(_exp(dtype, _up(dtype, lim.max_finite)))
    assert _exp(dtype, lim.min_normal) >= tiny > _exp(dtype, _down(dtype, lim.min_normal))
    assert _exp(dtype, lim.min_nonzero) > 0 and _exp(dtype, _down(dtype, lim.min_nonzero)) == 0
    # each value is representable in its own type
    for v in lim[1:]:
        assert float(np.dtype(dtype).type(v)) == v


@pytest.mark.parametrize(
    ("dtype", "top", "normal", "zero"),
    [(np.float16, 11.09, -9.70, -17.33), (np.float32, 88.72, -87.34, -103.97), (np.float64, 709.78, -708.40, -745.13)],
)
def test_exp_limits_match_the_known_values_to_two_decimals(dtype, top, normal, zero):
    lim = exp_limits(dtype)
    assert lim.max_finite == pytest.approx(top, abs=0.01)
    assert lim.min_normal == pytest.approx(normal, abs=0.01)
    assert lim.min_nonzero == pytest.approx(zero, abs=0.01)


def test_exp_limits_rejects_non_float_types():
    with pytest.raises(TypeError, match="dtype"):
        exp_limits(np.int32)
    with pytest.raises(TypeError, match="dtype"):
        exp_limits("not a type")


def test_float_class_places_text_000_weights_on_the_scale():
    normal, subnormal = examples.T000_F2_WEIGHTS[0, 3], examples.T000_F2_WEIGHTS[4, 3]  # 1.677e-200, 2.476e-312
    assert float_class(normal) == "normal"
    assert float_class(subnormal) == "subnormal"
    assert float_class(normal, np.float32) == "zero"
    assert float_class(1e5, np.float16) == "inf"
    assert float_class(0.0) == "zero"
    assert float_class(math.nan) == "nan"
    assert float_class(-1e-40, np.float32) == "subnormal"
    with pytest.raises(TypeError):
        float_class("1e-300")
    with pytest.raises(TypeError):
        float_class(np.array([1.0, 2.0]))


def test_text_000_tiny_weights_are_exp_of_the_shifted_scores():
    # The exponents -460, -564 and -717.5 of text 000 formula 2 sit on either side of float64's normal range.
    lim = exp_limits(np.float64)
    shifted = examples.T000_F2_SHIFTED_SCORES
    assert lim.min_normal < shifted[0, 3] and lim.min_normal < shifted[1, 3]
    assert lim.min_nonzero < shifted[4, 3] < lim.min_normal
    w = softmax(examples.T000_F2_SCORES)
    np.testing.assert_allclose(w[[0, 1, 4], 3], examples.T000_F2_WEIGHTS[[0, 1, 4], 3], rtol=1e-8)


# --------------------------------------------------------------------------- logsumexp / log_softmax

moderate = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)),
                  elements=st.floats(-50, 50, allow_nan=False, allow_infinity=False))


@settings(max_examples=60, deadline=None)
@given(moderate, st.floats(-1e4, 1e4))
def test_logsumexp_matches_the_naive_formula_and_shifts(x, c):
    np.testing.assert_allclose(logsumexp(x), np.log(np.sum(np.exp(x), axis=-1)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(logsumexp(x + c), logsumexp(x) + c, rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(moderate, st.floats(-1e5, 1e5))
def test_log_softmax_is_log_of_softmax_and_shift_invariant(x, c):
    np.testing.assert_allclose(np.exp(log_softmax(x)), softmax(x), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(log_softmax(x + c), log_softmax(x), atol=1e-6)


def test_logsumexp_of_huge_scores_is_finite_and_exact():
    row = nb03.LSE_ROW  # [500, 1000, 1000]
    assert float(logsumexp(row)) == pytest.approx(1000 + math.log(2), rel=1e-15)
    with np.errstate(over="ignore"):
        assert np.isinf(np.log(np.sum(np.exp(row))))  # what the naive formula gives


def test_logsumexp_handles_minus_inf_axes_keepdims_and_dtypes():
    x = np.array([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf]])
    out = logsumexp(x)
    assert out[0] == pytest.approx(math.log(2)) and np.isneginf(out[1])
    assert logsumexp(x, keepdims=True).shape == (2, 1)
    assert logsumexp(np.ones((2, 3, 4)), axis=1).shape == (2, 4)
    assert logsumexp(np.ones((2, 3)), axis=0) == pytest.approx(np.full(3, 1 + math.log(2)))
    h = logsumexp(np.array([10.0, 11.0, 12.0], dtype=np.float16))
    assert h.dtype == np.float16 and np.isfinite(h)  # exp(12) alone overflows float16
    assert logsumexp([1, 2, 3]).dtype == np.float64


@pytest.mark.parametrize(
    ("bad", "error", "pattern"),
    [
        ([1.0, np.nan], ValueError, "NaN"),
        ([1.0, np.inf], ValueError, r"\+inf"),
        ("abc", TypeError, "x"),
        (np.zeros((2, 0)), ValueError, "empty"),
        (np.array([True, False]), TypeError, "bool"),
    ],
)
def test_logsumexp_rejects_bad_input_naming_x(bad, error, pattern):
    with pytest.raises(error, match=pattern):
        logsumexp(bad)


def test_logsumexp_rejects_a_bad_axis():
    with pytest.raises(ValueError, match="axis 2"):
        logsumexp(np.ones((2, 3)), axis=2)


def test_log_softmax_refuses_a_fully_masked_row():
    with pytest.raises(ValueError, match="every entry is -inf"):
        log_softmax(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))
    np.testing.assert_array_equal(log_softmax(np.array([0.0, -np.inf]))[1], -np.inf)


# --------------------------------------------------------------------------- warnings and the sweep


def test_call_catching_warnings_records_without_printing():
    x = np.array([[1000.0, 1.0]])
    with warnings.catch_warnings(record=True) as outer, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        result, messages = call_catching_warnings(naive_softmax, x)
        result2, messages2 = call_catching_warnings(naive_softmax, x)  # recorded again, not "once"
    assert outer == []  # nothing escaped
    assert np.isnan(result[0, 0]) and np.isnan(result2[0, 0])
    assert messages == messages2 == [
        "RuntimeWarning: overflow encountered in exp",
        "RuntimeWarning: invalid value encountered in divide",
    ]
    _, none = call_catching_warnings(softmax, x)
    assert none == []
    with pytest.raises(TypeError, match="callable"):
        call_catching_warnings(3)


def test_naive_vs_stable_agree_until_exp_or_its_sum_overflows():
    base = examples.T003_SCORES
    top = exp_limits(np.float64).max_finite
    rows = naive_vs_stable(base, [0.5, 1, 10, 50, 76, 77, 100])
    for r in rows:
        assert r.naive_finite == (r.largest <= top)
        if r.naive_finite:
            assert r.naive_sums_to_1 and r.max_abs_diff < 1e-15
        else:
            assert math.isnan(r.max_abs_diff)
    # float16: at 1.2 every exp is finite but their sum overflows, so the naive rows are 0, not 1
    (r,) = naive_vs_stable(base, [1.2], np.float16)
    assert r.naive_finite and not r.naive_sums_to_1 and r.max_abs_diff > 0.5
    with pytest.raises(ValueError, match="magnitudes"):
        naive_vs_stable(base, [math.inf])
    with pytest.raises(ValueError, match="does not fit"):
        naive_vs_stable(base, [1e4], np.float16)


def test_score_spread_grows_with_magnitude_and_d_k_and_scaling_removes_d_k():
    small = score_spread(1.0, 4, np.random.default_rng(0), T=128)
    wide = score_spread(1.0, 1024, np.random.default_rng(0), T=128)
    big = score_spread(10.0, 64, np.random.default_rng(0), T=128)
    assert wide["std"] / wide["std_scaled"] == pytest.approx(32.0)
    assert wide["std"] > 10 * small["std"]  # ≈ √(1024/4) = 16 times
    assert wide["std_scaled"] == pytest.approx(1.0, rel=0.1) and small["std_scaled"] == pytest.approx(1.0, rel=0.1)
    assert big["std_scaled"] == pytest.approx(100.0, rel=0.1)  # magnitude² survives the scaling
    assert big["max_abs_scaled"] >= big["std_scaled"]
    with pytest.raises(TypeError, match="rng"):
        score_spread(1.0, 4, 0)
    with pytest.raises(ValueError, match="d_k"):
        score_spread(1.0, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="magnitude"):
        score_spread(-1.0, 4, np.random.default_rng(0))


# --------------------------------------------------------------------------- mask sentinels

SCORES = examples.T001_Q @ examples.T001_K.T  # (3, 3) text 001/004's unscaled scores
KEEP = np.array([[False, False, False], [False, True, False], [False, True, True]])  # row 0 fully masked


def _by(results):
    return {(r.dtype, r.sentinel): r for r in results}


def test_sentinels_cast_masked_weight_and_fully_masked_rows():
    res = _by(compare_mask_sentinels(SCORES, KEEP))
    assert len(res) == 8
    assert np.isneginf(res["float16", -1e9].stored) and np.isneginf(res["float16", -1e6].stored)
    assert res["float16", -1e4].stored == -1e4 and res["float32", -1e9].stored == -1e9
    for r in res.values():
        assert r.masked_weight == 0.0  # the scores are far above every sentinel
        if np.isneginf(r.stored):
            assert np.isnan(r.full_row).all()
        else:
            np.testing.assert_allclose(r.full_row, 1 / 3, rtol=1e-3)  # a finite sentinel: uniform, no nan


def test_a_finite_sentinel_leaks_when_the_scores_come_near_it():
    res = _by(compare_mask_sentinels(SCORES - 1e4, KEEP))
    assert res["float32", -1e4].masked_weight > 0
    assert res["float16", -1e4].masked_weight > 0
    assert res["float32", -np.inf].masked_weight == 0.0 and res["float32", -1e9].masked_weight == 0.0


def test_sentinels_with_no_fully_masked_row_and_bad_input():
    (r,) = compare_mask_sentinels(SCORES, np.ones((3, 3), bool), sentinels=(-np.inf,), dtypes=(np.float64,))
    assert r.full_row is None and math.isnan(r.masked_weight)
    with pytest.raises(TypeError, match="keep"):
        compare_mask_sentinels(SCORES, np.ones((3, 3)))
    with pytest.raises(ValueError, match="keep has shape"):
        compare_mask_sentinels(SCORES, np.ones((3, 2), bool))
    with pytest.raises(ValueError, match="negative"):
        compare_mask_sentinels(SCORES, KEEP, sentinels=(1e9,))
    with pytest.raises(ValueError, match="do not fit"):
        compare_mask_sentinels(SCORES * 1e5, KEEP)
    with pytest.raises(TypeError, match="dtypes"):
        compare_mask_sentinels(SCORES, KEEP, dtypes=(np.int64,))


def test_format_sentinel_table_has_one_line_per_result():
    results = compare_mask_sentinels(SCORES, KEEP)
    text = format_sentinel_table(results)
    lines = text.splitlines()
    assert len(lines) == 1 + len(results)
    assert "nan in every weight" in lines[2] and "uniform" in lines[4]
    with pytest.raises(TypeError):
        format_sentinel_table([])
    assert isinstance(results[0], SentinelResult)


# --------------------------------------------------------------------------- notebook 03 checks


def _stable(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def test_check_stable_softmax_accepts_a_correct_function(capsys):
    assert nb03.check_stable_softmax(_stable)
    assert capsys.readouterr().out.startswith("✅ stable softmax: correct")


@pytest.mark.parametrize(
    ("func", "phrase"),
    [
        (None, "Not answered yet"),
        (lambda x: None, "Not answered yet"),
        (lambda x: np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True), "naive softmax"),
        (lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.min(-1, keepdims=True))), "minimum"),
        (lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.max())), "global maximum"),
        (lambda x: (lambda e: e / e.sum(0, keepdims=True))(np.exp(x - x.max(0, keepdims=True))), "axis 0"),
        (lambda x: (lambda e: e / e.sum(1, keepdims=True))(np.exp(x - x.max(1, keepdims=True))), "axis=1"),
        (lambda x: np.exp(x - x.max(-1)), "keepdims"),
        (lambda x: 1 / 0, "ZeroDivisionError"),
        (lambda x: "nope", "array of real numbers"),
    ],
)
def test_check_stable_softmax_diagnoses_mistakes_without_raising(func, phrase, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning leaking out of the check would fail here
        assert not nb03.check_stable_softmax(func)
    out = capsys.readouterr().out
    assert out.startswith("❌ stable softmax:") and phrase in out


def test_check_largest_safe_x():
    top = exp_limits(np.float32).max_finite
    assert nb03.check_largest_safe_x(top)
    assert nb03.check_largest_safe_x(np.float32(top))
    assert not nb03.check_largest_safe_x(np.log(np.finfo(np.float32).max))  # rounds one float32 too far
    assert not nb03.check_largest_safe_x(88.72)
    assert not nb03.check_largest_safe_x(None)
    assert not nb03.check_largest_safe_x("x")
    assert not nb03.check_largest_safe_x(math.inf)
    assert nb03.check_largest_safe_x(exp_limits(np.float16).max_finite, np.float16)


def test_check_largest_safe_x_names_the_mistake(capsys):
    nb03.check_largest_safe_x(exp_limits(np.float64).max_finite)
    assert "limit for float64" in capsys.readouterr().out
    nb03.check_largest_safe_x(float(np.finfo(np.float32).max))
    assert "natural log" in capsys.readouterr().out


def test_check_logsumexp(capsys):
    assert nb03.check_logsumexp(1000 + math.log(2))
    assert not nb03.check_logsumexp(None)
    assert "Not answered yet" in capsys.readouterr().out
    assert not nb03.check_logsumexp(np.inf)
    assert "overflows" in capsys.readouterr().out
    assert not nb03.check_logsumexp(1000.0)
    assert "max(row)" in capsys.readouterr().out


# --------------------------------------------------------------------------- bad input: a message naming the argument

_X = examples.T003_SCORES


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # naive_vs_stable: magnitudes that are not a list of numbers (were "'NoneType' object is not iterable" ...)
        (lambda: naive_vs_stable(_X, None), TypeError,
         "magnitudes must be a list of finite numbers such as [1, 10, 100], got None (NoneType)"),
        (lambda: naive_vs_stable(_X, 0), TypeError,
         "magnitudes must be a list of finite numbers such as [1, 10, 100], got 0 (int)"),
        (lambda: naive_vs_stable(_X, True), TypeError,
         "magnitudes must be a list of finite numbers such as [1, 10, 100], got True (bool)"),
        (lambda: naive_vs_stable(_X, 2.5), TypeError, "got 2.5 (float)"),
        (lambda: naive_vs_stable(_X, "abc"), TypeError,
         "magnitudes must be a list of finite numbers such as [1, 10, 100], got 'abc' (str)"),
        (lambda: naive_vs_stable(_X, {1: 2}), TypeError,
         "magnitudes must be a list of finite numbers such as [1, 10, 100], got {1: 2} (dict)"),
        (lambda: naive_vs_stable(_X, []), ValueError, "magnitudes is empty: give at least one of finite numbers"),
        (lambda: naive_vs_stable(_X, [[1.0, 2.0], [3.0]]), TypeError,
         "magnitudes must be finite numbers, got magnitudes[0] = [1.0, 2.0] (list)"),
        (lambda: naive_vs_stable(_X, [1, None]), TypeError, "got magnitudes[1] = None (NoneType)"),
        (lambda: naive_vs_stable(_X, [1, True]), TypeError, "got magnitudes[1] = True (bool)"),
        (lambda: naive_vs_stable(_X, [1, math.nan]), ValueError,
         "magnitudes must be finite numbers, got magnitudes[1] = nan"),
        (lambda: naive_vs_stable(_X, range(10**12)), ValueError,
         "magnitudes has more than 10,000 items: each one is a row of the table"),
        (lambda: naive_vs_stable(_X, [1], None), TypeError,
         "dtype must be one of np.float16, np.float32, np.float64, got None"),
        # dtype: None no longer means float64 silently; the message shows what was given
        (lambda: exp_limits(None), TypeError, "dtype must be one of np.float16, np.float32, np.float64, got None"),
        (lambda: exp_limits({}), TypeError, "dtype must be one of float16, float32, float64, got {} ("),
        (lambda: float_class(1.0, None), TypeError, "dtype must be one of np.float16"),
        # logsumexp: keepdims is a flag
        (lambda: logsumexp(_X, keepdims="abc"), TypeError, "keepdims must be True or False, got 'abc'"),
        (lambda: logsumexp(_X, keepdims=None), TypeError, "keepdims must be True or False, got None"),
        # score_spread: wrong kinds are TypeErrors naming the argument; sizes above 1 GiB are refused, not a MemoryError
        (lambda: score_spread(1.0, None, np.random.default_rng(0)), TypeError,
         "d_k must be an integer, got None (NoneType)"),
        (lambda: score_spread(1.0, 2.5, np.random.default_rng(0)), TypeError,
         "d_k must be an integer, got 2.5 (float)"),
        (lambda: score_spread(1.0, 4, np.random.default_rng(0), T=1), ValueError, "T must be at least 2, got 1"),
        (lambda: score_spread(1.0, 4, np.random.default_rng(0), T="abc"), TypeError,
         "T must be an integer, got 'abc' (str)"),
        (lambda: score_spread(True, 4, np.random.default_rng(0)), TypeError,
         "magnitude must be a finite number > 0, got True (bool)"),
        (lambda: score_spread("abc", 4, np.random.default_rng(0)), TypeError,
         "magnitude must be a finite number > 0, got 'abc' (str)"),
        (lambda: score_spread(math.nan, 4, np.random.default_rng(0)), ValueError,
         "magnitude must be a finite number > 0, got nan"),
        (lambda: score_spread(1.0, 10**12, np.random.default_rng(0)), ValueError,
         "the (T, d_k) = (64, 1,000,000,000,000) random Q (and K) would take 512,000,000,000,000 bytes (466 TiB), "
         "above the limit of 1 GiB per array that keeps a typo from exhausting the memory: lower T or d_k"),
        (lambda: score_spread(1.0, 4, np.random.default_rng(0), T=10**12), ValueError,
         "the (T, d_k) = (1,000,000,000,000, 4) random Q (and K)"),
        (lambda: score_spread(1.0, 1, np.random.default_rng(0), T=20_000), ValueError,
         "the (T, T) = (20,000, 20,000) scores would take 3,200,000,000 bytes (2.98 GiB)"),
        # compare_mask_sentinels: keep, sentinels and dtypes of the wrong kind
        (lambda: compare_mask_sentinels(SCORES, [[True, False], [True]]), ValueError,
         "keep must be a rectangular boolean array (True = may attend)"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, sentinels=None), TypeError,
         "sentinels must be a list of mask values such as (-np.inf, -1e9), got None (NoneType)"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, sentinels=-1e9), TypeError,
         "sentinels must be a list of mask values such as (-np.inf, -1e9), got -1000000000.0 (float)"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, sentinels="abc"), TypeError,
         "sentinels must be a list of mask values"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, sentinels=[]), ValueError, "sentinels is empty"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, dtypes=None), TypeError,
         "dtypes must be a list of float types such as (np.float16, np.float32), got None (NoneType)"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, dtypes=np.float32), TypeError,
         "dtypes must be a list of float types"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, dtypes="abc"), TypeError, "dtypes must be a list of float types"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, dtypes=[]), ValueError, "dtypes is empty"),
        (lambda: compare_mask_sentinels(SCORES, KEEP, sentinels=[-1.0] * 5_001), ValueError,
         "5,001 sentinels × 2 dtypes make more than 10,000 rows"),
        # format_sentinel_table: anything but compare_mask_sentinels' list (was "'int' object is not iterable")
        (lambda: format_sentinel_table(-3), TypeError,
         "results must be the non-empty list that compare_mask_sentinels returns, got -3"),
        (lambda: format_sentinel_table(2.5), TypeError,
         "results must be the non-empty list that compare_mask_sentinels returns, got 2.5"),
        (lambda: format_sentinel_table(None), TypeError, "results must be the non-empty list"),
    ],
)
def test_bad_input_gets_a_message_naming_the_argument(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_float_class_of_an_int_beyond_every_float_is_inf_not_an_overflow_error():
    assert float_class(10**400) == "inf" and float_class(-(10**400), np.float16) == "inf"
    assert float_class(10**30, np.float16) == "inf" and float_class(10**30) == "normal"
