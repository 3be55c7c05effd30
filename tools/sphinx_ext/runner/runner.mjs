// "Run in your browser" (ours): turns the page's code cells into editors that run in one
// Python interpreter per page (worker.mjs), as in a notebook.
//
// Loaded by the page's small inline loader (loader.js) only after the reader clicks. The
// page is myst-nb's HTML: each code cell is a div.cell holding div.cell_input (a <pre>
// with the source) and, when it printed, div.cell_output; a cell's output replaces the
// stored one once it runs. This module is the conductor: the worker and its queue, Stop
// and restarts, prerequisites, and the page-level controls. The rest is one module per
// concern: cells.mjs (a cell's editor and bar), output.mjs (bounded output),
// storage.mjs (kept work), notebook.mjs (the .ipynb download), keys.mjs (page shortcuts
// kept out of editors), dom.mjs (helpers).
import { Cell, addedCellElement } from "./cells.mjs";
import { button, el, saveFile } from "./dom.mjs";
import { guardModifiedKeys } from "./keys.mjs";
import { fetchNotebook, readersNotebook } from "./notebook.mjs";
import { KeptWork, digest } from "./storage.mjs";

export { FIGURE_CELL } from "./cells.mjs";

const state = {
  worker: null,
  generation: 0, // one per Python (worker) started; a cell ran "here" if it ran in this one
  cells: [], // in page order, added cells among them
  queue: [],
  running: null,
  failedCell: null,
  ready: false,
  status: null,
  notices: [], // about kept work (storage refused, unreadable): shown in front of the status
  restored: "", // "your edits came back": shown until a cell runs
  notice: "", // Python was restarted: shown until a cell runs again
  version: "",
  download: null, // {bytes, text} announced by the loader
  kept: null,
  addedCount: 0,
  floating: null,
};

function setStatus(text) {
  state.status.textContent = [state.notice, ...state.notices, state.restored, text].filter(Boolean).join(" ");
}

function setBusy(busy) {
  document.documentElement.dataset.browserRun = busy ? "busy" : state.ready ? "idle" : "loading";
  state.floating.hidden = !busy || !state.running;
  if (state.running) state.floatingText.textContent = `Running ${state.running.label}…`;
}

const runnable = () => state.cells.filter((c) => !c.figure);
const pageBytes = () => performance.getEntriesByType("resource")
  .filter((entry) => entry.name.includes("/_static/runner/"))
  .reduce((sum, entry) => sum + (entry.encodedBodySize || 0), 0);
const megabytes = (bytes) => (bytes / 1e6).toFixed(1);

// ---------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------

function startWorker() {
  state.ready = false;
  state.generation += 1;
  setBusy(false);
  const worker = new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" });
  worker.onmessage = (event) => onWorkerMessage(event.data);
  worker.onerror = (event) => {
    setStatus(`Python could not start: ${event.message || "the worker failed to load"}.`);
  };
  state.worker = worker;
  setStatus(`Downloading Python (${state.download.text}; cached after the first time)…`);
}

function onWorkerMessage(message) {
  const cell = state.cells.find((c) => c.id === message.id);
  switch (message.type) {
    case "progress": {
      // The worker counts what it fetched; the page already has the runner and the editor.
      const total = state.download.bytes;
      const loaded = Math.min(message.bytes + pageBytes(), total);
      if (message.bytes) setStatus(`Downloading Python: ${megabytes(loaded)} of ${megabytes(total)} MB…`);
      break;
    }
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
      if (cell) cell.output.add(message.name, message.text);
      break;
    case "display":
      if (cell) cell.output.add("text/plain", message.plain, message.markdown);
      break;
    case "done":
      if (!cell) break;
      cell.setState(message.ok ? "done" : "error");
      state.running = null;
      if (!message.ok) {
        state.failedCell = cell;
        // As in Jupyter's "Run all": an error stops the cells queued after it.
        for (const queued of state.queue) queued.setState(queued.generation === state.generation ? "done" : "idle");
        state.queue = [];
        setStatus(`${capital(cell.label)} raised an error (traceback under the cell).`);
      }
      sendNext();
      break;
  }
}

