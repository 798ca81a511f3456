"""Tests of notebook 12's exercise checks (helpers.checks.nb12) and of helpers.sampling.

Checks, table-driven as in tests/test_checks_nb11.py: every row calls one check with one answer and states what
it must print: "✅ ... correct" for the right answer, "❌" with the SPECIFIC explanation for each typical slip the
check claims to diagnose. Right answers are built here with plain NumPy from the exercise text. The checks
compare with np.allclose (rtol 1e-6, atol 1e-8).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from check_table import assert_one_answer

from helpers.checks import nb12
from helpers.language_model import GPTConfig, generate, init_params, param_shapes
from helpers.sampling import draw_margins, dropout, nats_to_bits, next_char_probs, trace_generation

Z, T, K = nb12.EX_LOGITS, nb12.EX_TEMPERATURE, nb12.EX_TOP_K
X, G, B = nb12.EX_X, nb12.EX_G, nb12.EX_B


def _softmax(z):
    e = np.exp(z - np.max(z))
    return e / e.sum()


def _right_probs():
    keep = np.argsort(Z)[-K:]  # the 3 largest
    p = np.zeros(len(Z))
    p[keep] = _softmax(Z[keep] / T)
    return p


def _right_ln(ddof=0):
    m = X.mean(axis=1, keepdims=True)
    v = ((X - m) ** 2).sum(axis=1, keepdims=True) / (X.shape[1] - ddof)
    return (X - m) / np.sqrt(v + 1e-5) * G + B


def _right_count(c: GPTConfig) -> int:
    return sum(math.prod(s) for s in param_shapes(c).values())


CASES = [
    ("probs right", nb12.check_sampling_distribution, _right_probs(), "✅", ("correct",)),
    ("probs none", nb12.check_sampling_distribution, None, "❌", ("Not answered",)),
    ("probs no temperature", nb12.check_sampling_distribution,
     np.where(np.isin(np.arange(5), np.argsort(Z)[-K:]), np.exp(Z), 0) / np.exp(Z[np.argsort(Z)[-K:]]).sum(), "❌",
     ("without the temperature",)),
    ("probs all five", nb12.check_sampling_distribution, _softmax(Z / T), "❌", ("keeps all 5",)),
    ("probs not renormalised", nb12.check_sampling_distribution,
     np.where(_right_probs() > 0, _softmax(Z / T), 0), "❌", ("renormalised",)),
    ("probs plain softmax", nb12.check_sampling_distribution, _softmax(Z), "❌", ("plain softmax",)),
    ("ln right", nb12.check_layer_norm, _right_ln(), "✅", ("correct",)),
    ("ln unbiased", nb12.check_layer_norm, _right_ln(ddof=1), "❌", ("UNBIASED",)),
    ("ln no gain", nb12.check_layer_norm, (_right_ln() - B) / G, "❌", ("before the gain",)),
    ("ln transposed shape", nb12.check_layer_norm, _right_ln().T, "❌", ("shape",)),
    ("count right", nb12.check_param_count, _right_count(nb12.EX_CONFIG), "✅", ("correct",)),
    ("count no positions", nb12.check_param_count, _right_count(nb12.EX_CONFIG) - 8 * 4, "❌", ("position",)),
    ("count no W_out", nb12.check_param_count, _right_count(nb12.EX_CONFIG) - 40, "❌", ("W_out",)),
    ("count text", nb12.check_param_count, "348", "❌", ("text",)),
]


@pytest.mark.parametrize(("case", "check", "answer", "mark", "phrases"), CASES, ids=[c[0] for c in CASES])
def test_each_check_says_what_is_right_or_wrong(case, check, answer, mark, phrases, capsys):
    assert_one_answer(case, check, answer, mark, phrases, capsys)


def test_next_char_probs_is_what_generate_draws_from():
    p = next_char_probs(Z, 1.0, None)
    np.testing.assert_allclose(p, _softmax(Z), rtol=0, atol=1e-15)
    assert next_char_probs(Z, 0.0, None).tolist() == [1, 0, 0, 0, 0]
    np.testing.assert_allclose(next_char_probs(Z, T, K), _right_probs(), rtol=0, atol=1e-15)
    for bad, err in (({"temperature": -1}, ValueError), ({"top_k": 0}, ValueError), ({"top_k": 6}, ValueError),
                     ({"temperature": "hot"}, TypeError)):
        with pytest.raises(err, match=next(iter(bad))):
            next_char_probs(Z, **bad)


@pytest.mark.parametrize(("temperature", "top_k"), [(0.0, None), (1.0, None), (0.7, 3)])
def test_the_trace_gives_generates_tokens_and_rows_that_sum_to_one(temperature, top_k):
    config = GPTConfig(vocab_size=7, context=16, d_model=8, n_heads=2, n_layers=2, d_ff=16)
    params = init_params(config, seed=3, dtype=np.float64)
    params = {k: v * 20 if k.startswith("l") and "W_" in k else v for k, v in params.items()}  # sharper rows
    prompt = np.array([1, 2, 3, 1, 2])
    tr = trace_generation(config, params, prompt, 9, temperature=temperature, top_k=top_k, seed=4, window=6)
    np.testing.assert_array_equal(tr.tokens, generate(config, params, prompt, 9, temperature=temperature,
                                                      top_k=top_k, seed=4))
    assert tr.probs.shape == (10, 7) and tr.attention.shape == (10, 2, 2, 6)
    np.testing.assert_allclose(tr.probs.sum(axis=1), 1, rtol=0, atol=1e-12)
    assert tr.n_keys.tolist() == [5] + [6] * 9
    # within the window and with at most 6 keys so far (row 0: 5 keys), each row is a whole attention row
    np.testing.assert_allclose(np.nansum(tr.attention[0], axis=-1), 1, rtol=0, atol=1e-12)
    assert np.isnan(tr.attention[0, :, :, 0]).all()
    m = draw_margins(tr.logits[:-1], tr.tokens[5:], temperature, top_k, seed=4)
    assert (m > 0).all()
    with pytest.raises(ValueError, match="context"):
        trace_generation(config, params, prompt, 12)


def test_dropout_keeps_the_mean_and_bits_are_nats_over_ln2():
    x = np.ones((200, 200))
    y = dropout(x, 0.25, np.random.default_rng(0))
    assert set(np.unique(y)) == {0.0, 1 / 0.75}
    assert abs(y.mean() - 1) < 0.02  # 40,000 entries: the standard error of the mean is about 0.003
    assert (dropout(x, 0.0, np.random.default_rng(0)) == x).all()
    with pytest.raises(ValueError, match="p must be"):
        dropout(x, 1.0, np.random.default_rng(0))
    assert nats_to_bits(math.log(2)) == pytest.approx(1.0, abs=1e-15)
