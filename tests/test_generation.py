"""Tests of helpers/generation.py: grouped-query attention, the key/value cache, decode_step, kv_cache_bytes.

Property tests (hypothesis) are bounded (T <= 8 tokens, d_head <= 4, at most 6 query heads) and
derandomized, so a run is deterministic and short. Each tolerance is stated beside its assertion.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import (
    KVCache,
    causal_mask,
    decode_step,
    grouped_query_attention,
    kv_cache_bytes,
    multi_head_attention,
)
from helpers.generation import MODELS, attention_parameters, layer_keys_values, mean_pool_kv_heads, step_flops

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)

# every (n_heads, n_kv_heads) pair with n_kv_heads dividing n_heads, n_heads <= 6
HEAD_PAIRS = [(h, g) for h in range(1, 7) for g in range(1, h + 1) if h % g == 0]


@st.composite
def problems(draw, with_w_o: bool | None = None, mha: bool = False):
    """A random layer: X (T, d_in), W_q (d_in, h·d_head), W_k and W_v (d_in, g·d_head), maybe W_o (g = h if mha)."""
    h, g = draw(st.sampled_from(HEAD_PAIRS))
    g = h if mha else g
    T = draw(st.integers(1, 8))
    d_in = draw(st.integers(1, 5))
    d_head = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d_in))  # (T, d_in)
    W_q = rng.normal(size=(d_in, h * d_head))  # (d_in, h·d_head)
    W_k = rng.normal(size=(d_in, g * d_head))  # (d_in, g·d_head)
    W_v = rng.normal(size=(d_in, g * d_head))  # (d_in, g·d_head)
    use_w_o = draw(st.booleans()) if with_w_o is None else with_w_o
    W_o = rng.normal(size=(h * d_head, draw(st.integers(1, 4)))) if use_w_o else None  # (h·d_head, d_out)
    return X, W_q, W_k, W_v, h, g, W_o


def window_mask(T: int, w: int) -> np.ndarray:
    """Causal and at most w keys back, the query's own position included: key j for query i if i-w < j <= i."""
    i, j = np.indices((T, T))  # (T, T) each
    return (j <= i) & (j > i - w)  # (T, T)


# ================================================================ grouped_query_attention


@SETTINGS
@given(problems(mha=True), st.booleans())
def test_gqa_with_as_many_kv_heads_as_query_heads_is_multi_head_attention(problem, masked):
    X, W_q, W_k, W_v, h, _, W_o = problem
    mask = causal_mask(X.shape[0]) if masked else None
    out, weights = grouped_query_attention(X, W_q, W_k, W_v, h, h, W_o=W_o, mask=mask)
    ref_out, ref_weights = multi_head_attention(X, W_q, W_k, W_v, h, W_o=W_o, mask=mask)
    # the same products in the same order (one key/value head per query head): 1e-12 leaves room for a
    # BLAS that blocks the broadcast batch differently
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(problems(with_w_o=False))
def test_gqa_equals_multi_head_attention_with_each_kv_head_repeated_for_its_query_heads(problem):
    X, W_q, W_k, W_v, h, g, _ = problem
    d_head = W_q.shape[1] // h
    r = h // g
    # query head i reads key/value head i // r: repeat each kv head's columns r times, in place
    cols = np.concatenate([np.arange(i // r * d_head, (i // r + 1) * d_head) for i in range(h)])  # (h·d_head,)
    out, weights = grouped_query_attention(X, W_q, W_k, W_v, h, g, mask=causal_mask(X.shape[0]))
    ref_out, ref_weights = multi_head_attention(X, W_q, W_k[:, cols], W_v[:, cols], h, mask=causal_mask(X.shape[0]))
    assert weights.shape == (h, X.shape[0], X.shape[0])
    assert out.shape == (X.shape[0], h * d_head)
    # unit-normal inputs, sums of <= 5 products: 1e-12 is far above float64 rounding (~1e-15)
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)


def test_gqa_query_heads_of_one_group_see_the_same_keys():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 4))  # (T, d_in)
    W_q = np.tile(rng.normal(size=(4, 2)), (1, 4))  # (4, 8): four identical query heads of width 2
    W_k, W_v = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))  # two kv heads of width 2
    _, weights = grouped_query_attention(X, W_q, W_k, W_v, 4, 2)  # heads 0, 1 read kv 0; heads 2, 3 read kv 1
    np.testing.assert_array_equal(weights[0], weights[1])  # same query, same keys: the same computation
    np.testing.assert_array_equal(weights[2], weights[3])
    assert not np.allclose(weights[1], weights[2])  # different keys


