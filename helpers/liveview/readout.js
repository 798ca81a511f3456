// The readout's browser side (anywidget ES module): a short note and the data-state element (HTML from the
// kernel, as ipywidgets.HTML shows it). Its ReadoutMessage (typedef in heatmap.js; Python TypedDicts in
// helpers/liveview/messages.py) is the one message of an update: the readout's new HTML and the changed cells
// (or new View) of every heatmap of the explorer, handed to each heatmap's model by its key.
//
// It is also the explorer's voice for assistive technology, in every client (JupyterLab, Notebook 7, Voilà):
// - trait "names" ({class suffix: name}) names the explorer's controls: the handle of slider `attn-slider--<key>`
//   (ipywidgets gives noUiSlider's role="slider" handle no name) and the number beside it, which takes a typed
//   value, and the button `attn-toggle--<key>`, which also gets aria-pressed from its state (ipywidgets shows it
//   by a class only);
// - a polite live region announces the readout's `div.attn-say` text after a change, once nothing has changed
//   for SAY_AFTER_MS: a dragged slider is announced once, where it stops, not at every step;
// - a figure (a PNG output) without an alt gets the one the kernel wrote into the PNG as its Description text
//   chunk (helpers.plots.describe_figures): JupyterLab's and Notebook 7's image renderer ignores the output's
//   alt metadata (the classroom view and exported pages write that one themselves). Once per page.

const live = (globalThis.__attnLive ??= {models: new Map(), waiting: new Map()});
const SAY_AFTER_MS = 900;

// The Description (tEXt or iTXt chunk) of a PNG data URL, read from its first chunks (they come before IDAT).
function pngDescription(src) {
  let bytes;
  try {
    const b64 = src.slice(src.indexOf(",") + 1, src.indexOf(",") + 1 + 16384);
    bytes = Uint8Array.from(atob(b64.slice(0, b64.length - (b64.length % 4))), (c) => c.charCodeAt(0));
  } catch { return null; }
  const text = (a, b) => new TextDecoder(a).decode(b);
  for (let i = 8; i + 8 <= bytes.length;) {
    const n = ((bytes[i] << 24) | (bytes[i + 1] << 16) | (bytes[i + 2] << 8) | bytes[i + 3]) >>> 0;
    const type = text("latin1", bytes.subarray(i + 4, i + 8));
    if (type === "IDAT" || i + 8 + n > bytes.length) return null;
    const data = bytes.subarray(i + 8, i + 8 + n);
    const zero = data.indexOf(0);
    if (zero > 0 && text("latin1", data.subarray(0, zero)) === "Description") {
      if (type === "tEXt") return text("latin1", data.subarray(zero + 1));
      if (type === "iTXt" && data[zero + 1] === 0) {  // uncompressed: skip method, language tag, translated keyword
        let k = data.indexOf(0, zero + 3);
        k = data.indexOf(0, k + 1);
        return text("utf-8", data.subarray(k + 1));
      }
    }
    i += 12 + n;
  }
  return null;
}

function describeFigures(root) {
  for (const img of root.querySelectorAll?.('img[src^="data:image/png;base64,"]:not([alt])') ?? []) {
    const alt = pngDescription(img.src);
    if (alt) img.alt = alt;
  }
}

if (!live.figures && typeof MutationObserver !== "undefined" && globalThis.document?.body) {
  live.figures = new MutationObserver((records) => {
    for (const r of records) for (const node of r.addedNodes) {
      if (node.nodeType !== 1) continue;
      if (node.tagName === "IMG") describeFigures(node.parentNode); else describeFigures(node);
    }
  });
  live.figures.observe(document.body, {childList: true, subtree: true});
  describeFigures(document.body);
}

function initialize({ model }) {
  const onMessage = (/** @type {ReadoutMessage} */ msg) => {
    if (!msg || msg.type !== "attn-update") return;
    for (const [key, cells] of Object.entries(msg.views)) {
      const entry = live.models.get(key);
      if (entry) entry.deliver(cells);
      else live.waiting.set(key, [...(live.waiting.get(key) ?? []), cells]);  // its model is still loading
    }
    if (msg.value !== undefined) model.set("value", msg.value);  // as the kernel has it: no message back
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

// Name every control of the explorer that has no name yet; the pressed state of every on/off cell.
function nameControls(root, names) {
  for (const [key, name] of Object.entries(names)) {
    for (const el of root.getElementsByClassName("attn-slider--" + key)) {
      for (const handle of el.querySelectorAll(".noUi-handle")) {
        if (handle.getAttribute("aria-label") !== name) handle.setAttribute("aria-label", name);
      }
      const typed = el.querySelector(".widget-readout");  // the number beside it, which takes a typed value
      if (typed && typed.getAttribute("aria-label") !== name + ", typed value") {
        typed.setAttribute("aria-label", name + ", typed value");
        typed.setAttribute("role", "textbox");
      }
    }
    for (const el of root.getElementsByClassName("attn-toggle--" + key)) {
      if (el.getAttribute("aria-label") !== name) el.setAttribute("aria-label", name);
    }
  }
  for (const el of root.getElementsByClassName("attn-toggle")) pressed(el);
}

// A control that ipywidgets drew anew (an element added outside the readout and the heatmaps), not a new number
// beside a slider (a text node) or the options of a dropdown: only then are the names set again.
function redrawn(record) {
  if (record.target.closest?.(".attn-readout, .attn-heatmap")) return false;
  for (const node of record.addedNodes) if (node.nodeType === 1 && node.tagName !== "OPTION") return true;
  return false;
}

function pressed(el) {
  const on = String(el.classList.contains("mod-active"));
  if (el.getAttribute("aria-pressed") !== on) el.setAttribute("aria-pressed", on);
}

function render({ model, el }) {
  const box = document.createElement("div");
  const say = document.createElement("div");
  say.className = "attn-live";
  say.setAttribute("role", "status");  // polite: read when the reader is idle, never interrupting
  say.setAttribute("aria-live", "polite");
  el.append(box, say);
  let timer = null;
  const show = () => { box.innerHTML = model.get("value"); };
  const changed = () => {
    show();
    clearTimeout(timer);
    timer = setTimeout(() => {
      const text = box.querySelector(".attn-say")?.textContent ?? "";
      if (say.textContent !== text) say.textContent = text;
    }, SAY_AFTER_MS);
  };
  show();  // the first state is not announced: only what a reader's action changed
  model.on("change:value", changed);
  // the controls are the explorer's other widgets: rendered before or after this one, redrawn by ipywidgets
  let root = null, observer = null;
  const attach = () => {
    root = el.closest(".attn-explorer");
    if (!root) return false;
    nameControls(root, model.get("names"));
    observer = new MutationObserver((records) => {
      let added = false;
      for (const r of records) {
        if (r.type === "attributes") { if (r.target.classList?.contains("attn-toggle")) pressed(r.target); }
        else if (!added && redrawn(r)) added = true;
      }
      if (added) nameControls(root, model.get("names"));
    });
    observer.observe(root, {subtree: true, childList: true, attributes: true, attributeFilter: ["class"]});
    return true;
  };
  let tries = 0;
  const wait = () => { if (!attach() && tries++ < 50) setTimeout(wait, 100); };  // until it is in the page
  wait();
  return () => {
    clearTimeout(timer);
    observer?.disconnect();
    model.off("change:value", changed);
  };
}

export default { initialize, render };
