"""Train one self-attention layer with plain NumPy on toy tasks whose right attention pattern is known.

Shape notation used throughout this module:

    B        batch size (sequences per training step)
    T        tokens per sequence
    n_vocab  number of different tokens; token ids are 0 .. n_vocab-1, shown as letters A, B, C, ...
    d_in     features per input token, n_vocab + T: [one-hot token | one-hot position]
    d_k      width of one query / key vector
    d_v      width of one value vector

The model, for X (B, T, d_in):

    Q = X W_q, K = X W_k, V = X W_v                  (B, T, d_k), (B, T, d_k), (B, T, d_v)
    out, weights = attention(Q, K, V)                (B, T, d_v), (B, T, T)   scale 1/√d_k
    logits = out W_out                               (B, T, n_vocab)
    loss = mean cross-entropy of logits against the target tokens

There is no residual connection: position i can only predict from what it attends to, so the
task forces the attention weights into the task's pattern. The tasks (``TASKS``):

    reverse   the output at position i is the input token at position T-1-i (anti-diagonal)
    previous  the output at position i is the input token at position i-1; position 0 has no
              previous token and outputs its own token (the first sub-diagonal, plus (0, 0))

Gradients come from ``helpers.backward.attention_backward`` and the chain rule; the update is
Adam (``adam_step``, the package's one Adam: 11's toy and ``make model`` call it too). ``train`` is the loop
notebook 07 writes out line by line and checks bit for bit; 11's (``helpers.induction.train``) and
``make model``'s (``helpers.lm_train.train``) are their own, because they do more than run another model: 11's
records the loss on repeated and first letters and can hold layer 1 silent, ``make model``'s warms the learning
rate up and keeps the best parameters. Randomness comes only from ``seed`` / ``rng`` arguments.

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

from helpers.attention import scaled_dot_product_attention, softmax, xavier_normal
from helpers.backward import attention_backward
from helpers.numerics import log_softmax_unchecked
from helpers.validate import (
    as_numeric,
    as_token_ids,
    check_int,
    check_matrices,
    check_real,
    check_rng,
    refuse_large,
)

__all__ = [
    "TASKS",
    "PARAM_NAMES",
    "letters",
    "targets_for",
    "target_pattern",
    "make_batch",
    "encode",
    "init_params",
    "forward",
    "cross_entropy",
    "loss_and_grads",
    "adam_step",
    "evaluate",
    "default_probe",
    "Snapshot",
    "TrainResult",
    "train",
]

TASKS = {
    "reverse": "output i is the input token at position T-1-i",
    "previous": "output i is the input token at position i-1; position 0 outputs its own token",
}
PARAM_NAMES = ("W_q", "W_k", "W_v", "W_out")

# train runs in the kernel and blocks it: about a millisecond per step at the default sizes, so 10,000 steps
# take seconds, 10**7 would take hours. Notebook 07 trains 300 steps per task.
MAX_STEPS = 10_000


# --------------------------------------------------------------------------- checks


def _check_task(task: object) -> str:
    if not isinstance(task, str):
        raise TypeError(f"task must be a task name (a string), one of {sorted(TASKS)}, got {task!r}")
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; the known tasks are {sorted(TASKS)}")
    return task


def _duration(seconds: float) -> str:
    """A rough duration in words: '3 hours'."""
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}"
    return f"{seconds:,.0f} seconds"


def _check_tokens(tokens: object, name: str, n_vocab: int | None = None) -> np.ndarray:
    """Return ``tokens`` as an int64 array (..., T) of token ids 0 .. n_vocab-1."""
    arr = as_token_ids(tokens, name)
    if arr.ndim < 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array (..., T) of token ids, got shape {arr.shape}")
    if (arr < 0).any() or (n_vocab is not None and (arr >= n_vocab).any()):
        bad = (arr < 0) if (arr < 0).any() else (arr >= n_vocab)
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        limit = "" if n_vocab is None else f" .. {n_vocab - 1} (n_vocab={n_vocab})"
        raise ValueError(f"{name}{list(where)} = {int(arr[where])} is not a token id 0{limit}; shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


def _check_params(params: object, d_in: int | None = None) -> dict[str, np.ndarray]:
    """Check the four weight matrices fit each other (and X's width d_in, if given)."""
    p = check_matrices(params, PARAM_NAMES)
    shapes = {n: W.shape for n, W in p.items()}
    rows = {shapes["W_q"][0], shapes["W_k"][0], shapes["W_v"][0]}
    if len(rows) != 1 or shapes["W_q"][1] != shapes["W_k"][1] or shapes["W_out"][0] != shapes["W_v"][1]:
        raise ValueError(
            "the weight matrices do not fit together: need W_q (d_in, d_k), W_k (d_in, d_k), W_v (d_in, d_v), "
            f"W_out (d_v, n_vocab), got {shapes}"
        )
    if d_in is not None and shapes["W_q"][0] != d_in:
        raise ValueError(
            f"X has {d_in} features but W_q, W_k, W_v have {shapes['W_q'][0]} rows ({shapes}); "
            "X must be encode(tokens, n_vocab) with the n_vocab and T the parameters were made for"
        )
    return p


# --------------------------------------------------------------------------- tasks and data


def letters(tokens: object) -> list[str]:
    """Token ids as letters, 0 -> 'A', 1 -> 'B', ... (for axis labels); tokens must be 1-D."""
    tokens = _check_tokens(tokens, "tokens", n_vocab=26)
    if tokens.ndim != 1:
        raise ValueError(f"tokens must be one sequence (T,), got shape {tokens.shape}")
    return [string.ascii_uppercase[t] for t in tokens]


def targets_for(task: str, tokens: object) -> np.ndarray:
    """The right output tokens (..., T) for input tokens (..., T) under ``task`` (see TASKS)."""
    task = _check_task(task)
    tokens = _check_tokens(tokens, "tokens")
    if task == "reverse":
        return tokens[..., ::-1].copy()  # (..., T) position i gets token T-1-i
    return np.concatenate([tokens[..., :1], tokens[..., :-1]], axis=-1)  # (..., T) position i gets token i-1


def target_pattern(task: str, T: int) -> np.ndarray:
    """The attention weights (T, T) that solve ``task``: 1 where query i must look, 0 elsewhere."""
    task = _check_task(task)
    T = check_int(T, "T", minimum=2)
    refuse_large(T * T, f"the ({T:,}, {T:,}) pattern", "T")
    source = targets_for(task, np.arange(T))  # (T,) the position each output copies from
    return np.eye(T)[source]  # (T, T) row i is one-hot at source[i]


def make_batch(
    task: str, batch_size: int, T: int, n_vocab: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, targets), each (B, T): uniformly random token ids and the task's right outputs."""
    task = _check_task(task)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    T = check_int(T, "T", minimum=2)
    n_vocab = check_int(n_vocab, "n_vocab", minimum=2)
    rng = check_rng(rng)
    refuse_large(batch_size * T, f"the ({batch_size:,}, {T:,}) batch of token ids", "batch_size or T")
    tokens = rng.integers(0, n_vocab, size=(batch_size, T))  # (B, T)
    return tokens, targets_for(task, tokens)


def encode(tokens: object, n_vocab: int) -> np.ndarray:
    """X = [one-hot token | one-hot position] (..., T, n_vocab + T) for token ids (..., T)."""
    n_vocab = check_int(n_vocab, "n_vocab", minimum=2)
    tokens = _check_tokens(tokens, "tokens", n_vocab)
    T = tokens.shape[-1]
    refuse_large(max(tokens.size * (n_vocab + T), n_vocab * n_vocab),
                  f"X of shape {(*tokens.shape, n_vocab + T)} (or the one-hot table, n_vocab = {n_vocab:,})",
                  "n_vocab or the number of tokens")
    tok = np.eye(n_vocab)[tokens]  # (..., T) -> (..., T, n_vocab)
    pos = np.broadcast_to(np.eye(T), (*tokens.shape, T))  # (..., T, T) row t is one-hot at t
    return np.concatenate([tok, pos], axis=-1)  # (..., T, n_vocab + T)


# --------------------------------------------------------------------------- the model


def init_params(T: int, n_vocab: int, d_k: int, d_v: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """W_q, W_k (d_in, d_k), W_v (d_in, d_v), W_out (d_v, n_vocab), Xavier-normal, d_in = n_vocab + T."""
    T = check_int(T, "T", minimum=2)
    n_vocab = check_int(n_vocab, "n_vocab", minimum=2)
    d_k = check_int(d_k, "d_k", minimum=1)
    d_v = check_int(d_v, "d_v", minimum=1)
    rng = check_rng(rng)
    d_in = n_vocab + T
    refuse_large(max(d_in * max(d_k, d_v), d_v * n_vocab),
                  f"the weight matrices for d_in = n_vocab + T = {d_in:,}, d_k = {d_k:,}, d_v = {d_v:,}",
                  "T, n_vocab, d_k or d_v")
    return {
        "W_q": xavier_normal(d_in, d_k, rng),  # (d_in, d_k)
        "W_k": xavier_normal(d_in, d_k, rng),  # (d_in, d_k)
        "W_v": xavier_normal(d_in, d_v, rng),  # (d_in, d_v)
        "W_out": xavier_normal(d_v, n_vocab, rng),  # (d_v, n_vocab)
    }


def _forward(p: dict[str, np.ndarray], X: np.ndarray) -> dict[str, np.ndarray]:
    Q = X @ p["W_q"]  # (B, T, d_in) @ (d_in, d_k) -> (B, T, d_k)
    K = X @ p["W_k"]  # (B, T, d_in) @ (d_in, d_k) -> (B, T, d_k)
    V = X @ p["W_v"]  # (B, T, d_in) @ (d_in, d_v) -> (B, T, d_v)
    out, weights = scaled_dot_product_attention(Q, K, V)  # (B, T, d_v), (B, T, T)
    logits = out @ p["W_out"]  # (B, T, d_v) @ (d_v, n_vocab) -> (B, T, n_vocab)
    return {"Q": Q, "K": K, "V": V, "out": out, "weights": weights, "logits": logits}


def forward(params: dict[str, np.ndarray], X: object) -> tuple[np.ndarray, np.ndarray]:
    """(logits (..., T, n_vocab), attention weights (..., T, T)) of the layer for X (..., T, d_in)."""
    X = as_numeric(X, "X", min_ndim=2)
    p = _check_params(params, X.shape[-1])
    cache = _forward(p, X)
    return cache["logits"], cache["weights"]


def _check_targets(targets: object, logits_shape: tuple) -> np.ndarray:
    targets = _check_tokens(targets, "targets", n_vocab=logits_shape[-1])
    if targets.shape != logits_shape[:-1]:
        raise ValueError(
            f"targets has shape {targets.shape} but the logits have shape {logits_shape} (..., T, n_vocab); "
            f"targets needs shape {logits_shape[:-1]}"
        )
    return targets


def cross_entropy(logits: object, targets: object) -> float:
    """Mean over all positions of −log softmax(logits)[target]; logits (..., T, n_vocab), targets (..., T)."""
    logits = as_numeric(logits, "logits", min_ndim=2)
    targets = _check_targets(targets, logits.shape)
    logp = log_softmax_unchecked(logits)  # (..., T, n_vocab)
    picked = np.take_along_axis(logp, targets[..., None], axis=-1)  # (..., T, 1)
    return float(-picked.mean())


def loss_and_grads(
    params: dict[str, np.ndarray], X: object, targets: object
) -> tuple[float, dict[str, np.ndarray]]:
    """The mean cross-entropy loss and its gradient with respect to each weight matrix (same shapes)."""
    X = as_numeric(X, "X", min_ndim=2)
    p = _check_params(params, X.shape[-1])
    c = _forward(p, X)
    targets = _check_targets(targets, c["logits"].shape)
    loss = cross_entropy(c["logits"], targets)
    n = targets.size  # the loss is a mean over every position of every sequence
    d_in, d_k, d_v = X.shape[-1], p["W_q"].shape[1], p["W_v"].shape[1]
    n_vocab = c["logits"].shape[-1]
    probs = softmax(c["logits"])  # (B, T, n_vocab) predicted probabilities
    dlogits = (probs - np.eye(n_vocab)[targets]) / n  # (B, T, n_vocab) d loss / d logits
    dW_out = c["out"].reshape(-1, d_v).T @ dlogits.reshape(-1, n_vocab)  # (d_v, B·T) @ (B·T, n_vocab)
    dout = dlogits @ p["W_out"].T  # (B, T, n_vocab) @ (n_vocab, d_v) -> (B, T, d_v)
    dQ, dK, dV = attention_backward(c["Q"], c["K"], c["V"], dout)  # (B, T, d_k), (B, T, d_k), (B, T, d_v)
    Xf = X.reshape(-1, d_in)  # (B, T, d_in) -> (B·T, d_in): the chain rule sums over the batch
    grads = {
        "W_q": Xf.T @ dQ.reshape(-1, d_k),  # (d_in, B·T) @ (B·T, d_k) -> (d_in, d_k)
        "W_k": Xf.T @ dK.reshape(-1, d_k),  # (d_in, B·T) @ (B·T, d_k) -> (d_in, d_k)
        "W_v": Xf.T @ dV.reshape(-1, d_v),  # (d_in, B·T) @ (B·T, d_v) -> (d_in, d_v)
        "W_out": dW_out,  # (d_v, n_vocab)
    }
    return loss, grads


def _float_type(W: object) -> np.dtype:
    dtype = np.asarray(W).dtype
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def adam_step(
    params: dict[str, np.ndarray],
    grads: dict[str, np.ndarray],
    state: dict | None,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    *,
    eps_on_raw: bool = False,
) -> tuple[dict[str, np.ndarray], dict]:
    """One Adam update; returns (new params, new state). state=None starts from zero moments at t=0.

    The one Adam of the package: 07's and 11's toys and ``make model`` (helpers.lm_train) all call it. The
    moments and the new parameters keep each parameter's float type (float64 for integer ones).
    ``eps_on_raw=True`` adds eps to √v instead of √v̂, i.e. W − lr·√(1 − β₂ᵗ)/(1 − β₁ᵗ) · m/(√v + eps): Kingma
    and Ba's "more efficient" order (section 2 of the paper), which ``make model`` trains with; it differs from
    the default only while eps is not small against √v."""
    if not isinstance(params, dict) or not isinstance(grads, dict):
        raise TypeError(
            f"params and grads must be dicts of arrays, got {type(params).__name__} and {type(grads).__name__}"
        )
    if set(params) != set(grads):
        raise ValueError(f"grads has keys {sorted(grads)} but params has keys {sorted(params)}; they must match")
    for name in params:
        if np.shape(grads[name]) != np.shape(params[name]):
            raise ValueError(
                f"grads[{name!r}] has shape {np.shape(grads[name])} but params[{name!r}] has shape "
                f"{np.shape(params[name])}; a gradient has its parameter's shape"
            )
    lr = check_real(lr, "lr", low=0.0)
    beta1 = check_real(beta1, "beta1", low=0.0, high=1.0, low_open=False)
    beta2 = check_real(beta2, "beta2", low=0.0, high=1.0, low_open=False)
    eps = check_real(eps, "eps", low=0.0)
    if state is None:
        zeros = {n: np.zeros(np.shape(W), _float_type(W)) for n, W in params.items()}  # each W's shape and float type
        state = {"t": 0, "m": zeros, "v": zeros}
    elif not (isinstance(state, dict) and {"t", "m", "v"} <= set(state)):
        raise TypeError(
            f"state must be None (the first step) or the state dict adam_step returned, got {state!r:.80}"
        )
    t = state["t"] + 1
    new_params, m, v = {}, {}, {}
    for n, W in params.items():
        g = np.asarray(grads[n], dtype=_float_type(W))
        m[n] = beta1 * state["m"][n] + (1 - beta1) * g  # running mean of the gradient, W's shape
        v[n] = beta2 * state["v"][n] + (1 - beta2) * g * g  # running mean of its square, W's shape
        if eps_on_raw:  # the bias corrections folded into the step size
            new_params[n] = W - lr * math.sqrt(1 - beta2**t) / (1 - beta1**t) * m[n] / (np.sqrt(v[n]) + eps)
            continue
        m_hat = m[n] / (1 - beta1**t)  # W's shape; undo the bias toward the zero start
        v_hat = v[n] / (1 - beta2**t)  # W's shape
        new_params[n] = W - lr * m_hat / (np.sqrt(v_hat) + eps)  # W's shape; each entry moves by about lr
    return new_params, {"t": t, "m": m, "v": v}


def evaluate(params: dict[str, np.ndarray], tokens: object, targets: object) -> tuple[float, float]:
    """(mean cross-entropy, token accuracy) of the layer on tokens (B, T) against targets (B, T)."""
    p = _check_params(params)
    n_vocab = p["W_out"].shape[1]
    X = encode(tokens, n_vocab)  # (B, T, n_vocab + T)
    logits, _ = forward(p, X)  # (B, T, n_vocab)
    targets = _check_targets(targets, logits.shape)
    accuracy = float(np.mean(logits.argmax(axis=-1) == targets))
    return cross_entropy(logits, targets), accuracy


# --------------------------------------------------------------------------- training


class Snapshot(NamedTuple):
    """The state of training after ``step`` updates: probe attention weights (T, T), eval loss and accuracy."""

    step: int
    weights: np.ndarray
    loss: float
    accuracy: float


@dataclass(frozen=True)
class TrainResult:
    """What train returns: per-step training losses, snapshots on the probe, and the final parameters."""

    task: str
    losses: np.ndarray  # (steps,) training loss of each step's batch, before that step's update
    snapshots: list[Snapshot]  # step 0 (before training), every snapshot_every steps, and the last step
    params: dict[str, np.ndarray]  # the final W_q, W_k, W_v, W_out
    probe: np.ndarray  # (T,) the fixed probe sequence whose attention weights the snapshots hold
    eval_tokens: np.ndarray  # (n_eval, T) the evaluation sequences behind each snapshot's loss and accuracy

    @property
    def steps(self) -> np.ndarray:
        """The step of each snapshot, (n_snapshots,)."""
        return np.array([s.step for s in self.snapshots])

    @property
    def accuracies(self) -> np.ndarray:
        """Token accuracy on the evaluation sequences at each snapshot, (n_snapshots,)."""
        return np.array([s.accuracy for s in self.snapshots])

    @property
    def final_weights(self) -> np.ndarray:
        """The probe's attention weights (T, T) after the last step."""
        return self.snapshots[-1].weights


def default_probe(T: int, n_vocab: int) -> np.ndarray:
    """The probe sequence B, C, D, ... (token ids 1, 2, ..., wrapping around n_vocab), shape (T,)."""
    T = check_int(T, "T", minimum=1)
    n_vocab = check_int(n_vocab, "n_vocab", minimum=2)
    refuse_large(T, f"the probe of T = {T:,} tokens", "T")
    return (np.arange(T) + 1) % n_vocab  # (T,)


def train(
    task: str,
    steps: int = 300,
    seed: int = 0,
    lr: float = 0.05,
    *,
    batch_size: int = 32,
    T: int = 6,
    n_vocab: int = 8,
    d_k: int = 8,
    d_v: int = 8,
    snapshot_every: int = 10,
    n_eval: int = 512,
) -> TrainResult:
    """Train one attention layer on ``task`` with Adam; seeded and deterministic (see TrainResult)."""
    task = _check_task(task)
    steps = check_int(steps, "steps", minimum=1)
    if steps > MAX_STEPS:
        raise ValueError(
            f"steps = {steps:,} is too many: training runs in the kernel and blocks it, about a millisecond per step "
            f"at the default sizes, so {steps:,} steps would take roughly {_duration(steps / 1000)}; train accepts "
            f"up to {MAX_STEPS:,} steps (notebook 07 trains 300)"
        )
    seed = check_int(seed, "seed", minimum=0)
    lr = check_real(lr, "lr", low=0.0)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    T = check_int(T, "T", minimum=2)
    n_vocab = check_int(n_vocab, "n_vocab", minimum=2)
    d_k = check_int(d_k, "d_k", minimum=1)
    d_v = check_int(d_v, "d_v", minimum=1)
    snapshot_every = check_int(snapshot_every, "snapshot_every", minimum=1)
    n_eval = check_int(n_eval, "n_eval", minimum=1)
    n, width = max(n_eval, batch_size), max(n_vocab + T, d_k, d_v)  # the largest batch; the widest (n, T, width)
    refuse_large(max(n * T * width, n * T * T), f"with {'n_eval' if n_eval >= batch_size else 'batch_size'} = "
                  f"{n:,}, T = {T:,}, n_vocab = {n_vocab:,}, d_k = {d_k:,}, d_v = {d_v:,}, an array of shape "
                  f"{(n, T, max(width, T))}", "n_eval, batch_size, T, n_vocab, d_k or d_v")

    init_rng, data_rng, eval_rng = np.random.default_rng(seed).spawn(3)  # independent streams
    params = init_params(T, n_vocab, d_k, d_v, init_rng)
    eval_tokens, eval_targets = make_batch(task, n_eval, T, n_vocab, eval_rng)  # (n_eval, T) each
    probe = default_probe(T, n_vocab)  # (T,)
    X_probe = encode(probe, n_vocab)  # (T, n_vocab + T)

    def snapshot(step: int) -> Snapshot:
        loss, acc = evaluate(params, eval_tokens, eval_targets)
        return Snapshot(step, forward(params, X_probe)[1], loss, acc)  # weights (T, T)

    snapshots = [snapshot(0)]
    losses = np.empty(steps)  # (steps,)
    state = None
    for step in range(1, steps + 1):
        tokens, targets = make_batch(task, batch_size, T, n_vocab, data_rng)  # (B, T) each
        losses[step - 1], grads = loss_and_grads(params, encode(tokens, n_vocab), targets)
        params, state = adam_step(params, grads, state, lr)
        if step % snapshot_every == 0 or step == steps:
            snapshots.append(snapshot(step))
    return TrainResult(task, losses, snapshots, params, probe, eval_tokens)
