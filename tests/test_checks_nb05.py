"""Tests of the exercise checks of notebook 05 (positions): helpers.checks.nb05.

Table-driven, as tests/test_checks.py: every row calls one check with one answer and states what the
check must say: truthy and "✅" for the right answer, falsy and "❌" with the SPECIFIC explanation of the
slip for each typical mistake the check claims to diagnose. Right answers are computed here with
``helpers`` (never typed-in numbers); the slips are computed the way a student would make them (plain
NumPy loops and formulas), not with the check's own internals. The checks compare numbers with
``np.allclose`` (rtol 1e-6, atol 1e-8).

A phrase asserted for a mistake must not occur in the same check's "Not answered yet" output (which
carries the hint), so a phrase cannot pass because the hint happens to contain it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest
from check_table import assert_verdict_and_message, first_right, nan_like

from helpers.attention import self_attention, softmax
from helpers.checks import nb05
from helpers.positions import onehot_positions, permute_tokens, rotary, sinusoidal_positions
from helpers.sentence import DOG_BITES_MAN, MAN_BITES_DOG, embed, embeddings

# ------------------------------------------------------------------------------------------ the table


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    answer: object
    marks: str  # the ✅/❌ verdict line the check must print
    phrases: tuple[str, ...]  # each must occur in the printed output


def right(id: str, check: Callable[..., object], answer: object) -> Case:
    return Case(id, check, answer, "✅", ("correct",))


def wrong(id: str, check: Callable[..., object], answer: object, *phrases: str) -> Case:
    return Case(id, check, answer, "❌", phrases)


# ------------------------------------------------------------------------------ exercise 1: shuffled

X8 = embeddings()  # (T=8, d_model=6)
PERM = list(nb05.EX_PERM)
W8 = self_attention(X8)[1]  # (8, 8) the unshuffled weights
SHUFFLED = self_attention(permute_tokens(X8, PERM))[1]  # (8, 8) attention run again on the shuffled words
INVERSE = [PERM.index(t) for t in range(8)]  # by hand: where did token t go?

EX1 = [
    right("shuffled/recomputed", nb05.check_shuffled_weights, SHUFFLED),
    right("shuffled/reindexed", nb05.check_shuffled_weights, W8[PERM][:, PERM]),
    right("shuffled/as-list", nb05.check_shuffled_weights, W8[np.ix_(PERM, PERM)].tolist()),
    wrong("shuffled/rows-only", nb05.check_shuffled_weights, W8[PERM], "only the rows are reordered"),
    wrong("shuffled/columns-only", nb05.check_shuffled_weights, W8[:, PERM], "only the columns are reordered"),
    wrong("shuffled/inverse", nb05.check_shuffled_weights, W8[INVERSE][:, INVERSE], "inverse shuffle"),
    wrong("shuffled/unshuffled", nb05.check_shuffled_weights, W8.copy(), "these are the unshuffled weights"),
    wrong("shuffled/transposed", nb05.check_shuffled_weights, SHUFFLED.T, "transpose", "rows are queries"),
    wrong("shuffled/wrong-shape", nb05.check_shuffled_weights, SHUFFLED[:3], "(3, 8)", "(8, 8)"),
]

# ------------------------------------------------------------------------------ exercise 2: sinusoids

T2, D2 = nb05.EX_T, nb05.EX_D_MODEL


def table_by_loop(T: int, d: int, *, start: int = 0, exponent: Callable[[int], float] | None = None,
                  swap: bool = False, only: str | None = None) -> np.ndarray:
    """A student's double loop over positions and columns, with one slip switched on at a time."""
    exponent = exponent or (lambda j: 2 * (j // 2) / d)
    PE = np.zeros((T, d))
    for p in range(T):
        for j in range(d):
            angle = (p + start) / 10000 ** exponent(j)
            use_sin = (j % 2 == 0) != swap if only is None else only == "sin"
            PE[p, j] = np.sin(angle) if use_sin else np.cos(angle)
    return PE


RIGHT2 = sinusoidal_positions(T2, D2)  # (5, 4)

EX2 = [
    right("sinusoidal/helper", nb05.check_sinusoidal, RIGHT2),
    right("sinusoidal/loop", nb05.check_sinusoidal, table_by_loop(T2, D2)),
    wrong("sinusoidal/from-1", nb05.check_sinusoidal, table_by_loop(T2, D2, start=1), "positions start at 1"),
    wrong("sinusoidal/swapped", nb05.check_sinusoidal, table_by_loop(T2, D2, swap=True), "sin and cos are swapped"),
    wrong(
        "sinusoidal/j-over-d",
        nb05.check_sinusoidal,
        table_by_loop(T2, D2, exponent=lambda j: j / D2),
        "each column got its own frequency",
    ),
    wrong(
        "sinusoidal/2j-over-d",
        nb05.check_sinusoidal,
        table_by_loop(T2, D2, exponent=lambda j: 2 * j / D2),
        "column index j where the formula has i",
    ),
    wrong(
        "sinusoidal/multiplied",
        nb05.check_sinusoidal,
        table_by_loop(T2, D2, exponent=lambda j: -2 * (j // 2) / D2),
        "you multiplied p by",
    ),
    wrong("sinusoidal/all-sin", nb05.check_sinusoidal, table_by_loop(T2, D2, only="sin"), "every column is a sine"),
    wrong("sinusoidal/all-cos", nb05.check_sinusoidal, table_by_loop(T2, D2, only="cos"), "every column is a cosine"),
    wrong("sinusoidal/transposed", nb05.check_sinusoidal, RIGHT2.T, "this is the transpose", "rows are positions"),
    wrong("sinusoidal/other-size", nb05.check_sinusoidal, sinusoidal_positions(8, 6), "(8, 6)", "(5, 4)"),
]

# ------------------------------------------------------------------------------ exercise 3: "dog"

XM = embed(MAN_BITES_DOG)  # (3, 6) "man bites dog"
XD = embed(DOG_BITES_MAN)  # (3, 6) "dog bites man"
PE3 = sinusoidal_positions(3, 6)  # (3, 6)


def attend_by_hand(X: np.ndarray, V: np.ndarray | None = None, scale: float | None = None) -> tuple:
    """A student's softmax(X Xᵀ / √d) V: (output, weights)."""
    S = X @ X.T * (1 / np.sqrt(X.shape[1]) if scale is None else scale)
    w = softmax(S)
    return w @ (X if V is None else V), w


OUT3, WTS3 = attend_by_hand(XM + PE3)  # (3, 6), (3, 3)

EX3 = [
    right("dog/helper", nb05.check_dog_row, self_attention(XM + PE3)[0][2]),
    right("dog/by-hand", nb05.check_dog_row, OUT3[2]),
    wrong("dog/no-positions", nb05.check_dog_row, attend_by_hand(XM)[0][2], "without positions"),
    wrong("dog/dog-bites-man", nb05.check_dog_row, attend_by_hand(XD + PE3)[0][0], "dog at position 0"),
    wrong("dog/row-of-man", nb05.check_dog_row, OUT3[0], "this is the row of \"man\""),
    wrong("dog/row-of-bites", nb05.check_dog_row, OUT3[1], "this is the row of \"bites\""),
    wrong(
        "dog/positions-from-1",
        nb05.check_dog_row,
        attend_by_hand(XM + sinusoidal_positions(4, 6)[1:])[0][2],
        "positions start at 1",
    ),
    wrong("dog/values-without-positions", nb05.check_dog_row, attend_by_hand(XM + PE3, V=XM)[0][2],
          "without the positions"),
    wrong("dog/unscaled", nb05.check_dog_row, attend_by_hand(XM + PE3, scale=1.0)[0][2], "not scaled"),
    wrong("dog/weights", nb05.check_dog_row, WTS3[2], "these are the attention weights"),
    wrong(
        "dog/one-hot-concatenated",
        nb05.check_dog_row,
        attend_by_hand(np.hstack([XM, onehot_positions(3)]))[0][2],
        "one-hot positions, concatenated",
    ),
    wrong("dog/other-shape", nb05.check_dog_row, np.zeros(4), "(4,)", "(6,)"),
]

# ------------------------------------------------------------------------------ exercise 4: rotary

Q4 = np.asarray(nb05.EX_Q, dtype=float)  # (4, 4)


def rotate_by_loop(Q: np.ndarray, *, sign: float = 1.0, start: int = 0, halves: bool = False,
                   theta: Callable[[int], float] | None = None) -> np.ndarray:
    """A student's loop over tokens and pairs, with one slip switched on at a time."""
    T, d = Q.shape
    theta = theta or (lambda i: 10000 ** (-2 * i / d))
    out = Q.copy()
    for p in range(T):
        for i in range(d // 2):
            a, b = (i, i + d // 2) if halves else (2 * i, 2 * i + 1)
            angle = sign * (p + start) * theta(i)
            out[p, a] = Q[p, a] * np.cos(angle) - Q[p, b] * np.sin(angle)
            out[p, b] = Q[p, a] * np.sin(angle) + Q[p, b] * np.cos(angle)
    return out


RIGHT4 = rotary(Q4)  # (4, 4) positions 0..3

EX4 = [
    right("rotary/helper", nb05.check_rotary, RIGHT4),
    right("rotary/loop", nb05.check_rotary, rotate_by_loop(Q4)),
    wrong("rotary/backwards", nb05.check_rotary, rotate_by_loop(Q4, sign=-1.0), "the wrong way"),
    wrong("rotary/from-1", nb05.check_rotary, rotate_by_loop(Q4, start=1), "positions start at 1"),
    wrong("rotary/halves", nb05.check_rotary, rotate_by_loop(Q4, halves=True), "rotate_half"),
    wrong("rotary/one-speed", nb05.check_rotary, rotate_by_loop(Q4, theta=lambda i: 1.0),
          "every pair turned by p radians"),
    wrong(
        "rotary/i-over-d",
        nb05.check_rotary,
        rotate_by_loop(Q4, theta=lambda i: 10000 ** (-i / 4)),
        "10000**(-i/d)",
    ),
    wrong("rotary/unturned", nb05.check_rotary, Q4.copy(), "EX_Q unturned"),
    wrong("rotary/transposed", nb05.check_rotary, RIGHT4.T, "this is the transpose", "one row per token"),
    wrong("rotary/other-shape", nb05.check_rotary, np.zeros((4, 2)), "(4, 2)", "(4, 4)"),
]


# Build: the student's own sinusoidal_positions(T, d) (its own table: tests/test_build_nb05.py)
BUILD = [
    right("build/loop", nb05.check_sinusoidal_positions, table_by_loop),
    wrong("build/sin-cos-swapped", nb05.check_sinusoidal_positions, lambda T, d: table_by_loop(T, d, swap=True),
          "sin and cos are swapped"),
]

CASES = [c._replace(id=f"ex{n}:{c.id}") for n, table in enumerate((EX1, EX2, EX3, EX4, BUILD), start=1)
         for c in table]
CHECKS = [nb05.check_shuffled_weights, nb05.check_sinusoidal, nb05.check_dog_row, nb05.check_rotary,
          nb05.check_sinusoidal_positions]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_verdict_and_message(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    assert_verdict_and_message(case, 1, capsys)


def test_every_public_check_is_tested() -> None:
    tested = {c.check for c in CASES}
    for name in nb05.__all__:
        if name.startswith("check_"):
            assert getattr(nb05, name) in tested, f"nb05.{name} has no case"
            assert getattr(nb05, name) in CHECKS, f"nb05.{name} is not in CHECKS"


def test_every_listed_mistake_is_a_different_answer() -> None:
    """Two slips giving the same numbers would make one of the messages unreachable."""
    for table in (EX1, EX2, EX3, EX4):
        answers = [(c.id, np.asarray(c.answer, dtype=float)) for c in table if c.marks == "❌"]
        rights = [np.asarray(c.answer, dtype=float) for c in table if c.marks == "✅"]
        for k, (id_a, a) in enumerate(answers):
            assert not any(a.shape == r.shape and np.allclose(a, r) for r in rights), f"{id_a} equals the right answer"
            for id_b, b in answers[k + 1 :]:
                assert not (a.shape == b.shape and np.allclose(a, b)), f"{id_a} and {id_b} give the same numbers"


# unanswered, garbage, names, the exercise data unchanged: tests/test_checks_every_lesson.py (every lesson's)


# ------------------------------------------------------- a NaN answer: the exp hint only where there is an exp

# the exercises that compute an exp (a softmax): only they may ask "did exp overflow?"
EXP_CHECKS = {nb05.check_shuffled_weights, nb05.check_dog_row}
_FIRST_RIGHT = first_right(CASES)


@pytest.mark.parametrize("case", _FIRST_RIGHT, ids=[c.id for c in _FIRST_RIGHT])
def test_nan_answer_blames_exp_only_where_the_exercise_has_one(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    verdict = case.check(nan_like(case.answer))
    out = capsys.readouterr().out
    assert not verdict and "NaN" in out, out
    assert ("did exp overflow" in out) is (case.check in EXP_CHECKS), out


def test_the_nan_table_covers_every_check() -> None:
    assert {c.check for c in _FIRST_RIGHT} == set(CHECKS)
