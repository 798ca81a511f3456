"""The layout of the helpers package: no module reaches into another module's private names.

A name that starts with one underscore is private to its module: what two modules share has a
public home (the argument checks in helpers.validate, the math in its math module). Read with ``ast``,
so nothing is imported; tests may still import private names to test them.
"""

from __future__ import annotations

import ast
from pathlib import Path

HELPERS = Path(__file__).resolve().parents[1] / "helpers"


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_module(dotted: str, root: Path) -> bool:
    path = root.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module an ImportFrom names, with relative imports (from . import x) resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _dotted(node: ast.AST) -> list[str] | None:
    """a.b.c as ["a", "b", "c"], or None if the chain does not start at a plain name."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(names)]


def private_uses(path: Path, root: Path = HELPERS) -> list[str]:
    """Every place ``path`` imports or reads another module's private name, as 'line: what'; root is helpers/."""
    module = _module_name(path, root)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    bound: dict[str, str] = {}  # local name -> the helpers module (or "module:Name" object) it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "helpers":
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["helpers"] = "helpers"
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            if source.split(".")[0] != "helpers":
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                if _is_module(f"{source}.{alias.name}", root):
                    bound[local] = f"{source}.{alias.name}"
                elif source != module and _is_private(alias.name):
                    found.append(f"{node.lineno}: from {source} import {alias.name}")
                elif source != module:
                    bound[local] = f"{source}:{alias.name}"  # a public object: its private members are private too
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = _dotted(node)
        if not chain or chain[0] not in bound:
            continue
        owner = bound[chain[0]]
        for i, attr in enumerate(chain[1:], start=1):
            if ":" not in owner and _is_module(f"{owner}.{attr}", root):
                owner = f"{owner}.{attr}"
                continue
            if _is_private(attr) and owner.split(":")[0] != module:
                found.append(f"{node.lineno}: {'.'.join(chain[: i + 1])} ({owner.split(':')[0]})")
            break
    return sorted(set(found), key=lambda s: int(s.split(":")[0]))


def _helpers_files() -> list[Path]:
    return sorted(HELPERS.rglob("*.py"))


def test_no_helpers_module_uses_another_modules_private_names() -> None:
    offenders = {}
    for path in _helpers_files():
        uses = private_uses(path)
        if uses:
            offenders[path.relative_to(HELPERS).as_posix()] = uses
    assert not offenders, (
        "these modules use private names of other modules; give what they share a public home "
        f"(argument checks in helpers/validate.py): {offenders}"
    )


def test_the_scan_finds_each_kind_of_private_use(tmp_path: Path) -> None:
    """The scanner itself: each way of reaching into another module is found, a module's own names are not."""
    source = '''
import helpers.attention
import helpers.attention as A
from helpers import training as T
from helpers.attention import _as_numeric, softmax
from helpers.generation import KVCache
from helpers.checks import _verdict
from . import _own_private_sibling
from .attention import public_name

helpers.attention._check_T(3)
A._check_T(3)
T._forward(None, None)
KVCache._store
softmax.__name__
_private_here = 1
'''
    pkg = tmp_path / "helpers"
    (pkg / "checks").mkdir(parents=True)
    for name in ("__init__.py", "attention.py", "training.py", "generation.py", "checks/__init__.py"):
        (pkg / name).write_text("")
    probe = pkg / "probe.py"
    probe.write_text(source)
    found = private_uses(probe, pkg)
    assert [f.split(": ", 1)[1] for f in found] == [
        "from helpers.attention import _as_numeric",
        "from helpers.checks import _verdict",
        "from helpers import _own_private_sibling",
        "helpers.attention._check_T (helpers.attention)",
        "A._check_T (helpers.attention)",
        "T._forward (helpers.training)",
        "KVCache._store (helpers.generation)",
    ]
