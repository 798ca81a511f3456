"""Checks for notebook 15 (your own GPT): the student's own functions, each run on several inputs and judged.

The student writes five functions; each check calls the student's function (not an answer array) on the running
example and on other inputs (other T, 1 included, other widths, a small random model besides lesson 12's committed
one), compares with the reference from ``helpers`` and, when it differs, names the typical mistake it matches:

    layer_norm(x, g, b)                       x (..., d) -> (..., d)        check_layer_norm(fn)
    gelu(x)                                   x (...)    -> (...)           check_gelu(fn)
    block(x, params, layer, n_heads)          x (T, d_model) -> (T, d_model) check_block(fn)
    gpt_forward(config, params, tokens)       tokens (T,) -> logits (T, V)  check_gpt_forward(fn)
    generate(config, params, prompt, n_new)   prompt (T0,) -> (T0 + n_new,) check_generate(fn)

Shapes: T tokens, d (d_model) features, h heads of d_head = d_model / h, V the vocabulary, L layers.

A check prints ONE line ("✅ name: ..." or "❌ name: on input k of n (what it was): what is wrong") and returns a
``Verdict``, truthy when right. Each is a ``Spec`` of the Build exercises' engine (``helpers.checks.functions``,
the same as lessons 01-09's): it never raises on a student's mistake, and an exception, None, a list, a wrong
shape, NaN, a changed input array each get the engine's sentence. ``explain_gpt_forward`` runs gpt_forward's Spec
on one input (the check's own words), for lesson 12's explorer (``yours=``).

The wrong answers a check names are computed by ``_slipped_*`` below: the model of ``helpers.language_model``
written out with one mistake at a time. The right answers come from ``helpers`` itself
(``helpers.layers``, ``helpers.attention``, ``helpers.language_model``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from helpers.attention import causal_mask, multi_head_attention, softmax
from helpers.checks import Verdict
from helpers.checks.functions import RETURNS_NONE, Case, Spec, call_student, check_function, explain
from helpers.language_model import GPTConfig, forward, generate, init_params, load_model
from helpers.layers import LN_EPS, gelu, layer_norm

__all__ = [
    "check_layer_norm",
    "check_gelu",
    "check_block",
    "check_gpt_forward",
    "check_generate",
    "explain_gpt_forward",
    "reference_block",
    "ready",
    "greedy_generate",
    "call_student",
    "SMALL_CONFIG",
    "TOLERANCE",
    "NOT_ANSWERED_SENTENCE",
]

NOT_ANSWERED_SENTENCE = RETURNS_NONE  # what a stub (its body `...` returns None) is told, the engine's words
# call_student: the engine's own (helpers.checks.functions), for the notebook's deep dive (block_backward), which
# the notebook imports from its lesson's module
TOLERANCE = {np.dtype(np.float64): 1e-7, np.dtype(np.float32): 1e-4}  # relative to max(1, the largest |right value|)


def _numbered(cases: list[tuple[str, tuple]]) -> list[Case]:
    """The engine's cases, labelled "input k of n (what it is)": the check says "on input 2 of 7 (...): ..."."""
    return [Case(f"input {i} of {len(cases)} ({label})", args) for i, (label, args) in enumerate(cases, start=1)]


def _f64(p: dict) -> dict:
    """The parameters in float64 (the named mistakes are computed in float64, whatever the student's dtype)."""
    return p if p["tok_emb"].dtype == np.float64 else {k: np.asarray(v, dtype=np.float64) for k, v in p.items()}


def ready(fn: object, ok: object, reference: Callable, name: str) -> Callable:
    """The student's ``fn`` when its check passed (``ok`` truthy), else ``reference``; prints which one is used."""
    if ok:
        print(f"Using your {name}.")
        return fn
    label = getattr(reference, "label", f"{reference.__module__}.{reference.__name__}")
    print(f"Your {name} did not pass its check yet: the reference {label} stands in for it below, so the cells "
          f"still run. Fix {name}, re-run its check, then re-run from here.")
    return reference


def greedy_generate(config: GPTConfig, params: dict, prompt: object, n_new: int) -> np.ndarray:
    """``helpers.language_model.generate`` at temperature 0 (greedy), with generate's signature of notebook 15."""
    return generate(config, params, prompt, n_new, temperature=0.0)


greedy_generate.label = "helpers.language_model.generate at temperature 0"  # what ``ready`` calls it


# ============================================================================ the model with one mistake at a time


