// The live heatmap's browser side (anywidget ES module; helpers/liveview/__init__.py sends it as it is).
//
// The messages, written once in Python as TypedDicts in helpers/liveview/messages.py and here as JSDoc:
// change both together. The state (trait "_view") is a ViewState; a CellsMessage changes the cells and bars of
// the state with the same rev (one for a newer rev waits for that View); a ViewMessage replaces the state (a new
// layout), as a change of the trait would. Both come inside the readout's ReadoutMessage (readout.js: one
// message per update for the whole explorer); a CellsMessage also comes on its own (a heatmap without a readout).

/**
 * @typedef {{bg: string[], white: number[]}} Lut  trait "_lut": per colour its CSS colour, 1 = white text
 * @typedef {{label: string, stops: string[], ticks: string[], after: number}} WeightsColorBar
 *   the attention weights' bar (11 stops from 0 to 1, ticks spread evenly), after table `after`
 * @typedef {{label: string, stops: string[], ticks: Array<[number, string]>, tables: number[]}} OwnColorBar
 *   a scores or values bar under `tables`, ticks [percent of the way, text]
 * @typedef {{caption: string, axes: string, cols: string[], rows: string[], text: string[], color: number[],
 *   mark?: number[]}} Table
 *   text, color and mark: R*C, row by row; color: a row of the Lut, -1 = NaN/±inf; mark (only in a table with
 *   marks): 1 = an outlined cell (a student's output cell that differs from the reference's)
 * @typedef {{rev: number, title?: string, ncols?: number | null, weights_color_bar?: WeightsColorBar | null,
 *   color_bars?: OwnColorBar[], tables: Table[]}} ViewState  trait "_view" ({rev: 0, tables: []} before the first View)
 * @typedef {{type: "attn-cells", rev: number, caption: Array<[number, string]>,
 *   cells: Array<[number, number[], string[], number[]]>, color_bars?: Array<[number, string, OwnColorBar["ticks"]]>,
 *   labels?: Array<[number, string[], string[]]>, title?: string}} CellsMessage
 *   caption: [k, text]; cells: [k, [i], [text], [color]] of table k, and [mark] fifth in a table with marks;
 *   color_bars: [n, label, ticks] of bar n;
 *   labels: [k, cols, rows] of table k (as many as before); title: the View's new title (it had one)
 * @typedef {{type: "attn-view", rev: number, view: ViewState}} ViewMessage
 * @typedef {{type: "attn-update", views: Object<string, CellsMessage | ViewMessage>, value?: string}} ReadoutMessage
 *   by each heatmap's trait "_key"; value: the readout's new HTML
 */

