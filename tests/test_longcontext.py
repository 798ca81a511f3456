"""Tests of helpers/longcontext.py: sliding windows, latent attention (MLA), linear attention.

Property tests (hypothesis) for each identity notebook 10 asserts: the band mask equals decoding with a
rolling KVCache(window=w); window >= T is the causal mask; L windowed layers reach exactly L·(w-1)
tokens back; absorbed latent attention equals the plain one; latent attention is multi-head attention
with W_k = W_dkv W_uk, W_v = W_dkv W_uv; linear attention's parallel form equals its recurrent form.
Then every bad input, with the words its message must contain. Sizes are small (T <= 7, widths <= 6)
and every property test is derandomized; each tolerance is stated beside its assertion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from helpers import causal_mask, multi_head_attention
from helpers.generation import KVCache, decode_step, grouped_query_attention, kv_cache_bytes
from helpers.longcontext import (
    absorbed_matrices,
    elu_plus_one,
    latent_attention,
    latent_cache_bytes,
    linear_attention,
    linear_attention_recurrent,
    linear_attention_weights,
    linear_state_bytes,
    low_rank_kv,
    sliding_window_mask,
    window_reach,
)
from helpers.sentence import embeddings, two_heads

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True, database=None)
TOL = 1e-12  # float64, inputs in [-2, 2], at most 7 tokens and 6-wide products: rounding is ~1e-15


def floats(lo: float = -2.0, hi: float = 2.0) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def arrays(*shape: int) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=floats())


# ===================================================================================== sliding windows


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 12))
def test_band_mask_is_its_definition_and_every_row_keeps_min_i_plus_1_w_keys(T, w):
    M = sliding_window_mask(T, w)
    assert M.shape == (T, T) and M.dtype == bool
    for i in range(T):
        for j in range(T):
            assert M[i, j] == (i - w < j <= i)
    np.testing.assert_array_equal(M.sum(axis=1), np.minimum(np.arange(T) + 1, w))
    assert M.diagonal().all()  # a query always sees itself: no row is ever empty


@SETTINGS
@given(st.integers(1, 9), st.integers(0, 5))
def test_a_window_of_at_least_T_is_the_causal_mask(T, extra):
    np.testing.assert_array_equal(sliding_window_mask(T, T + extra), causal_mask(T))


@SETTINGS
@given(st.integers(1, 14), st.integers(1, 5), st.integers(1, 4))
def test_L_windowed_layers_reach_exactly_L_times_w_minus_1_tokens_back(T, w, L):
    R = window_reach(T, w, L)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    np.testing.assert_array_equal(R, (j <= i) & (j >= i - L * (w - 1)))
    np.testing.assert_array_equal(window_reach(T, w, 1), sliding_window_mask(T, w))


@st.composite
def gqa_setups(draw):
    T = draw(st.integers(1, 7))
    d_in = draw(st.integers(1, 4))
    g = draw(st.sampled_from([1, 2]))
    r = draw(st.sampled_from([1, 2]))
    d_head = draw(st.integers(1, 3))
    window = draw(st.integers(1, 9))
    X = draw(arrays(T, d_in))
    W_q = draw(arrays(d_in, g * r * d_head))
    W_k = draw(arrays(d_in, g * d_head))
    W_v = draw(arrays(d_in, g * d_head))
    return X, W_q, W_k, W_v, g * r, g, d_head, window


@SETTINGS
@given(gqa_setups())
def test_band_mask_attention_equals_decoding_with_a_rolling_cache(setup):
    X, W_q, W_k, W_v, h, g, d_head, w = setup
    T = X.shape[0]
    out, weights = grouped_query_attention(X, W_q, W_k, W_v, h, g, mask=sliding_window_mask(T, w))
    cache = KVCache(g, d_head, window=w)
    for t in range(T):
        o_t, w_t = decode_step(X[t], cache, W_q, W_k, W_v, h, g)  # (h·d_head,), (h, len(cache))
        assert len(cache) == min(t + 1, w)  # the cache stops growing at w
        np.testing.assert_allclose(o_t, out[t], rtol=0, atol=TOL)
        lo = max(0, t - w + 1)  # the window's first key
        np.testing.assert_allclose(w_t, weights[:, t, lo : t + 1], rtol=0, atol=TOL)
        np.testing.assert_array_equal(weights[:, t, :lo], 0.0)  # keys that left the window: exactly 0


# ===================================================================================== latent attention


@st.composite
def latent_setups(draw):
    lead = draw(st.sampled_from([(), (2,)]))
    T = draw(st.integers(1, 6))
    d_in = draw(st.integers(1, 5))
    h = draw(st.integers(1, 3))
    d_head = draw(st.integers(1, 3))
    d_v = draw(st.integers(1, 3))
    d_c = draw(st.integers(1, 4))
    X = draw(arrays(*lead, T, d_in))
    W_q = draw(arrays(d_in, h * d_head))
    W_dkv = draw(arrays(d_in, d_c))
    W_uk = draw(arrays(d_c, h * d_head))
    W_uv = draw(arrays(d_c, h * d_v))
    W_o = draw(st.none() | arrays(h * d_v, draw(st.integers(1, 4))))
    mask = draw(st.sampled_from([None, "causal", "window"]))
    mask = {None: None, "causal": causal_mask(T), "window": sliding_window_mask(T, 2)}[mask]
    return X, W_q, W_dkv, W_uk, W_uv, h, W_o, mask


@SETTINGS
@given(latent_setups())
def test_absorbed_latent_attention_equals_the_plain_one(setup):
    X, W_q, W_dkv, W_uk, W_uv, h, W_o, mask = setup
    plain = latent_attention(X, W_q, W_dkv, W_uk, W_uv, h, W_o=W_o, mask=mask)
    absorbed = latent_attention(X, W_q, W_dkv, W_uk, W_uv, h, W_o=W_o, mask=mask, absorb=True)
    assert plain[0].shape == absorbed[0].shape and plain[1].shape == absorbed[1].shape
    np.testing.assert_allclose(absorbed[1], plain[1], rtol=0, atol=TOL)  # the attention weights
    np.testing.assert_allclose(absorbed[0], plain[0], rtol=0, atol=1e-11)  # outputs up to ~50 in size


@SETTINGS
@given(latent_setups())
def test_latent_attention_is_multi_head_attention_with_factored_W_k_and_W_v(setup):
    X, W_q, W_dkv, W_uk, W_uv, h, W_o, mask = setup
    out, weights = latent_attention(X, W_q, W_dkv, W_uk, W_uv, h, W_o=W_o, mask=mask)
    if W_q.shape[1] == W_uv.shape[1]:  # multi_head_attention needs d_v = d_head
        ref = multi_head_attention(X, W_q, W_dkv @ W_uk, W_dkv @ W_uv, h, W_o=W_o, mask=mask)
        np.testing.assert_allclose(weights, ref[1], rtol=0, atol=TOL)
        np.testing.assert_allclose(out, ref[0], rtol=0, atol=1e-11)
    assert weights.shape == (*X.shape[:-1][:-1], h, X.shape[-2], X.shape[-2])
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-14)


def test_the_absorbed_path_needs_only_the_latent_and_the_absorbed_matrices():
    """By hand from C = X W_dkv and absorbed_matrices only (no K, no V): the helper's absorbed result."""
    rng = np.random.default_rng(0)
    X, W_q, W_dkv = rng.normal(size=(5, 4)), rng.normal(size=(4, 6)), rng.normal(size=(4, 2))
    W_uk, W_uv, W_o = rng.normal(size=(2, 6)), rng.normal(size=(2, 4)), rng.normal(size=(4, 3))
    A_q, A_o = absorbed_matrices(W_q, W_uk, W_uv, 2, W_o=W_o)  # (2, 4, 2), (2, 2, 3)
    assert A_q.shape == (2, 4, 2) and A_o.shape == (2, 2, 3)
    C = X @ W_dkv  # (5, 2) the cache
    out = np.zeros((5, 3))
    for i in range(2):
        s = (X @ A_q[i]) @ C.T / math.sqrt(3)  # (5, 2) @ (2, 5): d_head = 6 / 2 = 3
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        out += p @ C @ A_o[i]  # (5, 5) @ (5, 2) @ (2, 3)
    got, _ = latent_attention(X, W_q, W_dkv, W_uk, W_uv, 2, W_o=W_o, absorb=True)
    np.testing.assert_allclose(got, out, rtol=0, atol=TOL)
    _, A_plain = absorbed_matrices(W_q, W_uk, W_uv, 2)  # without W_o: W_uv per head, (2, 2, 2)
    np.testing.assert_array_equal(A_plain, W_uv.reshape(2, 2, 2).swapaxes(0, 1))


