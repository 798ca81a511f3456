"""What the table-driven tests of the exercise checks share (tests/test_checks.py, tests/test_checks_nbNN.py).

A case names a check, the answer(s) it is called with, the ✅/❌ verdict lines it must print and phrases
its output must hold. pytest puts tests/ on sys.path: ``from check_table import marks_of, ...``. What every
check of every lesson must do whatever its exercise (unanswered, garbage, its name, the exercise data left
unchanged) is tested once, for all of them, in tests/test_checks_every_lesson.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from helpers.checks import NOT_ANSWERED, Verdict


def marks_of(out: str) -> str:
    """The ✅/❌ of every verdict line in ``out``, in order."""
    return "".join(line[0] for line in out.splitlines() if line[:1] in ("✅", "❌"))


def run(check: Callable[..., object], args: tuple, capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    """check(*args): its verdict and what it printed (not what was printed before)."""
    capsys.readouterr()  # drop anything printed before
    verdict = check(*args)
    return verdict, capsys.readouterr().out


def assert_verdict_and_message(case, n_args: int, capsys: pytest.CaptureFixture[str]) -> None:
    """``case.check(*case.args)`` (or ``case.check(case.answer)``) prints case.marks and case.phrases, is truthy iff
    all ✅; a slip's phrases come from its diagnosis, not from the hint every answer gets (the check has ``n_args``
    answers)."""
    verdict, out = run(case.check, case.args if hasattr(case, "args") else (case.answer,), capsys)
    assert isinstance(verdict, Verdict), f"{case.id}: returned {type(verdict).__name__}, not a Verdict"
    assert bool(verdict) is (set(case.marks) == {"✅"}), out
    assert marks_of(out) == case.marks, out
    for phrase in case.phrases:
        assert phrase in out, f"{case.id}: {phrase!r} not in:\n{out}"
    if not verdict:  # the phrase comes from the diagnosis, not from the hint every answer gets
        _, unanswered = run(case.check, (None,) * n_args, capsys)
        assert NOT_ANSWERED in unanswered
        for phrase in case.phrases:
            assert phrase not in unanswered, f"{case.id}: {phrase!r} is in the hint:\n{unanswered}"


def assert_one_answer(case: str, check: Callable[..., object], answer: object, mark: str, phrases: tuple,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """``check(answer)`` prints a line starting with ``mark`` (✅ or ❌) holding every phrase, and is truthy iff ✅."""
    verdict, out = run(check, (answer,), capsys)
    assert out.startswith(mark), out
    assert bool(verdict) == (mark == "✅")
    for phrase in phrases:
        assert phrase in out, (case, out)


def first_right(cases: list) -> list:
    """The first right-answer case of each check, in the order of the checks' last cases."""
    return list({c.check: c for c in reversed(cases) if c.marks and set(c.marks) == {"✅"}}.values())


def nan_like(answer: object) -> object:
    """An answer of the same shape(s) as ``answer``, all NaN (a function's: a function that returns NaN)."""
    if isinstance(answer, tuple):  # a check of several answers
        return tuple(map(nan_like, answer))
    if callable(answer):  # a Build exercise's answer: the student's function
        return lambda *args: nan_like(answer(*args))
    return np.full(np.shape(np.asarray(answer, dtype=float)), np.nan)


def assert_phrases_not_in_hint(check: Callable[..., object], cases: list, capsys: pytest.CaptureFixture[str]) -> None:
    """A phrase asserted for a slip of ``check`` (one of ``cases``) comes from the diagnosis, not from the hint
    shown when unanswered; a shape such as "(8, 8)" may be in both."""
    check(None)
    hint = capsys.readouterr().out
    assert NOT_ANSWERED in hint
    for case in cases:
        if set(case.marks) != {"✅"}:
            for phrase in case.phrases:
                if phrase[0] != "(":  # shapes may legitimately appear in a hint
                    assert phrase not in hint, f"{case.id}: {phrase!r} is in the unanswered hint"
