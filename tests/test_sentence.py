"""Tests of helpers/sentence.py: the running sentence, its designed heads and their promised properties.

Every designed property the notebooks state in prose is asserted here with its number. Weights
"to 4 decimals" are compared with an absolute tolerance of 5e-5 (half a unit in the 4th decimal);
closed forms and equalities between two computations of the same thing use 1e-12; "exact" means
bit-for-bit equality.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from helpers.attention import multi_head_attention, self_attention, single_head_attention
from helpers.sentence import (
    ADJECTIVE_HEAD_COLUMNS,
    DOG_BITES_MAN,
    FEATURES,
    MAN_BITES_DOG,
    PRONOUN_HEAD_COLUMNS,
    TOKENS,
    VALUE_FEATURES,
    VOCABULARY,
    adjective_head,
    embed,
    embeddings,
    pronoun_head,
    sentence_table,
    two_heads,
)

DP4 = 5e-5  # half a unit in the 4th decimal
CLOSE = 1e-12

IT, CAT, SMALL, TIRED = (TOKENS.index(w) for w in ("it", "cat", "small", "tired"))
ANIMAL = FEATURES.index("animal")

# The designed table, typed in once more so that an accidental edit of the module shows up here.
EXPECTED_X = np.array(
    [
        # noun animal refers describes action little
        [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],  # the
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0],  # small
        [1.0, 1.0, 0.0, 0.0, 0.0, 0.0],  # cat
        [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],  # sat
        [0.0, 0.0, 0.0, 0.0, 0.5, 1.0],  # because
        [0.5, 0.0, 1.0, 0.0, 0.0, 0.0],  # it
        [0.0, 0.0, 0.0, 0.0, 0.5, 0.5],  # was
        [0.0, 0.0, 0.0, 1.0, 0.5, 0.0],  # tired
    ]
)  # (T=8, d=6)

HEADS = {"pronoun_head": pronoun_head, "adjective_head": adjective_head, "two_heads": two_heads}


# --------------------------------------------------------------------------- the data


def test_tokens_and_features_are_the_designed_names():
    assert TOKENS == ("the", "small", "cat", "sat", "because", "it", "was", "tired")
    assert FEATURES == ("noun", "animal", "refers back", "describes", "action", "little word")
    assert VALUE_FEATURES == ("noun", "animal")
    assert PRONOUN_HEAD_COLUMNS == ("animal?", "noun?")
    assert ADJECTIVE_HEAD_COLUMNS == ("noun?", "animal?")
    assert DOG_BITES_MAN == ("dog", "bites", "man")
    assert MAN_BITES_DOG == ("man", "bites", "dog")


def test_embeddings_shape_dtype_and_values():
    X = embeddings()
    assert X.shape == (8, 6)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X, EXPECTED_X)  # exact
    assert set(np.unique(X)) <= {0.0, 0.5, 1.0}, "every feature value is 0, 0.5 or 1"


def test_no_two_sentence_tokens_have_the_same_vector():
    X = embeddings()
    for i in range(len(TOKENS)):
        for j in range(i + 1, len(TOKENS)):
            assert not np.array_equal(X[i], X[j]), f"{TOKENS[i]!r} and {TOKENS[j]!r} have the same vector"


def test_the_words_that_needed_a_tie_breaker_differ_in_the_documented_feature():
    X = embeddings()
    row = {w: X[TOKENS.index(w)] for w in TOKENS}
    action = FEATURES.index("action")
    assert row["because"][action] - row["the"][action] == 0.5  # because links two actions
    assert row["tired"][action] - row["small"][action] == 0.5  # tired is a participle of "to tire"
    assert row["it"][ANIMAL] == 0.0, "the pronoun itself does not say it stands for an animal"
    assert row["it"][FEATURES.index("noun")] == 0.5


def test_embed_matches_embeddings_and_knows_the_second_sentence():
    np.testing.assert_array_equal(embed(TOKENS), embeddings())  # exact
    np.testing.assert_array_equal(embed(list(TOKENS)), embeddings())  # a list works too
    dbm, mbd = embed(DOG_BITES_MAN), embed(MAN_BITES_DOG)
    assert dbm.shape == mbd.shape == (3, 6)
    assert dbm.dtype == np.float64
    np.testing.assert_array_equal(dbm, [[1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0], [1, 0.5, 0, 0, 0, 0]])
    np.testing.assert_array_equal(mbd, dbm[[2, 1, 0]])  # same words, other order: rows swapped
    assert len({tuple(r) for r in dbm}) == 3, "dog, bites and man have three different vectors"
    # documented: six features cannot tell two animals (or two actions) apart
    np.testing.assert_array_equal(embed(["dog"]), embed(["cat"]))
    np.testing.assert_array_equal(embed(["bites"]), embed(["sat"]))
    assert VOCABULARY[:8] == TOKENS
    assert set(VOCABULARY) == set(TOKENS) | {"dog", "bites", "man"}


@pytest.mark.parametrize(
    "words, match",
    [
        (["the", "dog", "meows"], r"words\[2\] = 'meows' is not a known word; known words: the, small, cat"),
        (["Cat"], r"words\[0\] = 'Cat' is not a known word"),
        ([], "words is empty"),
    ],
)
def test_embed_value_errors(words, match):
    with pytest.raises(ValueError, match=match) as info:
        embed(words)
    if words:
        for known in VOCABULARY:
            assert known in str(info.value), f"the message should list {known!r}"


@pytest.mark.parametrize(
    "words, match",
    [
        ("cat", re.escape("words must be a list or tuple of words, e.g. ['cat'], got str")),
        (3, "words must be a list or tuple of words, got int"),
        (None, "got NoneType"),
        ({"cat", "sat"}, "got set"),
        (b"cat", "got bytes"),
        (["cat", 3], r"words\[1\] must be a str, got 3 \(int\)"),
    ],
)
def test_embed_type_errors(words, match):
    with pytest.raises(TypeError, match=match):
        embed(words)


# --------------------------------------------------------------------------- the weight matrices


def test_head_shapes():
    for name in ("pronoun_head", "adjective_head"):
        mats = HEADS[name]()
        assert len(mats) == 3
        for W in mats:
            assert W.shape == (6, 2), name
            assert W.dtype == np.float64, name
    for W in two_heads():
        assert W.shape == (6, 4)
        assert W.dtype == np.float64


@pytest.mark.parametrize("name", sorted(HEADS))
def test_weight_matrices_are_slider_friendly(name):
    for label, W in zip(("W_q", "W_k", "W_v"), HEADS[name](), strict=True):
        assert np.all(np.abs(W) <= 2.0), f"{name} {label} leaves [-2, 2]"
        np.testing.assert_array_equal(2 * W, np.round(2 * W), err_msg=f"{name} {label} is off the 0.5 grid")


def test_designed_matrices_exactly():
    noun, animal, refers, describes = (
        FEATURES.index(f) for f in ("noun", "animal", "refers back", "describes")
    )

    def matrix(rows):
        W = np.zeros((6, 2))
        for i, row in rows.items():
            W[i] = row
        return W

    W_v = matrix({noun: (1, 0), animal: (0, 1)})
    expected = {
        "pronoun_head": (matrix({refers: (2, 1)}), matrix({animal: (2, 0), noun: (0, 1)}), W_v),
        "adjective_head": (matrix({describes: (2, 1)}), matrix({noun: (2, 0), animal: (0, 1)}), W_v),
    }
    for name, mats in expected.items():
        for label, got, want in zip(("W_q", "W_k", "W_v"), HEADS[name](), mats, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {label}")


@pytest.mark.parametrize("name", ["embeddings", *sorted(HEADS)])
def test_returned_arrays_are_fresh_copies(name):
    make = embeddings if name == "embeddings" else HEADS[name]
    first = make()
    arrays = [first] if name == "embeddings" else list(first)
    before = [a.copy() for a in arrays]
    for a in arrays:
        a += 7.0  # a notebook edits what it got, in place
    again = make()
    again = [again] if name == "embeddings" else list(again)
    for b, a in zip(before, again, strict=True):
        np.testing.assert_array_equal(a, b)  # exact
    for a, g in zip(arrays, again, strict=True):
        assert not np.shares_memory(a, g)


def test_embed_returns_fresh_arrays():
    a = embed(DOG_BITES_MAN)
    a[:] = 9.0
    np.testing.assert_array_equal(embed(DOG_BITES_MAN)[0], [1, 1, 0, 0, 0, 0])


# --------------------------------------------------------------------------- plain similarity (notebook 01)


def test_plain_similarity_does_not_link_it_to_cat():
    X = embeddings()
    _, weights = self_attention(X)  # softmax(X Xᵀ / √6) X
    row = weights[IT]
    assert TOKENS[int(np.argmax(row))] == "it", "with plain similarity, 'it' looks most at itself"
    assert TOKENS[int(np.argmax(row))] != "cat"
    # it·it = 1.25, it·cat = 0.5, 0 for every other token; scale 1/√6
    e_it, e_cat = math.exp(1.25 / math.sqrt(6)), math.exp(0.5 / math.sqrt(6))
    total = e_it + e_cat + 6.0
    assert row[IT] == pytest.approx(e_it / total, abs=CLOSE)
    assert row[CAT] == pytest.approx(e_cat / total, abs=CLOSE)
    np.testing.assert_allclose(
        row, [0.1125, 0.1125, 0.1379, 0.1125, 0.1125, 0.1873, 0.1125, 0.1125], rtol=0, atol=DP4
    )
    assert row[CAT] < 0.2, "plain similarity gives 'cat' barely more than the little words"


# --------------------------------------------------------------------------- the pronoun head (notebook 02)


def test_pronoun_head_it_attends_to_cat():
    X = embeddings()
    W_q, W_k, W_v = pronoun_head()
    Q, K = X @ W_q, X @ W_k  # (8, 6) @ (6, 2) -> (8, 2)
    np.testing.assert_array_equal(Q[IT], [2, 1])  # "it" asks: animal? 2, noun? 1
    np.testing.assert_array_equal(K[CAT], [2, 1])  # "cat" answers: animal 2, noun 1
    np.testing.assert_array_equal((Q @ K.T)[IT], [0, 0, 5, 0, 0, 0.5, 0, 0])  # exact scores
    _, weights = single_head_attention(X, W_q, W_k, W_v)  # default scale 1/√2
    row = weights[IT]
    assert TOKENS[int(np.argmax(row))] == "cat"
    assert row[CAT] >= 0.7
    e_cat, e_it = math.exp(5 / math.sqrt(2)), math.exp(0.5 / math.sqrt(2))
    assert row[CAT] == pytest.approx(e_cat / (e_cat + e_it + 6.0), abs=CLOSE)
    np.testing.assert_allclose(
        row, [0.0240, 0.0240, 0.8221, 0.0240, 0.0240, 0.0341, 0.0240, 0.0240], rtol=0, atol=DP4
    )


def test_pronoun_head_only_it_asks():
    _, weights = single_head_attention(embeddings(), *pronoun_head())
    others = np.delete(weights, IT, axis=0)  # (7, 8)
    np.testing.assert_allclose(others, 1 / 8, rtol=0, atol=CLOSE)  # a zero query gives uniform weights


def test_pronoun_head_output_gives_it_the_animal_feature():
    X = embeddings()
    W_q, W_k, W_v = pronoun_head()
    np.testing.assert_array_equal(
        X @ W_v, X[:, [FEATURES.index(f) for f in VALUE_FEATURES]]
    )  # V = the columns
    out, _ = single_head_attention(X, W_q, W_k, W_v)
    assert out.shape == (8, 2)
    animal = VALUE_FEATURES.index("animal")
    assert X[IT, ANIMAL] == 0.0
    assert out[IT, animal] > 0.8, "after attention, 'it' carries most of the cat's 'animal' feature"
    assert out[IT, animal] > out[[i for i in range(8) if i != IT], animal].max() + 0.5
    np.testing.assert_allclose(out[IT], [0.8392, 0.8221], rtol=0, atol=DP4)


# --------------------------------------------------------------------------- the adjective head (notebook 04)


def test_adjective_head_small_and_tired_attend_to_cat():
    X = embeddings()
    W_q, W_k, W_v = adjective_head()
    Q, K = X @ W_q, X @ W_k  # (8, 2) each
    np.testing.assert_array_equal((Q @ K.T)[SMALL], [0, 0, 5, 0, 0, 2, 0, 0])  # exact scores
    _, weights = single_head_attention(X, W_q, W_k, W_v)
    for token in ("small", "tired"):
        row = weights[TOKENS.index(token)]
        assert TOKENS[int(np.argmax(row))] == "cat", token
        assert row[CAT] >= 0.7, token
    e_cat, e_it = math.exp(5 / math.sqrt(2)), math.exp(2 / math.sqrt(2))
    assert weights[SMALL, CAT] == pytest.approx(e_cat / (e_cat + e_it + 6.0), abs=CLOSE)
    np.testing.assert_allclose(
        weights[SMALL], [0.0225, 0.0225, 0.7724, 0.0225, 0.0225, 0.0926, 0.0225, 0.0225], rtol=0, atol=DP4
    )
    # without positions, "tired" asks exactly what "small" asks (documented)
    np.testing.assert_array_equal(weights[TIRED], weights[SMALL])
    # the pronoun answers, but second: half a noun
    assert np.argsort(weights[SMALL])[-2] == IT


def test_adjective_head_only_adjectives_ask():
    _, weights = single_head_attention(embeddings(), *adjective_head())
    others = np.delete(weights, [SMALL, TIRED], axis=0)  # (6, 8)
    np.testing.assert_allclose(others, 1 / 8, rtol=0, atol=CLOSE)


# --------------------------------------------------------------------------- two heads (notebook 04)


def test_two_heads_is_the_two_single_heads_side_by_side():
    pronoun, adjective = pronoun_head(), adjective_head()
    for both, p, a in zip(two_heads(), pronoun, adjective, strict=True):
        np.testing.assert_array_equal(both[:, 0:2], p)  # exact
        np.testing.assert_array_equal(both[:, 2:4], a)  # exact


def test_multi_head_attention_heads_equal_the_single_heads():
    X = embeddings()
    out, weights = multi_head_attention(X, *two_heads(), n_heads=2)
    assert out.shape == (8, 4)
    assert weights.shape == (2, 8, 8)
    out_p, w_p = single_head_attention(X, *pronoun_head())
    out_a, w_a = single_head_attention(X, *adjective_head())
    np.testing.assert_allclose(weights[0], w_p, rtol=0, atol=CLOSE)
    np.testing.assert_allclose(weights[1], w_a, rtol=0, atol=CLOSE)
    np.testing.assert_allclose(out, np.concatenate([out_p, out_a], axis=1), rtol=0, atol=CLOSE)


def test_the_two_heads_do_different_jobs():
    X = embeddings()
    _, weights = multi_head_attention(X, *two_heads(), n_heads=2)
    head1, head2 = weights
    assert TOKENS[int(np.argmax(head1[IT]))] == "cat"
    assert TOKENS[int(np.argmax(head2[SMALL]))] == "cat"
    # each head's question is asked by different tokens: the other head's row stays uniform
    assert head1[SMALL].max() == pytest.approx(1 / 8, abs=CLOSE)
    assert head2[IT].max() == pytest.approx(1 / 8, abs=CLOSE)
    assert np.abs(head1 - head2).max() > 0.3  # attention weights
    assert np.abs(head1 - head2).max() == pytest.approx(0.8221 - 0.125, abs=DP4)
    # the parameters differ too: different questions (W_q) and answers (W_k); the same values (W_v)
    W_q, W_k, W_v = two_heads()
    for label, W in (("W_q", W_q), ("W_k", W_k)):
        assert np.abs(W[:, 0:2] - W[:, 2:4]).max() > 0.3, label
    np.testing.assert_array_equal(W_v[:, 0:2], W_v[:, 2:4])


# --------------------------------------------------------------------------- the printed table


EXPECTED_TABLE = """\
token    noun  animal  refers back  describes  action  little word
the         0       0            0          0       0            1
small       0       0            0          1       0            0
cat         1       1            0          0       0            0
sat         0       0            0          0       1            0
because     0       0            0          0     0.5            1
it        0.5       0            1          0       0            0
was         0       0            0          0     0.5          0.5
tired       0       0            0          1     0.5            0"""


def test_sentence_table():
    table = sentence_table()
    assert isinstance(table, str)
    for name in (*TOKENS, *FEATURES):
        assert name in table, name
    lines = table.split("\n")
    assert len(lines) == 1 + len(TOKENS)
    assert all(line == line.rstrip() for line in lines), "no trailing spaces"
    assert len({len(line) for line in lines}) == 1, "fixed width: every line is as long as the header"
    assert table == sentence_table()  # deterministic
    assert table == EXPECTED_TABLE


def test_sentence_table_of_other_words():
    table = sentence_table(DOG_BITES_MAN)
    lines = table.split("\n")
    assert lines[0].split()[0] == "token"
    assert [line.split()[0] for line in lines[1:]] == list(DOG_BITES_MAN)
    assert lines[3].split()[1:3] == ["1", "0.5"]  # man: noun 1, animal 0.5
    with pytest.raises(ValueError, match="known words"):
        sentence_table(["unicorn"])
