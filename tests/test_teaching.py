"""TEACHING.md quotes only numbers its lessons print: every decimal number and every number with a thousands
separator in a class plan ("0.864", "131,072") stands in a stored output of that class's lessons (or of their
worked solutions), so a plan cannot drift from the notebooks it plans. Whole numbers without a separator (minutes,
steps, "50 %") are not checked: they are mostly the plan's own (timings of the class, counts)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TEACHING = NOTEBOOKS / "TEACHING.md"
NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+\.\d+)(?![\w])")  # 0.864, 131,072, 1.544 (not 06's "06")


def class_plans(text: str) -> dict[str, str]:
    """Each '### Class N · 02 ...: title' section by its heading."""
    parts = re.split(r"^### ", text, flags=re.M)[1:]
    return {part.split("\n", 1)[0]: part for part in parts if part.startswith("Class ")}


def lessons_of(heading: str) -> list[str]:
    """The lesson numbers a class plan's heading names before its colon: 'Class 1 · 00 and 01: ...' -> 00, 01."""
    return re.findall(r"\b(\d\d)\b", heading.split(":")[0].split("·", 1)[1])


def printed(lesson: str) -> str:
    """Every text output stored in the lesson's notebook and its worked solutions."""
    texts = []
    lessons = sorted(NOTEBOOKS.glob(f"{lesson}-*.ipynb")) + sorted((NOTEBOOKS / "solutions").glob(f"{lesson}-*.ipynb"))
    for path in lessons:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for out in cell.get("outputs", []):
                texts.append("".join(out.get("text", "")))
                texts.extend("".join(v) for k, v in out.get("data", {}).items() if k.startswith("text/"))
    return "\n".join(texts)


PLANS = class_plans(TEACHING.read_text(encoding="utf-8"))


def test_every_lesson_has_a_class_plan():
    planned = {lesson for heading in PLANS for lesson in lessons_of(heading)}
    lessons = {p.name[:2] for p in NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")}
    assert lessons <= planned, f"lessons without a class plan in TEACHING.md: {sorted(lessons - planned)}"


@pytest.mark.parametrize("heading", list(PLANS), ids=[h.split(":")[0] for h in PLANS])
def test_every_number_a_class_plan_quotes_is_printed_by_its_lessons(heading: str):
    outputs = "\n".join(printed(lesson) for lesson in lessons_of(heading))
    assert outputs, f"{heading}: no stored outputs found for lessons {lessons_of(heading)}"
    missing = [n for n in NUMBER.findall(PLANS[heading]) if n not in outputs and n.replace(",", "") not in outputs]
    assert not missing, f"{heading}: TEACHING.md quotes numbers no stored output of its lessons prints: {missing}"


def test_the_number_rule_catches_a_number_no_cell_prints():
    assert NUMBER.findall("→ 0.864, 131,072 tokens; class 06 at 12 minutes") == ["0.864", "131,072"]
    assert lessons_of("Class 1 · 00 and 01: attention without weight matrices") == ["00", "01"]
    assert lessons_of("Class 7 · 07, sections 1–3: what \"learned\" means") == ["07"]
