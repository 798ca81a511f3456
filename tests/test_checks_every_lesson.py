"""What every exercise check of every lesson must do, whatever it checks.

Parametrised over every public ``check_...`` of every module that ``helpers.checks.lessons()`` finds: a new
lesson's module, and a new check in an old one, are tested here without editing this file. Each lesson's own
``tests/test_checks_nbNN.py`` (and ``tests/test_checks.py`` for 01-04) keeps its table: the right answer, each
slip and the explanation the check prints for it.

A check's answers are its parameters without a default; a check that also takes the notebook's inputs (04's
take Q, n_heads, ...) names its answer ``answer``, and its inputs come from ``INPUTS`` below (a check with
inputs that are missing there fails ``test_a_check_has_answers_this_file_can_give``).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable

import numpy as np
import pytest
from check_table import marks_of

from helpers.attention import xavier_normal
from helpers.checks import NOT_ANSWERED, Verdict, lessons

MODULES = lessons()
CHECKS = {f"{m.__name__.rpartition('.')[2]}.{name}": getattr(m, name) for m in MODULES
          for name in getattr(m, "__all__", ()) if name.startswith("check_")}

_RNG = np.random.default_rng(0)
INPUTS = {  # the notebook's inputs of a check that takes them besides the answer (nb04)
    "nb04.check_split_heads": (10 * np.arange(4)[:, None] + np.arange(6), 3),  # Q (T=4, d_model=6), h=3
    "nb04.check_merge_heads": (np.arange(12.0).reshape(2, 3, 2),),  # heads (h=2, T=3, d_head=2)
    "nb04.check_head_weights": (_RNG.normal(size=(4, 6)), xavier_normal(6, 8, _RNG), xavier_normal(6, 8, _RNG), 4),
    "nb04.check_output_projection": (_RNG.normal(size=(2, 3, 2)), xavier_normal(4, 3, _RNG)),  # heads, W_o
}


def answers_and_inputs(key: str) -> tuple[int, tuple]:
    """How many answers the check takes, and the inputs that follow them."""
    params = [p for p in inspect.signature(CHECKS[key]).parameters.values()
              if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in params]
    if "answer" in names and len(names) > 1:
        assert names[0] == "answer", f"{key}: the answer comes first, got {names}"
        return 1, INPUTS[key]
    return len(names), ()


def call(key: str, answer: object, capsys: pytest.CaptureFixture[str]) -> tuple[object, str, int]:
    """The check called with ``answer`` for each of its answers: its verdict, what it printed, how many answers."""
    n, inputs = answers_and_inputs(key)
    capsys.readouterr()  # drop anything printed before
    with np.errstate(all="ignore"):
        verdict = CHECKS[key](*(answer,) * n, *inputs)
    return verdict, capsys.readouterr().out, n


def test_every_lesson_module_of_checks_is_found_and_has_checks():
    assert [m.__name__ for m in MODULES][:4] == [f"helpers.checks.nb0{k}" for k in range(1, 5)]
    for m in MODULES:
        assert any(name.startswith("check_") for name in getattr(m, "__all__", ())), f"{m.__name__}: no public check"


@pytest.mark.parametrize("key", CHECKS)
def test_a_check_has_answers_this_file_can_give(key):
    n, inputs = answers_and_inputs(key)
    assert n >= 1, f"{key} takes no answer"


@pytest.mark.parametrize("key", CHECKS)
def test_a_check_keeps_its_name_and_docstring_and_returns_a_verdict(key):
    check = CHECKS[key]
    assert check.__name__ == key.rpartition(".")[2]
    assert check.__doc__ and check.__doc__.strip(), f"{key} has no docstring"
    assert inspect.signature(check).return_annotation in (Verdict, "Verdict"), f"{key} is not annotated -> Verdict"


@pytest.mark.parametrize("answer", [None, ...], ids=["None", "Ellipsis"])
@pytest.mark.parametrize("key", CHECKS)
def test_unanswered(key: str, answer: object, capsys: pytest.CaptureFixture[str]) -> None:
    """Each answer left as None (or ...) gets its own ❌ "Not answered yet" line, with its hint; never a raise."""
    verdict, out, n = call(key, answer, capsys)
    assert isinstance(verdict, Verdict) and not verdict
    assert marks_of(out) == "❌" * n, out
    assert out.count(NOT_ANSWERED) == n, out
    assert out.count("Hint:") == n, out


def _raises(*args: object) -> object:
    raise RuntimeError("student code blew up")


def _returns_none(*args: object) -> object:
    return None


GARBAGE = {  # what the lessons' tables each tried, together
    "string": "abc",
    "text": "text",
    "empty string": "",
    "bytes": b"\x00\x01",
    "bytes 1": b"\x00",
    "function that raises": _raises,
    "function returning None": _returns_none,
    "ragged list": [[1.0, 2.0], [3.0]],
    "ragged int list": [[1, 2], [3]],
    "nested ragged list": [1, [2, 3]],
    "list of None": [None, None],
    "dict": {"a": 1},
    "object": object(),
    "empty list": [],
    "empty array": np.zeros((0, 5)),
    "empty bool array": np.zeros((0, 5), dtype=bool),
    "empty 1-D": np.zeros((0,)),
    "complex": np.ones((4, 4)) * 1j,
    "complex 5x5": np.ones((5, 5)) * 1j,
    "complex 8x8": np.ones((8, 8)) * 1j,
    "complex 1-D": np.ones(2) * 1j,
    "complex scalar": 1j,
    "nan": float("nan"),
    "nan 1-D": np.full(2, np.nan),
    "nan 4": np.full(4, np.nan),
    "nan 5x5": np.full((5, 5), np.nan),
    "nan 8x8": np.full((8, 8), np.nan),
    "inf": float("inf"),
    "inf 1-D": np.full(2, np.inf),
    "inf 5x4": np.full((5, 4), np.inf),
    "inf 5x5": np.full((5, 5), np.inf),
    "inf 3-D": np.full((3, 1, 5), np.inf),
    "-inf 1-D": np.full(2, -np.inf),
    "-inf row": np.full(4, -np.inf),
    "bool": True,
    "bool 1-D": np.ones(2, dtype=bool),
    "bool 4x4": np.ones((4, 4), dtype=bool),
    "bool wrong shape": np.ones((3, 8), dtype=bool),
    "int 0/1 wrong shape": np.ones((8, 3), dtype=int),
    "2-D": np.ones((3, 3)),
    "3-D": np.ones((2, 3, 3)),
    "1e39": 1e39,
    "float64 max": float(np.finfo(np.float64).max),
    "1e400": 1e400,
    "10**400": 10**400,
    "-10**400": -(10**400),
    "huge 5x5": [[1e308] * 5] * 5,
    "datetime": np.array(["2024-01-01"], dtype="datetime64[D]"),
}
ANY_NUMBER = {"int 3": 3}
RIGHT_BY_CHANCE = {"nb08.check_merge"}  # 3 is the right m of 08's merge: its other two parts are wrong


@pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")  # complex answers: said in words, not warned
@pytest.mark.parametrize("key", CHECKS)
def test_garbage_never_raises(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Any answer at all: no exception, no warning of a cast, a falsy Verdict, one ❌ line per answer and no ✅."""
    problems = []
    for label, answer in {**GARBAGE, **ANY_NUMBER}.items():
        try:
            verdict, out, n = call(key, answer, capsys)
        except Exception as err:  # the finding: a check must never raise on an answer
            problems.append(f"{label}: raised {type(err).__name__}: {err}")
            continue
        marks = marks_of(out)
        if label in ANY_NUMBER and key in RIGHT_BY_CHANCE:
            ok = len(marks) == n and "❌" in marks
        else:
            ok = marks == "❌" * n and "✅" not in out
        if not isinstance(verdict, Verdict) or verdict or not ok:
            problems.append(f"{label}: returned {verdict!r}, printed {out!r}")
    assert not problems, "\n".join(problems)


