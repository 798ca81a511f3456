"""helpers.modern and the StreamingLLM cache: each function against its defining formula, and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import (
    KVCache,
    decode_step,
    gated_delta_rule,
    grouped_query_attention,
    rms_norm,
    soft_cap,
    softmax,
    softmax_with_sink,
    streaming_mask,
)
from helpers.longcontext import sliding_window_mask, window_reach
from helpers.modern import (
    gated_delta_rule_parallel,
    largest_weight,
    layer_kinds,
    pattern_cache_bytes,
    pattern_reach,
    qk_norm_score_bound,
    recall_accuracy,
    recall_readout,
    recall_task,
)

TOL = dict(rtol=1e-12, atol=1e-12)  # float64 formulas evaluated two ways: equal to rounding


def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


# --------------------------------------------------------------------------- softmax_with_sink


@pytest.mark.parametrize("seed", range(5))
def test_sink_softmax_is_its_formula_with_a_number_and_with_one_sink_per_head(seed):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(3, 4, 5)) * 2  # (h, T_q, T_k)
    sink = rng.normal(size=(3, 1))  # (h, 1): one per head
    ref = np.exp(s) / (np.exp(sink)[..., None] + np.exp(s).sum(-1, keepdims=True))
    np.testing.assert_allclose(softmax_with_sink(s, sink), ref, **TOL)
    ref0 = np.exp(s) / (1.0 + np.exp(s).sum(-1, keepdims=True))  # sink_logit 0: exp(0) = 1
    np.testing.assert_allclose(softmax_with_sink(s), ref0, **TOL)
    assert (softmax_with_sink(s, sink).sum(-1) < 1).all()


def test_a_sink_of_minus_inf_is_plain_softmax_and_large_scores_stay_finite():
    s = np.array([[1000.0, 999.0, -5.0], [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(softmax_with_sink(s, -np.inf), softmax(s), **TOL)
    w = softmax_with_sink(s, 1000.0)  # the sink ties the top key
    np.testing.assert_allclose(w[0, 0], 1 / (2 + math.exp(-1) + math.exp(-1005)), rtol=1e-12)
    assert np.isfinite(w).all()


def test_a_fully_masked_row_gives_all_weight_to_the_sink_and_without_a_sink_it_is_refused():
    s = np.array([[0.5, -np.inf], [-np.inf, -np.inf]])
    w = softmax_with_sink(s, 0.0)
    np.testing.assert_array_equal(w[1], [0.0, 0.0])
    np.testing.assert_allclose(w[0], [math.exp(0.5) / (1 + math.exp(0.5)), 0.0], **TOL)
    with pytest.raises(ValueError, match="every entry is -inf"):
        softmax_with_sink(s, -np.inf)


@pytest.mark.parametrize(("sink", "err", "match"), [
    (np.zeros(3), ValueError, r"sink_logit has shape \(3,\), which does not broadcast to scores.shape\[:-1\] = \(2, "
                              r"4\)"),
    (np.nan, ValueError, "sink_logit must be finite or -inf"),
    (np.inf, ValueError, "sink_logit must be finite or -inf"),
    ("big", TypeError, "sink_logit must be a real number"),
])
def test_bad_sinks_are_refused_by_name(sink, err, match):
    with pytest.raises(err, match=match):
        softmax_with_sink(np.zeros((2, 4, 5)), sink)


# --------------------------------------------------------------------------- bounded scores


@pytest.mark.parametrize("seed", range(3))
def test_soft_cap_is_its_formula_and_never_exceeds_the_cap(seed):
    s = np.random.default_rng(seed).normal(size=(4, 6)) * 100
    np.testing.assert_allclose(soft_cap(s, 50.0), 50.0 * np.tanh(s / 50.0), **TOL)
    assert (np.abs(soft_cap(s, 50.0)) <= 50.0).all()
    assert soft_cap(np.array([-np.inf]), 5.0)[0] == -5.0  # capping unmasks: mask after capping


@pytest.mark.parametrize(("cap", "err"), [(0, ValueError), (-1.0, ValueError), (np.nan, ValueError),
                                          (np.inf, ValueError), ("50", TypeError)])
def test_a_cap_that_is_not_a_finite_positive_number_is_refused(cap, err):
    with pytest.raises(err, match="cap must be"):
        soft_cap(np.ones(3), cap)


def test_soft_cap_refuses_nan_scores():
    with pytest.raises(ValueError, match="scores contains nan"):
        soft_cap(np.array([1.0, np.nan]), 5.0)


@pytest.mark.parametrize("seed", range(3))
def test_rms_norm_is_its_formula(seed):
    rng = np.random.default_rng(seed)
    x, g = rng.normal(size=(3, 5, 8)), rng.normal(size=8)
    ref = x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(rms_norm(x, g), ref, **TOL)
    y = rms_norm(x, np.ones(8), eps=0.0)
    np.testing.assert_allclose(np.sqrt((y**2).mean(-1)), 1.0, **TOL)


def test_rms_norm_refuses_a_gain_of_the_wrong_width_and_a_zero_vector_without_eps():
    with pytest.raises(ValueError, match=r"g has shape \(4,\) but x has shape \(2, 8\).*shape \(8,\)"):
        rms_norm(np.ones((2, 8)), np.ones(4))
    with pytest.raises(ValueError, match="eps = 0"):
        rms_norm(np.zeros((1, 3)), np.ones(3), eps=0.0)
    with pytest.raises(ValueError, match="eps must be"):
        rms_norm(np.ones((1, 3)), np.ones(3), eps=-1.0)


@pytest.mark.parametrize("seed", range(5))
def test_after_qk_norm_no_scaled_score_exceeds_the_bound(seed):
    rng = np.random.default_rng(seed)
    d = 16
    q, k = rng.normal(size=(50, d)) * 1e6, rng.normal(size=(50, d)) * 1e-3  # any size in, bounded out
    gq, gk = rng.normal(size=d), rng.normal(size=d)
    scores = rms_norm(q, gq) @ rms_norm(k, gk).T / math.sqrt(d)  # (50, 50)
    assert np.abs(scores).max() <= qk_norm_score_bound(d, gq, gk)
    e = np.ones(d)  # q = k = all ones, gains 1: the bound is reached (up to eps)
    np.testing.assert_allclose(rms_norm(e, e, eps=0.0) @ rms_norm(e, e, eps=0.0) / math.sqrt(d),
                               qk_norm_score_bound(d), rtol=1e-12)


def test_largest_weight_is_reached_by_one_key_at_the_top_and_the_rest_at_the_bottom():
    B, T = 1.5, 8
    s = np.full(T, -B)
    s[2] = B
    assert softmax(s)[2] == pytest.approx(largest_weight(B, T), rel=1e-12)


# --------------------------------------------------------------------------- local and global layers


def test_layer_kinds_follow_the_published_ratios():
    assert layer_kinds(4, 1) == ["local", "global"] * 2  # Gemma 2
    assert layer_kinds(12, 5) == (["local"] * 5 + ["global"]) * 2  # Gemma 3
    assert layer_kinds(32, 5).count("global") == 5
    assert layer_kinds(3, 0) == ["global"] * 3


def test_pattern_reach_of_local_layers_is_window_reach_and_a_global_layer_reaches_everything():
    T, w = 10, 3
    for L in (1, 2, 3):
        np.testing.assert_array_equal(pattern_reach(T, w, ["local"] * L), window_reach(T, w, L))
    np.testing.assert_array_equal(pattern_reach(T, w, ["local", "global"]), np.tri(T, dtype=bool))
    np.testing.assert_array_equal(pattern_reach(T, w, ["global"]), np.tri(T, dtype=bool))


def test_pattern_cache_bytes_by_hand():
    kinds = layer_kinds(6, 5)  # 5 local + 1 global
    per_position = 2 * 8 * 128 * 2  # K and V · g · d_head · 2 bytes, one layer
    assert pattern_cache_bytes(kinds, 8, 128, 8192, 1024) == per_position * (5 * 1024 + 8192)
    assert pattern_cache_bytes(kinds, 8, 128, 512, 1024) == per_position * 6 * 512  # T below the window
    with pytest.raises(ValueError, match=r"kinds\[1\] must be one of"):
        pattern_cache_bytes(["local", "globl"], 8, 128, 10, 4)


# --------------------------------------------------------------------------- the delta rule


def delta_reference(Q, K, V, beta, alpha):
    """The defining recurrence, written with the identity matrix as in the paper."""
    d_k = K.shape[1]
    S = np.zeros((V.shape[1], d_k))
    out = []
    for t in range(K.shape[0]):
        S = alpha[t] * S @ (np.eye(d_k) - beta[t] * np.outer(K[t], K[t])) + beta[t] * np.outer(V[t], K[t])
        out.append(S @ Q[t])
    return np.array(out)


@pytest.mark.parametrize("seed", range(6))
def test_gated_delta_rule_is_its_recurrence_and_the_parallel_form_equals_it(seed):
    rng = np.random.default_rng(seed)
    T, d_k, d_v = 12, 5, 3
    Q, K, V = rng.normal(size=(T, d_k)), unit_rows(rng.normal(size=(T, d_k))), rng.normal(size=(T, d_v))
    beta, alpha = rng.uniform(size=T), rng.uniform(size=T)
    alpha[4] = 0.0  # a gate that forgets everything
    ref = delta_reference(Q, K, V, beta, alpha)
    np.testing.assert_allclose(gated_delta_rule(Q, K, V, beta, alpha), ref, **TOL)
    np.testing.assert_allclose(gated_delta_rule_parallel(Q, K, V, beta, alpha), ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gated_delta_rule(Q, K, V, beta), delta_reference(Q, K, V, beta, np.ones(T)), **TOL)


def test_with_beta_1_and_a_unit_key_the_state_returns_the_new_value_for_that_key():
    rng = np.random.default_rng(0)
    K = unit_rows(rng.normal(size=(6, 4)))
    V = rng.normal(size=(6, 3))
    out = gated_delta_rule(K, K, V, np.ones(6))  # query each key right after writing it
    np.testing.assert_allclose(out, V, **TOL)


@pytest.mark.parametrize(("kwargs", "err", "match"), [
    ({"beta": np.full(4, 1.5)}, ValueError, r"beta must lie in \[0, 1\], got beta\[0\] = 1.5"),
    ({"alpha": np.full(4, -0.1)}, ValueError, r"alpha must lie in \[0, 1\]"),
    ({"beta": np.ones(3)}, ValueError, r"beta must have shape \(T,\) = \(4,\)"),
    ({"Q": np.ones((4, 2))}, ValueError, "Q and K must have the same width d_k"),
    ({"V": np.ones((5, 2))}, ValueError, "same number of tokens"),
    ({"K": np.ones((2, 4, 3))}, ValueError, r"K must be one sequence of shape \(T, d_k\)"),
])
def test_the_delta_rule_refuses_bad_inputs_by_name(kwargs, err, match):
    args = {"Q": np.ones((4, 3)), "K": np.ones((4, 3)) / math.sqrt(3), "V": np.ones((4, 2)), "beta": np.ones(4),
            "alpha": None} | kwargs
    for f in (gated_delta_rule, gated_delta_rule_parallel):
        with pytest.raises(err, match=match):
            f(**args)


def test_long_keys_make_the_state_grow_and_that_is_said():
    K = np.full((2000, 1), 2.0)  # β‖k‖² = 4 > 2: the erase factor is 1 − 4 = −3
    with pytest.raises(ValueError, match="normalise the keys"):
        gated_delta_rule(K, K, np.ones((2000, 1)), np.ones(2000))


def test_recall_toy_linear_blurs_updates_and_delta_overwrites():
    K, V, latest = recall_task(12, 4, 3, np.random.default_rng(0))
    assert K.shape == (12, 4) and (K.sum(1) == 1).all() and (latest >= 0).all()
    R_delta = recall_readout(K, V, "delta")
    np.testing.assert_allclose(R_delta, V[latest], **TOL)  # β = 1, one-hot keys: each slot holds its last value
    R_linear = recall_readout(K, V, "linear")
    np.testing.assert_allclose(R_linear, K.T @ V, **TOL)  # every value written to a slot, added up
    assert recall_accuracy(8, "linear") == 1.0 == recall_accuracy(8, "delta")  # no updates yet: both exact
    assert recall_accuracy(32, "delta") == 1.0 > 0.5 > recall_accuracy(32, "linear")


# --------------------------------------------------------------------------- the StreamingLLM cache


def test_streaming_mask_is_its_definition():
    T, w, s = 9, 3, 2
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    np.testing.assert_array_equal(streaming_mask(T, w, s), (j <= i) & ((j < s) | (i - j < w)))
    np.testing.assert_array_equal(streaming_mask(T, w, 0), sliding_window_mask(T, w))


@pytest.mark.parametrize(("window", "sinks", "n_kv"),
                         [(3, 2, 2), (4, 0, 1), (2, 5, 2), (5, 1, 1), (1, 1, 2), (3, 20, 1)])
def test_decoding_with_a_sink_cache_is_attention_under_the_streaming_mask(window, sinks, n_kv):
    rng = np.random.default_rng(window * 10 + sinks)
    T, h, d_head = 14, 2, 3
    X = rng.normal(size=(T, 5))
    W_q = rng.normal(size=(5, h * d_head))
    W_k, W_v = rng.normal(size=(5, n_kv * d_head)), rng.normal(size=(5, n_kv * d_head))
    cache = KVCache(n_kv, d_head, window=window, sinks=sinks)
    outs = []
    for t in range(T):
        outs.append(decode_step(X[t], cache, W_q, W_k, W_v, h, n_kv)[0])
        i = np.arange(t + 1)
        np.testing.assert_array_equal(cache.positions, i[(i < sinks) | (t - i < window)])
    ref, _ = grouped_query_attention(X, W_q, W_k, W_v, h, n_kv, mask=streaming_mask(T, window, sinks))
    np.testing.assert_allclose(np.array(outs), ref, **TOL)
    assert len(cache) == min(T, sinks + window)
    assert cache.nbytes == 2 * n_kv * len(cache) * d_head * 8


def test_a_sink_cache_appends_blocks_and_its_views_stay_valid():
    rng = np.random.default_rng(1)
    cache = KVCache(1, 2, window=3, sinks=2)
    ks = rng.normal(size=(1, 10, 2))
    cache.append(ks[:, :4], ks[:, :4])  # 4 positions at once: 2 sinks, 2 rolling
    K_then = cache.K
    cache.append(ks[:, 4:10], ks[:, 4:10])
    np.testing.assert_array_equal(K_then, ks[:, :4])
    np.testing.assert_array_equal(cache.K, ks[:, [0, 1, 7, 8, 9]])
    np.testing.assert_array_equal(cache.positions, [0, 1, 7, 8, 9])
    assert not cache.K.flags.writeable


def test_a_refused_step_leaves_a_sink_cache_as_it_was():
    cache = KVCache(1, 2, window=2, sinks=1)
    W = np.eye(2)
    decode_step(np.ones(2), cache, W, W, W, 1, 1)
    before = (cache.K.copy(), cache.positions.copy())
    with pytest.raises(ValueError):
        decode_step(np.array([1e300, 1e300]), cache, W * 1e10, W, W, 1, 1)
    np.testing.assert_array_equal(cache.K, before[0])
    np.testing.assert_array_equal(cache.positions, before[1])


def test_sinks_below_zero_are_refused_and_without_a_window_sinks_change_nothing():
    with pytest.raises(ValueError, match="sinks must be at least 0"):
        KVCache(1, 2, window=4, sinks=-1)
    with pytest.raises(ValueError, match="sinks must be at least 0"):
        streaming_mask(5, 2, -1)
    cache = KVCache(1, 2, sinks=3)
    x = np.arange(10.0).reshape(1, 5, 2)
    cache.append(x, x)
    np.testing.assert_array_equal(cache.K, x)
    assert "sinks=3" in repr(cache)


def test_output_gate_is_o_times_the_sigmoid_and_refuses_a_gate_that_does_not_broadcast():
    from helpers.modern import output_gate

    O, z = np.arange(6.0).reshape(3, 2), np.array([[-800.0], [0.0], [3.0]])
    np.testing.assert_allclose(output_gate(O, z), O * np.array([[0.0], [0.5], [1 / (1 + math.exp(-3))]]), **TOL)
    with pytest.raises(ValueError, match=r"gate_logits has shape \(2,\), which does not broadcast to O's shape"):
        output_gate(np.ones((3, 4)), np.ones(2))


@pytest.mark.parametrize("method", ["linear", "delta"])
@pytest.mark.parametrize(("n", "beta", "alpha"), [(3, 1.0, 1.0), (12, 0.75, 0.9), (20, 0.3, 0.6), (9, 0.5, 1.0)])
def test_recall_accuracy_runs_the_tasks_side_by_side_as_recall_readout_runs_each(method, n, beta, alpha):
    """The batched accuracy equals one recall_readout per task (gated_delta_rule for "delta"), strictly nearest."""
    right = total = 0
    for seed in range(10):
        K, V, latest = recall_task(n, 4, 3, np.random.default_rng(seed))
        R = recall_readout(K, V, method, beta, alpha)  # (d_k, d_v)
        for s in np.flatnonzero(latest >= 0):
            dist = ((V - R[s]) ** 2).sum(axis=1)  # (n,)
            others = np.delete(dist, latest[s])
            right += int(others.size == 0 or dist[latest[s]] + 1e-9 * (1 + dist[latest[s]]) < others.min())
            total += 1
    assert recall_accuracy(n, method, beta, alpha, d_k=4, d_v=3, seeds=10) == right / total


def test_a_readout_halfway_between_two_values_recalls_neither():
    """Linear attention with β = 1/2 and no forgetting, one slot written twice: the readout is (v1 + v2) / 2, as near
    to one as to the other in exact arithmetic; which one float rounding favours must not decide."""
    assert recall_accuracy(2, "linear", 0.5, 1.0, d_k=1, d_v=3, seeds=20) == 0.0
    assert recall_accuracy(2, "delta", 0.5, 1.0, d_k=1, d_v=3, seeds=20) > 0.5  # v1 / 4 + v2 / 2: no tie, mostly v2


def test_with_overlapping_keys_and_no_updates_both_recall_everything_while_n_is_small():
    from helpers.modern import overlap_recall_accuracy

    assert overlap_recall_accuracy(1, "linear", seeds=5) == 1.0 == overlap_recall_accuracy(1, "delta", seeds=5)
    assert 0 < overlap_recall_accuracy(24, "delta", seeds=5) < 1
