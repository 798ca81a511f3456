"""Tests of helpers/induction.py: two attention layers compose into an induction head.

The designed model is checked exactly (its numbers are set by hand); the trained one on the run the
notebook shows (seed 0, 600 steps, about 1.5 s, shared by a module fixture). Thresholds: the designed
model's accuracy on repeated letters is 100 % and its loss on first occurrences within 1e-3 of ln 8;
the trained model's accuracy on repeated letters >= 0.99 on its test set and on 2000 fresh sequences;
its layer 2 puts its largest weight where the designed layer 2 does on every repeated letter of the
probe, at least 0.5 of the row. Numeric checks state their tolerance; "exact" means bit-for-bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import rx

from helpers.backward import numerical_gradient
from helpers.induction import (
    MAX_STEPS,
    PARAM_NAMES,
    blocks,
    default_periods,
    default_probe,
    designed_params,
    encode,
    evaluate,
    forward,
    init_params,
    labels,
    loss_and_grads,
    make_batch,
    per_position,
    repeated,
    train,
)

T, N = 11, 8  # the notebook's size: ^ and 10 letters, letters A..H
RUN = {"steps": 600, "seed": 0, "lr": 0.01, "snapshot_every": 10}


@pytest.fixture(scope="module")
def run():
    return train(**RUN)


@pytest.fixture(scope="module")
def test_tokens():
    return make_batch(2000, T, N, np.random.default_rng(12345))  # a seed training never uses


# ============================================================================ the task


def test_make_batch_repeats_a_segment_of_distinct_letters():
    tokens = make_batch(500, T, N, np.random.default_rng(0))
    assert tokens.shape == (500, T) and tokens.dtype == np.int64
    assert (tokens[:, 0] == N).all() and (tokens[:, 1:] < N).all() and (tokens[:, 1:] >= 0).all()
    lo, hi = default_periods(T, N)
    assert (lo, hi) == (3, 5)
    periods = []
    for seq in tokens[:, 1:]:
        L = next(L for L in range(1, T) if np.array_equal(seq[L:], seq[:-L]))  # the shortest period
        assert len(set(seq[:L].tolist())) == L  # the segment's letters are distinct
        periods.append(L)
    assert set(periods) == {3, 4, 5}  # every period occurs (500 draws of 3 values)
    again = make_batch(500, T, N, np.random.default_rng(0))
    np.testing.assert_array_equal(tokens, again)  # the same seed gives the same batch, exact


def test_default_periods_is_never_an_empty_range_and_make_batch_uses_it():
    """Two letters and T >= 7 gave (3, 2), and make_batch failed with NumPy's "low >= high"."""
    assert default_periods(9, 2) == (2, 2) and default_periods(5, 2) == (2, 2) and default_periods(16, 8) == (3, 7)
    for t in range(3, 65):
        for n in range(2, 27):
            lo, hi = default_periods(t, n)
            assert 2 <= lo <= hi <= n, (t, n, lo, hi)
    tokens = make_batch(50, 9, 2, np.random.default_rng(0))  # (50, 9): ^ then A B A B ... or B A B A ...
    for seq in tokens[:, 1:]:
        assert set(seq[:2].tolist()) == {0, 1} and np.array_equal(seq[2:], seq[:-2])


def test_repeated_marks_letters_seen_before():
    seq = [N, 0, 5, 2, 0, 5, 2, 0]  # ^ A F C A F C A
    np.testing.assert_array_equal(repeated(seq, N), [False, False, False, False, True, True, True, True])


