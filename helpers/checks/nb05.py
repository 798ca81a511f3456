"""Exercise checks for notebook 05 (positions): shuffled weights, sinusoids, "man bites dog", rotary.

Shapes: T tokens, d_model features per token (the width of X and of a position table), d the
width of the vectors that ``rotary`` turns (even). Positions p count from 0, as in the formula.

The exercises:

1. ``check_shuffled_weights``: the attention weights of the running sentence shuffled by ``EX_PERM``,
   from the unshuffled weights alone (attention without weight matrices, ``self_attention``).
2. ``check_sinusoidal``: the sinusoidal table PE for ``EX_T`` = 5 positions and ``EX_D_MODEL`` = 4.
3. ``check_dog_row``: the output row of "dog" in "man bites dog" with sinusoidal positions added.
4. ``check_rotary``: ``EX_Q`` (T = 4, d = 4) rotated by its positions 0..3, by hand.

The Build exercise: ``check_sinusoidal_positions(fn)`` calls the student's ``sinusoidal_positions(T, d)``
((T, d), PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same), d even) on the inputs of
``SPEC_SINUSOIDAL_POSITIONS`` with the engine of ``helpers.checks.functions``, and names the typical mistakes
(sin and cos swapped, the exponent i/d or j/d, positions from 1, the frequency inverted, ...).

Each ``check_...`` computes the right answer and the typical wrong ones with ``helpers``, prints one
verdict ("✅ ..." or "❌ ...: what is wrong") and returns a Verdict (truthy when right). None of them
raises on a wrong or missing answer. Mistakes whose result has another shape than the right answer
(e.g. one-hot positions concatenated instead of sinusoids added) are recognised before the shape
comparison, so the student hears which mistake it is.
"""

from __future__ import annotations

import numpy as np

from helpers.attention import self_attention
from helpers.checks import Verdict, check_array, check_array_any_shape, exercise_check
from helpers.checks.functions import Case, Spec, check_function
from helpers.positions import onehot_positions, permute_tokens, rotary, sinusoidal_positions
from helpers.sentence import DOG_BITES_MAN, MAN_BITES_DOG, embed, embeddings

__all__ = [
    "EX_PERM",
    "EX_T",
    "EX_D_MODEL",
    "EX_Q",
    "check_shuffled_weights",
    "check_sinusoidal",
    "check_dog_row",
    "check_rotary",
    "SPEC_SINUSOIDAL_POSITIONS",
    "check_sinusoidal_positions",
]

EX_PERM = (7, 2, 5, 0, 3, 1, 6, 4)  # exercise 1: row t of the shuffled sentence is token EX_PERM[t]
EX_T, EX_D_MODEL = 5, 4  # exercise 2: positions 0..4, four columns (two sin/cos pairs)
EX_Q = np.array([[1, 0, 2, 0], [1, 0, 2, 0], [0, 1, 1, 1], [2, 1, 0, 1]])  # exercise 4: (T=4, d=4)
EX_Q.setflags(write=False)  # the check recomputes from it: a student's edit must not move the answer
_BASE = 10000.0
_DOG = 2  # "dog" is token 3 of "man bites dog": row index 2


_check = check_array_any_shape


# --------------------------------------------------------------------------- exercise 1


@exercise_check
def check_shuffled_weights(answer: object) -> Verdict:
    """Exercise 1: the weights of self_attention on the running sentence shuffled by EX_PERM, shape (8, 8)."""
    X = embeddings()  # (T=8, d_model=6)
    perm = np.array(EX_PERM)  # (T,)
    inverse = np.argsort(perm)  # (T,) the permutation that undoes EX_PERM
    w = self_attention(X)[1]  # (T, T) the unshuffled weights
    right = self_attention(permute_tokens(X, perm))[1]  # (T, T) attention run again on the shuffled words
    mistakes = {
        "only the rows are reordered (w[perm]): a shuffled token is also a shuffled KEY, so reorder the "
        "columns the same way, w[perm][:, perm].": w[perm],
        "only the columns are reordered (w[:, perm]): the queries moved too, so reorder the rows the same "
        "way, w[perm][:, perm].": w[:, perm],
        "this is the inverse shuffle (np.argsort(perm)): row t of the shuffled sentence is token perm[t], "
        "so index with perm itself, w[perm][:, perm].": w[inverse][:, inverse],
        "these are the unshuffled weights: the numbers are right, but each row and column must move with "
        "its word.": w,
    }
    hint = "Hint: row t of the shuffled sentence is token perm[t]. Which rows AND which columns move?"
    return check_array(answer, right, name="Exercise 1, shuffled weights", mistakes=mistakes, hint=hint,
                       exp=True)


