"""helpers.language_model (and helpers.layers, helpers.lm_train): gradients by finite differences, generation,
the committed model and corpus, and every bad input of issue 26."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from helpers.backward import numerical_gradient
from helpers.language_model import (
    CORPUS_PATH,
    LOG_PATH,
    MODEL_PATH,
    GPTConfig,
    attention_weights,
    forward,
    generate,
    init_params,
    load_corpus,
    load_model,
    loss_and_grads,
    n_params,
    param_shapes,
)
from helpers.layers import (
    cross_entropy,
    cross_entropy_backward,
    gelu,
    gelu_backward,
    layer_norm,
    layer_norm_backward,
)

SMALL = GPTConfig(vocab_size=7, context=6, d_model=8, n_heads=2, n_layers=2, d_ff=12)
GRAD_TOL = 1e-6  # relative to the largest gradient entry, float64 central differences (eps 1e-6)


def _rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))


def _perturbed(config: GPTConfig, seed: int = 1) -> dict[str, np.ndarray]:
    """float64 params moved away from init (LayerNorm gains not 1, biases not 0), so every term matters."""
    rng = np.random.default_rng(seed)
    return {n: W + 0.3 * rng.standard_normal(W.shape) for n, W in init_params(config, seed, np.float64).items()}


@pytest.fixture(scope="module")
def small_batch():
    rng = np.random.default_rng(0)
    return rng.integers(0, SMALL.vocab_size, (3, 5)), rng.integers(0, SMALL.vocab_size, (3, 5))


# --------------------------------------------------------------------------- each backward piece


def test_layer_norm_matches_its_formula():
    rng = np.random.default_rng(0)
    x, g, b = rng.standard_normal((4, 6)), rng.standard_normal(6), rng.standard_normal(6)
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b  # biased var
    np.testing.assert_allclose(layer_norm(x, g, b), expected, rtol=1e-12, atol=1e-12)


def test_layer_norm_backward_by_finite_differences():
    rng = np.random.default_rng(1)
    x, g, b, dy = (rng.standard_normal(s) for s in ((3, 5), (5,), (5,), (3, 5)))
    dx, dg, db = layer_norm_backward(x, g, dy)
    assert _rel_err(dx, numerical_gradient(lambda v: np.sum(dy * layer_norm(v, g, b)), x)) < GRAD_TOL
    assert _rel_err(dg, numerical_gradient(lambda v: np.sum(dy * layer_norm(x, v, b)), g)) < GRAD_TOL
    assert _rel_err(db, numerical_gradient(lambda v: np.sum(dy * layer_norm(x, g, v)), b)) < GRAD_TOL


def test_gelu_is_the_tanh_form_and_its_backward_by_finite_differences():
    x = np.linspace(-4, 4, 17)
    expected = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(gelu(x), expected, rtol=1e-14, atol=1e-15)
    dy = np.random.default_rng(2).standard_normal(17)
    assert _rel_err(gelu_backward(x, dy), numerical_gradient(lambda v: np.sum(dy * gelu(v)), x)) < GRAD_TOL


def test_cross_entropy_and_its_backward_by_finite_differences():
    rng = np.random.default_rng(3)
    logits, targets = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, (2, 3))
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -np.take_along_axis(logp, targets[..., None], -1).mean()
    assert cross_entropy(logits, targets) == pytest.approx(expected, rel=1e-12)
    numeric = numerical_gradient(lambda v: cross_entropy(v, targets), logits)
    assert _rel_err(cross_entropy_backward(logits, targets), numeric) < GRAD_TOL


def _grad_check(config, params, tokens, targets, names):
    _, grads = loss_and_grads(config, params, tokens, targets)
    for name in names:
        def f(W, name=name):  # the loss by the forward pass alone
            return cross_entropy(forward(config, {**params, name: W}, tokens), targets)
        assert grads[name].dtype == np.float64
        assert _rel_err(grads[name], numerical_gradient(f, params[name])) < GRAD_TOL, name


def test_embedding_gradients_by_finite_differences(small_batch):
    # tokens repeat within the batch, so tok_emb's rows sum several positions; pos_emb rows >= T get 0
    _grad_check(SMALL, _perturbed(SMALL), *small_batch, ["tok_emb", "pos_emb"])


def test_attention_block_gradients_by_finite_differences(small_batch):
    names = [f"l1.{n}" for n in ("ln1.g", "ln1.b", "W_q", "W_k", "W_v", "W_o")]
    _grad_check(SMALL, _perturbed(SMALL), *small_batch, names)


def test_whole_loss_gradient_by_finite_differences():
    tiny = GPTConfig(vocab_size=5, context=4, d_model=4, n_heads=2, n_layers=2, d_ff=6)  # 334 numbers
    rng = np.random.default_rng(5)
    tokens, targets = rng.integers(0, 5, (2, 4)), rng.integers(0, 5, (2, 4))
    _grad_check(tiny, _perturbed(tiny), tokens, targets, list(param_shapes(tiny)))


# --------------------------------------------------------------------------- the model


def test_init_params_keys_shapes_dtype_and_count():
    params = init_params(SMALL)
    assert list(params) == list(param_shapes(SMALL))
    assert params["l1.W_2"].shape == (12, 8) and params["W_out"].shape == (8, 7)
    assert all(W.dtype == np.float32 for W in params.values())
    assert sum(W.size for W in params.values()) == n_params(SMALL)
    np.testing.assert_array_equal(init_params(SMALL, seed=3)["tok_emb"], init_params(SMALL, seed=3)["tok_emb"])


def test_float32_gradients_stay_float32(small_batch):
    loss, grads = loss_and_grads(SMALL, init_params(SMALL), *small_batch)
    assert isinstance(loss, float)
    assert all(grads[n].dtype == np.float32 and grads[n].shape == W.shape for n, W in init_params(SMALL).items())


def test_forward_one_sequence_equals_a_batch_row_and_is_causal():
    params = _perturbed(SMALL)
    tokens = np.array([[1, 2, 3, 4, 5, 6], [1, 2, 3, 0, 0, 0]])
    logits = forward(SMALL, params, tokens)  # (2, 6, 7)
    np.testing.assert_allclose(forward(SMALL, params, tokens[0]), logits[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(logits[1, :3], logits[0, :3], rtol=1e-12, atol=1e-12)  # the future is hidden
    assert not np.allclose(logits[1, 3:], logits[0, 3:])
    w = attention_weights(SMALL, params, tokens[0])  # (L, h, T, T)
    assert w.shape == (2, 2, 6, 6)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-12)
    assert np.all(np.triu(w, 1) == 0)


def test_ablating_a_head_zeroes_its_output_before_W_o():
    params = _perturbed(SMALL, seed=2)
    tokens = np.array([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
    np.testing.assert_array_equal(forward(SMALL, params, tokens, ablate=()), forward(SMALL, params, tokens))
    # head 1 of layer 0 removed = the columns of its block in W_o set to 0 (rows 4..7: d_head = 4)
    cut = {**params, "l0.W_o": params["l0.W_o"].copy()}
    cut["l0.W_o"][4:8] = 0
    np.testing.assert_allclose(forward(SMALL, params, tokens, ablate=[(0, 1)]), forward(SMALL, cut, tokens),
                               rtol=1e-12, atol=1e-12)
    every = [(layer, head) for layer in range(2) for head in range(2)]
    no_heads = {**params, "l0.W_o": np.zeros((8, 8)), "l1.W_o": np.zeros((8, 8))}
    np.testing.assert_allclose(forward(SMALL, params, tokens[0], ablate=every), forward(SMALL, no_heads, tokens[0]),
                               rtol=1e-12, atol=1e-12)
    assert not np.allclose(forward(SMALL, params, tokens, ablate=[(1, 0)]), forward(SMALL, params, tokens))
    np.testing.assert_array_equal(forward(SMALL, params, tokens, ablate=np.array([[0, 1]])),
                                  forward(SMALL, params, tokens, ablate=[(0, 1)]))  # numpy ints are ints


# --------------------------------------------------------------------------- generation


def test_cache_gives_the_same_tokens_as_recomputing_within_and_beyond_context():
    params = _perturbed(SMALL, seed=4)
    for kwargs in ({"temperature": 0}, {"temperature": 1.0, "seed": 5}, {"temperature": 0.7, "top_k": 3, "seed": 6}):
        with_cache = generate(SMALL, params, [1, 2], 12, **kwargs)  # 14 tokens > context 6
        without = generate(SMALL, params, [1, 2], 12, use_cache=False, **kwargs)
        np.testing.assert_array_equal(with_cache, without)
        assert with_cache.shape == (14,) and list(with_cache[:2]) == [1, 2]


def test_one_block_serves_the_full_pass_and_the_cached_steps():
    """forward_unchecked through one KVCache per layer (the prompt at once, then one token at a time) gives the
    full pass's logits and attention weights to 1e-12 in float64: the same block, with and without a cache."""
    from helpers.language_model import forward_unchecked, new_caches

    params = _perturbed(SMALL, seed=7)
    tokens = np.array([[3, 1, 4, 1, 5, 6]])  # (1, 6): the whole context
    full, fwd = forward_unchecked(SMALL, params, tokens, keep=True)  # (1, 6, V)
    caches = new_caches(SMALL)
    steps = [forward_unchecked(SMALL, params, tokens[:, :3], keep=True, caches=caches)]  # the prompt at once
    steps += [forward_unchecked(SMALL, params, tokens[:, t:t + 1], keep=True, caches=caches, start=t)
              for t in range(3, 6)]
    cached = np.concatenate([logits for logits, _ in steps], axis=1)  # (1, 6, V)
    np.testing.assert_allclose(cached, full, rtol=0, atol=1e-12 * np.abs(full).max())
    for layer in range(SMALL.n_layers):
        P = fwd.blocks[layer].P[0]  # (h, 6, 6)
        for t, (_, values) in zip(range(3, 6), steps[1:], strict=True):
            np.testing.assert_allclose(values.blocks[layer].P[0, :, 0], P[:, t, :t + 1], rtol=0, atol=1e-12)
    assert [len(c) for c in caches] == [6, 6]