def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray, slips: frozenset = frozenset()) -> np.ndarray:
    """LayerNorm over the last axis, with the slips named in ``slips`` (x (..., d), g, b (d,))."""
    axis = 0 if "ln_axis0" in slips else None if "ln_whole" in slips else -1
    mu = x.mean(axis=axis, keepdims=True)  # (..., 1) one mean per token
    var = x.var(axis=axis, ddof=1 if "unbiased" in slips else 0, keepdims=True)  # (..., 1)
    xc = x - mu  # (..., d)
    if "eps_missing" in slips:
        xhat = xc / np.sqrt(var)
    elif "eps_outside" in slips:
        xhat = xc / (np.sqrt(var) + LN_EPS)
    elif "var_not_sqrt" in slips:
        xhat = xc / (var + LN_EPS)
    elif "centred_only" in slips:
        xhat = xc
    else:
        xhat = xc / np.sqrt(var + LN_EPS)  # (..., d)
    if "no_gain_bias" in slips:
        return xhat
    if "gain_bias_swapped" in slips:
        return xhat * b + g
    return xhat * g + b


_ERF = np.frompyfunc(math.erf, 1, 1)
_C = math.sqrt(2 / math.pi)


def _gelu(x: np.ndarray, slips: frozenset = frozenset()) -> np.ndarray:
    """GELU, the tanh form, or one of its slips."""
    if "gelu_erf" in slips:
        return 0.5 * x * (1 + _ERF(x / math.sqrt(2)).astype(np.float64))
    if "relu" in slips:
        return np.maximum(x, 0.0)
    if "gelu_sigmoid" in slips:
        return x / (1 + np.exp(-1.702 * x))
    c = 2 / math.pi if "c_not_sqrt" in slips else 1.0 if "no_c" in slips else _C
    u = c * (x + 0.044715 * (x * x if "x_squared" in slips else x * x * x))  # x * x * x: faster than x ** 3
    half = 1.0 if "no_half" in slips else 0.5
    return half * (1 + np.tanh(u)) if "no_x" in slips else half * x * (1 + np.tanh(u))


def _attention(h: np.ndarray, p: dict, q: str, n_heads: int, slips: frozenset) -> np.ndarray:
    """Causal multi-head attention of h (T, d_model) with layer prefix q's W_q, W_k, W_v, W_o, and slips."""
    T, D = h.shape
    H = 1 if "one_head" in slips else n_heads
    dh = D // H
    Q, K, V = h @ p[q + "W_q"], h @ p[q + "W_k"], h @ p[q + "W_v"]  # (T, d_model) each

    def split(M: np.ndarray) -> np.ndarray:
        if "heads_reshape" in slips or "heads_reshape_split" in slips:
            return M.reshape(H, T, dh)  # (T, d_model) -> (h, T, d_head) without the transpose: rows mixed
        return M.reshape(T, H, dh).transpose(1, 0, 2)  # (T, d_model) -> (T, h, d_head) -> (h, T, d_head)

    Qh, Kh, Vh = split(Q), split(K), split(V)
    scale = 1.0 if "no_scale" in slips else 1 / math.sqrt(D) if "scale_d_model" in slips else 1 / math.sqrt(dh)
    S = Qh @ Kh.transpose(0, 2, 1) * scale  # (h, T, d_head) @ (h, d_head, T) -> (h, T, T)
    mask = causal_mask(T)  # (T, T) key j <= query i
    if not ({"no_mask", "mask_after"} & slips):
        S = np.where(mask, S, -np.inf)
    P = softmax(S, axis=-2 if "softmax_queries" in slips else -1)  # (h, T, T)
    if "mask_after" in slips:
        P = P * mask  # future keys zeroed after the softmax: rows no longer sum to 1
    O = P @ Vh  # (h, T, T) @ (h, T, d_head) -> (h, T, d_head)
    concat = O.reshape(T, D) if "heads_reshape" in slips else O.transpose(1, 0, 2).reshape(T, D)  # (T, d_model)
    return concat if "no_W_o" in slips else concat @ p[q + "W_o"]


def _slipped_block(x: np.ndarray, p: dict, layer: int, n_heads: int, slips: frozenset) -> np.ndarray:
    """One pre-LN block of x (T, d_model), written out, with the slips named in ``slips``."""
    q = f"l{0 if 'layer0' in slips else layer}."
    x = np.asarray(x, dtype=np.float64)

    def ln(y: np.ndarray, which: str) -> np.ndarray:
        return y if "no_ln" in slips else _ln(y, p[q + which + ".g"], p[q + which + ".b"], slips)

    def mlp(y: np.ndarray) -> np.ndarray:
        a = y @ p[q + "W_1"] + (0 if "no_mlp_bias" in slips else p[q + "b_1"])  # (T, d_ff)
        return _gelu(a, slips) @ p[q + "W_2"] + (0 if "no_mlp_bias" in slips else p[q + "b_2"])  # (T, d_model)

    if "post_ln" in slips:
        x = ln(x + _attention(x, p, q, n_heads, slips), "ln1")
        return ln(x + mlp(x), "ln2")
    a = _attention(ln(x, "ln1"), p, q, n_heads, slips)
    x = a if {"no_attn_residual", "no_residual"} & slips else x + a
    m = mlp(ln(x, "ln2"))
    return m if {"no_mlp_residual", "no_residual"} & slips else x + m


