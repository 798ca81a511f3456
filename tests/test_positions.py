"""Tests of helpers/positions.py: position tables, rotary embeddings (RoPE), token shuffling.

Formula values are checked against loops written straight from the formulas with ``math``;
the invariants (relative dot products of sinusoids, shift invariance of RoPE scores,
permutation equivariance of attention without positions) are hypothesis property tests.
Each bad input asserts the exception type and, through ``match``, that the message names the
argument. Numeric checks state their tolerance; "exact" means bit-for-bit equality.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from support import rx

from helpers.attention import self_attention
from helpers.positions import (
    learned_positions,
    onehot_positions,
    permute_tokens,
    rotary,
    sinusoidal_positions,
)

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True, database=None)


def floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def pe_loop(T: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """PE straight from the formula, one entry at a time."""
    PE = np.zeros((T, d_model))  # (T, d_model)
    for p in range(T):
        for j in range(d_model):
            angle = p / base ** (2 * (j // 2) / d_model)
            PE[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return PE


def rotary_loop(x: np.ndarray, positions, base: float = 10000.0) -> np.ndarray:
    """RoPE straight from the formula for x (T, d), one pair at a time."""
    T, d = x.shape
    out = np.zeros((T, d))  # (T, d)
    for t in range(T):
        p = positions[t]
        for i in range(d // 2):
            a = p * base ** (-2 * i / d)
            e, o = x[t, 2 * i], x[t, 2 * i + 1]
            out[t, 2 * i] = e * math.cos(a) - o * math.sin(a)
            out[t, 2 * i + 1] = e * math.sin(a) + o * math.cos(a)
    return out


# ====================================================================== sinusoidal_positions


@pytest.mark.parametrize(
    ("T", "d_model", "base"),
    [(1, 1, 10000.0), (4, 1, 10000.0), (3, 3, 10000.0), (5, 5, 10000.0), (6, 8, 10000.0), (9, 16, 100.0), (7, 5, 2)],
)
def test_sinusoidal_matches_the_formula_loop(T, d_model, base):
    PE = sinusoidal_positions(T, d_model, base=base)
    assert PE.shape == (T, d_model)
    assert PE.dtype == np.float64
    # same formula, numpy vs math and p / w vs the same division: a few ulp of values <= 1; atol 1e-14
    np.testing.assert_allclose(PE, pe_loop(T, d_model, base), rtol=0, atol=1e-14)


@pytest.mark.parametrize("d_model", [1, 2, 3, 4, 5, 8])
def test_sinusoidal_row_zero_is_0_1_0_1(d_model):
    expected = [0.0 if j % 2 == 0 else 1.0 for j in range(d_model)]
    np.testing.assert_array_equal(sinusoidal_positions(3, d_model)[0], expected)  # exact: sin 0, cos 0


def test_sinusoidal_known_values():
    PE = sinusoidal_positions(4, 4)
    # pair 0 turns by 1 radian per position whatever the base or width; atol 1e-15 (one rounding)
    np.testing.assert_allclose(PE[1, :2], [math.sin(1.0), math.cos(1.0)], rtol=0, atol=1e-15)
    np.testing.assert_allclose(PE[3, :2], [math.sin(3.0), math.cos(3.0)], rtol=0, atol=1e-15)
    # pair 1 of width 4 turns by 1/10000**(2/4) = 1/100 radian per position
    np.testing.assert_allclose(PE[2, 2:], [math.sin(0.02), math.cos(0.02)], rtol=0, atol=1e-15)


def test_sinusoidal_base_changes_only_the_slower_pairs():
    a, b = sinusoidal_positions(5, 6, base=10000.0), sinusoidal_positions(5, 6, base=10.0)
    np.testing.assert_array_equal(a[:, :2], b[:, :2])  # pair 0 is sin(p), cos(p) for any base: exact
    assert np.abs(a[:, 2:] - b[:, 2:]).max() > 0.1


@SETTINGS
@given(T=st.integers(2, 40), half=st.integers(1, 32), base=floats(2.0, 1e5))
def test_sinusoidal_dot_product_depends_only_on_the_offset(T, half, base):
    d_model = 2 * half
    PE = sinusoidal_positions(T, d_model, base=base)
    G = PE @ PE.T  # (T, d_model) @ (d_model, T) -> (T, T), G[p, q] = sum_i cos((p - q) w_i)
    w = 1.0 / base ** (2 * np.arange(half) / d_model)  # (d_model/2,) radians per position
    for p in range(T):
        for q in range(T):
            # d_model/2 <= 32 terms of size <= 1, angles <= 40 rad (rounding ~1e-14 each); atol 1e-12
            assert abs(G[p, q] - np.cos((p - q) * w).sum()) <= 1e-12
            same_offset = G[p - q, 0] if p >= q else G[0, q - p]  # the pair (p - q, 0) or (0, q - p)
            assert abs(G[p, q] - same_offset) <= 1e-12


def test_sinusoidal_dot_product_is_not_relative_for_odd_width():
    # the unpaired last sine adds sin(p w) sin(q w), which is not a function of p - q
    G = sinusoidal_positions(3, 1) @ sinusoidal_positions(3, 1).T  # (3, 3): G[p, q] = sin p sin q
    assert G[0, 0] == 0.0
    assert G[1, 1] == pytest.approx(math.sin(1.0) ** 2, abs=1e-15)  # offset 0 both times, yet 0.708 != 0


# ============================================================================ other tables


@pytest.mark.parametrize("T", [1, 2, 5])
def test_onehot_positions_is_the_identity(T):
    P = onehot_positions(T)
    assert P.dtype == np.float64
    np.testing.assert_array_equal(P, np.eye(T))  # exact


def test_learned_positions_shape_spread_and_reproducibility():
    P = learned_positions(3, 5, np.random.default_rng(7))
    assert P.shape == (3, 5)
    assert P.dtype == np.float64
    np.testing.assert_array_equal(P, learned_positions(3, 5, np.random.default_rng(7)))  # same seed: exact
    assert not np.array_equal(P, learned_positions(3, 5, np.random.default_rng(8)))
    big = learned_positions(2000, 64, np.random.default_rng(0))  # 128 000 draws
    # std 1/sqrt(64) = 0.125; the sample std of 128 000 normals is within 1% w.p. > 1 - 1e-9
    assert big.std() == pytest.approx(0.125, rel=0.01)
    assert abs(big.mean()) < 0.01  # standard error 0.125 / sqrt(128 000) = 3.5e-4
    # every row has expected squared length d_model * std² = 1
    assert (big**2).sum(axis=1).mean() == pytest.approx(1.0, rel=0.01)


# ================================================================================== rotary


def test_rotary_d2_is_a_2x2_rotation_by_p_radians():
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.5, -2.0], [3.0, 1.0]])  # (4, 2)
    out = rotary(x)
    for p in range(4):
        R = np.array([[math.cos(p), -math.sin(p)], [math.sin(p), math.cos(p)]])  # (2, 2) counter-clockwise
        np.testing.assert_allclose(out[p], R @ x[p], rtol=0, atol=1e-15)  # |x| <= 3: a few ulp
    np.testing.assert_allclose(out[1], [math.cos(1.0), math.sin(1.0)], rtol=0, atol=1e-16)  # e_0 turns to (cos, sin)


@pytest.mark.parametrize("d", [2, 4, 6, 10])
def test_rotary_matches_the_formula_loop(d):
    rng = np.random.default_rng(d)
    x = rng.normal(size=(5, d))  # (T, d)
    positions = [0, 3, -2, 7, 100]
    # p * base**(-2i/d) vs p / base**(2i/d): angles <= 100 differ by ~1e-14 rad; atol 1e-12
    np.testing.assert_allclose(
        rotary(x, positions=positions), rotary_loop(x, positions), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(rotary(x, base=50.0), rotary_loop(x, range(5), 50.0), rtol=0, atol=1e-12)


def test_rotary_broadcasts_over_leading_dimensions():
    x = np.random.default_rng(1).normal(size=(2, 3, 4, 6))  # (B, h, T, d)
    out = rotary(x)
    assert out.shape == x.shape
    for b in range(2):
        for h in range(3):
            np.testing.assert_array_equal(out[b, h], rotary(x[b, h]))  # same arithmetic: exact


def test_rotary_preserves_the_length_of_every_pair():
    x = np.random.default_rng(2).normal(size=(3, 7, 8))  # (B, T, d)
    out = rotary(x, positions=[0, 1, 5, 20, -3, 1000, 2.5])
    # a rotation keeps each pair's length; float64 rounding of two products and a sum: rtol 1e-14
    np.testing.assert_allclose(
        np.hypot(out[..., 0::2], out[..., 1::2]), np.hypot(x[..., 0::2], x[..., 1::2]), rtol=1e-14, atol=0
    )


def test_rotary_leaves_position_zero_unchanged_and_moves_the_others():
    x = np.random.default_rng(3).normal(size=(4, 6))  # (T, d)
    out = rotary(x)
    np.testing.assert_array_equal(out[0], x[0])  # cos 0 = 1, sin 0 = 0: exact
    assert np.abs(out[1:] - x[1:]).max() > 0.1
    out = rotary(x, positions=[2, 0, 0, 5])
    np.testing.assert_array_equal(out[1:3], x[1:3])  # explicit position 0: exact


def test_rotary_positions_none_means_0_to_T_minus_1():
    x = np.random.default_rng(4).normal(size=(5, 4))  # (T, d)
    np.testing.assert_array_equal(rotary(x), rotary(x, positions=np.arange(5)))  # exact
    np.testing.assert_array_equal(rotary(x), rotary(x, positions=[0.0, 1.0, 2.0, 3.0, 4.0]))  # exact


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [(np.int64, np.float64), (np.int32, np.float64), (np.float32, np.float32), (np.float64, np.float64)],
)
def test_rotary_dtype_and_returns_a_new_array(dtype, expected):
    x = np.arange(12).reshape(3, 4).astype(dtype)  # (T, d)
    before = x.copy()
    out = rotary(x)
    assert out.dtype == expected
    assert out is not x and not np.shares_memory(out, x)
    np.testing.assert_array_equal(x, before)  # the input is untouched
    # float32 is computed in float64 and rounded once: rtol = float32 eps
    np.testing.assert_allclose(out, rotary(x.astype(np.float64)), rtol=1.2e-7, atol=1e-6)


@SETTINGS
@given(
    half=st.integers(1, 8),
    data=st.data(),
    p=st.integers(-50, 100),
    r=st.integers(-50, 100),
    s=st.integers(-1000, 1000),
)
def test_rotary_scores_depend_only_on_the_offset(half, data, p, r, s):
    d = 2 * half
    q = data.draw(hnp.arrays(np.float64, (d,), elements=floats(-3.0, 3.0)), label="q")
    k = data.draw(hnp.arrays(np.float64, (d,), elements=floats(-3.0, 3.0)), label="k")
    X = np.stack([q, k])  # (2, d): the query token and the key token
    a, b = rotary(X, positions=[p, r])  # (d,) each
    a_s, b_s = rotary(X, positions=[p + s, r + s])  # (d,) each
    # angles up to 1100 rad carry rounding ~1100 * eps = 2.4e-13 rad; |q| |k| <= 9 * 8 = 72; atol 1e-9
    assert abs(a @ b - a_s @ b_s) <= 1e-9


def test_rotary_score_changes_with_the_offset():
    # the property above must not hold trivially: a different offset gives a different score
    q, k = np.array([1.0, 0.5, -0.3, 2.0]), np.array([0.2, -1.0, 1.5, 0.7])
    X = np.stack([q, k])  # (2, 4)
    a, b = rotary(X, positions=[3, 1])
    c, e = rotary(X, positions=[3, 2])
    assert abs(a @ b - c @ e) > 1e-3


def test_rotary_odd_width_says_even():
    with pytest.raises(ValueError, match=rx("(3, 5)", "d=5", "even")):
        rotary(np.ones((3, 5)))


# ======================================================================== permute_tokens


def test_permute_tokens_reorders_rows():
    x = np.arange(12.0).reshape(2, 3, 2)  # (B, T, d)
    out = permute_tokens(x, [2, 0, 1])
    np.testing.assert_array_equal(out, x[:, [2, 0, 1], :])  # exact
    np.testing.assert_array_equal(out[0], [[4.0, 5.0], [0.0, 1.0], [2.0, 3.0]])  # row t is token perm[t]
    np.testing.assert_array_equal(permute_tokens(x, np.array([0, 1, 2], dtype=np.uint8)), x)  # identity


@SETTINGS
@given(
    X=hnp.arrays(
        np.float64, st.tuples(st.integers(1, 6), st.integers(1, 8)), elements=floats(-3.0, 3.0)
    ),
    data=st.data(),
)
def test_self_attention_without_positions_is_permutation_equivariant(X, data):
    perm = data.draw(st.permutations(range(X.shape[0])), label="perm")
    out, weights = self_attention(X)
    out_p, weights_p = self_attention(permute_tokens(X, perm))
    # shuffling the keys changes only the order of float sums (<= 6 terms of size <= 3); atol 1e-12
    np.testing.assert_allclose(out_p, permute_tokens(out, perm), rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights_p, weights[np.ix_(perm, perm)], rtol=0, atol=1e-12)


@pytest.mark.parametrize("table", ["sinusoidal", "learned", "onehot"])
def test_positions_attached_to_slots_break_equivariance(table):
    T = d = 5
    X = np.random.default_rng(2024).normal(size=(T, d))  # (T, d) token vectors
    P = {
        "sinusoidal": sinusoidal_positions(T, d),
        "learned": learned_positions(T, d, np.random.default_rng(1)),
        "onehot": onehot_positions(T),
    }[table]  # (T, d) one position vector per slot
    perm = [1, 2, 3, 4, 0]
    out, _ = self_attention(X + P)
    # tokens shuffled, positions stay with the slots: the output is no longer just shuffled
    out_p, _ = self_attention(permute_tokens(X, perm) + P)
    assert np.abs(out_p - permute_tokens(out, perm)).max() > 1e-3
    # control: positions carried along with their tokens restore equivariance; atol 1e-12 (sum order)
    out_c, _ = self_attention(permute_tokens(X + P, perm))
    np.testing.assert_allclose(out_c, permute_tokens(out, perm), rtol=0, atol=1e-12)


# ============================================================================= bad inputs

BAD_INTS = [
    (0, ValueError, "must be at least 1, got 0"),
    (-3, ValueError, "must be at least 1, got -3"),
    (2.0, TypeError, "must be an integer, got 2.0"),
    (True, TypeError, "must be an integer, got True"),
    ("3", TypeError, "must be an integer, got '3'"),
    (None, TypeError, "must be an integer, got None"),
]


@pytest.mark.parametrize(("value", "error", "message"), BAD_INTS)
def test_bad_T_and_d_model(value, error, message):
    with pytest.raises(error, match=rx("T ", message)):
        sinusoidal_positions(value, 4)
    with pytest.raises(error, match=rx("d_model ", message)):
        sinusoidal_positions(4, value)
    with pytest.raises(error, match=rx("T ", message)):
        onehot_positions(value)
    with pytest.raises(error, match=rx("T ", message)):
        learned_positions(value, 4, np.random.default_rng(0))
    with pytest.raises(error, match=rx("d_model ", message)):
        learned_positions(4, value, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("base", "error", "message"),
    [
        (0, ValueError, "got 0.0"),
        (0.0, ValueError, "got 0.0"),
        (-10.0, ValueError, "got -10.0"),
        (math.inf, ValueError, "got inf"),
        (math.nan, ValueError, "got nan"),
        (True, TypeError, "got True"),
        (np.bool_(True), TypeError, "got"),
        ("10000", TypeError, "got '10000'"),
        (None, TypeError, "got None"),
        ([10000.0], TypeError, "got [10000.0]"),
        (1 + 2j, TypeError, "got (1+2j)"),
    ],
)
def test_bad_base(base, error, message):
    with pytest.raises(error, match=rx("base must be a", message)):
        sinusoidal_positions(3, 4, base=base)
    with pytest.raises(error, match=rx("base must be a", message)):
        rotary(np.ones((3, 4)), base=base)


def test_learned_positions_needs_a_generator():
    for rng in (0, None, np.random.RandomState(0)):
        with pytest.raises(TypeError, match=rx("rng must be a numpy Generator", type(rng).__name__)):
            learned_positions(3, 4, rng)


BAD_X = [
    ("hello", TypeError, "x must be a numeric array, got a str"),
    (np.array([[True, False], [False, True]]), TypeError, "x must hold real numbers", "bool"),
    (np.array([[1, "a"]], dtype=object), TypeError, "x must hold real numbers", "object"),
    ([["a", "b"], ["c", "d"]], TypeError, "x must hold real numbers", "<U1"),
    (np.ones((2, 2), dtype=complex), TypeError, "x must hold real numbers", "complex"),
    ([[1.0, 2.0], [3.0]], ValueError, "x must be a rectangular numeric array"),
    (np.ones(4), ValueError, "x must have at least 2 dimensions", "(4,)"),
    (np.float64(2.0), ValueError, "x must have at least 2 dimensions", "()"),
    (np.ones((0, 2)), ValueError, "x is empty", "(0, 2)"),
    (np.ones((3, 0)), ValueError, "x is empty", "(3, 0)"),
    (np.array([[1.0, np.nan], [0.0, 0.0]]), ValueError, "x contains NaN", "(0, 1)", "(2, 2)"),
    (np.array([[1.0, 1.0], [-np.inf, 0.0]]), ValueError, "x contains an infinite value", "(1, 0)"),
]


@pytest.mark.parametrize(("x", "error", "parts"), [(x, e, p) for x, e, *p in BAD_X])
def test_bad_x(x, error, parts):
    with pytest.raises(error, match=rx(*parts)):
        rotary(x)
    with pytest.raises(error, match=rx(*parts)):
        permute_tokens(x, [1, 0])


@pytest.mark.parametrize(
    ("positions", "error", "parts"),
    [
        ("abc", TypeError, ["positions must be an array of integers or real numbers, got a str"]),
        ([True, False, True], TypeError, ["positions must hold integers or real numbers", "bool"]),
        (np.array([0, "a", 2], dtype=object), TypeError, ["positions must hold", "object"]),
        ([0j, 1j, 2j], TypeError, ["positions must hold", "complex"]),
        ([[0, 1], [2]], ValueError, ["positions must be a 1-D array"]),
        ([0, 1], ValueError, ["positions must have shape (T,) = (3,)", "(3, 4)", "got shape (2,)"]),
        ([], ValueError, ["positions must have shape (T,) = (3,)", "got shape (0,)"]),
        ([[0, 1, 2]], ValueError, ["positions must have shape (T,) = (3,)", "got shape (1, 3)"]),
        (5, ValueError, ["positions must have shape (T,) = (3,)", "got shape ()"]),
        ([0.0, np.nan, 2.0], ValueError, ["positions contains nan at index 1", "finite"]),
        ([0.0, 1.0, np.inf], ValueError, ["positions contains inf at index 2", "finite"]),
    ],
)
def test_bad_positions(positions, error, parts):
    with pytest.raises(error, match=rx(*parts)):
        rotary(np.ones((3, 4)), positions=positions)


@pytest.mark.parametrize(
    ("perm", "error", "parts"),
    [
        ("abc", TypeError, ["perm must be an array of integers (token indices), got a str"]),
        ([0.0, 2.0, 1.0], TypeError, ["perm must hold integers", "float64"]),
        ([True, False, True], TypeError, ["perm must hold integers", "bool"]),
        ([0, 1], ValueError, ["perm must have shape (T,) = (3,)", "(3, 2)", "got shape (2,)"]),
        ([], ValueError, ["perm must have shape (T,) = (3,)", "got shape (0,)"]),
        ([[0, 1, 2]], ValueError, ["perm must have shape (T,) = (3,)", "got shape (1, 3)"]),
        ([0, 0, 1], ValueError, ["perm must be a permutation of range(3)", "[0, 0, 1]", "missing [2]"]),
        ([0, 1, 3], ValueError, ["perm must be a permutation of range(3)", "missing [2]"]),
        ([-1, 0, 1], ValueError, ["perm must be a permutation of range(3)", "missing [2]"]),
    ],
)
def test_bad_perm(perm, error, parts):
    with pytest.raises(error, match=rx(*parts)):
        permute_tokens(np.ones((3, 2)), perm)


def test_angles_that_overflow_are_refused_not_nan():
    # base**(2i/d) underflows towards 0 for a subnormal base, so p / base**(2i/d) is inf
    with pytest.raises(ValueError, match=rx("angles", "not finite", "base=5e-324")):
        sinusoidal_positions(3, 64, base=5e-324)
    with pytest.raises(ValueError, match=rx("angles", "not finite", "base=5e-324")):
        rotary(np.ones((3, 64)), base=5e-324)
    # a base below 1 makes the later pairs turn faster than 1 radian per position
    with pytest.raises(ValueError, match=rx("angles", "not finite", "base=0.01", "positions up to 1e+308")):
        rotary(np.ones((3, 4)), base=0.01, positions=[0.0, 1.0, 1e308])


def test_rotary_overflow_is_refused_not_inf():
    x = np.full((2, 2), 60000.0, dtype=np.float16)  # float16 max is 65504
    # position 1 turns by 1 radian: new_odd = 60000 (sin 1 + cos 1) = 82900 > 65504
    with pytest.raises(ValueError, match=rx("rotating x", "(2, 2)", "overflows float16")):
        rotary(x)


@pytest.mark.parametrize(
    ("make", "parts"),
    [
        (lambda: sinusoidal_positions(10**12, 4), ["the (T, d_model) = (1,000,000,000,000, 4) position table",
                                                   "32,000,000,000,000 bytes (29.1 TiB)", "limit of 1 GiB",
                                                   "lower T or d_model"]),
        (lambda: sinusoidal_positions(4, 10**12), ["(T, d_model) = (4, 1,000,000,000,000)", "(29.1 TiB)"]),
        (lambda: learned_positions(10**12, 4, np.random.default_rng(0)),
         ["(T, d_model) = (1,000,000,000,000, 4) position table", "(29.1 TiB)", "lower T or d_model"]),
        (lambda: learned_positions(4, 10**12, np.random.default_rng(0)), ["(T, d_model) = (4, 1,000,000,000,000)"]),
        (lambda: onehot_positions(10**12), ["the (T, T) = (1,000,000,000,000, 1,000,000,000,000) one-hot table",
                                            "limit of 1 GiB", "lower T"]),
        (lambda: onehot_positions(11_586), ["(T, T) = (11,586, 11,586)", "1,073,883,168 bytes"]),
        # 11,585² × 8 <= 2**30
    ],
)
def test_tables_above_1_GiB_are_refused_in_words_not_a_MemoryError(make, parts):
    with pytest.raises(ValueError, match=rx(*parts)):
        make()