const capital = (text) => text[0].toUpperCase() + text.slice(1);

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
  state.restored = "";
  state.running = cell;
  cell.clearOutput();
  cell.generation = state.generation;
  cell.setState("running");
  setStatus(`Running ${cell.label}…`);
  setBusy(true);
  state.worker.postMessage({ type: "run", id: cell.id, source: cell.source() });
}

function queueCells(cells) {
  for (const cell of cells) {
    if (cell.figure || state.queue.includes(cell) || state.running === cell) continue;
    cell.setState("queued");
    state.queue.push(cell);
  }
  setBusy(true);
  sendNext();
}

// One cell, as a notebook reader expects it to run: the cells above it that have not run
// in this Python (never, or not since a restart) run first, in order, so what they define
// exists. Said in the status, so a reader sees why more than one cell runs.
function runCell(cell) {
  const before = runnable().slice(0, runnable().indexOf(cell));
  const missing = before.filter((c) => c.generation !== state.generation && c.runState !== "queued" && c !== state.running);
  queueCells([...missing, cell]);
  if (missing.length) {
    state.notice = `Running ${missing.length === 1 ? missing[0].label : `${missing.length} earlier cells`} first: ` +
      `${missing.length === 1 ? "it has" : "they have"} not run in this Python.`;
    setStatus(state.ready ? `Running ${state.running ? state.running.label : cell.label}…` : "Starting Python…");
  }
}

function stop() {
  state.worker.terminate();
  for (const cell of [state.running, ...state.queue]) if (cell) cell.setState("stopped");
  // What earlier cells defined is gone with the old Python: say so on each of them.
  for (const cell of runnable()) if (["done", "error"].includes(cell.runState)) cell.setState("stale");
  state.queue = [];
  state.running = null;
  state.notice =
    "Stopped. Python was restarted, so everything earlier cells defined is lost; " +
    "running a cell runs the cells above it again first.";
  startWorker();
  setStatus("Starting Python again…");
  state.runAll.focus();
}

// ---------------------------------------------------------------------------
// Kept work, added cells, the notebook download
// ---------------------------------------------------------------------------

function notice(text) {
  if (!state.notices.includes(text)) state.notices.push(text);
  if (state.status) setStatus("");
}

function saveAdded() {
  const list = [];
  let after = null;
  for (const cell of state.cells) {
    if (cell.added) list.push({ id: cell.id, after: String(after), source: cell.source() });
    after = cell.id;
  }
  state.kept.setAdded(list);
}

function addCell(below, { id, source = "", focus = true } = {}) {
  state.addedCount += 1;
  id = id || `a${Date.now().toString(36)}${state.addedCount}`;
  const div = addedCellElement();
  // After the cell it was added to, and after cells already added below that one.
  let index = state.cells.indexOf(below);
  while (state.cells[index + 1] && state.cells[index + 1].added) index += 1;
  state.cells[index].element.after(div);
  const label = `your cell ${state.addedCount} (added)`;
  const cell = new Cell({ div, id, number: null, label, bookSource: null, source, actions });
  state.cells.splice(index + 1, 0, cell);
  if (focus) cell.focus();
  saveAdded();
  return cell;
}

function removeCell(cell) {
  const index = state.cells.indexOf(cell);
  if (state.running === cell || state.queue.includes(cell)) return;
  cell.element.remove();
  state.cells.splice(index, 1);
  saveAdded();
  const next = state.cells[index] || state.cells[index - 1];
  if (next && next.focus) next.focus();
}

const actions = {
  run: runCell,
  add: (cell) => addCell(cell),
  remove: removeCell,
  reset: (cell) => { cell.setSource(cell.bookSource); cell.focus(); },
  // An edit is saved with the digest of the book's code it was made on; while a conflict
  // is open that is the older book's, so a reload asks again.
  changed: (cell) => (cell.added ? saveAdded()
    : state.kept.setEdit(cell.number, cell.source(), cell.bookSource, cell.olderBook || undefined)),
};

