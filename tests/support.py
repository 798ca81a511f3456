"""Small helpers that many test modules share (pytest puts tests/ on sys.path: ``from support import rx``).

Fixtures and hooks live in ``conftest.py``; the table-driven tests of the exercise checks share
``check_table.py``, and the tests that read an explorer's live tables ``html_cells.py``. Helpers are imported
from these modules, never from a ``conftest.py`` (tests/ui and tests/hub have their own, of the same name).
"""

from __future__ import annotations

import re

__all__ = ["rx"]


def rx(*parts: str) -> str:
    """A ``match`` pattern requiring every literal part, in this order."""
    return "(?s)" + ".*".join(re.escape(p) for p in parts)