def test_traced_generation_is_generate_with_its_distribution():
    from helpers.sampling import next_char_probs, trace_generation

    params = _perturbed(SMALL, seed=4)
    kwargs = {"temperature": 0.9, "top_k": 4, "seed": 2}
    trace = trace_generation(SMALL, params, [1, 2], 4, window=3, **kwargs)
    np.testing.assert_array_equal(trace.tokens, generate(SMALL, params, [1, 2], 4, **kwargs))
    for k in range(5):
        np.testing.assert_allclose(trace.logits[k], forward(SMALL, params, trace.tokens[:2 + k])[-1], atol=1e-12)
        np.testing.assert_array_equal(trace.probs[k], next_char_probs(trace.logits[k], 0.9, 4))


def test_seeded_sampling_is_reproducible_and_depends_on_the_seed():
    params = _perturbed(SMALL, seed=4)
    a = generate(SMALL, params, [3], 30, seed=11)
    np.testing.assert_array_equal(a, generate(SMALL, params, [3], 30, seed=11))
    assert not np.array_equal(a, generate(SMALL, params, [3], 30, seed=12))


def test_temperature_zero_is_greedy_and_top_k_1_too():
    params = _perturbed(SMALL, seed=4)
    out = generate(SMALL, params, [2, 5], 4, temperature=0)
    for t in range(2, 6):
        assert out[t] == np.argmax(forward(SMALL, params, out[:t])[-1])  # argmax of the last position's logits
    np.testing.assert_array_equal(generate(SMALL, params, [2, 5], 4, top_k=1, seed=9), out)


