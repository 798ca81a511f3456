"""The language model's text: the course's own prose, frozen into one file by ``make corpus``.

``python -m helpers.corpus`` gathers, in this order (a fixed order, so the file is the same on every machine):
README.md, notebooks/TEACHING.md, the docstrings of helpers/ (module, class and function docstrings, files in
sorted order, each file's docstrings in source order, read with ``ast``), then the markdown cells of
notebooks/NN-*.ipynb in sort order. Parts are separated by a blank line. It writes helpers/data/corpus.txt;
``helpers.language_model.load_corpus`` splits it: the last 10 % (the end of the last lessons) is the
validation text, never trained on.

Tokens are characters. ``vocabulary`` keeps the characters seen at least ``min_count`` times in the training
text; every rarer character maps to one unknown symbol, id 0.
"""

from __future__ import annotations

import ast
import inspect
import json
from collections import Counter
from pathlib import Path

from helpers.language_model import CORPUS_PATH, Tokenizer
from helpers.validate import check_int

__all__ = ["gather", "vocabulary", "MIN_COUNT"]

ROOT = Path(__file__).resolve().parent.parent
MIN_COUNT = 20  # a character seen fewer times in the training text becomes the unknown symbol


def _docstrings(path: Path) -> list[str]:
    """The module, class and function docstrings of one Python file, in source order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    nodes.sort(key=lambda n: getattr(n, "lineno", 0))  # the module first, then by line
    found = (ast.get_docstring(n, clean=False) for n in nodes)
    return [inspect.cleandoc(d) for d in found if d]


def _markdown(path: Path) -> list[str]:
    """The markdown cells of one notebook, in order."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]).strip() for c in cells if c["cell_type"] == "markdown"]


def gather(root: Path = ROOT) -> str:
    """The corpus text from the repository at ``root`` (see the module docstring for what and in which order)."""
    parts = [(root / "README.md").read_text(encoding="utf-8").strip(),
             (root / "notebooks" / "TEACHING.md").read_text(encoding="utf-8").strip()]
    for path in sorted((root / "helpers").rglob("*.py")):
        parts += _docstrings(path)
    for path in sorted((root / "notebooks").glob("[0-9][0-9]-*.ipynb")):
        parts += _markdown(path)
    text = "\n\n".join(p for p in parts if p) + "\n"
    return text.replace("\r\n", "\n")


def vocabulary(train_text: str, min_count: int = MIN_COUNT) -> Tokenizer:
    """A Tokenizer of the characters seen at least ``min_count`` times (sorted), after the unknown symbol."""
    if not isinstance(train_text, str) or not train_text:
        raise ValueError("train_text must be a non-empty str")
    min_count = check_int(min_count, "min_count", minimum=1)
    counts = Counter(train_text)
    kept = sorted(c for c, n in counts.items() if n >= min_count and c != "\ufffd")
    return Tokenizer("\ufffd" + "".join(kept))


def main() -> None:
    text = gather()
    CORPUS_PATH.parent.mkdir(exist_ok=True)
    CORPUS_PATH.write_text(text, encoding="utf-8")
    print(f"{CORPUS_PATH.relative_to(ROOT)}: {len(text):,} characters, {len(set(text))} distinct")


if __name__ == "__main__":
    main()
