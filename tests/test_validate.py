"""helpers.validate: each check returns the argument in the caller's form or names what is wrong.

The modules' own tests pin the messages each function gives; these pin the shared wording and the
parameters that let a caller keep its own (kind, rule, against, layout).
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest
from support import rx

from helpers import validate as V


def test_check_int_returns_an_int_within_its_bounds():
    assert V.check_int(np.int64(3), "n", minimum=1, maximum=3) == 3
    assert type(V.check_int(np.int64(3), "n")) is int
    assert V.check_int(-10**30, "n") == -10**30  # no bound: any integer


@pytest.mark.parametrize(
    ("value", "error", "parts"),
    [
        (0, ValueError, ("n must be at least 1, got 0",)),
        (4, ValueError, ("n must be at most 3, got 4",)),
        (2.0, TypeError, ("n must be an integer, got 2.0 (float)",)),
        (True, TypeError, ("n must be an integer, got True (bool)",)),
        ("2", TypeError, ("n must be an integer, got '2' (str)",)),
        (None, TypeError, ("n must be an integer, got None (NoneType)",)),
    ],
)
def test_check_int_refuses_in_words(value, error, parts):
    with pytest.raises(error, match=rx(*parts)):
        V.check_int(value, "n", minimum=1, maximum=3)


def test_check_real_default_wording_and_a_callers_own():
    assert V.check_real(1, "lr", low=0.0) == 1.0
    assert V.check_real(0.0, "beta", low=0.0, high=1.0, low_open=False) == 0.0
    with pytest.raises(ValueError, match=rx("lr must be a finite number in (0.0, inf), got 0.0")):
        V.check_real(0, "lr", low=0.0)
    with pytest.raises(ValueError, match=rx("beta must be a finite number in [0.0, 1.0), got 1.0")):
        V.check_real(1.0, "beta", low=0.0, high=1.0, low_open=False)
    with pytest.raises(ValueError, match=rx("lr must be a finite number in (0.0, inf), got nan")):
        V.check_real(math.nan, "lr", low=0.0)
    with pytest.raises(TypeError, match=rx("lr must be a real number, got np.True_ (bool)")):
        V.check_real(np.True_, "lr", low=0.0)
    with pytest.raises(TypeError, match=rx("eps must be a size, got '1' (str)")):
        V.check_real("1", "eps", kind="a size")
    with pytest.raises(ValueError, match=rx("eps must be a finite number > 0, got -1.0")):
        V.check_real(-1, "eps", low=0.0, rule="a finite number > 0")


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_])
def test_check_flag_takes_python_and_numpy_booleans(value):
    assert V.check_flag(value, "causal") is bool(value)


@pytest.mark.parametrize("value", [1, 0, "yes", None, np.array([True])])
def test_check_flag_refuses_anything_else(value):
    with pytest.raises(TypeError, match=rx(f"causal must be True or False, got {value!r}")):
        V.check_flag(value, "causal")


def test_check_rng():
    rng = np.random.default_rng(0)
    assert V.check_rng(rng) is rng
    with pytest.raises(TypeError, match=rx("rng must be a numpy Generator, e.g. np.random.default_rng(0), got int")):
        V.check_rng(0)


def test_check_labels_counts_from_start_and_names_where_n_comes_from():
    assert V.check_labels(None, 3, "labels", against="-") == ["1", "2", "3"]
    assert V.check_labels(None, 2, "labels", against="-", start=5) == ["5", "6"]
    assert V.check_labels(np.array([1, 2]), 2, "labels", against="-") == ["1", "2"]
    with pytest.raises(TypeError, match=rx("token_labels must be a list of 3 labels, got str")):
        V.check_labels("abc", 3, "token_labels", against="X has 3 tokens")
    with pytest.raises(ValueError, match=rx("token_labels has 2 labels but X has 3 tokens")):
        V.check_labels(["a", "b"], 3, "token_labels", against="X has 3 tokens")


def test_as_numeric_and_check_finite():
    assert V.as_numeric([1, 2], "x").dtype == np.float64
    assert V.as_numeric(np.ones(2, np.float32), "x").dtype == np.float32
    assert V.as_numeric([[1.0, -np.inf]], "x", finite="no_pos_inf").shape == (1, 2)
    with pytest.raises(ValueError, match=rx("x contains NaN (first at index (0, 1), shape (1, 2))")):
        V.as_numeric([[1.0, np.nan]], "x")
    with pytest.raises(ValueError, match=rx("x contains +inf (first at index (1,), shape (2,))")):
        V.as_numeric([0.0, np.inf], "x", finite="no_pos_inf")
    with pytest.raises(ValueError, match=rx("x contains an infinite value (first at index (0,)")):
        V.check_finite(np.array([-np.inf]), "x")
    with pytest.raises(TypeError, match=rx("x must hold real numbers (int or float), got dtype bool",
                                           "(booleans are masks, not scores)")):
        V.as_numeric([True], "x")
    with pytest.raises(ValueError, match=rx("x must have at least 2 dimensions, got shape (3,)")):
        V.as_numeric([1, 2, 3], "x", min_ndim=2)


def test_as_matrix_names_its_layout():
    with pytest.raises(ValueError, match=rx("W must be a 2-D matrix (d_in, d_out), got shape (3,)")):
        V.as_matrix([1, 2, 3], "W", "(d_in, d_out)")
    with pytest.raises(ValueError, match=rx("W must be a 2-D matrix, got shape (3,)")):
        V.as_matrix([1, 2, 3], "W")


def test_as_token_ids_and_check_matrices():
    assert V.as_token_ids([[0, 1]], "tokens").dtype.kind == "i"
    with pytest.raises(TypeError, match=rx("tokens must hold integer token ids, got dtype float64")):
        V.as_token_ids([0.0], "tokens")
    with pytest.raises(ValueError, match=rx("params is missing ['b']")):
        V.check_matrices({"a": np.eye(2)}, ("a", "b"))
    with pytest.raises(ValueError, match=rx("params['a'] must be a 2-D matrix, got shape (2,)")):
        V.check_matrices({"a": np.ones(2)}, ("a",))


def test_refuse_large_and_byte_size():
    assert V.byte_size(1536) == "1.5 KiB" and V.byte_size(10) == "10 bytes"
    V.refuse_large(V.MAX_BYTES // 8, "x", "n")  # exactly 1 GiB is allowed
    with pytest.raises(ValueError, match=rx("x would take 1,073,741,832 bytes (1 GiB)", "lower n")):
        V.refuse_large(V.MAX_BYTES // 8 + 1, "x", "n")


def test_validate_imports_only_the_standard_library_and_numpy():
    tree = ast.parse(open(V.__file__, encoding="utf-8").read())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node,
                                                                                  ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node,
                                                                                    ast.ImportFrom) and node.module}
    assert imported == {"__future__", "collections", "math", "numbers", "numpy"}


def test_as_array_refuses_text_and_ragged_lists_in_the_callers_words():
    np.testing.assert_array_equal(V.as_array([1, 2], "x", what="-", rectangular="-"), [1, 2])
    with pytest.raises(TypeError, match=rx("lengths must be a list of ints, got a str")):
        V.as_array("12", "lengths", what="a list of ints", rectangular="-")
    with pytest.raises(ValueError, match=rx("x must be a rectangular array: its rows have different lengths")):
        V.as_array([[1, 2], [3]], "x", what="-", rectangular="a rectangular array")


def test_check_matrix_one_row_finite_and_its_own_dtype():
    m = V.check_matrix([[1, 2], [3, 4]], "W")
    assert m.dtype.kind == "i" and m.shape == (2, 2)  # its own dtype: integer sliders stay integer
    assert V.check_matrix([0.5, 1.0], "m", one_row=True, finite=False).shape == (1, 2)  # one query row
    assert np.isnan(V.check_matrix([[np.nan]], "m", finite=False)).all()  # a heatmap draws NaN; a slider refuses it
    with pytest.raises(ValueError, match=rx("W contains NaN (first at index (0, 1), shape (1, 2))")):
        V.check_matrix([[1.0, np.nan]], "W")
    with pytest.raises(ValueError, match=rx("W must be a 2-D matrix (rows, columns), got shape (2,)")):
        V.check_matrix([1.0, 2.0], "W")
    with pytest.raises(ValueError, match=rx("W is empty (shape (0, 3))")):
        V.check_matrix(np.zeros((0, 3)), "W")
    with pytest.raises(TypeError, match=rx("W must be a 2-D numeric array, got a str")):
        V.check_matrix("ab", "W")
    with pytest.raises(TypeError, match=rx("P must be numeric, got a str")):
        V.check_matrix("ab", "P", what="numeric")
    with pytest.raises(TypeError, match=rx("W must hold real numbers (int or float), got dtype bool")):
        V.check_matrix(np.ones((2, 2), bool), "W")


def test_check_bool_matrix_copies_and_refuses_numbers():
    m = np.ones((2, 2), bool)
    got = V.check_bool_matrix(m, "mask")
    assert got is not m and got.dtype == bool
    with pytest.raises(TypeError, match=rx("mask must be a boolean matrix (True = may attend), got dtype float64")):
        V.check_bool_matrix(np.ones((2, 2)), "mask")
    with pytest.raises(ValueError, match=rx("mask must be a rectangular matrix: its rows have different lengths")):
        V.check_bool_matrix([[True], [True, False]], "mask")


def test_check_positive_shows_the_number_as_typed_and_check_finite_real():
    assert V.check_positive(2, "dpi", "a number > 0") == 2.0
    with pytest.raises(ValueError, match=rx("dpi must be a number > 0, got 0")) as err:
        V.check_positive(0, "dpi", "a number > 0")
    assert str(err.value).endswith("got 0")  # 0 as typed, not 0.0
    with pytest.raises(TypeError, match=rx("dpi must be a number > 0, got True (bool)")):
        V.check_positive(True, "dpi", "a number > 0")
    assert V.check_finite_real(None, "vmin", optional=True) is None
    with pytest.raises(TypeError, match=rx("vmin must be a finite real number or None, got nan")):
        V.check_finite_real(math.nan, "vmin", optional=True)
    with pytest.raises(TypeError, match=rx("lo must be a finite real number, got None")):
        V.check_finite_real(None, "lo")


def test_labels_tokens_choice_callable_and_name():
    assert V.check_tokens(None, 2) == ["x1", "x2"] and V.check_labels(None, 2, "c", against="-") == ["1", "2"]
    with pytest.raises(ValueError, match=rx("token_labels has 1 labels but X has 2 tokens (rows)")):
        V.check_tokens(["a"], 2)
    assert V.check_choice("b", "kind", ("a", "b")) == "b"
    with pytest.raises(ValueError, match=rx("kind must be one of ('a', 'b'), got 'c'")):
        V.check_choice("c", "kind", ("a", "b"))
    assert V.check_callable(len, "fn") is len
    with pytest.raises(TypeError, match=rx("fn must be a function to call, got int")):
        V.check_callable(3, "fn")
    with pytest.raises(TypeError, match=rx("name must be a non-empty string without spaces (it becomes a CSS class)")):
        V.check_name("a b")
