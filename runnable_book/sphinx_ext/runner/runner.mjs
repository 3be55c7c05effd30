// "Run in your browser" (ours): turns the page's code cells into editors that run in one
// Python interpreter per page (worker.mjs), as in a notebook.
//
// Loaded by the page's small inline loader (loader.js) only after the reader clicks. The
// page is myst-nb's HTML: each code cell is a div.cell holding div.cell_input (a <pre>
// with the source) and, when it printed, div.cell_output; a cell's output replaces the
// stored one once it runs. This module is the conductor: the worker and its queue, Stop
// and restarts, prerequisites, and the page-level controls. The rest is one module per
// concern: cells.mjs (a cell's editor and bar), output.mjs (bounded output), work.mjs
// (the reader's edits and added cells: kept, restored, cleared, downloaded) with
// storage.mjs (localStorage) and notebook.mjs (the .ipynb), keys.mjs (page shortcuts kept
// out of editors), figures.mjs (a figure drawn in the page takes the stored one's place),
// dom.mjs (helpers), book_exercises.mjs (the page's data on the exercises).
import { takeWorker } from "./boot.mjs";
import { readBookExercises } from "./book_exercises.mjs";
import { Cell } from "./cells.mjs";
import { button, el } from "./dom.mjs";
import { showFigure } from "./figures.mjs";
import { guardModifiedKeys } from "./keys.mjs";
import { Work } from "./work.mjs";
import { askForInput, dropInputFields, inputBuffer } from "./input.mjs";
import { RelayedStop } from "./stop_relay.mjs";

/** @typedef {import("./messages.mjs").ToWorker} ToWorker */
/** @typedef {import("./messages.mjs").FromWorker} FromWorker */
/** What the click downloads, as the loader announces it.
 * @typedef {{bytes: number, text: string, figureBytes: number}} Download */
/** Why a cell is not run as a prerequisite (Cell.skipReason).
 * @typedef {keyof typeof STATE_WORDS_SKIPPED} SkipReason */

/** The runner's one state: its Python, its cells and queue, its status line.
 * @typedef {object} RunnerState
 * @property {Worker | null} worker the page's Python (worker.mjs)
 * @property {number} generation one per Python (worker) started
 * @property {Cell[]} cells in page order, added cells among them (shared with work.mjs)
 * @property {Cell[]} queue cells waiting to run, in order
 * @property {Cell | null} running the cell the worker runs now
 * @property {Cell | null} failedCell the last cell that raised, until the next run
 * @property {boolean} ready Python is up
 * @property {HTMLElement | null} status the status line
 * @property {string[]} notices about kept work, shown in front of the status
 * @property {Int32Array | RelayedStop | null} interrupt Stop without a restart: shared (isolated pages) or relayed by the service worker
 * @property {RelayedStop | null} relay the relay asked for, until the worker says the service worker answers
 * @property {Cell | null} interrupted the cell Stop interrupted, until it reports done
 * @property {number} interruptions Stops that interrupted (not restarted) so far: a Stop's timers act only for it
 * @property {SharedArrayBuffer | null} input input()'s answers (isolated pages only)
 * @property {string} notice Python was restarted: shown until a cell runs again
 * @property {string[]} skipped cells skipped as prerequisites, said until the next run
 * @property {string} version Python's version, once ready
 * @property {Download | null} download announced by the loader
 * @property {import("./messages.mjs").ProgressMessage | null} downloads what the start downloaded, as the worker last said
 * @property {import("./work.mjs").Work | null} work the reader's work (work.mjs)
 * @property {HTMLElement | null} floating the floating Stop control
 * @property {HTMLElement} [floatingText] its text
 * @property {HTMLElement} [runAll] the "Run all" button
 */

