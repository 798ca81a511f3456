"""Tidy executed notebooks in place (``make notebooks`` runs this after executing them).

- Drop stored widget views. Notebooks are saved without widget state, so a stored view points at a
  model that no longer exists: JupyterLab would show "Error displaying widget: model not found" until
  the cell runs again, and the view's random model id would change in every diff. Without it, the cell
  shows the explorer's text fallback (what to do to get the live sliders) until it is run.
- Merge consecutive stdout/stderr outputs of a cell. How the kernel splits a cell's printing into
  messages depends on timing; merged, the stored notebook is the same on every run.
- Turn a first line ``# NBVAL_IGNORE_OUTPUT`` into nbval's cell tag ``nbval-ignore-output``: nbval reads
  either, and a tag does not show in the code a reader sees (on GitHub, in an HTML export). Authors may
  keep writing the comment; this step moves it into the cell's metadata, where nbconvert keeps it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MARKER, TAG = "# NBVAL_IGNORE_OUTPUT", "nbval-ignore-output"


def tidy(path: Path) -> bool:
    """Tidy one notebook in place; return whether anything changed."""
    nb = nbformat.read(path, as_version=4)
    changed = False
    for cell in nb.cells:
        lines = cell.source.split("\n")
        if cell.cell_type == "code" and lines[0].strip() == MARKER:
            cell.source = "\n".join(lines[1:])
            tags = cell.metadata.setdefault("tags", [])
            if TAG not in tags:
                tags.append(TAG)
            changed = True
        merged = []
        for out in cell.get("outputs", []):
            if WIDGET_VIEW in out.get("data", {}):
                del out["data"][WIDGET_VIEW]
                changed = True
            prev = merged[-1] if merged else None
            if (
                prev is not None
                and out.get("output_type") == prev.get("output_type") == "stream"
                and out.get("name") == prev.get("name")
            ):
                prev["text"] += out["text"]
                changed = True
                continue
            merged.append(out)
        if "outputs" in cell:
            cell["outputs"] = merged
    if changed:
        nbformat.write(nb, path)
    return changed


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {'tidied' if tidy(Path(arg)) else 'unchanged'}")
