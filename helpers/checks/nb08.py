"""Exercise checks for notebook 08 (the cost of attention): online softmax updates, merges, bytes and FLOPs.

The exercises' data, small enough to work by hand:

    EX_SEEN, EX_BLOCK   one row of scores in two parts: the keys seen so far (3,) and the next block (2,)
    EX_M_OLD, EX_L_OLD  the running max and running sum after EX_SEEN (what the student starts from)
    EX_A, EX_B          two partial results (m, l, o) of one query row, each over half of the keys;
                        o (d_v = 2,) is that half's normalised output acc / l
    EX_T_BYTES          T of exercise 3: the bytes of one (T, T) float32 matrix
    EX_T_FLOPS, EX_D    T and d of exercise 4: the floating-point operations of Q Kᵀ and weights · V

Each ``check_...`` computes the right answer with ``helpers.attention`` and the typical wrong ones
(the rescale factor upside down, the old sum not rescaled, bits for bytes, 2·T²·d, ...), prints one
verdict per number or array ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when
right). A number that is wrong in no recognised way is not revealed: the check gives the hint instead.
None of them raises on any answer.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.attention import online_softmax_steps
from helpers.checks import Verdict, check_array, check_number, exercise_check

__all__ = [
    "EX_SEEN",
    "EX_BLOCK",
    "EX_M_OLD",
    "EX_L_OLD",
    "EX_A",
    "EX_B",
    "EX_T_BYTES",
    "EX_T_FLOPS",
    "EX_D",
    "check_online_update",
    "check_merge",
    "check_matrix_bytes",
    "check_flops",
]

EX_SEEN = np.array([2.0, 0.0, 1.0])  # (3,) the keys seen so far
EX_BLOCK = np.array([5.0, 3.0])  # (2,) the next block of keys: its max is larger
_FIRST = online_softmax_steps(EX_SEEN, EX_SEEN.size)[0][0]  # one block: the state after EX_SEEN
EX_M_OLD = _FIRST["running_max"]  # 2.0
EX_L_OLD = _FIRST["running_sum"]  # e^0 + e^-2 + e^-1

EX_A = {"m": 1.0, "l": 2.5, "o": np.array([1.0, 0.0])}  # keys 1-4 of one query row
EX_B = {"m": 3.0, "l": 1.5, "o": np.array([0.0, 2.0])}  # keys 5-8 of the same row

EX_T_BYTES = 16_384
EX_T_FLOPS, EX_D = 8192, 128


# --------------------------------------------------------------------------- exercise 1


@exercise_check
def check_online_update(m_new: object, l_new: object) -> Verdict:
    """Exercise 1: the running max and sum after the block EX_BLOCK, from EX_M_OLD and EX_L_OLD."""
    steps, _ = online_softmax_steps(np.concatenate([EX_SEEN, EX_BLOCK]), EX_SEEN.size)  # blocks EX_SEEN, EX_BLOCK
    m, l = steps[1]["running_max"], steps[1]["running_sum"]  # 5.0 and e^-3 · EX_L_OLD + e^0 + e^-2
    m0, l0 = EX_M_OLD, EX_L_OLD
    block_new = float(np.exp(EX_BLOCK - m).sum())  # the block's terms under the new max
    block_old = float(np.exp(EX_BLOCK - m0).sum())  # ... under the old one
    ok_m = check_number(m_new, m, name="Exercise 1, new running max", hint="Hint: the largest score seen so far.",
                         exp=True, mistakes={
        f"this is the old max {m0:g}: the block holds a larger score, so the running max grows.": m0,
        "you added the two maxima; the running max is the larger of the two: max(m_old, max(block)).":
            m0 + float(EX_BLOCK.max()),
        "this is the smallest score of the block; the running max is the largest score seen so far.":
            float(EX_BLOCK.min()),
    })
    ok_l = check_number(l_new, l, name="Exercise 1, new running sum",
                         hint="Hint: the old sum was made with exp(x − m_old); what turns exp(x − m_old) into "
                              "exp(x − m_new)?", exp=True, mistakes={
        "the rescale factor is upside down: exp(m_new − m_old) makes the old terms larger; "
        "multiply the old sum by exp(m_old − m_new), which is below 1 when the max grows.":
            l0 * math.exp(m - m0) + block_new,
        "you forgot to rescale the old sum: it was made with exp(x − m_old); multiply it by "
        "exp(m_old − m_new) before adding the block's terms.": l0 + block_new,
        "the block's terms still use the old max: exp(x − m_old) can overflow; use exp(x − m_new).":
            l0 * math.exp(m0 - m) + block_old,
        "the old sum is missing: ℓ_new = exp(m_old − m_new)·ℓ_old + Σ exp(x_block − m_new).": block_new,
        "you multiplied by m_old − m_new itself; the factor is exp(m_old − m_new).": l0 * (m0 - m) + block_new,
        "this is Σ exp(x) with no max subtracted: ℓ is the sum of exp(x − m_new).": l * math.exp(m),
    })
    return bool(ok_m) and bool(ok_l)


# --------------------------------------------------------------------------- exercise 2


def _merge(a: dict, b: dict, swap: bool = False) -> tuple[float, float, np.ndarray]:
    """(m, l, o) of the two halves together; swap=True uses exp(m - m_i), the upside-down factor."""
    m = max(a["m"], b["m"])
    fa, fb = (math.exp(m - a["m"]), math.exp(m - b["m"])) if swap else (math.exp(a["m"] - m), math.exp(b["m"] - m))
    l = fa * a["l"] + fb * b["l"]
    return m, l, (fa * a["l"] * a["o"] + fb * b["l"] * b["o"]) / l  # (d_v,)


@exercise_check
def check_merge(m: object, l: object, o: object) -> Verdict:
    """Exercise 2: merge the partial results EX_A and EX_B of one query row into (m, l, o) of the whole row."""
    a, b = EX_A, EX_B
    right_m, right_l, right_o = _merge(a, b)
    up_m, up_l, up_o = _merge(a, b, swap=True)
    fa, fb = math.exp(a["m"] - right_m), math.exp(b["m"] - right_m)
    ok_m = check_number(m, right_m, name="Exercise 2, m", hint="Hint: the max over all the keys of the row.",
                         exp=True, mistakes={
        "this is the smaller max; the row's max is the larger of the two.": min(a["m"], b["m"]),
        "you added the maxima; the row's max is max(m_A, m_B).": a["m"] + b["m"],
        "this is the mean of the maxima; the row's max is max(m_A, m_B).": (a["m"] + b["m"]) / 2,
    })
    ok_l = check_number(l, right_l, name="Exercise 2, l",
                         hint="Hint: bring both sums to the common max m first.", exp=True, mistakes={
        "you added the sums as they are: each was made with its own max; multiply ℓ_A by exp(m_A − m) "
        "and ℓ_B by exp(m_B − m) first.": a["l"] + b["l"],
        "the rescale factors are upside down: exp(m − m_i) is at least 1; use exp(m_i − m).": up_l,
        "this is ℓ of the half with the larger max only; the other half's sum counts too, rescaled.":
            b["l"] if b["m"] >= a["m"] else a["l"],
    })
    o_mistakes = {
        "this is the plain average of the two outputs; weight each by its share of the row's sum, "
        "exp(m_i − m)·ℓ_i / ℓ.": (a["o"] + b["o"]) / 2,
        "you weighted the outputs by ℓ_A and ℓ_B without rescaling them to the common max: "
        "use exp(m_i − m)·ℓ_i.": (a["l"] * a["o"] + b["l"] * b["o"]) / (a["l"] + b["l"]),
        "the rescale factors are upside down: use exp(m_i − m), not exp(m − m_i).": up_o,
        "you forgot to divide by ℓ: this is acc, the unnormalised sum.": fa * a["l"] * a["o"] + fb * b["l"] * b["o"],
        "this is the output of the half with the larger max only; the other half still has weight.":
            b["o"] if b["m"] >= a["m"] else a["o"],
        "you divided by ℓ_A + ℓ_B; divide by the rescaled sum ℓ = exp(m_A − m)·ℓ_A + exp(m_B − m)·ℓ_B.":
            (fa * a["l"] * a["o"] + fb * b["l"] * b["o"]) / (a["l"] + b["l"]),
    }
    ok_o = check_array(o, right_o, name="Exercise 2, o", mistakes=o_mistakes, exp=True,
                       hint="Hint: o_i = acc_i / ℓ_i, so acc_i = ℓ_i · o_i; rescale each acc to the common max.")
    return bool(ok_m) and bool(ok_l) and bool(ok_o)


# --------------------------------------------------------------------------- exercise 3


@exercise_check
def check_matrix_bytes(answer: object) -> Verdict:
    """Exercise 3: the bytes of one (T, T) float32 matrix for T = EX_T_BYTES."""
    T = EX_T_BYTES
    item = np.dtype(np.float32).itemsize  # 4 bytes
    right = float(T * T * item)
    return check_number(answer, right, name="Exercise 3, bytes", hint="Hint: how many numbers, and how many "
                         "bytes does one float32 take (np.dtype(np.float32).itemsize)?", mistakes={
        "these are bits, not bytes: a float32 is 32 bits = 4 bytes; divide by 8.": right * 8,
        "that is float64 (8 bytes per number); float32 takes 4.": float(T * T * 8),
        "that is float16 (2 bytes per number); float32 takes 4.": float(T * T * 2),
        "this counts the numbers, T²; each float32 takes 4 bytes.": float(T * T),
        "the matrix is T × T, not T: square T first.": float(T * item),
        "that is in GiB (2**30 bytes); the question asks for bytes.": right / 2**30,
        "that is in MiB (2**20 bytes); the question asks for bytes.": right / 2**20,
        "that is in GB (10**9 bytes); the question asks for bytes.": right / 1e9,
        "that is in MB (10**6 bytes); the question asks for bytes.": right / 1e6,
    })


# --------------------------------------------------------------------------- exercise 4


@exercise_check
def check_flops(answer: object) -> Verdict:
    """Exercise 4: the floating-point operations of Q Kᵀ and weights · V for T = EX_T_FLOPS, d = EX_D."""
    T, d = EX_T_FLOPS, EX_D
    right = float(4 * T * T * d)
    return check_number(answer, right, name="Exercise 4, FLOPs", hint="Hint: Q Kᵀ is T·T dot products of "
                         "length d, each d multiplications and d additions; then weights · V.", mistakes={
        "2·T²·d is one product only, or both with a multiply-add counted as one operation: each of Q Kᵀ "
        "and weights · V costs 2·T²·d (a multiplication and an addition per term).": float(2 * T * T * d),
        "T²·d counts the multiplications of one product only; there are as many additions, and two "
        "products.": float(T * T * d),
        "8·T²·d counts each product twice: Q Kᵀ costs 2·T²·d and weights · V another 2·T²·d.": float(8 * T * T * d),
        "4·T·d² is the cost of projections like X W_q (d × d matrices); attention's products are T × T.":
            float(4 * T * d * d),
        "d is missing: each of the T² scores is a dot product of length d.": float(4 * T * T),
        "that is in GFLOP (10**9); the question asks for the plain count.": right / 1e9,
    })