def test_low_rank_kv_is_exact_at_the_rank_and_the_best_below_it():
    X = embeddings()  # (8, 6)
    _, W_k, W_v = two_heads()  # (6, 4) each
    KV = X @ np.concatenate([W_k, W_v], axis=1)  # (8, 8)
    rank = np.linalg.matrix_rank(KV)
    assert rank == 2  # both heads' keys and values read only "noun" and "animal"
    s = np.linalg.svd(KV, compute_uv=False)
    for d_c in range(1, 9):
        W_dkv, W_uk, W_uv = low_rank_kv(W_k, W_v, d_c, X=X)
        assert W_dkv.shape == (6, d_c) and W_uk.shape == (d_c, 4) and W_uv.shape == (d_c, 4)
        approx = X @ W_dkv @ np.concatenate([W_uk, W_uv], axis=1)  # (8, 8)
        err = np.linalg.norm(KV - approx)
        np.testing.assert_allclose(err, np.sqrt((s[d_c:] ** 2).sum()), rtol=0, atol=1e-12)  # Eckart-Young
    W_dkv, W_uk, _ = low_rank_kv(W_k, W_v, 2)  # without X: the factors of [W_k | W_v] itself
    np.testing.assert_allclose(W_dkv @ W_uk, W_k, rtol=0, atol=1e-12)


