"""Word order: ways to tell self-attention where each token sits, in NumPy, with checked inputs.

Shape notation (as in ``helpers.attention``):

    ...      any leading batch / head dimensions
    T        number of tokens; a token's position p is its row index 0..T-1 (or given explicitly)
    d_model  width of a position vector (added to the token vectors, so the same width as X)
    d        width of the vectors that ``rotary`` rotates (queries or keys); even
    d/2      number of feature pairs (2i, 2i+1) and of frequencies, i = 0..d/2-1

Plain self-attention is permutation-equivariant: shuffle the tokens and the output rows are
shuffled the same way, so the order of the words is invisible to it. The tables here add
position information (one-hot rows, a random stand-in for a learned table, the sinusoids of
"Attention Is All You Need"); ``rotary`` (RoPE) instead rotates queries and keys so that their
dot product depends only on the distance between the two positions.

One frequency rule serves both sinusoids and RoPE: the angle of feature pair i at position p is
``p / base**(2*i/d)``, so pair 0 turns by 1 radian per position and the last pair slowest.

Every public function checks its arguments and raises ``TypeError`` (wrong kind of thing) or
``ValueError`` (right kind, wrong shape or value) with a message that names the argument and
the shapes it got. A table above 1 GiB is refused the same way (a typo such as T = 10**12 ends in a
message, not a MemoryError).
"""

from __future__ import annotations

import math

import numpy as np

from helpers.validate import as_array, as_numeric, check_int, check_real, check_rng, refuse_large

__all__ = [
    "onehot_positions",
    "learned_positions",
    "sinusoidal_positions",
    "rotary",
    "permute_tokens",
]


# --------------------------------------------------------------------------- checks


def _check_base(base: object) -> float:
    paper = "(10000.0 in the Transformer paper)"
    return check_real(base, "base", low=0.0, kind=f"a real number > 0 {paper}", rule=f"a finite number > 0 {paper}")


def _as_index_array(value: object, name: str, T: int, x_shape: tuple, *, kinds: str, what: str) -> np.ndarray:
    """``value`` as a 1-D array of shape (T,) whose dtype kind is in ``kinds``, or a named error."""
    arr = as_array(value, name, what=f"an array of {what}", rectangular=f"a 1-D array of {what}")
    if arr.size and (arr.dtype == bool or arr.dtype.kind not in kinds):
        raise TypeError(f"{name} must hold {what}, got dtype {arr.dtype} with shape {arr.shape}")
    if arr.shape != (T,):
        raise ValueError(
            f"{name} must have shape (T,) = ({T},), one entry per token of x (x shape {x_shape}), "
            f"got shape {arr.shape}"
        )
    return arr