function make(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Set what differs, nothing else: the text node's data, the class, the background. `mark` (1, 0 or undefined
// in a table without marks): an outlined cell, also said in words to a screen reader and a hovering pointer.
function paint(td, text, color, lut, mark) {
  if (td.firstChild.data !== text) td.firstChild.data = text;
  if (td.__attnColor === color && td.__attnOutlined === mark) return;
  if (td.__attnOutlined !== mark) {
    if (mark) td.title = MARK_SAYS; else if (td.__attnOutlined) td.removeAttribute("title");
  }
  td.__attnColor = color;
  td.__attnOutlined = mark;
  const base = color < 0 ? "bad" : lut.white[color] ? "w" : "";
  const cls = mark ? (base ? base + " m" : "m") : base;
  if (td.className !== cls) td.className = cls;
  td.style.background = color < 0 ? "" : lut.bg[color];
}
const MARK_SAYS = "differs from the reference";

// A colour bar: its label, the colormap from lo to hi, its ticks: at their percent of the way ([at, text], a
// scores or values bar) or spread evenly (texts, the attention weights' bar).
function fillColorBar(el, bar) {
  el.replaceChildren(make("div", "", bar.label));
  el.appendChild(make("div", "bar")).style.background = "linear-gradient(to right," + bar.stops.join(",") + ")";
  const ticks = el.appendChild(make("div", "ticks"));
  for (const tick of bar.ticks) {
    if (typeof tick === "string") { ticks.appendChild(make("span", "", tick)); continue; }
    const [at, text] = tick;
    const span = ticks.appendChild(make("span", "", text));
    span.style.left = at + "%";
    span.style.transform = "translateX(-" + at + "%)";  // the end ticks stay inside the bar
  }
}

/** @param {ViewState} state @param {Lut} lut @param {number} size */
function build(state, lut, size) {
  const view = make("div", "attn-view");
  view.style.fontSize = size + "em";
  const title = state.title ? view.appendChild(make("div", "attn-title", state.title)) : null;
  const first = new Map((state.color_bars || []).map((bar, n) => [bar.tables[0], n]));
  const colorBars = [];
  let box = view, open = null;
  const tables = (state.tables || []).map((t, k) => {
    if (state.ncols && k && k % state.ncols === 0) {
      const br = make("div");
      br.style.cssText = "flex-basis:100%;height:0";  // a new row of panels
      view.appendChild(br);
    }
    if (first.has(k)) {  // a bar under this table (and the neighbours that share it)
      open = state.color_bars[first.get(k)];
      const group = view.appendChild(make("div", "attn-group"));
      box = group.appendChild(make("div", "attn-tables"));
    }
    const table = make("table", "attn-hm");
    const caption = table.appendChild(make("caption", "", t.caption));
    const head = table.appendChild(make("thead")).appendChild(make("tr"));
    const corner = head.appendChild(make("th", "axis", t.axes));
    corner.scope = "col";
    const cols = t.cols.map((c) => { const th = head.appendChild(make("th", "", c)); th.scope = "col"; return th; });
    const body = table.appendChild(make("tbody"));
    const cells = [], rows = [];
    const C = t.cols.length;
    t.rows.forEach((r, i) => {
      const tr = body.appendChild(make("tr"));
      const th = tr.appendChild(make("th", "", r));
      th.scope = "row";
      rows.push(th);
      for (let j = 0; j < C; j++) {
        const td = tr.appendChild(make("td", "", ""));
        td.appendChild(document.createTextNode(""));
        paint(td, t.text[i * C + j], t.color[i * C + j], lut, t.mark?.[i * C + j]);
        cells.push(td);
      }
    });
    box.appendChild(table);
    if (open && open.tables[open.tables.length - 1] === k) {
      const el = box.parentNode.appendChild(make("div", "attn-legend own"));
      el.setAttribute("aria-hidden", "true");
      fillColorBar(el, open);
      colorBars.push(el);
      box = view;
      open = null;
    }
    if (state.weights_color_bar && state.weights_color_bar.after === k) {
      const el = view.appendChild(make("div", "attn-legend"));
      el.setAttribute("aria-hidden", "true");
      fillColorBar(el, state.weights_color_bar);
    }
    return {caption, cells, cols, rows};
  });
  return {view, tables, colorBars, title};
}

// Change the cells of a state (the model's, so a view opened later starts from it). Python's mirror:
// apply() in helpers/liveview/messages.py, which the kernel uses on its own state.
/** @param {ViewState} state @param {CellsMessage} msg */
function patchState(state, msg) {
  for (const [k, text] of msg.caption) state.tables[k].caption = text;
  for (const [n, label, ticks] of msg.color_bars ?? []) Object.assign(state.color_bars[n], {label, ticks});
  for (const [k, cols, rows] of msg.labels ?? []) Object.assign(state.tables[k], {cols, rows});
  if (msg.title !== undefined) state.title = msg.title;
  for (const [k, index, texts, colors, marks] of msg.cells) {
    const t = state.tables[k];
    for (let n = 0; n < index.length; n++) { t.text[index[n]] = texts[n]; t.color[index[n]] = colors[n]; }
    if (marks) for (let n = 0; n < index.length; n++) t.mark[index[n]] = marks[n];
  }
}

// Change the cells of one view on the page: only those the message names, only what differs.
/** @param {CellsMessage} msg @param {Lut} lut @param {ViewState} state */
function patchView(shown, msg, lut, state) {
  for (const [k, text] of msg.caption) {
    const caption = shown.tables[k].caption;
    if (caption.textContent !== text) caption.textContent = text;
  }
  if (msg.title !== undefined && shown.title && shown.title.textContent !== msg.title) shown.title.textContent = msg.title;
  for (const [k, cols, rows] of msg.labels ?? []) {  // a window that slid: new labels on the same header cells
    const t = shown.tables[k];
    cols.forEach((c, j) => { if (t.cols[j].textContent !== c) t.cols[j].textContent = c; });
    rows.forEach((r, i) => { if (t.rows[i].textContent !== r) t.rows[i].textContent = r; });
  }
  for (const [k, index, texts, colors, marks] of msg.cells) {
    const cells = shown.tables[k].cells;
    for (let n = 0; n < index.length; n++) paint(cells[index[n]], texts[n], colors[n], lut, marks?.[n]);
  }
  for (const [n] of msg.color_bars ?? []) fillColorBar(shown.colorBars[n], state.color_bars[n]);  // patched just before
}

// Every heatmap model of the page by its key, so that one message (the readout's) can update them all.
const live = (globalThis.__attnLive ??= {models: new Map(), waiting: new Map()});

function initialize({ model }) {
  const key = model.get("_key");
  const entry = {model, views: new Set(), pending: []};
  entry.deliver = (/** @type {CellsMessage | ViewMessage} */ msg) => {
    const state = model.get("_view");
    if (msg.type === "attn-view") {
      if (msg.rev > state.rev) model.set("_view", msg.view);  // kept here, not sent back: the kernel has it
      return;
    }
    if (msg.rev === state.rev) {
      patchState(state, msg);
      for (const view of entry.views) view(msg);
    } else if (msg.rev > state.rev) entry.pending.push(msg);  // for a View that has not arrived yet
  };
  live.models.set(key, entry);
  for (const msg of live.waiting.get(key) ?? []) entry.deliver(msg);
  live.waiting.delete(key);
  const onView = () => {  // a new View: the messages that waited for it (before the views redraw)
    const state = model.get("_view");
    for (const msg of entry.pending) if (msg.rev === state.rev) patchState(state, msg);
    entry.pending = entry.pending.filter((msg) => msg.rev > state.rev);
  };
  const onMessage = (msg) => { if (msg && msg.type === "attn-cells") entry.deliver(msg); };
  model.on("change:_view", onView);
  model.on("msg:custom", onMessage);
  return () => {
    live.models.delete(key);
    model.off("change:_view", onView);
    model.off("msg:custom", onMessage);
  };
}

function render({ model, el }) {
  const lut = model.get("_lut");
  let shown = null;
  const draw = () => {
    shown = build(model.get("_view"), lut, model.get("size"));
    el.replaceChildren(shown.view);
  };
  const onPatch = (msg) => patchView(shown, msg, lut, model.get("_view"));
  const onSize = () => { shown.view.style.fontSize = model.get("size") + "em"; };
  draw();
  const entry = live.models.get(model.get("_key"));
  entry?.views.add(onPatch);
  model.on("change:_view", draw);
  model.on("change:size", onSize);
  return () => {
    entry?.views.delete(onPatch);
    model.off("change:_view", draw);
    model.off("change:size", onSize);
  };
}

export default { initialize, render };
