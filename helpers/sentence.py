"""The series' running example: "the small cat sat because it was tired", as small named vectors.

Every notebook uses this one sentence. Each word is a row of six hand-made features a student can
read; the designed weight matrices (parameters) below make single attention heads do one readable
job each, and ``tests/test_sentence.py`` proves every property claimed here.

Shape notation used throughout this module:

    T        number of tokens (8 for the running sentence, 3 for "dog bites man")
    d        features per token: 6, named in ``FEATURES`` (the width of X, d_in elsewhere)
    d_k      width of one query / key vector of a designed head: 2
    d_v      width of one value vector of a designed head: 2, named in ``VALUE_FEATURES``
    h        number of heads (2 in ``two_heads``); d_head = d_k = d_v = 2

Tokens are rows. The designed heads, with ``single_head_attention(X, W_q, W_k, W_v)`` and the
default scale 1/√d_k = 1/√2:

    pronoun head    "it" asks "which animal do I stand for?"; "cat" answers (weight 0.8221)
    adjective head  "small" and "tired" ask "which noun do I describe?"; "cat" answers (0.7724)

Plain similarity, ``self_attention(X)``, does NOT link "it" to "cat": a pronoun does not look like
its noun, so "it" puts its largest weight on itself. That is why attention needs W_q and W_k.

Nothing here computes on import beyond building these small constant arrays; every function
returns a fresh copy, so a notebook that edits what it got cannot change the next call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "TOKENS",
    "FEATURES",
    "VALUE_FEATURES",
    "PRONOUN_HEAD_COLUMNS",
    "ADJECTIVE_HEAD_COLUMNS",
    "DOG_BITES_MAN",
    "MAN_BITES_DOG",
    "VOCABULARY",
    "embeddings",
    "embed",
    "pronoun_head",
    "adjective_head",
    "two_heads",
    "sentence_table",
]

TOKENS = ("the", "small", "cat", "sat", "because", "it", "was", "tired")
FEATURES = ("noun", "animal", "refers back", "describes", "action", "little word")

DOG_BITES_MAN = ("dog", "bites", "man")
MAN_BITES_DOG = ("man", "bites", "dog")

# One row per word: (noun, animal, refers back, describes, action, little word), each 0, 0.5 or 1.
_VECTORS = {
    # the sentence
    "the": (0.0, 0.0, 0.0, 0.0, 0.0, 1.0),  # a pure function word
    "small": (0.0, 0.0, 0.0, 1.0, 0.0, 0.0),  # a pure describing word
    "cat": (1.0, 1.0, 0.0, 0.0, 0.0, 0.0),  # a noun that is an animal
    "sat": (0.0, 0.0, 0.0, 0.0, 1.0, 0.0),  # a pure action
    # "because" is a function word that links two actions (sat ... was tired): half an action,
    # which also keeps it apart from "the".
    "because": (0.0, 0.0, 0.0, 0.0, 0.5, 1.0),
    # "it" refers back; it stands for a noun, so half a noun. It is NOT marked animal: the word
    # itself does not say what it stands for; finding that out is the pronoun head's job.
    "it": (0.5, 0.0, 1.0, 0.0, 0.0, 0.0),
    # "was" is a linking verb: half an action, half a function word (while "because" is a
    # whole function word).
    "was": (0.0, 0.0, 0.0, 0.0, 0.5, 0.5),
    # "tired" describes, like "small", but it is also the past participle of "to tire", a state
    # that comes from an action: half an action, which keeps it apart from "small".
    "tired": (0.0, 0.0, 0.0, 1.0, 0.5, 0.0),
    # "dog bites man" (for positions and cross-attention)
    # "dog" has the same features as "cat": six features cannot tell two animals apart.
    "dog": (1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
    "bites": (0.0, 0.0, 0.0, 0.0, 1.0, 0.0),  # a pure action (the same features as "sat")
    # "man" is a noun; a person is an animal to a biologist but not in everyday speech: a half.
    "man": (1.0, 0.5, 0.0, 0.0, 0.0, 0.0),
}
VOCABULARY = tuple(_VECTORS)  # every word that ``embed`` knows, sentence words first

_X = np.array([_VECTORS[word] for word in TOKENS], dtype=np.float64)  # (T=8, d=6)
_X.setflags(write=False)


# --------------------------------------------------------------------------- designed heads
#
# Each head has d_k = d_v = 2. A weight matrix (d=6, 2) has one row per feature, so a row says
# what a feature contributes to each query / key / value column. Every entry is on a 0.5 grid in
# [-2, 2] (the notebooks' sliders). Rows not listed are 0.

# The value columns of both heads copy two features unchanged, V = X[:, [noun, animal]]: the
# output of a head reads directly in those two features, no mapping back needed.
VALUE_FEATURES = ("noun", "animal")
_W_V = {"noun": (1.0, 0.0), "animal": (0.0, 1.0)}  # (d=6, d_v=2) once filled in

# Pronoun head. Query/key columns: "animal?" and "noun?".
#   W_q: "refers back" asks for an animal (2) and, less, for a noun (1): only "it" asks anything.
#   W_k: "animal" answers the animal question (2), "noun" the noun question (1).
# Scores q_it · k: cat 2·2 + 1·1 = 5, it 1·0.5 = 0.5, every other token 0.
PRONOUN_HEAD_COLUMNS = ("animal?", "noun?")
_PRONOUN = {
    "W_q": {"refers back": (2.0, 1.0)},
    "W_k": {"animal": (2.0, 0.0), "noun": (0.0, 1.0)},
    "W_v": _W_V,
}

# Adjective head: the pronoun head with the roles of "noun" and "animal" swapped, asked by
# "describes" instead of "refers back". Query/key columns: "noun?" and "animal?".
#   W_q: "describes" asks for a noun (2) and, less, for an animal (1): "small" and "tired" ask.
#   W_k: "noun" answers the noun question (2), "animal" the animal question (1).
# Scores q_small · k: cat 2·2 + 1·1 = 5, it 2·1 = 2 (its key is half a noun: 2·0.5), others 0.
# "tired" asks exactly what "small" asks (W_q ignores "action"), so its row is the same and it
# also lands on "cat": without positions, features cannot tell which noun is nearer. In meaning
# that is right anyway: "tired" describes "it", and "it" is the cat.
ADJECTIVE_HEAD_COLUMNS = ("noun?", "animal?")
_ADJECTIVE = {
    "W_q": {"describes": (2.0, 1.0)},
    "W_k": {"noun": (2.0, 0.0), "animal": (0.0, 1.0)},
    "W_v": _W_V,
}


def _matrix(rows: dict[str, tuple[float, float]]) -> np.ndarray:
    """A (d=6, 2) weight matrix from {feature name: its row}; rows not named are 0."""
    W = np.zeros((len(FEATURES), 2))  # (d, 2)
    for feature, row in rows.items():
        W[FEATURES.index(feature)] = row
    return W


def _head(spec: dict[str, dict[str, tuple[float, float]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_q, W_k, W_v), each a fresh (d=6, 2) array, from a head's specification."""
    return _matrix(spec["W_q"]), _matrix(spec["W_k"]), _matrix(spec["W_v"])


