"""Tests of notebook 14's exercise checks (helpers.checks.nb14) and its explorers' refusals.

Table-driven as tests/test_checks_nb10.py: every row calls one check with one answer and states what the check
must say: truthy and "✅" for the right answer, falsy with the SPECIFIC explanation of each slip it claims to
diagnose. Right answers are computed here by hand (plain arithmetic, loops), not with the check's own helper.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest
from check_table import assert_verdict_and_message

from helpers.checks import nb14


class Case(NamedTuple):
    id: str
    check: Callable[..., object]
    args: tuple
    marks: str
    phrases: tuple[str, ...]


N_ARGS = {nb14.check_sink_row: 1, nb14.check_score_bound: 1, nb14.check_pattern_bytes: 1, nb14.check_delta_step: 1}


def right(id: str, check: Callable[..., object], *args: object) -> Case:
    return Case(id, check, args, "✅", ("correct",))


def wrong(id: str, check: Callable[..., object], args: tuple, *phrases: str) -> Case:
    return Case(id, check, args, "❌", phrases)


# exercise 1: e^s / (e^sink + Σ e^s), by hand
E = [math.exp(s) for s in nb14.EX_SCORES]
SINK_ROW = [e / (math.exp(nb14.EX_SINK) + sum(E)) for e in E]
PLAIN = [e / sum(E) for e in E]
FOUR = [*(e / (math.exp(nb14.EX_SINK) + sum(E)) for e in E), math.exp(nb14.EX_SINK) / (math.exp(nb14.EX_SINK) + sum(E))]

# exercise 2: √64 · 1.5 · 2
BOUND = 8 * 1.5 * 2

# exercise 3: 24 layers, 3 local per global: layers 4, 8, …, 24 global (6), 18 local
M = nb14.EX_PATTERN_MODEL
PER_POSITION = 2 * M["n_kv_heads"] * M["d_head"] * 2  # K and V, every head, 2 bytes
BYTES = PER_POSITION * (6 * M["T"] + 18 * M["window"])
ALL_GLOBAL = PER_POSITION * 24 * M["T"]

# exercise 4: S − β (S k) kᵀ + β v kᵀ, entry by entry
S, k, v, b = nb14.EX_STATE, nb14.EX_KEY, nb14.EX_VALUE, nb14.EX_BETA
Sk = [sum(S[i, j] * k[j] for j in range(2)) for i in range(3)]
STEP = np.array([[S[i, j] - b * Sk[i] * k[j] + b * v[i] * k[j] for j in range(2)] for i in range(3)])
LINEAR = np.array([[S[i, j] + b * v[i] * k[j] for j in range(2)] for i in range(3)])

CASES = [
    right("sink-right", nb14.check_sink_row, SINK_ROW),
    wrong("sink-plain", nb14.check_sink_row, (PLAIN,), "plain softmax"),
    wrong("sink-four", nb14.check_sink_row, (FOUR,), "these are 4 weights"),
    right("bound-right", nb14.check_score_bound, 24),
    wrong("bound-unscaled", nb14.check_score_bound, (64 * 1.5 * 2,), "divides it by √d_k"),
    wrong("bound-no-gains", nb14.check_score_bound, (8.0,), "leaves out the gains"),
    wrong("bound-unit", nb14.check_score_bound, (3.0,), "length is √d_k"),
    right("bytes-right", nb14.check_pattern_bytes, BYTES),
    wrong("bytes-all-global", nb14.check_pattern_bytes, (ALL_GLOBAL,), "every layer global"),
    wrong("bytes-half", nb14.check_pattern_bytes, (BYTES // 2,), "half of it"),
    right("delta-right", nb14.check_delta_step, STEP),
    wrong("delta-linear", nb14.check_delta_step, (LINEAR,), "linear attention's step"),
    wrong("delta-transposed", nb14.check_delta_step, (np.asarray(STEP - b * np.outer(v, k)).T + b * np.outer(k, v),),
          "you wrote k vᵀ"),
]
assert BOUND == 24


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_verdict_and_message(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    assert_verdict_and_message(case, N_ARGS[case.check], capsys)


def test_every_public_check_is_tested() -> None:
    public = {getattr(nb14, n) for n in nb14.__all__ if n.startswith("check_")}
    assert public == {c.check for c in CASES}


def test_the_explorers_refuse_bad_arguments_in_words():
    from helpers.explorers import delta_rule_explorer, sink_explorer
    from helpers.sentence import TOKENS, embeddings, pronoun_head

    with pytest.raises(ValueError, match="W_q has shape"):
        sink_explorer(np.ones((8, 5)), *pronoun_head(), TOKENS)
    with pytest.raises(ValueError, match="token_labels has 2 labels but X has 8 tokens"):
        sink_explorer(embeddings(), *pronoun_head(), ["a", "b"])
    with pytest.raises(ValueError, match="d_k must be at most 12"):
        delta_rule_explorer(d_k=20)


def test_the_bounded_scores_and_layer_pattern_explorers_show_their_bounds_and_refuse_bad_arguments():
    from helpers.explorers import bounded_scores_explorer, layer_pattern_explorer
    from helpers.sentence import TOKENS, embeddings

    ex = bounded_scores_explorer(embeddings(), TOKENS, m=2.0, gain=2.0, cap=10.0)
    top = ex.state()["largest_score"]
    assert top["plain"] > 1000 and top["QK-norm"] <= ex.state()["bound"] + 1e-12 and top["soft cap"] <= 10.0
    with pytest.raises(ValueError, match="outside its range"):
        bounded_scores_explorer(embeddings(), TOKENS, m=5.0)
    pattern = layer_pattern_explorer(T=10, local_per_global=5, window=2, n_layers=5)
    assert pattern.state()["cached"] == 5 * 2 and not pattern.weights[-1, 0]  # 5 local layers reach 5 back, not 9
    pattern.set(n_layers=6)  # the sixth is global
    assert pattern.weights[-1, 0] and pattern.state()["cached"] == 5 * 2 + 10
    with pytest.raises(ValueError, match="T must be at most 40"):
        layer_pattern_explorer(T=100)
