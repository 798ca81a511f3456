"""What the explorers of several lessons share: the registry and 01/02's step view (checks: helpers.validate).

``register`` adds an explorer class to ``REGISTRY`` under its ``kind``, with its lesson (from the
module it lives in: ``helpers.explorers.nb02`` -> "02", the notebook ``notebooks/02-*.ipynb``) and its
demo factory: a small instance built from the course's own examples, which the tests, the browser
tests' screenshots and the benchmarks use instead of a list of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from helpers.attention import attention_steps
from helpers.explorer import Explorer, Shown
from helpers.panels import Panel, View, step_panels
from helpers.validate import check_callable

__all__ = ["Registered", "REGISTRY", "register", "steps_shown"]


@dataclass(frozen=True)
class Registered:
    """One explorer of the course: its kind, its class, its lesson ("02") and a factory of a small demo."""

    kind: str
    cls: type[Explorer]
    lesson: str
    demo: Callable[[], Explorer]


REGISTRY: dict[str, Registered] = {}  # kind -> Registered, in lesson order (the package imports every nbNN in order)


def register(demo: Callable[[], Explorer]) -> Callable[[type[Explorer]], type[Explorer]]:
    """Class decorator: register an explorer of a lesson module ``helpers.explorers.nbNN`` under its kind."""

    def add(cls: type[Explorer]) -> type[Explorer]:
        module = cls.__module__.rpartition(".")[2]  # "nb02"
        if not (module.startswith("nb") and module[2:].isdigit()):
            raise ValueError(f"{cls.__name__} lives in {cls.__module__}: register explorers in a lesson module "
                             "helpers.explorers.nbNN")
        kind = getattr(cls, "kind", None)
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"{cls.__name__} needs a class attribute kind (a non-empty string), got {kind!r}")
        taken = REGISTRY.get(kind)
        if taken and (taken.cls.__module__, taken.cls.__qualname__) != (cls.__module__, cls.__qualname__):
            raise ValueError(f"kind {kind!r} of {cls.__name__} is taken by {taken.cls.__name__}")  # not by a reload
        check_callable(demo, f"demo of {cls.__name__}", "a function that builds one")
        REGISTRY[kind] = Registered(kind, cls, module[2:], demo)
        return cls

    return add


def steps_shown(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float, tokens: list[str], inputs: dict,
                features: Sequence[str] | None = None) -> Shown:
    """01 and 02: the attention weights beside the controls, the seven steps below."""
    steps = attention_steps(Q, K, V, scale)
    main = Panel(steps["weights"], "attention weights", row_labels=tokens, col_labels=tokens)
    feats = list(features) if features is not None else [str(j + 1) for j in range(V.shape[1])]
    panels = step_panels(steps, tokens, feature_labels=feats, scale=scale)
    wide = sum(p.matrix.shape[1] for p in panels) > 21  # as plots.step_view: two rows of panels when wide
    return Shown([View([main]), View(panels, ncols=4 if wide else None)],
                 inputs={**inputs, "scale": scale}, weights=steps["weights"], output=steps["output"],
                 note=f"scale = {scale:.4f}")
