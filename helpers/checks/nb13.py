"""Exercise checks for notebook 13 (inside the trained model): a previous-token score, the head whose removal
hurts a second induction head most, a K-composition score by hand.

The examples:

    EX_PATTERN  (5, 5)  a causal attention pattern (rows queries, columns keys; rows sum to 1)
    EX_W_QK     (3, 3)  a later head's W_QK = W_q W_kᵀ
    EX_W_OV     (3, 3)  an earlier head's W_OV = W_v W_o

Each ``check_...`` computes the right answer with ``helpers.heads`` and the typical wrong ones, prints one
verdict ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when right). None raises on any answer.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

from helpers.checks import Verdict, check_number, exercise_check, verdict
from helpers.heads import induction_probe, induction_scores, k_composition_score, previous_token_score

__all__ = ["EX_PATTERN", "EX_W_QK", "EX_W_OV", "TARGET", "check_previous_score", "check_most_harmful",
           "check_k_composition"]

EX_PATTERN = np.array([
    [1.00, 0.00, 0.00, 0.00, 0.00],
    [0.50, 0.50, 0.00, 0.00, 0.00],
    [0.10, 0.80, 0.10, 0.00, 0.00],
    [0.00, 0.20, 0.70, 0.10, 0.00],
    [0.25, 0.00, 0.00, 0.75, 0.00],
])  # (5, 5)
EX_W_QK = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # (3, 3)
EX_W_OV = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 3.0], [1.0, 0.0, 0.0]])  # (3, 3)
TARGET = (1, 3)  # exercise 2: a second induction head of the committed model (a clear answer: (1, 0)'s is a near tie)


@exercise_check
def check_previous_score(answer: object) -> Verdict:
    """Exercise 1: EX_PATTERN's previous-token score (one number)."""
    w = EX_PATTERN
    T = len(w)
    right = float(previous_token_score(w))
    mistakes = {
        "that is the mean weight of each query on ITSELF (the diagonal); the previous token of query i is key "
        "i − 1, one left of the diagonal.": float(np.mean(np.diag(w)[1:])),
        "that mean also counts query 0's own weight (the diagonal): the previous-token score averages over the "
        "queries that have a previous token, i = 1 .. T − 1.": float(np.mean(np.diag(w))),
        "that divides by T = 5: query 0 has no previous token, so the mean is over the 4 queries i = 1 .. 4.":
            float(np.sum(np.diag(w, k=-1)) / T),
        "that is the sum of the four weights; the score is their mean.": float(np.sum(np.diag(w, k=-1))),
        "that is the weight one key to the RIGHT of the diagonal (the next token), which the causal mask hides: "
        "0 everywhere.": 0.0,
    }
    hint = "Hint: the weights w[i, i − 1] for i = 1 .. 4 lie just below the diagonal (np.diag(w, k=-1)); average them."
    return check_number(answer, right, name="Exercise 1, previous-token score", mistakes=mistakes, hint=hint)


def _pairs(answer: object) -> list[tuple[int, int]] | None:
    """The answer as a list of (layer, head) int pairs, or None when it is not one."""
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        return None
    out = []
    try:
        for pair in answer:
            if isinstance(pair, (str, bytes)):  # b"\x00\x01" unpacks to the integers 0 and 1: not a pair
                return None
            i, j = pair
            if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in (i, j)):
                return None
            out.append((int(i), int(j)))
    except (TypeError, ValueError):
        return None
    return out


@exercise_check
def check_most_harmful(answer: object, config: object = None, params: object = None) -> Verdict:
    """Exercise 2: the one head whose removal lowers head TARGET's induction score on the probe the most."""
    name = "Exercise 2, the head that matters most"
    target = TARGET
    hint = (f"Hint: head {target} is an induction head too; its keys read what a head of layer 0 wrote about the "
            "previous character. Give one (layer, head) pair, such as (0, 2).")
    if answer is None or answer is Ellipsis:
        return verdict(False, name, f"Not answered yet. {hint}")
    pairs = _pairs([answer]) if not _is_pair_list(answer) else None
    if pairs is None:
        return verdict(False, name, f"expected one (layer, head) pair of integers, such as (0, 2), got "
                                    f"{answer!r:.60}. {hint}")
    pair = pairs[0]
    if config is None or params is None:
        from helpers.language_model import load_model

        config, params, _ = load_model()
    if not (0 <= pair[0] < config.n_layers and 0 <= pair[1] < config.n_heads):
        return verdict(False, name, f"{pair} is not a head: layers 0 .. {config.n_layers - 1}, heads "
                                    f"0 .. {config.n_heads - 1}, counted from 0.")
    if pair == target:
        return verdict(False, name, "removing the head itself sets its OUTPUT to 0, not its attention: its weights, "
                                    "and so its score, stay the same. Which head does it read from?")
    if pair[0] >= target[0]:
        return verdict(False, name, f"a head of layer {pair[0]} runs beside or after head {target}: its keys can "
                                    f"only come from earlier layers. Pick a head of layer 0.")
    probe = induction_probe(config.vocab_size)
    base = float(induction_scores(config, params, probe)[target])
    after = {h: float(induction_scores(config, params, probe, ablate=[(0, h)])[target]) for h in range(config.n_heads)}
    best = min(after, key=after.get)
    if pair[1] == best:
        runner = min((h for h in after if h != best), key=after.get)
        return verdict(True, name, f"correct: without (0, {best}) head {target}'s induction score falls from "
                                   f"{base:.2f} to {after[best]:.2f}, more than without any other head (next: "
                                   f"(0, {runner}), to {after[runner]:.2f}).")
    return verdict(False, name, f"without {pair} head {target}'s score falls from {base:.2f} to {after[pair[1]]:.2f}; "
                                "another head of layer 0 lowers it more. Which one looks one character back most?")


def _is_pair_list(answer: object) -> bool:
    """True for a list of pairs ([(0, 1)]), which exercise 2 does not want (one pair)."""
    try:
        return len(answer) > 0 and all(isinstance(v, (tuple, list, np.ndarray)) for v in answer)
    except TypeError:
        return False


@exercise_check
def check_k_composition(answer: object) -> Verdict:
    """Exercise 3: the K-composition score of EX_W_QK (later head) and EX_W_OV (earlier head)."""
    A, B = EX_W_QK, EX_W_OV
    n = np.linalg.norm  # Frobenius norm of a matrix
    right = k_composition_score(A, B)
    np.testing.assert_allclose(right, n(A @ B.T) / (n(A) * n(B)), rtol=1e-12)
    mistakes = {
        "that uses W_QK W_OV without the transpose: a key built from what the earlier head wrote, y W_OV, enters "
        "the score as (y W_OV)ᵀ, so the product is W_QK W_OVᵀ.": float(n(A @ B) / (n(A) * n(B))),
        "that is ‖W_QK W_OVᵀ‖ without dividing by ‖W_QK‖ ‖W_OV‖: the score compares the product with the sizes "
        "of its factors, so that it lies between 0 and 1.": float(n(A @ B.T)),
        "that divides by ‖W_QK‖ only; divide by the product ‖W_QK‖ ‖W_OV‖.": float(n(A @ B.T) / n(A)),
    }
    hint = "Hint: np.linalg.norm(M) of a matrix is its Frobenius norm, √(Σ M_ij²); the formula is in section 4."
    return check_number(answer, right, name="Exercise 3, K-composition", mistakes=mistakes, hint=hint)
