"""The notebooks as a course: a short core path per lesson, honest predictions, one vocabulary.

Run with ``-s`` to see the word counts. Counting rule: the words of the markdown cells before the cell
that reads ``*End of the core path.*``. A word is a whitespace-separated token with at least one letter
or digit, after HTML tags and display math (``$$ … $$``) are removed: a table's ``|`` and ``---`` and a
formula on a line of its own are not words a student reads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb") if not p.name.startswith("00-"))
END = "*End of the core path.*"
CORE_WORDS_MAX = 1200


def _cells(nb: Path) -> list[dict]:
    return json.loads(nb.read_text(encoding="utf-8"))["cells"]


def _text(cell: dict) -> str:
    return "".join(cell["source"])


def words(markdown: str) -> int:
    """Words a student reads: tokens with a letter or digit, without HTML tags and display math."""
    text = re.sub(r"\$\$.*?\$\$", " ", re.sub(r"<[^>]+>", " ", markdown), flags=re.S)
    return sum(1 for token in text.split() if re.search(r"[A-Za-z0-9]", token))


def core_path_words(nb: Path) -> int:
    """Markdown words before the end-of-core-path cell (ValueError if the notebook has none)."""
    cells = _cells(nb)
    ends = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and _text(c).strip() == END]
    if len(ends) != 1:
        raise ValueError(f"{nb.name} has {len(ends)} cells reading {END!r}; a lesson has exactly one")
    return sum(words(_text(c)) for c in cells[: ends[0]] if c["cell_type"] == "markdown")


def test_there_are_lessons():
    assert len(LESSONS) >= 4, [p.name for p in LESSONS]


@pytest.mark.parametrize("nb", LESSONS, ids=lambda p: p.stem)
def test_each_lesson_has_a_core_path_of_at_most_1200_words(nb: Path):
    core = core_path_words(nb)
    total = sum(words(_text(c)) for c in _cells(nb) if c["cell_type"] == "markdown")
    print(f"{nb.stem}: core path {core} words of markdown, whole notebook {total}")
    assert 0 < core <= CORE_WORDS_MAX, (
        f"{nb.name}: the core path has {core} words of markdown (at most {CORE_WORDS_MAX})")


def test_the_word_count_counts_what_it_says(tmp_path):
    # a b Answer x1 2 3
    assert words("| a | b |\n|---|---|\n<details><summary>Answer</summary> x1 </details>\n$$\nQ K^T\n$$ 2 × 3") == 6
    cells = [{"cell_type": "markdown", "source": ["one two\n", "three"]}, {"cell_type": "code", "source": ["a b c d"]},
             {"cell_type": "markdown", "source": [END]}, {"cell_type": "markdown", "source": ["not counted"]}]
    nb = tmp_path / "99-x.ipynb"
    nb.write_text(json.dumps({"cells": cells}))
    assert core_path_words(nb) == 3
    nb.write_text(json.dumps({"cells": cells[:2]}))
    with pytest.raises(ValueError, match="has 0 cells"):
        core_path_words(nb)


def _is_live(cell: dict) -> bool:
    """A cell that shows a live explorer (its stored output is the explorer's text line)."""
    return any("[live explorer" in "".join(o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", []))


PREDICT = re.compile(r"\*\*Predict[^*]*\*\*|^Predict:", re.M)


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")), ids=lambda p: p.stem)
def test_every_prediction_hides_its_answer_until_the_reader_acts(nb: Path):
    """After a "Predict" prompt, the next code cell's stored output is collapsed, and no answer is
    written before that cell (written answers sit in a closed <details> after it)."""
    cells = _cells(nb)
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown" or not PREDICT.search(_text(cell)):
            continue
        nxt = next((j for j in range(i + 1, len(cells)) if cells[j]["cell_type"] == "code" and not _is_live(cells[j])),
                   None)  # a live explorer is where the reader tries it; its answer comes in the cell after it
        assert nxt is not None, f"{nb.name} cell {i}: a prediction with no code cell after it"
        between = [_text(c) for c in cells[i + 1 : nxt] if c["cell_type"] == "markdown"]
        assert not any("<details" not in t and "answer" in t.lower() for t in between), (
            f"{nb.name} cell {i}: an answer is written between the prompt and the cell that shows it")
        meta = cells[nxt].get("metadata", {})
        assert cells[nxt].get("outputs"), f"{nb.name} cell {nxt}: the cell that answers cell {i} stores no output"
        assert meta.get("jupyter", {}).get("outputs_hidden") is True, (
                f"{nb.name} cell {nxt}: answers the prediction of cell {i} but its stored output is visible on open; "
                'set metadata {"jupyter": {"outputs_hidden": true}, "collapsed": true}')
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and "<details" in _text(cell):
            assert "<details open" not in _text(cell), f"{nb.name} cell {i}: an answer opened by default"


def unanswered_outputs(cells: list[dict]) -> list[tuple[int, int]]:
    """(prompt cell, code cell) pairs where a code cell between a "Predict" prompt and its Answer box stores
    a visible output (a live explorer's placeholder line excepted): the reader would see the answer first.
    The prompt's span ends at the markdown cell that holds "<summary>Answer" or at the next heading."""
    found, prompt = [], None
    for i, cell in enumerate(cells):
        src = _text(cell)
        if cell["cell_type"] == "markdown":
            if prompt is not None and ("<summary>Answer" in src or src.lstrip().startswith("#")):
                prompt = None
            if "**Predict" in src:
                prompt = None if "<summary>Answer" in src.split("**Predict", 1)[1] else i
            continue
        if prompt is None or cell.get("metadata", {}).get("jupyter", {}).get("outputs_hidden", False):
            continue
        if any(o.get("output_type") in ("stream", "execute_result", "display_data") and not _is_live(cell)
               for o in cell.get("outputs", [])):
            found.append((prompt, i))
    return found


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")), ids=lambda p: p.stem)
def test_no_output_between_a_prediction_and_its_answer_is_visible(nb: Path):
    """Every code cell between a "Predict" prompt and its Answer box keeps its output hidden on open."""
    bad = unanswered_outputs(_cells(nb))
    assert not bad, "; ".join(f"{nb.name} cell {c}: its output shows before the Answer of the prediction in cell {p} "
                              '(set metadata {"jupyter": {"outputs_hidden": true}, "collapsed": true})'
                              for p, c in bad)


def test_the_hidden_answer_rule_catches_a_visible_output():
    md = lambda s: {"cell_type": "markdown", "source": [s], "metadata": {}}  # noqa: E731
    code = lambda hidden: {"cell_type": "code", "source": ["x"], "outputs": [{"output_type": "stream", "text": ["1"]}],  # noqa: E731
                           "metadata": {"jupyter": {"outputs_hidden": True}} if hidden else {}}
    cells = [md("**Predict:** what?"), code(True), code(False), md("<details><summary>Answer</summary>1</details>"),
             code(False)]
    assert unanswered_outputs(cells) == [(0, 2)]
    cells[2] = code(True)
    assert unanswered_outputs(cells) == []
    assert unanswered_outputs([md("## 1 · A heading"), code(False)]) == []


WEIGHT_MATRICES = re.compile(r"\bweights (?:W_|`W_)|\b(?:W_q|W_k|W_v|W_o)`?,? (?:and `?W_\w`? )?(?:are|as) (?:the "
                             r")?weights\b")


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").rglob("[0-9][0-9]-*.ipynb")), ids=lambda p: p.stem)
def test_weight_matrices_are_never_called_plain_weights(nb: Path):
    for i, cell in enumerate(_cells(nb)):
        if cell["cell_type"] == "markdown":
            m = WEIGHT_MATRICES.search(_text(cell))
            assert not m, f"{nb.name} cell {i}: {m.group(0)!r}: say 'weight matrices' or 'parameters'"
