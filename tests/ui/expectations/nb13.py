"""Lesson 13's browser expectation (kind heads): what the page of
``helpers.explorers.nb13`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import functools

import numpy as np
from expected import Expected, expects


@functools.lru_cache(maxsize=1)
def _model() -> tuple:
    from helpers.language_model import load_model

    return load_model()


@expects("heads")
def heads(inputs: dict) -> Expected:
    """13: the chosen head's weights with the removed heads ablated; next-character probabilities of the 8 likeliest
    symbols with every head, with every head and without the removed ones."""
    from helpers.heads import head_weights
    from helpers.language_model import forward

    missing = [n for n in ("text", "layer", "head", "ablate") if n not in inputs]
    assert not missing, f"data-state of a 'heads' explorer lacks {missing}; it has {sorted(inputs)}"
    config, params, tokenizer = _model()
    ids = tokenizer.encode(inputs["text"])  # (T,)
    ablate = [tuple(int(v) for v in pair) for pair in inputs["ablate"]]
    w = head_weights(config, params, ids, ablate=ablate)[int(inputs["layer"]), int(inputs["head"])]  # (T, T)
    probs = []
    for cut in ((), ablate):
        z = forward(config, params, ids, ablate=cut)[-1].astype(np.float64)  # (V,)
        z = np.exp(z - z.max())
        probs.append(z / z.sum())  # (V,)
    top = np.argsort(-probs[0], kind="stable")[:8]  # (8,) the likeliest with every head
    table = np.stack([p[top] for p in probs])  # (2, 8)
    return Expected(w, table, [w, table])
