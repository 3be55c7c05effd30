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

const WORKER = new URL("./worker.mjs", import.meta.url);
// Where a reader who has run code in this book is remembered (prestart.mjs reads it).
export const STARTED_BEFORE = "browser-run:v1:python-started";

let waiting = null; // {worker, messages, onMessage}: started, not yet taken by the runner

export const now = () => performance.timeOrigin + performance.now();
export function timing(step, at = now()) {
  (window.browserRunTimings ||= []).push({ step, at });
}

function rememberStarted() {
  try { window.localStorage.setItem(STARTED_BEFORE, "1"); } catch (error) { /* storage refused: no early start */ }
}

function newWorker(onMessage) {
  const worker = new Worker(WORKER, { type: "module" });
  worker.addEventListener("message", (event) => {
    if (event.data.type === "timing") timing(event.data.step, event.data.at);
    if (event.data.type === "ready") rememberStarted();
  });
  const started = { worker, messages: [], onMessage };
  worker.addEventListener("message", (event) => {
    if (waiting !== started) return; // taken: the runner has its own listener
    started.messages.push(event.data);
    if (started.onMessage) started.onMessage(event.data);
  });
  return started;
}

// Start Python now unless it is already starting. onMessage: told each message until the
// runner takes the worker (prestart.mjs shows the start in the page's status).
export function bootPython({ onMessage = null } = {}) {
  if (!waiting) waiting = newWorker(onMessage);
  else if (onMessage) waiting.onMessage = onMessage;
  return waiting.worker;
}

// The figure page's packages, loaded once Python is up (worker.mjs, "preload").
export function preloadPackages(names) {
  if (names.length) bootPython().postMessage({ type: "preload", packages: names });
}

// For runner.mjs: the worker already started, with what it said so far, or a new one.
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
