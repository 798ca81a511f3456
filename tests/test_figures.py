"""Tests of helpers.figures: the one-off figures of a lesson (04's head split and image patches, 11's residual
stream) and the formula card."""

from __future__ import annotations

import math
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import examples as E  # noqa: E402
from helpers.figures.card import formula_card  # noqa: E402
from helpers.figures.nb04 import plot_head_split, show_image_patches  # noqa: E402
from helpers.figures.nb11 import plot_residual_stream  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _cell_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_plot_head_split_right_heads_keep_tokens_wrong_heads_mix_them():
    right = plot_head_split(6, 2)
    head0 = _cell_texts(right.axes[1])  # (T=3, d_k=3) cells, row by row: "token,column"
    assert head0 == ["1,1", "1,2", "1,3", "2,1", "2,2", "2,3", "3,1", "3,2", "3,3"]  # counted from 1
    assert _cell_texts(right.axes[2])[:3] == ["1,4", "1,5", "1,6"]
    wrong = plot_head_split(6, 2, wrong=True)
    assert _cell_texts(wrong.axes[1])[:6] == ["1,1", "1,2", "1,3", "1,4", "1,5", "1,6"]  # token 1 spills into row 2
    assert "row r ≠ token r" in wrong.axes[1].get_title() and "≠" not in right.axes[1].get_title()
    with pytest.raises(ValueError, match="d_model 6 is not a multiple of n_heads 4"):
        plot_head_split(6, 4)
    with pytest.raises(TypeError, match="n_heads must be an integer"):
        plot_head_split(6, 2.0)


def test_show_image_patches_tokens_are_the_patches_read_row_by_row():
    fig = show_image_patches(E.T003_IMAGE, E.T003_PATCH_SIZE)
    token_ax = fig.axes[1]
    shown = np.array([float(t) for t in _cell_texts(token_ax)]).reshape(4, 16)
    np.testing.assert_array_equal(shown, E.T003_PATCHES)  # the text's own typed patches
    with pytest.raises(ValueError, match="which patch=3 does not divide"):
        show_image_patches(E.T003_IMAGE, 3)


def test_formula_card_is_one_a4_landscape_page_with_text_001s_attention_weights():
    import helpers

    fig = formula_card()
    assert tuple(fig.get_size_inches()) == (11.69, 8.27)  # A4 landscape
    texts = [t.get_text() for t in fig.texts]
    assert texts[0] == "Attention by hand · formula card"
    weights = helpers.single_head_attention(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV)[1]  # (3, 3)
    block = next(t for t in texts if t.startswith("attention weights A (3, 3)"))
    assert f"{weights[0, 0]:.3f}" in block  # the card prints the weights it computed, as the cells do


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: plot_head_split(4, 2, "abc"), TypeError, "wrong must be True or False, got 'abc'"),
        (lambda: plot_residual_stream([np.eye(2)], None, {"a": slice(0, 2)}, row_labels=["1", "2"],
                                      col_labels=["1", "2"]),
         TypeError, "titles must be a list of 1 strings (one per stream), got None"),
        (lambda: plot_residual_stream([np.zeros((2, 600))], ["t"], {"a": slice(0, 600)}, row_labels=["1", "2"],
                                      col_labels=[str(k) for k in range(600)]),
         ValueError, "1 streams of shape (2, 600) need a figure of 206.5 × 1.7 inches, above 100 a side"),
        (lambda: show_image_patches(np.array([[0.0, 1.0], [math.inf, 0.0]]), 1), ValueError,
         "image contains inf at index (1, 0) (shape (2, 2)); every pixel must be a finite number"),
        (lambda: plot_residual_stream([np.eye(2), np.array([[0.0, math.nan], [1.0, 0.0]])], ["a", "b"],
                                      {"a": slice(0, 2)}, row_labels=["1", "2"], col_labels=["1", "2"]),
         ValueError, "streams[1] contains nan at index (0, 1) (shape (2, 2)); the residual stream of a working model"),
        (lambda: plot_residual_stream([np.eye(2)], ["t"], {"a": slice(0, 1), "b": slice(1, 2)}, row_labels=["1", "2"],
                                      col_labels=["1", "2"], show=["a", "c"]),
         ValueError, "show must be a non-empty list of block names from ['a', 'b'], got ['a', 'c']"),
    ],
)
def test_bad_input_gets_a_message_naming_the_argument(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_importing_the_figures_imports_neither_pyplot_nor_ipywidgets_and_changes_no_rcparams():
    code = (
        "import sys, matplotlib as mpl\n"
        "before = {k: mpl.rcParams[k] for k in mpl.rcParams if k != 'backend'}  # reading 'backend' loads pyplot\n"
        "import helpers.figures.card, helpers.figures.nb04, helpers.figures.nb11\n"
        "assert sys.modules.get('matplotlib.pyplot') is None, 'pyplot imported'\n"
        "assert sys.modules.get('ipywidgets') is None, 'ipywidgets imported'\n"
        "changed = [k for k in before if mpl.rcParams[k] != before[k]]\n"
        "assert not changed, changed\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