def test_gqa_takes_batches_and_a_per_batch_mask():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3, 5, 4))  # (B, T, d_in)
    W_q, W_k, W_v = rng.normal(size=(4, 6)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))  # h=3, g=1, d_head=2
    mask = np.broadcast_to(causal_mask(5), (3, 5, 5)).copy()  # (B, T, T)
    mask[1, :, 3:] = False
    mask[1, np.arange(5), np.arange(5)] = True
    out, weights = grouped_query_attention(X, W_q, W_k, W_v, 3, 1, mask=mask)
    assert out.shape == (3, 5, 6) and weights.shape == (3, 3, 5, 5)
    for b in range(3):
        o, w = grouped_query_attention(X[b], W_q, W_k, W_v, 3, 1, mask=mask[b])
        np.testing.assert_allclose(out[b], o, rtol=0, atol=1e-12)  # the same numbers per sentence
        np.testing.assert_allclose(weights[b], w, rtol=0, atol=1e-12)


# ================================================================ cached decoding


@SETTINGS
@given(problems(), st.one_of(st.none(), st.integers(1, 9)))
def test_cached_decoding_equals_causal_gqa_row_by_row(problem, window):
    X, W_q, W_k, W_v, h, g, W_o = problem
    T = X.shape[0]
    mask = causal_mask(T) if window is None else window_mask(T, window)
    out, weights = grouped_query_attention(X, W_q, W_k, W_v, h, g, W_o=W_o, mask=mask)
    cache = KVCache(g, W_q.shape[1] // h, window=window)
    for t in range(T):
        o, w = decode_step(X[t], cache, W_q, W_k, W_v, h, g, W_o=W_o)
        n = t + 1 if window is None else min(t + 1, window)
        assert len(cache) == n and cache.n_seen == t + 1
        assert w.shape == (h, n)
        assert o.shape == out[t].shape
        # the same sums in another order (a vector-matrix product instead of a matrix product): the
        # results may differ in the last bits; unit-normal inputs keep them far below 1e-12
        np.testing.assert_allclose(w, weights[:, t, t + 1 - n : t + 1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(o, out[t], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-14)  # n <= 8 terms <= 1


def test_decode_step_without_w_o_returns_the_concatenated_heads_and_float32_stays_float32():
    rng = np.random.default_rng(3)
    W_q = rng.normal(size=(6, 8)).astype(np.float32)  # h=4, d_head=2
    W_k = rng.normal(size=(6, 4)).astype(np.float32)  # g=2
    W_v = rng.normal(size=(6, 4)).astype(np.float32)
    cache = KVCache(2, 2)
    for _ in range(3):
        out, w = decode_step(rng.normal(size=6).astype(np.float32), cache, W_q, W_k, W_v, 4, 2)
    assert out.shape == (8,) and out.dtype == np.float32
    assert w.shape == (4, 3) and w.dtype == np.float32
    assert cache.K.dtype == np.float32 and cache.nbytes == 2 * 2 * 3 * 2 * 4


# ================================================================ KVCache


@SETTINGS
@given(
    st.integers(1, 3),
    st.integers(1, 3),
    st.one_of(st.none(), st.integers(1, 6)),
    st.lists(st.integers(1, 7), min_size=1, max_size=12),
)
def test_kv_cache_keeps_every_position_or_the_last_window(g, d_head, window, chunks):
    cache = KVCache(g, d_head, window=window)
    assert len(cache) == 0 and cache.nbytes == 0 and cache.K.shape == (g, 0, d_head)
    seen_k, seen_v, views = [], [], []
    for t in chunks:
        start = sum(k.shape[1] for k in seen_k)
        pos = np.arange(start, start + t, dtype=float)  # (t,) each value records its position
        k = np.broadcast_to(pos[None, :, None], (g, t, d_head)) + 0.25  # (g, t, d_head)
        v = -k
        cache.append(k, v)
        seen_k.append(k)
        seen_v.append(v)
        all_k = np.concatenate(seen_k, axis=1)  # (g, N, d_head)
        all_v = np.concatenate(seen_v, axis=1)
        N = all_k.shape[1]
        n = N if window is None else min(N, window)
        assert len(cache) == n and cache.n_seen == N
        np.testing.assert_array_equal(cache.positions, np.arange(N - n, N))
        np.testing.assert_array_equal(cache.K, all_k[:, N - n :])  # exactly the last n positions, in order
        np.testing.assert_array_equal(cache.V, all_v[:, N - n :])
        assert cache.nbytes == 2 * g * n * d_head * 8
        views.append((cache.K, all_k[:, N - n :]))
    for view, expected in views:  # a later append never overwrites what an earlier view shows
        np.testing.assert_array_equal(view, expected)


def test_kv_cache_views_are_read_only():
    cache = KVCache(1, 2)
    cache.append(np.ones((1, 1, 2)), np.ones((1, 1, 2)))
    with pytest.raises(ValueError, match="read-only"):
        cache.K[0, 0, 0] = 5.0


def test_kv_cache_repr_says_what_it_holds():
    cache = KVCache(2, 3, window=2)
    for _ in range(3):
        cache.append(np.zeros((2, 1, 3)), np.zeros((2, 1, 3)))
    assert repr(cache) == "KVCache(n_kv_heads=2, d_head=3, window=2): 2 positions cached of 3 seen, 192 bytes"


# ================================================================ kv_cache_bytes


def test_kv_cache_bytes_by_hand():
    assert kv_cache_bytes(1, 1, 1, 1) == 4  # K and V, one 16-bit number each
    assert kv_cache_bytes(1, 1, 1, 1, bytes_per_value=4) == 8
    # Llama 2 7B: 32 layers, 32 kv heads of 128, 4,096 tokens, 16-bit: 2·32·32·128·4096·2 = 2 GiB
    assert kv_cache_bytes(32, 32, 128, 4096) == 2 * 1024**3
    # Llama 3 8B: 8 kv heads, a quarter of that
    assert kv_cache_bytes(32, 8, 128, 4096) == 512 * 1024**2
    # GPT-2 small: 12 layers, 12 heads of 64, 1,024 tokens, batch 8, float32: 2·12·12·64·1024·8·4
    assert kv_cache_bytes(12, 12, 64, 1024, batch=8, bytes_per_value=4) == 603_979_776
    big = kv_cache_bytes(80, 8, 128, 131072, batch=64)  # Python ints: no overflow
    assert big == 2 * 80 * 8 * 128 * 131072 * 64 * 2 and isinstance(big, int)


def test_kv_cache_bytes_equals_kv_cache_nbytes_for_one_layer():
    cache = KVCache(3, 4)
    cache.append(np.zeros((3, 5, 4), dtype=np.float32), np.zeros((3, 5, 4), dtype=np.float32))
    assert cache.nbytes == kv_cache_bytes(1, 3, 4, 5, bytes_per_value=4)


# ================================================================ bad input


def _layer(h=4, g=2, d_in=3, d_head=2):
    rng = np.random.default_rng(0)
    return (rng.normal(size=(5, d_in)), rng.normal(size=(d_in, h * d_head)),
            rng.normal(size=(d_in, g * d_head)), rng.normal(size=(d_in, g * d_head)))


def test_n_heads_not_divisible_by_n_kv_heads_names_both_numbers():
    X, W_q, W_k, W_v = _layer()
    msg = r"n_heads \(4\) is not divisible by n_kv_heads \(3\)"
    with pytest.raises(ValueError, match=msg):
        grouped_query_attention(X, W_q, W_k, W_v, 4, 3)
    with pytest.raises(ValueError, match=msg):
        decode_step(X[0], KVCache(3, 2), W_q, W_k, W_v, 4, 3)


@pytest.mark.parametrize("bad", ["n_heads", "n_kv_heads"])
def test_head_counts_must_be_positive_integers(bad):
    X, W_q, W_k, W_v = _layer()
    for value, error, msg in ((0, ValueError, "must be at least 1"), (2.0, TypeError, "must be an integer"),
                              (True, TypeError, "must be an integer")):
        args = {"n_heads": 4, "n_kv_heads": 2, bad: value}
        with pytest.raises(error, match=f"{bad} {msg}"):
            grouped_query_attention(X, W_q, W_k, W_v, **args)


def test_w_q_width_must_split_into_the_query_heads():
    X, _, W_k, W_v = _layer()
    with pytest.raises(ValueError, match=r"W_q has shape \(3, 7\): its 7 columns do not split into n_heads = 4"):
        grouped_query_attention(X, np.ones((3, 7)), W_k, W_v, 4, 2)


@pytest.mark.parametrize("name", ["W_k", "W_v"])
def test_w_k_and_w_v_need_n_kv_heads_times_d_head_columns(name):
    X, W_q, W_k, W_v = _layer()
    Ws = {"W_k": W_k, "W_v": W_v, name: np.ones((3, 8))}  # h·d_head columns, as in multi-head attention
    msg = rf"{name} has shape \(3, 8\) but needs n_kv_heads · d_head = 2 · 2 = 4 columns"
    with pytest.raises(ValueError, match=msg):
        grouped_query_attention(X, W_q, Ws["W_k"], Ws["W_v"], 4, 2)
    with pytest.raises(ValueError, match=msg):
        decode_step(X[0], KVCache(2, 2), W_q, Ws["W_k"], Ws["W_v"], 4, 2)


def test_w_o_must_have_a_row_per_concatenated_column():
    X, W_q, W_k, W_v = _layer()
    msg = r"W_o has shape \(5, 3\) but the concatenated heads have 8 columns"
    with pytest.raises(ValueError, match=msg):
        grouped_query_attention(X, W_q, W_k, W_v, 4, 2, W_o=np.ones((5, 3)))
    with pytest.raises(ValueError, match=msg):
        decode_step(X[0], KVCache(2, 2), W_q, W_k, W_v, 4, 2, W_o=np.ones((5, 3)))


def test_gqa_rejects_a_mask_of_the_wrong_shape_and_an_empty_row():
    X, W_q, W_k, W_v = _layer()
    with pytest.raises(ValueError, match=r"mask has shape \(4, 4\), which does not broadcast"):
        grouped_query_attention(X, W_q, W_k, W_v, 4, 2, mask=causal_mask(4))
    with pytest.raises(ValueError, match="every key masked"):
        grouped_query_attention(X, W_q, W_k, W_v, 4, 2, mask=np.zeros((5, 5), dtype=bool))


@pytest.mark.parametrize(("g", "d_head"), [(1, 2), (2, 3)])
def test_decode_step_rejects_a_cache_made_for_other_heads(g, d_head):
    X, W_q, W_k, W_v = _layer()
    msg = rf"the cache holds n_kv_heads = {g}, d_head = {d_head} but this call has n_kv_heads = 2, d_head = 2"
    with pytest.raises(ValueError, match=msg):
        decode_step(X[0], KVCache(g, d_head), W_q, W_k, W_v, 4, 2)


def test_decode_step_rejects_something_that_is_not_a_cache():
    X, W_q, W_k, W_v = _layer()
    with pytest.raises(TypeError, match="cache must be a KVCache, got list"):
        decode_step(X[0], [], W_q, W_k, W_v, 4, 2)


def test_decode_step_rejects_x_of_the_wrong_width_or_shape():
    X, W_q, W_k, W_v = _layer()
    with pytest.raises(ValueError, match=r"x has 4 features but W_q has shape \(3, 8\): W_q needs 4 rows"):
        decode_step(np.ones(4), KVCache(2, 2), W_q, W_k, W_v, 4, 2)
    with pytest.raises(ValueError, match=r"x must be one token's vector of shape \(d_in,\), got shape \(5, 3\)"):
        decode_step(X, KVCache(2, 2), W_q, W_k, W_v, 4, 2)
    with pytest.raises(ValueError, match="x contains NaN"):
        decode_step(np.array([1.0, np.nan, 0.0]), KVCache(2, 2), W_q, W_k, W_v, 4, 2)


def test_a_failed_decode_step_leaves_the_cache_unchanged():
    X, W_q, W_k, W_v = _layer()
    cache = KVCache(2, 2)
    decode_step(X[0], cache, W_q, W_k, W_v, 4, 2)
    with pytest.raises(ValueError):
        decode_step(X[1], cache, W_q, W_k, W_v, 4, 2, W_o=np.ones((5, 3)))
    assert len(cache) == 1 and cache.n_seen == 1


def _cache_state(cache):
    return (len(cache), cache.n_seen, cache.positions.copy(), cache.K.copy(), cache.V.copy(), cache.nbytes, cache.dtype)


def _assert_same_state(a, b):
    assert a[:2] == b[:2] and a[5:] == b[5:]
    for x, y in zip(a[2:5], b[2:5], strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("window", [None, 2])
@pytest.mark.parametrize("before", [1, 2, 16])  # 16 fills the first buffer: the refused append reallocates
def test_a_decode_step_refused_after_its_append_leaves_the_cache_unchanged(window, before):
    X, W_q, W_k, W_v = _layer()
    cache = KVCache(2, 2, window=window)
    for t in range(before):
        decode_step(X[t % 5], cache, W_q, W_k, W_v, 4, 2)
    state = _cache_state(cache)
    W_o = np.ones((8, 3))
    W_o[0, 0] = np.nan  # found only after the key and value were stored and attended to
    with pytest.raises(ValueError, match=r"W_o contains NaN \(first at index \(0, 0\)"):
        decode_step(X[0], cache, W_q, W_k, W_v, 4, 2, W_o=W_o)
    _assert_same_state(_cache_state(cache), state)
    fresh = KVCache(2, 2, window=window)  # the next step is the one it would have been without the refusal
    for t in range(before):
        decode_step(X[t % 5], fresh, W_q, W_k, W_v, 4, 2)
    got, want = decode_step(X[1], cache, W_q, W_k, W_v, 4, 2), decode_step(X[1], fresh, W_q, W_k, W_v, 4, 2)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    _assert_same_state(_cache_state(cache), _cache_state(fresh))


def test_kv_cache_transaction_undoes_the_appends_of_a_block_that_raises():
    cache = KVCache(1, 2, window=3)
    cache.append(np.ones((1, 2, 2)), np.ones((1, 2, 2)))
    state = _cache_state(cache)
    with pytest.raises(RuntimeError, match="refused"), cache.transaction():
        for _ in range(20):  # past the buffer's capacity: appends into a new buffer
            cache.append(np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))
        raise RuntimeError("refused")
    _assert_same_state(_cache_state(cache), state)
    with cache.transaction():  # a block that does not raise keeps its appends
        cache.append(np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))
    assert cache.n_seen == 3 and len(cache) == 3
    assert KVCache(1, 2).dtype is None and cache.dtype == np.float64


@pytest.mark.parametrize(
    ("kwargs", "error", "msg"),
    [
        ({"window": 0}, ValueError, "window must be at least 1, got 0"),
        ({"window": -3}, ValueError, "window must be at least 1, got -3"),
        ({"window": 2.5}, TypeError, "window must be an integer"),
        ({"n_kv_heads": 0}, ValueError, "n_kv_heads must be at least 1"),
        ({"d_head": 0}, ValueError, "d_head must be at least 1"),
    ],
)
def test_kv_cache_rejects_bad_sizes(kwargs, error, msg):
    args = {"n_kv_heads": 2, "d_head": 3, **kwargs}
    with pytest.raises(error, match=msg):
        KVCache(**args)


def test_kv_cache_append_rejects_bad_shapes_and_dtypes():
    cache = KVCache(2, 3)
    with pytest.raises(ValueError,
                       match=r"k has shape \(3, 1, 3\) but this cache holds n_kv_heads = 2 heads of d_head = 3"):
        cache.append(np.zeros((3, 1, 3)), np.zeros((2, 1, 3)))
    with pytest.raises(ValueError, match=r"v has shape \(2, 1, 4\) but this cache holds"):
        cache.append(np.zeros((2, 1, 3)), np.zeros((2, 1, 4)))
    with pytest.raises(ValueError, match="k and v must have the same shape"):
        cache.append(np.zeros((2, 1, 3)), np.zeros((2, 2, 3)))
    with pytest.raises(ValueError, match="k must have at least 3 dimensions"):
        cache.append(np.zeros((2, 3)), np.zeros((2, 3)))
    assert len(cache) == 0  # nothing was appended
    cache.append(np.zeros((2, 1, 3)), np.zeros((2, 1, 3)))
    with pytest.raises(TypeError, match="k has dtype float32 but this cache holds float64"):
        cache.append(np.zeros((2, 1, 3), np.float32), np.zeros((2, 1, 3), np.float32))


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [("n_layers", 0, ValueError), ("n_kv_heads", -1, ValueError), ("d_head", 0, ValueError),
     ("T", 0, ValueError), ("batch", 0, ValueError), ("bytes_per_value", 0, ValueError),
     ("T", 4096.0, TypeError), ("bytes_per_value", True, TypeError)],
)
def test_kv_cache_bytes_rejects_bad_sizes(name, value, error):
    args = {"n_layers": 32, "n_kv_heads": 8, "d_head": 128, "T": 4096, name: value}
    with pytest.raises(error, match=name):
        kv_cache_bytes(**args)


# ================================================================ step_flops, attention_parameters, pooling


def test_step_flops_by_hand():
    # t = 8, d_in = 6, h = 2, g = 1, d_head = 2. With the cache: project one token (q: 6·4, k and v: 6·2
    # each, 2 FLOPs per multiply-add) = 2·6·(2 + 2)·2 = 96; attention 4·2·8·2 = 128.
    assert step_flops(8, 6, 2, 1, 2, cache=True) == 96 + 128
    # without: project 8 tokens 8·96 = 768, attention of every row 4·2·8·8·2 = 1024
    assert step_flops(8, 6, 2, 1, 2, cache=False) == 768 + 1024
    assert step_flops(1, 6, 2, 1, 2, cache=False) == step_flops(1, 6, 2, 1, 2, cache=True)  # one token: the same


def test_step_flops_counts_the_products_decode_step_makes():
    h, g, d_in, d_head, t = 4, 2, 5, 3, 7
    shapes = [((1, d_in), (d_in, h * d_head)), ((1, d_in), (d_in, g * d_head)), ((1, d_in), (d_in, g * d_head)),
              ((h, 1, d_head), (h, d_head, t)), ((h, 1, t), (h, t, d_head))]  # q, k, v, scores, weights · V
    flops = sum(2 * int(np.prod(a[:-1])) * a[-1] * b[-1] for a, b in shapes)  # 2 · (rows) · n · p per product
    assert step_flops(t, d_in, h, g, d_head, cache=True) == flops


def test_attention_parameters_of_llama_2_7b_and_llama_3_8b_layers():
    assert attention_parameters(4096, 32, 32, 128) == 4 * 4096 * 4096  # four 4096 × 4096 matrices
    assert attention_parameters(4096, 32, 8, 128) == 2 * 4096 * 4096 + 2 * 4096 * 1024  # W_k, W_v 4096 × 1024


def test_mean_pool_kv_heads_averages_each_group():
    W = np.arange(2 * 8, dtype=float).reshape(2, 8)  # (d_in=2, h·d_head = 4·2)
    pooled = mean_pool_kv_heads(W, 4, 2)  # groups: heads 1-2, heads 3-4
    expected = np.stack([(W[:, 0:2] + W[:, 2:4]) / 2, (W[:, 4:6] + W[:, 6:8]) / 2], axis=1).reshape(2, 4)
    np.testing.assert_array_equal(pooled, expected)
    np.testing.assert_array_equal(mean_pool_kv_heads(W, 4, 4), W)  # one head per group: unchanged
    with pytest.raises(ValueError, match=r"n_heads \(4\) is not divisible by n_kv_heads \(3\)"):
        mean_pool_kv_heads(W, 4, 3)
    with pytest.raises(ValueError, match="divisible by n_heads = 3"):
        mean_pool_kv_heads(W, 3, 1)


# ================================================================ the published configurations


def _decoder_parameters(name: str) -> int:
    """Every parameter of the four decoders, from their published architecture (not from MODELS' counts)."""
    d, L = 4096, 32
    if name == "GPT-2 small":
        d, L, vocab, positions, mlp = 768, 12, 50257, 1024, 3072
        per_layer = (2 * d  # layer norm 1 (gain, bias)
                     + d * 3 * d + 3 * d  # W_q, W_k, W_v fused, with biases
                     + d * d + d  # W_o with bias
                     + 2 * d  # layer norm 2
                     + d * mlp + mlp + mlp * d + d)  # the MLP, with biases
        return vocab * d + positions * d + L * per_layer + 2 * d  # tied output; the final layer norm
    vocab, mlp = {"Llama 2 7B": (32000, 11008), "Llama 3 8B": (128256, 14336), "Mistral 7B": (32000, 14336)}[name]
    m = MODELS[name]
    per_layer = (attention_parameters(d, m["n_heads"], m["n_kv_heads"], m["d_head"])
                 + 3 * d * mlp  # SwiGLU: gate, up, down; no biases
                 + 2 * d)  # two RMSNorm gains
    return 2 * vocab * d + L * per_layer + d  # untied input and output embeddings; the final norm


@pytest.mark.parametrize("name", list(MODELS))
def test_published_configurations_are_consistent(name):
    m = MODELS[name]
    assert m["d_head"] * m["n_heads"] == m["d_model"]
    assert m["n_heads"] % m["n_kv_heads"] == 0
    assert _decoder_parameters(name) == m["parameters"]  # the cited count, recounted from the architecture
    assert m["source"]


def test_kv_cache_bytes_of_the_published_configurations_at_4k_tokens():
    GiB = 2**30
    got = {name: kv_cache_bytes(m["n_layers"], m["n_kv_heads"], m["d_head"], 4096) for name, m in MODELS.items()}
    assert got == {"GPT-2 small": 2 * 12 * 12 * 64 * 4096 * 2, "Llama 2 7B": 2 * GiB,
                   "Llama 3 8B": GiB // 2, "Mistral 7B": GiB // 2}


# ================================================================ decode_step names a bad weight matrix


@pytest.mark.parametrize("name", ["W_q", "W_k", "W_v", "W_o"])
@pytest.mark.parametrize(("bad", "msg"), [(np.nan, "contains NaN"), (np.inf, "contains an infinite value")])
def test_decode_step_names_a_weight_matrix_holding_nan_or_inf_and_leaves_the_cache_unchanged(name, bad, msg):
    X, W_q, W_k, W_v = _layer()
    Ws = {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": np.ones((8, 3))}
    Ws[name] = Ws[name].copy()
    Ws[name][1, 1] = bad  # decode_step does not scan its weight matrices; the non-finite product gives it away
    cache = KVCache(2, 2)
    decode_step(X[0], cache, W_q, W_k, W_v, 4, 2)
    K_before = cache.K.copy()
    with pytest.raises(ValueError, match=rf"{name} {msg} \(first at index \(1, 1\)"):
        decode_step(X[1], cache, Ws["W_q"], Ws["W_k"], Ws["W_v"], 4, 2, W_o=Ws["W_o"])
    assert len(cache) == 1 and cache.n_seen == 1
    np.testing.assert_array_equal(cache.K, K_before)
    decode_step(X[1], cache, W_q, W_k, W_v, 4, 2)  # the cache still works
    assert len(cache) == 2


def test_decode_step_says_when_a_product_overflows():
    X, W_q, W_k, W_v = _layer()
    W_big = np.full_like(W_q, 1e308)
    with pytest.raises(ValueError, match=r"the product x \(3,\) @ W_q \(3, 8\) overflows float64"):
        decode_step(X[0] * 10, KVCache(2, 2), W_big, W_k, W_v, 4, 2)


def test_decode_step_takes_weight_matrices_as_lists_and_integers():
    X, W_q, W_k, W_v = _layer()
    cache_a, cache_b = KVCache(2, 2), KVCache(2, 2)
    a = decode_step(X[0], cache_a, W_q.tolist(), W_k.tolist(), W_v.tolist(), 4, 2)
    b = decode_step(X[0], cache_b, W_q, W_k, W_v, 4, 2)
    np.testing.assert_array_equal(a[0], b[0])
    out, _ = decode_step([1, 0, 2], KVCache(2, 2), np.ones((3, 8), int), np.ones((3, 4), int), np.ones((3, 4), int), 4,
                         2)
    assert out.dtype == np.float64


def test_decode_step_refuses_a_float_type_other_than_the_caches():
    X, W_q, W_k, W_v = _layer()
    cache = KVCache(2, 2)
    decode_step(X[0], cache, W_q, W_k, W_v, 4, 2)  # float64: the cache holds float64 from now on
    f32 = [W.astype(np.float32) for W in (W_q, W_k, W_v)]
    with pytest.raises(TypeError, match="this step computes float32 keys but the cache holds float64"):
        decode_step(X[1].astype(np.float32), cache, *f32, 4, 2)
    assert len(cache) == 1


# --------------------------------------------------------------------------- stacked layers and the causal mask


def _two_layers(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    layer_1 = tuple(rng.standard_normal((3, 4)) for _ in range(3))  # d_in = 3 -> 2 heads of 2
    layer_2 = tuple(rng.standard_normal((4, 4)) for _ in range(3))  # reads layer 1's (T, 4) output
    return [layer_1, layer_2]


def test_layer_keys_values_layer_1_is_x_times_w_and_layer_2_reads_layer_1_output():
    layers = _two_layers()
    X = np.random.default_rng(1).standard_normal((5, 3))  # (T=5, 3)
    (K1, V1), (K2, V2) = layer_keys_values(X, layers, 2)
    np.testing.assert_allclose(K1, X @ layers[0][1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(V1, X @ layers[0][2], rtol=0, atol=1e-12)
    out_1, _ = multi_head_attention(X, *layers[0], n_heads=2, mask=causal_mask(5))  # (5, 4)
    np.testing.assert_allclose(K2, out_1 @ layers[1][1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(V2, out_1 @ layers[1][2], rtol=0, atol=1e-12)


@pytest.mark.parametrize("t", [1, 3, 5])
def test_with_the_causal_mask_old_keys_and_values_of_every_layer_stay_fixed(t):
    layers = _two_layers()
    X = np.random.default_rng(2).standard_normal((t + 1, 3))  # (t+1, 3)
    before, after = layer_keys_values(X[:t], layers, 2), layer_keys_values(X, layers, 2)
    for (K, V), (K_new, V_new) in zip(before, after, strict=True):
        np.testing.assert_allclose(K_new[:t], K, rtol=0, atol=1e-12)  # tokens 1..t, unchanged by token t+1
        np.testing.assert_allclose(V_new[:t], V, rtol=0, atol=1e-12)


def test_without_the_mask_layer_1_stays_but_layer_2_changes():
    layers = _two_layers()
    X = np.random.default_rng(3).standard_normal((6, 3))  # (6, 3)
    before, after = layer_keys_values(X[:5], layers, 2, causal=False), layer_keys_values(X, layers, 2, causal=False)
    np.testing.assert_allclose(after[0][0][:5], before[0][0], rtol=0, atol=1e-12)  # k = x W_k: no other token
    assert np.abs(after[1][0][:5] - before[1][0]).max() > 1e-3  # layer 2's keys read token 6 through layer 1
    assert np.abs(after[1][1][:5] - before[1][1]).max() > 1e-3


def test_layer_keys_values_refuses_bad_arguments():
    layers = _two_layers()
    X = np.ones((4, 3))
    with pytest.raises(TypeError, match="layers must be a non-empty list"):
        layer_keys_values(X, [], 2)
    with pytest.raises(TypeError, match=r"layers\[1\] must be a tuple"):
        layer_keys_values(X, [layers[0], layers[1][0]], 2)
    with pytest.raises(ValueError, match=r"layers\[1\]: .*W_q"):
        layer_keys_values(X, [layers[0], layers[0]], 2)  # layer 2 needs 4 rows, gets 3
    with pytest.raises(TypeError, match="causal must be True or False"):
        layer_keys_values(X, layers, 2, causal="yes")
    with pytest.raises(ValueError, match=r"\(T, d_in\)"):
        layer_keys_values(np.ones((2, 4, 3)), layers, 2)
