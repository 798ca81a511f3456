// The readout's browser side (anywidget ES module): a short note and the data-state element (HTML from the
// kernel, as ipywidgets.HTML shows it). Its ReadoutMessage (typedef in heatmap.js; Python TypedDicts in
// helpers/liveview/messages.py) is the one message of an update: the readout's new HTML and the changed cells
// (or new View) of every heatmap of the explorer, handed to each heatmap's model by its key.
//
// It is also the explorer's voice for assistive technology, in every client (JupyterLab, Notebook 7, Voilà):
// - trait "names" ({class suffix: name}) names the explorer's controls: the handle of slider `attn-slider--<key>`
//   (ipywidgets gives noUiSlider's role="slider" handle no name) and the button `attn-toggle--<key>`, which also
//   gets aria-pressed from its state (ipywidgets shows it by a class only);
// - a polite live region announces the readout's `div.attn-say` text after a change, once nothing has changed
//   for SAY_AFTER_MS: a dragged slider is announced once, where it stops, not at every step.

const live = (globalThis.__attnLive ??= {models: new Map(), waiting: new Map()});
const SAY_AFTER_MS = 900;

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
    }
    for (const el of root.getElementsByClassName("attn-toggle--" + key)) {
      if (el.getAttribute("aria-label") !== name) el.setAttribute("aria-label", name);
    }
  }
  for (const el of root.getElementsByClassName("attn-toggle")) pressed(el);
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
        else if (r.addedNodes.length) added = true;
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