def _slipped_forward(config: GPTConfig, p: dict, tokens: np.ndarray, slips: frozenset) -> np.ndarray | None:
    """logits (T, V) of tokens (T,) with the slips named (None when a slip cannot run on these tokens)."""
    T = len(tokens)
    x = p["tok_emb"][tokens].astype(np.float64)  # (T, d_model)
    if "pos_by_token" in slips:
        if tokens.max() >= config.context:
            return None
        x = x + p["pos_emb"][tokens]
    elif "no_pos" not in slips:
        x = x + p["pos_emb"][:T]  # (T, d_model)
    for layer in range(1 if "one_layer" in slips else config.n_layers):
        x = _slipped_block(x, p, layer, config.n_heads, slips)
    if "no_final_ln" not in slips:
        x = _ln(x, p["ln_f.g"], p["ln_f.b"], slips)
    logits = x @ (p["tok_emb"].T if "tied" in slips else p["W_out"])  # (T, V)
    if "probs" in slips:
        logits = softmax(logits, axis=-1)
    return logits[-1] if "last_only" in slips else logits


def reference_block(x: object, params: dict, layer: int, n_heads: int) -> np.ndarray:
    """One pre-LN block of lesson 12's model from helpers' pieces: x (T, d_model) -> (T, d_model), in x's dtype."""
    q = f"l{layer}."
    p = params
    x = np.asarray(x)
    T = x.shape[0]
    attn, _ = multi_head_attention(layer_norm(x, p[q + "ln1.g"], p[q + "ln1.b"]), p[q + "W_q"], p[q + "W_k"],
                                   p[q + "W_v"], n_heads, p[q + "W_o"], mask=causal_mask(T))  # (T, d_model)
    x = x + attn
    h2 = layer_norm(x, p[q + "ln2.g"], p[q + "ln2.b"])  # (T, d_model)
    return x + gelu(h2 @ p[q + "W_1"] + p[q + "b_1"]) @ p[q + "W_2"] + p[q + "b_2"]  # (T, d_model)


# ============================================================================ the inputs


SMALL_CONFIG = GPTConfig(vocab_size=11, context=12, d_model=8, n_heads=2, n_layers=2, d_ff=16)
_WIDE_CONFIG = GPTConfig(vocab_size=13, context=13, d_model=12, n_heads=3, n_layers=1, d_ff=20)


def _random_params(config: GPTConfig, seed: int) -> dict[str, np.ndarray]:
    """float64 parameters with every piece visible: larger than GPT-2's start, gains and biases not 1 and 0."""
    rng = np.random.default_rng(seed)
    params = init_params(config, seed=seed, dtype=np.float64)
    for name, W in params.items():
        if name.endswith(".g"):
            params[name] = 1 + 0.3 * rng.standard_normal(W.shape)
        elif name.endswith((".b", "b_1", "b_2")):
            params[name] = 0.3 * rng.standard_normal(W.shape)
        elif name in ("tok_emb", "pos_emb", "W_out"):
            params[name] = rng.standard_normal(W.shape)  # std 1: tokens, positions and logits far apart
        else:
            params[name] = W * 15  # std 0.3: attention weights far from uniform
    return params


_CACHE: dict = {}


def _models() -> dict:
    """The models the checks run on (built once): two small random ones, the committed one in float32 and float64."""
    if not _CACHE:
        config, p32, tokenizer = load_model()
        _CACHE.update(small=(SMALL_CONFIG, _random_params(SMALL_CONFIG, 15)),
                      wide=(_WIDE_CONFIG, _random_params(_WIDE_CONFIG, 16)),
                      committed32=(config, p32),
                      committed64=(config, {k: v.astype(np.float64) for k, v in p32.items()}),
                      prompt=tokenizer.encode("The attention weights of "))
    return _CACHE


def _describe(config: GPTConfig) -> str:
    return (f"V {config.vocab_size}, context {config.context}, d_model {config.d_model}, {config.n_heads} heads, "
            f"{config.n_layers} layer{'s' if config.n_layers > 1 else ''}, d_ff {config.d_ff}")


def _model_label(key: str) -> str:
    config = _models()[key][0]
    if key.startswith("committed"):
        return f"lesson 12's committed model in float{key[-2:]}"
    return f"a random model ({_describe(config)}) in float64"


# ============================================================================ layer_norm

