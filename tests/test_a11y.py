"""Accessibility in the kernel: every control's accessible name, the text a live region announces, and every
figure's text alternative (its alt text), all computed from what is shown (issue 29).

What the browser does with them (names on the slider handles, aria-pressed, the live region, alt on every
image) and axe-core's verdict are tested in tests/ui (test_notebooks_ui, test_voila_ui, test_export_ui).
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.core.pylabtools import select_figure_formats  # noqa: E402

from helpers import panels as P  # noqa: E402
from helpers import (
    plots,  # noqa: E402
    softmax,  # noqa: E402
)
from helpers.controls import MatrixSliders, MatrixToggles, scalar_slider  # noqa: E402
from helpers.explorer import Explorer, Shown  # noqa: E402
from helpers.explorers import REGISTRY  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))


def test_a_matrix_slider_says_its_matrix_row_and_column():
    grid = MatrixSliders("W_q", np.zeros((2, 3)), row_labels=["animal", "noun"])
    assert grid.names["W_q-1-0"] == "W_q, row 'noun', column 1"
    assert grid.sliders[1, 0].tooltip == grid.names["W_q-1-0"]  # the same words for a mouse's tooltip
    head = MatrixSliders("W_k", np.zeros((2, 2)), col_offset=2, label="W_k head 2")
    assert head.names["W_k-0-2"] == "W_k head 2, row 1, column 3"  # the full matrix's column, counted from 1
    assert len(head.names) == 4


def test_a_mask_cell_says_which_query_may_attend_to_which_key_and_shows_a_mark():
    grid = MatrixToggles("mask", np.eye(2, dtype=bool), row_labels=["it", "cat"], col_labels=["it", "cat"])
    assert grid.names["mask-0-1"] == "query 'it' may attend to key 'cat'"
    on, off = grid.buttons[0, 0], grid.buttons[0, 1]
    assert (on.description, off.description) == ("✓", "")  # a mark as well as the colour
    grid.set_value(~np.eye(2, dtype=bool))
    assert (on.description, off.description) == ("", "✓")


class _Two(Explorer):
    kind = "two"

    def __init__(self):
        super().__init__(s=scalar_slider("s", 0.0, min=-2, max=2, step=0.5, description="score of key 2"),
                         W=MatrixSliders("W", np.zeros((1, 2))))

    def show(self, s, W):
        w = softmax(np.array([[0.0, s + W[0, 0]]]))  # (1, 2)
        return Shown(P.View([P.Panel(w, "weights", ["it"], ["the", "cat"])]), inputs={"s": s}, weights=w)


def test_the_readout_names_every_control_and_carries_what_to_announce():
    ex = _Two()
    assert ex.readout.names == {"s": "score of key 2", "W-0-0": "W, row 1, column 1", "W-0-1": "W, row 1, column 2"}
    say = re.findall(r'<div class="attn-say" hidden>([^<]*)</div>', ex.readout.value)
    assert say == [html.escape(P.describe_view(ex._shown.views[0]))]
    ex.set(s=2.0)
    assert "'it' → 'cat' 0.881" in html.unescape(ex.readout.value)  # softmax([0, 2]) = [0.119, 0.881]
    ex.close()


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_every_explorer_names_every_slider_and_toggle(kind):
    ex = REGISTRY[kind].demo()
    try:
        classes = []
        stack = [ex.widget]
        while stack:
            w = stack.pop()
            stack.extend(getattr(w, "children", ()))
            classes += [c for c in getattr(w, "_dom_classes", ()) if re.match(r"attn-(slider|toggle)--", c)]
        assert classes, f"{kind}: no slider or toggle found"
        unnamed = [c for c in classes if c.split("--", 1)[1] not in ex.readout.names]
        assert not unnamed, f"{kind}: controls without an accessible name: {unnamed}"
    finally:
        ex.close()


def test_describe_cells_names_the_largest_cell_of_the_rows_that_stand_out():
    w = np.array([[0.5, 0.5, 0.0], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]])  # (3, 3)
    texts = P.format_matrix(w)
    text = P.describe_cells(w, texts, ["the", "it", "cat"], ["the", "it", "cat"], title="w", rows_shown=1)
    assert text == ("w (attention weights, 3 queries × 3 keys); largest in the 1 rows where it stands out most: "
                    f"'it' → 'cat' {texts[1][2]}")
    both = P.describe_cells(np.array([[np.nan, 1.0]]), [["nan", "1"]], ["q"], ["1", "2"], kind="scores")
    assert both == "scores (scores, 1 × 2); largest in each row: 'q' → 2 1; 1 cells nan or inf"


def test_alt_text_reads_what_the_figure_draws():
    hm = plots.heatmap(np.array([[0.2, 0.8]]), row_labels=["it"], col_labels=["the", "cat"], title="head 1")
    assert plots.alt_text(hm.fig) == ("Figure. head 1 (attention weights, 1 query × 2 keys); largest in each row: "
                                      "'it' → 'cat' 0.800.")
    fig, ax = plt.subplots()
    ax.plot([8, 16, 32], [1.0, 4.0, 16.0], label="attention")
    ax.set(title="time", xlabel="T", ylabel="ms")
    assert plots.alt_text(fig) == "Figure. time: ms against T; 1 line (attention), x from 8 to 32."
    assert plots.set_alt_text(fig, "timings of attention") is fig and plots.alt_text(fig) == "timings of attention"
    with pytest.raises(ValueError, match="text must say something"):
        plots.set_alt_text(fig, " ")
    with pytest.raises(TypeError, match="text must be a str, got int"):
        plots.set_alt_text(fig, 3)
    plt.close("all")


def _png_description(b64: str) -> str | None:
    raw = base64.b64decode(b64)
    i = 8
    while i < len(raw):
        n, kind = int.from_bytes(raw[i : i + 4], "big"), raw[i + 4 : i + 8]
        data = raw[i + 8 : i + 8 + n]
        if kind == b"iTXt" and data.startswith(b"Description\0"):
            return data.split(b"\0", 5)[5].decode("utf-8")
        i += 12 + n
    return None


def test_describe_figures_gives_each_png_its_alt_in_metadata_and_in_the_png():
    shell = InteractiveShell.instance()
    select_figure_formats(shell, {"png"})
    hm = plots.heatmap(np.array([[0.2, 0.8]]), row_labels=["it"], col_labels=["the", "cat"])
    try:
        plots.describe_figures()
        plots.describe_figures()  # twice: still one wrapper
        data, md = shell.display_formatter.format(hm.fig)
        alt = plots.alt_text(hm.fig)
        assert md == {"image/png": {"alt": alt}}
        assert _png_description(data["image/png"]) == alt
        plots.describe_figures(False)
        data, md = shell.display_formatter.format(hm.fig)
        assert md == {} and _png_description(data["image/png"]) is None
    finally:
        plots.describe_figures(False)
        plt.close("all")
        InteractiveShell.clear_instance()


@pytest.mark.parametrize("nb", LESSONS, ids=lambda p: p.name)
def test_every_stored_figure_has_its_alt_text(nb: Path):
    """make html and nbviewer show the stored outputs: each figure carries its alt (re-execute after a change)."""
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    figures = [(k, o) for k, c in enumerate(cells) for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    missing = [k for k, o in figures if not o.get("metadata", {}).get("image/png", {}).get("alt")]
    assert not missing, f"{nb.name}: figures without alt text in cells {missing}"
