"""The Build exercise of notebook 09: check_attend_with_cache(fn) on a student's attend_with_cache(K_cache, V_cache,
q, k, v) -> (output, K_cache, V_cache).

The right function passes; each typical mistake, written here as a student would write it (plain NumPy, not the
check module's own functions), gets its own sentence and the input it showed on; a function that raises, returns
the wrong shape, fewer than three things, a list or None, or changes its input gets its sentence; one right only
for the running sentence's shapes, or only with a non-empty cache, fails naming another input. Outputs are
compared by the engine with np.allclose (rtol 1e-6, atol 1e-9).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED
from helpers.checks.nb09 import SPEC_ATTEND_WITH_CACHE, check_attend_with_cache

RUNNING = 'on the running sentence at "it" (pronoun head): caches of t = 5 tokens, d_k = d_v = 2'
EMPTY = "on t = 0: empty caches of shape (0, 3) and (0, 4), the first token"


def solution(K_cache, V_cache, q, k, v):
    """The worked solution of the notebook."""
    K_cache = np.vstack([K_cache, k])  # (t+1, d_k): k is the last row
    V_cache = np.vstack([V_cache, v])  # (t+1, d_v)
    scores = K_cache @ q / np.sqrt(len(q))  # (t+1,)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return weights @ V_cache, K_cache, V_cache  # (d_v,), (t+1, d_k), (t+1, d_v)


def with_2d_query(K_cache, V_cache, q, k, v):
    """q as a (1, d_k) row, concatenate with k[None, :], output back to (d_v,)."""
    K = np.concatenate([K_cache, k[None, :]], axis=0)
    V = np.concatenate([V_cache, v[None, :]], axis=0)
    s = q[None, :] @ K.T / np.sqrt(K.shape[-1])  # (1, t+1)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return (w @ V)[0], K, V


def as_lists(K_cache, V_cache, q, k, v):
    """Returned as a list of three arrays instead of a tuple: accepted."""
    return list(solution(K_cache, V_cache, q, k, v))


def run(fn, capsys):
    capsys.readouterr()
    v = check_attend_with_cache(fn)
    return v, capsys.readouterr().out


@pytest.mark.parametrize("fn", [solution, with_2d_query, as_lists])
def test_right_functions_pass(fn, capsys):
    v, out = run(fn, capsys)
    assert v, out
    assert out.startswith(f"✅ attend_with_cache: correct on all {len(SPEC_ATTEND_WITH_CACHE.cases)} inputs"), out


def _softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def grown(K_cache, V_cache, k, v):
    return np.vstack([K_cache, k]), np.vstack([V_cache, v])


def attend(q, K, V, scale=None):
    return _softmax(K @ q * (1 / np.sqrt(len(q)) if scale is None else scale)) @ V


def prepended(K_cache, V_cache, q, k, v):
    K, V = np.vstack([k, K_cache]), np.vstack([v, V_cache])
    return attend(q, K, V), K, V


def returns_old_caches(K_cache, V_cache, q, k, v):
    K, V = grown(K_cache, V_cache, k, v)
    return attend(q, K, V), K_cache, V_cache


def old_cache_only(K_cache, V_cache, q, k, v):
    out = attend(q, K_cache, V_cache)
    K_cache, V_cache = grown(K_cache, V_cache, k, v)
    return out, K_cache, V_cache


def nothing_appended(K_cache, V_cache, q, k, v):
    return attend(q, K_cache, V_cache), K_cache, V_cache


def k_v_swapped(K_cache, V_cache, q, k, v):
    K, V = grown(K_cache, V_cache, v, k)
    return attend(q, K, V), K, V


def caches_swapped(K_cache, V_cache, q, k, v):
    out, K, V = solution(K_cache, V_cache, q, k, v)
    return out, V, K


def not_scaled(K_cache, V_cache, q, k, v):
    K, V = grown(K_cache, V_cache, k, v)
    return attend(q, K, V, scale=1.0), K, V


def scaled_by_d(K_cache, V_cache, q, k, v):
    K, V = grown(K_cache, V_cache, k, v)
    return attend(q, K, V, scale=1 / len(q)), K, V


def k_as_query(K_cache, V_cache, q, k, v):
    K, V = grown(K_cache, V_cache, k, v)
    return attend(k, K, V), K, V


def softmax_axis_0(K_cache, V_cache, q, k, v):
    K, V = grown(K_cache, V_cache, k, v)
    s = q[None, :] @ K.T / np.sqrt(len(q))  # (1, t+1)
    w = np.exp(s) / np.exp(s).sum(axis=0, keepdims=True)  # over the axis of length 1: all ones
    return (w @ V)[0], K, V


def weights_not_output(K_cache, V_cache, q, k, v):
    K, V = grown(K_cache, V_cache, k, v)
    return _softmax(K @ q / np.sqrt(len(q))), K, V


# a wrong function -> (the words its verdict must hold, the input it must show on). A mistake whose output has
# another shape than the right one (the old caches, the weights): the engine on main names the shape; with the
# engine's extension that names a mistake of another shape (branch build0104), the mistake's own sentence.
MISTAKES = {
    "prepended": (prepended, ("the new key and value are at the FRONT of the caches",), RUNNING),
    "returns-old-caches": (returns_old_caches, ("you returned the old caches",
                                                "K_cache has shape (5, 2), expected (6, 2)"), RUNNING),
    "old-cache-only": (old_cache_only, ("the new token is not among the keys it attends to",), RUNNING),
    "nothing-appended": (nothing_appended, ("nothing was appended", "K_cache has shape (5, 2), expected (6, 2)"),
                         RUNNING),
    "k-v-swapped": (k_v_swapped, ("k and v are swapped",), RUNNING),
    "caches-swapped": (caches_swapped, ("the caches are returned in the wrong order",), RUNNING),
    "not-scaled": (not_scaled, ("the scores are not scaled",), RUNNING),
    "scaled-by-d": (scaled_by_d, ("the scores are divided by d_k",), RUNNING),
    "k-as-query": (k_as_query, ("the new token's KEY k was used as the query",), RUNNING),
    "softmax-axis-0": (softmax_axis_0, ("every weight is 1",), RUNNING),
    "weights-not-output": (weights_not_output, ("this output is the attention weights",
                                                "output has shape (6,), expected (2,)"), RUNNING),
}


def naive(K_cache, V_cache, q, k, v):
    """Right, but the largest score is not subtracted: e^s overflows on large scores."""
    K, V = np.vstack([K_cache, k]), np.vstack([V_cache, v])
    e = np.exp(K @ q / np.sqrt(len(q)))
    return e @ V / e.sum(), K, V


def test_an_overflowing_exp_is_named_on_the_large_scores(capsys):
    v, out = run(naive, capsys)
    assert not v and "on t = 3, d_k = d_v = 2, with scores above 1,000: exp overflowed" in out, out


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_is_named(name, capsys):
    fn, words, where = MISTAKES[name]
    v, out = run(fn, capsys)
    assert not v
    assert out.startswith(f"❌ attend_with_cache: {where}: "), out
    assert any(w in out for w in words), out


def test_every_mistake_of_the_spec_is_reachable():
    """On the running sentence, each named mistake differs from the right answer and from the other mistakes."""
    args = SPEC_ATTEND_WITH_CACHE.cases[0].args
    right = SPEC_ATTEND_WITH_CACHE.reference(*args)

    def same(a, b):
        return all(np.shape(x) == np.shape(y) and np.allclose(x, y) for x, y in zip(a, b, strict=True))

    made = {s: f(*args) for s, f in SPEC_ATTEND_WITH_CACHE.mistakes.items()
            if not s.startswith("exp overflowed")}  # right unless the scores are large: the last input
    for s, a in made.items():
        assert not same(a, right), s
        assert sum(same(a, b) for b in made.values()) == 1, s


def test_the_inputs_include_an_empty_cache_and_d_k_not_d_v():
    shapes = [(c.args[0].shape, c.args[1].shape) for c in SPEC_ATTEND_WITH_CACHE.cases]
    assert ((0, 3), (0, 4)) in shapes
    assert any(K[1] != V[1] for K, V in shapes)


def test_only_with_a_cache_fails_on_the_empty_one(capsys):
    def needs_a_cache(K_cache, V_cache, q, k, v):  # the new row's score compared with the cached ones' maximum
        K, V = np.vstack([K_cache, k]), np.vstack([V_cache, v])
        s = K @ q / np.sqrt(len(q))
        w = np.exp(s - (K_cache @ q / np.sqrt(len(q))).max())
        return (w / w.sum()) @ V, K, V

    v, out = run(needs_a_cache, capsys)
    assert not v and f"{EMPTY}: your function raised ValueError (zero-size array" in out, out


def test_right_only_for_the_running_shape_names_the_input(capsys):
    def fixed(K_cache, V_cache, q, k, v):
        if K_cache.shape == (5, 2):
            return solution(K_cache, V_cache, q, k, v)
        return np.zeros(2), np.zeros((6, 2)), np.zeros((6, 2))

    v, out = run(fixed, capsys)
    assert not v and f"{EMPTY}: output has shape (2,), expected (4,)" in out, out


def test_unanswered(capsys):
    for fn in (None, ..., lambda K_cache, V_cache, q, k, v: None):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ attend_with_cache: {NOT_ANSWERED}") and "Hint: K_cache" in out, out


def test_raises_too_few_outputs_list_and_mutation(capsys):
    def raising(K_cache, V_cache, q, k, v):
        K_cache = np.vstack([K_cache, k[:, None]])  # k as a column: (d_k, 1) under (t, d_k)
        return K_cache

    v, out = run(raising, capsys)
    assert not v and "raised ValueError" in out and "line 2 of raising: `K_cache = np.vstack(" in out, out

    v, out = run(lambda K_cache, V_cache, q, k, v: solution(K_cache, V_cache, q, k, v)[0], capsys)
    assert not v and "return 3 things, (output, K_cache, V_cache), as a tuple; got a ndarray" in out, out

    v, out = run(lambda *a: (solution(*a)[0][None, :], *solution(*a)[1:]), capsys)
    assert not v and f"{RUNNING}: output has shape (1, 2), expected (2,)." in out, out

    def mutating(K_cache, V_cache, q, k, v):
        q /= np.sqrt(len(q))  # scales the caller's q
        return solution(K_cache, V_cache, q * np.sqrt(len(q)), k, v)

    v, out = run(mutating, capsys)
    assert not v and "changed its input q in place" in out, out