_LN_MISTAKES = {
    "this divides by the square root of the UNBIASED variance (ddof=1, divided by d − 1); LayerNorm uses the biased "
    "one, the mean of the squared deviations (np.var's default, divided by d).": "unbiased",
    "eps is missing: divide by √(var + 1e-5), not √var (without it a token whose features are all equal gives 0/0)."
    : "eps_missing",
    "eps is outside the square root: divide by √(var + 1e-5), not √var + 1e-5.": "eps_outside",
    "this divides by var + eps, not by its square root √(var + 1e-5).": "var_not_sqrt",
    "this is LayerNorm over the wrong axis: it normalises each feature over the tokens (axis 0); LayerNorm "
    "normalises each token over its features, the last axis (axis=-1).": "ln_axis0",
    "this takes one mean and variance over the whole array; LayerNorm takes one per token, over its features "
    "(axis=-1, keepdims=True).": "ln_whole",
    "the gain and bias are swapped: x̂ ∘ g + b.": "gain_bias_swapped",
    "this is x̂, before the gain and bias: multiply by g, then add b.": "no_gain_bias",
    "this only subtracts the mean; divide by √(var + 1e-5) too.": "centred_only",
}


def _ln_cases() -> list[Case]:
    rng = np.random.default_rng(151)
    d8 = lambda n: (rng.standard_normal(n) * 0.5 + 1, rng.standard_normal(n) * 0.5)  # noqa: E731 - g, b
    cases = [("the running example: x (2, 4), as in 12's exercise",
              (np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 4.0, -4.0]]), np.array([1.0, 1.0, 2.0, 0.5]),
               np.array([0.0, 1.0, 0.0, 0.0])))]
    for label, shape in (("one token, x (1, 8)", (1, 8)), ("x (6, 16)", (6, 16)), ("a square x (5, 5)", (5, 5)),
                         ("one token as a vector, x (8,)", (8,)), ("leading axes, x (2, 3, 8)", (2, 3, 8))):
        cases.append((label, (rng.standard_normal(shape) * 3 + 1, *d8(shape[-1]))))
    cases.append(("tokens whose features are nearly equal (variance about 1e-6, near eps), x (3, 8)",
                  (1 + 1e-3 * rng.standard_normal((3, 8)), *d8(8))))
    return _numbered(cases)


def _ln_mistake(slip: str) -> Callable:
    """The student's layer_norm with one slip (LayerNorm over axis 0 does not apply to one vector)."""
    return lambda x, g, b: None if slip == "ln_axis0" and x.ndim < 2 else _ln(x, g, b, frozenset({slip}))


@functools.cache
def _layer_norm_spec() -> Spec:
    return Spec(
        name="layer_norm", reference=layer_norm, cases=_ln_cases(), rtol=0, atol=0, tolerance=TOLERANCE,
        mistakes={sentence: _ln_mistake(slip) for sentence, slip in _LN_MISTAKES.items()},
        broadcast="A mean over the last axis has shape (T,) unless you keep the axis: x.mean(axis=-1, keepdims=True) "
                  "has shape (T, 1), which lines up with x (T, d).",
        hint="Hint: per token, over the last axis (keepdims=True): subtract the mean, divide by √(var + 1e-5) with "
             "the biased variance (np.var's default), then multiply by g and add b.",
        done=" (T = 1 to 6, d = 4 to 16, one vector, leading axes, a variance near eps; to 1e-7)")


def check_layer_norm(fn: object) -> Verdict:
    """The student's layer_norm(x, g, b): LayerNorm over the last axis, biased variance, eps 1e-5 inside the root."""
    return check_function(fn, _layer_norm_spec())


# ============================================================================ gelu

_GELU_MISTAKES = {
    "this is GELU's exact erf form, ½ x (1 + erf(x/√2)): close (the two differ by less than 0.0005) but not this "
    "model's; lesson 12 and GPT-2 use the tanh form ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))).": "gelu_erf",
    "this is ReLU, max(x, 0); GELU is smooth: ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))).": "relu",
    "this is the sigmoid approximation x·σ(1.702 x); this model uses the tanh form.": "gelu_sigmoid",
    "the ½ is missing: ½ x (1 + tanh u).": "no_half",
    "the factor x is missing: ½ x (1 + tanh u), not ½ (1 + tanh u).": "no_x",
    "the cube is a square: u = √(2/π) (x + 0.044715 x³).": "x_squared",
    "√(2/π) is missing from u = √(2/π) (x + 0.044715 x³).": "no_c",
    "this uses 2/π; the factor is its square root, √(2/π) ≈ 0.798.": "c_not_sqrt",
}


def _gelu_cases() -> list[Case]:
    rng = np.random.default_rng(152)
    return _numbered([("the running example: z = [-3, -1, 0, 1, 3]", (np.array([-3.0, -1.0, 0.0, 1.0, 3.0]),)),
                      ("x (4, 8)", (2 * rng.standard_normal((4, 8)),)),
                      ("one number, x (1, 1)", (np.array([[0.7]]),)),
                      ("large numbers, x = [-30, -10, 10, 30]", (np.array([-30.0, -10.0, 10.0, 30.0]),)),
                      ("leading axes, x (2, 3, 5)", (rng.standard_normal((2, 3, 5)),))])


