"""Two attention layers compose: the induction head, designed by hand and trained with NumPy.

Shape notation used throughout this module:

    B          batch size (sequences per training step)
    T          tokens per sequence, the start token included
    n_letters  letters A, B, C, ...: token ids 0 .. n_letters-1; the start token ``^`` has id n_letters
    d          width of the residual stream, (n_letters + 1) + T + n_letters + n_letters (``blocks``); the
               series' d (the width of X), not d_model (the output width of W_q)
    d_head     width of one query / key / value vector of a layer

The task (``make_batch``): a start token, then a segment of distinct random letters, repeated to the
end of the sequence, e.g. ``^ A F C E B A F C E B``. The segment's length (the *period*) varies from
sequence to sequence, so no head can find the copy by counting positions. Each position predicts the
next token: on the segment's first pass it cannot be known for sure; once the current letter has occurred
before, the next token is the one that followed it then.

The residual stream: position i carries one vector of d features in four blocks,

    token     one-hot of the token at i (n_letters + 1: the letters, then ^)
    position  one-hot of i (T)
    previous  empty (n_letters): layer 1 may write here
    output    empty (n_letters): layer 2 may write here

and every layer *adds* what it writes, x ← x + attention(x) W_o. The model, for tokens (B, T):

    x0 = encode(tokens)                                             (B, T, d)
    O1, P1 = attention(x0 W_q1, x0 W_k1, x0 W_v1, causal mask)      (B, T, d_head), (B, T, T)
    x1 = x0 + O1 W_o1                                               (B, T, d)
    O2, P2 = attention(x1 W_q2, x1 W_k2, x1 W_v2, causal mask)      (B, T, d_head), (B, T, T)
    x2 = x1 + O2 W_o2                                               (B, T, d)
    logits = x2 W_out                                               (B, T, n_letters)

The loss is the mean cross-entropy of logits[:, :-1] against the next tokens tokens[:, 1:] (the last
position has no next token). ``designed_params`` sets the nine weight matrices by hand: layer 1 a
previous-token head that writes the previous letter into the ``previous`` block, layer 2 an
induction head whose query is the current letter and whose key reads the ``previous`` block.

Gradients come from ``helpers.backward.attention_backward`` and the chain rule; the update is
``helpers.training.adam_step`` (the package's one Adam). ``train`` is not 07's loop (``helpers.training.train``)
with another model: it also records each step's loss on repeated and on first letters, and ``layer1=False``
holds W_o1 at zero; 07's loop is the one notebook 07 writes out by hand. The functions of the same names in
the two modules (``make_batch``, ``encode``, ``evaluate``, ``Snapshot``, ...) are each lesson's own task and
model. Randomness comes only from ``seed`` / ``rng`` arguments.

Every public function checks its arguments and raises ``TypeError`` (wrong kind of thing) or
``ValueError`` (right kind, wrong shape or value) with a message that names the argument and
the shapes it got.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from helpers.attention import causal_mask, scaled_dot_product_attention, xavier_normal
from helpers.backward import attention_backward
from helpers.numerics import log_softmax_unchecked
from helpers.training import adam_step
from helpers.validate import as_token_ids, check_flag, check_int, check_matrices, check_real, check_rng

__all__ = [
    "START",
    "PARAM_NAMES",
    "MAX_T",
    "MAX_LETTERS",
    "MAX_STEPS",
    "blocks",
    "labels",
    "default_periods",
    "make_batch",
    "repeated",
    "encode",
    "init_params",
    "designed_params",
    "Forward",
    "forward",
    "loss_and_grads",
    "per_position",
    "Results",
    "evaluate",
    "default_probe",
    "Snapshot",
    "TrainResult",
    "train",
]

START = "^"  # the label of the start token, id n_letters
PARAM_NAMES = ("W_q1", "W_k1", "W_v1", "W_o1", "W_q2", "W_k2", "W_v2", "W_o2", "W_out")
MAX_T = 64  # longest sequence, start token included
MAX_LETTERS = 26  # A .. Z
MAX_STEPS = 20_000  # training steps (about 1 ms each at the notebook's size)
MAX_BATCH = 4096  # sequences per batch
MAX_D_HEAD = 256
STRENGTH = 20.0  # the designed heads' scaled score on the key they want: weight 1 - O(T e^-10)


# --------------------------------------------------------------------------- checks


def _check_sizes(T: object, n_letters: object) -> tuple[int, int]:
    T = check_int(T, "T", minimum=3, maximum=MAX_T)
    n_letters = check_int(n_letters, "n_letters", minimum=2, maximum=MAX_LETTERS)
    return T, n_letters


def _check_tokens(tokens: object, n_letters: int, name: str = "tokens") -> np.ndarray:
    """``tokens`` as an int64 array (..., T): start token ``n_letters`` at position 0, letters after it."""
    arr = as_token_ids(tokens, name)
    if arr.ndim < 1 or arr.shape[-1] < 3 or arr.size == 0:
        raise ValueError(f"{name} must be an array (..., T) of token ids with T >= 3, got shape {arr.shape}")
    if arr.shape[-1] > MAX_T:
        raise ValueError(f"{name} has T = {arr.shape[-1]} tokens per sequence; at most {MAX_T}")
    if (arr[..., 0] != n_letters).any():
        raise ValueError(
            f"every sequence must start with the start token {START} (id {n_letters} = n_letters), "
            f"got first tokens {np.unique(arr[..., 0]).tolist()}; shape {arr.shape}"
        )
    body = arr[..., 1:]
    if (body < 0).any() or (body >= n_letters).any():
        where = tuple(int(i) for i in np.argwhere((body < 0) | (body >= n_letters))[0])
        where = (*where[:-1], where[-1] + 1)
        raise ValueError(
            f"{name}{list(where)} = {int(arr[where])} is not a letter id 0 .. {n_letters - 1} (n_letters={n_letters}); "
            f"only position 0 holds the start token; shape {arr.shape}"
        )
    return arr.astype(np.int64, copy=False)


def _shapes(T: int, n_letters: int) -> tuple[int, int]:
    return n_letters + 1 + T + 2 * n_letters, n_letters  # d, logits width


def _check_params(params: object, d_stream: int | None = None) -> dict[str, np.ndarray]:
    """Check the nine weight matrices fit each other (and the stream width d, if given)."""
    p = check_matrices(params, PARAM_NAMES)
    s = {n: W.shape for n, W in p.items()}
    d = s["W_out"][0] if d_stream is None else d_stream
    for layer in "12":
        q, k, v, o = (s[f"W_{x}{layer}"] for x in "qkvo")
        if q[0] != d or k[0] != d or v[0] != d or o[1] != d or q[1] != k[1] or o[0] != v[1]:
            raise ValueError(
                f"layer {layer}'s weight matrices do not fit the stream of d = {d} features: need "
                f"W_q{layer} (d, d_head), W_k{layer} (d, d_head), W_v{layer} (d, d_v), "
                f"W_o{layer} (d_v, d), got {q}, {k}, {v}, {o}"
            )
    if s["W_out"][0] != d:
        raise ValueError(f"W_out has shape {s['W_out']} but the stream has d = {d} features: need (d, n_letters)")
    return p


# --------------------------------------------------------------------------- the task


def blocks(T: int, n_letters: int) -> dict[str, slice]:
    """The four blocks of the residual stream's features: token, position, previous, output."""
    T, n_letters = _check_sizes(T, n_letters)
    a, b, c = n_letters + 1, n_letters + 1 + T, 2 * n_letters + 1 + T
    return {"token": slice(0, a), "position": slice(a, b), "previous": slice(b, c), "output": slice(c, c + n_letters)}


