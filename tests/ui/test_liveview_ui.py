"""The browser side of helpers.liveview, run in Chromium without a Jupyter server: what the kernel sends,
replayed message by message into the ES modules, ends in the page the kernel's snapshot describes.

For several explorers (their bars move; 09's cache and 08's tiles change layout),
the controls are moved at random (fixed seed) in the kernel, and every message the heatmaps and the readout
send is recorded. In a blank page, the modules ``heatmap.js`` and ``readout.js`` (helpers/liveview/) run on
stand-in widget models (get, set, on, off, as anywidget gives them), two browser views per heatmap, and take
those messages:
- no JavaScript error;
- each model's state ends equal to the kernel's ``HeatmapView.snapshot()``; a view freshly built from that
  snapshot shows its captions, labels and cell texts, each colour bar's label, ticks (text and place) under the
  tables it names, and the weights' bar after its table; and both patched views show exactly what that
  fresh view shows (every cell's text, class and colour too);
- the same when the heatmaps' models load late (the first half of the messages waits in the page for them).
The replay covers cells messages that move a bar's ticks, give a table new labels (12's window of keys that
slides) or the View a new title (08's block of keys), and whole new Views inside the readout's message.

Run: `pytest tests/ui/test_liveview_ui.py` (needs Chromium, see conftest.py).
"""

from __future__ import annotations

import copy
import random

import ipywidgets as W
import numpy as np
import pytest

from helpers import examples as E
from helpers import explorers as X
from helpers import sentence as S
from helpers.liveview import HEATMAP_JS, LIVEVIEW_CSS, READOUT_JS, HeatmapView

pytestmark = pytest.mark.ui

EXPLORERS = {  # those whose views have scores or values bars, or change layout
    "no-weights": lambda: X.no_weights_explorer(E.T001_X, ["x1", "x2", "x3"]),
    "qkv": lambda: X.qkv_explorer(E.T001_X, E.T001_WQ, E.T001_WK, E.T001_WV),
    "overflow": lambda: X.overflow_explorer(),
    "masks": lambda: X.mask_explorer(S.embeddings(), *S.adjective_head(), S.TOKENS),
    "tiles": lambda: X.tiles_explorer(),
    "generation": lambda: X.generation_explorer(
        S.embeddings(), *np.random.default_rng(0).normal(size=(3, 6, 4)).round(1), 2, S.TOKENS, step=3),
    # its window of the last 8 keys slides with the step: new labels on the same tables
    "language-model": lambda: X.language_model_explorer("the attention weights of ", n_new=20, window=8),
}
MOVES = 25

_JS_REPLAY = r"""async ([esm, resm, css, run]) => {
  const load = (src) => import(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
  const H = (await load(esm)).default, R = (await load(resm)).default;
  document.head.appendChild(document.createElement("style")).textContent = css;
  const clone = (x) => JSON.parse(JSON.stringify(x));  // as a message arrives: a fresh object
  class Model {  // what anywidget hands the module: get, set (events on change), on, off
    constructor(state) { this.state = clone(state); this.handlers = {}; }
    get(k) { return this.state[k]; }
    set(k, v) { const old = this.state[k]; this.state[k] = v; if (old !== v) this.emit("change:" + k); }
    on(e, f) { (this.handlers[e] ??= []).push(f); }
    off(e, f) { this.handlers[e] = (this.handlers[e] || []).filter((g) => g !== f); }
    emit(e, ...args) { for (const f of [...(this.handlers[e] || [])]) f(...args); }
  }
  const shown = (el) => {
    const view = el.querySelector(".attn-view");
    return {
      tables: [...view.querySelectorAll("table.attn-hm")].map((t) => ({
        caption: t.querySelector("caption").textContent,
        labels: [...t.querySelectorAll("th:not(.axis)")].map((th) => th.textContent),
        cells: [...t.querySelectorAll("td")].map((td) => [td.textContent, td.className, td.style.background])})),
      bars: [...view.querySelectorAll(".attn-legend.own")].map((lg) => ({
        label: lg.firstChild.textContent,
        ticks: [...lg.querySelectorAll(".ticks span")].map((s) => [s.style.left, s.textContent]),
        under: [...lg.parentNode.querySelectorAll("table.attn-hm caption")].map((c) => c.textContent)})),
      title: view.querySelector(".attn-title")?.textContent ?? "",
      order: [...view.querySelectorAll("table.attn-hm, .attn-legend")]
        .map((n) => n.tagName === "TABLE" ? "table" : n.classList.contains("own") ? "bar" : "weights bar"),
    };
  };
  const errors = [], models = {}, els = {};
  const play = (messages) => {
    for (const [id, data] of messages) {
      try {
        const model = models[id];
        if (data.method === "update") for (const [k, v] of Object.entries(data.state)) model.set(k, clone(v));
        else if (data.method === "custom") model.emit("msg:custom", clone(data.content));
      } catch (err) { errors.push(String(err.stack || err)); }
    }
  };
  const half = run.late ? Math.floor(run.messages.length / 2) : 0;
  const widgets = Object.entries(run.widgets).sort(([, a], [, b]) => (a.heatmap ? 1 : 0) - (b.heatmap ? 1 : 0));
  let waited = false;
  for (const [id, w] of widgets) {  // the readout first: with `late`, its messages wait for the heatmaps
    if (w.heatmap && !waited) { play(run.messages.slice(0, half)); waited = true; }
    const model = models[id] = new Model(w.state);
    const mod = w.heatmap ? H : R;
    mod.initialize({model});
    els[id] = [0, 1].map(() => {
      const el = document.body.appendChild(document.createElement("div"));
      mod.render({model, el});
      return el;
    });
  }
  play(run.messages.slice(half));
  const out = {};
  for (const [id, w] of widgets) {
    if (!w.heatmap) continue;
    const fresh = new Model({...w.state, _view: run.snapshots[id]});
    H.initialize({model: fresh});
    const el = document.createElement("div");
    H.render({model: fresh, el});
    out[id] = {want: shown(el), got: els[id].map(shown), state: models[id].get("_view")};
  }
  return {errors, out};
}"""


