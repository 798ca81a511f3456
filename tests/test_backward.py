"""Tests of helpers/backward.py: attention's gradients by hand, checked against finite differences.

Property tests (hypothesis) draw shapes with batch dimensions that broadcast, T_q != T_k,
d_k != d_v, boolean masks with at least one visible key per query row, and scales; every test is
derandomized, so a run is deterministic and short. Each tolerance is stated beside its assertion;
"exact" means bit-for-bit equality.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import rx

from helpers.attention import scaled_dot_product_attention, softmax
from helpers.backward import (
    attention_backward,
    attention_backward_steps,
    numerical_gradient,
    softmax_backward,
    softmax_jacobian,
)

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)
# Central differences with eps = 1e-6 on inputs |x| <= 2: the truncation error eps²/6 · f''' is
# below 1e-10, the rounding error about |f| · 1e-16 / 1e-6 <= 1e-9 for |f| <= 10. Tolerance 1e-6.
FD_ATOL, FD_RTOL = 1e-6, 1e-6


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240707)


def loss_of(G, mask=None, scale=None):
    """f(Q, K, V) = sum(G ∘ attention output), the scalar whose gradient attention_backward returns."""

    def f(Q, K, V):
        return float(np.sum(G * scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)[0]))

    return f


def fd_grads(Q, K, V, G, mask=None, scale=None):
    """(dQ, dK, dV) by central finite differences."""
    f = loss_of(G, mask, scale)
    return (
        numerical_gradient(lambda q: f(q, K, V), Q),
        numerical_gradient(lambda k: f(Q, k, V), K),
        numerical_gradient(lambda v: f(Q, K, v), V),
    )


# ============================================================================ strategies


@st.composite
def attention_problems(draw):
    """Q, K, V with leading dims that broadcast (some 1 or missing), grad_output, mask or None, scale."""
    batch = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))  # the full batch shape
    T_q, T_k = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))

    def own_batch():  # a shape that broadcasts to `batch`: drop leading dims, set some to 1
        keep = draw(st.integers(0, len(batch)))
        tail = batch[len(batch) - keep :]
        return tuple(n if draw(st.booleans()) else 1 for n in tail)

    seed = draw(st.integers(0, 2**32 - 1))
    r = np.random.default_rng(seed)
    Q = r.uniform(-2, 2, size=(*own_batch(), T_q, d_k))  # (..., T_q, d_k)
    K = r.uniform(-2, 2, size=(*own_batch(), T_k, d_k))  # (..., T_k, d_k)
    V = r.uniform(-2, 2, size=(*own_batch(), T_k, d_v))  # (..., T_k, d_v)
    full = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    G = r.normal(size=(*full, T_q, d_v))  # (..., T_q, d_v)
    mask = None
    if draw(st.booleans()):
        mask_shape = draw(st.sampled_from([(T_q, T_k), (*full, T_q, T_k), (1, T_k)]))
        mask = r.random(mask_shape) < 0.6  # mask_shape
        # at least one visible key per query row: the forward refuses fully masked rows
        np.put_along_axis(mask, r.integers(0, T_k, size=(*mask_shape[:-1], 1)), True, axis=-1)
    scale = draw(st.one_of(st.none(), st.floats(0.1, 2.0)))
    return Q, K, V, G, mask, scale


# ============================================================================ attention_backward


@SETTINGS
@given(attention_problems())
def test_attention_backward_matches_finite_differences(problem):
    Q, K, V, G, mask, scale = problem
    dQ, dK, dV = attention_backward(Q, K, V, G, mask=mask, scale=scale)
    assert (dQ.shape, dK.shape, dV.shape) == (Q.shape, K.shape, V.shape)
    for got, want in zip((dQ, dK, dV), fd_grads(Q, K, V, G, mask, scale), strict=True):
        np.testing.assert_allclose(got, want, rtol=FD_RTOL, atol=FD_ATOL)


@SETTINGS
@given(attention_problems())
def test_backward_invariants(problem):
    Q, K, V, G, mask, scale = problem
    steps = attention_backward_steps(Q, K, V, G, scale=scale)
    # each row of dS sums to 0: softmax is unchanged by adding a constant to a row of scores.
    # |dS| <= 2 · max|dP| <= 2 · 3 · 2 · 4 and at most 4 terms: tolerance 1e-13
    np.testing.assert_allclose(steps["dS"].sum(axis=-1), 0.0, rtol=0, atol=1e-13)
    # Σ_keys dV = Σ_keys Pᵀ dO = Σ_queries dO because rows of P sum to 1; summing over broadcast
    # axes keeps totals, so the sum of every entry of dV is the sum of every entry of dO.
    # At most 9·4·3 = 108 terms of size <~ 4: tolerance 1e-12
    np.testing.assert_allclose(steps["dV"].sum(), G.sum(), rtol=0, atol=1e-12)


@SETTINGS
@given(attention_problems())
def test_steps_are_the_same_numbers_as_attention_backward(problem):
    Q, K, V, G, _, scale = problem
    steps = attention_backward_steps(Q, K, V, G, scale=scale)
    dQ, dK, dV = attention_backward(Q, K, V, G, scale=scale)
    np.testing.assert_array_equal(steps["dQ"], dQ)  # exact
    np.testing.assert_array_equal(steps["dK"], dK)
    np.testing.assert_array_equal(steps["dV"], dV)
    np.testing.assert_array_equal(steps["weights"], scaled_dot_product_attention(Q, K, V, scale=scale)[1])
    # the softmax step is softmax_backward, exactly; the weights have Q's and K's batch dims, dP
    # also V's, so the weights are broadcast to dP's shape first
    P = np.broadcast_to(steps["weights"], steps["dP"].shape)  # (..., T_q, T_k)
    np.testing.assert_array_equal(steps["dS"], softmax_backward(P, steps["dP"]))


def test_steps_keys_in_backward_order(rng):
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 5))
    steps = attention_backward_steps(Q, K, V, rng.normal(size=(3, 5)))
    assert list(steps) == ["weights", "dV", "dP", "row_dot", "dS", "dscores", "dQ", "dK"]
    shapes = {k: v.shape for k, v in steps.items()}
    assert shapes == {
        "weights": (3, 4),
        "dV": (4, 5),
        "dP": (3, 4),
        "row_dot": (3, 1),
        "dS": (3, 4),
        "dscores": (3, 4),
        "dQ": (3, 2),
        "dK": (4, 2),
    }
    # dscores = dS · scale with the default scale 1/√d_k, d_k = 2; float64 rounding of one product: exact
    np.testing.assert_array_equal(steps["dscores"], steps["dS"] * (1 / np.sqrt(2)))


def test_small_known_case_by_hand():
    # one query, two keys with equal scores: P = [1/2, 1/2]; V = [[1], [3]]; dO = [[1]]
    Q, K, V, G = np.array([[0.0]]), np.array([[1.0], [1.0]]), np.array([[1.0], [3.0]]), np.array([[1.0]])
    steps = attention_backward_steps(Q, K, V, G, scale=1.0)
    np.testing.assert_array_equal(steps["dV"], [[0.5], [0.5]])  # Pᵀ dO, exact
    np.testing.assert_array_equal(steps["dP"], [[1.0, 3.0]])  # dO Vᵀ, exact
    np.testing.assert_array_equal(steps["row_dot"], [[2.0]])  # 1·0.5 + 3·0.5, exact
    np.testing.assert_array_equal(steps["dS"], [[-0.5, 0.5]])  # 0.5·(1-2), 0.5·(3-2), exact
    np.testing.assert_array_equal(steps["dQ"], [[0.0]])  # -0.5·1 + 0.5·1, exact
    np.testing.assert_array_equal(steps["dK"], [[0.0], [0.0]])  # Q = 0, exact


def test_gradient_is_linear_in_grad_output(rng):
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    G = rng.normal(size=(2, 3, 3))
    one = attention_backward(Q, K, V, G)
    two = attention_backward(Q, K, V, 2 * G)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(b, 2 * a)  # scaling by 2 is exact in binary floating point


# ------------------------------------------------------------------------------ masks


def test_keys_masked_for_every_query_get_exactly_zero_dK_and_dV(rng):
    Q, K, V = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 2))
    G = rng.normal(size=(2, 4, 2))
    mask = rng.random((2, 4, 5)) < 0.7  # (2, 4, 5)
    mask[..., 0] = True  # every row sees key 0
    mask[:, :, 3] = False  # key 3 is hidden from every query of both batch entries
    mask[1, :, 1] = False  # key 1 is hidden from every query of batch entry 1 only
    dQ, dK, dV = attention_backward(Q, K, V, G, mask=mask)
    np.testing.assert_array_equal(dK[:, 3], 0.0)  # exact: P[..., 3] = 0, so dS[..., 3] = 0
    np.testing.assert_array_equal(dV[:, 3], 0.0)  # exact: dV[3] = Σ_q P[q, 3] dO[q] = 0
    np.testing.assert_array_equal(dK[1, 1], 0.0)
    np.testing.assert_array_equal(dV[1, 1], 0.0)
    assert np.all(np.abs(dV[:, 0]) > 0)  # a visible key does get a gradient (the test can fail)
    # and the rest still agrees with finite differences (tolerance FD_ATOL, see the top)
    for got, want in zip((dQ, dK, dV), fd_grads(Q, K, V, G, mask), strict=True):
        np.testing.assert_allclose(got, want, rtol=FD_RTOL, atol=FD_ATOL)


def test_mask_that_hides_nothing_changes_nothing(rng):
    Q, K, V, G = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3)), rng.normal(size=(3, 3))
    with_mask = attention_backward(Q, K, V, G, mask=np.ones((3, 4), dtype=bool))
    for a, b in zip(with_mask, attention_backward(Q, K, V, G), strict=True):
        np.testing.assert_array_equal(a, b)  # exact: same weights, same arithmetic


# ------------------------------------------------------------------------------ broadcasting


def test_shared_K_and_V_get_the_batch_sum_of_their_gradients(rng):
    Q = rng.normal(size=(2, 3, 4, 5))  # (2, 3, T_q, d_k)
    K = rng.normal(size=(6, 5))  # (T_k, d_k), shared by every batch entry
    V = rng.normal(size=(1, 6, 2))  # (1, T_k, d_v), stretched over the 3 heads and the batch
    G = rng.normal(size=(2, 3, 4, 2))  # (2, 3, T_q, d_v)
    dQ, dK, dV = attention_backward(Q, K, V, G)
    assert (dQ.shape, dK.shape, dV.shape) == (Q.shape, K.shape, V.shape)
    Kb = np.broadcast_to(K, (2, 3, 6, 5)).copy()  # (2, 3, T_k, d_k) every entry its own copy
    Vb = np.broadcast_to(V, (2, 3, 6, 2)).copy()  # (2, 3, T_k, d_v)
    dQb, dKb, dVb = attention_backward(Q, Kb, Vb, G)
    np.testing.assert_array_equal(dQ, dQb)  # Q was not broadcast: the same arithmetic, exact
    # a sum of 6 numbers of size <~ 10 in two orders: tolerance 1e-12
    np.testing.assert_allclose(dK, dKb.sum(axis=(0, 1)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(dV, dVb.sum(axis=(0, 1))[None], rtol=0, atol=1e-12)
    # and the broadcast gradients differ per copy (the test of the sum can fail)
    assert not np.allclose(dKb[0, 0], dKb[1, 2])


def test_size_one_axis_in_the_middle_is_summed_with_keepdims(rng):
    Q = rng.normal(size=(2, 1, 3, 2))  # the head axis is stretched to 4 by K
    K, V = rng.normal(size=(2, 4, 5, 2)), rng.normal(size=(2, 4, 5, 3))
    G = rng.normal(size=(2, 4, 3, 3))
    dQ, _, _ = attention_backward(Q, K, V, G)
    assert dQ.shape == (2, 1, 3, 2)
    dQb, _, _ = attention_backward(np.broadcast_to(Q, (2, 4, 3, 2)).copy(), K, V, G)
    np.testing.assert_allclose(dQ, dQb.sum(axis=1, keepdims=True), rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------ dtypes


def test_float32_inputs_give_float32_gradients(rng):
    Q, K, V = (rng.normal(size=s).astype(np.float32) for s in ((3, 4), (5, 4), (5, 2)))
    G = rng.normal(size=(3, 2)).astype(np.float32)
    grads = attention_backward(Q, K, V, G)
    assert [g.dtype for g in grads] == [np.float32] * 3
    ref = attention_backward(*(a.astype(np.float64) for a in (Q, K, V, G)))
    for g, r in zip(grads, ref, strict=True):  # float32 rounding of O(1) sums: tolerance 1e-5
        np.testing.assert_allclose(g, r, rtol=0, atol=1e-5)


def test_integer_inputs_are_float64():
    grads = attention_backward([[1, 0]], [[0, 1], [1, 0]], [[1], [2]], [[1]])
    assert [g.dtype for g in grads] == [np.float64] * 3


# ------------------------------------------------------------------------------ bad inputs


@pytest.fixture
def qkv(rng):
    return rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))


@pytest.mark.parametrize("shape", [(3, 6), (2, 3, 5), (2, 5, 6), (1, 3, 6), (2, 2, 3, 6), ()])
def test_grad_output_of_the_wrong_shape_names_both_shapes(qkv, shape):
    with pytest.raises(ValueError, match=rx("grad_output has shape", str(shape), "output has shape (2, 3, 6)")):
        attention_backward(*qkv, np.ones(shape))


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (np.ones((2, 3, 6), dtype=bool), TypeError, ("grad_output", "dtype bool")),
        ("ones", TypeError, ("grad_output", "str")),
        (np.full((2, 3, 6), "a"), TypeError, ("grad_output", "dtype <U1")),
        (np.full((2, 3, 6), np.nan), ValueError, ("grad_output contains NaN", "(2, 3, 6)")),
        (np.full((2, 3, 6), np.inf), ValueError, ("grad_output contains an infinite value", "(2, 3, 6)")),
        ([[1.0, 2.0], [3.0]], ValueError, ("grad_output must be a rectangular",)),
        (None, TypeError, ("grad_output", "object")),
    ],
)
def test_bad_grad_output_is_named(qkv, bad, error, words):
    with pytest.raises(error, match=rx(*words)):
        attention_backward(*qkv, bad)


def test_steps_check_grad_output_too(qkv):
    with pytest.raises(ValueError, match=rx("grad_output has shape (2, 3, 5)", "(2, 3, 6)")):
        attention_backward_steps(*qkv, np.ones((2, 3, 5)))


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"K": np.ones((2, 5, 3))}, ValueError, ("Q and K must have the same last dimension",)),
        ({"V": np.ones((2, 4, 6))}, ValueError, ("K and V must have the same number of tokens",)),
        ({"Q": np.ones((3, 3, 4))}, ValueError, ("do not broadcast",)),
        ({"mask": np.zeros((3, 5), dtype=bool)}, ValueError, ("mask leaves query 1 (counted from 1",)),
        ({"mask": np.ones((4, 5), dtype=bool)}, ValueError, ("mask has shape (4, 5)",)),
        ({"mask": np.ones((3, 5))}, TypeError, ("mask must be a boolean array",)),
        ({"scale": 0.0}, ValueError, ("scale must be a finite number > 0",)),
        ({"scale": "1"}, TypeError, ("scale must be a real number",)),
        ({"Q": np.full((2, 3, 4), np.nan)}, ValueError, ("Q contains NaN",)),
        ({"V": np.ones(5)}, ValueError, ("V must have at least 2 dimensions",)),
    ],
)
def test_every_check_of_the_forward_pass_applies(qkv, kwargs, error, words):
    args = dict(zip("QKV", qkv, strict=True))
    args.update(kwargs)
    with pytest.raises(error, match=rx(*words)):
        attention_backward(args["Q"], args["K"], args["V"], np.ones((2, 3, 6)), args.get("mask"), args.get("scale"))


def test_overflowing_gradient_raises_instead_of_returning_inf():
    Q, K, V = np.zeros((1, 2)), np.zeros((2, 2)), np.array([[1e300, 0.0], [0.0, 1e300]])
    with pytest.raises(ValueError, match=rx("the gradient dP", "overflows float64")):
        attention_backward(Q, K, V, np.full((1, 2), 1e300))


# ============================================================================ softmax pieces


@SETTINGS
@given(st.integers(1, 6), st.integers(0, 2**32 - 1), st.floats(0.1, 5.0))
def test_softmax_jacobian_matches_finite_differences(T, seed, spread):
    s = np.random.default_rng(seed).normal(scale=spread, size=T)  # (T,) scores
    J = softmax_jacobian(softmax(s))  # (T, T)
    # column j of the numerical Jacobian: d softmax(s) / d s_j, one row i at a time
    J_fd = np.array([numerical_gradient(lambda x, i=i: softmax(x)[i], s) for i in range(T)])  # (T, T)
    # softmax's derivatives are <= 1/4 in size: truncation ~1e-13, rounding ~1e-10; tolerance 1e-8
    np.testing.assert_allclose(J, J_fd, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(J, J.T)  # symmetric, exact: diag(p) − p pᵀ computes p_i p_j both ways
    # rows sum to 0: p_i − p_i Σ_j p_j with Σ_j p_j = 1 within a few eps, then 7 roundings; atol 4e-15
    np.testing.assert_allclose(J.sum(axis=1), 0.0, rtol=0, atol=4e-15)


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_softmax_backward_is_the_jacobian_row_by_row(T_q, T_k, seed):
    r = np.random.default_rng(seed)
    P = softmax(r.normal(scale=2.0, size=(2, T_q, T_k)))  # (2, T_q, T_k)
    dP = r.normal(size=(2, T_q, T_k))  # (2, T_q, T_k)
    dS = softmax_backward(P, dP)
    assert dS.shape == P.shape
    by_jacobian = np.array([[softmax_jacobian(P[b, i]) @ dP[b, i] for i in range(T_q)] for b in range(2)])
    # the two orders of a sum of <= 6 products of size <= 3: tolerance 1e-14
    np.testing.assert_allclose(dS, by_jacobian, rtol=0, atol=1e-14)


def test_softmax_backward_known_values():
    # P = [1/2, 1/2], dP = [1, 0]: rowsum = 1/2, dS = [1/2 · 1/2, 1/2 · (-1/2)], exact
    np.testing.assert_array_equal(softmax_backward([[0.5, 0.5]], [[1.0, 0.0]]), [[0.25, -0.25]])
    # a one-hot row has no gradient at all: softmax is saturated
    np.testing.assert_array_equal(softmax_backward([[0.0, 1.0, 0.0]], [[5.0, -2.0, 3.0]]), [[0.0, 0.0, 0.0]])
    # the Jacobian of the uniform row [1/4] * 4 is diag(1/4) − 1/16, exact
    np.testing.assert_array_equal(softmax_jacobian([0.25] * 4), np.eye(4) / 4 - 1 / 16)


@pytest.mark.parametrize(
    ("p", "error", "words"),
    [
        ([[0.5, 0.5]], ValueError, ("p must be one row", "shape (1, 2)", "softmax_backward")),
        ([0.5, 0.6], ValueError, ("p must hold attention weights", "sums to 1.1")),
        ([1.5, -0.5], ValueError, ("p must hold attention weights", "p[1] = -0.5 is negative")),
        ([True, False], TypeError, ("p must hold real numbers",)),
        ([np.nan, 1.0], ValueError, ("p contains NaN",)),
        (0.5, ValueError, ("p must have at least 1 dimensions",)),
    ],
)
def test_softmax_jacobian_bad_input(p, error, words):
    with pytest.raises(error, match=rx(*words)):
        softmax_jacobian(p)


@pytest.mark.parametrize(
    ("P", "dP", "error", "words"),
    [
        (np.full((2, 3), 1 / 3), np.ones((3, 2)), ValueError, ("dP has shape (3, 2) but P has shape (2, 3)",)),
        (np.ones((2, 3)), np.ones((2, 3)), ValueError, ("P must hold attention weights", "index (0,) sums to 3")),
        (np.full((2, 3), 1 / 3), np.full((2, 3), np.inf), ValueError, ("dP contains an infinite value",)),
        (np.full((2, 3), 1 / 3), "x", TypeError, ("dP must be a numeric array",)),
    ],
)
def test_softmax_backward_bad_input(P, dP, error, words):
    with pytest.raises(error, match=rx(*words)):
        softmax_backward(P, dP)


def test_float32_rows_within_rounding_are_accepted():
    P = softmax(np.array([[0.1, 2.0, -1.0, 0.3, 0.0]], dtype=np.float32))  # rows sum to 1 within float32
    assert softmax_backward(P, np.ones_like(P)).dtype == np.float32


# ============================================================================ numerical_gradient


def test_numerical_gradient_of_a_known_function():
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    g = numerical_gradient(lambda a: float(np.sum(a**3)), x)
    assert g.shape == x.shape
    # central differences of a cubic are exact up to eps² = 1e-12 plus rounding ~1e-16·|f|/eps ~ 3e-9
    np.testing.assert_allclose(g, 3 * x**2, rtol=0, atol=1e-7)
    np.testing.assert_array_equal(x, [[1.0, -2.0], [0.5, 3.0]])  # x is unchanged


def test_numerical_gradient_does_not_let_f_change_x():
    x = np.array([1.0, 2.0])

    def f(a):
        a[:] = 0.0  # a careless f that overwrites its argument
        return 0.0

    np.testing.assert_array_equal(numerical_gradient(f, x), [0.0, 0.0])
    np.testing.assert_array_equal(x, [1.0, 2.0])


def test_numerical_gradient_of_ints_and_a_0d_array():
    np.testing.assert_allclose(numerical_gradient(lambda a: float(a) ** 2, 3), 6.0, rtol=0, atol=1e-7)
    assert numerical_gradient(lambda a: float(np.sum(a)), [1, 2]).dtype == np.float64


@pytest.mark.parametrize(
    ("f", "x", "eps", "error", "words"),
    [
        ("sum", [1.0], 1e-6, TypeError, ("f must be a function", "str")),
        (np.sum, [1.0, np.nan], 1e-6, ValueError, ("x contains NaN",)),
        (np.sum, [1.0], 0.0, ValueError, ("eps must be a finite number > 0, got 0.0",)),
        (np.sum, [1.0], -1e-6, ValueError, ("eps must be a finite number > 0",)),
        (np.sum, [1.0], float("inf"), ValueError, ("eps must be a finite number > 0, got inf",)),
        (np.sum, [1.0], "1e-6", TypeError, ("eps must be a real number",)),
        (np.sum, [1.0], True, TypeError, ("eps must be a real number",)),
        (lambda a: a * 2, [1.0, 2.0], 1e-6, ValueError, ("f must return a scalar", "shape (2,)")),
        (lambda a: "loss", [1.0], 1e-6, TypeError, ("f must return a real number",)),
        (lambda a: float("nan"), [1.0], 1e-6, ValueError, ("f returned nan", "index (0,)")),
    ],
)
def test_numerical_gradient_bad_input(f, x, eps, error, words):
    with pytest.raises(error, match=rx(*words)):
        numerical_gradient(f, x, eps)
