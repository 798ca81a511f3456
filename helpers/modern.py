"""What today's models change in attention: a sink logit, bounded scores, local and global layers, the delta rule.

Notebook 14. Each piece answers a problem an earlier lesson showed:

* ``softmax_with_sink``: softmax over the keys plus one extra key that has a score but no value
  (GPT-OSS: a learned logit per head; StreamingLLM: the first tokens play that role). A row may then
  sum to less than 1, and a row with every key masked (06) is defined: all its weight goes to the sink.
* ``rms_norm`` (QK-norm: Qwen3, OLMo 2, Gemma 3) and ``soft_cap`` (Gemma 2): scores that cannot grow
  without bound, against 03's overflow; ``qk_norm_score_bound`` is the bound.
* ``layer_kinds``, ``pattern_reach``, ``pattern_cache_bytes``: layers that alternate local (a sliding
  window, 10) and global attention (Gemma 2: 1 local per global, window 4,096; Gemma 3: 5 per global, 1,024).
* ``gated_delta_rule`` (DeltaNet, Gated DeltaNet): 10's linear attention adds every value to one state;
  the delta rule first removes what the state held for the new key, then writes. ``gated_delta_rule_parallel``
  is the same output without a loop over tokens; ``recall_task`` and ``recall_accuracy`` are the toy
  that tells the two apart.

Shape notation used throughout this module (as in helpers/attention.py):

    ...     any leading batch dimensions (broadcast)
    T       number of tokens (T_k keys in a row of scores)
    d       width of the vector a norm acts on (its last axis)
    d_k     width of a query or key; d_v: of a value
    S       the delta rule's state, (d_v, d_k): it maps a key to a value, S k ≈ v

Every public function checks its arguments and raises ``TypeError`` (wrong kind of thing) or ``ValueError``
(right kind, wrong shape or value) with a message that names the argument.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from helpers.attention import causal_mask
from helpers.generation import kv_cache_bytes
from helpers.longcontext import sliding_window_mask
from helpers.validate import (
    as_numeric,
    check_choice,
    check_int,
    check_positive,
    check_real,
    check_rng,
    refuse_empty_rows,
    refuse_nonfinite,
)

__all__ = [
    "softmax_with_sink",
    "output_gate",
    "soft_cap",
    "rms_norm",
    "qk_norm_score_bound",
    "largest_weight",
    "layer_kinds",
    "pattern_reach",
    "pattern_cache_bytes",
    "gated_delta_rule",
    "gated_delta_rule_parallel",
    "recall_task",
    "recall_readout",
    "recall_accuracy",
    "overlap_recall_accuracy",
    "RECALL_METHODS",
]


# --------------------------------------------------------------------------- sinks


def softmax_with_sink(scores: object, sink_logit: object = 0.0) -> np.ndarray:
    """Softmax over the last axis as if one more key with score ``sink_logit`` took part, then dropped.

    weights_j = exp(s_j) / (exp(sink) + Σ_k exp(s_k)), so a row sums to less than 1 (the rest went to the
    sink). ``sink_logit``: a number, or an array that broadcasts to scores.shape[:-1] (one per head of
    (h, T_q, T_k) scores is shape (h, 1)); -inf gives plain softmax. Masked keys are -inf in ``scores``;
    a row with every key masked then puts all its weight on the sink (zeros), unless the sink is -inf too.
    Stable for large scores: the row maximum, sink included, is subtracted first.
    """
    s = as_numeric(scores, "scores", min_ndim=1, finite="no_pos_inf")  # (..., T_k); -inf = masked
    sink = np.asarray(sink_logit) if not isinstance(sink_logit, np.ndarray) else sink_logit
    if sink.dtype == bool or sink.dtype.kind not in "iuf":
        raise TypeError(f"sink_logit must be a real number or an array of them, got {sink_logit!r:.60}")
    if np.isnan(sink).any() or np.isposinf(sink).any():
        raise ValueError(f"sink_logit must be finite or -inf (-inf: no sink), got {sink_logit!r:.60}")
    lead = s.shape[:-1]
    try:
        ok = np.broadcast_shapes(sink.shape, lead) == lead
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"sink_logit has shape {sink.shape}, which does not broadcast to scores.shape[:-1] = {lead} "
            f"(scores {s.shape}); one sink per head of (h, T_q, T_k) scores has shape (h, 1)"
        )
    dtype = np.result_type(s.dtype, np.float32 if s.dtype == np.float16 else s.dtype)
    s = s.astype(dtype, copy=False)
    sink = np.broadcast_to(sink.astype(dtype), lead)[..., None]  # (..., 1)
    m = np.maximum(s.max(axis=-1, keepdims=True), sink)  # (..., 1) the row's largest score, sink included
    refuse_empty_rows(m, -1, s.shape)  # every key masked and no sink: undefined
    with np.errstate(under="ignore"):
        e = np.exp(s - m)  # (..., T_k) each <= 1: no overflow
        total = e.sum(axis=-1, keepdims=True) + np.exp(sink - m)  # (..., 1) >= 1: one term is exp(0)
    return e / total  # (..., T_k)


def output_gate(O: object, gate_logits: object) -> np.ndarray:
    """O · σ(gate_logits): each output row scaled by a gate in (0, 1) (Qwen3-Next's gated attention).

    O (..., T, d_v); gate_logits broadcasts to O: (..., T, 1) one gate per token, or (..., T, d_v) one per
    feature. σ(z) = 1 / (1 + e^(-z)), computed without overflow for large |z|.
    """
    O = as_numeric(O, "O", min_ndim=1)
    z = as_numeric(gate_logits, "gate_logits")
    try:
        ok = np.broadcast_shapes(z.shape, O.shape) == O.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"gate_logits has shape {z.shape}, which does not broadcast to O's shape {O.shape}; one gate "
                         "per token is shape (T, 1)")
    gate = np.exp(-np.logaddexp(0.0, -z))  # σ(z) = exp(−log(1 + e^(−z))), no overflow
    return O * gate  # same shape as O


# --------------------------------------------------------------------------- bounded scores


def soft_cap(scores: object, cap: object) -> np.ndarray:
    """cap · tanh(scores / cap): about the scores where |s| << cap, never beyond ±cap (Gemma 2: cap 50).

    Apply a mask after capping: -inf becomes -cap, a key that is no longer hidden.
    """
    cap = check_positive(cap, "cap", "a finite number > 0 (Gemma 2 caps attention scores at 50.0)")
    s = as_numeric(scores, "scores", finite="none")
    if np.isnan(s).any():
        refuse_nonfinite(np.where(np.isnan(s), np.nan, 0.0), "scores", "soft-capping needs numbers")
    return cap * np.tanh(s / cap)  # same shape as scores, |entry| <= cap


def rms_norm(x: object, g: object, eps: float = 1e-6) -> np.ndarray:
    """x / √(mean(x², last axis) + eps) · g: each vector (last axis, width d) rescaled to a root mean square of
    about 1, then multiplied by the learned gain g (d,). QK-norm applies it to every query and key."""
    x = as_numeric(x, "x", min_ndim=1)  # (..., d)
    g = as_numeric(g, "g")
    if g.ndim != 1 or g.shape[0] != x.shape[-1]:
        raise ValueError(
            f"g has shape {g.shape} but x has shape {x.shape}: the gain needs one number per feature, shape "
            f"({x.shape[-1]},)"
        )
    eps = check_real(eps, "eps", low=0.0, low_open=False, rule="a finite number >= 0 (1e-6 by default)")
    ms = np.mean(x * x, axis=-1, keepdims=True) + eps  # (..., 1) mean square
    if (ms == 0).any():
        raise ValueError("x has a vector of zeros and eps = 0: its root mean square is 0, so rms_norm divides by 0; "
                         "use eps > 0")
    return x / np.sqrt(ms) * g  # (..., d)


def qk_norm_score_bound(d_k: int, g_q: object = None, g_k: object = None) -> float:
    """The largest |q̂ · k̂| / √d_k after QK-norm: √d_k · max|g_q| · max|g_k| (gains of 1 when None).

    rms_norm makes ‖x̂‖ ≤ √d_k · max|g| (equal when eps = 0 and the gains are all ±1), and
    |q̂ · k̂| ≤ ‖q̂‖ ‖k̂‖ (Cauchy–Schwarz): whatever the token, a scaled score stays within this bound.
    """
    d_k = check_int(d_k, "d_k", minimum=1)
    gains = []
    for name, g in (("g_q", g_q), ("g_k", g_k)):
        if g is None:
            gains.append(1.0)
            continue
        g = as_numeric(g, name)
        if g.ndim != 1 or g.shape[0] != d_k:
            raise ValueError(f"{name} has shape {g.shape} but d_k = {d_k}: a gain needs shape ({d_k},)")
        gains.append(float(np.abs(g).max()))
    return math.sqrt(d_k) * gains[0] * gains[1]


def largest_weight(bound: object, T: int) -> float:
    """The largest attention weight one key can get among T when every scaled score lies in [-bound, bound]:
    one key at +bound, the T - 1 others at -bound: 1 / (1 + (T - 1) e^(-2·bound))."""
    bound = check_real(bound, "bound", low=0.0, low_open=False, rule="a finite number >= 0")
    T = check_int(T, "T", minimum=1)
    return 1.0 / (1.0 + (T - 1) * math.exp(-2.0 * bound))


# --------------------------------------------------------------------------- local and global layers


def layer_kinds(n_layers: int, local_per_global: int) -> list[str]:
    """The kind of each layer, "local" or "global": ``local_per_global`` local layers, then one global, repeated.

    0 gives all-global; Gemma 2 alternates 1:1, Gemma 3 has 5 local per global. A count that does not
    divide ends on local layers: 32 layers at 5:1 are 5 global and 27 local.
    """
    n_layers = check_int(n_layers, "n_layers", minimum=1)
    r = check_int(local_per_global, "local_per_global", minimum=0)
    return ["global" if (i + 1) % (r + 1) == 0 else "local" for i in range(n_layers)]


def _check_kinds(kinds: object) -> list[str]:
    if isinstance(kinds, str) or not isinstance(kinds, (list, tuple)) or not kinds:
        raise TypeError(f"kinds must be a non-empty list of 'local' and 'global' (see layer_kinds), got {kinds!r:.60}")
    return [check_choice(k, f"kinds[{i}]", ("local", "global")) for i, k in enumerate(kinds)]


def pattern_reach(T: int, window: int, kinds: object) -> np.ndarray:
    """Boolean (T, T): True where token i's output after the layers ``kinds`` (first layer first) depends on token j.

    A local layer mixes along 10's band mask of ``window`` keys, a global layer along the causal mask; the
    layers compose as the boolean product of their masks (as ``helpers.longcontext.window_reach``).
    """
    T = check_int(T, "T", minimum=1)
    band = sliding_window_mask(T, window).astype(np.int64)  # (T, T) checks window
    full = causal_mask(T).astype(np.int64)  # (T, T)
    reach = np.eye(T, dtype=np.int64)  # (T, T) before any layer: each token is itself
    for kind in _check_kinds(kinds):
        M = band if kind == "local" else full
        reach = np.minimum(M @ reach, 1)  # (T, T) @ (T, T) -> (T, T), 0/1: "some path exists"
    return reach.astype(bool)  # (T, T)


def pattern_cache_bytes(kinds: object, n_kv_heads: int, d_head: int, T: int, window: int, batch: int = 1,
                        bytes_per_value: int = 2) -> int:
    """Key/value cache bytes of the layers ``kinds`` at T tokens: a local layer keeps min(T, window) positions,
    a global layer keeps T (``helpers.generation.kv_cache_bytes`` for each)."""
    kinds = _check_kinds(kinds)
    T = check_int(T, "T", minimum=1)
    window = check_int(window, "window", minimum=1)
    n_local = kinds.count("local")
    n_global = len(kinds) - n_local
    total = 0
    if n_local:
        total += kv_cache_bytes(n_local, n_kv_heads, d_head, min(T, window), batch, bytes_per_value)
    if n_global:
        total += kv_cache_bytes(n_global, n_kv_heads, d_head, T, batch, bytes_per_value)
    return total


# --------------------------------------------------------------------------- the delta rule


def _check_delta_inputs(Q: object, K: object, V: object, beta: object, alpha: object
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    Q = as_numeric(Q, "Q", min_ndim=2)
    K = as_numeric(K, "K", min_ndim=2)
    V = as_numeric(V, "V", min_ndim=2)
    for name, M, layout in (("Q", Q, "(T, d_k)"), ("K", K, "(T, d_k)"), ("V", V, "(T, d_v)")):
        if M.ndim != 2:
            raise ValueError(f"{name} must be one sequence of shape {layout}, got shape {M.shape}")
    if Q.shape[1] != K.shape[1]:
        raise ValueError(
            f"Q and K must have the same width d_k: Q has shape {Q.shape} (d_k={Q.shape[1]}) but K has shape "
            f"{K.shape} (d_k={K.shape[1]})"
        )
    T = K.shape[0]
    if Q.shape[0] != T or V.shape[0] != T:
        raise ValueError(f"Q, K and V must have the same number of tokens T: got Q {Q.shape}, K {K.shape}, V {V.shape}")
    gates = []
    for name, a, default in (("beta", beta, None), ("alpha", alpha, 1.0)):
        if a is None and default is not None:
            gates.append(np.full(T, default))
            continue
        a = as_numeric(a, name)
        if a.shape != (T,):
            raise ValueError(f"{name} must have shape (T,) = ({T},), one number per token, got shape {a.shape}")
        if (a < 0).any() or (a > 1).any():
            bad = int(np.argmax((a < 0) | (a > 1)))
            raise ValueError(f"{name} must lie in [0, 1], got {name}[{bad}] = {a[bad]:g}")
        gates.append(a.astype(np.float64))
    return Q, K, V, gates[0], gates[1]


def gated_delta_rule(Q: object, K: object, V: object, beta: object, alpha: object = None) -> np.ndarray:
    """The gated delta rule, token by token: O (T, d_v), row t = S_t q_t.

    Q, K (T, d_k), V (T, d_v), beta (T,) and alpha (T,) in [0, 1] (alpha None: all 1, plain DeltaNet). The
    state S (d_v, d_k) starts at 0; for each t: S ← α_t S (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ, then o_t = S q_t.
    With unit-length keys, S k_t after the step is (1 − β_t)·(α_t · what S held for k_t) + β_t v_t: β = 1
    overwrites. Keys are expected to have length 1: otherwise the erase factor (I − β_t k_t k_tᵀ) scales the
    k_t direction by 1 − β_t‖k_t‖², and where β_t‖k_t‖² > 2 that is below −1, so the state can grow
    without bound from token to token.
    """
    Q, K, V, beta, alpha = _check_delta_inputs(Q, K, V, beta, alpha)
    T, d_k = K.shape
    S = np.zeros((V.shape[1], d_k))  # (d_v, d_k)
    O = np.empty((T, V.shape[1]))  # (T, d_v)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            k, v = K[t], V[t]  # (d_k,), (d_v,)
            read = S @ k  # (d_v, d_k) @ (d_k,) -> (d_v,): what the state holds for k
            S = alpha[t] * (S - beta[t] * np.outer(read, k)) + beta[t] * np.outer(v, k)  # (d_v, d_k)
            O[t] = S @ Q[t]  # (d_v,)
    if not np.isfinite(O).all():
        raise ValueError("the state overflowed: with keys longer than 1, β‖k‖² > 2 makes it grow at every token; "
                         "normalise the keys to length 1")
    return O


def _decay(alpha: np.ndarray) -> np.ndarray:
    """(T, T): entry (t, i) = α_{i+1} · … · α_t for i <= t (1 on the diagonal), 0 above it."""
    T = alpha.shape[0]
    D = np.zeros((T, T))  # (T, T)
    for i in range(T):
        D[i, i] = 1.0
        D[i + 1 :, i] = np.cumprod(alpha[i + 1 :])  # (T - i - 1,) products α_{i+1} … α_t
    return D


def gated_delta_rule_parallel(Q: object, K: object, V: object, beta: object, alpha: object = None) -> np.ndarray:
    """``gated_delta_rule`` without a loop over tokens' states: one triangular solve (DeltaNet's "WY" form).

    S_t = Σ_{i<=t} D_ti u_i k_iᵀ with D_ti = α_{i+1}…α_t and u_t = β_t (v_t − Σ_{i<t} D_ti (k_i · k_t) u_i):
    (I + A) U = diag(β) V with A_ti = β_t D_ti (k_i · k_t) below the diagonal. Then
    O = (Q Kᵀ ⊙ D) U, with D zero above the diagonal (causal). Equal to the recurrent form in exact arithmetic.
    """
    Q, K, V, beta, alpha = _check_delta_inputs(Q, K, V, beta, alpha)
    T = K.shape[0]
    D = _decay(alpha)  # (T, T) lower triangular, 1 on the diagonal
    A = np.tril(beta[:, None] * D * (K @ K.T), k=-1)  # (T, d_k) @ (d_k, T) -> (T, T) strictly lower
    with np.errstate(over="ignore", invalid="ignore"):
        U = np.linalg.solve(np.eye(T) + A, beta[:, None] * V)  # (T, T) \ (T, d_v) -> (T, d_v): unit lower triangular
        O = ((Q @ K.T) * D) @ U  # (T, T) @ (T, d_v) -> (T, d_v)
    if not np.isfinite(O).all():
        raise ValueError("the state overflowed: with keys longer than 1, β‖k‖² > 2 makes it grow at every token; "
                         "normalise the keys to length 1")
    return O


# --------------------------------------------------------------------------- associative recall

RECALL_METHODS = ("linear", "delta")


def recall_task(n: int, d_k: int, d_v: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n writes "key → value" into a memory of d_k slots: (K (n, d_k), V (n, d_v), latest (d_k,)).

    The keys are the d_k one-hot vectors (slot s is column s of the state); the first min(n, d_k) writes fill
    slots 0, 1, …, later writes go to a random slot again (an update: the slot's value changes). Values are
    random (standard normal). ``latest[s]`` is the index of the last write to slot s (-1: never written).
    """
    n = check_int(n, "n", minimum=1, maximum=10_000)
    d_k = check_int(d_k, "d_k", minimum=1, maximum=1_000)
    d_v = check_int(d_v, "d_v", minimum=1, maximum=1_000)
    rng = check_rng(rng)
    slots = np.concatenate([np.arange(min(n, d_k)), rng.integers(0, d_k, size=max(0, n - d_k))])  # (n,)
    K = np.eye(d_k)[slots]  # (n, d_k) one-hot rows
    V = rng.normal(size=(n, d_v))  # (n, d_v)
    latest = np.full(d_k, -1)
    latest[slots] = np.arange(n)  # a later write to the same slot overwrites the index: the last one stays
    return K, V, latest


def recall_readout(K: object, V: object, method: str, beta: float = 1.0, alpha: float = 1.0) -> np.ndarray:
    """The state after the writes K → V, read at every one-hot key: (d_k, d_v), row s = S e_s.

    method "delta": ``gated_delta_rule`` with β and α the same at every token; "linear": 10's linear
    attention without φ and normaliser, S ← α S + β v kᵀ (the same update without the erase term).
    """
    method = check_choice(method, "method", RECALL_METHODS)
    K = as_numeric(K, "K", min_ndim=2)
    beta = check_real(beta, "beta", low=0.0, high=1.0 + 1e-15, low_open=False, rule="a number in [0, 1]")
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0 + 1e-15, low_open=False, rule="a number in [0, 1]")
    n, d_k = K.shape
    E = np.eye(d_k)  # (d_k, d_k) the queries: one per slot
    if method == "delta":
        Kq = np.concatenate([K, E])  # (n + d_k, d_k): the writes, then d_k reads with β = 0 (no change)
        Vq = np.concatenate([as_numeric(V, "V", min_ndim=2), np.zeros((d_k, np.shape(V)[1]))])  # (n + d_k, d_v)
        b = np.concatenate([np.full(n, beta), np.zeros(d_k)])  # (n + d_k,)
        a = np.concatenate([np.full(n, alpha), np.ones(d_k)])  # (n + d_k,)
        return gated_delta_rule(Kq, Kq, Vq, b, a)[n:]  # (d_k, d_v)
    V = as_numeric(V, "V", min_ndim=2)
    S = np.zeros((V.shape[1], d_k))  # (d_v, d_k)
    for k, v in zip(K, V, strict=True):
        S = alpha * S + beta * np.outer(v, k)  # (d_v, d_k): add, never erase
    return (S @ E).T  # (d_k, d_v) row s = S e_s