@functools.cache
def _gelu_spec() -> Spec:
    return Spec(
        name="gelu", reference=gelu, cases=_gelu_cases(), rtol=0, atol=0, tolerance=TOLERANCE,
        mistakes={sentence: (lambda x, slip=slip: _gelu(x, frozenset({slip})))
                  for sentence, slip in _GELU_MISTAKES.items()},
        hint="Hint: the tanh form, elementwise: ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))).",
        done=" (1-D to 3-D, one number, ±30; to 1e-7)")


def check_gelu(fn: object) -> Verdict:
    """The student's gelu(x): the tanh form, elementwise."""
    return check_function(fn, _gelu_spec())


# ============================================================================ block

_BLOCK_MISTAKES = {
    "the attention's residual is missing: x = x + attention(LN₁(x)) W_o; the block ADDS to the stream.":
        {"no_attn_residual"},
    "the MLP's residual is missing: x = x + MLP(LN₂(x)); the block ADDS to the stream.": {"no_mlp_residual"},
    "both residuals are missing: each sublayer's output is ADDED to x (x = x + ...), not put in its place.":
        {"no_residual"},
    "this is post-LN, LN(x + sublayer(x)); this model is pre-LN: x + sublayer(LN(x)), the stream itself is never "
    "normalised.": {"post_ln"},
    "the LayerNorms are missing: each sublayer reads LN(x), not x.": {"no_ln"},
    "there is no causal mask: query i may only see keys 1 … i (set the scores above the diagonal to -inf before "
    "the softmax).": {"no_mask"},
    "the mask was applied after the softmax (future attention weights set to 0 without renormalising); add -inf "
    "to the scores before the softmax.": {"mask_after"},
    "the heads are mixed up: a bare reshape (T, d_model) -> (h, T, d_head) mixes tokens; reshape to (T, h, d_head), "
    "then transpose to (h, T, d_head) (and back the same way before W_o).": {"heads_reshape"},
    "the heads are mixed up: split with a bare reshape (T, d_model) -> (h, T, d_head), which mixes tokens; reshape "
    "to (T, h, d_head), then transpose.": {"heads_reshape_split"},
    "this is one head over all d_model columns; split into n_heads heads of d_model / n_heads columns.": {"one_head"},
    "the scores are not scaled: divide Q Kᵀ by √d_head.": {"no_scale"},
    "the scores are divided by √d_model; each head compares vectors of d_head = d_model / n_heads numbers: divide "
    "by √d_head.": {"scale_d_model"},
    "the softmax ran over the queries (axis -2); it runs over the keys, the last axis.": {"softmax_queries"},
    "W_o is missing: the concatenated heads are multiplied by W_o before they are added to the stream.": {"no_W_o"},
    "the MLP's biases b_1 and b_2 are missing.": {"no_mlp_bias"},
    "the MLP uses GELU's erf form: close but not this model's; use the tanh form (your gelu above).": {"gelu_erf"},
    "this used layer 0's parameters; block `layer` reads the keys f'l{layer}.W_q' and so on.": {"layer0"},
    "the LayerNorm divides by the unbiased variance (ddof=1); use the biased one (np.var's default).": {"unbiased"},
    "the LayerNorm has no eps: √(var + 1e-5).": {"eps_missing"},
    "the LayerNorm's eps is outside the square root: √(var + 1e-5).": {"eps_outside"},
}


def _block_cases() -> list[Case]:
    m = _models()
    rng = np.random.default_rng(153)
    cases = []
    for key, T, layer in (("small", 5, 0), ("small", 1, 1), ("wide", 7, 0), ("small", 8, 1)):
        config, p = m[key]
        x = rng.standard_normal((T, config.d_model))
        cases.append((f"x ({T}, {config.d_model}), layer {layer} of {_model_label(key)}", (x, p, layer,
                                                                                       config.n_heads)))
    config, p64 = m["committed64"]
    prompt = m["prompt"]
    x64 = p64["tok_emb"][prompt] + p64["pos_emb"][:len(prompt)]  # (T, d_model) the stream entering block 0
    cases.append((f"the running example: '{'The attention weights of '}' entering layer 0 of "
                  f"{_model_label('committed64')}", (x64, p64, 0, config.n_heads)))
    p32 = m["committed32"][1]
    cases.append((f"the same x in float32, layer 1 of {_model_label('committed32')}",
                  (x64.astype(np.float32), p32, 1, config.n_heads)))
    return _numbered(cases)


def _block_mistake(slips: frozenset) -> Callable:
    """The student's block with the slips named, in float64 (using layer 0's parameters is no slip at layer 0)."""
    return lambda x, p, layer, n_heads: (None if "layer0" in slips and layer == 0
                                         else _slipped_block(x, _f64(p), layer, n_heads, slips))