def test_probe_labels_and_blocks():
    probe = default_probe(T, N)
    assert labels(probe, N) == ["^", "A", "F", "C", "E", "A", "F", "C", "E", "A", "F"]
    assert labels(probe, N, positions=True)[::5] == ["^₁", "A₆", "F₁₁"]  # positions counted from 1, as subscripts
    b = blocks(T, N)
    assert [(k, s.start, s.stop) for k, s in b.items()] == [
        ("token", 0, 9), ("position", 9, 20), ("previous", 20, 28), ("output", 28, 36)]
    X = encode(probe, N)  # (T, d)
    assert X.shape == (T, 36)
    np.testing.assert_array_equal(X[:, b["token"]].argmax(axis=1), probe)
    np.testing.assert_array_equal(X[:, b["position"]], np.eye(T))
    assert not X[:, b["previous"]].any() and not X[:, b["output"]].any()  # empty before layer 1


# ============================================================================ the designed model


def test_designed_layer1_is_a_previous_token_head_and_writes_the_previous_letter():
    probe = default_probe(T, N)
    f = forward(designed_params(T, N), probe)
    source = np.r_[0, np.arange(T - 1)]  # query i on key i-1; ^ on itself
    np.testing.assert_array_equal(f.weights1.argmax(axis=1), source)
    assert f.weights1[np.arange(T), source].min() > 1 - 1e-6  # each row 1 up to ≤ T·e^-20 ≈ 2e-8
    prev = f.x1[:, blocks(T, N)["previous"]]  # (T, N) layer 1's write
    np.testing.assert_allclose(prev[2:], np.eye(N)[probe[1:-1]], rtol=0, atol=1e-6)  # position i: letter i-1
    np.testing.assert_allclose(prev[:2], 0, rtol=0, atol=1e-6)  # ^ and the first letter have no previous letter


def test_designed_model_is_perfect_on_repeats_and_at_chance_on_first_occurrences(test_tokens):
    s = evaluate(designed_params(T, N), test_tokens)
    assert s.accuracy_repeat == 1.0  # every one of the repeated letters, exact
    assert s.loss_repeat < 1e-6
    assert abs(s.loss_first - math.log(N)) < 1e-3  # it looks at ^, which carries nothing: uniform logits


def test_designed_layer2_alone_fails(test_tokens):
    p = designed_params(T, N)
    cut = {**p, "W_o1": np.zeros_like(p["W_o1"])}  # layer 1 writes nothing
    s = evaluate(cut, test_tokens)
    assert abs(s.loss_repeat - math.log(N)) < 1e-3  # back to guessing
    assert s.accuracy_repeat < 0.2  # chance is 1/8 (argmax over near-equal logits)
    # and its layer 2 no longer finds the earlier occurrence: every query looks at ^
    f = forward(cut, default_probe(T, N))
    assert (f.weights2.argmax(axis=1) == 0).all()


def test_per_position_on_the_probe():
    loss, acc = per_position(designed_params(T, N), default_probe(T, N))
    assert loss.shape == acc.shape == (T - 1,)
    rep = repeated(default_probe(T, N), N)[:-1]  # positions 5..9 hold letters seen before
    np.testing.assert_array_equal(np.flatnonzero(rep), [5, 6, 7, 8, 9])
    assert (acc[rep] == 1).all() and loss[rep].max() < 1e-6
    np.testing.assert_allclose(loss[~rep], math.log(N), rtol=0, atol=1e-3)


# ============================================================================ the gradient


def test_loss_and_grads_match_finite_differences():
    rng = np.random.default_rng(11)
    params = init_params(5, 3, 2, rng)  # T=5, 3 letters, d_head=2
    tokens = make_batch(4, 5, 3, rng, periods=(2, 3))  # (4, 5)
    loss, grads = loss_and_grads(params, tokens)
    assert set(grads) == set(PARAM_NAMES)
    for name in PARAM_NAMES:

        def f(W, name=name):
            return loss_and_grads({**params, name: W}, tokens)[0]

        # a loss of size ~1 with entries of size ~1: central differences good to ~1e-9; tolerance 1e-7
        np.testing.assert_allclose(grads[name], numerical_gradient(f, params[name]), rtol=0, atol=1e-7)
        assert np.abs(grads[name]).max() > 1e-3  # a real gradient, so the comparison can fail
    assert loss == pytest.approx(float(per_position(params, tokens)[0].mean()), rel=1e-12)