def test_cache_byte_counts_by_hand():
    assert latent_cache_bytes(60, 512, 1, d_rope=64) == 60 * 576 * 2
    assert latent_cache_bytes(2, 3, 5, batch=4, bytes_per_value=4) == 2 * 3 * 5 * 4 * 4
    assert kv_cache_bytes(60, 128, 128, 1) == 2 * 60 * 128 * 128 * 2
    assert linear_state_bytes(64, 64) == (64 * 64 + 64) * 2
    assert linear_state_bytes(3, 5, n_heads=2, n_layers=4, batch=3, bytes_per_value=8) == 4 * 2 * (15 + 3) * 3 * 8


# ===================================================================================== linear attention


@st.composite
def qkv(draw):
    lead = draw(st.sampled_from([(), (2,), (2, 1)]))
    T, d_k, d_v = draw(st.integers(1, 7)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return draw(arrays(*lead, T, d_k)), draw(arrays(*lead, T, d_k)), draw(arrays(*lead, T, d_v))


@SETTINGS
@given(qkv())
def test_linear_attention_parallel_equals_recurrent(args):
    Q, K, V = args
    par, rec = linear_attention(Q, K, V), linear_attention_recurrent(Q, K, V)
    assert par.shape == rec.shape == V.shape
    np.testing.assert_allclose(rec, par, rtol=0, atol=TOL)


@SETTINGS
@given(qkv(), st.booleans())
def test_linear_attention_rows_are_its_formula(args, causal):
    Q, K, V = args
    W = linear_attention_weights(Q, K, causal=causal)
    np.testing.assert_allclose(W.sum(axis=-1), 1.0, rtol=0, atol=1e-14)
    assert (W >= 0).all()
    if causal:
        assert (W[..., np.triu_indices(Q.shape[-2], 1)[0], np.triu_indices(Q.shape[-2], 1)[1]] == 0).all()
    np.testing.assert_allclose(linear_attention(Q, K, V, causal=causal), W @ V, rtol=0, atol=TOL)
    T = Q.shape[-2]
    i = T - 1  # the last row, written out: φ(q_i) Σ_j φ(k_j)ᵀ v_j / φ(q_i) · Σ_j φ(k_j)
    fq, fk = elu_plus_one(Q[..., i, :]), elu_plus_one(K)
    num = np.einsum("...k,...tk,...tv->...v", fq, fk, V)
    den = np.einsum("...k,...tk->...", fq, fk)[..., None]
    np.testing.assert_allclose(linear_attention(Q, K, V, causal=causal)[..., i, :], num / den, rtol=0, atol=TOL)


def test_elu_plus_one_is_positive_and_continuous_at_0():
    x = np.array([-800.0, -1.0, 0.0, 1e-300, 1.0, 5.0])
    np.testing.assert_allclose(elu_plus_one(x), [0.0, math.exp(-1), 1.0, 1.0, 2.0, 6.0], rtol=1e-15, atol=0)
    assert (elu_plus_one(np.linspace(-30, 30, 101)) > 0).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_elu_plus_one_is_its_definition_in_a_new_array_and_leaves_x_alone(dtype):
    x = (np.random.default_rng(3).normal(size=(5, 7)) * 4).astype(dtype)
    x[0, :3] = [0.0, -0.0, 100.0]
    before = x.copy()
    phi = elu_plus_one(x)
    expected = np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))  # the definition, written out
    assert phi.dtype == dtype and not np.shares_memory(phi, x)
    np.testing.assert_array_equal(phi, expected)  # exactly: the same operations on the same numbers
    np.testing.assert_array_equal(x, before)
    assert elu_plus_one(-1.0).shape == () and float(elu_plus_one(2.0)) == 3.0  # 0-d input: a 0-d array


