// Starting the page's Python (ours): the one place a worker (worker.mjs) is created.
//
// Python starts before runner.mjs is ready, so its start overlaps the editor's: the loader
// calls bootPython() on the click (or prestart.mjs calls it earlier, for a reader whose
// runtime is already cached), and runner.mjs then takes that worker with takeWorker(),
// along with the messages it sent meanwhile ("ready" among them). Stop makes a new worker
// through takeWorker() too. A page whose cells import matplotlib (known at build time) asks
// the worker to load it as soon as Python is up, in parallel with the earlier cells.
//
// The worker's "timing" messages (a step and when it ended) are kept in
// window.browserRunTimings beside the loader's "click": `make bench-run` reads them.
//
// From the click on, the download is shown here (download_bar.mjs), before the runner and
// the editor have arrived: on a slow network they are seconds of download themselves.
import { DownloadBar } from "./download_bar.mjs";

const WORKER = new URL("./worker.mjs", import.meta.url);
// Where a reader who has run code in this book is remembered (the loader reads it: Python
// may then start early on the book's next page, prestart.mjs).
const STARTED_BEFORE = "browser-run:v1:python-started";

/** @typedef {import("./messages.mjs").FromWorker} FromWorker */
/** What a Python started and not yet taken by the runner has said, and who is told of it.
 * @typedef {{worker: Worker, messages: FromWorker[], onMessage: ((message: FromWorker) => void) | null}} Started */
/** @type {Started | null} */
let waiting = null; // started, not yet taken by the runner
let clicked = false; // the reader clicked: an early start that comes later starts nothing
/** @type {DownloadBar | null} the download, shown once the reader asked for Python */
let downloadBar = null;

const now = () => performance.timeOrigin + performance.now();
/** @param {string} step @param {number} [at] */
function timing(step, at = now()) {
  (window.browserRunTimings ||= []).push({ step, at });
}

// What a run fetched is kept for offline use (runnable_book/sphinx_ext/offline_sw.js, "keep"): the
// book's service worker keeps what passes through it, but a first visit's page ran before the
// worker controlled it, so its files went past it. Asked again, they come from the HTTP cache,
// and only they: the rest of the group (the snapshot a start went without, latex.mjs) is not
// fetched for it, so nothing follows the first output on the reader's line.
// The page's offline script (offline_page.mjs) asks, and remembers the wish until it is kept:
// the run may end before the book's worker is active, and the reader leave before it is.
/** @param {string[]} groups */
function keepForOffline(groups) {
  if (window.bookOffline) window.bookOffline.keep(groups);  // (none: a file:// page, no offline script)
}

function rememberStarted() {
  try { window.localStorage.setItem(STARTED_BEFORE, "1"); } catch (error) { /* storage refused: no early start */ }
}

/** @param {((message: FromWorker) => void) | null} onMessage @returns {Started} */
function newWorker(onMessage) {
  const worker = new Worker(WORKER, { type: "module" });
  if (downloadBar) downloadBar.newStart();
  worker.addEventListener("message", (event) => {
    const message = /** @type {FromWorker} */ (event.data);  // (worker.mjs posts only these)
    if (message.type === "timing") timing(message.step, message.at);
    if (message.type === "progress" && downloadBar) downloadBar.update(message);
    // (On a page that draws, the bar goes once the figures' packages are in: worker.mjs's preload.)
    if (message.type === "ready" && downloadBar) downloadBar.ready();
    if (downloadBar && (message.type === "failed"
        || (message.type === "progress" && (message.figures === "loaded" || message.figures === "failed")))) downloadBar.finish();
    if (message.type === "ready") {
      rememberStarted();
      keepForOffline(["python"]);
    }
    if (message.type === "loaded" && message.packages.includes("matplotlib")) keepForOffline(["figures"]);
  });
  /** @type {Started} */
  const started = { worker, messages: [], onMessage };
  worker.addEventListener("message", (event) => {
    if (waiting !== started) return; // taken: the runner has its own listener
    const message = /** @type {FromWorker} */ (event.data);
    started.messages.push(message);
    if (started.onMessage) started.onMessage(message);
  });
  return started;
}

// The download of every Python this page starts from now on, shown in the loader's bar (the
// click; an early start, from the cache, shows none).
/** @param {HTMLElement} bar @param {import("./download_bar.mjs").Announced} announced */
export function showDownload(bar, announced) {
  if (downloadBar) return;
  downloadBar = new DownloadBar(bar, announced);
  if (waiting) downloadBar.newStart();  // (started early: the click's Python)
}

// Start Python now unless it is already starting. onMessage: told each message until the
// runner takes the worker (prestart.mjs shows the start in the page's status). early: an
// early start (prestart.mjs), which returns null once the click has started the page's Python.
/** @param {{onMessage?: ((message: FromWorker) => void) | null, early?: boolean}} [options] @returns {Worker | null} */
export function bootPython({ onMessage = null, early = false } = {}) {
  if (early && clicked) return null;
  if (!early) clicked = true;
  if (!waiting) waiting = newWorker(onMessage);
  else if (onMessage) waiting.onMessage = onMessage;
  return waiting.worker;
}

// The figure page's packages, loaded once the Python started and not yet taken is up
// (worker.mjs, "preload"); nothing when there is none (stopped, or taken by the runner).
/** @param {string[]} names */
export function preloadPackages(names) {
  if (names.length && waiting) waiting.worker.postMessage(/** @satisfies {import("./messages.mjs").ToWorker} */ ({ type: "preload", packages: names }));
}

// For runner.mjs: the worker already started, with what it said so far, or a new one.
/** @returns {{worker: Worker, earlier: FromWorker[]}} */
export function takeWorker() {
  const taken = waiting || newWorker(null);
  waiting = null;
  return { worker: taken.worker, earlier: taken.messages };
}

// A Python started early that the reader stopped before clicking.
export function stopWaiting() {
  if (waiting) waiting.worker.terminate();
  waiting = null;
}