@functools.cache
def _block_spec() -> Spec:
    return Spec(
        name="block", reference=reference_block, cases=_block_cases(), rtol=0, atol=0, tolerance=TOLERANCE,
        mistakes={sentence: _block_mistake(frozenset(slips)) for sentence, slips in _BLOCK_MISTAKES.items()},
        hint="Hint: pre-LN, as in 12: x = x + attention(LN₁(x)) (causal, n_heads heads, then W_o), then x = x + "
             "MLP(LN₂(x)) with your gelu; block `layer` reads params[f'l{layer}.W_q'] and so on.",
        done=" (T = 1 to 25, d_model 8, 12 and 128, layers 0 and 1, two random models and lesson 12's; to 1e-7 of "
             "the largest entry in float64, 1e-4 in float32)")


def check_block(fn: object) -> Verdict:
    """The student's block(x, params, layer, n_heads): one pre-LN block of lesson 12's model, x (T, d_model)."""
    return check_function(fn, _block_spec())


# ============================================================================ gpt_forward

_FORWARD_MISTAKES = {
    "the positions are not added: x = tok_emb[tokens] + pos_emb[:T].": {"no_pos"},
    "the positions were looked up by token id (pos_emb[tokens]); position t's row is pos_emb[t]: pos_emb[:T].":
        {"pos_by_token"},
    "the last LayerNorm is missing: logits = LN_f(x) W_out, with params['ln_f.g'] and params['ln_f.b'].":
        {"no_final_ln"},
    "the logits use tok_emb.T; this model has its own output matrix, params['W_out'] (no weight tying).": {"tied"},
    "these are probabilities (the softmax of the logits); gpt_forward returns the logits themselves.": {"probs"},
    "this is the last position's logits only (V,); gpt_forward returns the logits of every position, (T, V).":
        {"last_only"},
    "only layer 0 ran; run every block in turn: for layer in range(config.n_layers).": {"one_layer"},
    **{sentence: slips for sentence, slips in _BLOCK_MISTAKES.items() if slips != {"layer0"}},
    "every block used layer 0's parameters; block `layer` reads the keys f'l{layer}.W_q' and so on.": {"layer0"},
}


def _forward_mistake(slips: frozenset) -> Callable:
    """The student's gpt_forward with the slips named, in float64 (one layer, or layer 0's, is no slip in a
    one-layer model)."""
    return lambda config, p, tokens: (None if {"one_layer", "layer0"} & slips and config.n_layers == 1
                                      else _slipped_forward(config, _f64(p), np.asarray(tokens), slips))


def _forward_cases() -> list[Case]:
    m = _models()
    rng = np.random.default_rng(154)
    cases = []
    for key, T in (("small", 5), ("small", 1), ("small", 12), ("wide", 6)):
        config, p = m[key]
        cases.append((f"tokens ({T},) of {_model_label(key)}", (config, p, rng.integers(0, config.vocab_size, T))))
    for key in ("committed64", "committed32"):
        config, p = m[key]
        cases.append((f"the running example: 'The attention weights of ' ({len(m['prompt'])} tokens), "
                      f"{_model_label(key)}", (config, p, m["prompt"])))
    return _numbered(cases)


@functools.cache
def _forward_spec(with_cases: bool = True) -> Spec:
    """gpt_forward's Spec; without its cases (which load the models) for one diagnosis, explain_gpt_forward's."""
    return Spec(
        name="gpt_forward", reference=lambda config, params, tokens: forward(config, params, np.asarray(tokens)),
        cases=_forward_cases() if with_cases else (), rtol=0, atol=0, tolerance=TOLERANCE,
        mistakes={sentence: _forward_mistake(frozenset(slips)) for sentence, slips in _FORWARD_MISTAKES.items()},
        hint="Hint: x = tok_emb[tokens] + pos_emb[:T]; every block in turn (your block); then the last LayerNorm "
             "(ln_f.g, ln_f.b) and @ W_out: logits (T, V).",
        done=" (T = 1 to 25, two random models and lesson 12's in float64 and float32; to 1e-7 of the largest "
             "logit in float64, 1e-4 in float32)")


def explain_gpt_forward(fn: object, config: GPTConfig, params: dict, tokens: object) -> tuple[object, str | None]:
    """Run the student's gpt_forward once: (their logits as a float array or None, None if right else why not).

    Right: within TOLERANCE[dtype] × max(1, the largest |logit|) of ``helpers.language_model.forward`` (1e-7 in
    float64, 1e-4 in float32). Never raises on anything the student's function does.
    """
    outcome = explain(fn, _forward_spec(with_cases=False), (config, params, np.asarray(tokens)))
    return outcome.value, outcome.problem


def check_gpt_forward(fn: object) -> Verdict:
    """The student's gpt_forward(config, params, tokens): tokens (T,) -> logits (T, V), as helpers' forward."""
    return check_function(fn, _forward_spec())


# ============================================================================ generate


