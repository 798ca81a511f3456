"""Tests of helpers/training.py: one attention layer learns the attention pattern its task needs.

The two training runs (about 0.2 s each) are shared by a module fixture. Thresholds: token
accuracy >= 0.99 on 512 evaluation sequences and on 2000 fresh ones; every probe row's argmax at
the right key; the right key's weight >= 0.9 in every probe row. Numeric checks state their
tolerance; "exact" means bit-for-bit equality.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import rx

from helpers.backward import numerical_gradient
from helpers.training import (
    PARAM_NAMES,
    TASKS,
    adam_step,
    cross_entropy,
    default_probe,
    encode,
    evaluate,
    forward,
    init_params,
    letters,
    loss_and_grads,
    make_batch,
    target_pattern,
    targets_for,
    train,
)

RUN = {"steps": 300, "seed": 0, "lr": 0.05, "batch_size": 32, "T": 6, "n_vocab": 8, "d_k": 8, "d_v": 8}
ACCURACY = 0.99  # token accuracy a trained layer must reach
MASS = 0.9  # weight on the right key, in every row of the probe's attention weights


@pytest.fixture(scope="module")
def runs():
    return {task: train(task, **RUN, snapshot_every=10) for task in TASKS}


# ============================================================================ the tasks


def test_targets_for_known_sequences():
    np.testing.assert_array_equal(targets_for("reverse", [1, 2, 3, 4, 5]), [5, 4, 3, 2, 1])
    np.testing.assert_array_equal(targets_for("previous", [1, 2, 3, 4, 5]), [1, 1, 2, 3, 4])
    batch = np.array([[0, 1, 2], [3, 4, 5]])  # (2, 3): each row on its own
    np.testing.assert_array_equal(targets_for("reverse", batch), [[2, 1, 0], [5, 4, 3]])
    np.testing.assert_array_equal(targets_for("previous", batch), [[0, 0, 1], [3, 3, 4]])


def test_target_patterns_are_the_pictures():
    np.testing.assert_array_equal(target_pattern("reverse", 4), np.fliplr(np.eye(4)))  # anti-diagonal
    np.testing.assert_array_equal(
        target_pattern("previous", 4),
        [[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]],  # sub-diagonal, position 0 on itself
    )


def test_encode_is_one_hot_token_then_one_hot_position():
    X = encode([2, 0, 2], n_vocab=3)
    assert X.shape == (3, 6)
    np.testing.assert_array_equal(X, [[0, 0, 1, 1, 0, 0], [1, 0, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1]])
    assert encode(np.zeros((4, 5), dtype=int), 7).shape == (4, 5, 12)  # (B, T, n_vocab + T)


def test_make_batch_shapes_range_and_seeding():
    tokens, targets = make_batch("reverse", 64, 5, 4, np.random.default_rng(3))
    assert tokens.shape == targets.shape == (64, 5)
    assert tokens.min() >= 0 and tokens.max() <= 3
    np.testing.assert_array_equal(targets, tokens[:, ::-1])
    again, _ = make_batch("reverse", 64, 5, 4, np.random.default_rng(3))
    np.testing.assert_array_equal(tokens, again)  # the same seed gives the same batch, exact


def test_letters_and_probe():
    assert letters(default_probe(6, 8)) == ["B", "C", "D", "E", "F", "G"]
    np.testing.assert_array_equal(default_probe(4, 3), [1, 2, 0, 1])  # wraps around n_vocab


# ============================================================================ the model and its gradient


def test_forward_shapes_and_attention_rows_sum_to_one():
    params = init_params(5, 4, 3, 2, np.random.default_rng(0))
    assert {n: W.shape for n, W in params.items()} == {"W_q": (9, 3), "W_k": (9, 3), "W_v": (9, 2), "W_out": (2, 4)}
    logits, weights = forward(params, encode(np.zeros((7, 5), dtype=int), 4))
    assert logits.shape == (7, 5, 4) and weights.shape == (7, 5, 5)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-15)  # 5 terms: atol 1e-15


def test_loss_and_grads_match_finite_differences():
    rng = np.random.default_rng(11)
    params = init_params(3, 3, 2, 2, rng)  # T=3, n_vocab=3, d_k=2, d_v=2
    tokens, targets = make_batch("reverse", 4, 3, 3, rng)
    X = encode(tokens, 3)  # (4, 3, 6)
    loss, grads = loss_and_grads(params, X, targets)
    assert loss == cross_entropy(forward(params, X)[0], targets)  # exact: the same computation
    for name in PARAM_NAMES:

        def f(W, name=name):
            return loss_and_grads({**params, name: W}, X, targets)[0]

        # a loss of size ~1 with entries of size ~1: central differences good to ~1e-9; tolerance 1e-7
        np.testing.assert_allclose(grads[name], numerical_gradient(f, params[name]), rtol=0, atol=1e-7)
        assert np.abs(grads[name]).max() > 1e-3  # a real gradient, so the comparison can fail


def test_cross_entropy_known_values():
    # uniform logits: −log(1/4) = log 4 for every target; float64 rounding, atol 1e-15
    assert math.isclose(cross_entropy(np.zeros((2, 3, 4)), np.zeros((2, 3), dtype=int)), math.log(4), abs_tol=1e-15)
    # huge logits do not overflow: [1000, 0] against target 0 is −log(1/(1 + e^-1000)) = 0, exactly
    assert cross_entropy([[1000.0, 0.0]], [0]) == 0.0
    assert cross_entropy([[1000.0, 0.0]], [1]) == 1000.0  # and the other way 1000, exact


def test_adam_first_step_moves_each_entry_by_lr_against_its_gradient():
    params = {"W": np.array([[1.0, -2.0, 0.5]])}
    grads = {"W": np.array([[0.3, -0.02, 0.0]])}
    new, state = adam_step(params, grads, None, lr=0.1)
    # at t = 1, m̂ = g and √v̂ = |g|: the step is lr · g / (|g| + 1e-8), so ±lr up to lr · 1e-8/|g| <= 5e-8
    np.testing.assert_allclose(new["W"], [[0.9, -1.9, 0.5]], rtol=0, atol=1e-7)
    assert new["W"][0, 2] == 0.5  # a zero gradient does not move the entry, exact
    assert state["t"] == 1
    np.testing.assert_array_equal(params["W"], [[1.0, -2.0, 0.5]])  # params are not modified
    new2, state2 = adam_step(new, grads, state, lr=0.1)
    assert state2["t"] == 2 and new2["W"][0, 0] < new["W"][0, 0]


def test_adam_eps_on_raw_is_kingma_and_bas_efficient_order_and_keeps_the_float_type():
    rng = np.random.default_rng(0)
    params = {"W": rng.standard_normal((3, 4)).astype(np.float32)}
    state_a = state_b = None
    a, b = params, params
    W, m, v = params["W"].astype(np.float64), np.zeros((3, 4)), np.zeros((3, 4))
    for t in (1, 2, 3):
        g = {"W": (1e-6 * rng.standard_normal((3, 4))).astype(np.float32)}  # small: eps matters (1e-8 vs √v ~ 1e-7)
        a, state_a = adam_step(a, g, state_a, lr=0.01)
        b, state_b = adam_step(b, g, state_b, lr=0.01, eps_on_raw=True)
        m, v = 0.9 * m + 0.1 * g["W"], 0.999 * v + 0.001 * g["W"].astype(np.float64) ** 2
        W = W - 0.01 * math.sqrt(1 - 0.999**t) / (1 - 0.9**t) * m / (np.sqrt(v) + 1e-8)  # by hand, float64
        assert a["W"].dtype == b["W"].dtype == state_b["m"]["W"].dtype == np.float32
    np.testing.assert_allclose(b["W"], W, rtol=1e-6)  # float32 rounding
    assert np.abs(a["W"] - b["W"]).max() > 1e-5  # the default adds eps to √v̂: another update when g is small


# ============================================================================ training


@pytest.mark.parametrize("task", sorted(TASKS))
def test_training_reaches_the_stated_accuracy(runs, task):
    result = runs[task]
    assert result.accuracies[0] < 0.5  # it did have to learn (chance is 1/8)
    assert result.accuracies[-1] >= ACCURACY
    # and on 2000 fresh sequences from a seed that training never used
    tokens, targets = make_batch(task, 2000, 6, 8, np.random.default_rng(12345))
    loss, accuracy = evaluate(result.params, tokens, targets)
    assert accuracy >= ACCURACY
    assert loss < 0.01
    assert result.losses[0] > 1.5  # about log 8 ≈ 2.08 before training
    assert result.losses[-10:].max() < 0.01


@pytest.mark.parametrize("task", sorted(TASKS))
def test_learned_attention_is_the_task_pattern(runs, task):
    result = runs[task]
    W = result.final_weights  # (T, T) attention weights on the probe
    pattern = target_pattern(task, 6)  # (T, T)
    np.testing.assert_array_equal(W.argmax(axis=1), pattern.argmax(axis=1))  # reverse: T-1-i
    right_mass = (W * pattern).sum(axis=1)  # (T,) the weight on the right key, per row
    assert right_mass.min() >= MASS, right_mass
    before = (result.snapshots[0].weights * pattern).sum(axis=1)  # (T,) at step 0
    assert before.max() < 0.5  # the pattern was learned, not there from the start


def test_reverse_argmax_is_the_anti_diagonal(runs):
    T = 6
    np.testing.assert_array_equal(runs["reverse"].final_weights.argmax(axis=1), T - 1 - np.arange(T))


def test_previous_argmax_is_the_sub_diagonal(runs):
    np.testing.assert_array_equal(runs["previous"].final_weights.argmax(axis=1), [0, 0, 1, 2, 3, 4])


def test_result_layout(runs):
    result = runs["reverse"]
    assert result.task == "reverse"
    assert result.losses.shape == (300,)
    np.testing.assert_array_equal(result.steps, np.arange(0, 301, 10))
    assert result.accuracies.shape == (31,)
    for snap in result.snapshots:
        assert snap.weights.shape == (6, 6)
        np.testing.assert_allclose(snap.weights.sum(axis=1), 1.0, rtol=0, atol=1e-15)  # rows sum to 1
    assert set(result.params) == set(PARAM_NAMES)
    np.testing.assert_array_equal(result.probe, default_probe(6, 8))
    assert result.eval_tokens.shape == (512, 6)


def test_last_step_is_always_a_snapshot():
    result = train("previous", steps=7, snapshot_every=3)
    np.testing.assert_array_equal(result.steps, [0, 3, 6, 7])


def test_same_seed_same_run_and_another_seed_another_run():
    a = train("reverse", steps=40, seed=5)
    b = train("reverse", steps=40, seed=5)
    np.testing.assert_array_equal(a.losses, b.losses)  # exact
    for sa, sb in zip(a.snapshots, b.snapshots, strict=True):
        np.testing.assert_array_equal(sa.weights, sb.weights)
        assert (sa.step, sa.loss, sa.accuracy) == (sb.step, sb.loss, sb.accuracy)
    for name in PARAM_NAMES:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    c = train("reverse", steps=40, seed=6)
    assert not np.array_equal(a.losses, c.losses)


def test_training_does_not_touch_the_global_random_state():
    # reading the legacy global state is the point here: train must neither seed nor draw from it
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    train("previous", steps=3)
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # noqa: NPY002


# ============================================================================ bad inputs


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"task": "sort"}, ValueError, ("unknown task 'sort'", "['previous', 'reverse']")),
        ({"task": 3}, TypeError, ("task must be a task name", "['previous', 'reverse']")),
        ({"steps": 0}, ValueError, ("steps must be at least 1, got 0",)),
        ({"steps": 10.0}, TypeError, ("steps must be an integer",)),
        ({"seed": -1}, ValueError, ("seed must be at least 0, got -1",)),
        ({"seed": 1.5}, TypeError, ("seed must be an integer",)),
        ({"seed": None}, TypeError, ("seed must be an integer",)),
        ({"lr": 0.0}, ValueError, ("lr must be a finite number in (0.0, inf), got 0.0",)),
        ({"lr": float("nan")}, ValueError, ("lr must be a finite number",)),
        ({"lr": "0.1"}, TypeError, ("lr must be a real number",)),
        ({"batch_size": 0}, ValueError, ("batch_size must be at least 1",)),
        ({"T": 1}, ValueError, ("T must be at least 2",)),
        ({"n_vocab": 1}, ValueError, ("n_vocab must be at least 2",)),
        ({"d_k": 0}, ValueError, ("d_k must be at least 1",)),
        ({"snapshot_every": 0}, ValueError, ("snapshot_every must be at least 1",)),
        ({"n_eval": True}, TypeError, ("n_eval must be an integer",)),
        # bounds, so that a typo ends in a message instead of hours of training or a MemoryError
        ({"steps": 10**7}, ValueError, ("steps = 10,000,000 is too many", "blocks it", "roughly 3 hours",
                                        "train accepts up to 10,000 steps (notebook 07 trains 300)")),
        ({"steps": 10_001}, ValueError, ("steps = 10,001 is too many",)),
        ({"n_eval": 10**8}, ValueError, ("with n_eval = 100,000,000, T = 6, n_vocab = 8", "shape (100000000, 6, 14)",
                                         "67,200,000,000 bytes (62.6 GiB)", "limit of 1 GiB per array")),
        ({"batch_size": 10**8, "n_eval": 3}, ValueError, ("with batch_size = 100,000,000",)),
        ({"T": 10**5}, ValueError, ("T = 100,000", "bytes", "lower n_eval, batch_size, T")),
        ({"d_k": 10**9}, ValueError, ("d_k = 1,000,000,000", "bytes")),
    ],
)
def test_train_bad_arguments(kwargs, error, words):
    args = {"task": "reverse", "steps": 1, **kwargs}
    with pytest.raises(error, match=rx(*words)):
        train(**args)


def test_train_steps_limit_is_far_above_notebook_07():
    from helpers.training import MAX_STEPS

    assert MAX_STEPS >= 30 * 300  # notebook 07 trains 300 steps per task


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: make_batch("reverse", 10**9, 4, 5, np.random.default_rng(0)), ValueError,
         ("the (1,000,000,000, 4) batch of token ids would take 32,000,000,000 bytes", "lower batch_size or T")),
        (lambda: encode([1, 2], 10**6), ValueError, ("n_vocab = 1,000,000", "8,000,000,000,000 bytes (7.28 TiB)")),
        (lambda: target_pattern("reverse", 10**6), ValueError, ("the (1,000,000, 1,000,000) pattern", "lower T")),
        (lambda: init_params(6, 8, 10**9, 8, np.random.default_rng(0)), ValueError,
         ("d_k = 1,000,000,000", "104 GiB")),
        (lambda: default_probe(None, 3), TypeError, ("T must be an integer, got None",)),
        (lambda: default_probe(3, 0), ValueError, ("n_vocab must be at least 2, got 0",)),
        (lambda: default_probe(10**12, 3), ValueError, ("the probe of T = 1,000,000,000,000 tokens",)),
    ],
)
def test_sizes_beyond_memory_are_refused_in_words(call, error, words):
    with pytest.raises(error, match=rx(*words)):
        call()


def test_training_explorer_refuses_too_many_steps_at_once():
    from helpers.explorers import training_explorer

    with pytest.raises(ValueError, match=rx("steps = 10,000,000 is too many", "up to 10,000 steps")):
        training_explorer(steps=10**7)


def test_bad_tokens_params_and_targets():
    params = init_params(3, 4, 2, 2, np.random.default_rng(0))
    X = encode([[0, 1, 2]], 4)  # (1, 3, 7)
    with pytest.raises(ValueError, match=rx("tokens[0, 2] = 4 is not a token id 0 .. 3 (n_vocab=4)")):
        encode([[0, 1, 4]], 4)
    with pytest.raises(TypeError, match=rx("tokens must hold integer token ids", "float64")):
        encode([0.0, 1.0], 4)
    with pytest.raises(ValueError, match=rx("params is missing ['W_out']")):
        forward({n: params[n] for n in ("W_q", "W_k", "W_v")}, X)
    with pytest.raises(ValueError, match=rx("X has 8 features but W_q, W_k, W_v have 7 rows")):
        forward(params, np.ones((1, 3, 8)))
    with pytest.raises(ValueError, match=rx("do not fit together", "'W_k': (7, 3)")):
        forward({**params, "W_k": np.ones((7, 3))}, X)
    with pytest.raises(ValueError, match=rx("targets has shape (1, 2)", "(1, 3, 4)")):
        loss_and_grads(params, X, [[0, 1]])
    with pytest.raises(ValueError, match=rx("targets[0, 1] = 9", "n_vocab=4")):
        loss_and_grads(params, X, [[0, 9, 1]])
    with pytest.raises(TypeError, match=rx("rng must be a numpy Generator", "int")):
        make_batch("reverse", 2, 3, 4, rng=0)
    with pytest.raises(ValueError, match=rx("unknown task 'copy'", "['previous', 'reverse']")):
        target_pattern("copy", 4)
    with pytest.raises(ValueError, match=rx("tokens[0] = 26 is not a token id 0 .. 25")):
        letters([26])


def test_adam_bad_arguments():
    params = {"W": np.zeros((2, 2))}
    with pytest.raises(ValueError, match=rx("grads['W'] has shape (2, 3) but params['W'] has shape (2, 2)")):
        adam_step(params, {"W": np.zeros((2, 3))}, None, lr=0.1)
    with pytest.raises(ValueError, match=rx("grads has keys ['V']", "params has keys ['W']")):
        adam_step(params, {"V": np.zeros((2, 2))}, None, lr=0.1)
    with pytest.raises(ValueError, match=rx("beta2 must be a finite number in [0.0, 1.0), got 1.0")):
        adam_step(params, params, None, lr=0.1, beta2=1.0)
    with pytest.raises(TypeError, match=rx("state must be None", "or the state dict adam_step returned")):
        adam_step(params, params, {"m": {}}, lr=0.1)