def labels(tokens: object, n_letters: int, *, positions: bool = False) -> list[str]:
    """One sequence's token ids as labels: letters A, B, ... and ^ for the start token; with
    ``positions=True`` each label carries its position (counted from 1) as a subscript: ^₁ A₂ F₃ ..."""
    n_letters = check_int(n_letters, "n_letters", minimum=2, maximum=MAX_LETTERS)
    tokens = _check_tokens(tokens, n_letters)
    if tokens.ndim != 1:
        raise ValueError(f"tokens must be one sequence (T,), got shape {tokens.shape}")
    positions = check_flag(positions, "positions")
    out = [START if t == n_letters else string.ascii_uppercase[t] for t in tokens]
    if positions:
        sub = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
        out = [f"{label}{str(i + 1).translate(sub)}" for i, label in enumerate(out)]
    return out


def default_periods(T: int, n_letters: int) -> tuple[int, int]:
    """(shortest, longest): the segment lengths make_batch draws from when given no ``periods``.

    longest is (T-1)//2, so that the segment fits twice into the T-1 letters after ^, capped at n_letters
    and raised to at least 2 (so for T < 5 the segment does not fit twice); shortest is 3 (2 when T < 7),
    and never more than longest (with 2 letters every segment has 2: (2, 2)), so the range is never empty.
    """
    T, n_letters = _check_sizes(T, n_letters)
    longest = max(2, min((T - 1) // 2, n_letters))
    return min(2 if T < 7 else 3, longest), longest


def _check_periods(periods: object, T: int, n_letters: int) -> tuple[int, int]:
    if periods is None:
        return default_periods(T, n_letters)
    if not (isinstance(periods, (tuple, list)) and len(periods) == 2):
        raise TypeError(f"periods must be a pair (shortest, longest) of segment lengths, got {periods!r}")
    lo = check_int(periods[0], "periods[0]", minimum=1)
    hi = check_int(periods[1], "periods[1]", minimum=lo)
    if hi > n_letters or hi > T - 2:
        raise ValueError(
            f"periods = {tuple(periods)}: a segment of {hi} distinct letters needs n_letters >= {hi} "
            f"(got {n_letters}) and must repeat at least once within T - 1 = {T - 1} letters"
        )
    return lo, hi


def make_batch(
    batch_size: int, T: int, n_letters: int, rng: np.random.Generator, periods: tuple[int, int] | None = None
) -> np.ndarray:
    """Token ids (B, T): ^, then a segment of distinct random letters repeated to the end; its length
    is drawn uniformly from ``periods`` (default ``default_periods``) for each sequence."""
    batch_size = check_int(batch_size, "batch_size", minimum=1, maximum=MAX_BATCH)
    T, n_letters = _check_sizes(T, n_letters)
    rng = check_rng(rng)
    lo, hi = _check_periods(periods, T, n_letters)
    lengths = rng.integers(lo, hi + 1, size=batch_size)  # (B,) one period per sequence
    order = np.argsort(rng.random((batch_size, n_letters)), axis=1)  # (B, n_letters) a random order of the letters
    where = np.arange(T - 1) % lengths[:, None]  # (B, T-1) index into the segment: 0, 1, .., L-1, 0, 1, ..
    body = np.take_along_axis(order, where, axis=1)  # (B, T-1) the segment's first L letters, repeated
    return np.concatenate([np.full((batch_size, 1), n_letters), body], axis=1)  # (B, T)


def repeated(tokens: object, n_letters: int) -> np.ndarray:
    """Boolean (..., T): True where the token at i occurred earlier in its sequence (an induction head can
    predict the next token there); False at first occurrences and at the start token."""
    n_letters = check_int(n_letters, "n_letters", minimum=2, maximum=MAX_LETTERS)
    tokens = _check_tokens(tokens, n_letters)
    same = tokens[..., :, None] == tokens[..., None, :]  # (..., T, T) token i equals token j
    earlier = np.tril(np.ones(same.shape[-2:], dtype=bool), k=-1)  # (T, T) j < i
    return (same & earlier).any(axis=-1)  # (..., T)


def encode(tokens: object, n_letters: int) -> np.ndarray:
    """The residual stream before layer 1, (..., T, d): [one-hot token | one-hot position | 0 | 0]."""
    n_letters = check_int(n_letters, "n_letters", minimum=2, maximum=MAX_LETTERS)
    tokens = _check_tokens(tokens, n_letters)
    T = tokens.shape[-1]
    tok = np.eye(n_letters + 1)[tokens]  # (..., T) -> (..., T, n_letters + 1)
    pos = np.broadcast_to(np.eye(T), (*tokens.shape, T))  # (..., T, T) row t is one-hot at t
    empty = np.zeros((*tokens.shape, 2 * n_letters))  # (..., T, 2 n_letters) the previous and output blocks
    return np.concatenate([tok, pos, empty], axis=-1)  # (..., T, d)


# --------------------------------------------------------------------------- the model


def init_params(T: int, n_letters: int, d_head: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nine Xavier-normal weight matrices: per layer W_q, W_k, W_v (d, d_head) and W_o (d_head,
    d); W_out (d, n_letters)."""
    T, n_letters = _check_sizes(T, n_letters)
    d_head = check_int(d_head, "d_head", minimum=1, maximum=MAX_D_HEAD)
    rng = check_rng(rng)
    d, n_out = _shapes(T, n_letters)
    params = {}
    for layer in "12":
        for x in "qkv":
            params[f"W_{x}{layer}"] = xavier_normal(d, d_head, rng)  # (d, d_head)
        params[f"W_o{layer}"] = xavier_normal(d_head, d, rng)  # (d_head, d)
    params["W_out"] = xavier_normal(d, n_out, rng)  # (d, n_letters)
    return params


def designed_params(T: int, n_letters: int, strength: float = STRENGTH) -> dict[str, np.ndarray]:
    """The induction circuit set by hand. Layer 1 (d_head = T): query i matches key i-1 (positions); its
    value copies the letter into the ``previous`` block. Layer 2 (d_head = n_letters + 1): the query is
    the current letter, the key the ``previous`` block, so query i attends to the position after an
    earlier occurrence of its letter; with no such position it attends to ^ (half the scaled score). Its value
    copies that letter into the ``output`` block, which W_out reads. ``strength``: the scaled score on
    the wanted key."""
    T, n_letters = _check_sizes(T, n_letters)
    strength = check_real(strength, "strength", low=0.0, high=1e3)
    d, _ = _shapes(T, n_letters)
    blk = blocks(T, n_letters)
    tok, pos, prev, out = (np.arange(d)[blk[k]] for k in ("token", "position", "previous", "output"))
    letters_ = tok[:n_letters]  # the letters' features; tok[n_letters] is ^
    eye = np.eye(n_letters)  # (n_letters, n_letters)

    c1 = strength * math.sqrt(T)  # undoes the scale 1/√d_head of layer 1 (d_head = T)
    W_q1 = np.zeros((d, T))
    W_q1[pos, :] = c1 * np.eye(T)  # (T, T) query of position i: c·e_i
    W_k1 = np.zeros((d, T))
    W_k1[pos[:-1], :] = np.eye(T)[1:]  # key of position j: e_(j+1), so query i matches key j = i - 1
    W_v1 = np.zeros((d, n_letters))
    W_v1[letters_, :] = eye  # value: the letter one-hot (^ has value 0)
    W_o1 = np.zeros((n_letters, d))
    W_o1[:, prev] = eye  # written into the previous block

    c2 = strength * math.sqrt(n_letters + 1)  # undoes the scale 1/√d_head of layer 2
    W_q2 = np.zeros((d, n_letters + 1))
    W_q2[letters_, :n_letters] = c2 * eye  # query: the current letter ...
    W_q2[letters_, n_letters] = c2 / 2  # ... and, at half strength, "the start token"
    W_k2 = np.zeros((d, n_letters + 1))
    W_k2[prev, :n_letters] = eye  # key: the previous letter (layer 1's write)
    W_k2[tok[n_letters], n_letters] = 1.0  # the start token answers the second question
    W_v2 = np.zeros((d, n_letters))
    W_v2[letters_, :] = eye  # value: the letter at the key's position
    W_o2 = np.zeros((n_letters, d))
    W_o2[:, out] = eye  # written into the output block
    W_out = np.zeros((d, n_letters))
    W_out[out, :] = strength * eye  # logits: the output block, times the strength
    return {"W_q1": W_q1, "W_k1": W_k1, "W_v1": W_v1, "W_o1": W_o1, "W_q2": W_q2, "W_k2": W_k2,
            "W_v2": W_v2, "W_o2": W_o2, "W_out": W_out}


class Forward(NamedTuple):
    """Everything the two-layer forward pass computes; B and T as given, one batch axis or none."""

    logits: np.ndarray  # (..., T, n_letters) the prediction of the NEXT token at each position
    weights1: np.ndarray  # (..., T, T) layer 1's attention weights
    weights2: np.ndarray  # (..., T, T) layer 2's attention weights
    x0: np.ndarray  # (..., T, d) the residual stream before layer 1
    x1: np.ndarray  # (..., T, d) after layer 1 wrote into it
    x2: np.ndarray  # (..., T, d) after layer 2 wrote into it


def _forward(p: dict[str, np.ndarray], x0: np.ndarray) -> dict[str, np.ndarray]:
    mask = causal_mask(x0.shape[-2])  # (T, T) query i sees keys 0 .. i
    c = {"x0": x0, "mask": mask}
    x = x0
    for layer in "12":
        Q = x @ p[f"W_q{layer}"]  # (B, T, d) @ (d, d_head) -> (B, T, d_head)
        K = x @ p[f"W_k{layer}"]  # (B, T, d_head)
        V = x @ p[f"W_v{layer}"]  # (B, T, d_v)
        O, P = scaled_dot_product_attention(Q, K, V, mask=mask)  # (B, T, d_v), (B, T, T)
        x = x + O @ p[f"W_o{layer}"]  # (B, T, d_v) @ (d_v, d) -> (B, T, d): the layer adds
        c.update({f"Q{layer}": Q, f"K{layer}": K, f"V{layer}": V, f"O{layer}": O, f"P{layer}": P, f"x{layer}": x})
    c["logits"] = x @ p["W_out"]  # (B, T, d) @ (d, n_letters) -> (B, T, n_letters)
    return c


def _stream(params: object, tokens: object, n_letters: int | None) -> tuple[dict, np.ndarray, np.ndarray]:
    """(checked params, checked tokens, x0) with n_letters taken from W_out when not given."""
    if not isinstance(params, dict) or "W_out" not in params:
        _check_params(params)  # raises with the right message
    n = np.shape(params["W_out"])[-1] if n_letters is None else n_letters
    tokens = _check_tokens(tokens, n)
    x0 = encode(tokens, n)  # (..., T, d)
    made_for = np.shape(params["W_out"])[0]
    if np.ndim(params["W_out"]) == 2 and made_for != x0.shape[-1]:
        raise ValueError(
            f"tokens has T = {tokens.shape[-1]} positions, so the stream has d = {x0.shape[-1]} features, "
            f"but the parameters (W_out {np.shape(params['W_out'])}) were made for d = {made_for} "
            f"(T = {made_for - 3 * n - 1} with {n} letters)"
        )
    return _check_params(params, x0.shape[-1]), tokens, x0


def forward(params: dict[str, np.ndarray], tokens: object) -> Forward:
    """The two layers on token ids (..., T): logits, both layers' attention weights, the stream after each."""
    p, _, x0 = _stream(params, tokens, None)
    c = _forward(p, x0)
    return Forward(c["logits"], c["P1"], c["P2"], c["x0"], c["x1"], c["x2"])


def _position_losses(logits: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """−log p(next token) at positions 0 .. T-2, shape (..., T-1)."""
    logp = log_softmax_unchecked(logits[..., :-1, :])  # (..., T-1, n_letters)
    return -np.take_along_axis(logp, tokens[..., 1:, None], axis=-1)[..., 0]  # (..., T-1)


def _loss_and_grads(p: dict[str, np.ndarray], tokens: np.ndarray, x0: np.ndarray) -> tuple[np.ndarray, dict, dict]:
    """(per-position losses (B, T-1), gradients of their mean, the forward cache)."""
    c = _forward(p, x0)
    losses = _position_losses(c["logits"], tokens)  # (B, T-1)
    n_out = c["logits"].shape[-1]
    probs = np.exp(log_softmax_unchecked(c["logits"]))  # (B, T, n_letters)
    dlogits = probs  # (B, T, n_letters) d loss / d logits = (probs - onehot(next)) / n
    dlogits[..., -1, :] = 0.0  # the last position has no next token: no loss there
    dlogits[..., :-1, :] -= np.eye(n_out)[tokens[..., 1:]]  # (B, T-1, n_letters)
    dlogits /= losses.size  # the loss is a mean over every predicted position
    d = x0.shape[-1]
    flat = lambda a: a.reshape(-1, a.shape[-1])  # noqa: E731  (B, T, n) -> (B·T, n): the chain rule sums over the batch
    grads = {"W_out": flat(c["x2"]).T @ flat(dlogits)}  # (d, B·T) @ (B·T, n_letters)
    dx = dlogits @ p["W_out"].T  # (B, T, n_letters) @ (n_letters, d) -> (B, T, d) d loss / d x2
    for layer, x_in in (("2", c["x1"]), ("1", c["x0"])):
        grads[f"W_o{layer}"] = flat(c[f"O{layer}"]).T @ flat(dx)  # (d_v, B·T) @ (B·T, d)
        dO = dx @ p[f"W_o{layer}"].T  # (B, T, d) @ (d, d_v) -> (B, T, d_v)
        dQ, dK, dV = attention_backward(c[f"Q{layer}"], c[f"K{layer}"], c[f"V{layer}"], dO, mask=c["mask"])
        for name, dA in (("q", dQ), ("k", dK), ("v", dV)):
            grads[f"W_{name}{layer}"] = flat(x_in).T @ flat(dA)  # (d, B·T) @ (B·T, d_head)
        # the residual connection passes dx through unchanged; the layer's Q, K, V add their share
        dx = dx + dQ @ p[f"W_q{layer}"].T + dK @ p[f"W_k{layer}"].T + dV @ p[f"W_v{layer}"].T  # (B, T, d)
    assert dx.shape[-1] == d
    return losses, {n: grads[n] for n in PARAM_NAMES}, c


def loss_and_grads(params: dict[str, np.ndarray], tokens: object) -> tuple[float, dict[str, np.ndarray]]:
    """The mean next-token cross-entropy over positions 0 .. T-2 and its gradient for each weight matrix."""
    p, tokens, x0 = _stream(params, tokens, None)
    losses, grads, _ = _loss_and_grads(p, tokens, x0)
    return float(losses.mean()), grads


def per_position(params: dict[str, np.ndarray], tokens: object) -> tuple[np.ndarray, np.ndarray]:
    """(loss, accuracy) at each position 0 .. T-2 for predicting the next token, averaged over the batch:
    two arrays (T-1,). Tokens (T,) or (B, T)."""
    p, tokens, x0 = _stream(params, tokens, None)
    logits = _forward(p, x0)["logits"]  # (..., T, n_letters)
    losses = _position_losses(logits, tokens)  # (..., T-1)
    right = logits[..., :-1, :].argmax(axis=-1) == tokens[..., 1:]  # (..., T-1)
    axes = tuple(range(losses.ndim - 1))
    return losses.mean(axis=axes), right.mean(axis=axes, dtype=np.float64)


class Results(NamedTuple):
    """Loss and accuracy of the next-token prediction, split by whether the current letter occurred before
    (called results, not scores: in this series scores are QKᵀ)."""

    loss_first: float  # first occurrences (and ^): the next token cannot be known for sure
    loss_repeat: float  # repeated letters: an induction head can predict the next token
    accuracy_first: float
    accuracy_repeat: float


def _results(losses: np.ndarray, logits: np.ndarray, tokens: np.ndarray, rep: np.ndarray) -> Results:
    right = logits[..., :-1, :].argmax(axis=-1) == tokens[..., 1:]  # (B, T-1)
    first = ~rep  # (B, T-1)
    return Results(float(losses[first].mean()), float(losses[rep].mean()),
                  float(right[first].mean()), float(right[rep].mean()))


def evaluate(params: dict[str, np.ndarray], tokens: object) -> Results:
    """Results on token ids (B, T): loss and accuracy at first occurrences and at repeated letters."""
    p, tokens, x0 = _stream(params, tokens, None)
    n_letters = p["W_out"].shape[1]
    logits = _forward(p, x0)["logits"]  # (B, T, n_letters)
    rep = repeated(tokens, n_letters)[..., :-1]  # (B, T-1) positions whose next token is predictable
    if rep.all() or not rep.any():
        raise ValueError("tokens must hold both first occurrences and repeated letters (use make_batch)")
    return _results(_position_losses(logits, tokens), logits, tokens, rep)


# --------------------------------------------------------------------------- training


def default_probe(T: int, n_letters: int) -> np.ndarray:
    """The probe sequence ^ A F C E A F C E ...: a segment of letters in a fixed shuffled order, one letter
    shorter than the longest period (so its first pass gives no hint where it ends), repeated to fill T
    tokens; shape (T,)."""
    T, n_letters = _check_sizes(T, n_letters)
    lo, hi = default_periods(T, n_letters)
    L = max(lo, hi - 1)
    order = [0, 5, 2, 4, 1, 3, 6, 7] if n_letters >= 8 else list(range(n_letters))  # A F C E B D G H
    segment = (order + [k for k in range(n_letters) if k not in order])[:L]
    body = np.resize(np.asarray(segment), T - 1)  # (T-1,) the segment repeated
    return np.concatenate([[n_letters], body]).astype(np.int64)  # (T,)


class Snapshot(NamedTuple):
    """The state after ``step`` updates: the probe's attention weights and per-position loss, test results."""

    step: int
    weights1: np.ndarray  # (T, T) layer 1 on the probe
    weights2: np.ndarray  # (T, T) layer 2 on the probe
    probe_loss: np.ndarray  # (T-1,) the probe's loss at each position
    results: Results  # on the n_eval test sequences (eval_tokens)


@dataclass(frozen=True)
class TrainResult:
    """What train returns: per-step training losses, snapshots on the probe, the final parameters."""

    losses: np.ndarray  # (steps,) mean training loss of each step's batch, before that step's update
    losses_repeat: np.ndarray  # (steps,) the same, on repeated letters only
    losses_first: np.ndarray  # (steps,) the same, on first occurrences only
    snapshots: list[Snapshot]  # step 0, every snapshot_every steps, and the last step
    params: dict[str, np.ndarray]  # the final nine weight matrices
    probe: np.ndarray  # (T,) the probe sequence
    eval_tokens: np.ndarray  # (n_eval, T) the test sequences behind each snapshot's results
    config: dict  # train's arguments

    @property
    def steps(self) -> np.ndarray:
        """The step of each snapshot, (n_snapshots,)."""
        return np.array([s.step for s in self.snapshots])

    @property
    def loss_repeat(self) -> np.ndarray:
        """Test loss on repeated letters at each snapshot, (n_snapshots,)."""
        return np.array([s.results.loss_repeat for s in self.snapshots])

    @property
    def accuracy_repeat(self) -> np.ndarray:
        """Test accuracy on repeated letters at each snapshot, (n_snapshots,)."""
        return np.array([s.results.accuracy_repeat for s in self.snapshots])


def train(
    steps: int = 600,
    seed: int = 0,
    lr: float = 0.01,
    *,
    batch_size: int = 32,
    T: int = 11,
    n_letters: int = 8,
    d_head: int = 8,
    periods: tuple[int, int] | None = None,
    snapshot_every: int = 10,
    n_eval: int = 256,
    layer1: bool = True,
) -> TrainResult:
    """Train the two layers on the repeated-segment task with Adam; seeded and deterministic.
    ``layer1=False`` holds W_o1 at zero, so layer 1 writes nothing: layer 2 learns alone."""
    steps = check_int(steps, "steps", minimum=1, maximum=MAX_STEPS)
    seed = check_int(seed, "seed", minimum=0)
    lr = check_real(lr, "lr", low=0.0, high=10.0)
    batch_size = check_int(batch_size, "batch_size", minimum=1, maximum=MAX_BATCH)
    T, n_letters = _check_sizes(T, n_letters)
    d_head = check_int(d_head, "d_head", minimum=1, maximum=MAX_D_HEAD)
    periods = _check_periods(periods, T, n_letters)
    snapshot_every = check_int(snapshot_every, "snapshot_every", minimum=1)
    n_eval = check_int(n_eval, "n_eval", minimum=2, maximum=MAX_BATCH)
    layer1 = check_flag(layer1, "layer1")  # True: two layers; False: layer 1 writes nothing
    config = {"steps": steps, "seed": seed, "lr": lr, "batch_size": batch_size, "T": T, "n_letters": n_letters,
              "d_head": d_head, "periods": periods, "snapshot_every": snapshot_every, "n_eval": n_eval,
              "layer1": bool(layer1)}

    init_rng, data_rng, eval_rng = np.random.default_rng(seed).spawn(3)  # independent streams
    params = init_params(T, n_letters, d_head, init_rng)
    if not layer1:
        params["W_o1"] = np.zeros_like(params["W_o1"])  # (d_head, d) layer 1 writes nothing
    eval_tokens = make_batch(n_eval, T, n_letters, eval_rng, periods)  # (n_eval, T)
    eval_x0 = encode(eval_tokens, n_letters)  # (n_eval, T, d)
    eval_rep = repeated(eval_tokens, n_letters)[:, :-1]  # (n_eval, T-1)
    probe = default_probe(T, n_letters)  # (T,)
    probe_x0 = encode(probe, n_letters)[None]  # (1, T, d)

    def snapshot(step: int) -> Snapshot:
        c = _forward(params, eval_x0)
        results = _results(_position_losses(c["logits"], eval_tokens), c["logits"], eval_tokens, eval_rep)
        cp = _forward(params, probe_x0)
        return Snapshot(step, cp["P1"][0], cp["P2"][0], _position_losses(cp["logits"], probe[None])[0], results)

    snapshots = [snapshot(0)]
    losses, losses_repeat, losses_first = np.empty(steps), np.empty(steps), np.empty(steps)  # (steps,) each
    state = None
    for step in range(1, steps + 1):
        tokens = make_batch(batch_size, T, n_letters, data_rng, periods)  # (B, T)
        rep = repeated(tokens, n_letters)[:, :-1]  # (B, T-1)
        per_pos, grads, _ = _loss_and_grads(params, tokens, encode(tokens, n_letters))  # (B, T-1), dW
        losses[step - 1] = per_pos.mean()
        losses_repeat[step - 1], losses_first[step - 1] = per_pos[rep].mean(), per_pos[~rep].mean()
        if not layer1:
            grads["W_o1"] = np.zeros_like(grads["W_o1"])  # Adam then never moves it: m = v = 0, step 0
        params, state = adam_step(params, grads, state, lr)
        if step % snapshot_every == 0 or step == steps:
            snapshots.append(snapshot(step))
    return TrainResult(losses, losses_repeat, losses_first, snapshots, params, probe, eval_tokens, config)
