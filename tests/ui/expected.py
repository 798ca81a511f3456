"""What helpers.attention computes for an explorer's state (the JSON of its readout's data-state).

``expected(state)`` maps the explorer kind (see ``helpers/explorers.py``) to helper calls and returns
``Expected``: the weights and output the data-state must hold, and the matrices of the readout's
tables in the order the page shows them. The browser tests compare the page's visible 4-decimal
tables with ``as_4_decimals`` of these. A kind missing here fails the test with a message naming it,
so a new explorer cannot go unchecked.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

import helpers.attention as att


class Expected(NamedTuple):
    weights: np.ndarray
    output: np.ndarray | None
    tables: list[np.ndarray]  # every readout table, in page order


def number_array(x: object) -> np.ndarray:
    """A data-state value as a float array; the strings "nan", "inf", "-inf" become those floats."""
    if isinstance(x, str):
        return np.asarray(float(x))
    if isinstance(x, list):
        return np.asarray([number_array(v) for v in x], dtype=float)
    return np.asarray(x, dtype=float)


def _get(inputs: dict, name: str, kind: str) -> np.ndarray:
    if name not in inputs:
        raise KeyError(f"data-state of a {kind!r} explorer has no input {name!r}; it has {sorted(inputs)}")
    return number_array(inputs[name])


def _no_weights(inp: dict) -> Expected:
    X = _get(inp, "X", "no-weights")  # (T, d)
    out, w = att.self_attention(X, scale=float(inp["scale"]))  # (T, d), (T, T)
    return Expected(w, out, [w, out])


def _qkv(inp: dict) -> Expected:
    X, W_q, W_k, W_v = (_get(inp, n, "qkv") for n in ("X", "W_q", "W_k", "W_v"))
    out, w = att.single_head_attention(X, W_q, W_k, W_v, scale=float(inp["scale"]))  # (T, d_v), (T, T)
    return Expected(w, out, [w, out])


def _scaling(inp: dict) -> Expected:
    Q, K = _get(inp, "Q", "scaling"), _get(inp, "K", "scaling")  # (T, d_k) each
    assert Q.shape[1] == int(inp["d_k"]), f"Q has shape {Q.shape} but d_k is {inp['d_k']}"
    V = np.zeros((K.shape[0], 1))  # (T, 1) only the weights are shown
    _, scaled = att.scaled_dot_product_attention(Q, K, V)  # (T, T) scale 1/sqrt(d_k)
    _, unscaled = att.scaled_dot_product_attention(Q, K, V, scale=1.0)  # (T, T)
    return Expected(scaled, None, [scaled, unscaled])


_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


def _overflow(inp: dict) -> Expected:
    pattern = _get(inp, "pattern", "overflow")  # (T, T)
    scores = (pattern * 10.0 ** float(inp["magnitude"])).astype(
        _DTYPES[inp["dtype"]]
    )  # (T, T) in that float type
    np.testing.assert_array_equal(
        number_array(inp["scores"]),
        scores.astype(float),
        err_msg="data-state scores != pattern * 10**magnitude",
    )
    stable = att.softmax(scores)  # (T, T)
    with np.errstate(all="ignore"):
        naive = att.naive_softmax(scores)  # (T, T) may hold nan
    return Expected(stable, None, [stable, naive, scores])


def _multihead(inp: dict) -> Expected:
    X, W_q, W_k, W_v = (_get(inp, n, "multihead") for n in ("X", "W_q", "W_k", "W_v"))
    out, w = att.multi_head_attention(X, W_q, W_k, W_v, int(inp["n_heads"]))  # (T, d_model), (h, T, T)
    return Expected(w, out, [*w, out])


def _softmax_row(inp: dict) -> Expected:
    w = np.atleast_2d(att.softmax(_get(inp, "scores", "widget-check")))  # (1, T)
    return Expected(w, None, [w])


KINDS: dict[str, Callable[[dict], Expected]] = {
    "no-weights": _no_weights,
    "qkv": _qkv,
    "scaling": _scaling,
    "overflow": _overflow,
    "multihead": _multihead,
    "widget-check": _softmax_row,
}


def expected(state: dict) -> Expected:
    """What helpers.attention gives for ``state["inputs"]`` of an explorer of ``state["kind"]``."""
    kind = state.get("kind")
    if kind not in KINDS:
        raise KeyError(
            f"no helper call known for explorer kind {kind!r} (known: {sorted(KINDS)}); add it to {__file__}"
        )
    return KINDS[kind](state.get("inputs", {}))


def _cell(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.4f}"


def as_4_decimals(matrix: np.ndarray) -> list[str]:
    """A matrix as the readout shows it: row by row, 4 decimals, nan / inf / -inf spelled out."""
    return [_cell(float(v)) for v in np.asarray(matrix, dtype=np.float64).ravel()]
