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
          bare=False, bare_merge=None, scale_by="d_head", mask_after=False, axis=-1, W_o=True, biases=True):
    p = {k[len(f"l{layer}."):]: v for k, v in params.items() if k.startswith(f"l{layer}.")}
    T, D = x.shape
    dh = D // n_heads
    bare_merge = bare if bare_merge is None else bare_merge
    if ln is None:
        ln = lambda y, g, b: y  # noqa: E731 - no LayerNorm

    def attention(h):
        Q, K, V = (_split(h @ p[w], T, n_heads, bare) for w in ("W_q", "W_k", "W_v"))  # (h, T, d_head) each
        S = Q @ K.transpose(0, 2, 1) / {"d_head": math.sqrt(dh), "d_model": math.sqrt(D), "none": 1}[scale_by]
        causal = np.tril(np.ones((T, T), bool))
        if mask and not mask_after:
            S = np.where(causal, S, -np.inf)  # (h, T, T)
        P = np.exp(S - S.max(axis=axis, keepdims=True))
        P = P / P.sum(axis=axis, keepdims=True)
        if mask_after:
            P = np.where(causal, P, 0)
        O = P @ V  # (h, T, d_head)
        concat = O.reshape(T, D) if bare_merge else O.transpose(1, 0, 2).reshape(T, D)
        return concat @ p["W_o"] if W_o else concat

    def mlp(h):
        if not biases:
            return act(h @ p["W_1"]) @ p["W_2"]
        return act(h @ p["W_1"] + p["b_1"]) @ p["W_2"] + p["b_2"]

    if post_ln:
        x = ln(x + attention(x), p["ln1.g"], p["ln1.b"])
        return ln(x + mlp(x), p["ln2.g"], p["ln2.b"])
    a = attention(ln(x, p["ln1.g"], p["ln1.b"]))
    x = x + a if res1 else a
    m = mlp(ln(x, p["ln2.g"], p["ln2.b"]))
    return x + m if res2 else m


def gpt_forward(config, params, tokens, *, blk=block, pos="slice", final_ln=True, out="W_out", layers=None,
                same_layer=False):
    T = len(tokens)
    x = params["tok_emb"][tokens]  # (T, d_model)
    if pos == "slice":
        x = x + params["pos_emb"][:T]
    elif pos == "token":
        x = x + params["pos_emb"][tokens]  # the mistake: looked up by token id
    for layer in range(config.n_layers if layers is None else layers):
        x = blk(x, params, 0 if same_layer else layer, config.n_heads)
    if final_ln:
        x = layer_norm(x, params["ln_f.g"], params["ln_f.b"])
    return x @ (params["W_out"] if out == "W_out" else params["tok_emb"].T)  # (T, V)


def generate(config, params, prompt, n_new, *, append=True, see_self=True, pos0=False):
    """Greedy, with one K and V cache per layer (09): the prompt once, then one token per step."""
    H, dh = config.n_heads, config.d_model // config.n_heads
    caches = [(np.zeros((H, 0, dh)), np.zeros((H, 0, dh))) for _ in range(config.n_layers)]

    def step(tokens, start):
        t = len(tokens)
        x = params["tok_emb"][tokens] + params["pos_emb"][0 if pos0 and start else start:][:t]  # (t, d_model)
        for layer in range(config.n_layers):
            q = f"l{layer}."
            h = layer_norm(x, params[q + "ln1.g"], params[q + "ln1.b"])
            Q, K, V = (_split(h @ params[q + w], t, H, False) for w in ("W_q", "W_k", "W_v"))  # (h, t, d_head)
            K_c, V_c = np.concatenate([caches[layer][0], K], 1), np.concatenate([caches[layer][1], V], 1)
            if append or start == 0:
                caches[layer] = (K_c, V_c)
            if not see_self and start:
                K_c, V_c = K_c[:, :-1], V_c[:, :-1]  # attends before its own key and value are in the cache
            n = K_c.shape[1]
            S = Q @ K_c.transpose(0, 2, 1) / math.sqrt(dh)  # (h, t, n)
            if see_self or not start:
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