def test_recurrent_form_peaks_at_three_T_by_d_k_arrays_and_leaves_its_inputs_alone():
    from helpers.measure import peak_bytes

    rng = np.random.default_rng(4)
    T, d_k = 4096, 16
    Q, K, V = (rng.normal(size=(T, d_k)) for _ in range(3))
    copies = [a.copy() for a in (Q, K, V)]
    one = T * d_k * 8  # bytes of one (T, d_k) float64 array
    peak = peak_bytes(linear_attention_recurrent, Q, K, V)
    # φ(Q), φ(K) and the output, plus the (d_k, d_v) state and one step's temporaries (~10 KB here);
    # copies of V or of φ would add a whole array (the earlier version peaked at 4.1 arrays)
    assert 3 * one <= peak <= 3 * one + 0.1 * one, peak / one
    for a, b in zip((Q, K, V), copies, strict=True):
        np.testing.assert_array_equal(a, b)


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(6, 3)).astype(np.float32) for _ in range(3))
    assert linear_attention(Q, K, V).dtype == np.float32
    assert linear_attention_recurrent(Q, K, V).dtype == np.float32


# ===================================================================================== bad input

rng0 = np.random.default_rng(1)
X5 = rng0.normal(size=(5, 4))
WQ, WDKV, WUK, WUV = rng0.normal(size=(4, 6)), rng0.normal(size=(4, 2)), rng0.normal(size=(2, 6)), rng0.normal(size=(2,
                                                                                                                     6))
Q6, K6, V6 = (rng0.normal(size=(6, 3)) for _ in range(3))

