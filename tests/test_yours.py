"""The student's function live under the sliders (``yours=``, issue 37): the explorers of 01, 02, 03, 04, 06 and 12
run it on every update through the Build check's engine, draw its output beside the reference's, outline the cells
that differ (in the live tables and in the static figure) and say the check's own sentence in the readout.

Each wrong function here is written as a student would write it (not taken from the Spec), and the cells it gets
wrong are worked out here from its output and the reference's (the Spec's tolerance), not read from the explorer.
"""

from __future__ import annotations

import copy
import html
import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from helpers import examples as E  # noqa: E402
from helpers import explorers as X  # noqa: E402
from helpers import sentence as S  # noqa: E402
from helpers.attention import causal_mask, project_qkv, softmax  # noqa: E402
from helpers.checks import nb01, nb02, nb03, nb04, nb06  # noqa: E402
from helpers.controls import scalar_slider  # noqa: E402
from helpers.explorer import Explorer, state_from_html  # noqa: E402
from helpers.liveview import messages as M  # noqa: E402
from helpers.liveview import view_payload  # noqa: E402
from helpers.panels import Panel  # noqa: E402

# --------------------------------------------------------------------------- students' functions


def self_attention(X, W_q, W_k, W_v):  # 02, right
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return softmax(Q @ K.T / np.sqrt(K.shape[1])) @ V


def self_attention_unscaled(X, W_q, W_k, W_v):  # 02, forgot the 1/√d_k
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return softmax(Q @ K.T) @ V


def self_attention_columns(X, W_q, W_k, W_v):  # 02, softmax over the queries
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return softmax(Q @ K.T / np.sqrt(K.shape[1]), axis=0) @ V


def self_attention_one_cell(X, W_q, W_k, W_v):  # 02, right but for one cell
    out = self_attention(X, W_q, W_k, W_v)
    out[1, 0] += 0.5
    return out


def causal_attention(Q, K, V):  # 06, right
    T = Q.shape[0]
    scores = np.where(np.tril(np.ones((T, T), bool)), Q @ K.T / math.sqrt(K.shape[1]), -np.inf)
    return softmax(scores) @ V


def causal_no_mask(Q, K, V):  # 06, forgot the mask: every query but the last sees the future
    return softmax(Q @ K.T / math.sqrt(K.shape[1])) @ V


def causal_mask_after(Q, K, V):  # 06, masked the attention weights after the softmax, not renormalised
    T = Q.shape[0]
    return (softmax(Q @ K.T / math.sqrt(K.shape[1])) * np.tril(np.ones((T, T)))) @ V


def raises(*args):
    return args[0] @ np.ones((99, 2))  # a shapes error inside the student's own line


def two_columns(*args):
    return self_attention(*args)[:, :2]  # (T, 2) of the (T, 3) output


def stub(*args):
    ...


# --------------------------------------------------------------------------- helpers


def qkv(yours=None):
    return X.QKVExplorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV, yours=yours)


def masks(yours=None):
    return X.MaskExplorer(S.embeddings(), *S.adjective_head(), S.TOKENS, yours=yours)


def yours_view(ex):
    """The View of the student's output beside the reference's (the one after the main view) and its payload."""
    view = ex._shown.views[1]
    assert view.title.startswith((f"your {ex.yours_name()} beside the reference", f"your {ex.yours_name()}: no output"))
    return view, view_payload(view)


def differing(fn, args, spec):
    """(R, C) bool: the cells where fn's output differs from the Spec's reference beyond the Spec's tolerance."""
    return ~np.isclose(fn(*args), spec.reference(*args), rtol=spec.rtol, atol=spec.atol)


def readout_words(ex) -> str:
    return html.unescape(ex.readout.value.split('<div class="attn-state"')[0])


# --------------------------------------------------------------------------- right and wrong functions