def recall_accuracy(n: int, method: str, beta: float = 1.0, alpha: float = 1.0, *, d_k: int = 8, d_v: int = 8,
                    seeds: int = 50) -> float:
    """Fraction of written slots whose readout is nearer (Euclidean) to the slot's latest value than to any other
    value written, over ``seeds`` random tasks (``recall_task`` with seeds 0 … seeds - 1). Strictly nearer, by more
    than rounding (``RECALL_TIE``): a readout halfway between two values (β = 1/2, no forgetting) recalls neither,
    whatever the last bits say.

    The tasks run side by side: one state per task, (seeds, d_v, d_k), the state ``recall_readout`` reaches (equal
    to it: a test compares them), the delta rule's in closed form (the keys are one-hot), so that 14's explorer
    recomputes this at a slider move in well under a millisecond."""
    method = check_choice(method, "method", RECALL_METHODS)
    beta = check_real(beta, "beta", low=0.0, high=1.0 + 1e-15, low_open=False, rule="a number in [0, 1]")
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0 + 1e-15, low_open=False, rule="a number in [0, 1]")
    K, V, latest = _recall_tasks(check_int(n, "n", minimum=1, maximum=10_000),
                                 check_int(d_k, "d_k", minimum=1, maximum=1_000),
                                 check_int(d_v, "d_v", minimum=1, maximum=1_000),
                                 check_int(seeds, "seeds", minimum=1,
                                           maximum=10_000))  # (B, n, d_k), (B, n, d_v), (B, d_k)
    if method == "linear":  # S ← α S + β v kᵀ, add and never erase: S = Σ_t α^(n−1−t) β v_t k_tᵀ
        decay = beta * alpha ** np.arange(K.shape[1] - 1, -1, -1.0)  # (n,)
        S = (V * decay[:, None]).transpose(0, 2, 1) @ K  # (B, d_v, n) @ (B, n, d_k) -> (B, d_v, d_k) one per task
    else:  # S ← α S (I − β k kᵀ) + β v kᵀ, as gated_delta_rule; with one-hot keys in closed form: a write to key j
        # scales column j by α(1 − β) and every other column by α, so write t ends as β v_t α^(n−1−t) (1 − β)^m,
        # m = the later writes to its key
        later = (np.cumsum(K[:, ::-1], axis=1)[:, ::-1] - K)  # (B, n, d_k) writes to each key after step t
        m = (later * K).sum(axis=-1)  # (B, n) later writes to step t's own key
        decay = beta * alpha ** np.arange(K.shape[1] - 1, -1, -1.0) * (1.0 - beta) ** m  # (B, n)
        S = (V * decay[..., None]).transpose(0, 2, 1) @ K  # (B, d_v, n) @ (B, n, d_k) -> (B, d_v, d_k) one per task
    R = S.transpose(0, 2, 1)  # (B, d_k, d_v) row s = S e_s
    dist = ((V[:, None, :, :] - R[:, :, None, :]) ** 2).sum(axis=-1)  # (B, d_k, n) each slot's readout to every value
    own = np.take_along_axis(dist, np.maximum(latest, 0)[..., None], axis=-1)[..., 0]  # (B, d_k) to its latest value
    others = np.where(np.arange(dist.shape[-1]) == latest[..., None], np.inf, dist).min(axis=-1)  # (B, d_k)
    right = own + RECALL_TIE * (1 + own) < others  # strictly nearer: a tie (β = 1/2 averages two values) is a miss
    return float(right[latest >= 0].mean())