def _frozen(x: object) -> object:
    """``x`` as a comparable value, exactly (an array's dtype, shape and bytes); a function stands for itself."""
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, dict):
        return ("dict", tuple((k, _frozen(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_frozen(v) for v in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__, tuple((f.name, _frozen(getattr(x, f.name))) for f in dataclasses.fields(x)))
    if callable(x):
        return ("callable", id(x))
    return ("value", type(x).__name__, repr(x))


def _exercise_data(module) -> dict[str, object]:
    """Every public constant of a lesson's checks (EX_..., the exercises' data) and the inputs its checks are given
    here, frozen: compared exactly."""
    data = {name: _frozen(value) for name, value in vars(module).items()
            if name.isupper() and not name.startswith("_") and not isinstance(value, (type, Callable))}
    prefix = module.__name__.rpartition(".")[2] + "."
    data |= {f"the inputs of {key}": _frozen(inputs) for key, inputs in INPUTS.items() if key.startswith(prefix)}
    return data


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_checks_do_not_change_the_exercise_data(module, capsys: pytest.CaptureFixture[str]) -> None:
    before = _exercise_data(module)
    assert before, f"{module.__name__} has no exercise data"
    keys = [k for k, check in CHECKS.items() if check.__module__ == module.__name__]
    for key in keys:
        for answer in (None, np.zeros((8, 8)), np.zeros((5, 5)), np.zeros(2)):
            call(key, answer, capsys)
    after = _exercise_data(module)
    changed = [name for name in before if after.get(name) != before[name]]
    assert not changed, f"{module.__name__}: the checks changed {changed}"