@pytest.mark.parametrize("make, right, args, spec", [
    (qkv, self_attention, lambda ex: (ex.X, *(ex.values()[n] for n in ("W_q", "W_k", "W_v"))),
     nb02.SPEC_SELF_ATTENTION),
    (masks, causal_attention, lambda ex: project_qkv(ex.X, *ex.W.values()), nb06.SPEC_CAUSAL_ATTENTION),
])
def test_a_right_function_is_said_right_and_no_cell_is_marked(make, right, args, spec):
    ex = make(right)
    assert ex.yours is right
    assert ex.yours_verdict == f"✅ your {ex.yours_name()} gives the same output as the reference here."
    assert ex.yours_verdict in readout_words(ex) and 'class="attn-yours"' in ex.readout.value
    say = html.unescape(ex.readout.value.split('<div class="attn-say" hidden>')[1].split("</div>")[0])
    assert say.endswith(ex.yours_verdict)  # a screen reader hears the verdict after each move, too
    view, payload = yours_view(ex)
    ref, mine = view.panels
    assert mine.title == f"your {ex.yours_name()}" and not mine.marked.any() and ref.marked is None
    assert payload["tables"][1]["mark"] == [0] * mine.matrix.size and "mark" not in payload["tables"][0]
    np.testing.assert_allclose(mine.matrix, right(*args(ex)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ref.matrix, spec.reference(*args(ex)), rtol=1e-12, atol=1e-12)
    if make is qkv:  # the explorer's own output is the reference's
        np.testing.assert_allclose(ref.matrix, ex.output, rtol=1e-12, atol=1e-12)
    state = state_from_html(ex.readout.value)["yours"]
    assert state["ok"] is True and state["problem"] is None and state["differ"] == []
    assert ref.vmin == mine.vmin and ref.vmax == mine.vmax  # one colour scale: the colours compare cell by cell


@pytest.mark.parametrize("make, wrong, spec, words", [
    (qkv, self_attention_unscaled, nb02.SPEC_SELF_ATTENTION, "not scaled: divide the scores Q Kᵀ by √d_k"),
    (qkv, self_attention_columns, nb02.SPEC_SELF_ATTENTION, "the softmax ran over axis 0 (the queries)"),
    (masks, causal_no_mask, nb06.SPEC_CAUSAL_ATTENTION, "there is no causal mask"),
    (masks, causal_mask_after, nb06.SPEC_CAUSAL_ATTENTION, "you masked AFTER the softmax and did not renormalise"),
])
def test_a_wrong_function_gets_the_checks_sentence_and_exactly_its_differing_cells_are_marked(make, wrong, spec, words):
    ex = make(wrong)
    args = ex.yours_args(ex.values())
    sentence = next(s for s in spec.mistakes if s.startswith(words))  # the check's own words, whole
    assert ex.yours_verdict.startswith(f"❌ your {spec.name}: {sentence}")
    assert ex.yours_verdict in readout_words(ex)
    want = differing(wrong, args, spec)
    assert want.any() and (wrong is not causal_no_mask or not want.all())  # no mask: the last query sees it all
    view, payload = yours_view(ex)
    np.testing.assert_array_equal(view.panels[1].marked, want)
    assert payload["tables"][1]["mark"] == want.ravel().astype(int).tolist()
    assert state_from_html(ex.readout.value)["yours"]["differ"] == np.argwhere(want).tolist()
    n = int(want.sum())
    assert f"({n} of {want.size} cells differ from the reference's: outlined in your output.)" in ex.yours_verdict


def test_one_wrong_cell_is_the_one_cell_marked_and_named_by_its_index():
    ex = qkv(self_attention_one_cell)
    assert ex.yours_verdict.startswith("❌ your self_attention: the largest difference is at index (1, 0)")
    marked = yours_view(ex)[0].panels[1].marked
    assert np.argwhere(marked).tolist() == [[1, 0]]
    assert "(1 of 9 cells differs from the reference's: outlined.)" in ex.yours_verdict


# --------------------------------------------------------------------------- never a traceback


@pytest.mark.parametrize("fn, words, drawn", [
    (raises, "your function raised ValueError", False),
    (two_columns, "your function returned shape (3, 2), expected (3, 3).", True),
    (stub, "Not answered yet", False),
    (lambda *a: [[1.0, 2.0]], "your function returned a Python list; return a NumPy array", False),
    (42, "expected a function to call, got int: pass your function itself (its name, without parentheses).", False),
])
def test_a_function_that_fails_is_said_in_the_readout_and_the_widget_keeps_working(fn, words, drawn, capsys):
    ex = qkv(fn)
    assert ex.yours_verdict.startswith(f"❌ your self_attention: {words}")
    assert ex.yours_verdict in readout_words(ex)
    if fn is raises:
        assert "at line 2 of raises: `return args[0] @ np.ones((99, 2))" in ex.yours_verdict
    view, payload = yours_view(ex)
    assert len(view.panels) == (2 if drawn else 1)  # the reference always; theirs when it is an array to draw
    if drawn:  # a wrong shape: drawn as it is, every cell outlined (none is right)
        assert view.panels[1].matrix.shape == (3, 2) and view.panels[1].marked.all()
        assert view.panels[1].title == "your self_attention: shape (3, 2), not (3, 3)"
    else:
        assert view.title == "your self_attention: no output"  # the readout says why
    renders = ex.renders
    ex.set(W_k=E.T001_WK * 0, scale=False)  # the explorer still moves: its own views and the readout
    assert ex.renders == renders + 1 and ex._error is None
    np.testing.assert_allclose(ex.weights, np.full((3, 3), 1 / 3), rtol=1e-15)  # keys all 0: uniform weights
    assert ex.yours_verdict.startswith(f"❌ your self_attention: {words}")
    assert capsys.readouterr().out == ""  # nothing printed: no traceback, no warning's path


def test_a_function_that_changes_its_input_in_place_does_not_change_the_explorer():
    def in_place(X, W_q, W_k, W_v):
        W_q *= 2
        return self_attention(X, W_q, W_k, W_v)

    ex = qkv(in_place)
    assert "changed its input W_q in place" in ex.yours_verdict
    np.testing.assert_array_equal(ex.values()["W_q"], E.T001_WQ)


# --------------------------------------------------------------------------- moving a slider updates both


def test_moving_a_slider_updates_the_reference_theirs_the_marks_and_the_message():
    ex = qkv(self_attention_one_cell)
    wire = copy.deepcopy(yours_view(ex)[1])
    W_k = E.T001_WK.copy()
    W_k[0, 0] += 1
    ex.set(W_k=W_k)
    view, payload = yours_view(ex)
    args = ex.yours_args(ex.values())
    np.testing.assert_allclose(view.panels[0].matrix, nb02.SPEC_SELF_ATTENTION.reference(*args), rtol=1e-12)
    np.testing.assert_allclose(view.panels[1].matrix, self_attention_one_cell(*args), rtol=1e-12)
    assert np.argwhere(view.panels[1].marked).tolist() == [[1, 0]]
    msg = M.patch({**wire, "rev": 1}, payload)  # what the browser is sent: only the cells that changed
    assert msg["type"] == "attn-cells"
    assert M.apply({**wire, "rev": 1}, msg) == {**payload, "rev": 1}
    ex.set(W_k=E.T001_WK)  # and back: the same verdict as at the start
    ex2 = qkv(self_attention_unscaled)
    ex2.set(scale=False)  # the explorer's own toggle does not change the student's inputs, nor the verdict
    assert ex2.yours_verdict.startswith("❌ your self_attention: not scaled")


def test_the_marks_travel_in_the_one_message_of_an_update_and_the_browser_state_follows():
    """Replaying what the widgets send, as the browser applies it: the yours view's marks follow each move."""
    ex = qkv(self_attention)
    sent = []
    readout, key = ex.readout, ex.views[1]._key
    original = readout.comm.send
    readout.comm.send = lambda data=None, metadata=None, buffers=None: (sent.append(copy.deepcopy(data)),
                                                                         original(data=data, metadata=metadata,
                                                                                  buffers=buffers))
    state = ex.views[1].snapshot()
    for W_v in (E.T001_WV - 1, E.T001_WV):  # each a slider move: their function is right, nothing marked
        ex.set(W_v=W_v)
    ex.yours = self_attention_one_cell  # another function: redrawn at once, its cell marked
    for data in sent:
        assert data["method"] == "custom"
        state = M.apply(state, copy.deepcopy(data["content"]["views"][key]))
    assert state == ex.views[1].snapshot()
    assert state["tables"][1]["mark"] == [0, 0, 0, 1, 0, 0, 0, 0, 0]  # cell (1, 0) of (3, 3)
    assert sent[-1]["content"]["views"][key]["cells"][0][4] == [1]  # the fifth item: the marks of the cells sent


# --------------------------------------------------------------------------- the static figure


def test_the_static_figure_outlines_exactly_the_marked_cells():
    ex = masks(causal_no_mask)
    fig = ex.figures[1]
    marked = yours_view(ex)[0].panels[1].marked
    ax = fig.axes[1]
    rings = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_visible() and not p.get_hatch()]
    corners = {(round(p.get_x() + p.get_width() / 2), round(p.get_y() + p.get_height() / 2)) for p in rings}
    assert len(rings) == 2 * marked.sum()  # a white ring and a black one per cell
    assert corners == {(j, i) for i, j in np.argwhere(marked).tolist()}
    C = marked.shape[1]
    bold = {(i, j) for i, j in np.ndindex(marked.shape) if ax.texts[i * C + j].get_fontweight() == "bold"}
    assert bold == {(i, j) for i, j in np.argwhere(marked).tolist()}  # their numbers in bold too
    assert not any(isinstance(p, Rectangle) and not p.get_hatch() for p in fig.axes[0].patches)  # none on the reference