# ============================================================================ training


def test_training_is_deterministic(run):
    again = train(**{**RUN, "steps": 50})
    np.testing.assert_array_equal(again.losses, run.losses[:50])  # the same seed: the same first steps, exact
    for a, b in zip(again.snapshots, run.snapshots[:6], strict=True):
        np.testing.assert_array_equal(a.weights2, b.weights2)
    other = train(**{**RUN, "steps": 50, "seed": 1})
    assert not np.array_equal(other.losses, again.losses)


def test_training_learns_the_repeats_and_not_the_first_occurrences(run, test_tokens):
    first, last = run.snapshots[0].results, run.snapshots[-1].results
    assert first.accuracy_repeat < 0.3  # it had to learn (chance is 1/8)
    assert last.accuracy_repeat >= 0.99
    assert evaluate(run.params, test_tokens).accuracy_repeat >= 0.99  # fresh sequences
    assert last.loss_first > 1.5  # first occurrences stay unpredictable (ln 8 ≈ 2.08; see the notebook)
    assert len(run.losses) == RUN["steps"] and np.isfinite(run.losses).all()
    np.testing.assert_array_equal(run.steps, np.arange(0, 601, 10))


def test_trained_layer2_is_an_induction_head_that_needs_layer1(run, test_tokens):
    probe = run.probe
    rows = np.flatnonzero(repeated(probe, N)[:-1])  # repeated letters with a next token
    designed = forward(designed_params(T, N), probe).weights2  # (T, T)
    learned = run.snapshots[-1].weights2  # (T, T)
    want = designed[rows].argmax(axis=1)  # the position after the earlier occurrence
    np.testing.assert_array_equal(learned[rows].argmax(axis=1), want)
    assert learned[rows, want].min() >= 0.5
    cut = {**run.params, "W_o1": np.zeros_like(run.params["W_o1"])}  # layer 1 writes nothing
    assert evaluate(cut, test_tokens).loss_repeat > 1.5  # from ~0.001 back above 1.5


def test_layer2_alone_trained_stays_short_of_the_two_layers(run):
    alone = train(**{**RUN, "snapshot_every": 50}, layer1=False)  # W_o1 held at 0: layer 1 writes nothing
    assert not alone.params["W_o1"].any()  # exactly 0 after 600 Adam steps
    a, two = alone.snapshots[-1].results, run.snapshots[-1].results
    assert a.accuracy_repeat < 0.99 <= two.accuracy_repeat  # the notebook's deep dive: 96 % against 100 %
    assert a.loss_repeat > 10 * two.loss_repeat
    assert alone.config["layer1"] is False and run.config["layer1"] is True


# ============================================================================ errors


