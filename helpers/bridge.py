"""Notebook 12's model in PyTorch and in Hugging Face transformers, and back: one model, three libraries.

Needs the optional extra (``make torch``, or ``pip install -e '.[torch]'``): PyTorch and transformers. Nothing
here downloads anything; a transformers model is built from our parameters, or saved to and loaded from a
local folder by the caller.

Shape notation, as in ``helpers.language_model``:

    B        sequences in a batch
    T        tokens in a sequence, at most ``context``
    V        vocabulary size
    d_model  width of the residual stream; h heads of d_head = d_model / h columns each
    d_ff     width of the MLP's hidden layer
    L        layers

Where our parameters go (ours multiply rows: x @ W, W is (d_in, d_out)):

    ours                       to_torch (nn.Linear: x @ weight.T)      to_transformers (GPT-2; Conv1D: x @ weight)
    tok_emb (V, d_model)       tok_emb.weight                          transformer.wte.weight
    pos_emb (context, d_model) pos_emb.weight                          transformer.wpe.weight
    l{i}.ln1.g, .b             blocks[i].ln1.weight, .bias             transformer.h[i].ln_1.weight, .bias
    l{i}.W_q, W_k, W_v         blocks[i].W_q.weight = W_qᵀ, ...        transformer.h[i].attn.c_attn.weight
                                                                         = [W_q | W_k | W_v] (d_model, 3·d_model)
                                                                         (its bias: 0)
    l{i}.W_o                   blocks[i].W_o.weight = W_oᵀ             transformer.h[i].attn.c_proj.weight (bias 0)
    l{i}.ln2.g, .b             blocks[i].ln2.weight, .bias             transformer.h[i].ln_2.weight, .bias
    l{i}.W_1, b_1              blocks[i].W_1.weight = W_1ᵀ, .bias      transformer.h[i].mlp.c_fc.weight, .bias
    l{i}.W_2, b_2              blocks[i].W_2.weight = W_2ᵀ, .bias      transformer.h[i].mlp.c_proj.weight, .bias
    ln_f.g, .b                 ln_f.weight, .bias                      transformer.ln_f.weight, .bias
    W_out (d_model, V)         W_out.weight = W_outᵀ                   lm_head.weight = W_outᵀ (not tied to wte)

GPT-2's settings that make it this model: activation ``gelu_new`` (GELU's tanh form, ``helpers.layers.gelu``),
LayerNorm eps 1e-5, scores scaled by 1/√d_head, dropout 0, ``tie_word_embeddings=False``. Every function
keeps the parameters' float type (float16, float32 or float64) and checks its arguments, raising
``TypeError``/``ValueError`` that name the argument; ``from_transformers`` refuses, with a sentence that says
why, a GPT-2 our parameters cannot hold.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from helpers.language_model import GPTConfig, check_config, check_params, param_shapes
from helpers.layers import LN_EPS

if TYPE_CHECKING:  # for the annotations only: transformers is imported when a function needs it
    import transformers

_MISSING = ("helpers.bridge needs PyTorch and Hugging Face transformers, the course's optional extra: run "
            "`make torch` in the repository folder (or `pip install -e '.[torch]'`), then restart the kernel")

try:
    import torch
    from torch import nn
    from torch.nn import functional as F
except ModuleNotFoundError:
    raise ModuleNotFoundError(_MISSING) from None

__all__ = ["to_torch", "to_transformers", "from_transformers", "from_torch", "torch_grads", "TorchGPT",
           "TorchBlock"]

_TORCH_DTYPES = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32,
                 np.dtype(np.float64): torch.float64}
_ACTIVATION = "gelu_new"  # transformers' name of GELU's tanh form, the GELU of GPT-2 and of helpers.layers


def _transformers() -> ModuleType:
    """The transformers package, or the sentence that says how to install it."""
    try:
        import transformers
    except ModuleNotFoundError:
        raise ModuleNotFoundError(_MISSING) from None
    return transformers


# --------------------------------------------------------------------------- the model of 12 as a PyTorch module


class TorchBlock(nn.Module):
    """One pre-LN block: x += Attn(LN₁(x)) W_o, then x += GELU(LN₂(x) W_1 + b_1) W_2 + b_2; x (B, T, d_model)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        D, F_ = config.d_model, config.d_ff
        self.n_heads = config.n_heads
        self.ln1 = nn.LayerNorm(D, eps=LN_EPS)
        self.W_q = nn.Linear(D, D, bias=False)  # weight (d_model, d_model) = W_qᵀ: nn.Linear stores (out, in)
        self.W_k = nn.Linear(D, D, bias=False)
        self.W_v = nn.Linear(D, D, bias=False)
        self.W_o = nn.Linear(D, D, bias=False)
        self.ln2 = nn.LayerNorm(D, eps=LN_EPS)
        self.W_1 = nn.Linear(D, F_)  # weight (d_ff, d_model) = W_1ᵀ, bias b_1 (d_ff,)
        self.W_2 = nn.Linear(F_, D)  # weight (d_model, d_ff) = W_2ᵀ, bias b_2 (d_model,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        H = self.n_heads
        h1 = self.ln1(x)  # (B, T, d_model)
        Q = self.W_q(h1).view(B, T, H, D // H).transpose(1, 2)  # (B, T, d_model) -> (B, h, T, d_head): 04's split
        K = self.W_k(h1).view(B, T, H, D // H).transpose(1, 2)  # (B, h, T, d_head)
        V = self.W_v(h1).view(B, T, H, D // H).transpose(1, 2)  # (B, h, T, d_head)
        O = F.scaled_dot_product_attention(Q, K, V, is_causal=True)  # (B, h, T, d_head), scale 1/√d_head
        x = x + self.W_o(O.transpose(1, 2).reshape(B, T, D))  # (B, h, T, d_head) -> (B, T, d_model) -> W_o
        a = self.W_1(self.ln2(x))  # (B, T, d_model) -> (B, T, d_ff)
        return x + self.W_2(F.gelu(a, approximate="tanh"))  # (B, T, d_ff) -> (B, T, d_model)


class TorchGPT(nn.Module):
    """Notebook 12's model: ``module(tokens)`` for a LongTensor (B, T) gives logits (B, T, V). ``config`` is ours."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = check_config(config)
        self.tok_emb = nn.Embedding(config.vocab_size, config.d_model)  # weight (V, d_model), as ours
        self.pos_emb = nn.Embedding(config.context, config.d_model)  # weight (context, d_model)
        self.blocks = nn.ModuleList(TorchBlock(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model, eps=LN_EPS)
        self.W_out = nn.Linear(config.d_model, config.vocab_size, bias=False)  # weight (V, d_model) = W_outᵀ

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        c = self.config
        if not isinstance(tokens, torch.Tensor) or tokens.dtype not in (torch.int64, torch.int32) or tokens.dim() != 2:
            what = f"a {tokens.dtype} tensor of shape {tuple(tokens.shape)}" if isinstance(tokens, torch.Tensor) \
                else f"a {type(tokens).__name__}"
            raise TypeError(f"tokens must be an integer tensor (B, T) of token ids (torch.long), got {what}")
        T = tokens.shape[1]
        if not 1 <= T <= c.context:
            raise ValueError(f"tokens has shape {tuple(tokens.shape)}: T = {T}, but the model reads 1 .. "
                             f"context = {c.context} tokens")
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= c.vocab_size):
            raise ValueError(f"tokens holds ids outside 0 .. {c.vocab_size - 1} (vocab_size = {c.vocab_size}): "
                             f"min {int(tokens.min())}, max {int(tokens.max())}")
        x = self.tok_emb(tokens) + self.pos_emb.weight[:T]  # (B, T, d_model) + (T, d_model)
        for block in self.blocks:
            x = block(x)  # (B, T, d_model)
        return self.W_out(self.ln_f(x))  # (B, T, d_model) -> (B, T, V)


def _torch_layout(config: GPTConfig) -> dict[str, tuple[str, bool]]:
    """Our name -> (the TorchGPT parameter's name, whether it holds our matrix transposed)."""
    layout = {"tok_emb": ("tok_emb.weight", False), "pos_emb": ("pos_emb.weight", False)}
    for i in range(config.n_layers):
        p, b = f"l{i}.", f"blocks.{i}."
        layout.update({p + "ln1.g": (b + "ln1.weight", False), p + "ln1.b": (b + "ln1.bias", False),
                       p + "ln2.g": (b + "ln2.weight", False), p + "ln2.b": (b + "ln2.bias", False),
                       p + "b_1": (b + "W_1.bias", False), p + "b_2": (b + "W_2.bias", False)})
        for W in ("W_q", "W_k", "W_v", "W_o", "W_1", "W_2"):
            layout[p + W] = (b + W + ".weight", True)
    layout.update({"ln_f.g": ("ln_f.weight", False), "ln_f.b": ("ln_f.bias", False), "W_out": ("W_out.weight", True)})
    return layout


def _tensor(W: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(W))  # a copy only where W is a transposed view


def _array(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().copy()  # our own memory: changing the module later does not change it


def to_torch(config: GPTConfig, params: dict[str, np.ndarray]) -> TorchGPT:
    """The model as a PyTorch module (``TorchGPT``) in the params' dtype: ``module(tokens (B, T))`` -> (B, T, V)."""
    config = check_config(config)
    params = check_params(config, params)
    dtype = _TORCH_DTYPES[params["tok_emb"].dtype]
    module = TorchGPT(config).to(dtype)
    state = {name: _tensor(params[ours].T if transposed else params[ours])
             for ours, (name, transposed) in _torch_layout(config).items()}
    module.load_state_dict(state, strict=True)  # every parameter set, none left at its random start
    return module.eval()


def _check_torch_gpt(module: object) -> TorchGPT:
    if not isinstance(module, TorchGPT):
        raise TypeError(f"module must be a TorchGPT (what to_torch returns), got {type(module).__name__}")
    return module


def from_torch(module: TorchGPT) -> tuple[GPTConfig, dict[str, np.ndarray]]:
    """(config, params) of a ``TorchGPT``: the inverse of ``to_torch`` (each matrix transposed back, a copy)."""
    module = _check_torch_gpt(module)
    state = module.state_dict()
    params = {ours: _array(state[name].T if transposed else state[name])
              for ours, (name, transposed) in _torch_layout(module.config).items()}
    return module.config, {name: params[name] for name in param_shapes(module.config)}


def torch_grads(module: TorchGPT) -> dict[str, np.ndarray]:
    """Autograd's gradients of a ``TorchGPT`` (after ``loss.backward()``), under our names and in our layout."""
    module = _check_torch_gpt(module)
    named = dict(module.named_parameters())
    grads = {}
    for ours, (name, transposed) in _torch_layout(module.config).items():
        g = named[name].grad
        if g is None:
            raise ValueError(f"{name} has no gradient (its .grad is None): call loss.backward() on a loss computed "
                             "from module(tokens) first")
        grads[ours] = _array(g.T if transposed else g)
    return {name: grads[name] for name in param_shapes(module.config)}


# --------------------------------------------------------------------------- GPT-2 in Hugging Face transformers


def _gpt2_config(config: GPTConfig) -> transformers.GPT2Config:
    return _transformers().GPT2Config(
        vocab_size=config.vocab_size, n_positions=config.context, n_embd=config.d_model, n_layer=config.n_layers,
        n_head=config.n_heads, n_inner=config.d_ff, activation_function=_ACTIVATION, layer_norm_epsilon=LN_EPS,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=False,
        bos_token_id=None, eos_token_id=None)  # GPT-2's 50256 is no id of ours: generate stops only at its length


def to_transformers(config: GPTConfig, params: dict[str, np.ndarray]) -> transformers.GPT2LMHeadModel:
    """The model as transformers' ``GPT2LMHeadModel`` in the params' dtype (biases of attention 0, untied W_out)."""
    config = check_config(config)
    params = check_params(config, params)
    transformers = _transformers()
    dtype = _TORCH_DTYPES[params["tok_emb"].dtype]
    model = transformers.GPT2LMHeadModel(_gpt2_config(config)).to(dtype)
    D, p = config.d_model, params
    zeros = np.zeros(3 * D, dtype=p["tok_emb"].dtype)  # (3·d_model,) the attention's biases
    state = {"transformer.wte.weight": p["tok_emb"], "transformer.wpe.weight": p["pos_emb"],
             "transformer.ln_f.weight": p["ln_f.g"], "transformer.ln_f.bias": p["ln_f.b"],
             "lm_head.weight": p["W_out"].T}  # (V, d_model): an nn.Linear
    for i in range(config.n_layers):
        q, h = f"l{i}.", f"transformer.h.{i}."
        state.update({
            h + "ln_1.weight": p[q + "ln1.g"], h + "ln_1.bias": p[q + "ln1.b"],
            h + "attn.c_attn.weight": np.concatenate([p[q + "W_q"], p[q + "W_k"], p[q + "W_v"]], axis=1),  # (D, 3D)
            h + "attn.c_attn.bias": zeros, h + "attn.c_proj.weight": p[q + "W_o"], h + "attn.c_proj.bias": zeros[:D],
            h + "ln_2.weight": p[q + "ln2.g"], h + "ln_2.bias": p[q + "ln2.b"],
            h + "mlp.c_fc.weight": p[q + "W_1"], h + "mlp.c_fc.bias": p[q + "b_1"],  # Conv1D: (in, out), as ours
            h + "mlp.c_proj.weight": p[q + "W_2"], h + "mlp.c_proj.bias": p[q + "b_2"]})
    model.load_state_dict({k: _tensor(v) for k, v in state.items()}, strict=True)
    return model.eval()


def _refuse_attention_biases(model: transformers.GPT2LMHeadModel, n_layers: int) -> None:
    for i in range(n_layers):
        attn = model.transformer.h[i].attn
        for part in ("c_attn", "c_proj"):
            b = getattr(attn, part).bias
            b = None if b is None else b.detach()
            if b is not None and bool((b != 0).any()):
                raise ValueError(
                    f"model.transformer.h[{i}].attn.{part}.bias has {int((b != 0).sum())} non-zero entries (largest "
                    f"|b| = {float(b.abs().max()):.3g}): this course's attention has no biases "
                    "(Q = LN(x) W_q, no + b), "
                    "so our parameters cannot hold them")


def from_transformers(model: object) -> tuple[GPTConfig, dict[str, np.ndarray]]:
    """(config, params) of a ``GPT2LMHeadModel``, in its dtype: the inverse of ``to_transformers``, exact.

    Refuses, with a sentence that says which, a GPT-2 that is not this model: attention biases not 0 (the MLP's
    biases are b_1, b_2), an activation other than ``gelu_new``, another LayerNorm eps or score scale, cross-
    attention, or an output layer declared tied to the token embeddings but holding other numbers. A GPT-2
    whose ``lm_head`` IS its ``wte`` (tied) is held as W_out = tok_embᵀ, a copy: the same logits, no longer tied.
    """
    transformers = _transformers()
    if not isinstance(model, transformers.GPT2LMHeadModel):
        raise TypeError(f"model must be a transformers GPT2LMHeadModel (what to_transformers returns), "
                        f"got {type(model).__name__}")
    c = model.config
    if c.activation_function != _ACTIVATION:
        raise ValueError(f"model.config.activation_function is {c.activation_function!r}, but this course's MLP uses "
                         f"GELU's tanh form, which transformers calls {_ACTIVATION!r}: another activation computes "
                         "another function, which our parameters cannot hold")
    if not math.isclose(c.layer_norm_epsilon, LN_EPS, rel_tol=0, abs_tol=0):
        raise ValueError(f"model.config.layer_norm_epsilon is {c.layer_norm_epsilon}, but our LayerNorm adds "
                         f"{LN_EPS} to the variance")
    if not c.scale_attn_weights or c.scale_attn_by_inverse_layer_idx:
        raise ValueError("model scales its scores by something other than 1/√d_head (config.scale_attn_weights = "
                         f"{c.scale_attn_weights}, scale_attn_by_inverse_layer_idx = "
                         f"{c.scale_attn_by_inverse_layer_idx})"
                         ": our attention divides the scores by √d_head")
    if c.add_cross_attention:
        raise ValueError("model has cross-attention (config.add_cross_attention = True): our blocks attend to their "
                         "own tokens only")
    dtype = model.transformer.wte.weight.dtype
    if dtype not in _TORCH_DTYPES.values():
        raise TypeError(f"model holds {dtype} parameters, which NumPy has no type for: convert it first, "
                        "e.g. model.float()")
    wte, lm = model.transformer.wte.weight, model.lm_head.weight
    if getattr(c, "tie_word_embeddings", False) and lm is not wte and not torch.equal(lm, wte):
        raise ValueError("model declares its output layer tied to its token embeddings (config.tie_word_embeddings "
                         "= True), but lm_head.weight and transformer.wte.weight hold different numbers: our "
                         "parameters hold one W_out and one tok_emb, and cannot say which of the two this model is "
                         "(call model.tie_weights(), or set tie_word_embeddings=False)")
    config = GPTConfig(vocab_size=wte.shape[0], context=model.transformer.wpe.weight.shape[0], d_model=c.n_embd,
                       n_heads=c.n_head, n_layers=c.n_layer, d_ff=c.n_inner or 4 * c.n_embd)
    _refuse_attention_biases(model, config.n_layers)
    s = model.state_dict()
    params = {"tok_emb": _array(s["transformer.wte.weight"]), "pos_emb": _array(s["transformer.wpe.weight"])}
    D = config.d_model
    for i in range(config.n_layers):
        q, h = f"l{i}.", f"transformer.h.{i}."
        W_qkv = _array(s[h + "attn.c_attn.weight"])  # (d_model, 3·d_model) = [W_q | W_k | W_v]
        params.update({
            q + "ln1.g": _array(s[h + "ln_1.weight"]), q + "ln1.b": _array(s[h + "ln_1.bias"]),
            q + "W_q": W_qkv[:, :D].copy(), q + "W_k": W_qkv[:, D:2 * D].copy(), q + "W_v": W_qkv[:, 2 * D:].copy(),
            q + "W_o": _array(s[h + "attn.c_proj.weight"]),
            q + "ln2.g": _array(s[h + "ln_2.weight"]), q + "ln2.b": _array(s[h + "ln_2.bias"]),
            q + "W_1": _array(s[h + "mlp.c_fc.weight"]), q + "b_1": _array(s[h + "mlp.c_fc.bias"]),
            q + "W_2": _array(s[h + "mlp.c_proj.weight"]), q + "b_2": _array(s[h + "mlp.c_proj.bias"])})
    params.update({"ln_f.g": _array(s["transformer.ln_f.weight"]), "ln_f.b": _array(s["transformer.ln_f.bias"]),
                   "W_out": _array(lm.T)})  # (d_model, V)
    params = {name: params[name] for name in param_shapes(config)}  # init_params' order
    return config, check_params(config, params)