def test_top_k_is_honoured():
    params = _perturbed(SMALL, seed=4)
    out = generate(SMALL, params, [0], 5, temperature=5.0, top_k=2, seed=1)  # hot: without top_k, anything goes
    for t in range(1, 6):
        top2 = np.argsort(forward(SMALL, params, out[:t])[-1])[-2:]
        assert out[t] in top2


# --------------------------------------------------------------------------- the committed corpus and model


def test_committed_model_is_trained_on_the_committed_corpus():
    with np.load(MODEL_PATH) as f:
        recorded = str(f["corpus_sha256"])
    assert recorded == hashlib.sha256(CORPUS_PATH.read_bytes()).hexdigest()
    assert json.loads(LOG_PATH.read_text())["corpus_sha256"] == recorded


def test_committed_model_reproduces_its_validation_loss_and_beats_the_bigram():
    from helpers.lm_train import text_loss

    config, params, tokenizer = load_model()
    train_text, valid_text = load_corpus()
    log = json.loads(LOG_PATH.read_text())
    loss = text_loss(config, params, tokenizer.encode(valid_text, errors="replace"))
    assert loss == pytest.approx(log["best_valid_loss"], abs=1e-4)  # float32 sums in another order: 1e-4 nats
    assert loss <= 0.65 * log["baselines"]["bigram"]
    assert MODEL_PATH.stat().st_size <= 5_000_000
    assert tokenizer.decode(tokenizer.encode("attention")) == "attention"