# --------------------------------------------------------------------------- without yours=, and the other explorers


@pytest.mark.parametrize("kind", ["no-weights", "qkv", "overflow", "multihead", "masks", "language-model"])
def test_without_yours_nothing_changes(kind):
    ex = X.REGISTRY[kind].demo()
    assert ex.yours is None and ex.yours_verdict == ""
    assert "yours" not in state_from_html(ex.readout.value) and "attn-yours" not in ex.readout.value
    assert not any(v.title.startswith("your ") for v in ex._shown.views)
    assert all(p.marked is None for v in ex._shown.views for p in v.panels)


def test_an_explorer_without_a_build_exercise_refuses_yours_in_words():
    class NoBuild(X.WidgetCheck):
        def __init__(self, yours):
            Explorer.__init__(self, score=scalar_slider("score", 0.0, min=-4, max=4, step=0.1), yours=yours)

    with pytest.raises(TypeError, match="NoBuild does not take yours=: its lesson has no Build exercise to run live"):
        NoBuild(self_attention)
    with pytest.raises(TypeError, match="unexpected keyword argument 'yours'"):  # the explorers of the others
        X.ScalingExplorer(d_k_max=8, d_k=4, yours=self_attention)


def test_masks_run_the_students_causal_attention_on_the_heads_q_k_v_whatever_the_grid():
    ex = masks(causal_attention)
    Q, K, V = project_qkv(ex.X, *ex.W.values())
    np.testing.assert_allclose(yours_view(ex)[0].panels[1].matrix, causal_attention(Q, K, V), rtol=1e-12)
    ex.set(mask=causal_mask(len(S.TOKENS)))  # the grid's causal preset: the explorer's output is the reference's
    np.testing.assert_allclose(ex.output, yours_view(ex)[0].panels[0].matrix, rtol=1e-12, atol=1e-15)
    assert ex.yours_verdict.startswith("✅")


