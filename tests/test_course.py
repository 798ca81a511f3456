"""The notebooks as a course: a short core path per lesson, honest predictions, one vocabulary.

Run with ``-s`` to see the word counts. Counting rule: the words of the markdown cells before the cell
that reads ``*End of the core path.*``. A word is a whitespace-separated token with at least one letter
or digit, after HTML tags and display math (``$$ … $$``) are removed: a table's ``|`` and ``---`` and a
formula on a line of its own are not words a student reads.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
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


def prediction_spans(cells: list[dict]) -> list[tuple[int, list[int], int | None]]:
    """Each "**Predict" prompt whose Answer is not in its own cell, as (prompt, between, answer): `between` holds
    the cells after the prompt up to the markdown cell with "<summary>Answer" (`answer`, its index), or up to the
    next heading or prompt (`answer` None)."""
    spans = []
    for i, cell in enumerate(cells):
        src = _text(cell)
        if cell["cell_type"] != "markdown" or "**Predict" not in src:
            continue
        if "<summary>Answer" in src.split("**Predict", 1)[1]:  # asked and answered in one cell
            continue
        between, answer = [], None
        for j in range(i + 1, len(cells)):
            nxt = _text(cells[j])
            if cells[j]["cell_type"] == "markdown" and "<summary>Answer" in nxt:
                answer = j
                break
            if cells[j]["cell_type"] == "markdown" and (nxt.lstrip().startswith("#") or "**Predict" in nxt):
                break
            between.append(j)
        spans.append((i, between, answer))
    return spans


def unanswered_outputs(cells: list[dict]) -> list[tuple[int, int]]:
    """(prompt cell, code cell) pairs where a code cell between a "Predict" prompt and its Answer box stores
    a visible output (a live explorer's placeholder line excepted): the reader would see the answer first.
    The prompt's span ends at the markdown cell that holds "<summary>Answer" or at the next heading."""
    found = []
    for prompt, between, _ in prediction_spans(cells):
        for i in between:
            cell = cells[i]
            if cell["cell_type"] != "code" or cell.get("metadata", {}).get("jupyter", {}).get("outputs_hidden", False):
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


# A number that can state an answer: a decimal with at least 3 significant digits ("0.1873", "14.14", "1,306,841.57",
# "4.94e-324"), not part of a name or of a version ("x1.5", "3.11.7"). Whole numbers are left out: in a prompt and the
# code it runs they are nearly always the sizes and limits the question gives ("4,096 keys", "65,504").
DECIMAL = re.compile(r"(?<![\w.])\d[\d,]*\.\d+(?:e[-+]?\d+)?(?![\w]|\.\d)")
MATH_NAMES = {"np", "numpy", "math"}  # an expression naming only these is a constant: np.sqrt(3), 1 / 8


def decimals(text: str) -> dict[float, str]:
    """The decimals of `text` with at least 3 significant digits, by their absolute value (as written)."""
    found = {}
    for m in DECIMAL.finditer(text):
        mantissa = m.group().split("e")[0].replace(",", "").replace(".", "")
        if len(mantissa.lstrip("0")) >= 3:
            found[abs(float(m.group().replace(",", "")))] = m.group()
    return found


def _python(src: str) -> str:
    """A code cell's source without IPython's magic and shell lines, so that Python can parse it."""
    return "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))


def _said(src: str) -> str:
    """What a code cell says in words: its comments and string literals (f-strings included)."""
    said = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    return "\n".join(t.string for t in tokenize.generate_tokens(io.StringIO(_python(src)).readline) if t.type in said)


def _asserts(src: str) -> list[str]:
    """The checks in a code cell that state a result: every `assert` statement, and every `assert_*` call
    (np.testing.assert_allclose, ...) that compares with a constant (`0.1873`, `np.sqrt(3)`, `[1, 2]`).
    An `assert_*` of one computed value against another (a hand computation against the helper) states nothing."""
    found = []
    for node in ast.walk(ast.parse(_python(src))):
        if isinstance(node, ast.Assert):
            found.append(f"line {node.lineno}: an `assert`")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            constant = [a for a in node.args[:2]
                        if {n.id for n in ast.walk(a) if isinstance(n, ast.Name)} <= MATH_NAMES]
            if name.startswith("assert_") and constant:
                found.append(f"line {node.lineno}: {name} against the constant {ast.unparse(constant[0])}")
    return found


def _visible(cell: dict) -> str:
    """What a reader sees of a stored cell without acting: its source, and a code cell's outputs unless hidden."""
    text = _text(cell)
    if cell["cell_type"] == "code" and not cell.get("metadata", {}).get("jupyter", {}).get("outputs_hidden", False):
        for out in cell.get("outputs", []):
            text += "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
    return text


def predictions_given_away(cells: list[dict]) -> list[tuple[int, int, str]]:
    """(prompt cell, cell, what) for each place that states a prediction's answer before the reader acts:

    * a code cell between a "**Predict" prompt and its Answer box holds an `assert`, or an `assert_*` call against
      a constant (see `_asserts`): the source is read before the cell runs;
    * a decimal of 3+ significant digits that the Answer box writes also stands in the prose just above the
      question (the markdown cell before the prompt, and the prompt's own text before "**Predict") or in a
      comment or string of a code cell between prompt and Answer, and is not a given: a given is a number the
      question itself writes, or one that the notebook shows before that prose (a source, or an output not hidden).
    """
    found = []
    for prompt, between, answer in prediction_spans(cells):
        code = [j for j in between if cells[j]["cell_type"] == "code"]
        found += [(prompt, j, what) for j in code for what in _asserts(_text(cells[j]))]
        if answer is None:
            continue
        box = _text(cells[answer]).split("<summary>Answer", 1)[1].split("</details>", 1)[0]
        before, question = _text(cells[prompt]).split("**Predict", 1)
        above = prompt - 1 if prompt > 0 and cells[prompt - 1]["cell_type"] == "markdown" else prompt
        given = set(decimals(question)) | set(decimals("\n".join(_visible(c) for c in cells[:above])))
        stated = decimals(box)
        places = [(above, _text(cells[above]))] if above < prompt else []
        places += [(prompt, before)] + [(j, _said(_text(cells[j]))) for j in code]
        for j, text in places:
            for value in sorted(set(decimals(text)) & set(stated) - given):
                where = "the prose above the question" if j <= prompt else "a comment or string of the code"
                found.append((prompt, j, f"{stated[value]}, the Answer's number, stands in {where}"))
    return found


LESSONS_ALL = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))