# --------------------------------------------------------------------------- bad input


def _params_with(name, value):
    return {**init_params(SMALL), name: value}


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda p: forward(SMALL, p, [[0, 7]]), ValueError, ["tokens", "vocab_size = 7"]),
        (lambda p: forward(SMALL, p, [-1]), ValueError, ["tokens", "not a token id"]),
        (lambda p: forward(SMALL, p, np.zeros(7, int)), ValueError, ["tokens", "(7,)", "context = 6"]),
        (lambda p: forward(SMALL, p, np.zeros(3)), TypeError, ["tokens", "float64"]),
        (lambda p: forward(SMALL, p, np.zeros((1, 1, 3), int)), ValueError, ["tokens", "(1, 1, 3)"]),
        (lambda p: forward(SMALL, p, np.zeros(0, int)), ValueError, ["tokens", "empty"]),
        (lambda p: forward(SMALL, {k: v for k, v in p.items() if k != "l1.W_v"}, [1]), ValueError,
         ["missing", "l1.W_v"]),
        (lambda p: forward(SMALL, {**p, "l0.W_1": np.zeros((8, 11), np.float32)}, [1]), ValueError,
         ["l0.W_1", "(8, 11)", "(8, 12)"]),
        (lambda p: forward(SMALL, {**p, "l0.b_1": np.full(12, np.nan, np.float32)}, [1]), ValueError,
         ["l0.b_1", "finite"]),
        (lambda p: forward(SMALL, {**p, "W_out": np.full((8, 7), np.inf, np.float32)}, [1]), ValueError,
         ["W_out", "inf"]),
        (lambda p: forward(SMALL, {**p, "l2.W_q": np.zeros((8, 8), np.float32)}, [1]), ValueError, ["l2.W_q"]),
        (lambda p: loss_and_grads(SMALL, p, [[1, 2, 3]], [[1, 2]]), ValueError, ["targets", "(1, 2)", "(1, 3)"]),
        (lambda p: loss_and_grads(SMALL, p, [[1, 2]], [[1, 9]]), ValueError, ["targets", "9"]),
        (lambda p: loss_and_grads(SMALL, p, [1, 2], [[1, 2]]), ValueError, ["targets", "(1, 2)", "(2,)"]),
        (lambda p: generate(SMALL, p, [1], 3, temperature=-0.5), ValueError, ["temperature", "-0.5"]),
        (lambda p: generate(SMALL, p, [1], 3, top_k=0), ValueError, ["top_k", "at least 1"]),
        (lambda p: generate(SMALL, p, [1], 3, top_k=8), ValueError, ["top_k", "at most 7"]),
        (lambda p: generate(SMALL, p, [], 3), ValueError, ["prompt", "empty"]),
        (lambda p: generate(SMALL, p, [1], -1), ValueError, ["n_new"]),
        (lambda p: generate(SMALL, p, [1.0], 3), TypeError, ["prompt", "float"]),
        (lambda p: forward(SMALL, p, [1], ablate=[(2, 0)]), ValueError, ["ablate[0]", "layer", "0 .. 1", "got 2"]),
        (lambda p: forward(SMALL, p, [1], ablate=[(0, -1)]), ValueError, ["ablate[0]", "head", "0 .. 1"]),
        (lambda p: forward(SMALL, p, [1], ablate=[(0, 1), (1, 0), (0, 1)]), ValueError, ["ablate[2]", "repeated"]),
        (lambda p: forward(SMALL, p, [1], ablate=[(0, 1.0)]), TypeError, ["ablate[0]", "head", "integer", "float"]),
        (lambda p: forward(SMALL, p, [1], ablate=[(True, 1)]), TypeError, ["ablate[0]", "layer", "integer"]),
        (lambda p: forward(SMALL, p, [1], ablate=[(0, 1, 2)]), TypeError, ["ablate[0]", "pair"]),
        (lambda p: forward(SMALL, p, [1], ablate=(0, 1)), TypeError, ["ablate[0]", "pair"]),
        (lambda p: forward(SMALL, p, [1], ablate="01"), TypeError, ["ablate", "list of (layer, head) pairs"]),
        (lambda p: attention_weights(SMALL, p, [[1, 2], [3, 4]]), ValueError, ["tokens", "(2, 2)", "one sequence"]),
        (lambda p: attention_weights(SMALL, p, []), ValueError, ["tokens", "empty"]),
    ],
)
def test_bad_input_is_refused_naming_the_argument(call, error, words):
    with pytest.raises(error) as info:
        call(init_params(SMALL))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match=r"n_heads = 3 does not divide d_model = 8"):
        GPTConfig(7, 6, 8, 3, 1, 12)
    with pytest.raises(ValueError, match=r"n_layers must be at least 1, got 0"):
        GPTConfig(7, 6, 8, 2, 0, 12)
    with pytest.raises(TypeError, match=r"context must be an integer"):
        GPTConfig(7, 6.0, 8, 2, 1, 12)


