"""The explorer of lesson 13, inside the trained model: one head's attention on a text, and heads removed."""

from __future__ import annotations

import html
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from helpers.attention import softmax_in_place
from helpers.controls import MatrixToggles, choice, text_box
from helpers.explorer import Explorer, Shown, encode_json
from helpers.explorers.common import register
from helpers.heads import char_labels, run_with_weights
from helpers.language_model import load_model
from helpers.panels import Panel, View, cell_color_index, format_matrix
from helpers.validate import check_index_pairs, check_int

__all__ = ["HeadsExplorer", "heads_explorer", "MAX_CHARS", "N_TOP"]

MAX_CHARS = 64  # the longest text the explorer shows: a 64 × 64 heatmap
N_TOP = 8  # next characters shown: the likeliest with every head in place (the same columns whatever is removed)
_CACHE = 32  # (text, removed heads) states kept, so that going back costs no forward pass


def top_symbols(full: np.ndarray, k: int = N_TOP) -> np.ndarray:
    """(k,) ids: the likeliest next symbols of a distribution (V,) (every head in place), likeliest first."""
    return np.argsort(-full, kind="stable")[:k]  # (k,)


@dataclass
class _Ready(Panel):
    """A weights Panel whose cell texts and colour rows were worked out once, when its text was first shown."""

    ready: tuple = field(default=(), repr=False)  # (texts (T, T) of str, colour indices (T, T), the weights' JSON)

    def texts(self) -> list[list[str]]:
        return self.ready[0]

    def color_index(self) -> np.ndarray:
        return self.ready[1]


@register(demo=lambda: HeadsExplorer("the cat sat. the cat sa", layer=1, head=1))
class HeadsExplorer(Explorer):
    """13: a text box, layer and head menus, and one on/off button per head of notebook 12's model.

    Shows the chosen head's attention weights on the text (rows: queries, columns: keys) with the
    switched-off heads removed (their output set to 0 before W_o: ``forward(..., ablate=...)``), and the
    probabilities of the likeliest next characters after the text, with every head in place and without
    the removed ones. Each (text, removed heads) is one forward pass, kept: a head change only picks a
    precomputed (T, T) block.
    """

    kind = "heads"
    about = ("a text box, layer and head menus and an on/off button per head; the chosen head's attention "
             "weights on the text and the next-character probabilities with and without the removed heads")

    def __init__(self, text: str = "the cat sat. the cat sa", layer: int = 1, head: int = 1,
                 ablate: object = (), *, model: tuple | None = None) -> None:
        self.config, self.params, self.tokenizer = load_model() if model is None else model
        L, H = self.config.n_layers, self.config.n_heads
        layer = check_int(layer, "layer", minimum=0, maximum=L - 1)
        head = check_int(head, "head", minimum=0, maximum=H - 1)
        keep = np.ones((L, H), dtype=bool)  # (L, h) True: the head is in place
        for ly, hd in check_index_pairs(ablate, "ablate", (L, H), ("layer", "head")):
            keep[ly, hd] = False
        self._check_text(text)
        self._cache: OrderedDict = OrderedDict()
        super().__init__(
            text=text_box("text", text, description="text", width="20em"),  # narrow: the heatmap fits beside it
            layer=choice("layer", list(range(L)), layer, description="layer"),
            head=choice("head", list(range(H)), head, description="head"),
            heads=MatrixToggles("heads", keep, row_labels=[f"layer {i}" for i in range(L)],
                                col_labels=[f"head {j}" for j in range(H)], label="heads",
                                on_means="in place"))

    def _check_text(self, text: object) -> np.ndarray:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if len(text) < 2:
            raise ValueError(f"text has {len(text)} character{'s' * (len(text) != 1)}: type at least 2")
        if len(text) > MAX_CHARS:
            raise ValueError(f"text has {len(text)} characters; the explorer shows at most {MAX_CHARS}")
        return self.tokenizer.encode(text)  # names any character outside the vocabulary

    def _run(self, text: str, ablate: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(attention weights (L, h, T, T), next-character probabilities (V,), each head's cell texts, colours and
        weights as JSON) of a text with heads removed: worked out once, so that a head change only picks them."""
        key = (text, ablate)
        if key not in self._cache:
            ids = self._check_text(text)  # (T,)
            logits, weights = run_with_weights(self.config, self.params, ids, ablate=ablate)  # (T, V), (L, h, T, T)
            ready = [[(format_matrix(w), cell_color_index(w, 0.0, 1.0), encode_json(w)) for w in layer]
                     for layer in weights]
            self._cache[key] = (weights, softmax_in_place(logits[-1].astype(np.float64)), ready)
            if len(self._cache) > _CACHE:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return self._cache[key]

    def show(self, text: str, layer: int, head: int, heads: np.ndarray) -> Shown:
        ablate = tuple((int(i), int(j)) for i, j in np.argwhere(~np.asarray(heads)))  # the heads switched off
        weights, cut, ready = self._run(text, ablate)
        full = self._run(text, ())[1]
        w = weights[layer, head]  # (T, T)
        labels = char_labels(text)
        top = top_symbols(full)  # (k,) the same columns whichever heads are removed: the layout stays
        probs = np.stack([full[top], cut[top]])  # (2, k)
        names = char_labels("".join(self.tokenizer.symbols[i] for i in top))
        removed = ", ".join(f"({i}, {j})" for i, j in ablate) or "none"
        where = f"head ({layer}, {head})" + ("" if not ablate else f", heads {removed} removed")
        main = _Ready(w, f"{where}: attention weights on the text", labels, labels, ready=ready[layer][head])
        rows = ["every head", "without the removed"]
        after = Panel(probs, f"next character after '…{labels[-1]}'", rows, names, kind="values", vmin=0.0, vmax=1.0,
                      xlabel="next character", ylabel="", color_bar_label="probability")
        say = lambda p: f"'{html.escape(char_labels(self.tokenizer.symbols[int(np.argmax(p))])[0])}' {p.max():.2f}"  # noqa: E731
        note = (f"head ({layer}, {head}) of layer {layer}, {len(text)} characters; heads removed: {removed}. "
                f"Likeliest next character: {say(full)} with every head, {say(cut)} without the removed.")
        inputs = {"text": text, "layer": layer, "head": head, "ablate": [list(p) for p in ablate]}
        return Shown([View([main]), View([after])], inputs=inputs, weights=w, output=probs, note=note,
                     extra={"symbols": [int(i) for i in top]}, encoded={"weights": ready[layer][head][2]})


heads_explorer = HeadsExplorer