def test_panel_marked_must_be_a_bool_array_of_the_matrix_shape():
    Panel(np.zeros((2, 3)), marked=np.zeros((2, 3), bool))
    for bad in (np.zeros((3, 2), bool), np.zeros((2, 3))):
        with pytest.raises(ValueError, match=r"marked must be None or a bool array of the matrix's shape \(2, 3\)"):
            Panel(np.zeros((2, 3)), marked=bad)


# --------------------------------------------------------------------------- every explorer that takes yours=


BUILT = {  # each explorer that takes yours=, as its registered demo builds it
    "no-weights": lambda yours: X.NoWeightsExplorer(E.T001_X, ["x1", "x2", "x3"], yours=yours),
    "qkv": qkv,
    "overflow": lambda yours: X.OverflowExplorer(yours=yours),
    "multihead": lambda yours: X.MultiheadExplorer(E.T001_X, 4, seed=0, yours=yours),
    "masks": masks,
}


@pytest.mark.parametrize("kind", list(BUILT))
def test_every_lessons_reference_passes_and_a_stub_is_not_answered_yet(kind):
    ex = BUILT[kind](stub)
    spec = ex.yours_spec()
    assert spec.name in {"attend", "self_attention", "stable softmax", "multi_head_attention", "causal_attention"}
    assert ex.yours_verdict.startswith(f"❌ your {spec.name}: Not answered yet")
    ex.yours = spec.reference  # another function: redrawn at once
    assert ex.yours_verdict.startswith(f"✅ your {spec.name}") and not yours_view(ex)[0].panels[1].marked.any()
    demo = X.REGISTRY[kind].demo()
    assert len(ex.views) == len(demo.views) + 1  # one View more: theirs beside the reference's
    others = ex._shown.views[:1] + ex._shown.views[2:]  # the explorer's own Views: as without yours=
    assert [view_payload(v) for v in others] == [view_payload(v) for v in demo._shown.views]
    state = state_from_html(ex.readout.value)
    assert state.pop("yours")["ok"] is True and state == state_from_html(demo.readout.value)  # the rest as before
    with pytest.raises(TypeError, match="yours is given when the explorer is built"):
        ex.yours = None
    with pytest.raises(TypeError, match="yours is given when the explorer is built"):
        demo.yours = stub


