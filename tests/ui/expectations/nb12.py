"""Lesson 12's browser expectation (kind language-model): what the page of
``helpers.explorers.nb12`` shows, recomputed from the data-state with ``helpers`` (found by ``expected.py``)."""

from __future__ import annotations

import numpy as np
from expected import Expected, expects


@expects("language-model")
def language_model(inputs: dict) -> Expected:
    """12: the text by ``language_model.generate`` (no trace), then one full forward pass over it (no cache):
    the next-character distribution's top 10 and each head's attention row of the newest character."""
    missing = [n for n in ("prompt", "temperature", "top_k", "step", "n_new", "seed", "window") if n not in inputs]
    assert not missing, f"data-state of a 'language-model' explorer lacks {missing}; it has {sorted(inputs)}"
    from helpers import language_model as lm

    config, params, tokenizer = lm.load_model()
    params = {k: v.astype(np.float64) for k, v in params.items()}  # the explorer's float64 model
    n_new, step, window, V = int(inputs["n_new"]), int(inputs["step"]), int(inputs["window"]), config.vocab_size
    ids = tokenizer.encode(inputs["prompt"], errors="replace")[-(config.context - n_new):]  # (T0,)
    top_k = int(inputs["top_k"])
    temperature = float(inputs["temperature"])
    tokens = lm.generate(config, params, ids, n_new, temperature=temperature, top_k=None if top_k >= V else top_k,
                         seed=int(inputs["seed"]))  # (T0 + n_new,)
    t = len(ids) + step
    z = lm.forward(config, params, tokens[:t])[-1]  # (V,) logits after the newest character
    if temperature == 0:
        p = (np.arange(V) == np.argmax(z)).astype(float)  # (V,)
    else:
        z = z / temperature
        if top_k < V:
            z = np.where(z >= np.sort(z)[-top_k], z, -np.inf)  # (V,) the top k (ties kept)
        p = np.exp(z - z.max())
        p /= p.sum()  # (V,)
    top = np.argsort(-p, kind="stable")[:10]  # (10,)
    rows = lm.attention_weights(config, params, tokens[:t])[:, :, -1, max(0, t - window):]  # (L, h, keep)
    return Expected(rows, p[top], [p[top][None], *rows])