/** @type {RunnerState} */
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
  interrupt: null, // Stop without a restart: a shared buffer (isolated pages), or relayed (stop_relay.mjs)
  relay: null,
  interrupted: null, // the cell Stop interrupted, until it reports done
  interruptions: 0, // Stops that interrupted (not restarted) so far: a Stop's timers act only for it
  input: null, // the shared buffer input() answers through (cross-origin isolated pages only)
  notice: "", // Python was restarted: shown until a cell runs again
  skipped: [], // stopped or failed cells skipped as prerequisites: said until the next run asked for
  version: "",
  download: null, // {bytes, text} announced by the loader
  downloads: null, // the worker's last "progress" message (for the tests and the benchmark)
  work: null, // work.mjs
  floating: null,
};

/** @param {string} text */
function setStatus(text) {
  const restored = state.work ? state.work.restored : "";
  /** @type {HTMLElement} */ (state.status).textContent =
    [state.notice, ...state.skipped, ...state.notices, restored, text].filter(Boolean).join(" ");
}

/** @param {boolean} busy */
function setBusy(busy) {
  document.documentElement.dataset.browserRun = busy ? "busy" : state.ready ? "idle" : "loading";
  /** @type {HTMLElement} */ (state.floating).hidden = !busy || !state.running;
  if (state.running) {
    /** @type {HTMLElement} */ (state.floatingText).textContent = `Running ${state.running.label}…`;
    // Fixed to the window's corner; in the DOM right after the running cell's controls, so
    // Tab from the cell reaches Stop at once (not moved while it has the focus).
    if (!/** @type {HTMLElement} */ (state.floating).contains(document.activeElement))
      state.running.bar.after(/** @type {HTMLElement} */ (state.floating));
    placeStop();
  }
}

// The Stop bar sits at the bottom of the window, except where it would cover the running
// cell's own controls (its Run, Reset, Add a cell: a cell run near the bottom of the window,
// and on a phone, where the bar takes the window's width) or the first lines of its output
// (what the reader scrolled down to see): then at the top, under the header. Measured again
// as the reader scrolls or the window changes.
const STOP_GAP_PX = 8;
const OUTPUT_FIRST_LINES_REM = 4.5; // three lines of output (runner.css: line-height 1.5)
function placeStop() {
  const floating = /** @type {HTMLElement} */ (state.floating);
  if (floating.hidden || !state.running) return;
  // Where the bar is when at the bottom (runner.css: 1rem above it), whether or not it is there
  // now (only its top changes).
  const { left, right, height } = floating.getBoundingClientRect();
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
  const atBottom = { left, right, top: innerHeight - rem - height };
  const output = state.running.output.container.getBoundingClientRect();
  const firstLines = { width: output.width, height: output.height, left: output.left, right: output.right, top: output.top,
    bottom: Math.min(output.bottom, output.top + OUTPUT_FIRST_LINES_REM * rem) };
  const covered = [...[...state.running.bar.children].map((control) => control.getBoundingClientRect()), firstLines]
    .some((box) => box.width > 0 && box.height > 0 && box.bottom > atBottom.top - STOP_GAP_PX && box.top < innerHeight
      && box.right > atBottom.left && box.left < atBottom.right);
  floating.classList.toggle("browser-run-floating-top", covered);
  const header = document.querySelector(".bd-header-article") || document.querySelector(".bd-header");
  floating.style.top = covered ? `${Math.max(header ? header.getBoundingClientRect().bottom : 0, 0) + STOP_GAP_PX}px` : "";
}
let placing = 0;
const placeStopSoon = () => { placing ||= requestAnimationFrame(() => { placing = 0; placeStop(); }); };

const runnable = () => state.cells;  // every cell runs, the figure cells too

// ---------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------

