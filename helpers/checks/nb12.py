"""Exercise checks for notebook 12 (a small language model): temperature and top-k, LayerNorm, the parameter count.

The examples are small and hand-checkable:

    EX_LOGITS  (5,)   a model's logits for 5 characters a b c d e
    EX_TEMPERATURE    0.5
    EX_TOP_K          3
    EX_X       (2, 4) two tokens' stream vectors; EX_G, EX_B (4,) LayerNorm's gain and bias
    EX_CONFIG         a GPTConfig small enough to count by hand

Each ``check_...`` computes the right answer with ``helpers.sampling``, ``helpers.layers`` and
``helpers.language_model`` and the typical wrong ones, prints one verdict ("✅ ..." or "❌ ...: what is wrong")
and returns a Verdict (truthy when right). None raises on any answer.
"""

from __future__ import annotations

import numpy as np

from helpers.checks import Verdict, check_array, check_number, exercise_check
from helpers.language_model import GPTConfig, n_params
from helpers.layers import layer_norm
from helpers.sampling import next_char_probs

__all__ = ["EX_LOGITS", "EX_TEMPERATURE", "EX_TOP_K", "EX_X", "EX_G", "EX_B", "EX_CONFIG",
           "check_sampling_distribution", "check_layer_norm", "check_param_count"]

EX_LOGITS = np.array([2.0, 1.0, 0.0, 1.5, -1.0])  # (V=5,) characters a b c d e
EX_TEMPERATURE = 0.5
EX_TOP_K = 3
EX_X = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 4.0, -4.0]])  # (2, d=4)
EX_G = np.array([1.0, 1.0, 2.0, 0.5])  # (4,)
EX_B = np.array([0.0, 1.0, 0.0, 0.0])  # (4,)
EX_CONFIG = GPTConfig(vocab_size=10, context=8, d_model=4, n_heads=2, n_layers=1, d_ff=16)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z[np.isfinite(z)].max())
    return e / e.sum()


@exercise_check
def check_sampling_distribution(answer: object) -> Verdict:
    """Exercise 1: the distribution (5,) generate draws from for EX_LOGITS at EX_TEMPERATURE with top-k EX_TOP_K."""
    z, T, k = EX_LOGITS, EX_TEMPERATURE, EX_TOP_K
    right = next_char_probs(z, T, k)  # (5,)
    top = z >= np.sort(z)[-k]  # (5,) a, b, d
    mistakes = {
        "this is softmax(logits) over the top 3, without the temperature: divide the logits by 0.5 first "
        "(a temperature below 1 sharpens the distribution).": _softmax(np.where(top, z, -np.inf)),
        "these logits were multiplied by the temperature; divide by it (logits / 0.5 = logits × 2).":
            _softmax(np.where(top, z * T, -np.inf)),
        "this keeps all 5 characters: top-k sets every logit outside the 3 largest to −inf before the softmax, "
        "so c and e get 0.": _softmax(z / T),
        "the top 3 were kept but not renormalised: after dropping c and e the three probabilities must sum to 1 "
        "(take the softmax over the three, or divide by their sum).": np.where(top, _softmax(z / T), 0.0),
        "this keeps the 3 SMALLEST logits; top-k keeps the largest.": _softmax(np.where(~top, z / T, -np.inf)),
        "this is the plain softmax(logits): divide by the temperature and keep only the top 3 first.": _softmax(z),
    }
    hint = ("Hint: divide EX_LOGITS by EX_TEMPERATURE, set every entry below the 3rd largest to -np.inf, then take "
            "the softmax (exp, divided by the sum).")
    return check_array(answer, right, name="Exercise 1, temperature and top-k", mistakes=mistakes, hint=hint,
                       exp=True)


@exercise_check
def check_layer_norm(answer: object) -> Verdict:
    """Exercise 2: LayerNorm of EX_X (2, 4) with gain EX_G and bias EX_B (eps = 1e-5, the variance biased)."""
    X, g, b = EX_X, EX_G, EX_B
    right = layer_norm(X, g, b)  # (2, 4)
    xc = X - X.mean(axis=-1, keepdims=True)  # (2, 4)
    plain = xc / np.sqrt(X.var(axis=-1, keepdims=True) + 1e-5)  # (2, 4) x̂
    cols = (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + 1e-5)  # (2, 4) over the tokens instead
    mistakes = {
        "this divides by the UNBIASED variance (ddof=1, divided by d − 1); LayerNorm uses the biased one: the mean "
        "of the squared deviations (np.var's default).": xc / np.sqrt(X.var(axis=-1, ddof=1, keepdims=True) + 1e-5)
        * g + b,
        "this is x̂, each row with mean 0 and variance 1, before the gain and bias: multiply by EX_G, add EX_B.": plain,
        "the gain and bias are swapped: x̂ × g + b with g = EX_G, b = EX_B.": plain * b + g,
        "this normalises each FEATURE over the two tokens (axis 0); LayerNorm normalises each token over its "
        "features (the last axis).": cols * g + b,
    }
    hint = ("Hint: per row, subtract its mean, divide by √(mean of squared deviations + 1e-5), then multiply by EX_G "
            "and add EX_B (keepdims=True keeps the shapes lined up).")
    return check_array(answer, right, name="Exercise 2, LayerNorm", mistakes=mistakes, hint=hint)


def _count(c: GPTConfig, *, pos: bool = True, ln: bool = True, mlp_bias: bool = True, out: bool = True) -> int:
    D, F, V = c.d_model, c.d_ff, c.vocab_size
    per_layer = 4 * D * D + 2 * D * F + (F + D if mlp_bias else 0) + (4 * D if ln else 0)
    return V * D + (c.context * D if pos else 0) + c.n_layers * per_layer + (2 * D if ln else 0) + (D * V if out else 0)


@exercise_check
def check_param_count(answer: object) -> Verdict:
    """Exercise 3: how many numbers a model with EX_CONFIG holds."""
    c = EX_CONFIG
    right = n_params(c)
    assert right == _count(c)
    D, H = c.d_model, c.n_heads
    dh = D // H
    mistakes = {
        "the position embeddings are missing: pos_emb holds context × d_model numbers.": float(_count(c, pos=False)),
        "the LayerNorms' gains and biases are missing: each LayerNorm has 2 × d_model (two per layer, and the "
        "final one).": float(_count(c, ln=False)),
        "the MLP's biases b_1 (d_ff) and b_2 (d_model) are missing.": float(_count(c, mlp_bias=False)),
        "W_out is missing: this model does not share it with tok_emb (GPT-2 does, 'weight tying'), so it adds "
        "d_model × V.": float(_count(c, out=False)),
        "W_q, W_k and W_v were counted per head as d_head × d_head; each head's block is d_model × d_head, so the "
        "three are d_model × d_model each.": float(_count(c) - c.n_layers * 3 * (D * D - H * dh * dh)),
    }
    hint = ("Hint: add up every shape of param_shapes: tok_emb, pos_emb; per layer two LayerNorms, W_q, W_k, W_v, "
            "W_o, W_1, b_1, W_2, b_2; then ln_f and W_out.")
    return check_number(answer, float(right), name="Exercise 3, the parameter count", mistakes=mistakes, hint=hint)