# --------------------------------------------------------------------------- exercise 2


def _sinusoids(positions: np.ndarray, exponents: np.ndarray, *, swap: bool = False) -> np.ndarray:
    """A (T, d) table with sin in the even and cos in the odd columns of p / base**exponent[j] (swap: cos, sin)."""
    angles = positions[:, None] / _BASE ** exponents[None, :]  # (T, 1) / (1, d) -> (T, d)
    even, odd = (np.cos, np.sin) if swap else (np.sin, np.cos)
    table = odd(angles)  # (T, d)
    table[:, 0::2] = even(angles[:, 0::2])  # (T, ceil(d/2)) the even columns
    return table


@exercise_check
def check_sinusoidal(answer: object) -> Verdict:
    """Exercise 2: PE for EX_T positions and EX_D_MODEL columns, PE[p, 2i] = sin(p / 10000**(2i/d_model)), ..."""
    T, d = EX_T, EX_D_MODEL
    p = np.arange(T, dtype=float)  # (T,) positions 0..T-1
    j = np.arange(d)  # (d,) column index
    pairs = 2 * (j // 2) / d  # (d,) 2i/d_model: both columns of pair i share one frequency
    right = sinusoidal_positions(T, d)  # (T, d)
    mistakes = {
        "the positions start at 1; the first token sits at position p = 0, so row 0 is [0, 1, 0, 1].":
            _sinusoids(p + 1, pairs),
        "sin and cos are swapped: sin goes into the even columns 0, 2, ... and cos into the odd ones.":
            _sinusoids(p, pairs, swap=True),
        "each column got its own frequency 10000**(j/d_model); columns 2i and 2i+1 share one, "
        "10000**(2i/d_model) with i = j // 2.": _sinusoids(p, j / d),
        "you used the column index j where the formula has i: the exponent is 2i/d_model with i = j // 2, "
        "not 2j/d_model.": _sinusoids(p, 2 * j / d),
        "you multiplied p by 10000**(2i/d_model); divide by it (the slow pairs turn LESS per position).":
            _sinusoids(p, -pairs),
        "every column is a sine: the odd columns 1, 3, ... are cosines.": np.sin(p[:, None] / _BASE ** pairs),
        "every column is a cosine: the even columns 0, 2, ... are sines.": np.cos(p[:, None] / _BASE ** pairs),
        f"this is the transpose: rows are positions (T = {T}) and columns are features (d_model = {d}).": right.T,
    }
    hint = (f"Hint: one row per position p = 0..{T - 1}, one column per feature; column j uses i = j // 2, "
            "sin for even j and cos for odd j.")
    return _check(answer, right, name="Exercise 2, sinusoidal table", mistakes=mistakes, hint=hint)


# --------------------------------------------------------------------------- exercise 3


@exercise_check
def check_dog_row(answer: object) -> Verdict:
    """Exercise 3: row "dog" (index 2) of self_attention(embed(MAN_BITES_DOG) + PE), shape (6,)."""
    X = embed(MAN_BITES_DOG)  # (T=3, d_model=6)
    T, d = X.shape
    PE = sinusoidal_positions(T, d)  # (T, d)
    Xp = X + PE  # (T, d)
    out, w = self_attention(Xp)  # (T, d), (T, T)
    right = out[_DOG]  # (d,)
    X_dog_first = embed(DOG_BITES_MAN)  # (T, d)
    concat = np.concatenate([X, onehot_positions(T)], axis=1)  # (T, d + T)
    mistakes = {
        "this is the row of \"dog\" without positions, the same in both sentences: add PE to X first.":
            self_attention(X)[0][_DOG],
        "this is \"dog\" in \"dog bites man\" (dog at position 0). In \"man bites dog\" the dog is token 3, "
        "at position p = 2.": self_attention(X_dog_first + PE)[0][0],
        "this is the row of \"man\" (row index 0); \"dog\" is token 3 of \"man bites dog\", row index 2.": out[0],
        "this is the row of \"bites\" (row index 1); \"dog\" is token 3 of \"man bites dog\", row index 2.": out[1],
        "the positions start at 1; the first token sits at position p = 0 (PE row 0 is [0, 1, 0, 1, 0, 1]).":
            self_attention(X + sinusoidal_positions(T + 1, d)[1:])[0][_DOG],
        "the weights are right but they mix X without the positions; in self-attention the values are the "
        "same X + PE as the queries and keys.": w[_DOG] @ X,
        f"the scores are not scaled: divide (X + PE)(X + PE)ᵀ by √d_model = √{d} before the softmax.":
            self_attention(Xp, scale=1.0)[0][_DOG],
        "these are the attention weights of \"dog\" (one per token); the output is those weights times "
        "X + PE.": w[_DOG],
        "this uses one-hot positions, concatenated; this exercise ADDS the sinusoidal table PE.":
            self_attention(concat)[0][_DOG],
    }
    hint = "Hint: build X + PE for \"man bites dog\" (PE from the formula, positions 0, 1, 2), attend, take dog's row."
    return _check(answer, right, name="Exercise 3, output of \"dog\"", mistakes=mistakes, hint=hint, exp=True)


# --------------------------------------------------------------------------- exercise 4


def _turn(x: np.ndarray, angles: np.ndarray, *, halves: bool = False) -> np.ndarray:
    """Rotate feature pairs of x (T, d) by angles (T, d/2): pairs (2i, 2i+1), or (i, i + d/2) if halves."""
    d = x.shape[1]
    a, b = (x[:, : d // 2], x[:, d // 2 :]) if halves else (x[:, 0::2], x[:, 1::2])  # (T, d/2) each
    new_a = a * np.cos(angles) - b * np.sin(angles)  # (T, d/2)
    new_b = a * np.sin(angles) + b * np.cos(angles)  # (T, d/2)
    out = np.empty_like(x, dtype=float)  # (T, d)
    if halves:
        out[:, : d // 2], out[:, d // 2 :] = new_a, new_b
    else:
        out[:, 0::2], out[:, 1::2] = new_a, new_b
    return out


@exercise_check
def check_rotary(answer: object) -> Verdict:
    """Exercise 4: EX_Q (T=4, d=4) with pair (2i, 2i+1) of row p turned by p / 10000**(2i/d), shape (4, 4)."""
    Q = EX_Q.astype(float)  # (T, d)
    T, d = Q.shape
    p = np.arange(T, dtype=float)  # (T,)
    i = np.arange(d // 2)  # (d/2,)
    theta = _BASE ** (-2 * i / d)  # (d/2,) radians per position of pair i
    right = rotary(Q)  # (T, d)
    mistakes = {
        "you turned every pair the wrong way (clockwise, by -p·θ_i): the new first entry is "
        "x₀ cos − x₁ sin, the new second x₀ sin + x₁ cos.": _turn(Q, -p[:, None] * theta),
        "the positions start at 1; the first token sits at position p = 0 and is not turned at all.":
            _turn(Q, (p[:, None] + 1) * theta),
        "you paired feature i with feature i + d/2 (the rotate_half layout of some libraries); here the "
        "pairs are neighbours, (0, 1) and (2, 3).": _turn(Q, p[:, None] * theta, halves=True),
        "every pair turned by p radians; pair i turns by p·θ_i with θ_i = 10000**(-2i/d_k), so pair 1 "
        "turns much more slowly.": _turn(Q, p[:, None] * np.ones_like(theta)),
        "you used θ_i = 10000**(-i/d); the exponent is -2i/d, as in the sinusoids.":
            _turn(Q, p[:, None] * _BASE ** (-i / d)),
        "this is EX_Q unturned: row p must be turned by p·θ_i.": Q,
        "this is the transpose: keep one row per token.": right.T,
    }
    hint = ("Hint: row p, pair i = features (2i, 2i+1), angle p·θ_i with θ_i = 10000**(-2i/d_k); "
            "new pair = (x₀ cos − x₁ sin, x₀ sin + x₁ cos).")
    return _check(answer, right, name="Exercise 4, rotary", mistakes=mistakes, hint=hint)



# --------------------------------------------------------------------------- the Build exercise

# The typical mistakes, each a wrong sinusoidal_positions(T, d) (exponents per column j: the right one is 2(j//2)/d).


def _columns(d: int) -> np.ndarray:
    return np.arange(d)  # (d,) column index j; pair i = j // 2


def _swapped(T: int, d: int) -> np.ndarray:
    return _sinusoids(np.arange(T, dtype=float), 2 * (_columns(d) // 2) / d, swap=True)


def _exponent_i_over_d(T: int, d: int) -> np.ndarray:
    return _sinusoids(np.arange(T, dtype=float), (_columns(d) // 2) / d)  # pair i: 10000**(i/d)


def _exponent_j_over_d(T: int, d: int) -> np.ndarray:
    return _sinusoids(np.arange(T, dtype=float), _columns(d) / d)  # column j: 10000**(j/d)


def _exponent_2j_over_d(T: int, d: int) -> np.ndarray:
    return _sinusoids(np.arange(T, dtype=float), 2 * _columns(d) / d)  # column j where the formula has i


def _from_one(T: int, d: int) -> np.ndarray:
    return _sinusoids(np.arange(1, T + 1, dtype=float), 2 * (_columns(d) // 2) / d)


def _times_frequency(T: int, d: int) -> np.ndarray:
    return _sinusoids(np.arange(T, dtype=float), -2 * (_columns(d) // 2) / d)  # p * 10000**(2i/d)


def _angles_per_pair(T: int, d: int) -> np.ndarray:
    return np.arange(T)[:, None] / _BASE ** (2 * np.arange(d // 2) / d)  # (T, d/2)


def _all_sines(T: int, d: int) -> np.ndarray:
    return np.sin(np.repeat(_angles_per_pair(T, d), 2, axis=1))  # (T, d)


def _all_cosines(T: int, d: int) -> np.ndarray:
    return np.cos(np.repeat(_angles_per_pair(T, d), 2, axis=1))  # (T, d)


def _halves(T: int, d: int) -> np.ndarray:
    a = _angles_per_pair(T, d)  # (T, d/2)
    return np.concatenate([np.sin(a), np.cos(a)], axis=1)  # (T, d): sines first, then cosines


def _transposed(T: int, d: int) -> np.ndarray:
    return sinusoidal_positions(d, T).T  # (T, d) only when T = d: rows and columns swapped in the formula


SPEC_SINUSOIDAL_POSITIONS = Spec(
    name="sinusoidal_positions",
    reference=sinusoidal_positions,
    cases=[
        Case("T = 8, d = 6 (the running sentence)", (8, 6)),
        Case("T = 1, d = 4 (one token)", (1, 4)),
        Case("T = 6, d = 6", (6, 6)),
        Case("T = 3, d = 10", (3, 10)),
        Case("T = 5, d = 2 (one sin/cos pair)", (5, 2)),
        Case("T = 50, d = 16", (50, 16)),
    ],
    mistakes={
        "sin and cos are swapped: sin goes into the even columns 0, 2, ... and cos into the odd ones.": _swapped,
        "the exponent is i/d; the formula has 2i/d (pair i = columns 2i and 2i+1 uses 10000**(2i/d)).":
            _exponent_i_over_d,
        "each column got its own frequency 10000**(j/d); columns 2i and 2i+1 share one, 10000**(2i/d) with "
        "i = j // 2.": _exponent_j_over_d,
        "you used the column index j where the formula has i: the exponent is 2i/d with i = j // 2, not 2j/d.":
            _exponent_2j_over_d,
        "the positions start at 1; the first token sits at position p = 0, so row 0 is [0, 1, 0, 1, ...].":
            _from_one,
        "you multiplied p by 10000**(2i/d); divide by it (the slow pairs turn LESS per position).":
            _times_frequency,
        "every column is a sine: the odd columns 1, 3, ... are cosines.": _all_sines,
        "every column is a cosine: the even columns 0, 2, ... are sines.": _all_cosines,
        "the sines fill the first half of the columns and the cosines the second half; here they alternate: "
        "sin in column 2i, cos in column 2i+1.": _halves,
        "this is the transpose: rows are positions p (T of them), columns are features (d).": _transposed,
    },
    hint="Hint: p = np.arange(T) as a column (T, 1), i = np.arange(d // 2) as a row; angles p / 10000**(2i/d), "
         "shape (T, d/2); sin into the even columns PE[:, 0::2], cos into the odd ones PE[:, 1::2].",
    done=": T = 1 to 50, d = 2 to 16",
)


@exercise_check
def check_sinusoidal_positions(fn: object) -> Verdict:
    """The Build exercise: the student's sinusoidal_positions(T, d) -> (T, d), on several (T, d); names the mistake."""
    return check_function(fn, SPEC_SINUSOIDAL_POSITIONS)
