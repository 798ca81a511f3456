"""Tests of notebook 15's checks (helpers.checks.nb15): the student's own LayerNorm, GELU, block, GPT and generate.

Each check must pass the worked solution (written here as a student would, in plain NumPy), and name each typical
mistake: every wrong function below makes ONE mistake, and its test asserts the check prints ❌ with that
mistake's words. A function that raises, returns None, a list, the wrong shape or NaN, or changes its input in
place gets its own sentence; no check ever raises.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.checks import nb15
from helpers.language_model import forward, load_model

# ----------------------------------------------------------------------------- the worked solution


def layer_norm(x, g, b, *, ddof=0, eps_where="inside", axis=-1):
    mu = x.mean(axis=axis, keepdims=True)
    var = ((x - mu) ** 2).sum(axis=axis, keepdims=True) / (x.shape[axis] - ddof)
    if eps_where == "inside":
        return (x - mu) / np.sqrt(var + 1e-5) * g + b
    if eps_where == "outside":
        return (x - mu) / (np.sqrt(var) + 1e-5) * g + b
    return (x - mu) / np.sqrt(var) * g + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_erf(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _split(M, T, h, bare):
    return M.reshape(h, T, -1) if bare else M.reshape(T, h, -1).transpose(1, 0, 2)  # (h, T, d_head)


def block(x, params, layer, n_heads, *, ln=layer_norm, act=gelu, res1=True, res2=True, post_ln=False, mask=True,
          bare=False, scale_by="d_head"):
    p = {k[len(f"l{layer}."):]: v for k, v in params.items() if k.startswith(f"l{layer}.")}
    T, D = x.shape
    dh = D // n_heads

    def attention(h):
        Q, K, V = (_split(h @ p[w], T, n_heads, bare) for w in ("W_q", "W_k", "W_v"))  # (h, T, d_head) each
        S = Q @ K.transpose(0, 2, 1) / math.sqrt(dh if scale_by == "d_head" else D)  # (h, T, T)
        if mask:
            S = np.where(np.tril(np.ones((T, T), bool)), S, -np.inf)
        P = np.exp(S - S.max(axis=-1, keepdims=True))
        P = P / P.sum(axis=-1, keepdims=True)
        O = P @ V  # (h, T, d_head)
        return (O.reshape(T, D) if bare else O.transpose(1, 0, 2).reshape(T, D)) @ p["W_o"]

    def mlp(h):
        return act(h @ p["W_1"] + p["b_1"]) @ p["W_2"] + p["b_2"]

    if post_ln:
        x = ln(x + attention(x), p["ln1.g"], p["ln1.b"])
        return ln(x + mlp(x), p["ln2.g"], p["ln2.b"])
    a = attention(ln(x, p["ln1.g"], p["ln1.b"]))
    x = x + a if res1 else a
    m = mlp(ln(x, p["ln2.g"], p["ln2.b"]))
    return x + m if res2 else m


def gpt_forward(config, params, tokens, *, blk=block, pos=True, final_ln=True):
    T = len(tokens)
    x = params["tok_emb"][tokens] + (params["pos_emb"][:T] if pos else 0)  # (T, d_model)
    for layer in range(config.n_layers):
        x = blk(x, params, layer, config.n_heads)
    if final_ln:
        x = layer_norm(x, params["ln_f.g"], params["ln_f.b"])
    return x @ params["W_out"]  # (T, V)


def generate(config, params, prompt, n_new, *, append=True):
    """Greedy, with one K and V cache per layer (09): the prompt once, then one token per step."""
    H, dh = config.n_heads, config.d_model // config.n_heads
    caches = [(np.zeros((H, 0, dh)), np.zeros((H, 0, dh))) for _ in range(config.n_layers)]

    def step(tokens, start):
        t = len(tokens)
        x = params["tok_emb"][tokens] + params["pos_emb"][start:start + t]  # (t, d_model)
        for layer in range(config.n_layers):
            q = f"l{layer}."
            h = layer_norm(x, params[q + "ln1.g"], params[q + "ln1.b"])
            Q, K, V = (_split(h @ params[q + w], t, H, False) for w in ("W_q", "W_k", "W_v"))  # (h, t, d_head)
            K_c, V_c = np.concatenate([caches[layer][0], K], 1), np.concatenate([caches[layer][1], V], 1)
            if append or start == 0:
                caches[layer] = (K_c, V_c)
            n = K_c.shape[1]
            S = Q @ K_c.transpose(0, 2, 1) / math.sqrt(dh)  # (h, t, n)
            S = np.where(np.arange(n)[None, :] <= n - t + np.arange(t)[:, None], S, -np.inf)
            P = np.exp(S - S.max(axis=-1, keepdims=True))
            P = P / P.sum(axis=-1, keepdims=True)
            x = x + (P @ V_c).transpose(1, 0, 2).reshape(t, -1) @ params[q + "W_o"]
            h2 = layer_norm(x, params[q + "ln2.g"], params[q + "ln2.b"])
            x = x + gelu(h2 @ params[q + "W_1"] + params[q + "b_1"]) @ params[q + "W_2"] + params[q + "b_2"]
        return layer_norm(x[-1], params["ln_f.g"], params["ln_f.b"]) @ params["W_out"]  # (V,)

    out = [int(t) for t in prompt]
    logits = step(np.asarray(prompt), 0)
    for i in range(n_new):
        out.append(int(np.argmax(logits)))
        if i < n_new - 1:
            logits = step(np.asarray(out[-1:]), len(out) - 1)
    return np.array(out)


def generate_recomputing(config, params, prompt, n_new):
    out = list(prompt)
    for _ in range(n_new):
        out.append(int(np.argmax(gpt_forward(config, params, np.array(out))[-1])))
    return np.array(out)


def run(check, fn, capsys):
    ok = check(fn)
    line = capsys.readouterr().out
    assert line.count("\n") == 1, line  # one line
    return bool(ok), line


# ----------------------------------------------------------------------------- the worked solution passes


@pytest.mark.parametrize("name", ["layer_norm", "gelu", "block", "gpt_forward", "generate"])
def test_the_worked_solution_passes(name, capsys):
    ok, line = run(getattr(nb15, f"check_{name}"), globals()[name], capsys)
    assert ok and line.startswith(f"✅ {name}: correct on all"), line


def test_a_generate_without_a_cache_is_named(capsys):
    ok, line = run(nb15.check_generate, generate_recomputing, capsys)
    assert not ok and "the tokens are right" in line and "recomputing the whole text" in line, line
    assert "With a cache it needs at most" in line


def test_the_slipped_model_without_slips_is_helpers_forward():
    config, params, tokenizer = load_model()
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    tokens = tokenizer.encode("Attention by hand")
    np.testing.assert_allclose(nb15._slipped_forward(config, p64, tokens, frozenset()), forward(config, p64, tokens),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(gpt_forward(config, p64, tokens), forward(config, p64, tokens), rtol=0, atol=1e-10)


def test_reference_block_chains_to_helpers_forward():
    config, params, tokenizer = load_model()
    p = {k: v.astype(np.float64) for k, v in params.items()}
    tokens = tokenizer.encode("The cache")
    x = p["tok_emb"][tokens] + p["pos_emb"][:len(tokens)]
    for layer in range(config.n_layers):
        x = nb15.reference_block(x, p, layer, config.n_heads)
    logits = nb15._ln(x, p["ln_f.g"], p["ln_f.b"]) @ p["W_out"]
    np.testing.assert_allclose(logits, forward(config, p, tokens), rtol=0, atol=1e-10)


# ----------------------------------------------------------------------------- each named mistake


def _erf_block(x, params, layer, n_heads):
    return block(x, params, layer, n_heads, act=gelu_erf)


MISTAKES = [
    # layer_norm
    ("layer_norm", lambda x, g, b: layer_norm(x, g, b, ddof=1), "UNBIASED variance"),
    ("layer_norm", lambda x, g, b: layer_norm(x, g, b, eps_where="missing"), "eps is missing"),
    ("layer_norm", lambda x, g, b: layer_norm(x, g, b, eps_where="outside"), "eps is outside the square root"),
    ("layer_norm", lambda x, g, b: layer_norm(x, g, b, axis=0), "over the wrong axis"),
    ("layer_norm", lambda x, g, b: (x - x.mean()) / np.sqrt(x.var() + 1e-5) * g + b, "over the whole array"),
    ("layer_norm", lambda x, g, b: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
     "before the gain and bias"),
    ("layer_norm", lambda x, g, b: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * b + g,
     "gain and bias are swapped"),
    ("layer_norm", lambda x, g, b: (x - x.mean(-1, keepdims=True)) / (x.var(-1, keepdims=True) + 1e-5) * g + b,
     "not by its square root"),
    # gelu
    ("gelu", gelu_erf, "erf form"),
    ("gelu", lambda x: np.maximum(x, 0), "ReLU"),
    ("gelu", lambda x: x / (1 + np.exp(-1.702 * x)), "sigmoid approximation"),
    ("gelu", lambda x: x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))), "½ is missing"),
    ("gelu", lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**2))), "cube is a square"),
    ("gelu", lambda x: 0.5 * x * (1 + np.tanh(x + 0.044715 * x**3)), "√(2/π) is missing"),
    # block
    ("block", lambda x, p, l, h: block(x, p, l, h, res1=False), "attention's residual is missing"),
    ("block", lambda x, p, l, h: block(x, p, l, h, res2=False), "MLP's residual is missing"),
    ("block", lambda x, p, l, h: block(x, p, l, h, res1=False, res2=False), "both residuals are missing"),
    ("block", lambda x, p, l, h: block(x, p, l, h, post_ln=True), "post-LN"),
    ("block", lambda x, p, l, h: block(x, p, l, h, mask=False), "no causal mask"),
    ("block", lambda x, p, l, h: block(x, p, l, h, bare=True), "heads are mixed up"),
    ("block", lambda x, p, l, h: block(x, p, l, h, scale_by="d_model"), "divided by √d_model"),
    ("block", lambda x, p, l, h: block(x, p, 0, h), "used layer 0's parameters"),
    ("block", _erf_block, "erf form"),
    ("block", lambda x, p, l, h: block(x, p, l, h, ln=lambda *a: layer_norm(*a, ddof=1)), "unbiased variance"),
    # gpt_forward
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, pos=False), "positions are not added"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, final_ln=False), "last LayerNorm is missing"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, blk=lambda *a: block(*a, mask=False)), "no causal mask"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, blk=lambda *a: block(*a, bare=True)), "heads are mixed up"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, blk=lambda *a: block(*a, res1=False)),
     "attention's residual is missing"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, blk=lambda *a: block(*a, post_ln=True)), "post-LN"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t)[-1], "last position's logits only"),
    ("gpt_forward", lambda c, p, t: np.exp(z := gpt_forward(c, p, t)) / np.exp(z).sum(-1, keepdims=True),
     "these are probabilities"),
    # generate
    ("generate", lambda c, p, pr, n: generate(c, p, pr, n)[len(pr):], "new tokens only"),
    ("generate", lambda c, p, pr, n: generate(c, p, pr, n, append=False), "never reach the cache"),
]


@pytest.mark.parametrize(("name", "fn", "words"), MISTAKES, ids=[f"{m[0]}: {m[2]}" for m in MISTAKES])
def test_each_mistake_is_named(name, fn, words, capsys):
    ok, line = run(getattr(nb15, f"check_{name}"), fn, capsys)
    assert not ok and line.startswith(f"❌ {name}: on input ") and words in line, line


# ----------------------------------------------------------------------------- what any function can do wrong

ARGS = {"layer_norm": 3, "gelu": 1, "block": 4, "gpt_forward": 3, "generate": 4}
NAMES = list(ARGS)


def _stub(*args):
    ...


def _raises(*args):
    value = 1 / 0  # the student's line
    return value


@pytest.mark.parametrize("name", NAMES)
def test_a_stub_is_not_answered_yet(name, capsys):
    ok, line = run(getattr(nb15, f"check_{name}"), _stub, capsys)
    assert not ok and line.startswith(f"❌ {name}: Not answered yet"), line


@pytest.mark.parametrize("name", NAMES)
def test_an_exception_is_reported_with_its_type_message_and_line(name, capsys):
    ok, line = run(getattr(nb15, f"check_{name}"), _raises, capsys)
    assert not ok and "raised ZeroDivisionError (division by zero)" in line, line
    assert "of _raises: `value = 1 / 0  # the student's line`" in line


@pytest.mark.parametrize("name", NAMES)
def test_a_list_is_named(name, capsys):
    right = globals()[name]
    ok, line = run(getattr(nb15, f"check_{name}"), lambda *a: np.asarray(right(*a)).tolist(), capsys)
    assert not ok and "returned a Python list, with the right numbers; return a NumPy array" in line, line


@pytest.mark.parametrize("name", NAMES)
def test_a_wrong_shape_is_named(name, capsys):
    right = globals()[name]
    ok, line = run(getattr(nb15, f"check_{name}"), lambda *a: np.append(right(*a), 0), capsys)
    assert not ok and "returned shape" in line and "expected" in line or "one token too many" in line, line


@pytest.mark.parametrize("name", ["layer_norm", "gelu", "block", "gpt_forward"])
def test_nan_is_named(name, capsys):
    right = globals()[name]

    def nan(*a):
        out = np.array(right(*a), dtype=float)
        out.flat[0] = np.nan
        return out

    ok, line = run(getattr(nb15, f"check_{name}"), nan, capsys)
    assert not ok and "holds NaN (not a number), first at index" in line, line


def test_float_token_ids_are_named(capsys):
    ok, line = run(nb15.check_generate, lambda *a: generate(*a).astype(float), capsys)
    assert not ok and "token ids are integers" in line, line


def test_changing_the_input_in_place_is_named(capsys):
    def ln_in_place(x, g, b):
        x -= x.mean(axis=-1, keepdims=True)
        x /= np.sqrt((x**2).mean(axis=-1, keepdims=True) + 1e-5)
        return x * g + b

    ok, line = run(nb15.check_layer_norm, ln_in_place, capsys)
    assert not ok and "changed its input x in place" in line, line

    def block_in_place(x, params, layer, n_heads):
        params[f"l{layer}.W_q"] *= 1.0  # writes into the caller's parameters (same values)
        params[f"l{layer}.b_1"] += 1.0
        return block(x, params, layer, n_heads)

    ok, line = run(nb15.check_block, block_in_place, capsys)
    assert not ok and "changed its input params['l0.b_1'] in place" in line, line


def test_not_a_function_is_named(capsys):
    ok, line = run(nb15.check_gelu, np.zeros(3), capsys)
    assert not ok and "expected a function to call" in line, line


def test_explain_gpt_forward_returns_logits_and_the_checks_sentence(capsys):
    config, params, tokenizer = load_model()
    tokens = tokenizer.encode("The cache")
    logits, why = nb15.explain_gpt_forward(gpt_forward, config, params, tokens)
    assert why is None and logits.shape == (len(tokens), config.vocab_size) and logits.dtype == np.float64
    logits, why = nb15.explain_gpt_forward(lambda c, p, t: gpt_forward(c, p, t, pos=False), config, params, tokens)
    assert logits.shape == (len(tokens), config.vocab_size) and "positions are not added" in why
    assert nb15.explain_gpt_forward(_stub, config, params, tokens) == (None, "Not answered yet")
    logits, why = nb15.explain_gpt_forward(_raises, config, params, tokens)
    assert logits is None and "ZeroDivisionError" in why
    assert capsys.readouterr().out == ""  # explain prints nothing; the check prints


def test_ready_falls_back_to_the_reference(capsys):
    assert nb15.ready(gelu, True, forward, "gelu") is gelu
    assert "Using your gelu." in capsys.readouterr().out
    assert nb15.ready(_stub, False, forward, "gpt_forward") is forward
    assert "helpers.language_model.forward stands in" in capsys.readouterr().out
