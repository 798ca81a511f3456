"""The heatmap cell texts an explorer shows, read from its HTML views as the browser tests read them.

Shared by the explorer tests of tests/test_checks_nb*.py (pytest puts tests/ on sys.path: ``import html_cells``).
"""

from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    """The cell texts (td) of every table of an HTML string, one list per table."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[str]] = []
        self._td = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "td":
            self._td = True
            self.tables[-1].append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._td = False

    def handle_data(self, data):
        if self._td:
            self.tables[-1][-1] += data


def shown_cells(ex) -> list[list[str]]:
    """Every heatmap table's cell texts, stripped, in page order (as the browser tests read them)."""
    out = []
    for view in ex._views:
        p = _Tables()
        p.feed(view.value)
        out.extend([c.strip() for c in t] for t in p.tables)
    return out
