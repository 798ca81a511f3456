"""Exercise checks for notebook 11 (induction heads): layer 1's write, layer 2's pattern, layer 1's keys.

The examples are small and hand-checkable:

    EX_N_LETTERS   8 letters A..H; the start token ^ has id 8
    EX_SEQ  (8,)   ^ D B G D B G D: a segment of three letters, repeated
    EX_T           5: the sequence length of exercise 3's previous-token head

Each ``check_...`` computes the right answer with ``helpers.induction`` and the typical wrong ones
(no shift, shifted the wrong way, the earlier occurrence itself, transposed, ...), prints one verdict
("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when right). None raises on any answer.
"""

from __future__ import annotations

import numpy as np

from helpers.checks import Verdict, check_array, exercise_check
from helpers.induction import blocks, designed_params, forward

__all__ = ["EX_N_LETTERS", "EX_SEQ", "EX_T", "check_previous_block", "check_induction_pattern", "check_previous_keys"]

EX_N_LETTERS = 8
EX_SEQ = np.array([8, 3, 1, 6, 3, 1, 6, 3])  # (T=8,) ^ D B G D B G D
EX_T = 5


def _designed(seq: np.ndarray):
    return forward(designed_params(len(seq), EX_N_LETTERS), seq)


def _ideal_pattern(seq: np.ndarray) -> np.ndarray:
    """Layer 2's ideal attention weights (T, T): uniform over the keys j <= i whose previous letter is the
    letter at i; ^ (key 0) when there is none."""
    T = len(seq)
    P = np.zeros((T, T))  # (T, T)
    for i in range(T):
        keys = [j for j in range(2, i + 1) if seq[j - 1] == seq[i] and seq[i] < EX_N_LETTERS]
        if keys:
            P[i, keys] = 1 / len(keys)
        else:
            P[i, 0] = 1.0
    return P


@exercise_check
def check_previous_block(answer: object) -> Verdict:
    """Exercise 1: what a perfect previous-token head writes into the previous block for EX_SEQ, (8, 8)."""
    seq, n = EX_SEQ, EX_N_LETTERS
    T = len(seq)
    letters = np.vstack([np.zeros(n), np.eye(n)[seq[1:]]])  # (T, n) the letter at each position; ^ has none
    right = np.vstack([np.zeros((1, n)), letters[:-1]])  # (T, n) row i: the letter at i-1
    # the designed layer 1 writes exactly this, up to ~1e-8
    np.testing.assert_allclose(_designed(seq).x1[:, blocks(T, n)["previous"]], right, rtol=0, atol=1e-6)
    first_own = right.copy()  # (T, n) the first letter given its own letter as "previous" (07's convention)
    first_own[1] = np.eye(n)[seq[1]]
    mistakes = {
        "this is each position's OWN letter (the token block); the previous block holds the letter one position "
        "earlier: row i is the letter at i−1.": letters,
        "this is the NEXT letter (row i holds the letter at i+1): a causal head cannot see it, and the previous "
        "block holds the letter at i−1.": np.vstack([letters[1:], np.zeros((1, n))]),
        "row 2 (the first letter, D) must be all zeros: the token before it is ^, which is not a letter and "
        "whose value is 0.": first_own,
    }
    hint = "Hint: start from a (8, 8) array of zeros; for i = 2 .. 7 (Python index), put a 1 in column EX_SEQ[i - 1]."
    # atol 1e-6: the designed model's own write (weights within ~1e-8 of 0 and 1) counts as right
    return check_array(answer, right, name="Exercise 1, the previous block", mistakes=mistakes, hint=hint, atol=1e-6)


@exercise_check
def check_induction_pattern(answer: object) -> Verdict:
    """Exercise 2: the designed layer 2's attention weights (8, 8) on EX_SEQ (rows queries, columns keys)."""
    seq = EX_SEQ
    T = len(seq)
    right = _ideal_pattern(seq)  # (T, T)
    np.testing.assert_allclose(_designed(seq).weights2, right, rtol=0, atol=1e-3)  # the designed head, to 1e-3
    occurrence = np.zeros((T, T))  # the earlier occurrence ITSELF, not the position after it
    for i in range(T):
        keys = [j for j in range(1, i) if seq[j] == seq[i]]
        occurrence[i, keys if keys else [0]] = 1 / max(len(keys), 1)
    first_only = right.copy()  # only the first match, with weight 1
    for i in range(T):
        hit = np.flatnonzero(right[i])
        first_only[i] = 0
        first_only[i, hit[0]] = 1
    self_first = right.copy()  # first occurrences on themselves instead of on ^
    for i in range(T):
        if right[i, 0] == 1:
            self_first[i] = np.eye(T)[i]
    mistakes = {
        "these rows point at the earlier occurrence of the same letter; layer 2's key is the PREVIOUS letter, so "
        "it finds the position just after the earlier occurrence (the letter that came next).": occurrence,
        "the last D has two earlier D's, so two keys answer equally (positions 3 and 6, counted from 1): "
        "each gets 1/2.": first_only,
        "a letter seen for the first time matches no key; the designed query then looks at ^ (half its "
        "strength), not at itself.": self_first,
    }
    hint = ("Hint: for each query i, find the earlier keys j ≤ i (causal) with EX_SEQ[j - 1] == EX_SEQ[i]; share "
            "the row's 1 among them, or put it on ^ when there is none (i, j: NumPy indices from 0, ^ is column 0).")
    # atol 1e-3: the designed model's weights (within ~1e-4 of the ideal 0, 1/2, 1) count as right; every
    # mistake above differs from the right answer by at least 1/2 somewhere
    return check_array(answer, right, name="Exercise 2, layer 2's pattern", mistakes=mistakes, hint=hint, atol=1e-3)


@exercise_check
def check_previous_keys(answer: object) -> Verdict:
    """Exercise 3: the (EX_T, EX_T) position rows of a previous-token head's W_k, when query i is e_i."""
    T = EX_T
    right = np.eye(T, k=1)  # (T, T) row j (key of position j) = e_(j+1): query i = e_i matches key i-1
    np.testing.assert_array_equal(designed_params(T, EX_N_LETTERS)["W_k1"][blocks(T, EX_N_LETTERS)["position"]], right)
    mistakes = {
        "with these keys query i matches key i+1, the NEXT position, which the causal mask hides: row j "
        "(the key of position j) must be e_(j+1), a 1 just right of the diagonal.": np.eye(T, k=-1),
        "this is the identity: every query matches its own key, a head that looks at itself.": np.eye(T),
        "row j is the key of position j; the last position is nobody's previous token, so its row is 0 (no "
        "wrap-around to position 1).": np.eye(T, k=1) + np.eye(T, k=-(T - 1)),
    }
    hint = "Hint: the score of query i and key j is e_i · (row j); it must be 1 exactly when j = i − 1."
    return check_array(answer, right, name="Exercise 3, previous-token keys", mistakes=mistakes, hint=hint)
