"""The heatmap cell texts an explorer shows, as the browser tests read them from the page.

The live views send the browser their cells' texts (``helpers.liveview``); this reads the same texts
from the explorer's heatmap widgets. Shared by the explorer tests of tests/test_checks_nb*.py (pytest
puts tests/ on sys.path: ``import html_cells``; the name stays from when the views were HTML strings).
"""

from __future__ import annotations


def shown_cells(ex) -> list[list[str]]:
    """Every heatmap table's cell texts, in page order (as the browser tests read them)."""
    return [t for view in ex.views for t in view.cell_texts()]
