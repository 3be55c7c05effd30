// "Run in your browser" (ours): turns the page's code cells into editors that run in one
// Python interpreter per page (worker.mjs), as in a notebook.
//
// Loaded by the page's small inline loader (tools/sphinx_ext/runner/loader.js) only
// after the reader clicks. The page is myst-nb's HTML: each code cell is a div.cell
// holding div.cell_input (a <pre> with the source) and, when it printed, div.cell_output.
// A cell's output replaces the stored one once the cell runs; a figure it draws takes the
// stored figure's place (figures.mjs).
import { createEditor } from "./editor.mjs";
import { restoreFigures, showFigure } from "./figures.mjs";

const state = {
  worker: null,
  cells: [],
  queue: [],
  running: null,
  ready: false,
  status: null,
  notice: "",
  version: "",
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

// A notice (Python was restarted) stays in front of the status until a cell runs again.
function setStatus(text) {
  state.status.textContent = state.notice ? `${state.notice} ${text}` : text;
}

function setBusy(busy) {
  document.documentElement.dataset.browserRun = busy ? "busy" : state.ready ? "idle" : "loading";
}

// ---------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------

function startWorker() {
  state.ready = false;
  setBusy(false);
  const worker = new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" });
  worker.onmessage = (event) => onWorkerMessage(event.data);
  worker.onerror = (event) => {
    setStatus(`Python could not start: ${event.message || "the worker failed to load"}.`);
  };
  state.worker = worker;
}

function onWorkerMessage(message) {
  const cell = state.cells.find((c) => c.id === message.id);
  switch (message.type) {
    case "status":
      setStatus(message.text);
      break;
    case "ready":
      state.ready = true;
      state.version = message.version;
      setStatus(`Ready: Python ${message.version} runs in this page (the book was executed with Python 3.11).`);
      setBusy(false);
      sendNext();
      break;
    case "failed":
      setStatus(`Python could not start: ${message.text}`);
      break;
    case "stream":
      if (cell) addOutput(cell, message.name, message.text);
      break;
    case "display":
      if (cell) addOutput(cell, "text/plain", message.plain, message.markdown);
      break;
    case "figure":
      if (cell) showFigure(cell, message);
      break;
    case "done":
      if (!cell) break;
      cell.setState(message.ok ? "done" : "error");
      state.running = null;
      if (!message.ok) {
        state.failedCell = cell;
        // As in Jupyter's "Run all": an error stops the cells queued after it.
        for (const queued of state.queue) queued.setState("idle");
        state.queue = [];
        setStatus(`Cell ${cell.number} raised an error (traceback under the cell).`);
      }
      sendNext();
      break;
  }
}

function sendNext() {
  if (state.running || !state.ready) return;
  const cell = state.queue.shift();
  if (!cell) {
    setBusy(false);
    if (!state.failedCell) setStatus(`Ready: Python ${state.version} in this page.`);
    return;
  }
  state.failedCell = null;
  state.notice = "";
  state.running = cell;
  cell.clearOutput();
  cell.setState("running");
  setStatus(`Running cell ${cell.number}…`);
  setBusy(true);
  state.worker.postMessage({ type: "run", id: cell.id, source: cell.source() });
}

function queueCells(cells) {
  for (const cell of cells) {
    if (state.queue.includes(cell) || state.running === cell) continue;
    cell.setState("queued");
    state.queue.push(cell);
  }
  setBusy(true);
  if (!state.ready) setStatus(state.status.textContent || "Starting Python…");
  sendNext();
}

function stop() {
  state.worker.terminate();
  for (const cell of [state.running, ...state.queue]) if (cell) cell.setState("stopped");
  state.queue = [];
  state.running = null;
  state.notice =
    "Stopped. Python was restarted, so everything earlier cells defined is lost: " +
    "run them again (Run all) before the cell you were running.";
  setStatus("");
  startWorker();
}

// ---------------------------------------------------------------------------
// Cells
// ---------------------------------------------------------------------------

// A cell's output, as the tests and the reader see it: one <pre> per stream run or
// value, with data-kind naming it (stdout, stderr, text/plain).
function addOutput(cell, kind, text, markdown) {
  const last = cell.output.lastElementChild;
  if ((kind === "stdout" || kind === "stderr") && last && last.dataset.kind === kind) {
    last.textContent += text;
    return;
  }
  const pre = el("pre", { "data-kind": kind, class: `browser-run-${kind.replace("/", "-")}` });
  if (markdown != null) {
    // A Markdown value (the exercises' show_source): show its text; a fenced code block
    // shows as code. text/plain stays in data-plain, the value Jupyter stores.
    pre.dataset.plain = text;
    pre.textContent = markdown.replace(/^```\w*\n([\s\S]*?)\n?```\s*$/, "$1");
  } else {
    pre.textContent = text;
  }
  cell.output.append(pre);
}

function makeCell(div, number) {
  const input = div.querySelector(".cell_input");
  const pre = input && input.querySelector("pre");
  if (!pre) return null;
  const original = pre.textContent.replace(/\n$/, "");
  const cell = { id: number, number, element: div, runState: "idle" };
  div.classList.add("browser-run-cell");
  const highlight = pre.closest("div[class^='highlight-']") || pre.parentElement;
  const host = el("div", { class: "browser-run-editor" });
  highlight.replaceWith(host);
  const editor = createEditor(host, original, {
    label: `Code cell ${number}, editable; Shift+Enter runs it`,
    onRun: () => queueCells([cell]),
  });
  cell.source = editor.source;
  // An editor drawn while hidden (a closed worked solution) measures itself when shown.
  div.querySelectorAll("details").forEach((d) => d.addEventListener("toggle", editor.remeasure));
  cell.stateText = el("span", { class: "browser-run-cell-state", "aria-live": "off" });
  const bar = el(
    "div",
    { class: "browser-run-cell-bar" },
    el("button", { type: "button", class: "btn btn-sm browser-run-button", onclick: () => queueCells([cell]) },
      `Run cell ${number}`),
    cell.stateText,
  );
  cell.stored = div.querySelector(".cell_output");
  cell.output = el("div", { class: "browser-run-output", role: "group", "aria-label": `Output of cell ${number}` });
  input.after(bar, cell.output);
  cell.clearOutput = () => {
    restoreFigures(cell);
    if (cell.stored) cell.stored.hidden = true;
    cell.output.replaceChildren();
  };
  const words = { idle: "", queued: "queued", running: "running…", done: "ran", error: "error", stopped: "stopped" };
  cell.setState = (runState) => {
    cell.runState = runState;
    div.dataset.runState = runState;
    cell.stateText.textContent = words[runState];
  };
  return cell;
}

// ---------------------------------------------------------------------------
// Start: called by the loader on the click
// ---------------------------------------------------------------------------

export function start({ bar, status }) {
  const css = el("link", { rel: "stylesheet", href: new URL("./runner.css", import.meta.url).href });
  document.head.append(css);
  state.status = status;
  const main = document.querySelector("main") || document.body;
  const divs = [...main.querySelectorAll("div.cell")];
  state.cells = divs.map((div, i) => makeCell(div, i + 1)).filter(Boolean);
  const runAll = el("button", { type: "button", class: "btn btn-sm browser-run-button", onclick: () => queueCells(state.cells) },
    "Run all");
  bar.replaceChildren(
    runAll,
    el("button", { type: "button", class: "btn btn-sm browser-run-button", onclick: stop }, "Stop"),
    status,
  );
  // For the tests and the benchmark: the cells, as the reader's page holds them.
  window.browserRun = {
    cells: state.cells,
    runAll: () => queueCells(state.cells),
  };
  startWorker();
  // The clicked button is gone: keep the keyboard where the reader is.
  if (bar.contains(document.activeElement) || document.activeElement === document.body) runAll.focus();
}
