"""How long each lesson takes to run top to bottom in a fresh kernel (printed, not asserted).

Run: ``python tests/benchmarks/bench_notebooks.py [NOTEBOOK ...]`` (``make bench`` runs it). Notebook 07
trains two attention layers and has a budget of 20 s on 2 cores; notebook 11 trains a two-layer model
twice (about 2 s each on an idle machine) and has 30 s; notebook 10 measures attention up to T = 8192
and has 25 s; the others have none. Timings depend on
the machine and its load: the table prints the load average beside them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
BUDGET_S = {"07-attention-learns": 20.0, "10-attention-for-long-texts": 25.0, "11-induction-heads": 30.0}


def run(path: Path) -> float:
    """Seconds to execute ``path`` in a fresh kernel (kernel start included), from its own folder."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    return time.perf_counter() - t0


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    os.environ.pop("MPLBACKEND", None)  # the notebooks use the inline backend, as for a person
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_notebooks: each notebook top to bottom in a fresh kernel; load average (1 min) {load:.2f}")
    print(f"{'notebook':<36} {'seconds':>8}  budget")
    for path in paths:
        if path.name.startswith("16-") and any(importlib.util.find_spec(m) is None for m in ("torch", "transformers")):
            print(f"{path.stem:<36} {'skipped':>8}  needs the optional extra (make torch)", flush=True)
            continue
        seconds = run(path)
        budget = BUDGET_S.get(path.stem)
        verdict = "" if budget is None else f"{budget:.0f} s {'ok' if seconds <= budget else 'SLOW'}"
        print(f"{path.stem:<36} {seconds:>8.1f}  {verdict}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
