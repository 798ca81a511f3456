"""Tests of helpers.bridge: notebook 12's model in PyTorch and in transformers gives our numbers, and comes back.

Needs the optional extra (`make torch`; `make test-torch` runs these); without it the module is skipped with the
reason. Logits are compared in float64 to 1e-10 (what they differ by is float rounding, about 1e-15 here);
the round trips are exact (np.array_equal, dtype included). No model hub is reached: models are built from our
parameters, and saved to and loaded from a temporary folder.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("torch", reason="torch not installed: tests/test_bridge.py needs the optional extra (`make torch`)")
pytest.importorskip("transformers",
                    reason="transformers not installed: tests/test_bridge.py needs the optional extra (`make torch`)")

import torch  # noqa: E402
import transformers  # noqa: E402

from helpers import bridge  # noqa: E402
from helpers.language_model import GPTConfig, forward, generate, init_params, load_model, loss_and_grads  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach a hub (make test-torch sets it too)
transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

SHAPES = [  # (vocab_size, context, d_model, n_heads, n_layers, d_ff): one head, several, deeper, d_ff not 4·d_model
    GPTConfig(7, 5, 4, 1, 1, 8),
    GPTConfig(11, 9, 12, 3, 2, 20),
    GPTConfig(5, 16, 16, 4, 3, 64),
    GPTConfig(30, 6, 8, 8, 1, 3),
]
TOL = 1e-10


def _random_model(config: GPTConfig, seed: int = 0, dtype: type = np.float64) -> dict[str, np.ndarray]:
    """init_params, then every parameter moved by N(0, 0.3²): LayerNorm gains not 1, biases not 0, logits not flat."""
    rng = np.random.default_rng(seed)
    p = init_params(config, seed=seed, dtype=np.float64)
    return {k: (v + 0.3 * rng.standard_normal(v.shape)).astype(dtype) for k, v in p.items()}


def _tokens(config: GPTConfig, B: int = 3, T: int | None = None, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, config.vocab_size, (B, T or config.context))  # (B, T)


@pytest.mark.parametrize("config", SHAPES, ids=str)
def test_to_torch_and_to_transformers_give_our_logits_in_float64(config):
    p = _random_model(config)
    ids = _tokens(config)
    ours = forward(config, p, ids)  # (B, T, V)
    with torch.no_grad():
        mine = bridge.to_torch(config, p)(torch.from_numpy(ids))
        theirs = bridge.to_transformers(config, p)(torch.from_numpy(ids)).logits
    assert mine.dtype == theirs.dtype == torch.float64 and tuple(mine.shape) == ours.shape
    np.testing.assert_allclose(mine.numpy(), ours, rtol=0, atol=TOL)
    np.testing.assert_allclose(theirs.numpy(), ours, rtol=0, atol=TOL)
    assert np.abs(ours).max() > 1  # the logits are not all near 0: a wrong mapping would show


@pytest.mark.parametrize("config", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trips_are_exact(config, dtype):
    p = _random_model(config, seed=2, dtype=dtype)
    backs = (bridge.from_transformers(bridge.to_transformers(config, p)), bridge.from_torch(bridge.to_torch(config, p)))
    for c2, p2 in backs:
        assert c2 == config
        assert list(p2) == list(p)  # init_params' order
        for name in p:
            assert p2[name].dtype == p[name].dtype and np.array_equal(p2[name], p[name]), name


def test_the_parameters_sit_where_the_table_says():
    config = SHAPES[1]
    p = _random_model(config)
    m, h = bridge.to_torch(config, p), bridge.to_transformers(config, p)
    D = config.d_model
    np.testing.assert_array_equal(m.blocks[1].W_q.weight.detach().numpy(), p["l1.W_q"].T)  # nn.Linear stores (out, in)
    np.testing.assert_array_equal(m.W_out.weight.detach().numpy(), p["W_out"].T)
    c_attn = h.transformer.h[1].attn.c_attn.weight.detach().numpy()  # (d_model, 3·d_model) Conv1D stores (in, out)
    for i, name in enumerate(("W_q", "W_k", "W_v")):
        np.testing.assert_array_equal(c_attn[:, i * D:(i + 1) * D], p[f"l1.{name}"])
    assert not h.config.tie_word_embeddings and h.lm_head.weight is not h.transformer.wte.weight
    assert h.config.activation_function == "gelu_new" and h.config.layer_norm_epsilon == 1e-5
    c = h.config
    assert (c.n_embd, c.n_head, c.n_layer, c.n_inner, c.n_positions) == (12, 3, 2, 20, 9)


def test_float32_parameters_give_a_float32_model_within_float32_rounding():
    config = SHAPES[2]
    p = _random_model(config, dtype=np.float32)
    ids = _tokens(config)
    with torch.no_grad():
        logits = bridge.to_transformers(config, p)(torch.from_numpy(ids)).logits
    assert logits.dtype == torch.float32
    np.testing.assert_allclose(logits.numpy(), forward(config, p, ids), rtol=0, atol=1e-4)


def test_autograd_gives_loss_and_grads_for_every_parameter():
    config = SHAPES[1]
    p = _random_model(config, seed=3)
    ids, targets = _tokens(config, seed=4), _tokens(config, seed=5)
    loss, grads = loss_and_grads(config, p, ids, targets)
    m = bridge.to_torch(config, p)
    logits = m(torch.from_numpy(ids))  # (B, T, V)
    torch_loss = torch.nn.functional.cross_entropy(logits.reshape(-1, config.vocab_size),
                                                   torch.from_numpy(targets).reshape(-1))
    torch_loss.backward()
    assert abs(torch_loss.item() - loss) < TOL
    auto = bridge.torch_grads(m)
    assert list(auto) == list(grads)
    for name in grads:
        np.testing.assert_allclose(auto[name], grads[name], rtol=0, atol=TOL, err_msg=name)


def test_greedy_generate_writes_our_greedy_text():
    config = SHAPES[1]
    p = _random_model(config, seed=6)
    prompt = np.array([1, 2, 3])
    ours = generate(config, p, prompt, config.context - len(prompt), temperature=0.0)
    with torch.no_grad():
        theirs = bridge.to_transformers(config, p).generate(torch.from_numpy(prompt)[None], do_sample=False,
                                                            max_new_tokens=config.context - len(prompt))
    np.testing.assert_array_equal(theirs[0].numpy(), ours)


def test_save_pretrained_and_from_pretrained_of_a_local_folder_give_the_model_back(tmp_path):
    config = SHAPES[0]
    p = _random_model(config, seed=7)
    bridge.to_transformers(config, p).save_pretrained(tmp_path)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path)
    assert type(loaded).__name__ == "GPT2LMHeadModel"
    c2, p2 = bridge.from_transformers(loaded)
    assert c2 == config and all(np.array_equal(p2[k], p[k]) and p2[k].dtype == p[k].dtype for k in p)


def test_the_committed_model_through_transformers_gives_12s_logits():
    config, params, tokenizer = load_model()
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    ids = tokenizer.encode("The attention weights of the model are softmax outputs.", errors="replace")[None]
    with torch.no_grad():
        logits = bridge.to_transformers(config, p64)(torch.from_numpy(ids)).logits.numpy()
    np.testing.assert_allclose(logits, forward(config, p64, ids), rtol=0, atol=TOL)


def test_a_tied_gpt2_is_held_as_a_copy_and_gives_its_logits():
    config = SHAPES[1]
    p = _random_model(config, seed=8)
    model = bridge.to_transformers(config, p)
    model.config.tie_word_embeddings = True
    model.lm_head.weight = model.transformer.wte.weight  # tied: one matrix for both
    c2, p2 = bridge.from_transformers(model)
    np.testing.assert_array_equal(p2["W_out"], p["tok_emb"].T)
    ids = _tokens(config)
    with torch.no_grad():
        np.testing.assert_allclose(model(torch.from_numpy(ids)).logits.numpy(), forward(c2, p2, ids), rtol=0, atol=TOL)


# --------------------------------------------------------------------------- refusals, each with its sentence


def _model(seed: int = 9):
    config = SHAPES[1]
    return bridge.to_transformers(config, _random_model(config, seed=seed))


def _set(tensor: torch.Tensor, index: int, value: float) -> None:
    with torch.no_grad():
        tensor.view(-1)[index] = value


@pytest.mark.parametrize("part", ["c_attn", "c_proj"])
def test_refuses_non_zero_attention_biases(part):
    model = _model()
    _set(getattr(model.transformer.h[1].attn, part).bias, 3, 0.5)
    with pytest.raises(ValueError, match=rf"model\.transformer\.h\[1\]\.attn\.{part}\.bias has 1 non-zero entries "
                                         r"\(largest \|b\| = 0\.5\): this course's attention has no biases"):
        bridge.from_transformers(model)


def test_the_mlps_biases_are_b_1_and_b_2_not_refused():
    model = _model()
    _set(model.transformer.h[0].mlp.c_fc.bias, 0, 0.75)
    _set(model.transformer.h[0].mlp.c_proj.bias, 1, -0.25)
    _, p = bridge.from_transformers(model)
    assert p["l0.b_1"][0] == 0.75 and p["l0.b_2"][1] == -0.25


@pytest.mark.parametrize("activation", ["gelu", "relu", "gelu_pytorch_tanh"])
def test_refuses_another_activation(activation):
    config = bridge._gpt2_config(SHAPES[0])
    config.activation_function = activation
    model = transformers.GPT2LMHeadModel(config)
    with pytest.raises(ValueError, match=rf"activation_function is '{activation}', but this course's MLP uses GELU's "
                                         r"tanh form, which transformers calls 'gelu_new'"):
        bridge.from_transformers(model)


def test_refuses_an_output_layer_declared_tied_that_holds_other_numbers():
    model = _model()
    model.config.tie_word_embeddings = True  # declared tied, but lm_head keeps its own (other) matrix
    with pytest.raises(ValueError, match=r"declares its output layer tied to its token embeddings .* hold different "
                                         r"numbers: our parameters hold one W_out and one tok_emb"):
        bridge.from_transformers(model)


@pytest.mark.parametrize(("setting", "value", "words"), [
    ("layer_norm_epsilon", 1e-6, r"layer_norm_epsilon is 1e-06, but our LayerNorm adds 1e-05"),
    ("scale_attn_by_inverse_layer_idx", True, r"scales its scores by something other than 1/√d_head"),
    ("scale_attn_weights", False, r"scales its scores by something other than 1/√d_head"),
])
def test_refuses_other_settings_our_model_does_not_have(setting, value, words):
    model = _model()
    setattr(model.config, setting, value)
    with pytest.raises(ValueError, match=words):
        bridge.from_transformers(model)


def test_refuses_what_is_not_a_gpt2_and_bfloat16():
    with pytest.raises(TypeError, match="model must be a transformers GPT2LMHeadModel .* got Linear"):
        bridge.from_transformers(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match=r"torch\.bfloat16 parameters, which NumPy has no type for"):
        bridge.from_transformers(_model().to(torch.bfloat16))


def test_bad_arguments_are_named():
    config = SHAPES[0]
    p = _random_model(config)
    with pytest.raises(TypeError, match="config must be a GPTConfig"):
        bridge.to_torch({"d_model": 4}, p)
    with pytest.raises(ValueError, match=r"params\['l0.W_q'\] has shape \(4, 3\)"):
        bridge.to_transformers(config, {**p, "l0.W_q": np.zeros((4, 3))})
    m = bridge.to_torch(config, p)
    with pytest.raises(ValueError, match=r"T = 6, but the model reads 1 \.\. context = 5"):
        m(torch.zeros((1, 6), dtype=torch.long))
    with pytest.raises(TypeError, match=r"tokens must be an integer tensor \(B, T\)"):
        m(torch.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"ids outside 0 \.\. 6"):
        m(torch.tensor([[0, 7]]))
    with pytest.raises(TypeError, match="module must be a TorchGPT"):
        bridge.torch_grads(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="has no gradient"):
        bridge.torch_grads(m)