function startWorker() {
  state.ready = false;
  state.generation += 1;
  setBusy(false);
  // Started on the click, or earlier (boot.mjs): what it said before this page listened is replayed.
  const { worker, earlier } = takeWorker();
  worker.onmessage = (event) => onWorkerMessage(event.data);
  worker.onerror = (event) => {
    setStatus(`Python could not start: ${event.message || "the worker failed to load"}.`);
  };
  state.worker = worker;
  state.interrupt = interruptBuffer(worker);
  // (Said when a cell loads matplotlib: the size the build wrote, not a constant.)
  worker.postMessage(/** @satisfies {ToWorker} */ ({ type: "figure-bytes", bytes: /** @type {Download} */ (state.download).figureBytes }));
  // (What is downloaded is the bar's to say, download_bar.mjs: one sentence, never two that differ.)
  setStatus("Starting Python…");
  earlier.forEach(onWorkerMessage);
}

/** @param {FromWorker} message */
function onWorkerMessage(message) {
  const cell = state.cells.find((c) => c.id === /** @type {{id?: unknown}} */ (message).id);  // (undefined: a message of no cell)
  switch (message.type) {
    case "progress":  // shown by boot.mjs's download bar, from the click on
      state.downloads = message;
      break;
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
    case "stop-relayed":  // (before "ready": the worker answers while Python downloads)
      if (message.ok && state.relay) state.interrupt = state.relay;
      state.relay = null;
      break;
    case "failed":
      // Offline without Python stored: the worker's one sentence says what is missing and why.
      setStatus(message.offline ? message.text : `Python could not start: ${message.text}`);
      // Online (a download that gave up, downloads.mjs): a new start, the cells asked for still
      // queued; the files that arrived whole come from the browser's cache.
      if (!message.offline) /** @type {HTMLElement} */ (state.status).append(" ", button("Try again", startAgain, { cls: "browser-run-try-again" }));
      break;
    case "stream":
      cell?.beforeOutput();
      if (cell) cell.output.add(message.name, message.text);
      placeStopSoon(); // its first lines may have come where the Stop bar is
      break;
    case "display":
      cell?.beforeOutput();
      if (cell) cell.output.addDisplay(message.data, message.metadata);
      placeStopSoon();
      break;
    case "clear":
      if (cell) cell.clearOutput({ wait: message.wait });
      break;
    case "figure":
      cell?.beforeOutput();
      if (cell) showFigure(cell, message);
      break;
    case "input":
      if (!cell) break;
      askForInput(cell, message.prompt, /** @type {SharedArrayBuffer} */ (state.input));  // (only sent when isolated)
      setStatus(`${capital(cell.label)} waits for your answer to input() (under the cell; Enter sends it).`);
      break;
    case "done":
      if (!cell) break;
      if (cell === state.interrupted) {
        interrupted(cell);
        break;
      }
      cell.setState(message.ok ? "done" : "error");
      cell.skipReason = message.ok ? null : "raised an error";
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

const capital = (/** @type {string} */ text) => text[0].toUpperCase() + text.slice(1);

// "Try again" after Python could not start: the failed worker goes, a new one starts.
function startAgain() {
  /** @type {Worker} */ (state.worker).terminate();
  startWorker();
  setStatus("Starting Python again…");
}

function sendNext() {
  if (state.running || !state.ready) return;
  const cell = state.queue.shift();
  if (!cell) {
    setBusy(false);
    // What Stop will do, said whenever Python waits where Stop cannot keep it (a first visit's
    // page, not cross-origin isolated): before any cell runs, so a restart surprises no one.
    if (!state.failedCell) setStatus(`Ready: Python ${state.version} in this page.` + (state.interrupt ? "" : stopRestarts()));
    return;
  }
  state.failedCell = null;
  state.notice = "";
  /** @type {Work} */ (state.work).restored = "";
  state.running = cell;
  cell.clearOutput();
  cell.generation = state.generation;
  cell.setState("running");
  setStatus(`Running ${cell.label}…`);
  setBusy(true);
  /** @type {Worker} */ (state.worker).postMessage(/** @satisfies {ToWorker} */ ({
    type: "run", id: cell.id, label: cell.label, source: cell.source() }));
}

/** @param {Cell[]} cells */
function queueCells(cells) {
  for (const cell of cells) {
    if (state.queue.includes(cell) || state.running === cell) continue;
    cell.setState("queued");
    state.queue.push(cell);
  }
  setBusy(true);
  sendNext();
}

// One cell, as a notebook reader expects it to run: the cells above it that have not run
// in this Python (never, or not since a restart) run first, in order, so what they define
// exists. Said in the status, so a reader sees why more than one cell runs.
//
// A cell that was stopped, or raised an error, when it last ran (and has not been edited
// since) is not run again as another cell's prerequisite: `while True: pass` stopped once
// would otherwise trap every later cell. The status says it was skipped.
//
// On the exercise page, a cell inside an exercise's section (`## Exercise N`) depends only
// on the cells of that exercise: each start cell imports what its exercise needs, so the
// cells of other exercises (their worked solutions among them) never run unasked. Which
// sections are exercises is the page's data (book_exercises.mjs); a page without it has none.
// (Every exercise page's sections: only an exercise page has sections of an exercise's heading.)
const EXERCISE_SECTIONS = new Set((readBookExercises()?.pages || [])
  .flatMap((page) => page.exercises.map((exercise) => exercise.section)));

/** @param {HTMLElement} element */
function exerciseSection(element) {
  for (let section = /** @type {HTMLElement | null | undefined} */ (element.closest("section")); section;
    section = section.parentElement?.closest("section")) {
    if (EXERCISE_SECTIONS.has(section.id)) return section;
  }
  return null;
}

/** @param {Cell} cell */
function prerequisiteCells(cell) {
  const scope = exerciseSection(cell.element);
  return runnable().slice(0, runnable().indexOf(cell)).filter((c) => !scope || scope.contains(c.element));
}

/** @param {Cell} cell */
function runCell(cell) {
  const before = prerequisiteCells(cell);
  const notRun = before.filter((c) => c.generation !== state.generation && c.runState !== "queued" && c !== state.running);
  const skipped = notRun.filter((c) => c.skipReason);
  const missing = notRun.filter((c) => !c.skipReason);
  for (const c of missing) c.runFirstFor = cell;  // named if Stop interrupts it
  cell.runFirstFor = null;
  queueCells([...missing, cell]);
  // Said until the reader runs something else (the notice about prerequisites goes when
  // the next cell starts; the skip stays, since what the skipped cell defines is missing).
  state.skipped = skipped.map((c) =>
    `Skipped ${c.label}: it ${c.skipReason} when it last ran, so it was not run again before ${cell.label} ` +
    "(run it yourself to run it again).");
  for (const c of skipped) c.stateText.textContent =
    `${STATE_WORDS_SKIPPED[/** @type {SkipReason} */ (c.skipReason)]}; skipped`;
  if (missing.length) {
    state.notice = `Running ${missing.length === 1 ? missing[0].label : `${missing.length} earlier cells`} first: ` +
      `${missing.length === 1 ? "it has" : "they have"} not run in this Python.`;
  }
  if (missing.length || skipped.length) {
    setStatus(state.ready ? `Running ${state.running ? state.running.label : cell.label}…` : "Starting Python…");
  }
}
const STATE_WORDS_SKIPPED = { "was stopped": "stopped", "raised an error": "error" };

// Stop keeps the reader's place: the scroll position, and the focus (an editor, where the
// shortcut was pressed; the stopped cell's Run button when the Stop button, now hidden, had it).
/** @param {string} [why] what the notice says first when a Stop that interrupted ends in a restart */
function stop(why) {
  if (!state.running && !state.queue.length) return;
  if (state.interrupt && interrupt()) return;
  const focused = document.activeElement;
  const stopped = state.running;
  /** @type {Worker} */ (state.worker).terminate();
  if (stopped) stopped.skipReason = "was stopped";
  for (const cell of [state.running, ...state.queue]) if (cell) cell.setState("stopped");
  // What earlier cells defined is gone with the old Python: say so on each of them.
  for (const cell of runnable()) if (["done", "error"].includes(cell.runState)) cell.setState("stale");
  state.queue = [];
  state.running = null;
  // (Stop pressed again while an interrupted cell unwinds: restarted at once, as it says.)
  if (state.interrupted && !why) why = "was still stopping when Stop was pressed again";
  state.interrupted = null;
  const which = stopped ? stoppedName(stopped) : "the queued cells";
  state.notice = (why ? `${capital(which)} ${why}. ` : "") +
    `Stopped ${which}. Python was restarted, so everything earlier cells defined is lost; ` +
    "running a cell runs the cells above it again first (not the stopped one)." +
    (reloadIsolates() && !state.interrupt ? RELOAD_FOR_STOP : "");
  startWorker();
  setStatus("Starting Python again…");
  if (!focused || focused === document.body || /** @type {HTMLElement} */ (state.floating).contains(focused)) {
    const target = /** @type {HTMLElement} */ (stopped ? stopped.runButton : state.runAll);
    target.focus({ preventScroll: true });
  }
}

// The cell Stop interrupted, as the reader knows it: a cell run first for the one they ran
// says so ("cell 2, run first for cell 5"), so the notice never seems to name the wrong cell.
/** @param {Cell} cell */
function stoppedName(cell) {
  return cell.runFirstFor && cell.runFirstFor !== cell ? `${cell.label}, run first for ${cell.runFirstFor.label}` : cell.label;
}

// Stop that keeps Python, when the page is cross-origin isolated (the book's service worker,
// runnable_book/sphinx_ext/offline.py): KeyboardInterrupt in the running cell through a shared buffer
// Pyodide polls (its slot SIGNAL_SLOT); on a first visit's page, which is not, through the
// service worker, which Python asks for the signal (stop_relay.mjs). A cell that does not stop within INTERRUPT_GRACE_MS
// (code that never returns to Python's bytecode loop) gets today's restart. Python takes the
// signal by setting the slot back to 0; a cell that took it within the grace while its own
// code was running (CELL_CODE_SLOT, set by the worker around the reader's code) is unwinding
// (an `except` or `finally` of its own, or a machine too busy to finish the traceback in
// time), and gets INTERRUPT_TAKEN_MS more before the restart. A signal taken elsewhere (in
// the runner's own awaits before the cell's code) gets no more time: the cell may never
// report. False when there is nothing to interrupt.
const INTERRUPT_GRACE_MS = 2000;
const INTERRUPT_TAKEN_MS = 8000;
const SIGINT = 2;
const SIGNAL_SLOT = 0;
const CELL_CODE_SLOT = 1;  // (worker.mjs writes it; the layout: messages.mjs, SharedBuffersMessage)

// A page the book's service worker controls but that was loaded before it existed (a first
// visit): a reload makes it cross-origin isolated, and Stop and input() complete.
function reloadIsolates() {
  try {
    return !self.crossOriginIsolated && navigator.serviceWorker.controller !== null;
  } catch (error) {
    return false;  // no service worker here (refused, site data blocked)
  }
}
// Said when Python is ready on a page that is not cross-origin isolated (see `stop`): asked
// then, as the book's service worker may have come to control the page since it loaded.
const stopRestarts = () => " Here Stop restarts Python, losing your variables" + (reloadIsolates()
  ? ": reload the page once and Stop keeps them (your edits are kept)." : ".");
const RELOAD_FOR_STOP = " Reload the page for a Stop that keeps Python and your variables (from its second " +
  "load this page can interrupt Python; your edits are kept).";

/** @param {Worker} worker @returns {Int32Array | null} */
function interruptBuffer(worker) {
  state.relay = null;
  if (!self.crossOriginIsolated) {
    if (reloadIsolates()) {
      worker.postMessage(/** @satisfies {ToWorker} */ ({ type: "reload-isolates" }));  // (input() still needs the reload)
      // Stop keeps Python all the same, through the service worker, once the worker says it answers.
      const controller = /** @type {ServiceWorker} */ (navigator.serviceWorker.controller);
      state.relay = new RelayedStop(controller, `${Date.now()}-${Math.random().toString(36).slice(2)}`);
      worker.postMessage(/** @satisfies {ToWorker} */ ({ type: "stop-relay", id: state.relay.id }));
    }
    return null;
  }
  const buffer = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  state.input = inputBuffer();  // input() that reads what the reader types (input.mjs)
  worker.postMessage(/** @satisfies {ToWorker} */ ({ type: "shared-buffers", interrupt: buffer, input: state.input }));
  return buffer;
}

function interrupt() {
  const cell = state.running;
  if (!cell || state.interrupted) return false;
  state.interrupted = cell;
  dropInputFields(cell);
  for (const queued of state.queue) queued.setState("stopped");
  state.queue = [];
  sendSignal(SIGINT);
  setStatus(`Stopping ${stoppedName(cell)}…`);
  // (The cell and the Python are not enough to tell this Stop's timers from an earlier one's:
  // a cell stopped, kept, run again and stopped again is the same cell in the same Python.)
  const interruption = ++state.interruptions;
  let waitedForTaken = false;
  const graceOver = async () => {
    if (state.interrupted !== cell || state.interruptions !== interruption) return;
    const { signal, cellCode } = await readSignal();
    if (state.interrupted !== cell || state.interruptions !== interruption) return;  // (done meanwhile)
    const unwinding = signal === 0 && cellCode === 1;
    if (!waitedForTaken && unwinding) {
      waitedForTaken = true;
      setTimeout(graceOver, INTERRUPT_TAKEN_MS);
      return;
    }
    stop(waitedForTaken ? `took the Stop but had not finished ${(INTERRUPT_GRACE_MS + INTERRUPT_TAKEN_MS) / 1000} s later`
      : `did not stop within ${INTERRUPT_GRACE_MS / 1000} s`);
  };
  setTimeout(graceOver, INTERRUPT_GRACE_MS);
  return true;
}

/** @param {number} signal SIGINT, or 0: an untaken Stop taken back */
function sendSignal(signal) {
  if (state.interrupt instanceof Int32Array) Atomics.store(state.interrupt, SIGNAL_SLOT, signal);
  else state.interrupt?.send(signal);
}

/** The signal not yet taken, and whether the reader's code runs. @returns {Promise<{signal: number, cellCode: number}>} */
async function readSignal() {
  const buffer = state.interrupt;
  if (buffer instanceof Int32Array) return { signal: Atomics.load(buffer, SIGNAL_SLOT), cellCode: Atomics.load(buffer, CELL_CODE_SLOT) };
  return buffer ? buffer.read() : { signal: SIGINT, cellCode: 0 };
}

/** @param {Cell} cell */
function interrupted(cell) {
  sendSignal(0);
  state.interrupted = null;
  state.running = null;
  cell.setState("stopped");
  cell.skipReason = "was stopped";
  // The Stop button is hidden with the bar: its focus goes to the stopped cell's Run button.
  const focused = document.activeElement;
  if (!focused || focused === document.body || /** @type {HTMLElement} */ (state.floating).contains(focused))
    cell.runButton.focus({ preventScroll: true });
  if (state.queue.length) return sendNext();
  setBusy(false);
  setStatus(`Stopped ${stoppedName(cell)} (KeyboardInterrupt, under the cell): Python and all your variables are kept.`);
}

// Ctrl+. (⌘. on a Mac), from anywhere on the page, editors included (keys.mjs).
const isStopKey = (/** @type {KeyboardEvent} */ event) =>
  event.key === "." && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey;
const STOP_KEY = /Mac|iPhone|iPad/.test(navigator.platform) ? "⌘." : "Ctrl+.";

// ---------------------------------------------------------------------------
// The reader's work (work.mjs) and what the cells' controls do
// ---------------------------------------------------------------------------

/** @param {string} text */
function notice(text) {
  if (!state.notices.includes(text)) state.notices.push(text);
  if (state.status) setStatus("");
}

/** @type {import("./cells.mjs").CellActions} */
const actions = {
  run: runCell,
  add: (cell) => /** @type {Work} */ (state.work).add(cell),
  remove: (cell) => {
    if (state.running !== cell && !state.queue.includes(cell)) /** @type {Work} */ (state.work).remove(cell);
  },
  reset: (cell) => {  // (a book cell's: an added cell has no Reset)
    cell.setSource(/** @type {string} */ (cell.bookSource));
    cell.focus();
  },
  changed: (cell) => /** @type {Work} */ (state.work).changed(cell),
};

// ---------------------------------------------------------------------------
// Start: called by the loader on the click
// ---------------------------------------------------------------------------

// bar, status: the loader's controls; download: {bytes, text, figureBytes}, what the click downloads (and a first figure);
// notebook: the URL of the page's reader's notebook, relative to the page.
/** @param {{bar: HTMLElement, status: HTMLElement, download: Download, notebook: string}} options */
export function start({ bar, status, download, notebook }) {
  guardModifiedKeys([{ matches: isStopKey, run: () => stop() }]);
  const css = el("link", { rel: "stylesheet", href: new URL("./runner.css", import.meta.url).href });
  document.head.append(css);
  Object.assign(state, { status, download });
  /** @type {{cells: Cell[]}} */
  const page = { cells: [] };
  state.work = new Work({
    page, notice, setStatus, notebookUrl: notebook,
    newCell: ({ div, id, label, source }) => new Cell({ div, id, number: null, label, bookSource: null, source, actions }),
  });
  const main = document.querySelector("main") || document.body;
  const divs = [.../** @type {NodeListOf<HTMLElement>} */ (main.querySelectorAll("div.cell"))].filter((div) => div.querySelector(".cell_input pre"));
  state.cells = page.cells;
  page.cells.push(...divs.map((div, i) => {
    const original = /** @type {HTMLElement} */ (div.querySelector(".cell_input pre")).textContent.replace(/\n$/, "");
    return new Cell({ div, id: i + 1, number: i + 1, label: `cell ${i + 1}`, bookSource: original, actions });
  }));
  const runAll = () => {
    for (const cell of runnable()) cell.runFirstFor = null;  // each runs for itself
    queueCells(runnable());
  };
  state.runAll = button("Run all", () => { state.skipped = []; runAll(); }, { cls: "browser-run-run-all" });
  state.floatingText = el("span", {});
  state.floating = el("div", { class: "browser-run-floating", hidden: true, role: "region", "aria-label": "Running" },
    state.floatingText, button("Stop", () => stop(), { label: "Stop", cls: "browser-run-stop" }),
    el("kbd", { class: "browser-run-key", title: "Stop from anywhere on the page, editors included" }, STOP_KEY));
  document.body.append(state.floating);
  addEventListener("scroll", placeStopSoon, { passive: true });
  addEventListener("resize", placeStopSoon);
  bar.replaceChildren(
    state.runAll,
    button("Download as notebook", () => /** @type {Work} */ (state.work).download(), { cls: "browser-run-download" }),
    button("Clear my edits", () => /** @type {Work} */ (state.work).clear(),
      { label: "Clear my edits on this page", cls: "browser-run-clear" }),
    status,
  );
  /** @type {Work} */ (state.work).restore();
  // For the tests and the benchmark: the cells, as the reader's page holds them.
  window.browserRun = {
    get cells() { return state.cells; },
    // What Python's start downloaded, as the worker last said (a ProgressMessage, or null).
    get downloads() { return state.downloads; },
    runAll,
  };
  startWorker();
  // The clicked button is gone: the keyboard goes on to "Run all".
  state.runAll.focus({ preventScroll: true });
}