def generate_recomputing(config, params, prompt, n_new, *, fwd=None, row=-1):
    fwd = fwd or gpt_forward
    out = list(prompt)
    for _ in range(n_new):
        out.append(int(np.argmax(fwd(config, params, np.array(out))[row])))
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
    ("layer_norm", lambda x, g, b: (x - x.mean(-1, keepdims=True)) * g + b, "only subtracts the mean"),
    ("layer_norm", lambda x, g, b: (x - x.mean(-1)) / np.sqrt(x.var(-1) + 1e-5) * g + b, "which lines up with x"),
    # gelu
    ("gelu", gelu_erf, "erf form"),
    ("gelu", lambda x: np.maximum(x, 0), "ReLU"),
    ("gelu", lambda x: x / (1 + np.exp(-1.702 * x)), "sigmoid approximation"),
    ("gelu", lambda x: x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))), "½ is missing"),
    ("gelu", lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**2))), "cube is a square"),
    ("gelu", lambda x: 0.5 * x * (1 + np.tanh(x + 0.044715 * x**3)), "√(2/π) is missing"),
    ("gelu", lambda x: 0.5 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))), "factor x is missing"),
    ("gelu", lambda x: 0.5 * x * (1 + np.tanh(2 / math.pi * (x + 0.044715 * x**3))), "this uses 2/π"),
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
    ("block", lambda x, p, l, h: block(x, p, l, h, ln=lambda *a: layer_norm(*a, eps_where="missing")), "has no eps"),
    ("block", lambda x, p, l, h: block(x, p, l, h, ln=lambda *a: layer_norm(*a, eps_where="outside")),
     "eps is outside the square root"),
    ("block", lambda x, p, l, h: block(x, p, l, h, ln=None), "LayerNorms are missing"),
    ("block", lambda x, p, l, h: block(x, p, l, h, mask_after=True), "mask was applied after the softmax"),
    ("block", lambda x, p, l, h: block(x, p, l, h, bare=True, bare_merge=False), "split with a bare reshape"),
    ("block", lambda x, p, l, h: block(x, p, l, 1), "one head over all d_model columns"),
    ("block", lambda x, p, l, h: block(x, p, l, h, scale_by="none"), "not scaled"),
    ("block", lambda x, p, l, h: block(x, p, l, h, axis=-2), "softmax ran over the queries"),
    ("block", lambda x, p, l, h: block(x, p, l, h, W_o=False), "W_o is missing"),
    ("block", lambda x, p, l, h: block(x, p, l, h, biases=False), "biases b_1 and b_2 are missing"),
    # gpt_forward
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, pos=None), "positions are not added"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, pos="token"), "looked up by token id"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, out="tied"), "(no weight tying)"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, layers=1), "only layer 0 ran"),
    ("gpt_forward", lambda c, p, t: gpt_forward(c, p, t, same_layer=True), "every block used layer 0's parameters"),
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
    ("generate", lambda c, p, pr, n: generate(c, p, pr, n, see_self=False), "attended before its own key and value"),
    ("generate", lambda c, p, pr, n: generate(c, p, pr, n, pos0=True), "put at position 0"),
    ("generate", lambda c, p, pr, n: generate(c, p, pr, n + 1), "one token too many"),
    ("generate", lambda c, p, pr, n: generate(c, p, pr, n)[:-1], "one token too few"),
    ("generate", lambda c, p, pr, n: generate_recomputing(c, p, pr, n, row=0), "FIRST position's logits"),
    ("generate", lambda c, p, pr, n: generate_recomputing(c, p, pr, n, fwd=lambda *a: gpt_forward(*a, pos=None)),
     "a model without positions"),
    ("generate", lambda c, p, pr, n: generate_recomputing(c, p, pr, n, fwd=lambda *a: gpt_forward(*a, final_ln=False)),
     "without the last LayerNorm"),
    ("generate", lambda c, p, pr, n: generate_recomputing(
        c, p, pr, n, fwd=lambda *a: gpt_forward(*a, blk=lambda *b: block(*b, res1=False))), "miss a residual"),
    ("generate", lambda c, p, pr, n: generate_recomputing(
        c, p, pr, n, fwd=lambda *a: gpt_forward(*a, blk=lambda *b: block(*b, res2=False))), "miss the MLP's residual"),
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


def test_none_on_a_later_input_is_a_missing_return(capsys):
    ok, line = run(nb15.check_gelu, lambda x: gelu(x) if x.ndim == 1 else None, capsys)
    assert not ok and "on input 2 of" in line and "returned None on this input: is a `return` missing" in line, line


def test_an_exception_from_a_stub_it_calls_says_so(capsys):
    def block_on_a_stub(x, params, layer, n_heads):
        h = _stub(x)  # a layer_norm still `...`
        return x + h @ params[f"l{layer}.W_q"]

    ok, line = run(nb15.check_block, block_on_a_stub, capsys)
    assert not ok and "at line" in line and "`h` is None there" in line and "a stub above?" in line, line
    ok, line = run(nb15.check_gelu, lambda x: _stub(x) + 1, capsys)
    assert not ok and "raised TypeError" in line and "Something was None" in line, line


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
    logits, why = nb15.explain_gpt_forward(lambda c, p, t: gpt_forward(c, p, t, pos=None), config, params, tokens)
    assert logits.shape == (len(tokens), config.vocab_size) and "positions are not added" in why
    logits, why = nb15.explain_gpt_forward(_stub, config, params, tokens)
    assert logits is None and why == nb15.NOT_ANSWERED_SENTENCE and why.startswith("Not answered yet")
    logits, why = nb15.explain_gpt_forward(_raises, config, params, tokens)
    assert logits is None and "ZeroDivisionError" in why
    assert capsys.readouterr().out == ""  # explain prints nothing; the check prints


def test_ready_falls_back_to_the_reference(capsys):
    assert nb15.ready(gelu, True, forward, "gelu") is gelu
    assert "Using your gelu." in capsys.readouterr().out
    assert nb15.ready(_stub, False, forward, "gpt_forward") is forward
    assert "helpers.language_model.forward stands in" in capsys.readouterr().out


def test_the_generate_cases_have_no_near_ties():
    """Greedy text is judged token by token: every argmax of the check's cases wins by far more than float64
    rounding, so any correct implementation gives the same tokens (the gap is in logits)."""
    for case in nb15._generate_cases():
        config, params, prompt, n_new = case.args
        if n_new == 0:
            continue
        out = nb15.greedy_generate(config, params, prompt, n_new)
        top2 = np.sort(forward(config, params, out[:-1])[len(prompt) - 1:], axis=-1)[:, -2:]  # (n_new, 2)
        assert (top2[:, 1] - top2[:, 0]).min() > 1e-3, case.label
