"""helpers.heads: each measurement on a designed pattern with a known answer, ablations, circuits, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.heads import (
    ablation_effects,
    diagonal_share,
    entropy,
    first_position_weight,
    head_weights,
    induction_probe,
    induction_score,
    induction_scores,
    k_composition,
    k_composition_baseline,
    k_composition_rotated,
    key_share,
    mean_loss,
    ov_circuit,
    position_losses,
    previous_token_score,
    qk_circuit,
    repeated_loss,
    weight_by_offset,
    without_mlp,
)
from helpers.language_model import GPTConfig, attention_weights, forward, init_params, load_model

SMALL = GPTConfig(vocab_size=7, context=8, d_model=8, n_heads=2, n_layers=2, d_ff=12)
TOL = 1e-12  # float64 sums of a few terms


def _previous(T: int) -> np.ndarray:
    """(T, T) every query i >= 1 on key i − 1; query 0 on itself."""
    w = np.zeros((T, T))
    w[0, 0] = 1
    w[np.arange(1, T), np.arange(T - 1)] = 1
    return w


def _induction(n: int) -> np.ndarray:
    """(2n, 2n) the first copy on key 0, query n + j on key j + 1."""
    w = np.zeros((2 * n, 2 * n))
    w[:n, 0] = 1
    w[n + np.arange(n), np.arange(n) + 1] = 1
    return w


def _even(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # (T, T) row i: 1/(i + 1) on keys 0..i


def test_designed_patterns_score_what_they_were_built_for():
    assert previous_token_score(_previous(6)) == pytest.approx(1, abs=TOL)
    assert induction_score(_induction(5)) == pytest.approx(1, abs=TOL)
    assert previous_token_score(_induction(5)) == pytest.approx(1 / 9, abs=TOL)  # only query 1 (on key 0)
    assert induction_score(_previous(10)) == pytest.approx(0, abs=TOL)
    sink = np.zeros((5, 5))
    sink[:, 0] = 1
    assert first_position_weight(sink) == pytest.approx(1, abs=TOL)
    assert previous_token_score(sink) == pytest.approx(1 / 4, abs=TOL)  # query 1's previous key is key 0
    assert entropy(sink) == pytest.approx(0, abs=TOL)
    T = 7
    assert entropy(_even(T)) == pytest.approx(np.mean(np.log(np.arange(1, T + 1))), abs=TOL)
    assert first_position_weight(_even(T)) == pytest.approx(np.mean(1 / np.arange(2, T + 1)), abs=TOL)
    keys = np.array([True, False, False, True, False])
    assert key_share(sink, keys) == pytest.approx(1, abs=TOL)
    assert key_share(_previous(5), keys) == pytest.approx((1 + 1 + 0 + 0 + 1) / 5, abs=TOL)


def test_measurements_keep_leading_axes():
    w = np.stack([_previous(6), _even(6)])[None]  # (1, 2, 6, 6)
    np.testing.assert_allclose(previous_token_score(w), [[1, np.mean(1 / np.arange(2, 7))]], atol=TOL)
    assert entropy(w).shape == (1, 2) and first_position_weight(w).shape == (1, 2)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: previous_token_score(np.ones((3, 4)) / 4), ValueError, ["weights", "square", "(3, 4)"]),
        (lambda: previous_token_score(np.ones((1, 1))), ValueError, ["T = 1", "at least 2"]),
        (lambda: induction_score(_even(5)), ValueError, ["T = 5", "even"]),
        (lambda: entropy(-_even(3)), ValueError, ["weights"]),
        (lambda: key_share(_even(3), [True, False]), ValueError, ["keys", "(3,)"]),
        (lambda: diagonal_share(np.ones((2, 3))), ValueError, ["M", "square"]),
    ],
)
def test_bad_patterns_are_refused_in_words(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_ablation_loss_and_weights_on_a_small_model():
    params = init_params(SMALL, seed=3, dtype=np.float64)
    rng = np.random.default_rng(0)
    params = {n: W + 0.3 * rng.standard_normal(W.shape) for n, W in params.items()}
    ids = np.array([1, 2, 3, 4, 1, 2, 3, 4, 5])  # (9,) T = context + 1
    np.testing.assert_allclose(head_weights(SMALL, params, ids[:8]), attention_weights(SMALL, params, ids[:8]),
                               rtol=TOL, atol=TOL)
    # layer 0's heads removed: layer 0 writes nothing, so layer 1's weights change, layer 0's do not
    w = head_weights(SMALL, params, ids[:8], ablate=[(0, 0), (0, 1)])
    np.testing.assert_allclose(w[0], attention_weights(SMALL, params, ids[:8])[0], rtol=TOL, atol=TOL)
    assert not np.allclose(w[1], attention_weights(SMALL, params, ids[:8])[1])
    # position_losses = −log softmax(forward)[next]
    logits = forward(SMALL, params, ids[:-1], ablate=[(1, 1)])  # (8, 7)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    np.testing.assert_allclose(position_losses(SMALL, params, ids, ablate=[(1, 1)]), -logp[np.arange(8), ids[1:]],
                               rtol=1e-10)
    assert mean_loss(SMALL, params, ids[None]) == pytest.approx(position_losses(SMALL, params, ids).mean(), rel=1e-12)
    effects = ablation_effects(SMALL, params, ids[None], ids[1:][None])
    assert effects["text"].shape == effects["repeat"].shape == (2, 2)
    assert effects["text"][1, 1] == pytest.approx(mean_loss(SMALL, params, ids[None], ablate=[(1, 1)])
                                                  - effects["text_base"], abs=1e-12)
    cut = without_mlp(SMALL, params, 1)
    assert not cut["l1.W_2"].any() and cut["l0.W_2"] is params["l0.W_2"] and params["l1.W_2"].any()


def test_k_composition_is_one_when_the_key_reads_exactly_what_was_written_and_random_is_small():
    config = GPTConfig(vocab_size=5, context=4, d_model=4, n_heads=1, n_layers=2, d_ff=4)
    params = init_params(config, dtype=np.float64)
    # layer 0 writes along e_0 only; layer 1's W_QK reads e_0 on both sides: rank-one, aligned: score 1
    for n in ("l0.W_v", "l0.W_o", "l1.W_q", "l1.W_k"):
        params[n] = np.zeros((4, 4))
        params[n][0, 0] = 1.0
    assert k_composition(config, params)[0, 0] == pytest.approx(1, abs=TOL)
    params["l1.W_k"] = np.zeros((4, 4))
    params["l1.W_k"][1, 0] = 1.0  # keys read e_1, which layer 0 never writes: 0
    assert k_composition(config, params)[0, 0] == pytest.approx(0, abs=TOL)
    mean, std = k_composition_baseline(SMALL, n_draws=50)
    assert 0 < mean < 1 and std < mean


def test_circuits_read_a_designed_copying_head():
    config = GPTConfig(vocab_size=4, context=4, d_model=4, n_heads=1, n_layers=2, d_ff=4)
    params = init_params(config, dtype=np.float64)
    params["tok_emb"] = np.eye(4) - 0.25  # centred one-hots: LayerNorm keeps their direction
    for n in ("l1.W_v", "l1.W_o", "W_out", "l0.W_v", "l0.W_o", "l1.W_q", "l1.W_k"):
        params[n] = np.eye(4)
    assert diagonal_share(ov_circuit(config, params, 1, 0)) == 1.0  # the head copies each symbol to its logit
    assert diagonal_share(qk_circuit(config, params, (1, 0), (0, 0))) == 1.0
    with pytest.raises(ValueError, match=r"earlier layer"):
        qk_circuit(config, params, (0, 0), (1, 0))
    with pytest.raises(ValueError, match=r"ablate\[0\].*layer must be 0 \.\. 1"):
        ov_circuit(config, params, 2, 0)


def test_committed_model_has_the_heads_notebook_13_describes():
    config, params, _ = load_model()
    probe = induction_probe(config.vocab_size)
    scores = induction_scores(config, params, probe)  # (L, h)
    assert scores[1, 1] == scores.max() and scores[1, 1] >= 0.8
    first, second = repeated_loss(config, params, probe)
    assert second < 0.1 * first
    _, cut = repeated_loss(config, params, probe, ablate=[(0, 1), (0, 3)])
    assert cut > 10 * second  # without layer 0's previous-token heads the copy is lost
    assert induction_scores(config, params, probe, ablate=[(0, 1), (0, 3)])[1, 1] < 0.1
    assert math.isfinite(first)


def test_key_only_and_query_only_patching():
    params = init_params(SMALL, seed=3, dtype=np.float64)
    rng = np.random.default_rng(1)
    params = {n: W + 0.3 * rng.standard_normal(W.shape) for n, W in params.items()}
    probe = np.array([[1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6]])  # (2, 6) n = 3, repeated
    full = induction_scores(SMALL, params, probe)
    cut = induction_scores(SMALL, params, probe, ablate=[(0, 0), (0, 1)])
    for only in ("keys", "queries"):
        # nothing removed: the patched weights are the model's
        np.testing.assert_allclose(induction_scores(SMALL, params, probe, only=only), full, rtol=0, atol=1e-12)
        part = induction_scores(SMALL, params, probe, ablate=[(0, 0), (0, 1)], only=only)
        np.testing.assert_allclose(part[0], full[0], rtol=0, atol=1e-12)  # layer 0 reads no removed head
        assert not np.allclose(part[1], full[1]) and not np.allclose(part[1], cut[1])  # half the change
    # by hand: layer 1's queries from the full run, its keys from the run without layer 0's heads
    from helpers.language_model import forward_unchecked
    _, a = forward_unchecked(SMALL, params, probe, keep=True)
    _, b = forward_unchecked(SMALL, params, probe, keep=True, ablate=((0, 0), (0, 1)))
    S = a.blocks[1].Q @ b.blocks[1].K.swapaxes(-1, -2)  # (2, h, 6, 6)
    S = np.where(np.tril(np.ones((6, 6), bool)), S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    np.testing.assert_allclose(induction_scores(SMALL, params, probe, ablate=[(0, 0), (0, 1)], only="keys")[1],
                               induction_score(P).mean(axis=0), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"only must be None, 'keys' or 'queries', got 'values'"):
        induction_scores(SMALL, params, probe, only="values")


def test_mean_ablation_writes_the_mlps_mean_output():
    params = init_params(SMALL, seed=3, dtype=np.float64)
    rng = np.random.default_rng(2)
    params = {n: W + 0.3 * rng.standard_normal(W.shape) for n, W in params.items()}
    ids = np.array([[1, 2, 3, 4, 5, 6, 1, 2], [6, 5, 4, 3, 2, 1, 0, 6]])  # (2, 8)
    cut = without_mlp(SMALL, params, 0, mean_over=ids)
    assert not cut["l0.W_2"].any() and cut["l1.W_2"] is params["l1.W_2"]
    from helpers.language_model import forward_unchecked
    _, fwd = forward_unchecked(SMALL, params, ids, keep=True)
    outputs = fwd.blocks[0].g @ params["l0.W_2"] + params["l0.b_2"]  # (16, d_model) MLP 0's output at each position
    np.testing.assert_allclose(cut["l0.b_2"], outputs.mean(axis=0), rtol=0, atol=1e-12)
    zero = without_mlp(SMALL, params, 0)
    assert not zero["l0.b_2"].any()
    with pytest.raises(ValueError, match=r"mean_over"):
        without_mlp(SMALL, params, 0, mean_over=np.array([1, 2, 3]))


def test_rotated_baseline_keeps_singular_values_and_centres_near_random():
    config = GPTConfig(vocab_size=5, context=4, d_model=4, n_heads=1, n_layers=2, d_ff=4)
    params = init_params(config, dtype=np.float64)
    for n in ("l0.W_v", "l0.W_o", "l1.W_q", "l1.W_k"):
        params[n] = np.zeros((4, 4))
        params[n][0, 0] = 1.0
    # aligned rank-one matrices score 1; turned by a random rotation the score is |u_0| of a uniform unit vector u
    # in 4 dimensions, whose mean is Γ(2) / (√π Γ(5/2)) = 4 / (3π) = 0.4244
    mean, std = k_composition_rotated(config, params, n_draws=400, seed=1)
    assert mean.shape == std.shape == (1, 1)
    assert k_composition(config, params)[0, 0] == pytest.approx(1, abs=TOL)
    assert mean[0, 0] == pytest.approx(4 / (3 * math.pi), abs=0.05) and 0.1 < std[0, 0] < 0.4  # 400 draws: ±0.013
    again = k_composition_rotated(config, params, n_draws=400, seed=1)
    np.testing.assert_array_equal(again[0], mean)  # seeded
    with pytest.raises(ValueError, match=r"n_draws"):
        k_composition_rotated(config, params, n_draws=1)


def test_weight_by_offset_reads_each_diagonal_and_checks_n():
    w = _previous(6)
    by = weight_by_offset(w, 3)  # (3,) on the key itself, one back, two back
    assert by[1] == pytest.approx(float(previous_token_score(w)), abs=TOL)
    assert by[2] == pytest.approx(0, abs=TOL)
    even = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]  # (4, 4) each row spread evenly
    np.testing.assert_allclose(weight_by_offset(even, 4), [np.mean(1 / np.arange(1, 5)), np.mean(1 / np.arange(2, 5)),
                                                           np.mean(1 / np.arange(3, 5)), 1 / 4], atol=TOL)
    for bad in (0, 5, 2.0, True):
        with pytest.raises(ValueError, match="n must be an integer from 1 to T = 4"):
            weight_by_offset(even, bad)