BAD = [
    ("window 0", lambda: sliding_window_mask(5, 0), ValueError, "window must be at least 1, got 0"),
    ("window -2", lambda: sliding_window_mask(5, -2), ValueError, "window must be at least 1"),
    ("window 2.5", lambda: sliding_window_mask(5, 2.5), TypeError, "window must be an integer, got 2.5"),
    ("window True", lambda: sliding_window_mask(5, True), TypeError, "window must be an integer"),
    ("window '3'", lambda: sliding_window_mask(5, "3"), TypeError, "window must be an integer"),
    ("T 0", lambda: sliding_window_mask(0, 3), ValueError, "T must be at least 1"),
    ("n_layers 0", lambda: window_reach(5, 2, 0), ValueError, "n_layers must be at least 1"),
    ("reach window 0", lambda: window_reach(5, 0, 2), ValueError, "window must be at least 1"),
    ("W_uk rows", lambda: latent_attention(X5, WQ, WDKV, rng0.normal(size=(3, 6)), WUV, 2), ValueError,
     "the latent widths do not chain: W_dkv has shape (4, 2) (2 latent columns) but W_uk has shape (3, 6)"),
    ("W_uv rows", lambda: latent_attention(X5, WQ, WDKV, WUK, rng0.normal(size=(1, 6)), 2), ValueError,
     "W_uv has shape (1, 6) (1 rows); W_uv needs 2 rows"),
    ("W_dkv rows", lambda: latent_attention(X5, WQ, rng0.normal(size=(3, 2)), WUK, WUV, 2), ValueError,
     "W_dkv has shape (3, 2) but X has 4 features"),
    ("W_q rows", lambda: latent_attention(X5, rng0.normal(size=(5, 6)), WDKV, WUK, WUV, 2), ValueError,
     "W_q has shape (5, 6) but X has 4 features"),
    ("heads W_q", lambda: latent_attention(X5, WQ, WDKV, WUK, WUV, 4), ValueError,
     "W_q has shape (4, 6): its 6 columns do not split into n_heads = 4 heads"),
    ("heads W_uv", lambda: latent_attention(X5, WQ, WDKV, WUK, rng0.normal(size=(2, 5)), 3), ValueError,
     "W_uv has shape (2, 5): its 5 columns do not split into n_heads = 3"),
    ("W_uk width", lambda: latent_attention(X5, WQ, WDKV, rng0.normal(size=(2, 4)), WUV, 2), ValueError,
     "W_q has shape (4, 6) but W_uk has shape (2, 4)"),
    ("n_heads 0", lambda: latent_attention(X5, WQ, WDKV, WUK, WUV, 0), ValueError, "n_heads must be at least 1"),
    ("n_heads 1.5", lambda: latent_attention(X5, WQ, WDKV, WUK, WUV, 1.5), TypeError, "n_heads must be an integer"),
    ("W_o rows", lambda: latent_attention(X5, WQ, WDKV, WUK, WUV, 2, W_o=np.ones((4, 3))), ValueError,
     "W_o has shape (4, 3) but the concatenated heads have 6 columns"),
    ("absorb 1", lambda: latent_attention(X5, WQ, WDKV, WUK, WUV, 2, absorb=1), TypeError,
     "absorb must be True or False, got 1"),
    ("latent mask", lambda: latent_attention(X5, WQ, WDKV, WUK, WUV, 2, mask=causal_mask(4)), ValueError,
     "mask has shape (4, 4), which does not broadcast"),
    ("latent X 1-D", lambda: latent_attention(np.ones(4), WQ, WDKV, WUK, WUV, 2), ValueError,
     "X must have at least 2 dimensions"),
    ("absorbed_matrices chain", lambda: absorbed_matrices(WQ, WUK, rng0.normal(size=(3, 6)), 2), ValueError,
     "the latent widths do not chain: W_uk has shape (2, 6) (2 latent rows) but W_uv has shape (3, 6)"),
    ("low_rank d_c 0", lambda: low_rank_kv(WQ, WQ, 0), ValueError, "d_c must be at least 1"),
    ("low_rank d_c 13", lambda: low_rank_kv(WQ, WQ, 13), ValueError, "d_c is 13 but keys and values have only 12"),
    ("low_rank rows", lambda: low_rank_kv(WQ, np.ones((3, 6)), 2), ValueError,
     "W_k has shape (4, 6) but W_v has shape (3, 6)"),
    ("Q/K width", lambda: linear_attention(Q6, K6[:, :2], V6), ValueError,
     "Q and K must have the same last dimension d_k: Q has shape (6, 3) (d_k=3) but K has shape (6, 2)"),
    ("K/V tokens", lambda: linear_attention(Q6, K6, V6[:4]), ValueError,
     "K and V must have the same number of tokens T_k: K has shape (6, 3) (6 keys) but V has shape (4, 3)"),
    ("causal Q/K length", lambda: linear_attention(Q6[:4], K6, V6), ValueError,
     "causal attention needs as many queries as keys: Q has shape (4, 3) (4 queries)"),
    ("recurrent Q/K length", lambda: linear_attention_recurrent(Q6[:4], K6, V6), ValueError,
     "causal attention needs as many queries as keys"),
    ("recurrent Q/K width", lambda: linear_attention_recurrent(Q6, K6[:, :1], V6), ValueError,
     "Q and K must have the same last dimension d_k"),
    ("recurrent K/V tokens", lambda: linear_attention_recurrent(Q6, K6, V6[:5]), ValueError,
     "K and V must have the same number of tokens T_k"),
    ("batch dims", lambda: linear_attention(np.ones((2, 6, 3)), np.ones((3, 6, 3)), np.ones((3, 6, 3))), ValueError,
     "do not broadcast"),
    ("weights Q/K width", lambda: linear_attention_weights(Q6, K6[:, :2]), ValueError,
     "Q and K must have the same last dimension d_k"),
    ("causal 'yes'", lambda: linear_attention(Q6, K6, V6, causal="yes"), TypeError, "causal must be True or False"),
    ("Q nan", lambda: linear_attention(np.full((6, 3), np.nan), K6, V6), ValueError, "Q contains NaN"),
    ("V text", lambda: linear_attention_recurrent(Q6, K6, "abc"), TypeError, "V must be a numeric array"),
    ("Q 1-D", lambda: linear_attention_recurrent(np.ones(3), K6, V6), ValueError, "Q must have at least 2 dimensions"),
    ("bytes d_c 0", lambda: latent_cache_bytes(60, 0, 10), ValueError, "d_c must be at least 1"),
    ("bytes d_rope -1", lambda: latent_cache_bytes(60, 8, 10, d_rope=-1), ValueError, "d_rope must be at least 0"),
    ("state bytes d_k 2.0", lambda: linear_state_bytes(2.0, 4), TypeError, "d_k must be an integer"),
]


@pytest.mark.parametrize(("call", "error", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_is_refused_with_a_message_naming_it(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value), f"message was: {info.value}"