def test_characters_outside_the_vocabulary_are_named_or_mapped_to_unknown():
    _, _, tokenizer = load_model()
    with pytest.raises(ValueError, match="not in the vocabulary: \\['😀'\\]"):
        tokenizer.encode("a😀b")
    ids = tokenizer.encode("a😀b", errors="replace")
    assert ids[1] == 0 and tokenizer.decode(ids) == "a\ufffdb"


def test_committed_model_has_an_induction_head():
    from helpers.lm_train import induction_probe, induction_scores

    config, params, _ = load_model()
    scores = induction_scores(config, params, induction_probe(config.vocab_size))  # (L, h)
    assert scores.shape == (config.n_layers, config.n_heads)
    assert scores.max() >= 0.3  # issue 26's threshold; the committed model's best head scores about 0.88


def test_training_log_keeps_what_notebook_13_needs_without_whole_models():
    log = json.loads(LOG_PATH.read_text())
    steps = [s["step"] for s in log["snapshots"]]
    assert steps == list(range(0, log["steps"] + 1, 200))
    assert {"train_loss", "valid_loss", "induction", "repeat_first", "repeat_second"} <= set(log["snapshots"][-1])
    config, _, _ = load_model()
    with np.load(MODEL_PATH) as f:
        attention = f["probe_attention"]  # (snapshots, L, probes, h, T, T), float16
        assert list(f["probe_steps"]) == steps
        assert attention.shape[:4] == (len(steps), config.n_layers, len(f["probe_texts"]), config.n_heads)
        assert attention.dtype == np.float16
    assert log["best_step"] in steps


# --------------------------------------------------------------------------- stream_losses (notebook 14)


def _masked_reference_losses(config, p, tokens, mask):
    """Next-token losses (T−1,) of the whole text at once under a boolean (T, T) mask in every layer, in float64."""
    T, H, dh = len(tokens), config.n_heads, config.d_head
    x = p["tok_emb"][tokens] + p["pos_emb"][:T]  # (T, d_model)
    for layer in range(config.n_layers):
        q = f"l{layer}."
        h = layer_norm(x, p[q + "ln1.g"], p[q + "ln1.b"])  # (T, d_model)
        Q, K, V = (np.swapaxes((h @ p[q + W]).reshape(T, H, dh), 0, 1) for W in ("W_q", "W_k", "W_v"))  # (h, T, dh)
        S = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(dh), -np.inf)  # (h, T, T)
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        A /= A.sum(axis=-1, keepdims=True)  # (h, T, T)
        x = x + np.swapaxes(A @ V, 0, 1).reshape(T, H * dh) @ p[q + "W_o"]  # (T, d_model)
        h = layer_norm(x, p[q + "ln2.g"], p[q + "ln2.b"])
        x = x + gelu(h @ p[q + "W_1"] + p[q + "b_1"]) @ p[q + "W_2"] + p[q + "b_2"]
    logits = layer_norm(x, p["ln_f.g"], p["ln_f.b"]) @ p["W_out"]  # (T, V)
    logp = logits - logits.max(axis=-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=-1, keepdims=True))  # (T, V) log-softmax
    return -logp[np.arange(T - 1), tokens[1:]]  # (T−1,)


