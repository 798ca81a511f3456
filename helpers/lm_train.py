"""Training the small GPT of ``helpers.language_model`` on the course's prose, and what we measure on the way.

``python -m helpers.lm_train`` (``make model``) trains the committed model: a fixed seed, Adam, and batches of
rows of the training text in which a quarter of the rows are replaced by a segment repeated to the row's end
(half of them segments of the text, half random characters; periods 8 to 64). Prose alone teaches no
induction head (a head that finds the earlier copy of the current character and looks at what followed it);
repeated segments reward one. Every ``every`` steps it records small measurements (losses, each head's
induction score, the loss on repeated random text, attention weights on two short probe texts), and keeps
the parameters with the best validation loss. It writes helpers/data/model.npz and helpers/data/model_log.json
(``--out DIR`` writes them elsewhere). ``make model`` runs it with one BLAS thread: the same seed then gives the
same numbers on every run on one machine; other CPUs or thread counts round differently, and over 6,000 steps
those last digits grow into a model that differs in its details (in two trainings whose rounding differed, the
losses agreed to about 0.01 nats and the induction head formed at the same time, within a few hundred steps).

The validation loss is measured on consecutive windows of ``context`` characters of the validation text (each
window starts with no earlier text, as in training); the unigram and bigram baselines (add-one smoothing,
counted on the training text) are scored on the same positions.

The update is ``helpers.training.adam_step``, the package's one Adam, with eps added to √v (``adam_step`` here:
the order the committed model was trained with; notebook 12's toy loop uses it too). The loop is not 07's or 11's
(``train`` in ``helpers.training`` and ``helpers.induction``): besides the model, it warms the learning rate up,
measures the validation text and the induction heads every ``every`` steps and keeps the best parameters, which a
toy that a lesson trains in a few seconds does not need; each of the three loops is the one its notebook writes out.

Shape notation: B rows per batch, T = context tokens per row, L layers, h heads, V symbols.
"""

from __future__ import annotations

import json
import math
import time
from functools import partial
from pathlib import Path

import numpy as np

from helpers.heads import (  # the log's measurements live there
    induction_probe,
    induction_scores,
    repeated_loss,
)
from helpers.language_model import (
    LOG_PATH,
    MODEL_PATH,
    GPTConfig,
    Tokenizer,
    attention_weights_unchecked,
    check_params,
    corpus_sha256,
    forward_unchecked,
    init_params,
    load_corpus,
    loss_and_grads,
    save_model,
)
from helpers.layers import cross_entropy_unchecked
from helpers.training import adam_step as _adam_step
from helpers.validate import check_int

__all__ = [
    "adam_step",
    "make_batch",
    "text_loss",
    "unigram_loss",
    "bigram_loss",
    "induction_probe",
    "induction_scores",
    "repeated_loss",
    "train",
]


# --------------------------------------------------------------------------- optimiser and data


adam_step = partial(_adam_step, eps_on_raw=True)  # the package's one Adam, in the order make model trains with
adam_step.__doc__ = "helpers.training.adam_step with eps_on_raw=True: (new params, new state); see its docstring."


def make_batch(ids: np.ndarray, batch_size: int, T: int, rng: np.random.Generator, *, vocab_size: int,
               repeat_fraction: float = 0.25, periods: tuple[int, int] = (8, 64)) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, targets) (B, T): rows of ``ids`` at random offsets, targets shifted by one; a fraction
    ``repeat_fraction`` of rows is a segment repeated to the row's end (half text, half random symbols 1 .. V−1)."""
    starts = rng.integers(0, len(ids) - T - 1, size=batch_size)  # (B,)
    rows = ids[starts[:, None] + np.arange(T + 1)]  # (B, T + 1)
    n_rep = int(round(batch_size * repeat_fraction))
    for b in range(n_rep):
        period = int(rng.integers(periods[0], periods[1] + 1))
        if b % 2 == 0:
            s = int(rng.integers(0, len(ids) - period))
            segment = ids[s:s + period]  # (period,) a piece of the text
        else:
            segment = rng.integers(1, vocab_size, size=period)  # (period,) random symbols, never the unknown one
        rows[b] = np.resize(segment, T + 1)  # (T + 1,) the segment repeated to the row's end
    return rows[:, :-1], rows[:, 1:]