def _angles(positions: np.ndarray, d: int, base: float) -> np.ndarray:
    """Angle p / base**(2i/d) of every position p and feature pair i = 0..ceil(d/2)-1, checked finite."""
    i = np.arange((d + 1) // 2)  # (ceil(d/2),) pair index
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        wavelength = base ** (2 * i / d)  # (ceil(d/2),) radians per position: 1 / wavelength
        angles = positions[:, None] / wavelength  # (T, 1) / (ceil(d/2),) -> (T, ceil(d/2))
    if not np.isfinite(angles).all():
        raise ValueError(
            f"the angles p / base**(2i/d) are not finite in float64 for base={base}, d={d} and positions up "
            f"to {np.abs(positions).max():.3g}; use a base nearer 10000 or smaller positions"
        )
    return angles


# --------------------------------------------------------------------------- position tables


def onehot_positions(T: int) -> np.ndarray:
    """The (T, T) identity as float64: position p is the one-hot row e_p."""
    T = check_int(T, "T", minimum=1)
    refuse_large(T * T, f"the (T, T) = ({T:,}, {T:,}) one-hot table", "T")
    return np.eye(T, dtype=np.float64)  # (T, T)


def learned_positions(T: int, d_model: int, rng: np.random.Generator) -> np.ndarray:
    """A random (T, d_model) table from N(0, 1/d_model), a stand-in for a learned one (rows of length ≈ 1)."""
    T = check_int(T, "T", minimum=1)
    d_model = check_int(d_model, "d_model", minimum=1)
    refuse_large(T * d_model, f"the (T, d_model) = ({T:,}, {d_model:,}) position table", "T or d_model")
    check_rng(rng)
    std = 1.0 / math.sqrt(d_model)  # each row's expected squared length is d_model * std² = 1
    return rng.normal(0.0, std, size=(T, d_model))  # (T, d_model)


def sinusoidal_positions(T: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """(T, d_model) float64: PE[p, j] = sin(p / base**(2(j//2)/d_model)) for even j, cos(...) for odd j."""
    T = check_int(T, "T", minimum=1)
    d_model = check_int(d_model, "d_model", minimum=1)
    refuse_large(T * d_model, f"the (T, d_model) = ({T:,}, {d_model:,}) position table", "T or d_model")
    base = _check_base(base)
    angles = _angles(np.arange(T, dtype=np.float64), d_model, base)  # (T, ceil(d_model/2))
    PE = np.empty((T, d_model), dtype=np.float64)  # (T, d_model)
    PE[:, 0::2] = np.sin(angles)  # (T, ceil(d_model/2)) into the even columns
    PE[:, 1::2] = np.cos(angles[:, : d_model // 2])  # (T, floor(d_model/2)) into the odd columns
    return PE


# --------------------------------------------------------------------------- rotary (RoPE)


def rotary(x: object, base: float = 10000.0, *, positions: object = None) -> np.ndarray:
    """Rotate each pair (x[..., 2i], x[..., 2i+1]) of the token at position p by the angle p / base**(2i/d)."""
    x = as_numeric(x, "x", min_ndim=2)
    base = _check_base(base)
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(
            f"x has shape {x.shape}: its last dimension d={d} must be even, because rotary rotates "
            "feature pairs (x[..., 2i], x[..., 2i+1])"
        )
    if positions is None:
        pos = np.arange(T, dtype=np.float64)  # (T,) token p sits at position p
    else:
        pos = _as_index_array(
            positions, "positions", T, x.shape, kinds="iuf", what="integers or real numbers"
        ).astype(np.float64)  # (T,)
        if not np.isfinite(pos).all():
            where = int(np.argwhere(~np.isfinite(pos))[0, 0])
            raise ValueError(f"positions contains {pos[where]} at index {where}; positions must be finite")
    angles = _angles(pos, d, base)  # (T, d/2)
    cos, sin = np.cos(angles), np.sin(angles)  # (T, d/2) each, broadcast over the leading dimensions
    work = x.astype(np.float64)  # (..., T, d) computed in float64, returned in x's dtype
    even, odd = work[..., 0::2], work[..., 1::2]  # (..., T, d/2) each
    out = np.empty_like(work)  # (..., T, d)
    with np.errstate(over="ignore", invalid="ignore"):
        out[..., 0::2] = even * cos - odd * sin  # (..., T, d/2) new_even
        out[..., 1::2] = even * sin + odd * cos  # (..., T, d/2) new_odd
        out = out.astype(x.dtype, copy=False)  # (..., T, d)
    if not np.isfinite(out).all():
        raise ValueError(
            f"rotating x (shape {x.shape}, largest |x| {np.abs(x).max():.3g}) overflows {x.dtype}: a rotated "
            f"pair can reach √2 times the larger entry; use smaller inputs or a wider float type"
        )
    return out


# --------------------------------------------------------------------------- shuffling


def permute_tokens(x: object, perm: object) -> np.ndarray:
    """x[..., perm, :] as float: token perm[t] moves to row t; perm must be a permutation of range(T)."""
    x = as_numeric(x, "x", min_ndim=2)
    T = x.shape[-2]
    perm = _as_index_array(perm, "perm", T, x.shape, kinds="iu", what="integers (token indices)")  # (T,)
    if not np.array_equal(np.sort(perm), np.arange(T)):
        missing = sorted(set(range(T)) - set(perm.tolist()))
        raise ValueError(
            f"perm must be a permutation of range({T}) (each token index of x, shape {x.shape}, exactly once), "
            f"got {perm.tolist()}; missing {missing}"
        )
    return x[..., perm, :]  # (..., T, d) rows reordered, a copy
