"""The explorer of lesson 12, a small language model: what it writes from a prompt, and why, character by character."""

from __future__ import annotations

import html

import numpy as np

from helpers.controls import scalar_slider, text_box
from helpers.explorer import Explorer, Shown
from helpers.explorers.common import register
from helpers.language_model import load_model
from helpers.panels import Panel, View
from helpers.sampling import trace_generation
from helpers.validate import check_int, check_real

__all__ = ["LanguageModelExplorer", "language_model_explorer", "visible", "TOP"]

TOP = 10  # characters shown of the next-character distribution
_SHOWN = {" ": "␣", "\n": "⏎", "\t": "⇥"}


def visible(text: str) -> list[str]:
    """One label per character, with space, newline and tab drawn as ␣, ⏎, ⇥."""
    return [_SHOWN.get(c, c) for c in text]


_MODEL: dict = {}


def _model64() -> tuple:
    """The committed model with float64 parameters (loaded once): the same text and numbers on every CPU."""
    if not _MODEL:
        config, params, tokenizer = load_model()
        _MODEL["m"] = (config, {k: v.astype(np.float64) for k, v in params.items()}, tokenizer)
    return _MODEL["m"]


@register(demo=lambda: LanguageModelExplorer("the attention weights of ", n_new=12))
class LanguageModelExplorer(Explorer):
    """12: a prompt box, temperature and top-k sliders, a step slider over the generated characters.

    A new prompt, temperature or top-k generates ``n_new`` characters with 09's cache
    (``helpers.sampling.trace_generation``, the committed model in float64, seed ``seed``) and keeps every
    step; the step slider only picks one: the next-character distribution after the newest character (its
    ``TOP`` most likely) and each head's attention row of that character over the last ``window`` characters.
    """

    kind = "language-model"
    about = ("a prompt box, temperature and top-k sliders and a step slider: the small language model's text, its "
             "next-character distribution and each head's attention row of the newest character")
    # yours=: the student's gpt_forward(config, params, tokens)
    yours_spec_name = "helpers.checks.nb15:explain_gpt_forward"
    yours_unit = "logit"

    def __init__(self, prompt: str = "The attention weights of ", *, temperature: float = 0.8, top_k: int | None = None,
                 step: int | None = None, n_new: int = 64, seed: int = 0, window: int = 32,
                 yours: object = None) -> None:
        self.config, self.params, self.tokenizer = _model64()
        V = self.config.vocab_size
        self.n_new = check_int(n_new, "n_new", minimum=1, maximum=self.config.context - 1)
        self.seed = check_int(seed, "seed", minimum=0)
        self.window = check_int(window, "window", minimum=1)
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")
        temperature = check_real(temperature, "temperature", low=0.0, high=2.0 + 1e-9, low_open=False,
                                 rule="a number from 0 to 2")
        top_k = V if top_k is None else check_int(top_k, "top_k", minimum=1, maximum=V)
        step = self.n_new if step is None else check_int(step, "step", minimum=0, maximum=self.n_new)
        self._key, self._trace = None, None
        self._yours_key, self._yours_run, self._yours_axes = None, None, {}
        super().__init__(
            prompt=text_box("prompt", prompt, description="prompt (Enter to generate)"),
            temperature=scalar_slider("temperature", round(temperature, 1), min=0, max=2, step=0.1,
                                      description="temperature (0: greedy)", readout_format=".1f"),
            top_k=scalar_slider("top_k", top_k, min=1, max=V, integer=True, description=f"top-k ({V}: all)"),
            step=scalar_slider("step", step, min=0, max=self.n_new, integer=True,
                               description=f"step (characters generated, of {self.n_new})"), yours=yours)

    def trace(self, prompt: str, temperature: float, top_k: int) -> tuple:
        """(trace, prompt ids, notes): generated once per prompt, temperature and top-k, then re-used."""
        key = (prompt, float(temperature), int(top_k))
        if key != self._key:
            if not prompt:
                raise ValueError("the prompt is empty: type a few characters for the model to continue")
            ids = self.tokenizer.encode(prompt, errors="replace")  # (T0,) unknown characters -> id 0
            notes = []
            unknown = sorted({c for c in prompt if c not in self.tokenizer.symbols})
            if unknown:
                notes.append(f"not in the vocabulary, read as {self.tokenizer.unknown}: {' '.join(unknown[:8])}")
            room = self.config.context - self.n_new
            if len(ids) > room:
                ids = ids[-room:]
                notes.append(f"only the prompt's last {room} characters are read (context {self.config.context} "
                             f"= {room} + {self.n_new} new)")
            V = self.config.vocab_size
            tr = trace_generation(self.config, self.params, ids, self.n_new, temperature=temperature,
                                  top_k=None if top_k >= V else top_k, seed=self.seed, window=self.window)
            self._key, self._trace = key, (tr, ids, notes)
        return self._trace

    # yours=: the student's gpt_forward, run once per generated text (the step slider only picks a row of it) --
    def yours_name(self) -> str:
        return "gpt_forward"

    def yours_outcome(self, values: dict) -> tuple[np.ndarray, object, str | None, float, float]:
        """The logits after the newest character, for the reference's TOP most likely next characters: the
        reference's and the student's (their gpt_forward on the whole generated text, checked once by
        ``helpers.checks.nb15.explain_gpt_forward``: a row t of causal logits sees tokens 0..t only, so the
        text's row t - 1 is what the model says after t characters; a function that lets a row see the future
        shows it here). The reference's logits are the trace's (09's cache: equal to a full forward pass to
        about 1e-13, far inside the check's tolerance)."""
        from helpers.checks.nb15 import TOLERANCE, explain_gpt_forward

        tr, _, _ = self.trace(values["prompt"], values["temperature"], values["top_k"])
        if self._yours_key != self._key:
            params = {k: v.copy() for k, v in self.params.items()}  # theirs to change: the explorer's model stays
            got, problem = explain_gpt_forward(self.yours, self.config, params, tr.tokens)
            got = None if got is None else np.asarray(got, dtype=np.float64)
            T, V = len(tr.tokens), self.config.vocab_size
            self._yours_key, self._yours_run = self._key, (got if got is not None and got.shape == (T, V) else None,
                                                           problem)
        got, problem = self._yours_run
        step = values["step"]
        t = tr.n_prompt + step  # the logits after t characters: row t - 1 of the text's, row step of the trace's
        top = np.argsort(-tr.probs[step], kind="stable")[:TOP]  # (TOP,) as show picks them
        self._yours_axes = {"row_labels": ["logit"], "xlabel": "next character", "ylabel": "",
                            "col_labels": visible("".join(self.tokenizer.symbols[i] for i in top))}
        tol = TOLERANCE[np.dtype(np.float64)] * max(1.0, float(np.abs(tr.logits).max()))  # the check's, as it compares
        return tr.logits[step, top], None if got is None else got[t - 1, top], problem, 0.0, tol

    def yours_axes(self, shape: tuple[int, int]) -> dict:
        return self._yours_axes if shape == (1, TOP) else {}

    def yours_title(self, name: str) -> str:
        return f"your {name} beside the reference: the logits after the newest character"

    def show(self, prompt: str, temperature: float, top_k: int, step: int) -> Shown:
        tr, ids, notes = self.trace(prompt, temperature, top_k)
        if not 0 <= step <= self.n_new:
            raise ValueError(f"step must be 0 to {self.n_new}, got {step}")
        T0, text = tr.n_prompt, self.tokenizer.decode(tr.tokens)
        t = T0 + step  # characters so far; the newest is text[t - 1]
        p = tr.probs[step]  # (V,)
        top = np.argsort(-p, kind="stable")[:TOP]  # (TOP,) most likely first, ties by id
        chars = visible("".join(self.tokenizer.symbols[i] for i in top))
        dist = Panel(p[top][None], f"next character after step {step}: the {TOP} most likely", ["p"], chars,
                     kind="values", vmin=0.0, vmax=1.0, xlabel="next character", ylabel="",
                     color_bar_label="probability (0 to 1)")
        keep = int(tr.n_keys[step])
        keys = visible(text[t - keep:t])
        rows = tr.attention[step][:, :, self.window - keep:]  # (L, h, keep)
        heads = [f"head {i}" for i in range(self.config.n_heads)]  # (layer, head) counted from 0, as 12-14 say
        newest = visible(text[t - 1])[0]
        panels = [Panel(rows[layer], f"layer {layer}: the newest character '{newest}' over its last {keep} keys",
                        heads, keys, xlabel="key (character)", ylabel="head") for layer in range(len(rows))]
        drawn = (f", then draws <b>{html.escape(visible(text[t])[0])}</b> (p = {p[tr.tokens[t]]:.2f})"
                 if step < self.n_new else "")
        note = (f"<code>{html.escape(text[:T0])}</code><b><code>{html.escape(text[T0:t])}</code></b>"
                f"<br>step {step} of {self.n_new}: the newest character is <b>{html.escape(newest)}</b>{drawn}. "
                f"Temperature {temperature:.1f}" + ("" if top_k >= self.config.vocab_size else f", top-{top_k}")
                + f", seed {self.seed}; the model in float64."
                + "".join(f"<br>{html.escape(n)}" for n in notes))
        inputs = {"prompt": prompt, "temperature": float(temperature), "top_k": int(top_k), "step": int(step),
                  "n_new": self.n_new, "seed": self.seed, "window": self.window}
        return Shown([View([dist]), *(View([panel]) for panel in panels)], inputs=inputs, weights=rows, output=p[top],
                     note=note,
                     extra={"tokens": tr.tokens, "n_prompt": T0, "top": top})


language_model_explorer = LanguageModelExplorer
