// The readout's browser side (anywidget ES module): a short note and the data-state element (HTML from the
// kernel, as ipywidgets.HTML shows it). Its ReadoutMessage (typedef in heatmap.js; Python TypedDicts in
// helpers/liveview/messages.py) is the one message of an update: the readout's new HTML and the changed cells
// (or new View) of every heatmap of the explorer, handed to each heatmap's model by its key.

const live = (globalThis.__attnLive ??= {models: new Map(), waiting: new Map()});

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

function render({ model, el }) {
  const box = document.createElement("div");
  el.appendChild(box);
  const show = () => { box.innerHTML = model.get("value"); };
  show();
  model.on("change:value", show);
  return () => model.off("change:value", show);
}

export default { initialize, render };