@pytest.mark.parametrize(
    "call, error, parts",
    [
        (lambda: make_batch(4, 2, N, np.random.default_rng(0)), ValueError, ("T must be at least 3", "got 2")),
        (lambda: make_batch(4, T, 30, np.random.default_rng(0)), ValueError, ("n_letters must be at most 26",)),
        (lambda: make_batch(4, T, N, 0), TypeError, ("rng must be a numpy Generator",)),
        (lambda: make_batch(4, T, 4, np.random.default_rng(0), periods=(3, 5)), ValueError,
         ("periods = (3, 5)", "n_letters >= 5", "got 4")),
        (lambda: make_batch(4, T, N, np.random.default_rng(0), periods=5), TypeError, ("periods must be a pair",)),
        (lambda: train(steps=MAX_STEPS + 1), ValueError, (f"steps must be at most {MAX_STEPS}",)),
        (lambda: train(steps=0), ValueError, ("steps must be at least 1",)),
        (lambda: train(lr=-1.0), ValueError, ("lr must be a finite number",)),
        (lambda: train(batch_size=10**6), ValueError, ("batch_size must be at most",)),
        (lambda: train(layer1="no"), TypeError, ("layer1 must be True",)),
        (lambda: encode([0, 1, 2], N), ValueError, ("must start with the start token ^", "id 8")),
        (lambda: encode([N, 1, N], N), ValueError, ("tokens[2] = 8 is not a letter id", "only position 0")),
        (lambda: encode([N, 1.0, 2.0], N), TypeError, ("integer token ids", "float64")),
        (lambda: forward({"W_q1": 1}, default_probe(T, N)), ValueError, ("params is missing",)),
        (lambda: forward({**designed_params(T, N), "W_k2": np.zeros((36, 3))}, default_probe(T, N)), ValueError,
         ("layer 2's weight matrices do not fit", "(36, 9), (36, 3)")),
        (lambda: forward(designed_params(T, N), default_probe(T + 1, N)), ValueError,
         ("T = 12 positions", "d = 37", "made for d = 36", "T = 11 with 8 letters")),
        (lambda: evaluate(designed_params(4, N), [[N, 0, 1, 2]]), ValueError,
         ("both first occurrences and repeated letters",)),
        (lambda: labels(default_probe(T, N)[None], N), ValueError, ("one sequence (T,)",)),
    ],
)
def test_bad_input_raises_a_clear_error(call, error, parts):
    with pytest.raises(error, match=rx(*parts)):
        call()


def test_the_residual_stream_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from helpers import plots
    from helpers.figures.nb11 import plot_residual_stream, stream_holds

    probe = default_probe(T, N)
    f = forward(designed_params(T, N), probe)
    cols = [str(i) for i in range(36)]
    fig = plot_residual_stream([f.x0, f.x1, f.x2], ["x0", "x1", "x2"], blocks(T, N),
                               row_labels=labels(probe, N), col_labels=cols)
    assert len(fig.axes) == 4  # three streams and the colour bar
    assert [t.get_text() for t in fig.axes[0].texts] == ["token", "position", "previous", "output"]
    alt = plots.alt_text(fig)  # the figure's own description, from the values it draws
    assert alt.startswith("Figure (3 panels): the residual stream")
    assert "x1: token block as above; position block as above; previous block F holds 20, C holds 25, " in alt
    assert alt.endswith("output block A holds 33, F holds 30, C holds 32, E holds 28, A holds 33, F holds 30 "
                        "(the other rows empty).")
    plt.close(fig)
    tok = labels(probe, N, positions=True)
    feats = [*"ABCDEFGH^", *(str(p) for p in range(1, T + 1)), *"ABCDEFGH", *"ABCDEFGH"]
    prev = stream_holds(f.x1, blocks(T, N)["previous"], row_labels=tok, col_labels=feats)
    assert prev.startswith("F₃ holds A, C₄ holds F, ") and prev.endswith("F₁₁ holds A (the other rows empty)")
    assert stream_holds(f.x0, blocks(T, N)["output"], row_labels=tok,
                        col_labels=feats) == "empty (every value below 0.01)"
    with pytest.raises(ValueError, match="block must be a slice of the stream's 36 features"):
        stream_holds(f.x0, slice(30, 40), row_labels=tok, col_labels=feats)
    fig = plot_residual_stream([f.x1, f.x2], ["x1", "x2"], blocks(T, N), row_labels=labels(probe, N), col_labels=cols,
                               show=["token", "previous"])  # fewer, larger columns for a projector
    assert fig.axes[0].get_images()[0].get_array().shape == (T, 9 + 8)  # the position and output blocks not drawn
    assert [t.get_text() for t in fig.axes[0].texts] == ["token", "previous"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()][8:10] == ["8", "20"]  # ^'s column, then previous A
    assert "output block" not in plots.alt_text(fig) and "x1: token block" in plots.alt_text(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="consecutive slices covering the 36 features"):
        plot_residual_stream([f.x0], ["x0"], {"token": slice(0, 9)}, row_labels=labels(probe, N), col_labels=cols)
