"""Tests of helpers.panels without a medium: numbers as text and the colour bars of a View (``color_bars``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from helpers import panels as P

# --------------------------------------------------------------------------- format_value


@pytest.mark.parametrize("value", [None, "0.5", [0.5], np.array([0.5, 1.0]), {}, 1 + 2j, True, np.True_])
def test_format_value_refuses_what_is_not_a_number_naming_the_argument(value):
    with pytest.raises(TypeError, match=r"value must be a real number \(a cell of the matrix\), got "):
        P.format_value(value)


def test_format_value_takes_numpy_scalars_as_python_numbers():
    assert P.format_value(np.float32(0.5)) == P.format_value(np.array(0.5)) == P.format_value(0.5) == "0.500"
    assert P.format_value(np.int64(12)) == "12" and P.format_value(np.nan) == "nan"


# --------------------------------------------------------------------------- ticks


@pytest.mark.parametrize(
    ("lo", "hi", "kwargs", "ticks"),
    [
        (0.0, 3.0, {}, ((0.0, "0"), (1.5, "1.500"), (3.0, "3.000"))),  # the loss of 11: as its cells print
        (-1.0, 3.0, {}, ((-1.0, "-1.000"), (1.0, "1.000"), (3.0, "3.000"))),  # a non-integer panel: decimals
        (2.0, 16.0, {"integer": True}, ((2.0, "2"), (9.0, "9"), (16.0, "16"))),  # integer cells: integer ticks
        (0.0, 1.0, {"integer": True}, ((0.0, "0"), (1.0, "1"))),  # a 0/1 mask: no "0.500" in the middle
        (0.5, 1.5, {"integer": True}, ((0.5, "0.500"), (1.0, "1.000"), (1.5, "1.500"))),  # padded around a constant 1
        (-0.5, 0.5, {"fmt": ".2f"}, ((-0.5, "-0.50"), (0.0, "0.00"), (0.5, "0.50"))),  # the panel's own fmt
        (1.1, 2.315, {"middle": False}, ((1.1, "1.100"), (2.315, "2.315"))),  # one cell wide: the two ends
    ],
)
def test_ticks_sit_at_lo_middle_hi_and_print_as_the_panel_prints(lo, hi, kwargs, ticks):
    assert P.color_bar_ticks(lo, hi, **kwargs) == ticks


@pytest.mark.parametrize(
    ("args", "error", "words"),
    [
        ((1.0, 0.0), ValueError, "a colour bar needs lo < hi, got lo=1.0, hi=0.0"),
        ((2.0, 2.0), ValueError, "a colour bar needs lo < hi"),
        ((0.0, float("nan")), TypeError, "hi must be a finite real number, got nan"),
        (("0", 1.0), TypeError, "lo must be a finite real number, got '0'"),
        ((0.0, 1.0, "q"), ValueError, "fmt 'q' is not a valid float format spec"),
    ],
)
def test_ticks_refuse_a_scale_that_is_no_scale_naming_the_argument(args, error, words):
    with pytest.raises(error, match=re.escape(words)):
        P.color_bar_ticks(*args)


# --------------------------------------------------------------------------- colour bars


def _values(lo_hi, title="v", cols=3, **kw):
    m = np.linspace(*lo_hi, 2 * cols).reshape(2, cols)  # (2, cols) from lo to hi
    return P.Panel(m, title, kind="values", **kw)


def _weights(title="w"):
    return P.Panel(np.full((2, 2), 0.5), title)


def test_a_values_panel_gets_a_bar_of_its_own_with_its_scale_label_and_ticks():
    (bar,) = P.color_bars(P.View([_values((-1.0, 2.0))]))
    assert (bar.kind, bar.label, bar.lo, bar.hi, bar.panels) == ("values", "value (own scale)", -1.0, 2.0, (0,))
    assert bar.ticks == ((-1.0, "-1.000"), (0.5, "0.500"), (2.0, "2.000"))
    (bar,) = P.color_bars(P.View([_values((0, 4), vmin=0.0, vmax=10.0, color_bar_label="loss (same scale)")]))
    assert (bar.label, bar.lo, bar.hi) == ("loss (same scale)", 0.0, 10.0)  # vmin/vmax, not the data's range
    (bar,) = P.color_bars(P.View([P.Panel(np.eye(2) * 3, "s", kind="scores")]))
    assert (bar.kind, bar.label) == ("scores", "score (own scale)")


def test_neighbours_on_one_scale_share_a_bar_others_get_their_own_and_weights_share_one():
    K = [_values((-1, 2), f"K{j}", vmin=-1.0, vmax=2.0) for j in (1, 2)]
    V = [_values((0, 5), f"V{j}", vmin=0.0, vmax=5.0) for j in (1, 2)]
    bars = P.color_bars(P.View([*K, *V]))
    assert [(b.panels, b.lo, b.hi) for b in bars] == [((0, 1), -1.0, 2.0), ((2, 3), 0.0, 5.0)]
    bars = P.color_bars(P.View([*K, *V], ncols=3))  # K1 K2 V1 | V2: a bar never spans two rows of panels
    assert [b.panels for b in bars] == [(0, 1), (2,), (3,)]
    bars = P.color_bars(P.View([K[0], _weights(), K[1]]))  # the same scale, not neighbours: one bar each
    assert [(b.kind, b.panels) for b in bars] == [("values", (0,)), ("weights", (1,)), ("values", (2,))]
    bars = P.color_bars(P.View([_weights("a"), _values((0, 1)), _weights("b")]))
    assert [(b.kind, b.panels) for b in bars] == [("values", (1,)), ("weights", (0, 2))]  # after the last weights
    (w,) = P.color_bars(P.View([_weights(), _weights()]))
    assert (w.lo, w.hi, w.label, w.ticks) == (0.0, 1.0, P.COLOR_BAR_LABELS["weights"], P.WEIGHTS_COLOR_BAR_TICKS)
    same_range_other_label = [_values((0, 1)), _values((0, 1), color_bar_label="loss")]
    assert len(P.color_bars(P.View(same_range_other_label))) == 2
    assert P.color_bars(P.View([*K, _weights()], color_bars=False)) == []
    # scaled to their own data: never shared, even when the ranges happen to be equal (a live view would
    # otherwise be rebuilt whenever two ranges met or parted, as 01's scores and scaled scores do at scale 1)
    auto = P.color_bars(P.View([_values((0, 1), "s"), _values((0, 1), "s2"), _values((0, 1), "s3", vmin=0.0)]))
    assert [b.panels for b in auto] == [(0,), (1,), (2,)]


def test_the_stops_are_the_whole_colormap_from_lo_to_hi():
    import matplotlib as mpl

    for lo, hi in ((0.0, 1.0), (-6.928, 0.0), (1e-5, 2e-5), (0.1, 0.7)):
        (bar,) = P.color_bars(P.View([_values((lo, hi))]))
        want = mpl.colormaps[P.CMAP](np.linspace(0.0, 1.0, 11), bytes=True)  # (11, 4) the colormap, end to end
        np.testing.assert_array_equal(P.colormap_lut()[bar.stops()], want)
        at = P.cell_color_index(np.linspace(lo, hi, 11)[None, :], lo, hi)[0]  # the panel's own lo .. hi
        assert np.abs(np.array(bar.stops()) - at).max() <= 1  # equal up to float rounding of lo + f·(hi − lo)


def test_color_bars_and_stops_refuse_bad_input_naming_the_argument():
    with pytest.raises(TypeError, match="view must be a helpers.panels.View, got list"):
        P.color_bars([_values((0.0, 1.0))])
    (bar,) = P.color_bars(P.View([_values((0.0, 1.0))]))
    assert bar.stops(2) == [0, P.colormap_lut().shape[0] - 1]  # the two ends of the colormap
    for n in (1, 0, 2.5, True):
        with pytest.raises(ValueError,
                           match=re.escape(f"n must be an integer of at least 2 (both ends of the bar), got {n}")):
            bar.stops(n)


def test_a_color_bar_label_must_be_text_and_is_for_scores_and_values():
    with pytest.raises(TypeError, match="color_bar_label must be a string or None, got int"):
        P.Panel(np.eye(2), "v", kind="values", color_bar_label=3)
    with pytest.raises(ValueError, match="color_bar_label is for scores and values panels"):
        P.Panel(np.eye(2), "w", color_bar_label="weights of layer 2")


def test_a_bar_under_fewer_than_3_columns_is_ticked_at_its_ends_only():
    (narrow,) = P.color_bars(P.View([_values((0.0, 2.0), cols=2)]))
    assert narrow.ticks == ((0.0, "0"), (2.0, "2.000"))  # "1.000" between them would collide in 2 cells
    fixed = {"vmin": 0.0, "vmax": 2.0}
    (shared,
     ) = P.color_bars(P.View([_values((0.0, 2.0), "K1", cols=2, **fixed), _values((0.0, 2.0), "K2", cols=2, **fixed)]))
    assert shared.panels == (0, 1) and shared.ticks == ((0.0, "0"), (1.0, "1.000"), (2.0, "2.000"))