# --------------------------------------------------------------------------- measurements


def _windows(ids: np.ndarray, T: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Consecutive non-overlapping (tokens, targets) windows of at most T tokens covering ids[1:] once."""
    out = []
    for s in range(0, len(ids) - 1, T):
        e = min(s + T, len(ids) - 1)
        out.append((ids[s:e], ids[s + 1:e + 1]))
    return out


def text_loss(config: GPTConfig, params: dict, ids: np.ndarray, batch_size: int = 16) -> float:
    """Mean next-character loss (nats) over ids[1:], read in consecutive windows of ``context`` characters
    (each window starts with no earlier text, as in training)."""
    check_params(config, params)
    windows = _windows(np.asarray(ids), config.context)
    total, count = 0.0, 0
    full = [w for w in windows if len(w[0]) == config.context]
    rest = [w for w in windows if len(w[0]) != config.context]
    groups = [full[i:i + batch_size] for i in range(0, len(full), batch_size)] + [[w] for w in rest]
    for group in groups:
        tokens = np.stack([w[0] for w in group])  # (b, T)
        targets = np.stack([w[1] for w in group])  # (b, T)
        logits, _ = forward_unchecked(config, params, tokens)  # (b, T, V)
        loss, _ = cross_entropy_unchecked(logits.reshape(-1, config.vocab_size), targets.reshape(-1))
        total += loss * targets.size
        count += targets.size
    return total / count


def unigram_loss(train_ids: np.ndarray, valid_ids: np.ndarray, V: int) -> float:
    """Loss (nats/char) on valid_ids[1:] of character frequencies counted on the training text (add-one)."""
    counts = np.bincount(train_ids, minlength=V) + 1.0  # (V,)
    logp = np.log(counts / counts.sum())  # (V,)
    return float(-logp[valid_ids[1:]].mean())


def bigram_loss(train_ids: np.ndarray, valid_ids: np.ndarray, V: int) -> float:
    """Loss (nats/char) on valid_ids[1:] of p(next | previous) counted on the training text (add-one)."""
    counts = np.ones((V, V))  # (V, V) add-one smoothing
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1.0)
    logp = np.log(counts / counts.sum(axis=1, keepdims=True))  # (V, V) row: previous character
    return float(-logp[valid_ids[:-1], valid_ids[1:]].mean())


# --------------------------------------------------------------------------- training


def train(config: GPTConfig, tokenizer: Tokenizer, train_text: str, valid_text: str, *, steps: int,
          batch_size: int = 16, lr: float = 3e-3, warmup: int = 100, seed: int = 0, every: int = 200,
          repeat_fraction: float = 0.25, probes: tuple[str, ...] = (), log=print) -> dict:
    """Train from init_params(config, seed); returns best params, the log of snapshots and probe attention."""
    steps = check_int(steps, "steps", minimum=1)
    every = check_int(every, "every", minimum=1)
    train_ids = tokenizer.encode(train_text, errors="replace")
    valid_ids = tokenizer.encode(valid_text, errors="replace")
    V = config.vocab_size
    params = init_params(config, seed)
    rng = np.random.default_rng(seed)
    probe = induction_probe(V)
    probe_ids = np.stack([tokenizer.encode(p, errors="replace") for p in probes]) if probes else None
    baselines = {"unigram": unigram_loss(train_ids, valid_ids, V), "bigram": bigram_loss(train_ids, valid_ids, V)}
    log(f"baselines on the validation text: unigram {baselines['unigram']:.3f}, "
        f"bigram {baselines['bigram']:.3f} nats/char")
    state, recent, snapshots, attention = None, [], [], []
    best = {"valid_loss": math.inf}
    best_head = {"valid_loss": math.inf}  # the best among snapshots with an induction head (score >= 0.3)
    start = time.perf_counter()
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            valid = text_loss(config, params, valid_ids)
            scores = induction_scores(config, params, probe)  # (L, h)
            first, second = repeated_loss(config, params, probe)
            snap = {"step": step, "seconds": round(time.perf_counter() - start, 1),
                    "train_loss": float(np.mean(recent)) if recent else None, "valid_loss": valid,
                    "induction": scores.round(4).tolist(), "repeat_first": first, "repeat_second": second}
            snapshots.append(snap)
            if probe_ids is not None:
                attention.append(
                    attention_weights_unchecked(config, params, probe_ids).astype(np.float16)  # (L, P, h, T, T)
                )
            recent = []
            if valid < best["valid_loss"]:
                best = {"valid_loss": valid, "step": step, "params": {n: W.copy() for n, W in params.items()}}
            if scores.max() >= 0.3 and valid < best_head["valid_loss"]:
                best_head = {"valid_loss": valid, "step": step, "params": {n: W.copy() for n, W in params.items()}}
            log(f"step {step:5d}  {snap['seconds']:6.0f} s  train {snap['train_loss'] or math.nan:.3f}  "
                f"valid {valid:.3f}  repeat 1st/2nd {first:.2f}/{second:.2f}  best induction {scores.max():.2f}")
        if step == steps:
            break
        tokens, targets = make_batch(train_ids, batch_size, config.context, rng, vocab_size=V,
                                     repeat_fraction=repeat_fraction)
        loss, grads = loss_and_grads(config, params, tokens, targets)
        recent.append(loss)
        rate = lr * min(1.0, (step + 1) / warmup)
        params, state = adam_step(params, grads, state, rate)  # eps on √v, as the committed model was trained
    chosen = "best validation loss"
    if best_head["valid_loss"] < math.inf and best_head["step"] != best["step"]:
        chosen = "best validation loss among snapshots with an induction head (the overall best had none)"
        best = best_head
    return {"params": best["params"], "best_step": best["step"], "best_valid_loss": best["valid_loss"],
            "chosen": chosen, "baselines": baselines, "snapshots": snapshots, "seconds": time.perf_counter() - start,
            "attention": np.stack(attention) if attention else None}


# the committed model: sizes as issue 26 measured them; characters seen at least 20 times
CONFIG = dict(context=128, d_model=128, n_heads=4, n_layers=2, d_ff=512)
STEPS = 6000
PROBES = (
    "attention weights. attention weights. attention ",  # a phrase seen twice (48 characters)
    "qxjvkzbw the cat sat. qxjvkzbw the cat sat. qxjv",  # random letters, then the same again
)


def main(argv: list[str] | None = None) -> None:
    import argparse

    from helpers.corpus import vocabulary

    parser = argparse.ArgumentParser(description="Train notebook 12's model on helpers/data/corpus.txt.")
    parser.add_argument("--out", type=Path, default=MODEL_PATH.parent,
                        help="folder for model.npz and model_log.json (default: helpers/data, the committed ones)")
    out = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    model_path, log_path = out / MODEL_PATH.name, out / LOG_PATH.name

    train_text, valid_text = load_corpus()
    tokenizer = vocabulary(train_text)
    config = GPTConfig(vocab_size=len(tokenizer), **CONFIG)
    print(f"{config}; {len(train_text):,} training and {len(valid_text):,} validation characters")
    result = train(config, tokenizer, train_text, valid_text, steps=STEPS, probes=PROBES)
    print(f"best validation loss {result['best_valid_loss']:.4f} at step {result['best_step']}; "
          f"{result['seconds']:.0f} s of training")
    steps = np.array([s["step"] for s in result["snapshots"]])
    save_model(model_path, config, result["params"], tokenizer, corpus_sha256=np.array(corpus_sha256()),
               best_step=np.array(result["best_step"]), probe_texts=np.array(PROBES),
               probe_steps=steps, probe_attention=result["attention"])
    log = {"config": CONFIG | {"vocab_size": config.vocab_size}, "steps": STEPS, "batch_size": 16, "lr": 3e-3,
           "warmup": 100, "repeat_fraction": 0.25, "seed": 0, "corpus_sha256": corpus_sha256(),
           "chosen": result["chosen"], "best_step": result["best_step"], "best_valid_loss": result["best_valid_loss"],
           "baselines": result["baselines"], "seconds": round(result["seconds"]), "snapshots": result["snapshots"]}
    log_path.write_text(json.dumps(log, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {model_path} ({model_path.stat().st_size / 1e6:.2f} MB) and {log_path}")


if __name__ == "__main__":
    main()
