"""Property tests (hypothesis) of the invariants of helpers/attention.py.

Sizes are bounded (T <= 6 tokens, widths <= 8) and every test is derandomized, so a run is
deterministic and short. Each tolerance is stated beside its assertion with the reason for it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from helpers.attention import (
    merge_heads,
    multi_head_attention,
    naive_softmax,
    scaled_dot_product_attention,
    self_attention,
    single_head_attention,
    softmax,
    split_heads,
)

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)
EPS = float(np.finfo(np.float64).eps)  # 2.2e-16


def floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def matrices(rows, cols, lo=-3.0, hi=3.0):
    return hnp.arrays(np.float64, st.tuples(rows, cols), elements=floats(lo, hi))


sizes = st.integers(1, 6)


# ===================================================================================== softmax


@SETTINGS
@given(
    hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=floats(-1.7e308, 1.7e308)
    )
)
def test_softmax_rows_sum_to_one_over_the_whole_float_range(x):
    w = softmax(x)
    assert w.shape == x.shape
    assert np.all((w >= 0) & (w <= 1))
    assert np.all(w.max(axis=-1) > 0)  # the largest entry has exp(0) = 1 in the numerator
    # each row: at most 6 terms, each <= 1, summed and divided in float64 -> error <= 8 eps; tolerance 1e-14
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-14)


@SETTINGS
@given(matrices(sizes, sizes, -100.0, 100.0), floats(-1000.0, 1000.0))
def test_softmax_is_shift_invariant(x, c):
    # (x_i + c) - (x_j + c) differs from x_i - x_j by at most 2 roundings of numbers below 1100,
    # i.e. 2 * 2**-42 ≈ 4.5e-13; exp turns that into the same relative error and the division can
    # double it. With |x_i - x_j| <= 200 no weight underflows (exp(-200) ≈ 1e-87), so a relative
    # tolerance of 1e-11 holds everywhere.
    np.testing.assert_allclose(softmax(x + c), softmax(x), rtol=1e-11, atol=0)


@SETTINGS
@given(matrices(sizes, sizes, -100.0, 100.0), st.integers(-1000, 1000))
def test_softmax_exact_shift_by_representable_integer(x, c):
    # x on a grid of 1/64 with |x| <= 100: x + c is exact in float64, and so is every x - max,
    # so the shift changes nothing at all.
    x = np.round(x * 64) / 64
    np.testing.assert_array_equal(softmax(x + c), softmax(x))


@SETTINGS
@given(matrices(sizes, sizes, -700.0, 720.0))
def test_stable_and_naive_agree_wherever_naive_is_finite(x):
    # naive is "finite" on a row when neither an exp nor the row's sum overflows; with x >= -700 no
    # exp underflows into the subnormals, where naive loses its precision without becoming inf.
    with np.errstate(all="ignore"):
        e = np.exp(x)
        naive = naive_softmax(x)
    ok = np.isfinite(e.sum(axis=-1))  # (rows,)
    stable = softmax(x)
    # naive: a few roundings (rel. ~8 eps); stable: x - max is rounded by at most 2**-42 ≈ 2.3e-13
    # relative to |x - max| < 2048, which exp turns into a relative error of the same size.
    # rtol 1e-12; atol 1e-300 only for results that both round into the subnormal range.
    np.testing.assert_allclose(naive[ok], stable[ok], rtol=1e-12, atol=1e-300)
    assert np.isfinite(stable).all()  # the stable one is finite everywhere, including the rows naive loses


@SETTINGS
@given(matrices(sizes, sizes, -5.0, 5.0), st.data())
def test_masked_rows_sum_to_one_and_masked_weights_are_zero(x, data):
    T_q, T_k = x.shape
    mask = data.draw(hnp.arrays(bool, (T_q, T_k)))
    mask[np.arange(T_q), data.draw(st.lists(st.integers(0, T_k - 1), min_size=T_q, max_size=T_q))] = True
    Q = x  # (T_q, d_k=T_k)
    K = np.resize(x[::-1], (T_k, T_k))  # (T_k, d_k) built from the same numbers
    V = np.resize(x, (T_k, 3))  # (T_k, d_v=3)
    _, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert (w[~mask] == 0.0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-14)  # <= 6 terms: error ~8 eps


# ==================================================================== permutation equivariance


@SETTINGS
@given(matrices(st.integers(2, 6), st.integers(1, 5)), st.data())
def test_self_attention_is_permutation_equivariant(X, data):
    T = X.shape[0]
    p = np.array(data.draw(st.permutations(range(T))))
    out, w = self_attention(X)
    out_p, w_p = self_attention(X[p])
    # The same dot products and exps; only the order of the sums over keys changes: a few eps
    # relative to the largest term. |X| <= 3 and d <= 5 keep every number below ~50: atol 1e-12.
    np.testing.assert_allclose(w_p, w[p][:, p], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out_p, out[p], rtol=1e-12, atol=1e-12)


@SETTINGS
@given(matrices(st.integers(2, 6), st.just(4)), matrices(st.just(4), st.just(3)), st.data())
def test_single_head_attention_is_permutation_equivariant(X, W, data):
    T = X.shape[0]
    p = np.array(data.draw(st.permutations(range(T))))
    W_q, W_k, W_v = W, W[::-1], -W
    out, w = single_head_attention(X, W_q, W_k, W_v)
    out_p, w_p = single_head_attention(X[p], W_q, W_k, W_v)
    # as above; |X W| <= 4 * 3 * 3 = 36, so |scores| <= 3 * 36² / sqrt(3) ≈ 2245: rtol = atol = 1e-10
    np.testing.assert_allclose(w_p, w[p][:, p], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out_p, out[p], rtol=1e-10, atol=1e-10)


# =============================================================================== heads


@st.composite
def head_inputs(draw):
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    T = draw(st.integers(1, 5))
    h = draw(st.integers(1, 4))
    d_head = draw(st.integers(1, 3))
    x = draw(hnp.arrays(np.float64, (*lead, T, h * d_head), elements=floats(-1e6, 1e6)))
    return x, h, d_head


@SETTINGS
@given(head_inputs())
def test_merge_of_split_is_the_identity_exactly(args):
    x, h, d_head = args
    heads = split_heads(x, h)
    assert heads.shape == (*x.shape[:-2], h, x.shape[-2], d_head)
    np.testing.assert_array_equal(merge_heads(heads), x)  # a reshape and a transpose: exact
    for i in range(h):
        np.testing.assert_array_equal(heads[..., i, :, :], x[..., i * d_head : (i + 1) * d_head])


@st.composite
def mha_inputs(draw, max_heads=3):
    T = draw(st.integers(1, 5))
    d_in = draw(st.integers(1, 4))
    h = draw(st.integers(1, max_heads))
    d_head = draw(st.integers(1, 3))
    d_model = h * d_head
    X = draw(hnp.arrays(np.float64, (T, d_in), elements=floats(-2.0, 2.0)))
    W_q, W_k, W_v = (
        draw(hnp.arrays(np.float64, (d_in, d_model), elements=floats(-1.0, 1.0))) for _ in range(3)
    )
    d_out = draw(st.integers(1, 4))
    W_o = draw(hnp.arrays(np.float64, (d_model, d_out), elements=floats(-1.0, 1.0)))
    return X, W_q, W_k, W_v, W_o, h, d_head


# |X| <= 2, |W| <= 1, d_in <= 4: |Q|, |K|, |V| <= 8, scores <= 64 * 3 / sqrt(d_head), weights <= 1.
# Every comparison below is between two float64 orderings of the same sums: relative error a few eps
# of the largest term (<= ~200), so atol 1e-11 and rtol 1e-11 are loose by a factor of ~100 yet far
# below any real difference (a wrong head or a wrong scale moves the numbers by > 1e-3).
TOL = {"rtol": 1e-11, "atol": 1e-11}


@SETTINGS
@given(mha_inputs(max_heads=1))
def test_multi_head_with_one_head_equals_single_head(args):
    X, W_q, W_k, W_v, W_o, _, _ = args
    out, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=1)
    out_1, w_1 = single_head_attention(X, W_q, W_k, W_v)
    assert w.shape == (1, *w_1.shape)
    np.testing.assert_allclose(out, out_1, **TOL)
    np.testing.assert_allclose(w[0], w_1, **TOL)
    out_o, _ = multi_head_attention(X, W_q, W_k, W_v, n_heads=1, W_o=W_o)
    np.testing.assert_allclose(out_o, out_1 @ W_o, **TOL)


@SETTINGS
@given(mha_inputs())
def test_three_ways_to_get_the_heads_agree(args):
    X, W_q, W_k, W_v, _, h, d_head = args
    Q = X @ W_q  # (T, d_model)
    Q_split = split_heads(Q, h)  # (h, T, d_head)
    concat, w = multi_head_attention(X, W_q, W_k, W_v, n_heads=h)  # (T, d_model), (h, T, T)
    loop_out, loop_w = [], []
    for i in range(h):
        blk = slice(i * d_head, (i + 1) * d_head)
        # (1) slicing the weight columns of block i == (2) head i of split_heads(X W_q)
        np.testing.assert_allclose(X @ W_q[:, blk], Q_split[i], **TOL)
        # (3) a per-head loop with its own W slices, as text 002 writes it
        o_i, w_i = single_head_attention(X, W_q[:, blk], W_k[:, blk], W_v[:, blk])
        loop_out.append(o_i)
        loop_w.append(w_i)
    np.testing.assert_allclose(np.concatenate(loop_out, axis=-1), concat, **TOL)
    np.testing.assert_allclose(np.stack(loop_w), w, **TOL)
    # and split_heads + scaled_dot_product_attention + merge_heads, by hand
    out_h, w_h = scaled_dot_product_attention(
        split_heads(X @ W_q, h), split_heads(X @ W_k, h), split_heads(X @ W_v, h)
    )  # (h, T, d_head), (h, T, T)
    np.testing.assert_allclose(merge_heads(out_h), concat, **TOL)
    np.testing.assert_allclose(w_h, w, **TOL)


@SETTINGS
@given(mha_inputs())
def test_concat_times_w_o_is_the_sum_of_per_head_products(args):
    X, W_q, W_k, W_v, W_o, h, d_head = args
    concat, _ = multi_head_attention(X, W_q, W_k, W_v, n_heads=h)  # (T, h * d_head)
    out, _ = multi_head_attention(X, W_q, W_k, W_v, n_heads=h, W_o=W_o)  # (T, d_out)
    heads = split_heads(concat, h)  # (h, T, d_head)
    total = sum(heads[i] @ W_o[i * d_head : (i + 1) * d_head] for i in range(h))  # (T, d_out)
    np.testing.assert_allclose(out, total, **TOL)
    np.testing.assert_allclose(out, concat @ W_o, **TOL)