def _controls(widget):
    kinds = (W.FloatSlider, W.IntSlider, W.SelectionSlider, W.Dropdown, W.ToggleButtons, W.ToggleButton, W.Checkbox)
    if isinstance(widget, kinds):
        yield widget
    for child in getattr(widget, "children", ()):
        yield from _controls(child)


def _move(control, rng: random.Random) -> None:
    if isinstance(control, (W.ToggleButton, W.Checkbox)):
        control.value = not control.value
    elif hasattr(control, "options"):
        control.value = rng.choice([o[1] if isinstance(o, tuple) else o for o in control.options])
    else:
        steps = round((control.max - control.min) / control.step)
        control.value = control.min + rng.randint(0, steps) * control.step


def _record(kind: str) -> dict:
    """The explorer's widgets as the browser first gets them, every message after that, and the final snapshots."""
    ex = EXPLORERS[kind]()
    widgets = [*ex.views, ex.readout]
    run = {"widgets": {w.model_id: {"heatmap": isinstance(w, HeatmapView), "state": copy.deepcopy(w.get_state())}
                       for w in widgets}, "messages": []}
    for w in widgets:
        def send(data=None, metadata=None, buffers=None, w=w, original=w.comm.send):
            run["messages"].append([w.model_id, copy.deepcopy(data)])
            return original(data=data, metadata=metadata, buffers=buffers)

        w.comm.send = send
    controls = list(_controls(ex.widget))
    rng = random.Random(0)
    for _ in range(MOVES):
        _move(rng.choice(controls), rng)
    assert len(ex.views) == len(widgets) - 1, f"{kind}: a heatmap was added after the start; record it too"
    run["snapshots"] = {v.model_id: v.snapshot() for v in ex.views}
    return run


def _sent(run: dict, what) -> int:
    return sum(1 for _, d in run["messages"] if d["method"] == "custom"
               for m in d["content"].get("views", {}).values() if what(m))


def _drawn(snap: dict) -> dict:
    """What a view of the state ``snap`` must show: captions and texts, bars, their order (not the colours)."""
    order = []
    for k in range(len(snap["tables"])):
        order.append("table")
        order += ["bar" for b in snap["color_bars"] if b["tables"][-1] == k]
        order += ["weights bar"] if snap["weights_color_bar"] and snap["weights_color_bar"]["after"] == k else []
    return {
        "title": snap["title"],
        "tables": [(t["caption"], t["cols"] + t["rows"], t["text"]) for t in snap["tables"]],
        "bars": [{"label": b["label"], "ticks": [[f"{at}%", text] for at, text in b["ticks"]],
                  "under": [snap["tables"][k]["caption"] for k in b["tables"]]} for b in snap["color_bars"]],
        "order": order,
    }


@pytest.fixture(scope="module")
def runs() -> dict:
    return {kind: _record(kind) for kind in EXPLORERS}


def test_the_replay_covers_moving_bars_and_new_views(runs):
    moved = sum(_sent(r, lambda m: bool(m.get("color_bars"))) for r in runs.values())
    views = sum(_sent(r, lambda m: m["type"] == "attn-view") for r in runs.values())
    slid = sum(_sent(r, lambda m: bool(m.get("labels"))) for r in runs.values())  # new labels, the same tables
    retitled = _sent(runs["tiles"], lambda m: "title" in m)  # another block of keys, named in the title
    # 01's shapes stay and its panels are scaled to their own data, so their bars never regroup: never rebuilt
    rebuilt = _sent(runs["no-weights"], lambda m: m["type"] == "attn-view")
    assert moved >= 20 and views >= 20 and slid >= 10 and retitled >= 3 and not rebuilt, (
        f"{moved} bar moves, {views} new Views, {slid} new labels, {retitled} new titles, 01 rebuilt {rebuilt}")


@pytest.mark.parametrize("late", [False, True], ids=["loaded", "late"])
@pytest.mark.parametrize("kind", list(EXPLORERS))
def test_the_page_ends_as_the_kernels_snapshot_says(runs, browser, kind, late):
    run = {**runs[kind], "late": late}
    page = browser.new_page()
    try:
        page.goto("about:blank")
        modules = [HEATMAP_JS.read_text(), READOUT_JS.read_text(), LIVEVIEW_CSS.read_text()]  # as anywidget sends them
        result = page.evaluate(_JS_REPLAY, [*modules, run])
    finally:
        page.close()
    assert not result["errors"], f"{kind}: JavaScript errors: {result['errors'][:3]}"
    for key, res in result["out"].items():
        snap = run["snapshots"][key]
        assert res["state"] == snap, f"{kind}: the model's state differs from the kernel's snapshot"
        fresh = {**res["want"], "tables": [(t["caption"], t["labels"], [c[0] for c in t["cells"]])
                                           for t in res["want"]["tables"]]}
        assert fresh == _drawn(snap), f"{kind}: a view built from the snapshot does not show it"
        for n, got in enumerate(res["got"]):
            for part in ("order", "bars", "tables", "title"):
                assert got[part] == res["want"][part], f"{kind}, view {n + 1}: its {part} differ from a fresh build"