class _Counted(np.ndarray):
    """tok_emb, counting the rows read from it: a generate with a cache reads each token's row once."""

    reads: list

    def __array_finalize__(self, obj: object) -> None:
        self.reads = getattr(obj, "reads", [0])

    def __getitem__(self, key: object) -> object:
        out = np.asarray(self).__getitem__(key)
        self.reads[0] += int(np.size(out) // self.shape[-1]) if self.ndim == 2 else 0
        return out

    def take(self, indices: object, *args: object, **kwargs: object) -> object:
        out = np.asarray(self).take(indices, *args, **kwargs)
        self.reads[0] += int(np.size(out) // self.shape[-1])
        return out

    def __array_ufunc__(self, ufunc: object, method: str, *inputs: object, **kwargs: object) -> object:
        inputs = tuple(np.asarray(i) if isinstance(i, _Counted) else i for i in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, _Counted) else o for o in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: object, types: object, args: tuple, kwargs: dict) -> object:
        if func is np.take:
            return self.take(*args[1:], **kwargs)
        plain = lambda a: (np.asarray(a) if isinstance(a, _Counted)  # noqa: E731
                           else type(a)(plain(b) for b in a) if isinstance(a, (list, tuple)) else a)
        return func(*plain(args), **{k: plain(v) for k, v in kwargs.items()})


def _cached_generate(config: GPTConfig, p: dict, prompt: np.ndarray, n_new: int, slip: str) -> np.ndarray:
    """Greedy generation with per-layer K, V caches (float64), with one cache slip:
    "after": the new token's key and value appended after it attends (it does not see itself);
    "never": new tokens' keys and values never appended (they see the prompt only);
    "pos0": every new token at position 0."""
    H, dh = config.n_heads, config.d_head
    out = [int(t) for t in prompt]
    caches = [[np.zeros((H, 0, dh)), np.zeros((H, 0, dh))] for _ in range(config.n_layers)]

    def run(tokens: list[int], positions: list[int], append: bool, see_self: bool) -> np.ndarray:
        x = p["tok_emb"][tokens] + p["pos_emb"][positions]  # (t, d_model)
        t = len(tokens)
        for layer, cache in enumerate(caches):
            q = f"l{layer}."
            h = _ln(x, p[q + "ln1.g"], p[q + "ln1.b"])
            Q, K, V = ((h @ p[q + w]).reshape(t, H, dh).transpose(1, 0, 2) for w in ("W_q", "W_k", "W_v"))
            Kall, Vall = np.concatenate([cache[0], K], 1), np.concatenate([cache[1], V], 1)  # (h, n + t, d_head)
            n = cache[0].shape[1]
            if not see_self:
                Kall, Vall = cache[0], cache[1]
            S = Q @ Kall.transpose(0, 2, 1) / math.sqrt(dh)  # (h, t, n + t)
            if see_self:
                S = np.where(np.arange(n + t)[None, :] <= n + np.arange(t)[:, None], S, -np.inf)
            O = softmax(S, axis=-1) @ Vall  # (h, t, d_head)
            if append:
                cache[0], cache[1] = np.concatenate([cache[0], K], 1), np.concatenate([cache[1], V], 1)
            x = x + O.transpose(1, 0, 2).reshape(t, -1) @ p[q + "W_o"]
            h2 = _ln(x, p[q + "ln2.g"], p[q + "ln2.b"])
            x = x + _gelu(h2 @ p[q + "W_1"] + p[q + "b_1"]) @ p[q + "W_2"] + p[q + "b_2"]
        return _ln(x, p["ln_f.g"], p["ln_f.b"])[-1] @ p["W_out"]  # (V,)

    logits = run(out, list(range(len(out))), True, True)
    for i in range(n_new):
        out.append(int(np.argmax(logits)))
        if i == n_new - 1:
            break
        pos = 0 if slip == "pos0" else len(out) - 1
        logits = run([out[-1]], [pos], slip != "never", slip != "after")
    return np.asarray(out)


_GENERATE_CACHE_MISTAKES = {
    "each new token attended before its own key and value were in the cache: append k and v first, then attend "
    "(a token may attend to itself, as in 09).": "after",
    "each new token's key and value never reach the cache, so later tokens see only the prompt: append k and v to "
    "each layer's cache at every step (09's cache).": "never",
    "every new token was put at position 0: the token at index t gets pos_emb[t].": "pos0",
}

_GENERATE_MODEL_MISTAKES = {
    "these are the tokens of a model without positions: add pos_emb[t] to the token at index t (the prompt's and each "
    "new token's).": {"no_pos"},
    "these are the tokens of a model without the last LayerNorm: logits = LN_f(x) W_out.": {"no_final_ln"},
    "these are the tokens of a model whose blocks miss a residual: x = x + sublayer(LN(x)).": {"no_attn_residual"},
    "these are the tokens of a model whose blocks miss the MLP's residual: x = x + MLP(LN₂(x)).":
        {"no_mlp_residual"},
}


def _slipped_generate(config: GPTConfig, p: dict, prompt: np.ndarray, n_new: int, slips: frozenset) -> np.ndarray:
    """Greedy generation by recomputing the slipped model (the same tokens a cache with the same slips gives)."""
    out = [int(t) for t in prompt]
    for _ in range(n_new):
        logits = _slipped_forward(config, p, np.asarray(out), slips)
        out.append(int(np.argmax(logits[-1])))
    return np.asarray(out)


def _watch_reads(args: tuple) -> tuple[tuple, Callable[[], str | None]]:
    """The student's arguments with a tok_emb that counts the rows read from it, and what to say once the tokens
    are right: a generate without a cache reads more rows than the prompt once and each new token once."""
    config, p, prompt, n_new = args
    counted = dict(p)
    counted["tok_emb"] = p["tok_emb"].copy().view(_Counted)
    reads = counted["tok_emb"].reads = [0]  # shared by the engine's copy of it (``__array_finalize__``)
    T0 = len(prompt)

    def after() -> str | None:
        cached = T0 + n_new
        if reads[0] <= cached:
            return None
        recompute = sum(T0 + i for i in range(n_new))
        return (f"the tokens are right, but your generate read {reads[0]} rows of tok_emb (token embeddings) to write "
                f"{n_new} tokens after a {T0}-token prompt" + (" (as many as recomputing the whole text at every "
                "step)" if reads[0] >= recompute else "") + f". With a cache it needs at most {cached}: the prompt "
                "once, then only the newest token at each step, its keys and values appended to each layer's "
                "cache (09).")

    return (config, counted, prompt, n_new), after


def _generate_mistakes() -> dict[str, Callable]:
    """Each slip of a generate as a function of its arguments (None where it does not apply)."""
    found = {"this is the new tokens only; return the prompt followed by them, shape (T0 + n_new,).":
                 lambda c, p, prompt, n: greedy_generate(c, p, prompt, n)[len(prompt):],
             "one token too many: return the prompt and exactly n_new new tokens.":
                 lambda c, p, prompt, n: _slipped_generate(c, p, prompt, n + 1, frozenset()),
             "one token too few: return the prompt and exactly n_new new tokens.":
                 lambda c, p, prompt, n: greedy_generate(c, p, prompt, n)[:-1] if n else None,
             "the next token was picked from the FIRST position's logits; it is the argmax of the last "
             "position's (logits[-1]).": _first_row_generate}
    for sentence, slip in _GENERATE_CACHE_MISTAKES.items():
        found[sentence] = lambda c, p, prompt, n, slip=slip: _cached_generate(c, p, prompt, n, slip) if n > 1 else None
    for sentence, slips in _GENERATE_MODEL_MISTAKES.items():
        found[sentence] = lambda c, p, prompt, n, slips=frozenset(slips): _slipped_generate(c, p, prompt, n, slips)
    return found


def _first_row_generate(config: GPTConfig, p: dict, prompt: np.ndarray, n_new: int) -> np.ndarray:
    out = [int(t) for t in prompt]
    for _ in range(n_new):
        out.append(int(np.argmax(forward(config, p, np.asarray(out))[0])))
    return np.asarray(out)


def _generate_cases() -> list[Case]:
    m = _models()
    rng = np.random.default_rng(155)
    cases = []
    for key, T0, n_new in (("small", 3, 5), ("small", 1, 7), ("wide", 4, 5), ("small", 2, 0)):
        config, p = m[key]
        cases.append((f"a prompt of {T0} token{'s' if T0 > 1 else ''}, n_new = {n_new}, {_model_label(key)}",
                      (config, p, rng.integers(0, config.vocab_size, T0), n_new)))
    config, p = m["committed64"]
    cases.append((f"the running example: 'The attention weights of ', n_new = 40, {_model_label('committed64')}",
                  (config, p, m["prompt"], 40)))
    return _numbered(cases)


@functools.cache
def _generate_spec() -> Spec:
    return Spec(
        name="generate", reference=greedy_generate, cases=_generate_cases(), rtol=0, atol=0,
        mistakes=_generate_mistakes(), watch=_watch_reads,
        integers="token ids are integers: build the result with an integer dtype (np.argmax gives one), or convert "
                 "with .astype(int).",
        hint="Hint: feed the prompt through one token at a time, filling each layer's K and V caches (09); then "
             "n_new times: append the argmax of the last logits, and run only that new token, at its position, "
             "through the cached model.",
        done=" (prompts of 1 to 25 tokens, 0 to 40 new ones, two random models and lesson 12's in float64: the same "
             "tokens as helpers.language_model.generate at temperature 0, each token's row of tok_emb read once: no "
             "step re-embedded the earlier text)")


def check_generate(fn: object) -> Verdict:
    """The student's generate(config, params, prompt, n_new): greedy, with a cache; prompt (T0,) -> (T0 + n_new,)."""
    return check_function(fn, _generate_spec())