def test_multihead_gives_the_student_the_heads_chosen_and_a_fixed_w_o():
    calls = []

    def spy(X_, W_q, W_k, W_v, W_o, n_heads):
        calls.append((W_o.copy(), n_heads))
        return nb04.SPEC_MULTI_HEAD_ATTENTION.reference(X_, W_q, W_k, W_v, W_o, n_heads)

    ex = X.MultiheadExplorer(E.T001_X, 4, seed=0, yours=spy)
    ex.set(heads=1)
    ex.set(heads=4)
    assert [n for _, n in calls] == [2, 1, 4] and all(np.array_equal(W, ex.W_o) for W, _ in calls)
    assert ex.W_o.shape == (4, 4) and ex.yours_verdict.startswith("✅")

    def no_w_o(X_, W_q, W_k, W_v, W_o, n_heads):  # forgot the output projection
        return nb04.SPEC_MULTI_HEAD_ATTENTION.reference(X_, W_q, W_k, W_v, np.eye(W_o.shape[0]), n_heads)

    ex.yours = no_w_o
    sentence = next(s for s, f in nb04.SPEC_MULTI_HEAD_ATTENTION.mistakes.items() if "W_o" in s)
    assert ex.yours_verdict.startswith(f"❌ your multi_head_attention: {sentence}")