def test_stream_losses_with_full_attention_are_forwards_cross_entropy():
    from helpers.language_model import stream_losses

    config, params, tokenizer = load_model()
    _, valid = load_corpus()
    tokens = tokenizer.encode(valid[:config.context], errors="replace")  # (128,)
    losses = stream_losses(config, params, tokens)  # (127,)
    logits = forward(config, params, tokens).astype(np.float64)  # (128, V)
    logp = logits - logits.max(axis=-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=-1, keepdims=True))  # (128, V)
    assert losses.shape == (config.context - 1,) and losses.dtype == np.float64
    np.testing.assert_allclose(losses, -logp[np.arange(127), tokens[1:]], rtol=0, atol=1e-4)  # float32 paths
    loss, _ = loss_and_grads(config, params, tokens[:-1], tokens[1:])  # the mean over the same 127 predictions
    np.testing.assert_allclose(losses.mean(), loss, rtol=0, atol=1e-4)
    # a window as long as the text evicts nothing; sinks without a window change nothing (as in KVCache).
    # The same numbers in differently laid-out buffers: equal up to float32 rounding under another SIMD path
    np.testing.assert_allclose(stream_losses(config, params, tokens, window=config.context), losses, rtol=0, atol=1e-5)
    np.testing.assert_allclose(stream_losses(config, params, tokens, sinks=4), losses, rtol=0, atol=1e-5)


@pytest.mark.parametrize("window, sinks", [(1, 0), (2, 0), (3, 0), (2, 1), (2, 2), (1, 3), (10, 2)])
def test_stream_losses_equal_attention_under_the_streaming_mask(window, sinks):
    from helpers.language_model import stream_losses
    from helpers.longcontext import streaming_mask

    params = _perturbed(SMALL)  # float64
    tokens = np.random.default_rng(3).integers(0, SMALL.vocab_size, SMALL.context)  # (6,)
    expected = _masked_reference_losses(SMALL, params, tokens, streaming_mask(SMALL.context, window, sinks))
    got = stream_losses(SMALL, params, tokens, window=window, sinks=sinks)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)  # float64
    if window < SMALL.context - 1:  # something is evicted: the losses differ from full attention's
        assert np.abs(got - stream_losses(SMALL, params, tokens)).max() > 1e-6


def test_sinks_recover_most_of_what_a_window_loses_on_the_committed_model():
    from helpers.language_model import stream_losses

    config, params, tokenizer = load_model()
    _, valid = load_corpus()
    texts = tokenizer.encode(valid[:4 * config.context], errors="replace").reshape(4, config.context)  # (4, 128)
    mean = {k: np.mean([stream_losses(config, params, x, window=k[0], sinks=k[1]) for x in texts])
            for k in ((None, 0), (16, 0), (16, 4))}
    assert mean[(16, 0)] > mean[(None, 0)] + 0.1  # evicting the first characters costs (about 0.28 nats)
    assert mean[(16, 4)] < mean[(16, 0)] - 0.1  # keeping 4 gives most of it back (about 0.04 nats above full)


@pytest.mark.parametrize(
    "kwargs, tokens, error, words",
    [
        ({}, [1], ValueError, ["tokens", "(1,)", "at least 2"]),
        ({}, [1, 2, 3, 4, 5, 6, 1], ValueError, ["tokens", "T = 7", "positions", "context = 6"]),
        ({}, [[1, 2], [3, 4]], ValueError, ["tokens", "(T,)", "(2, 2)"]),
        ({}, [1, 9], ValueError, ["tokens", "9"]),
        ({}, "ab", TypeError, ["tokens", "str"]),
        ({"window": 0}, [1, 2], ValueError, ["window", "at least 1", "0"]),
        ({"window": 2.5}, [1, 2], TypeError, ["window", "integer"]),
        ({"window": 2, "sinks": -1}, [1, 2], ValueError, ["sinks", "at least 0", "-1"]),
        ({"sinks": True}, [1, 2], TypeError, ["sinks", "integer"]),
    ],
)
def test_stream_losses_refuse_bad_input_naming_the_argument(kwargs, tokens, error, words):
    from helpers.language_model import stream_losses

    with pytest.raises(error) as info:
        stream_losses(SMALL, init_params(SMALL), tokens, **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