# --------------------------------------------------------------------------- public functions


def embeddings() -> np.ndarray:
    """X (T=8, d=6): one row per token of TOKENS, one column per feature of FEATURES (a fresh copy)."""
    return _X.copy()  # (T=8, d=6)


def embed(words: Sequence[str]) -> np.ndarray:
    """X (len(words), d=6): the feature rows of the given words, e.g. embed(DOG_BITES_MAN)."""
    if isinstance(words, (str, bytes)) or not isinstance(words, Sequence):
        hint = f", e.g. [{words!r}]" if isinstance(words, str) else ""
        raise TypeError(f"words must be a list or tuple of words{hint}, got {type(words).__name__}")
    if len(words) == 0:
        raise ValueError("words is empty: attention needs at least one token")
    for i, word in enumerate(words):
        if not isinstance(word, str):
            raise TypeError(f"words[{i}] must be a str, got {word!r} ({type(word).__name__})")
        if word not in _VECTORS:
            raise ValueError(
                f"words[{i}] = {word!r} is not a known word; known words: {', '.join(VOCABULARY)}"
            )
    return np.array([_VECTORS[word] for word in words], dtype=np.float64)  # (T, d=6)


def pronoun_head() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_q, W_k, W_v), each (d=6, d_k=2): "it" asks for an animal, "cat" answers."""
    return _head(_PRONOUN)


def adjective_head() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_q, W_k, W_v), each (d=6, d_k=2): "small" and "tired" ask for a noun, "cat" answers."""
    return _head(_ADJECTIVE)


def two_heads() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_q, W_k, W_v), each (d=6, h·d_head=4): columns 0:2 the pronoun head, 2:4 the adjective head."""
    pronoun, adjective = pronoun_head(), adjective_head()
    return tuple(
        np.concatenate([p, a], axis=1)  # (d, 2) and (d, 2) -> (d, 4)
        for p, a in zip(pronoun, adjective, strict=True)
    )


def _number(value: float) -> str:
    """0, 1 or 0.5 as a student writes it (no trailing .0)."""
    return f"{value:g}"


def sentence_table(words: Sequence[str] = TOKENS) -> str:
    """A fixed-width text table of words × FEATURES, for print() in a notebook."""
    X = embed(words)  # (T, d=6)
    header = ("token", *FEATURES)
    rows = [(word, *(_number(v) for v in x)) for word, x in zip(words, X, strict=True)]
    widths = [max(len(row[j]) for row in [header, *rows]) for j in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