def test_no_weights_runs_attend_on_the_sliders_x():
    def attend_unscaled(X_):
        return softmax(X_ @ X_.T) @ X_

    ex = X.NoWeightsExplorer(E.T001_X, ["x1", "x2", "x3"], yours=attend_unscaled)
    sentence = next(s for s in nb01.SPEC_ATTEND.mistakes if s.startswith("not scaled"))
    assert ex.yours_verdict.startswith(f"❌ your attend: {sentence}")
    Xs = E.T001_X.copy()
    Xs[0] = 0  # a token of zeros
    ex.set(X=Xs)
    np.testing.assert_allclose(yours_view(ex)[0].panels[1].matrix, attend_unscaled(Xs.astype(float)), rtol=1e-12)
    np.testing.assert_array_equal(yours_view(ex)[0].panels[1].marked, differing(attend_unscaled, (Xs.astype(float),),
                                                                                  nb01.SPEC_ATTEND))


# --------------------------------------------------------------------------- 12: the student's gpt_forward


def test_language_model_runs_gpt_forward_once_per_text_and_marks_the_logits_that_differ_at_each_step():
    from helpers.language_model import forward

    calls = []

    def late(config, params, tokens):  # right but for the last 3 positions: the logits of steps n_new - 2 .. n_new
        calls.append(len(tokens))
        z = forward(config, params, tokens)
        z[-3:] += 0.5
        return z

    ex = X.LanguageModelExplorer("the attention weights of ", n_new=8, yours=late)
    assert len(calls) == 1 and calls[0] == len(ex._trace[0].tokens)  # the whole text, once
    assert ex.yours_verdict.startswith("❌ your gpt_forward: ") and "largest difference" in ex.yours_verdict
    view, payload = yours_view(ex)
    assert view.panels[1].marked.all() and payload["tables"][1]["cols"] == payload["tables"][0]["cols"]
    tr = ex._trace[0]
    for step in range(9):
        ex.set(step=step)
        ref, mine = yours_view(ex)[0].panels
        t = tr.n_prompt + step
        want = forward(ex.config, ex.params, tr.tokens)[t - 1]  # (V,) the logits after t characters
        top = np.argsort(-tr.probs[step], kind="stable")[:X.nb12.TOP]
        np.testing.assert_allclose(ref.matrix[0], want[top], rtol=1e-12)
        assert mine.marked.all() == (t - 1 >= len(tr.tokens) - 3) and mine.marked.any() == mine.marked.all()
        assert ex.yours_verdict.startswith("❌ your gpt_forward: ")  # the verdict is the whole text's
    assert len(calls) == 1  # the step slider only picks a row: no new call
    ex.set(temperature=0.0)  # a new text: one new call
    assert len(calls) == 2
    right = X.LanguageModelExplorer("the attention weights of ", n_new=8, yours=forward)
    assert right.yours_verdict == "✅ your gpt_forward gives the same output as the reference here."
    assert not yours_view(right)[0].panels[1].marked.any()


# --------------------------------------------------------------------------- 03: the student's stable_softmax


def test_overflow_runs_stable_softmax_on_the_scores_shown_and_marks_where_the_naive_one_turns_nan():
    def naive(S):  # forgot to subtract the row maximum
        e = np.exp(S)
        return e / e.sum(axis=-1, keepdims=True)

    ex = X.OverflowExplorer(yours=naive)
    assert ex.yours_verdict.startswith("✅ your stable softmax")  # small scores: the naive one is right
    sentence = next(s for s in nb03.SPEC_STABLE_SOFTMAX.mistakes if "naive softmax" in s)
    for dtype, m in (("float64", 3.0), ("float16", 1.0)):  # exp overflows float16 long before float64
        ex.set(dtype=dtype, magnitude=m)
        assert ex.yours_verdict.startswith(f"❌ your stable softmax: {sentence}")
        (S,) = ex.yours_args(ex.values())
        assert S.dtype == np.dtype(dtype)  # the scores as shown, in the type chosen
        with np.errstate(all="ignore"):
            mine = naive(S).astype(float)
        marked = yours_view(ex)[0].panels[1].marked
        assert np.isnan(mine[marked]).any() and not np.isnan(mine[~marked]).any()  # the NaN cells are outlined
        assert yours_view(ex)[1]["tables"][1]["text"].count("nan") == int(np.isnan(mine).sum())
