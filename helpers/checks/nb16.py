"""Exercise checks for notebook 16 (the same model in PyTorch and Hugging Face): where our matrices go.

The examples are small and readable: every entry of a weight matrix says where it came from.

    EX_W_Q, EX_W_K, EX_W_V  (4, 4)  ours (d_in, d_model), x @ W; entry (r, c) is 10·(r+1) + (c+1) for W_q,
                                    plus 100 for W_k, plus 200 for W_v
    EX_KEEP                 (4, 4)  a boolean mask, True where a query may attend to a key (ours and
                                    scaled_dot_product_attention's convention): causal, and key 4 is padding

Each ``check_...`` computes the right answer and the typical wrong ones with NumPy alone (no PyTorch needed to
check), prints one verdict ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when right). An
answer may be a NumPy array or a PyTorch tensor. None raises on any answer.
"""

from __future__ import annotations

import numpy as np

from helpers.attention import causal_mask
from helpers.checks import Verdict, check_array, check_array_any_shape, exercise_check

__all__ = ["EX_W_Q", "EX_W_K", "EX_W_V", "EX_KEEP", "check_in_proj_weight", "check_additive_mask",
           "check_c_attn_weight"]

_LABELS = 10 * np.arange(1, 5)[:, None] + np.arange(1, 5)  # (4, 4) 11 12 13 14 / 21 ... / ... 44
EX_W_Q = _LABELS.astype(float)  # (d_in=4, d_model=4)
EX_W_K = 100 + EX_W_Q
EX_W_V = 200 + EX_W_Q
EX_KEEP = causal_mask(4) & (np.arange(4) < 3)  # (4, 4) key j <= query i, and key 4 (index 3) is padding


def _floats(answer: object) -> object:
    """A PyTorch tensor as a NumPy array (detached, on the CPU); anything else unchanged."""
    detach = getattr(answer, "detach", None)
    if callable(detach):
        try:
            return detach().cpu().numpy()
        except (AttributeError, RuntimeError, TypeError):
            return answer
    return answer


def _three(a: np.ndarray, b: np.ndarray, c: np.ndarray, axis: int) -> np.ndarray:
    return np.concatenate([a, b, c], axis=axis)


@exercise_check
def check_in_proj_weight(answer: object) -> Verdict:
    """Exercise 1: nn.MultiheadAttention's in_proj_weight (12, 4) that computes x @ EX_W_Q, x @ EX_W_K, x @ EX_W_V."""
    q, k, v = EX_W_Q, EX_W_K, EX_W_V
    right = _three(q.T, k.T, v.T, axis=0)  # (3·d_model, d_in): the three nn.Linear weight matrices stacked
    mistakes = {
        "each block is our matrix as it is, not transposed: in_proj_weight holds three nn.Linear weight matrices, "
        "and nn.Linear stores (out, in), W transposed. With square matrices nothing complains: the shape is the same "
        "either way, only the numbers are wrong.": _three(q, k, v, axis=0),
        "this is GPT-2's c_attn layout, [W_q | W_k | W_v] side by side (d_in, 3·d_model): Conv1D stores (in, out). "
        "in_proj_weight is (3·embed_dim, embed_dim): the transposes stacked on top of each other.": _three(q, k, v, 1),
        "the blocks are transposed but in the wrong order: queries first, then keys, then values.":
            _three(k.T, q.T, v.T, axis=0),
        "the blocks are in the wrong order (values first?): queries, then keys, then values.": _three(v.T, k.T, q.T, 0),
    }
    hint = "Hint: nn.Linear computes x @ weight.T, so each block is Wᵀ (out, in); stack the three along axis 0."
    return check_array_any_shape(_floats(answer), right, name="Exercise 1, in_proj_weight", mistakes=mistakes,
                                 hint=hint)


@exercise_check
def check_additive_mask(answer: object) -> Verdict:
    """Exercise 2: the float mask (4, 4) that scaled_dot_product_attention adds to the scores, for EX_KEEP."""
    keep = EX_KEEP
    right = np.where(keep, 0.0, -np.inf)  # (4, 4)
    mistakes = {
        "this is −inf where attending is ALLOWED: the float mask is added to the scores, so 0 keeps a score and "
        "−inf removes it; True in EX_KEEP (may attend) gives 0.": np.where(keep, -np.inf, 0.0),
        "this is EX_KEEP as 1 and 0: a float mask is ADDED to the scores, and adding 1 or 0 changes little. "
        "Give 0 where a key may be read and −inf where not.": keep.astype(float),
        "this is 1 where a key is hidden (nn.MultiheadAttention's boolean convention, as floats): a float mask is "
        "added, 0 where a key may be read and −inf where not.": (~keep).astype(float),
        "almost: exp(−1e9) is 0 in float64, so these attention weights come out right; but −1e9 is a number, not "
        "'never': a row whose keys are all hidden then reads them as if nothing were hidden, silently. Use -np.inf.":
            np.where(keep, 0.0, -1e9),
    }
    hint = "Hint: np.where(EX_KEEP, 0.0, -np.inf)-style: 0 where True, −inf where False."
    return check_array(_floats(answer), right, name="Exercise 2, the additive mask", mistakes=mistakes, hint=hint)


@exercise_check
def check_c_attn_weight(answer: object) -> Verdict:
    """Exercise 3: GPT-2's c_attn.weight (4, 12) in transformers for EX_W_Q, EX_W_K, EX_W_V."""
    q, k, v = EX_W_Q, EX_W_K, EX_W_V
    right = _three(q, k, v, axis=1)  # (d_in, 3·d_model): Conv1D computes x @ weight, as ours
    mistakes = {
        "this is nn.MultiheadAttention's in_proj_weight (3·d_model, d_in), nn.Linear's (out, in) layout. GPT-2's "
        "Conv1D stores (in, out), as we do: our matrices side by side, not transposed.": _three(q.T, k.T, v.T, 0),
        "each block is transposed: GPT-2's Conv1D computes x @ weight, as we do, so W_q, W_k, W_v go in as they "
        "are. With square matrices nothing complains: only the numbers are wrong.": _three(q.T, k.T, v.T, axis=1),
        "the blocks are stacked on top of each other (12, 4): c_attn.weight puts them side by side, (d_in, "
        "3·d_model), and splits its output's columns into queries, keys, values.": _three(q, k, v, axis=0),
        "the blocks are in the wrong order: W_q, then W_k, then W_v (GPT-2 splits the columns in that order).":
            _three(k, q, v, axis=1),
    }
    hint = "Hint: np.concatenate along axis 1 (columns), W_q first."
    return check_array_any_shape(_floats(answer), right, name="Exercise 3, c_attn.weight", mistakes=mistakes,
                                 hint=hint)