function clearWork() {
  if (!window.confirm("Clear all your edits and added cells on this page? The cells go back to the book's code.")) return;
  for (const cell of [...state.cells]) {
    if (cell.added) removeCell(cell);
    else if (!cell.figure && cell.edited) cell.setSource(cell.bookSource);
  }
  state.kept.clear();
  setStatus("Your edits on this page were cleared.");
}

// Saved edits back into the editors; an edit whose book cell changed since is offered.
function restoreWork() {
  const kept = state.kept;
  let restored = 0;
  for (const cell of runnable()) {
    const saved = kept.edit(cell.number);
    if (!saved || saved.source === cell.source()) continue;
    if (saved.book !== digest(cell.bookSource)) {
      cell.olderBook = saved.book;
      const chosen = () => { cell.olderBook = null; };
      cell.showConflict(
        () => { chosen(); kept.setEdit(cell.number, cell.source(), cell.bookSource); },
        () => { chosen(); cell.setSource(cell.bookSource); },
      );
    }
    cell.setSource(saved.source);
    restored += 1;
  }
  for (const saved of kept.added()) {
    const below = state.cells.find((c) => String(c.id) === saved.after) || state.cells[state.cells.length - 1];
    addCell(below, { id: saved.id, source: saved.source, focus: false });
    restored += 1;
  }
  if (restored) state.restored = `Your edits to this page (${restored} cell${restored === 1 ? "" : "s"}) came back from this browser.`;
}

async function downloadNotebook() {
  try {
    const url = new URL(state.notebookUrl, location.href).href;
    const page = state.cells.map((c) => ({ bookSource: c.bookSource, source: c.source(), outputs: c.outputs() }));
    const notebook = readersNotebook(await fetchNotebook(url), page);
    const name = url.split("/").pop().replace(/\.ipynb$/, "-my-work.ipynb");
    saveFile(name, JSON.stringify(notebook, null, 1) + "\n", "application/x-ipynb+json");
    setStatus(`Downloaded ${name}: open it in JupyterLab or Colab.`);
  } catch (error) {
    setStatus(`Could not make the notebook: ${error.message}`);
  }
}

// ---------------------------------------------------------------------------
// Start: called by the loader on the click
// ---------------------------------------------------------------------------

// bar, status: the loader's controls; download: {bytes, text}, what the click downloads;
// notebook: the URL of the page's reader's notebook, relative to the page.
export function start({ bar, status, download, notebook }) {
  guardModifiedKeys();
  const css = el("link", { rel: "stylesheet", href: new URL("./runner.css", import.meta.url).href });
  document.head.append(css);
  Object.assign(state, { status, download, notebookUrl: notebook });
  state.kept = new KeptWork(notice);
  const main = document.querySelector("main") || document.body;
  const divs = [...main.querySelectorAll("div.cell")].filter((div) => div.querySelector(".cell_input pre"));
  state.cells = divs.map((div, i) => {
    const original = div.querySelector(".cell_input pre").textContent.replace(/\n$/, "");
    return new Cell({ div, id: i + 1, number: i + 1, label: `cell ${i + 1}`, bookSource: original, actions });
  });
  state.runAll = button("Run all", () => queueCells(runnable()), { cls: "browser-run-run-all" });
  state.floatingText = el("span", {});
  state.floating = el("div", { class: "browser-run-floating", hidden: true },
    state.floatingText, button("Stop", stop, { label: "Stop", cls: "browser-run-stop" }));
  document.body.append(state.floating);
  bar.replaceChildren(
    state.runAll,
    button("Download as notebook", downloadNotebook, { cls: "browser-run-download" }),
    button("Clear my edits", clearWork, { label: "Clear my edits on this page", cls: "browser-run-clear" }),
    status,
  );
  restoreWork();
  // For the tests and the benchmark: the cells, as the reader's page holds them.
  window.browserRun = {
    get cells() { return state.cells; },
    runAll: () => queueCells(runnable()),
  };
  startWorker();
  // The clicked button is gone: the keyboard goes on to "Run all".
  state.runAll.focus({ preventScroll: true });
}
