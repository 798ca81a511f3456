"""Drop stored widget views from executed notebooks (``make notebooks`` runs this after executing them).

Notebooks are saved without widget state, so a stored widget view points at a model that no longer
exists: JupyterLab would show "Error displaying widget: model not found" until the cell is run again,
and the view's random model id would change in every diff. Without the view, the cell shows the
explorer's text fallback (what to do to get the live sliders) until it is run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def strip(path: Path) -> int:
    """Remove widget views from the outputs of one notebook in place; return how many were removed."""
    nb = nbformat.read(path, as_version=4)
    removed = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if WIDGET_VIEW in out.get("data", {}):
                del out["data"][WIDGET_VIEW]
                removed += 1
    if removed:
        nbformat.write(nb, path)
    return removed


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {strip(Path(arg))} widget view(s) removed")