RECALL_TIE = 1e-9  # relative: squared distances closer than this count as a tie


@functools.lru_cache(maxsize=64)
def _recall_tasks(n: int, d_k: int, d_v: int, seeds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``recall_task`` for seeds 0 … seeds - 1, stacked: (seeds, n, d_k), (seeds, n, d_v), (seeds, d_k); kept, as
    they do not depend on β or α (read only: the arrays are not writeable)."""
    tasks = [recall_task(n, d_k, d_v, np.random.default_rng(seed)) for seed in range(seeds)]
    out = tuple(np.stack([t[i] for t in tasks]) for i in range(3))
    for a in out:
        a.flags.writeable = False
    return out


def overlap_recall_accuracy(n: int, method: str, *, d_k: int = 16, d_v: int = 16, seeds: int = 50) -> float:
    """Recall when the keys overlap: n random unit keys in d_k dimensions (no key written twice), β = α = 1, each
    key read back once after all writes; the fraction whose readout is nearest (Euclidean) to its own value."""
    method = check_choice(method, "method", RECALL_METHODS)
    n = check_int(n, "n", minimum=1, maximum=10_000)
    d_k = check_int(d_k, "d_k", minimum=1, maximum=1_000)
    d_v = check_int(d_v, "d_v", minimum=1, maximum=1_000)
    seeds = check_int(seeds, "seeds", minimum=1, maximum=10_000)
    right = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        K = rng.normal(size=(n, d_k))  # (n, d_k)
        K /= np.linalg.norm(K, axis=1, keepdims=True)  # unit keys, not orthogonal
        V = rng.normal(size=(n, d_v))  # (n, d_v)
        if method == "delta":
            S = np.zeros((d_v, d_k))  # (d_v, d_k)
            for k, v in zip(K, V, strict=True):
                S = S + np.outer(v - S @ k, k)  # β = 1: erase what S held for k, write v
        else:
            S = V.T @ K  # (d_v, n) @ (n, d_k): the sum of every v kᵀ
        R = K @ S.T  # (n, d_k) @ (d_k, d_v) -> (n, d_v): each key read back
        dist = ((R[:, None, :] - V[None, :, :]) ** 2).sum(axis=-1)  # (n, n) readout i to value j
        right += int((dist.argmin(axis=1) == np.arange(n)).sum())
    return right / (n * seeds)