@pytest.mark.parametrize("nb", LESSONS_ALL, ids=lambda p: p.stem)
def test_no_prediction_is_answered_by_what_the_reader_sees_before_running_it(nb: Path):
    bad = predictions_given_away(_cells(nb))
    assert not bad, "\n".join([f"{nb.name} cell {j} (prediction of cell {p}): {what}" for p, j, what in bad] + [
        "the reader sees these before acting: move the check or the number after the Answer box, or check a hand "
        "computation against the helper (np.testing.assert_allclose(mine, helper(...)))"])


def test_the_given_away_rule_catches_each_kind():
    md = lambda s: {"cell_type": "markdown", "source": [s], "metadata": {}}  # noqa: E731
    code = lambda s: {"cell_type": "code", "source": [s], "outputs": [], "metadata": {}}  # noqa: E731
    clean = [md("Earlier: the score is 3.5355."),  # a given: shown before the prompt's prose
             md("Each row sums to 1; the score was 3.5355."),
             md("**Predict:** the scaled score is 14.14. What weight does it get?"),  # 14.14: a given of the question
             code("w = weight(14.14)  # the weight at 14.14\n"
                  "np.testing.assert_allclose(w, helper(14.14))  # the helper agrees\nprint(f'weight {w:.4f}')"),
             md("<details><summary>Answer</summary>\n\n0.1873: 14.14 is far above 3.5355.\n\n</details>")]
    assert predictions_given_away(clean) == []
    kinds = {  # (cell index, new source) -> what the rule must say
        (1, "Each row sums to 1; the score was 3.5355, its weight 0.1873."): "the prose above",
        (2, "So 0.1873. **Predict:** the scaled score is 14.14. What weight?"): "the prose above",
        (3, "w = weight(14.14)  # 0.1873"): "a comment or string",
        (3, "w = weight(14.14)\nprint('weight 0.1873:', w)"): "a comment or string",
        (3, "w = weight(14.14)\nassert w > 0.15"): "an `assert`",
        (3, "w = weight(14.14)\nnp.testing.assert_allclose(w, 0.1873, atol=1e-4)"): "against the constant 0.1873",
        (3, "w = weight(14.14)\nassert_allclose(w, np.exp(1) / 14.5)"): "against the constant np.exp(1) / 14.5",
    }
    for (i, src), says in kinds.items():
        cells = [dict(c) for c in clean]
        cells[i] = (md if cells[i]["cell_type"] == "markdown" else code)(src)
        found = predictions_given_away(cells)
        assert len(found) == 1 and found[0][:2] == (2, i) and says in found[0][2], (src, found)
    assert decimals("0.50, 1.000, 3.11.7, x1.5, 65,504, 1,306,841.57, 4.94e-324, −0.4297") == {
        1.0: "1.000", 1306841.57: "1,306,841.57", 4.94e-324: "4.94e-324", 0.4297: "0.4297"}


WEIGHT_MATRICES = re.compile(r"\bweights (?:W_|`W_)|\b(?:W_q|W_k|W_v|W_o)`?,? (?:and `?W_\w`? )?(?:are|as) (?:the "
                             r")?weights\b")


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").rglob("[0-9][0-9]-*.ipynb")), ids=lambda p: p.stem)
def test_weight_matrices_are_never_called_plain_weights(nb: Path):
    for i, cell in enumerate(_cells(nb)):
        if cell["cell_type"] == "markdown":
            m = WEIGHT_MATRICES.search(_text(cell))
            assert not m, f"{nb.name} cell {i}: {m.group(0)!r}: say 'weight matrices' or 'parameters'"
