"""Every worked example of the five reference texts, recomputed with helpers.attention.

The printed numbers come from helpers.examples (never from /work/shared at test time). A printed
number is reproduced when the computed value rounds to it: |computed - printed| is at most half a
unit in the last printed digit (see ``assert_matches_printed``).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from helpers import examples as E
from helpers.attention import (
    attention_steps,
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

# Slack for float representation, in units in the last place (ULP) of the printed value: the
# printed decimal itself is stored as the nearest float (1/2 ULP), and the text's float and ours
# may differ in the last bits (text 000 divides by sqrt(3) where helpers multiply by 1/sqrt(3):
# 1-2 ULP). 4 ULP is 1e-15 relative: far below any printed digit in these texts.
ULP_SLACK = 4


def assert_matches_printed(computed, printed, decimals=None, significant=None):
    """Assert that ``computed`` rounds to ``printed``: |computed - printed| <= half a unit in the
    last printed digit (+ ULP_SLACK ULP of the printed value for float representation).

    decimals: the number was printed with this many digits after the point (half unit 0.5e-decimals).
    significant: printed with this many significant digits, e.g. 1.67702032e-200 has 9; the half
    unit scales with each value. A printed 0 in this mode is numpy's 0.00000000e+000, which it
    only prints for an exact zero (any nonzero float gets a nonzero mantissa), so it must be 0.
    """
    if (decimals is None) == (significant is None):
        raise TypeError("give exactly one of decimals= or significant=")
    computed = np.asarray(computed, dtype=np.float64)
    printed = np.asarray(printed, dtype=np.float64)
    assert computed.shape == printed.shape, f"shape {computed.shape} computed, {printed.shape} printed"
    if decimals is not None:
        half = np.full(printed.shape, 0.5 * 10.0**-decimals)
    else:
        nonzero = printed != 0
        exponent = np.floor(np.log10(np.abs(np.where(nonzero, printed, 1.0))))  # 10**exponent <= |p|
        half = np.where(nonzero, 0.5 * 10.0 ** (exponent - (significant - 1)), 0.0)
    slack = np.where(printed != 0, ULP_SLACK * np.spacing(np.abs(printed)), 0.0)
    diff = np.abs(computed - printed)
    bad = ~(diff <= half + slack)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"{int(bad.sum())} of {bad.size} values do not round to the printed ones; first at {idx}: "
            f"computed {computed[idx]!r}, printed {printed[idx]!r}, |diff| {diff[idx]:.3g} > "
            f"half unit {half[idx]:.3g}"
        )


# ------------------------------------------------------------ the checker checks itself


def test_assert_matches_printed_accepts_rounding_and_rejects_more():
    assert_matches_printed([1.23449], [1.2345], decimals=4)
    assert_matches_printed([0.06337893833], [0.0634], decimals=4)
    with pytest.raises(AssertionError, match="do not round"):
        assert_matches_printed([1.2346], [1.2344], decimals=4)
    assert_matches_printed([1.6770203186e-200], [1.67702032e-200], significant=9)
    with pytest.raises(AssertionError):
        assert_matches_printed([1.677020326e-200], [1.67702032e-200], significant=9)
    with pytest.raises(AssertionError):  # a printed 0.00000000e+000 means exactly 0
        assert_matches_printed([1e-320], [0.0], significant=9)
    with pytest.raises(AssertionError, match="shape"):
        assert_matches_printed([1.0, 2.0], [1.0], decimals=1)
    with pytest.raises(TypeError):
        assert_matches_printed([1.0], [1.0])


# ===================================================================================== text 000


def test_t000_formula1_shifted_scores_to_8_decimals():
    X = E.T000_F1_X
    steps = attention_steps(X, X, X)  # scale None: 1/sqrt(3) = 1/sqrt(emb_dim), as the text
    assert E.T000_F1_DIM == X.shape[1] == 3
    assert_matches_printed(steps["shifted"], E.T000_F1_SHIFTED_SCORES, decimals=E.T000_F1_SHIFTED_DECIMALS)
    np.testing.assert_array_equal(steps["shifted"].max(axis=-1), 0.0)


def test_t000_formula1_weights_output_and_sum():
    X = E.T000_F1_X
    out, w = self_attention(X)
    # The printed weights are one-hot, and they are exactly one-hot: the next-largest score of
    # every row is more than 400 000 below the maximum, and exp(-400 000) is 0 in float64.
    np.testing.assert_array_equal(w, E.T000_F1_WEIGHTS)
    assert_matches_printed(w, E.T000_F1_WEIGHTS, decimals=8)
    np.testing.assert_array_equal(out, E.T000_F1_OUTPUT)  # one-hot rows copy rows of X exactly
    assert float(w.sum()) == E.T000_F1_WEIGHTS_SUM == 5.0
    # the text's naive softmax works here only because it shifted the scores first
    steps = attention_steps(X, X, X)
    np.testing.assert_array_equal(naive_softmax(steps["shifted"]), w)


def test_t000_formula1_naive_softmax_of_unshifted_scores_overflows():
    X = E.T000_F1_X
    with np.errstate(all="ignore"):
        w = naive_softmax(attention_steps(X, X, X)["scaled"])  # scores up to 1.5e7: exp = inf
    assert np.isnan(w).all()


def test_t000_formula2_projections():
    Q, K, V = project_qkv(E.T000_F2_X, E.T000_F2_WQ, E.T000_F2_WK, E.T000_F2_WV)
    np.testing.assert_array_equal(Q, E.T000_F2_Q)  # integers: exact
    np.testing.assert_array_equal(K, E.T000_F2_K)
    np.testing.assert_array_equal(V, E.T000_F2_V)


def test_t000_formula2_scores_shifted_weights_output():
    Q, K, V = project_qkv(E.T000_F2_X, E.T000_F2_WQ, E.T000_F2_WK, E.T000_F2_WV)
    steps = attention_steps(Q, K, V)  # scale None: 1/sqrt(4) = 1/2, as the text's / np.sqrt(qkv_dim)
    assert E.T000_F2_DK == Q.shape[-1] == 4
    # integers times 0.5: exact in binary floating point
    np.testing.assert_array_equal(steps["scaled"], E.T000_F2_SCORES)
    np.testing.assert_array_equal(steps["shifted"], E.T000_F2_SHIFTED_SCORES)
    w = steps["weights"]
    assert_matches_printed(w, E.T000_F2_WEIGHTS, significant=E.T000_F2_WEIGHTS_SIGNIFICANT)
    # the tiny weights are exp(-460), exp(-564), exp(-717.5): 1 + those rounds to 1 in the sum
    np.testing.assert_array_equal(w[[0, 1, 4], 3], np.exp([-460.0, -564.0, -717.5]))
    tiny = np.finfo(np.float64).smallest_normal  # 2.2e-308
    assert 0.0 < w[4, 3] < tiny  # 2.476e-312 is a subnormal float64
    assert 1.0e-312 < w[4, 3] < 3.0e-312
    np.testing.assert_array_equal(w[2, 3], 0.0)  # exp(-1712.5) underflows to exactly 0
    np.testing.assert_array_equal(steps["output"], E.T000_F2_OUTPUT)  # 52 + 1.7e-200 * 48 == 52
    np.testing.assert_array_equal(E.T000_F2_OUTPUT[0], [52.0, 137.0, 86.0, 103.0])
    np.testing.assert_array_equal(E.T000_F2_OUTPUT, np.tile(V[2], (5, 1)))  # every row copies V[2]


def test_t000_formula2_via_single_head_attention():
    out, w = single_head_attention(E.T000_F2_X, E.T000_F2_WQ, E.T000_F2_WK, E.T000_F2_WV)
    assert_matches_printed(w, E.T000_F2_WEIGHTS, significant=E.T000_F2_WEIGHTS_SIGNIFICANT)
    np.testing.assert_array_equal(out, E.T000_F2_OUTPUT)


# ===================================================================================== text 001


def test_t001_keys_values_queries():
    Q, K, V = project_qkv(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    np.testing.assert_array_equal(K, E.T001_K)
    np.testing.assert_array_equal(V, E.T001_V)
    np.testing.assert_array_equal(Q, E.T001_Q)


def test_t001_scores_of_query_1():
    np.testing.assert_array_equal(E.T001_Q[0] @ E.T001_K.T, E.T001_SCORES_QUERY1)  # [2, 4, 4]
    steps = attention_steps(E.T001_Q, E.T001_K, E.T001_V, scale=1.0)  # the text does not scale
    np.testing.assert_array_equal(steps["scores"][0], E.T001_SCORES_QUERY1)


def test_t001_exact_softmax_and_output_beside_the_texts_rounding():
    w = softmax(E.T001_SCORES_QUERY1)  # unscaled, as the text
    out = w @ E.T001_V
    # exact, to 4 decimals: [0.0634, 0.4683, 0.4683] and [1.9366, 6.6831, 1.5951]
    assert_matches_printed(w, E.T001_SOFTMAX_QUERY1_EXACT_4DP, decimals=4)
    assert_matches_printed(out, E.T001_OUTPUT1_EXACT_4DP, decimals=4)
    out_sdpa, w_sdpa = scaled_dot_product_attention(E.T001_Q, E.T001_K, E.T001_V, scale=1.0)
    np.testing.assert_array_equal(w_sdpa[0], w)
    np.testing.assert_allclose(out_sdpa[0], out, rtol=1e-15)
    # the text's [0.0, 0.5, 0.5] and [2.0, 7.0, 1.5] are NOT the exact values
    assert np.abs(w - E.T001_SOFTMAX_QUERY1_AS_PRINTED).max() > 0.06  # 0.0634 is not 0
    assert np.abs(out - E.T001_OUTPUT1_AS_PRINTED).max() > 0.06
    # ... nor the exact weights rounded to one decimal, which would be [0.1, 0.5, 0.5] (sum 1.1)
    np.testing.assert_array_equal(np.round(w, 1), [0.1, 0.5, 0.5])
    assert not np.array_equal(np.round(w, 1), E.T001_SOFTMAX_QUERY1_AS_PRINTED)


def test_t001_texts_output_follows_from_its_rounded_weights():
    weighted = E.T001_SOFTMAX_QUERY1_AS_PRINTED[:, None] * E.T001_V  # (3, 3): weight_j * v_j
    np.testing.assert_array_equal(weighted, E.T001_WEIGHTED_VALUES_AS_PRINTED)  # halves: exact
    np.testing.assert_array_equal(weighted.sum(axis=0), E.T001_OUTPUT1_AS_PRINTED)
    np.testing.assert_array_equal(E.T001_SOFTMAX_QUERY1_AS_PRINTED @ E.T001_V, E.T001_OUTPUT1_AS_PRINTED)


# ===================================================================================== text 002
#
# The text draws W with an unseeded np.random.normal and prints them to 8 decimals, so the printed
# W are all we have: each is within EPS_W = 0.5e-8 of the W the text used. Recomputing from them
# therefore cannot reproduce all 8 printed decimals. Tolerance, derived by propagating EPS_W
# (worst case, all terms with absolute values, including the products of two errors):
#   Q = X W_q:           dQ = |X| @ EPS_W                 (X is 0/1 with <= 2 ones per row: <= 1e-8)
#   S = Q Kᵀ:            dS = dQ |K|ᵀ + |Q| dKᵀ + dQ dKᵀ
#   w = softmax(S):      |dw_ij| <= w_ij * expm1(2 max_j dS_ij)   (each w_ij moves by a factor in
#                                                                 [exp(-2Δ), exp(2Δ)], Δ = max_j dS_ij)
#   out = w V:           d_out = dw |V| + w dV + dw dV
# plus HALF = 0.5e-8 because the text's own results are printed to 8 decimals, plus 1e-15 for our
# own float64 rounding. These bounds are 1e-8..1e-7; the observed differences are ~1e-8.

EPS_W = 0.5 * 10.0**-E.T002_DECIMALS
HALF = 0.5 * 10.0**-E.T002_DECIMALS
FLOAT_SLACK = 1e-15


def _t002_recomputed_with_bounds():
    X = E.T002_X
    Q, K, V = project_qkv(X, E.T002_WQ, E.T002_WK, E.T002_WV)  # (4, 2) each
    dQ = np.abs(X) @ np.full(E.T002_WQ.shape, EPS_W)  # (4, 2)
    dK = np.abs(X) @ np.full(E.T002_WK.shape, EPS_W)
    dV = np.abs(X) @ np.full(E.T002_WV.shape, EPS_W)
    S = Q @ K.T  # (4, 4) unscaled, as the text
    dS = dQ @ np.abs(K).T + np.abs(Q) @ dK.T + dQ @ dK.T  # (4, 4)
    out, w = scaled_dot_product_attention(Q, K, V, scale=1.0)
    dw = w * np.expm1(2 * dS.max(axis=-1, keepdims=True))  # (4, 4)
    dout = dw @ np.abs(V) + w @ dV + dw @ dV  # (4, 2)
    return {"Q": (Q, dQ), "S": (S, dS), "w": (w, dw), "out": (out, dout), "V": (V, dV)}


@pytest.mark.parametrize(
    ("name", "printed"),
    [("Q", E.T002_Q), ("S", E.T002_SCORES), ("w", E.T002_WEIGHTS), ("out", E.T002_OUTPUT)],
)
def test_t002_recomputed_from_printed_weights_within_derived_bound(name, printed):
    value, bound = _t002_recomputed_with_bounds()[name]
    diff = np.abs(value - printed)
    assert (diff <= bound + HALF + FLOAT_SLACK).all(), f"{name}: {diff.max():.3g} > bound"
    assert bound.max() < 2e-7  # the bound is small: the comparison still means something


def test_t002_the_rounded_weights_shift_the_8th_decimal():
    # The text's numbers are NOT reproducible to all 8 printed decimals from its printed W: Q, the
    # weights and the output each miss by more than half a unit (~1e-8), within the bound above.
    r = _t002_recomputed_with_bounds()
    for name, printed in (("Q", E.T002_Q), ("w", E.T002_WEIGHTS), ("out", E.T002_OUTPUT)):
        diff = np.abs(r[name][0] - printed).max()
        assert HALF < diff < 2e-8, f"{name}: {diff:.3g}"
    # and each value agrees with the printed one to 7 decimals
    assert_matches_printed(r["Q"][0], E.T002_Q, decimals=7)
    assert_matches_printed(r["w"][0], E.T002_WEIGHTS, decimals=7)
    assert_matches_printed(r["out"][0], E.T002_OUTPUT, decimals=7)


def test_t002_output_from_the_printed_weights():
    # out = (printed weights) @ V: each printed weight is within HALF of the text's, V within dV:
    # |d_out| <= HALF * sum_j |V_j| + w @ dV + HALF * sum_j dV_j, plus HALF for printing the output.
    r = _t002_recomputed_with_bounds()
    V, dV = r["V"]
    out = E.T002_WEIGHTS @ V  # (4, 4) @ (4, 2) -> (4, 2)
    bound = HALF * np.abs(V).sum(axis=0) + np.abs(E.T002_WEIGHTS) @ dV + HALF * dV.sum(axis=0) + HALF
    diff = np.abs(out - E.T002_OUTPUT)
    assert (diff <= bound + FLOAT_SLACK).all(), f"{diff.max():.3g}"
    assert diff.max() > HALF  # again ~1e-8: not reproducible to the last printed digit
    np.testing.assert_allclose(
        E.T002_WEIGHTS.sum(axis=-1), 1.0, rtol=0, atol=4 * HALF
    )  # printed rows sum to 1


def test_t002_is_unscaled_and_naive_softmax_is_harmless_here():
    r = _t002_recomputed_with_bounds()
    S = r["S"][0]
    # |S| < 3: exp cannot overflow, so the text's naive softmax equals the stable one (rtol 1e-14)
    np.testing.assert_allclose(naive_softmax(S), softmax(S), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(r["w"][0], softmax(S))
    # with the 1/sqrt(2) scaling the text does not use, the weights would be far from the printed ones
    _, w_scaled = scaled_dot_product_attention(*project_qkv(E.T002_X, E.T002_WQ, E.T002_WK, E.T002_WV))
    assert np.abs(w_scaled - E.T002_WEIGHTS).max() > 1e-2


def test_t002_xavier_weights_have_the_texts_shape_and_std():
    rng = np.random.default_rng(2)
    W = xavier_normal(E.T002_N_IN, E.T002_N_OUT, rng)
    assert W.shape == E.T002_WQ.shape == (3, 2)
    # the text's draw: np.random.normal(0, sqrt(2 / (n_in + n_out)), (n_in, n_out)), here from a seeded generator
    text_way = np.random.default_rng(2).normal(0, math.sqrt(2.0 / (E.T002_N_IN + E.T002_N_OUT)), (3, 2))
    np.testing.assert_array_equal(W, text_way)


def test_t002_multi_head_loop_shapes_and_equivalence():
    h, d_model, d_k = E.T002_MH_N_HEADS, E.T002_MH_D_MODEL, E.T002_MH_D_K
    X = E.T002_X
    rng = np.random.default_rng(2002)
    W_q_heads = E.T002_MH_WQ_HEADS  # (h, d_model, d_k), printed by the text
    assert W_q_heads.shape == (h, d_model, d_k)
    W_k_heads = np.stack([xavier_normal(d_model, d_k, rng) for _ in range(h)])  # (h, d_model, d_k)
    W_v_heads = np.stack([xavier_normal(d_model, d_k, rng) for _ in range(h)])  # (h, d_model, d_v)
    W_o = xavier_normal(h * d_k, d_model, rng)  # (h * d_v, d_model)

    # the text's loop: one unscaled attention per head
    heads = np.stack(
        [single_head_attention(X, W_q_heads[i], W_k_heads[i], W_v_heads[i], scale=1.0)[0] for i in range(h)]
    )  # (h, T, d_v)
    assert heads.shape == E.T002_MH_HEAD_OUTPUTS_SHAPE == (4, 4, 2)
    concat = np.concatenate(list(heads), axis=1)  # (T, h * d_v)
    assert concat.shape == E.T002_MH_CONCAT_SHAPE == (4, 8)
    np.testing.assert_array_equal(merge_heads(heads), concat)
    final = concat @ W_o  # (T, d_model)
    assert final.shape == E.T002_MH_FINAL_SHAPE == (4, 3)

    # the same heads from one wide matrix per role: head i = columns [2i, 2i+2)
    def wide(W_heads):
        return np.concatenate(list(W_heads), axis=1)  # (d_model, h * d_k)

    scale = 1.0 / math.sqrt(d_k)  # multi_head_attention scales by 1/sqrt(d_head); the text does not
    heads_scaled = np.stack(
        [single_head_attention(X, W_q_heads[i], W_k_heads[i], W_v_heads[i], scale=scale)[0] for i in range(h)]
    )
    out, w = multi_head_attention(X, wide(W_q_heads), wide(W_k_heads), wide(W_v_heads), n_heads=h, W_o=W_o)
    assert w.shape == (h, 4, 4)
    # batched vs looped float64: rtol 1e-12
    np.testing.assert_allclose(out, merge_heads(heads_scaled) @ W_o, rtol=1e-12, atol=1e-14)
    # multi_head_attention with W_q pre-multiplied by sqrt(d_k) undoes its scale: the text's heads
    out_unscaled, _ = multi_head_attention(
        X, wide(W_q_heads) * math.sqrt(d_k), wide(W_k_heads), wide(W_v_heads), n_heads=h
    )
    np.testing.assert_allclose(out_unscaled, concat, rtol=1e-12, atol=1e-14)


# ===================================================================================== text 003


def test_t003_scores_weights_output():
    Q, K, V = project_qkv(E.T003_X, E.T003_WQ, E.T003_WK, E.T003_WV)
    assert Q.shape[-1] == E.T003_HIDDEN_SIZE == 3
    steps = attention_steps(Q, K, V)  # scale None: 1/sqrt(3), the text's / math.sqrt(hidden_size)
    assert_matches_printed(steps["scaled"], E.T003_SCORES, decimals=E.T003_DECIMALS)
    assert_matches_printed(steps["weights"], E.T003_WEIGHTS, significant=E.T003_WEIGHTS_SIGNIFICANT)
    assert_matches_printed(steps["output"], E.T003_OUTPUT, decimals=E.T003_DECIMALS)
    out, w = single_head_attention(E.T003_X, E.T003_WQ, E.T003_WK, E.T003_WV)
    np.testing.assert_array_equal(w, steps["weights"])
    np.testing.assert_array_equal(out, steps["output"])
    # one head of multi_head_attention is the same computation (d_head = d_model = 3)
    out_mh, w_mh = multi_head_attention(E.T003_X, E.T003_WQ, E.T003_WK, E.T003_WV, n_heads=1)
    assert_matches_printed(w_mh[0], E.T003_WEIGHTS, significant=E.T003_WEIGHTS_SIGNIFICANT)
    assert_matches_printed(out_mh, E.T003_OUTPUT, decimals=E.T003_DECIMALS)


def test_t003_is_the_t001_example_scaled():
    steps = attention_steps(E.T001_Q, E.T001_K, E.T001_V, scale=1.0 / math.sqrt(E.T003_HIDDEN_SIZE))
    np.testing.assert_allclose(steps["scaled"][0], np.array(E.T001_SCORES_QUERY1) / math.sqrt(3), rtol=1e-15)
    assert_matches_printed(steps["scaled"], E.T003_SCORES, decimals=E.T003_DECIMALS)


def test_t003_multi_head_shapes():
    s = E.T003_SHAPES
    rng = np.random.default_rng(3)
    x = rng.random((s["batch_size"], s["seq_len"], s["input_size"]))  # (32, 20, 10) like torch.rand
    W_q, W_k, W_v = (xavier_normal(s["input_size"], s["d_model"], rng) for _ in range(3))  # (10, 16)
    out, w = multi_head_attention(x, W_q, W_k, W_v, n_heads=s["num_attention_heads"])
    assert out.shape == s["result_shape"] == (32, 20, 16)
    assert w.shape == s["scores_shape"] == (32, 2, 20, 20)
    assert s["d_model"] // s["num_attention_heads"] == s["d_k"] == 8
    assert split_heads(x @ W_q, s["num_attention_heads"]).shape == (32, 2, 20, 8)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-14)


def test_t003_divisibility_error_says_what_the_text_says():
    # the text's message, its two %d left out: "is not a multiple of the number of attention heads"
    fragment = re.search(r"%d (.*?)%d", E.T003_HEADS_ERROR).group(1).strip()
    assert fragment == "is not a multiple of the number of attention heads"
    rng = np.random.default_rng(3)
    x = rng.random((2, 5, 10))
    W = xavier_normal(10, 15, rng)  # d_model = 15 with 2 heads
    with pytest.raises(ValueError, match=re.escape(fragment)) as info:
        multi_head_attention(x, W, W, W, n_heads=2)
    assert "15" in str(info.value) and "heads 2" in str(info.value)
    with pytest.raises(ValueError, match=re.escape(fragment)):
        split_heads(x @ W, 2)


def test_t003_patches_are_the_4x4_blocks_of_the_image_row_major():
    p = E.T003_PATCH_SIZE
    img = E.T003_IMAGE  # (8, 8)
    blocks = img.reshape(8 // p, p, 8 // p, p).swapaxes(1, 2).reshape(-1, p * p)  # (4 patches, 16)
    np.testing.assert_array_equal(blocks, E.T003_PATCHES)
    # the same, spelled out: X1 top-left, X2 top-right, X3 bottom-left, X4 bottom-right
    np.testing.assert_array_equal(E.T003_PATCHES[1], img[0:4, 4:8].ravel())
    np.testing.assert_array_equal(E.T003_PATCHES[2], img[4:8, 0:4].ravel())


def test_t003_identity_attention_between_patches():
    P = E.T003_PATCHES  # (4, 16)
    identity = np.eye(16)
    out, w = single_head_attention(P, identity, identity, identity)  # scale 1/sqrt(16) = 1/4
    out_mh, w_mh = multi_head_attention(P[None], identity, identity, identity, n_heads=1)
    np.testing.assert_allclose(out_mh[0], out, rtol=1e-15)
    np.testing.assert_allclose(w_mh[0, 0], w, rtol=1e-15)
    # X1 == X3 and X2 == X4, so their rows (and columns) of the weights are equal, and their outputs
    np.testing.assert_array_equal(P[0], P[2])
    np.testing.assert_array_equal(P[1], P[3])
    np.testing.assert_array_equal(w[0], w[2])
    np.testing.assert_array_equal(w[1], w[3])
    np.testing.assert_array_equal(w[:, 0], w[:, 2])
    np.testing.assert_array_equal(w[:, 1], w[:, 3])
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out[1], out[3])
    # the dot products: X1 shares its 4 ones with every patch; X2 has 6 ones
    np.testing.assert_array_equal(P @ P.T, [[4, 4, 4, 4], [4, 6, 4, 6], [4, 4, 4, 4], [4, 6, 4, 6]])
    # so X1 attends uniformly (scores all 1) and its output is the mean patch
    np.testing.assert_array_equal(w[0], [0.25, 0.25, 0.25, 0.25])
    np.testing.assert_allclose(out[0], P.mean(axis=0), rtol=0, atol=1e-15)
    # and X2 weighs X2, X4 by e^(6/4) against e^(4/4) for X1, X3
    a = 1.0 / (2.0 + 2.0 * math.exp(0.5))
    np.testing.assert_allclose(w[1], [a, a * math.exp(0.5), a, a * math.exp(0.5)], rtol=1e-15)


# ===================================================================================== text 004


def test_t004_qkv_are_the_t001_projections():
    Q, K, V = project_qkv(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)
    np.testing.assert_array_equal(E.T004_Q, Q)
    np.testing.assert_array_equal(E.T004_K, K)
    np.testing.assert_array_equal(E.T004_V, V)


def test_t004_unscaled_scores_and_naive_equals_stable():
    steps = attention_steps(E.T004_Q, E.T004_K, E.T004_V, scale=1.0)  # the text does not scale
    np.testing.assert_array_equal(steps["scores"], [[2, 4, 4], [4, 16, 12], [4, 12, 10]])
    S = steps["scores"]
    # the text's soft_max prints np.sum(np.exp(z), axis=-1); the text shows no output, so there is
    # nothing printed to compare, but the row sums follow: sum exp = exp(max) * (sum of exp(shifted))
    np.testing.assert_allclose(
        np.exp(S).sum(axis=-1), np.exp(S.max(axis=-1)) * steps["row_sums"][:, 0], rtol=1e-14
    )
    # scores <= 16: exp(16) ≈ 8.9e6 is far from overflow, so naive == stable to rounding (rtol 1e-14)
    np.testing.assert_allclose(naive_softmax(S), steps["weights"], rtol=1e-14, atol=0)
    np.testing.assert_allclose(steps["output"], naive_softmax(S) @ E.T004_V, rtol=1e-14)


def test_t004_768_split_into_8_heads_of_96_every_shape():
    mh, shapes = E.T004_MH, E.T004_MH_SHAPES
    T, h, d = mh["values_length"], mh["num_attention_heads"], mh["hidden_size"]
    assert d // h == mh["attention_head_size"] == 96
    rng = np.random.default_rng(4)
    Q, K, V = (rng.random((T, d)) for _ in range(3))  # (3, 768), like np.random.rand
    Qh, Kh, Vh = split_heads(Q, h), split_heads(K, h), split_heads(V, h)  # (h, T, 96)
    reshaped = np.swapaxes(Qh, 0, 1)  # (T, h, 96): the text's np.reshape before its transpose
    assert reshaped.shape == shapes["reshaped"]
    np.testing.assert_array_equal(reshaped, np.reshape(Q, (T, h, d // h)))
    assert Qh.shape == shapes["transposed"]
    np.testing.assert_array_equal(Qh, np.transpose(np.reshape(Q, (T, h, d // h)), (1, 0, 2)))
    assert np.swapaxes(Kh, -1, -2).shape == shapes["key_transposed"]
    out, w = scaled_dot_product_attention(Qh, Kh, Vh)  # scale 1/sqrt(96), as the text
    assert w.shape == shapes["scores"]
    assert out.shape == shapes["out"]
    assert np.swapaxes(out, 0, 1).shape == shapes["out_transposed"]
    merged = merge_heads(out)
    assert merged.shape == shapes["merged"]
    # the text's own pipeline (naive softmax; Q, K, V in [0, 1) keep exp small) gives the same numbers
    text_w = naive_softmax(Qh @ np.transpose(Kh, (0, 2, 1)) / np.sqrt(d // h))
    text_out = np.reshape(np.transpose(text_w @ Vh, (1, 0, 2)), (T, d))
    np.testing.assert_allclose(merged, text_out, rtol=1e-12)  # the same float64 sums, reordered
