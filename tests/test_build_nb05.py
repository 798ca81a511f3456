"""The Build exercise of notebook 05: check_sinusoidal_positions(fn) on a student's sinusoidal_positions(T, d).

The right function passes; each typical mistake, written here as a student would write it (plain NumPy, not the
check module's own functions), gets its own sentence and the input it showed on; a function that raises, returns
the wrong shape, a list or None gets its sentence; one right only for the running sentence's (T, d) fails naming
another input. Outputs are compared by the engine with np.allclose (rtol 1e-6, atol 1e-9).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED
from helpers.checks.nb05 import SPEC_SINUSOIDAL_POSITIONS, check_sinusoidal_positions

RUNNING = "on T = 8, d = 6 (the running sentence)"


def solution(T, d):
    """The worked solution of the notebook."""
    p = np.arange(T)[:, None]  # (T, 1) positions
    i = np.arange(d // 2)[None, :]  # (1, d/2) pair index
    angles = p / 10000 ** (2 * i / d)  # (T, d/2)
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE


def loop_version(T, d):
    PE = np.zeros((T, d))
    for p in range(T):
        for i in range(d // 2):
            PE[p, 2 * i] = np.sin(p / 10000 ** (2 * i / d))
            PE[p, 2 * i + 1] = np.cos(p / 10000 ** (2 * i / d))
    return PE


def stacked_version(T, d):
    """np.stack + reshape interleaves sin and cos: the same table."""
    angles = np.arange(T)[:, None] * np.exp(-np.log(10000.0) * np.arange(0, d, 2) / d)  # (T, d/2)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(T, d)


def run(fn, capsys):
    capsys.readouterr()
    v = check_sinusoidal_positions(fn)
    return v, capsys.readouterr().out


@pytest.mark.parametrize("fn", [solution, loop_version, stacked_version])
def test_right_functions_pass(fn, capsys):
    v, out = run(fn, capsys)
    assert v, out
    assert out.startswith(f"✅ sinusoidal_positions: correct on all {len(SPEC_SINUSOIDAL_POSITIONS.cases)} inputs")


def table(T, d, *, exponent, positions=None, even=np.sin, odd=np.cos, multiply=False):
    """A student's table with column j's exponent exponent(j, d)."""
    p = np.arange(T)[:, None] if positions is None else positions[:, None]
    PE = np.zeros((T, d))
    for j in range(d):
        f = 10000.0 ** exponent(j, d)
        angle = p[:, 0] * f if multiply else p[:, 0] / f
        PE[:, j] = even(angle) if j % 2 == 0 else odd(angle)
    return PE


def right_exponent(j, d):
    return 2 * (j // 2) / d


def halves(T, d):
    a = np.arange(T)[:, None] / 10000 ** (2 * np.arange(d // 2) / d)
    return np.hstack([np.sin(a), np.cos(a)])


MISTAKES = {  # a wrong function -> (the words its verdict must hold, the input it must show on)
    "sin-cos-swapped": (lambda T, d: table(T, d, exponent=right_exponent, even=np.cos, odd=np.sin),
                        "sin and cos are swapped", RUNNING),
    "exponent-i-over-d": (lambda T, d: table(T, d, exponent=lambda j, d: (j // 2) / d), "the exponent is i/d",
                          RUNNING),
    "exponent-j-over-d": (lambda T, d: table(T, d, exponent=lambda j, d: j / d), "each column got its own frequency",
                          RUNNING),
    "exponent-2j-over-d": (lambda T, d: table(T, d, exponent=lambda j, d: 2 * j / d),
                           "the column index j where the formula has i", RUNNING),
    "positions-from-1": (lambda T, d: table(T, d, exponent=right_exponent, positions=np.arange(1, T + 1)),
                         "the positions start at 1", RUNNING),
    "frequency-inverted": (lambda T, d: table(T, d, exponent=right_exponent, multiply=True),
                           "you multiplied p by 10000**(2i/d)", RUNNING),
    "all-sines": (lambda T, d: table(T, d, exponent=right_exponent, odd=np.sin), "every column is a sine", RUNNING),
    "all-cosines": (lambda T, d: table(T, d, exponent=right_exponent, even=np.cos), "every column is a cosine",
                    RUNNING),
    "halves": (halves, "the sines fill the first half of the columns", RUNNING),
    "d-T-shape": (lambda T, d: solution(T, d).T, "your function returned shape (6, 8), expected (8, 6) (the transpose",
                  RUNNING),
    "transposed-square": (lambda T, d: solution(d, T).T if T == d else solution(T, d), "this is the transpose",
                          "on T = 6, d = 6:"),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_is_named(name, capsys):
    fn, words, where = MISTAKES[name]
    v, out = run(fn, capsys)
    assert not v
    assert out.startswith(f"❌ sinusoidal_positions: {where}"), out
    assert words in out, out


def test_every_mistake_of_the_spec_is_reachable():
    """Each named mistake differs from the right answer and from the others on the input where it is named."""
    for k in (0, 2):  # the running sentence, and the square case (the transpose runs)
        T, d = SPEC_SINUSOIDAL_POSITIONS.cases[k].args
        right = SPEC_SINUSOIDAL_POSITIONS.reference(T, d)
        made = {s: f(T, d) for s, f in SPEC_SINUSOIDAL_POSITIONS.mistakes.items()}
        for s, a in made.items():
            if k == 0 and "transpose" in s:
                continue  # on (8, 6) the engine names a (6, 8) answer by its shape
            assert not np.allclose(a, right), s
            assert sum(np.allclose(a, b) for b in made.values()) == 1, s


def test_right_only_for_the_running_shape_names_the_input(capsys):
    def fixed(T, d):
        return solution(8, 6)

    v, out = run(fixed, capsys)
    assert not v and "on T = 1, d = 4 (one token): your function returned shape (8, 6), expected (1, 4)" in out, out


def test_only_small_d_fails_on_d_2(capsys):
    def first_pair_everywhere(T, d):  # right only while d = 2: every pair turns as fast as pair 0
        return np.tile(solution(T, 2), (1, d // 2))

    v, out = run(first_pair_everywhere, capsys)
    assert not v and RUNNING in out and "the largest difference is at index" in out, out


def test_float32_is_close_enough(capsys):
    v, out = run(lambda T, d: solution(T, d).astype(np.float32), capsys)
    assert v, out


def test_unanswered(capsys):
    for fn in (None, ..., lambda T, d: None):
        v, out = run(fn, capsys)
        assert not v and out.startswith(f"❌ sinusoidal_positions: {NOT_ANSWERED}") and "Hint: p = " in out, out


def test_raises_list_and_shape(capsys):
    def raising(T, d):
        PE = np.zeros((T, d))
        PE[:, 0::2] = np.sin(np.arange(T)[:, None] / 10000 ** (np.arange(d) / d))  # (T, d) into (T, d/2)
        return PE

    v, out = run(raising, capsys)
    assert not v and "raised ValueError" in out and "line 3 of raising: `PE[:, 0::2] = np.sin(" in out, out

    v, out = run(lambda T, d: solution(T, d).tolist(), capsys)
    assert not v and "return a NumPy array" in out, out

    v, out = run(lambda T, d: solution(T, d)[:, : d // 2], capsys)
    assert not v and f"{RUNNING}: your function returned shape (8, 3), expected (8, 6)." in out, out
