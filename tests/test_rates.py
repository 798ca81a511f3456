"""helpers.rates (rates measured by nudging), lesson 07's rates explorer and its static figure.

The measured rate (f(s + ε) − f(s))/ε approaches each rule as ε shrinks; the rules of a product (the paths add) and
a chain (the rates multiply) hold between the measured rates of the parts; bad arguments are named.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.explorer import state_from_html  # noqa: E402
from helpers.explorers import RatesExplorer  # noqa: E402
from helpers.explorers.nb07 import EPSILONS  # noqa: E402
from helpers.figures.nb07 import plot_rate  # noqa: E402
from helpers.rates import FUNCTIONS, RULES, curve, measured_rate, rate_rows, rule_rate  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
from expected import KINDS  # noqa: E402  (fills KINDS from tests/ui/expectations/)

_rates = KINDS["rates"]  # 07's browser expectation, tests/ui/expectations/nb07.py


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("s", [-1.5, -0.3, 0.0, 1.0, 1.5])
def test_the_measured_rate_approaches_the_rule_as_eps_shrinks(name, s):
    f, want = FUNCTIONS[name][-1].f, rule_rate(name, s)
    gaps = [abs(measured_rate(f, s, eps) - want) for eps in (0.1, 0.01, 0.001, 1e-4)]
    assert all(b < a for a, b in zip(gaps, gaps[1:], strict=False)), gaps  # each smaller nudge is closer
    assert gaps[-1] <= 1e-3 * max(1.0, abs(want)), gaps  # one-sided: the gap shrinks like eps


def test_the_rules_by_hand():
    assert rule_rate("s²", 1.5) == 3.0 and rule_rate("eˢ", 0.0) == 1.0
    assert rule_rate("product s·eˢ", 1.0) == pytest.approx(2 * math.e, rel=1e-15)  # eˢ + s·eˢ
    assert rule_rate("chain (eˢ)²", 0.0) == pytest.approx(2.0, rel=1e-15)  # 2u·eˢ at u = 1
    assert measured_rate(lambda x: 3 * x + 1, 0.7, 0.5) == pytest.approx(3.0, rel=1e-12)  # a line: its slope, any ε


@pytest.mark.parametrize("s", [-0.5, 0.5, 1.2])
def test_product_and_chain_rules_hold_between_the_measured_parts(s):
    eps = 1e-6
    _, prod = rate_rows("product s·eˢ", s, eps)  # rows g, h, f; columns at, nudged, measured rate
    (g, _, dg), (h, _, dh), (_, _, df) = prod
    assert df == pytest.approx(dg * h + g * dh, rel=1e-5)  # the two paths add
    assert df != pytest.approx(dg * dh, rel=1e-2)  # not the product of the rates
    _, chain = rate_rows("chain (eˢ)²", s, eps)  # rows inner, outer (per unit of u), whole
    (u, _, du), (_, _, douter), (_, _, dwhole) = chain
    assert u == pytest.approx(math.exp(s), rel=1e-15)
    assert douter == pytest.approx(2 * u, rel=1e-5) and dwhole == pytest.approx(douter * du, rel=1e-5)


def test_rate_rows_shape_labels_and_rule_column():
    labels, t = rate_rows("s²", 1.0, 0.5)
    assert labels == ["s²"] and t.tolist() == [[1.0, 2.25, 2.5]]
    labels, t = rate_rows("chain (eˢ)²", 0.0, 0.5, rule=True)
    assert len(labels) == 3 and t.shape == (3, 4) and t[:, 3].tolist() == pytest.approx([1.0, 2.0, 2.0])
    assert set(RULES) == set(FUNCTIONS)


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: measured_rate("x", 1.0, 0.1), TypeError, "f must be"),
    (lambda: measured_rate(math.exp, 1.0, 0.0), ValueError, "eps must be"),
    (lambda: measured_rate(math.exp, 1.0, -0.1), ValueError, "eps must be"),
    (lambda: measured_rate(math.exp, float("nan"), 0.1), ValueError, "s must be"),
    (lambda: measured_rate(math.exp, True, 0.1), TypeError, "s must be"),
    (lambda: measured_rate(math.exp, 1e17, 1.0), ValueError, "too small to move s"),
    (lambda: measured_rate(lambda x: [x], 1.0, 0.1), TypeError, "f must return a real number"),
    (lambda: measured_rate(lambda x: math.inf, 1.0, 0.1), ValueError, "where f is finite"),
    (lambda: rate_rows("s³", 1.0, 0.1), ValueError, "name must be one of"),
    (lambda: rate_rows("s²", 1.0, 0.1, rule="yes"), TypeError, "rule must be True or False"),
    (lambda: rate_rows("eˢ", 80.0, 0.1), ValueError, "s must be"),
    (lambda: curve("s²", 1.0, 1.0), ValueError, "lo < hi"),
    (lambda: plot_rate("s²", 1.0, 2.0), ValueError, "eps must be"),
])
def test_bad_arguments_are_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_the_explorer_shows_the_measured_table_the_drawing_and_hides_the_rule_until_asked():
    ex = RatesExplorer()
    try:
        st = state_from_html(ex.readout.value)
        assert st["inputs"] == {"function": "s²", "s": 1.0, "eps": "0.5", "rule": False}
        np.testing.assert_array_equal(ex.weights, [[1.0, 2.25, 2.5]])
        assert (st["at"], st["nudged"], st["rate"]) == (1.0, 2.25, 2.5)  # the whole's numbers, by name (07 reads them)
        assert "<svg" in ex.readout.value and "2.5000" in ex.readout.value
        assert "the rule" not in ex.readout.value.split("<svg")[0]  # measured first: no rule shown
        ex.set(function="chain (eˢ)²", s=0.3, eps="0.001", rule=True)
        st = state_from_html(ex.readout.value)
        assert st["inputs"]["s"] == 0.3  # the slider's float, rounded to what it shows
        want = _rates(st["inputs"])
        np.testing.assert_allclose(ex.weights, want.weights, rtol=1e-12, atol=0)
        assert [st["at"], st["nudged"], st["rate"]] == ex.weights[-1, :3].tolist()  # the chain's whole: its last row
        assert ex.weights.shape == (3, 4) and "rates multiply along a chain" in ex.readout.value
        for name in FUNCTIONS:  # every function and nudge of the menus draws
            for eps in EPSILONS:
                ex.set(function=name, eps=eps, s=-1.5)
                assert ex.readout.value.count("<svg") == 2 and "error" not in ex.state()
    finally:
        ex.close()


def test_the_static_figure_draws_the_curve_the_tangent_and_the_measured_line():
    fig = plot_rate("eˢ", 0.0, 0.5)
    try:
        ax = fig.axes[0]
        lines = ax.get_lines()
        assert len(lines) == 4  # curve, tangent, measured line, the two points
        tangent, measured = lines[1].get_ydata(), lines[2].get_ydata()
        xs = lines[1].get_xdata()
        assert (tangent[1] - tangent[0]) / (xs[1] - xs[0]) == pytest.approx(1.0)  # the rate of eˢ at 0
        assert (measured[1] - measured[0]) / (xs[1] - xs[0]) == pytest.approx((math.exp(0.5) - 1) / 0.5)
        assert "slope 1.2974 (measured)" in [t.get_text() for t in ax.get_legend().get_texts()][2]
    finally:
        plt.close(fig)
