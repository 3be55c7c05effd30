// The page <-> worker protocol (ours), as JSDoc types that `tsc --checkJs` checks
// (tsconfig.json on the page's side, tsconfig.worker.json on worker.mjs's; `make
// test-sources`). Types only: nothing here runs, and no page loads it
// (it is not in __init__.py's SERVED); the modules name these types in comments
// (`@type {import("./messages.mjs").ToWorker}`). One worker per page (worker.mjs), created by
// boot.mjs and taken by runner.mjs; the page posts ToWorker, the worker posts FromWorker.
export {};

// ---------------------------------------------------------------------------
// The page to the worker (runner.mjs, boot.mjs)
// ---------------------------------------------------------------------------

/** Run one cell's code; cells run one at a time, in the order sent (runner.mjs).
 * @typedef {{type: "run", id: CellId, label: string, source: string}} RunMessage */
/** Load these packages as soon as Python is up, not queued behind cells (boot.mjs).
 * @typedef {{type: "preload", packages: string[]}} PreloadMessage */
/** A cross-origin isolated page's shared buffers: Stop without a restart, and input()'s
 * answers (layout: input.mjs) (runner.mjs). `interrupt` has two slots: 0, the signal Pyodide
 * polls (the page writes SIGINT, Python writes 0 when it takes it); 1, set to 1 by the worker
 * while the reader's own code runs (page_python.py), so that Stop waits longer only for a cell
 * that unwinds its own code. runner.mjs (SIGNAL_SLOT, CELL_CODE_SLOT) and worker.mjs
 * (CELL_CODE_SLOT) name them; this is the layout they share.
 * @typedef {{type: "shared-buffers", interrupt: Int32Array, input: SharedArrayBuffer}} SharedBuffersMessage */
/** The page is not isolated but a reload would make it so: input() says so (runner.mjs).
 * @typedef {{type: "reload-isolates"}} ReloadIsolatesMessage */
/** Stop through the book's service worker, on a page that is not isolated (stop_relay.mjs): the
 * worker asks it for the signal under this id.
 * @typedef {{type: "stop-relay", id: string}} StopRelayMessage */
/** The bytes a page's first figure fetches, as the build wrote them: the worker says them when a
 * cell loads matplotlib (runner.mjs).
 * @typedef {{type: "figure-bytes", bytes: number}} FigureBytesMessage */
/** @typedef {RunMessage | PreloadMessage | SharedBuffersMessage | ReloadIsolatesMessage | StopRelayMessage | FigureBytesMessage} ToWorker */

// ---------------------------------------------------------------------------
// The worker to the page (worker.mjs)
// ---------------------------------------------------------------------------

/** A step of the start or of the first figure ended, at `at` ms since the epoch (boot.mjs
 * keeps them in window.browserRunTimings for `make bench-run`).
 * @typedef {{type: "timing", step: string, at: number}} TimingMessage */
/** What Python's start has downloaded so far (every PROGRESS_MS while it starts): files whole,
 * and bytes as they arrive, as the files are stored on the host; `downloading`: bytes are still
 * on their way (false once the runtime's files are in: Python then starts); `snapshot`: whether
 * this start fetches Python's snapshot (false: it starts afresh without it; null: not decided yet);
 * `resent`: bytes that arrived a second time (a whole answer again after a cut one), passed over.
 * @typedef {{type: "progress", files: number, bytes: number, resent: number, downloading: boolean, snapshot: boolean | null,
 *   figures: "loading" | "loaded" | "failed" | null}} ProgressMessage */
/** A sentence for the page's status line.
 * @typedef {{type: "status", text: string}} StatusMessage */
/** Python is up (`version`: Python's own).
 * @typedef {{type: "ready", version: string}} ReadyMessage */
/** Python could not start; `offline`: the runtime is not stored and the page is offline.
 * @typedef {{type: "failed", text: string, offline?: boolean}} FailedMessage */
/** Packages loaded (on a cell's import, or preloaded); boot.mjs keeps "figures" offline on matplotlib.
 * @typedef {{type: "loaded", packages: string[]}} LoadedMessage */
/** A cell's writes to one stream, batched.
 * @typedef {{type: "stream", id: WriterId, name: "stdout" | "stderr", text: string}} StreamMessage */
/** A displayed value (a cell's value, display()) as a notebook stores it: its display bundle,
 * {MIME type: data} (text; an image's bytes as base64; application/json's data as JSON), and
 * its metadata (an image's width and height, under its MIME type).
 * @typedef {{type: "display", id: WriterId, data: DisplayData, metadata: Record<string, any>}} DisplayMessage */
/** @typedef {Record<string, any>} DisplayData */
/** clear_output(): the cell's output cleared now, or (`wait`) when it next shows something.
 * @typedef {{type: "clear", id: WriterId, wait: boolean}} ClearMessage */
/** A matplotlib figure as a PNG (base64), with its size in pixels.
 * @typedef {{type: "figure", id: WriterId, plain: string, png: string, width: number, height: number}} FigureMessage */
/** The cell called input(): the page shows a field and answers through the shared buffer.
 * @typedef {{type: "input", id: WriterId, prompt: string}} InputMessage */
/** The cell finished (`ok`: without an exception).
 * @typedef {{type: "done", id: CellId, ok: boolean}} DoneMessage */
/** Whether the service worker answered the worker's first ask (stop_relay.mjs): Stop keeps Python.
 * @typedef {{type: "stop-relayed", ok: boolean}} StopRelayedMessage */
/** @typedef {TimingMessage | ProgressMessage | StatusMessage | ReadyMessage | FailedMessage | LoadedMessage
 *   | StreamMessage | DisplayMessage | ClearMessage | FigureMessage | InputMessage | DoneMessage | StopRelayedMessage} FromWorker */

/** A cell's id on the page: a book cell's number, or an added cell's string id (work.mjs).
 * @typedef {number | string} CellId */
/** The cell that wrote an output: the one running, or the last one run; null before the first
 * (Python wrote while loading a page's packages ahead of any cell): the page shows it nowhere.
 * @typedef {CellId | null} WriterId */

// The page to the book's service worker: typed in runnable_book/sphinx_ext/offline_types.d.ts (the one
// definition offline_page.mjs and offline_sw.js use); the runner asks through offline_page.mjs
// (window.bookOffline.keep, globals.d.ts).
