"""Tests of notebook 10's exercise checks (helpers.checks.nb10).

Table-driven as tests/test_checks_nb08.py: every row calls one check with one answer and states what the
check must say: truthy and only "✅" lines for the right answer, falsy with the ✅/❌ line of each part and
the SPECIFIC explanation of the slip for each typical mistake the check claims to diagnose. Right answers
are computed here by hand (loops, plain arithmetic) or with another helper than the check's own; the
slips are computed the way a student would make them. The checks compare numbers with relative
tolerance 1e-6.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest
from check_table import assert_verdict_and_message

from helpers.checks import nb10
from helpers.longcontext import linear_attention_recurrent, window_reach


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    args: tuple  # the answers, one per argument of the check
    marks: str  # the ✅/❌ verdict lines the check must print, in order
    phrases: tuple[str, ...]  # each must occur in the printed output


N_ARGS = {nb10.check_band_mask: 1, nb10.check_reach: 1, nb10.check_absorbed_query: 1, nb10.check_cache_bytes: 2,
          nb10.check_recurrent_step: 3}


def right(id: str, check: Callable[..., object], *args: object) -> Case:
    return Case(id, check, args, "✅" * N_ARGS[check], ("correct",))


def wrong(id: str, check: Callable[..., object], args: tuple, marks: str, *phrases: str) -> Case:
    return Case(id, check, args, marks, phrases)


# ------------------------------------------------------------------------------ exercise 1: band mask

T, W = nb10.EX_T, nb10.EX_W
BAND = np.array([[i - W < j <= i for j in range(T)] for i in range(T)])  # (T, T) by the definition
i_, j_ = np.arange(T)[:, None], np.arange(T)[None, :]

EX1 = [
    right("band/loops", nb10.check_band_mask, BAND),
    right("band/tril-minus-tril", nb10.check_band_mask,
          np.tril(np.ones((T, T), bool)) & ~np.tril(np.ones((T, T), bool), -W)),
    wrong("band/causal", nb10.check_band_mask, (np.tril(np.ones((T, T), bool)),), "❌", "plain causal mask"),
    wrong("band/w-plus-1", nb10.check_band_mask, ((j_ <= i_) & (j_ >= i_ - W),), "❌", "w + 1 = 4 keys"),
    wrong("band/w-minus-1", nb10.check_band_mask, ((j_ <= i_) & (j_ > i_ - W + 1),), "❌", "w − 1 = 2 keys"),
    wrong("band/future", nb10.check_band_mask, ((j_ >= i_) & (j_ < i_ + W),), "❌", "FUTURE"),
    wrong("band/symmetric", nb10.check_band_mask, (np.abs(i_ - j_) < W,), "❌", "symmetric"),
    wrong("band/swapped", nb10.check_band_mask, (~BAND,), "❌", "swapped"),
    wrong("band/numbers", nb10.check_band_mask, (BAND.astype(int),), "❌", "made of numbers"),
    wrong("band/shape", nb10.check_band_mask, (BAND[:5],), "❌", "shape (5, 6)"),
]

# ------------------------------------------------------------------------------ exercise 2: reach

L, WR = nb10.EX_LAYERS, nb10.EX_W_REACH
REACH = int(np.argmax(window_reach(40, WR, L)[-1]))  # the earliest token the last of 40 reaches ...
BACK = 39 - REACH  # ... and how far back that is

EX2 = [
    right("reach/by-helper", nb10.check_reach, BACK),
    right("reach/float", nb10.check_reach, float(L * (WR - 1))),
    wrong("reach/Lw", nb10.check_reach, (L * WR,), "❌", "L·w = 12"),
    wrong("reach/one-layer", nb10.check_reach, (WR - 1,), "❌", "one layer's reach"),
    wrong("reach/window", nb10.check_reach, (WR,), "❌", "the window itself"),
    wrong("reach/power", nb10.check_reach, (WR**L,), "❌", "does not multiply"),
    wrong("reach/tokens", nb10.check_reach, (L * (WR - 1) + 1,), "❌", "counts tokens"),
    wrong("reach/unrecognised", nb10.check_reach, (5,), "❌", "5 is not it"),
]

# ------------------------------------------------------------------------------ exercise 3: absorbed query

WQ2, WUK2 = nb10.EX_W_Q[:, 2:4], nb10.EX_W_UK[:, 2:4]  # head 2's columns: (3, 2) and (2, 2)
ABS = np.array([[sum(WQ2[a, c] * WUK2[b, c] for c in range(2)) for b in range(2)] for a in range(3)])  # (3, 2)

EX3 = [
    right("absorb/loops", nb10.check_absorbed_query, ABS),
    right("absorb/einsum", nb10.check_absorbed_query, np.einsum("ic,lc->il", WQ2, WUK2)),
    wrong("absorb/head-1", nb10.check_absorbed_query, (nb10.EX_W_Q[:, :2] @ nb10.EX_W_UK[:, :2].T,), "❌", "head 1"),
    wrong("absorb/no-transpose", nb10.check_absorbed_query, (WQ2 @ WUK2,), "❌", "without the transpose"),
    wrong("absorb/all-heads", nb10.check_absorbed_query, (nb10.EX_W_Q @ nb10.EX_W_UK.T,), "❌", "every head at once"),
    wrong("absorb/transposed", nb10.check_absorbed_query, (WUK2 @ WQ2.T,), "❌", "(d_c, d_in)"),
    wrong("absorb/mixed", nb10.check_absorbed_query, (WQ2 @ nb10.EX_W_UK[:, :2].T,), "❌", "mixed the heads"),
    wrong("absorb/scaled", nb10.check_absorbed_query, (WQ2 @ WUK2.T / np.sqrt(2),), "❌", "divided by √d_head"),
]

# ------------------------------------------------------------------------------ exercise 4: cache bytes

M = nb10.EX_MODEL
MHA = 2 * M["n_layers"] * M["n_heads"] * M["d_head"] * 2  # K and V, every layer and head, 2 bytes
MLA = M["n_layers"] * (M["d_c"] + M["d_rope"]) * 2  # one latent and one rotary key per layer

EX4 = [
    right("bytes/by-hand", nb10.check_cache_bytes, MHA, MLA),
    wrong("bytes/keys-only", nb10.check_cache_bytes, (MHA // 2, MLA), "❌✅", "a key AND a value"),
    wrong("bytes/one-layer", nb10.check_cache_bytes, (MHA // M["n_layers"], MLA // M["n_layers"]), "❌❌",
          "that is one layer"),
    wrong("bytes/one-head", nb10.check_cache_bytes, (MHA // M["n_heads"], MLA), "❌✅", "that is one head"),
    wrong("bytes/bits", nb10.check_cache_bytes, (MHA * 8, MLA * 8), "❌❌", "these are bits"),
    wrong("bytes/float32", nb10.check_cache_bytes, (MHA * 2, MLA), "❌✅", "float32"),
    wrong("bytes/no-rope", nb10.check_cache_bytes, (MHA, M["n_layers"] * M["d_c"] * 2), "✅❌",
          "rotary key is missing"),
    wrong("bytes/latent-twice", nb10.check_cache_bytes, (MHA, 2 * MLA), "✅❌", "cached once"),
    wrong("bytes/latent-numbers", nb10.check_cache_bytes, (MHA, MLA // 2), "✅❌", "counts numbers"),
    wrong("bytes/latent-per-head", nb10.check_cache_bytes, (MHA, MLA * M["n_heads"]), "✅❌", "shared by all heads"),
    wrong("bytes/text", nb10.check_cache_bytes, ("98304", MLA), "❌✅", "text, not a number"),
]

# ------------------------------------------------------------------------------ exercise 5: one recurrent step


def phi(x: np.ndarray) -> np.ndarray:
    return np.array([v + 1 if v > 0 else np.exp(v) for v in x])  # elu(x) + 1, element by element


FQ, FK = phi(nb10.EX_Q), phi(nb10.EX_K)
S1 = nb10.EX_S + FK[:, None] * nb10.EX_V[None, :]  # (d_k, d_v)
Z1 = nb10.EX_Z + FK  # (d_k,)
OUT = (FQ @ S1) / (FQ @ Z1)  # (d_v,)

EX5 = [
    right("step/by-hand", nb10.check_recurrent_step, S1, Z1, OUT),
    right("step/lists", nb10.check_recurrent_step, S1.tolist(), list(Z1), OUT.tolist()),
    wrong("step/no-phi-k", nb10.check_recurrent_step,
          (nb10.EX_S + np.outer(nb10.EX_K, nb10.EX_V), nb10.EX_Z + nb10.EX_K, OUT), "❌❌✅", "φ was not applied to k"),
    wrong("step/only-new", nb10.check_recurrent_step, (np.outer(FK, nb10.EX_V), FK, OUT), "❌❌✅",
          "only the new token", "keeps the sum"),
    wrong("step/transposed", nb10.check_recurrent_step, (S1.T, Z1, OUT), "❌✅✅", "shape (d_v, d_k)"),
    wrong("step/q-for-k", nb10.check_recurrent_step, (nb10.EX_S + np.outer(FQ, nb10.EX_V), Z1, OUT), "❌✅✅",
          "used φ(q) instead of φ(k)"),
    wrong("step/no-normaliser", nb10.check_recurrent_step, (S1, Z1, FQ @ S1), "✅✅❌", "normaliser is missing"),
    wrong("step/old-state", nb10.check_recurrent_step, (S1, Z1, FQ @ nb10.EX_S / (FQ @ nb10.EX_Z)), "✅✅❌",
          "OLD state"),
    wrong("step/no-phi-q", nb10.check_recurrent_step, (S1, Z1, nb10.EX_Q @ S1 / (nb10.EX_Q @ Z1)), "✅✅❌",
          "φ was not applied to q"),
    wrong("step/old-z", nb10.check_recurrent_step, (S1, Z1, FQ @ S1 / (FQ @ nb10.EX_Z)), "✅✅❌", "old normaliser"),
]

TABLES = (EX1, EX2, EX3, EX4, EX5)
CASES = [c._replace(id=f"ex{n}:{c.id}") for n, table in enumerate(TABLES, start=1) for c in table]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_verdict_and_message(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    assert_verdict_and_message(case, N_ARGS[case.check], capsys)


def test_every_public_check_is_tested() -> None:
    public = {getattr(nb10, n) for n in nb10.__all__ if n.startswith("check_")}
    assert public == {c.check for c in CASES}


def test_the_recurrent_step_is_what_linear_attention_recurrent_does():
    """The exercise's update, from an empty state, is the helper's one-token run; from two tokens, its third row."""
    one = linear_attention_recurrent(nb10.EX_Q[None], nb10.EX_K[None], nb10.EX_V[None])[0]  # (d_v,)
    np.testing.assert_allclose(one, FQ @ np.outer(FK, nb10.EX_V) / (FQ @ FK), rtol=0, atol=1e-15)
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 3))
    S = sum(np.outer(phi(K[t]), V[t]) for t in range(2))  # (d_k, d_v) the state after two tokens
    z = phi(K[0]) + phi(K[1])  # (d_k,)
    S, z = S + np.outer(phi(K[2]), V[2]), z + phi(K[2])  # the exercise's update with the third token
    np.testing.assert_allclose(phi(Q[2]) @ S / (phi(Q[2]) @ z), linear_attention_recurrent(Q, K, V)[2],
                               rtol=0, atol=1e-14)


# ------------------------------------------------------------------------------ the explorer


@pytest.fixture(scope="module")
def explorer():
    from helpers.explorers import long_context_explorer
    from helpers.sentence import TOKENS, embeddings, two_heads

    return long_context_explorer(embeddings(), *two_heads(), TOKENS)


@pytest.mark.parametrize("method", ["full", "sliding window", "latent", "linear"])
@pytest.mark.parametrize(("window", "d_c"), [(1, 1), (3, 2), (8, 8)])
def test_the_explorer_shows_what_the_browser_expectation_recomputes(explorer, method, window, d_c):
    import sys
    from pathlib import Path

    from helpers.explorer import state_from_html

    sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
    import expected as ui_expected  # the browser tests' expectation
    from html_cells import shown_cells

    explorer.set(method=method, window=window, d_c=d_c)
    state = state_from_html(explorer.readout.value)
    want = ui_expected.expected(state)
    np.testing.assert_allclose(ui_expected.number_array(state["weights"]), want.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ui_expected.number_array(state["output"]), want.output, rtol=0, atol=1e-12)
    assert shown_cells(explorer) == ui_expected.cell_texts(want.tables)
    assert explorer.controls["window"].disabled is (method != "sliding window")
    assert explorer.controls["d_c"].disabled is (method != "latent")


def test_the_explorer_readout_gives_the_bytes_of_each_method(explorer):
    from helpers.generation import kv_cache_bytes
    from helpers.longcontext import latent_cache_bytes, linear_state_bytes

    explorer.set(method="sliding window", window=3, d_c=2, long_T=131072)
    b = explorer.state()["bytes"]
    assert b["short"] == {"full": kv_cache_bytes(1, 2, 2, 8), "sliding window": kv_cache_bytes(1, 2, 2, 3),
                          "latent": latent_cache_bytes(1, 2, 8), "linear": linear_state_bytes(2, 2, n_heads=2)}
    assert b["long"]["full"] == 2 * 2 * 2 * 131072 * 2 and b["long"]["sliding window"] == b["short"]["sliding window"]
    assert b["long"]["linear"] == b["short"]["linear"]  # the state does not grow with T
    assert "131,072" in explorer.readout.value


def test_a_window_slider_step_changes_the_numbers_and_a_bad_value_is_refused(explorer):
    explorer.set(method="sliding window", window=3)
    before = explorer.weights.copy()
    explorer.controls["window"].value = 4  # as the browser sets it
    assert not np.array_equal(before, explorer.weights)
    with pytest.raises(ValueError, match="method must be one of"):
        explorer.set(method="sparse")
    explorer.set(method="sliding window", window=3)


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"n_heads": 3}, ValueError, "not a multiple of the number of attention heads 3"),
    ({"window": 9}, ValueError, "outside its range [1, 8]"),
    ({"window": 0}, ValueError, "outside its range"),
    ({"d_c": 9}, ValueError, "outside its range [1, 8]"),
    ({"method": "sparse"}, ValueError, "method must be one of"),
    ({"long_T": 1000}, ValueError, "long_T must be one of"),
    ({"n_heads": 0}, ValueError, "n_heads must be at least 1"),
    ({"token_labels": ["a", "b"]}, ValueError, "token_labels has 2 labels but X has 8 tokens"),
    ({"W_v": np.ones((6, 2))}, ValueError, "the cache bytes assume keys and values of the same width"),
    ({"X": np.ones((8, 5))}, ValueError, "W_q has shape (6, 4) but X has 5 features"),
])
def test_the_explorer_refuses_bad_arguments_in_words(kwargs, error, words):
    from helpers.explorers import long_context_explorer
    from helpers.sentence import TOKENS, embeddings, two_heads

    W_q, W_k, W_v = two_heads()
    args = {"X": embeddings(), "W_q": W_q, "W_k": W_k, "W_v": W_v, "token_labels": TOKENS, **kwargs}
    with pytest.raises(error) as info:
        long_context_explorer(**args)
    assert words in str(info.value), str(info.value)
