// The page's Python: one Pyodide interpreter in a module Web Worker (ours).
//
// Loaded by runner.mjs only after the reader clicks "Run in your browser". Pyodide and
// chapter_lib come from this book's own _static folder (copied there by `make assets`),
// so nothing is fetched from another host. The messages in and out are listed in this
// folder's README.md.
import { loadPyodide } from "../pyodide/pyodide.mjs";
import { relayUrl, relayedStop, takenOnlyWhenRead } from "./stop_relay.mjs";
import { DownloadFailed, DownloadMeter, countedResponse, countingFetch, inflatedIfGzip } from "./downloads.mjs";

// Types (tsc, tsconfig.worker.json: a worker's globals, strict): the messages are
// messages.mjs's, Pyodide's API its own pyodide.d.ts (runnable_book/pipeline/pyodide_module.d.ts).
/** @typedef {import("pyodide").PyodideInterface} Pyodide */
/** @typedef {import("./messages.mjs").CellId} CellId */

const STATIC = new URL("../", import.meta.url);
/** @param {import("./messages.mjs").FromWorker} message */
const post = (message) => self.postMessage(message);
/** @type {CellId | null} the cell running, or the last one (null: before the first) */
let currentId = null;
let drawn = false; // a figure drawn in this Python, by the warm-up or a cell: no warm-up after it

// Steps of the start and of the first figure, for `make bench-run`'s breakdown (boot.mjs
// keeps them in the page): when each ended, in milliseconds since the epoch.
const mark = (/** @type {string} */ step) => post({ type: "timing", step, at: performance.timeOrigin + performance.now() });
mark("worker: pyodide.mjs imported");

// Stream output is batched: a loop of 200,000 prints is one write each, and one message
// (and one page update) per write froze the page for minutes. Writes are collected and
// sent at most once per FLUSH_MS while Python runs (a print loop never lets a timer fire,
// so the check is made on each write), and always before a value, an error or "done", so
// the order of what a cell shows is the order it wrote it. A cell's first write goes at once
// (lastFlush is reset when it starts): held for a timer, the "Computing…" a cell prints before
// a long loop showed only when the loop ended, whenever the cell started within FLUSH_MS of the
// previous cell's "done" (Run all).
const FLUSH_MS = 50;
/** @typedef {"stdout" | "stderr"} StreamName */
/** @type {[StreamName, string][]} */
let pending = []; // [name, text] runs, consecutive writes to one stream joined
let lastFlush = 0;
/** @type {ReturnType<typeof setTimeout> | null} */
let flushTimer = null;

function flushStreams() {
  if (flushTimer !== null) clearTimeout(flushTimer);  // (clearTimeout(null) did nothing either)
  flushTimer = null;
  lastFlush = performance.now();
  for (const [name, text] of pending) post({ type: "stream", id: currentId, name, text });
  pending = [];
}

/** @param {StreamName} name @param {string} text */
function queueStream(name, text) {
  const last = pending[pending.length - 1];
  if (last && last[0] === name) last[1] += text;
  else pending.push([name, text]);
  if (performance.now() - lastFlush >= FLUSH_MS) flushStreams();
  else if (!flushTimer) flushTimer = setTimeout(flushStreams, FLUSH_MS); // a cell that waits (asyncio.sleep)
}

// Python's sys.stdout/sys.stderr write raw bytes here; decode them as a stream so a
// character split across two writes is not garbled.
/** @param {StreamName} name */
function streamTo(name) {
  const decoder = new TextDecoder();
  return {
    /** @param {Uint8Array} bytes */
    write(bytes) {
      const text = decoder.decode(bytes, { stream: true });
      if (text) queueStream(name, text);
      return bytes.length;
    },
  };
}

// Download progress, every PROGRESS_MS while Python starts: the bytes of every fetch counted as
// they arrive (downloads.mjs: Pyodide's own fetches go through the same counter), and the
// files only resource timing sees (the modules this worker imports), once each has arrived.
// Bytes as the files are stored on the host, so the page's total is the build's sum of them.
const PROGRESS_MS = 250;
const meter = new DownloadMeter();
const plainFetch = self.fetch.bind(self);
// A download of Python's start that gave up fails the start at once: Pyodide never returns from a
// runtime whose WebAssembly broke off (Emscripten aborts inside it, and loadPyodide's promise is
// never settled), and the page said "Downloading Python" for ever. (The snapshot's has its own
// way out: Python starts afresh.)
let pythonUp = false;
/** @type {(failure: DownloadFailed) => void} */
let failTheStart = () => {};
/** @type {Promise<never>} */
const startGaveUp = new Promise((_, reject) => { failTheStart = reject; });
startGaveUp.catch(() => {});  // (raced by start(); a rejection after Python is up is nobody's)
// Whether this browser has the runtime's WebAssembly already (a returning reader: the HTTP cache
// or the book's offline copy), asked as the worker starts and answered before this start fetches
// it: its download waits for the answer (countingFetch's askedFirst). Else a service worker slow
// to answer (a busy machine: a CI run met it) found the file this very start had just put in the
// HTTP cache, and a first visit was taken for a returning one (snapshotWorthFetching).
const runtimeKept = plainFetch(new URL("pyodide/pyodide.asm.wasm.gz", STATIC), { cache: "only-if-cached", mode: "same-origin" })
  .then((answer) => {
    if (answer.body) answer.body.cancel();  // (its headers are the answer)
    return answer.ok;
  }, () => false);  // (not kept: only-if-cached fails rather than download)
const downloads = countingFetch(meter, plainFetch, {}, (failure) => {
  if (!pythonUp && failure.url !== SNAPSHOT.href) failTheStart(failure);
}, runtimeKept);
self.fetch = downloads.fetch;
/** @type {boolean | null} the snapshot is fetched for this start (null: not decided yet) */
let snapshotFetched = null;
// The runtime's files are in once its WebAssembly is compiled (the largest of them, compiled as
// it arrives): Python then starts, and the bar says so.
let runtimeCompiled = false;
// The page's figures' packages, preloaded once Python is up (preload): the bar counts them too.
/** @type {"loading" | "loaded" | "failed" | null} */
let figuresStage = null;
// What a first figure fetches, as the build wrote it (the page says it: "figure-bytes"; 0 until then).
let figureBytes = 0;
const compileAsItArrives = WebAssembly.instantiateStreaming;
WebAssembly.instantiateStreaming = /** @type {typeof WebAssembly.instantiateStreaming} */ (
  (source, imports) => compileAsItArrives(source, imports).then((compiled) => {
    if (!runtimeCompiled) mark("runtime's WebAssembly compiled");
    runtimeCompiled = true;
    reportDownloads();  // (said now: the interpreter's start then holds this thread for seconds)
    return compiled;
  }));
function reportDownloads() {
  const entries = /** @type {PerformanceResourceTiming[]} */ (performance.getEntriesByType("resource"))
    .filter((entry) => !meter.counted.has(entry.name));
  const bytes = entries.reduce((sum, entry) => sum + (entry.decodedBodySize || 0), meter.bytes);
  post({ type: "progress", files: meter.files + entries.length, bytes, resent: meter.resent,
         downloading: figuresStage === "loading" ? meter.open > 0 : !runtimeCompiled || meter.open > 0,
         snapshot: snapshotFetched, figures: figuresStage });
}

// The Python run once in the interpreter before any cell: page_python.py, beside this file
// (kept in Python so the semantics are Python's).

// Pyodide's own packages, served beside the runtime (make assets verifies each against
// pyodide-lock.json, and loadPackage checks it again): loaded on a cell's first import of
// them, with the figure backend (figures.py) when matplotlib is among them.
/** @type {Map<string, Promise<void>>} */
const loading = new Map(); // package name -> the promise of its load (a preload and a cell share it)
// Said instead of Pyodide's fetch errors (one per wheel) when the network is gone.
const FIGURES_NOT_STORED = "Figures need matplotlib, which is not stored for offline use yet: run a page " +
  "with figures once online, or keep the book for offline use (the page's footer).";
const PYTHON_NOT_STORED = "Python is not stored for offline use yet: run any page once online, or keep " +
  "the book for offline use (the page's footer).";
// A fetch that failed for want of a network, as the browser words it (Chromium, Firefox, Safari).
const isNetworkError = (/** @type {unknown} */ text) => /Failed to fetch|NetworkError|Load failed|network/i.test(String(text));
// Online, a download that gave up (downloads.mjs: after its retries, never while bytes arrived)
// is said as what it is: which file, how much of it came, and that it can be tried again. Never
// "not stored for offline use": the browser is online, and that sentence sent a reader on a slow
// line looking for a network they had.
/** @param {DownloadFailed} failure @param {string} [again] */
const downloadFailedText = (failure, again = "") => `${failure.message.replace(/\.$/, "")} (the browser is online).${again}`;
const RUN_AGAIN = " Run the cell again to try again.";
// The last download that gave up while online since the last call, if any, and the error it was.
/** @param {unknown} [error] @returns {DownloadFailed | null} */
function onlineFailure(error) {
  const failures = downloads.takeFailures();
  if (error instanceof DownloadFailed) return error;
  return navigator.onLine && failures.length ? failures[failures.length - 1] : null;
}

/** @param {Pyodide} pyodide @param {string[]} names @param {string} [forWhat] */
async function loadPackages(pyodide, names, forWhat = "this cell") {
  const missing = names.filter((name) => !loading.has(name));
  if (missing.length) {
    const size = missing.includes("matplotlib") && figureBytes
      ? ` (up to ${Math.round(figureBytes / 1e6)} MB the first time, then kept)` : "";
    // (A preload's download is the page's bar's to say, with what the build wrote.)
    if (figuresStage !== "loading") post({ type: "status", text: `Loading ${missing.join(", ")} for ${forWhat}${size}…` });
    const load = loadMissing(pyodide, missing);
    missing.forEach((name) => loading.set(name, load));
    // A failed load is tried again by the next cell that asks (the network may be back).
    load.catch((error) => {
      missing.forEach((name) => loading.delete(name));
      post({ type: "status", text: error.message });
    });
  }
  await Promise.all(names.map((name) => loading.get(name)));
  if (missing.length) post({ type: "status", text: forWhat === "this cell" ? "Running the cell…" : `Loaded ${missing.join(", ")}.` });
}

/** @param {Pyodide} pyodide @param {string[]} missing */
async function loadMissing(pyodide, missing) {
  const figures = missing.includes("matplotlib");
  // Fetched while the wheels load: the figure backend, and what make assets built for the first
  // figure (runnable_book/pipeline/figure_bytecode.mjs: its imports' bytecode, the font cache).
  const backend = figures && fetch(new URL("runner/figures.py", STATIC)).catch(() => null);
  // Read as it arrives, not after the wheels: the bar counts a body's bytes as they are read
  // (downloads.mjs), and left unread its 3 MB came in uncounted (15.4's bar ended at 88%).
  /** @type {Promise<{ archive?: ArrayBuffer, error?: unknown } | null> | false} */
  const prebuilt = figures && fetch(new URL("runner/first-figure.zip", STATIC)).then(
    (zip) => (zip.ok ? zip.arrayBuffer().then((archive) => ({ archive }), (error) => ({ error })) : null),
    () => null);
  downloads.takeFailures();  // (what gave up before this load is not this load's to say)
  /** @type {string[]} */
  const errors = [];
  await pyodide.loadPackage(missing, {
    // Pyodide's own messages list all thirteen packages; the status above says what matters.
    messageCallback: () => {},
    errorCallback: (text) => errors.push(text),
  });
  const notLoaded = missing.filter((name) => !(name in pyodide.loadedPackages));
  if (notLoaded.length) {
    const failure = onlineFailure();
    if (failure) throw new Error(downloadFailedText(failure, RUN_AGAIN));
    if (errors.some(isNetworkError)) throw new Error(figures ? FIGURES_NOT_STORED : PYTHON_NOT_STORED);
    throw new Error(`${notLoaded.join(", ")} could not be loaded: ${errors[0] || "no reason given"}`);
  }
  errors.forEach((text) => queueStream("stderr", text + "\n"));  // (loaded all the same)
  post({ type: "loaded", packages: missing });
  mark(`${missing.join(", ")} fetched and unpacked`);
  if (!figures) return;
  const backendFile = await backend;
  const failure = onlineFailure();
  if (failure) throw new Error(downloadFailedText(failure, RUN_AGAIN));
  if (!backendFile) throw new Error(FIGURES_NOT_STORED);
  if (!backendFile.ok) throw new Error(`figures.py: HTTP ${backendFile.status}`);
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.FS.writeFile(`${sitePackages}/_browser_figures.py`, await backendFile.text());
  // Without it (or with bytecode of another Python, which Python ignores), the imports
  // compile the sources and matplotlib lists its fonts, as before.
  const zip = await prebuilt;
  if (zip && zip.error) {
    const gaveUp = onlineFailure(zip.error);
    if (gaveUp) throw new Error(downloadFailedText(gaveUp, RUN_AGAIN));
    throw zip.error;
  }
  if (zip && zip.archive) pyodide.unpackArchive(zip.archive, "zip", { extractDir: sitePackages });
  mark("first figure's bytecode and font cache unpacked");
}

// Python's start, restored from the memory snapshot `make assets` made of the same runtime
// started in Node with chapter_lib imported (runnable_book/pipeline/python_snapshot.mjs): most of a
// fresh start is the interpreter initialising, which the snapshot skips. Without a snapshot,
// or with one Pyodide refuses (it checks the snapshot was made by this very build), Python
// starts afresh, as it did before snapshots.
//
// The snapshot (5 MB) is worth its download only where it arrives sooner than the fresh start
// it saves takes: always when this browser has it already (a returning reader: the HTTP cache
// or the book's offline copy), on a first visit only on a fast network. There the runtime's
// own files come first, and the snapshot is asked for once their rate is known: on a slow
// phone line it would double the wait (its bytes shared the line with the runtime's), so
// Python starts afresh instead, from the files already on their way (a second loadPyodide
// reads the same downloads: downloads.mjs). A browser that has the runtime but not the
// snapshot (its first visit went without it) starts afresh too: the runtime's files then come
// from this browser's store, whose rate says nothing of the line, and a Python started before
// the click (prestart.mjs) must fetch nothing.
async function startRuntime() {
  const indexURL = new URL("pyodide/", STATIC).href;
  const snapshot = snapshotWorthFetching().then((response) => {
    snapshotFetched = Boolean(response);
    if (!response) throw new SnapshotNotFetched();
    return inflated(response);
  });
  snapshot.catch(() => {});  // (loadPyodide awaits it; a refusal here is not an unhandled one)
  try {
    const pyodide = await loadPyodide({ indexURL, _loadSnapshot: snapshot });
    mark("runtime restored from its snapshot");
    return pyodide;
  } catch (error) {
    mark(error instanceof SnapshotNotFetched ? "snapshot not fetched: starting afresh" : "snapshot refused: starting afresh");
  }
  const pyodide = await loadPyodide({ indexURL });
  mark("runtime started afresh");
  return pyodide;
}

class SnapshotNotFetched extends Error {}

// What a fresh start costs beyond a restore (the interpreter initialising, chapter_lib
// imported): about 2-3 s of a laptop's CPU (`make bench-run`'s breakdown of the bare runtime).
const FRESH_START_SECONDS = 2;
// The rate is known once this much has arrived, or this long after the first byte.
const RATE_KNOWN_BYTES = 1e6;
const RATE_KNOWN_SECONDS = 1.5;
const SNAPSHOT = new URL("runner/python-snapshot.bin.gz", STATIC);

/** @returns {Promise<Response | null>} the snapshot's answer, or null: start afresh */
async function snapshotWorthFetching() {
  const kept = await plainFetch(SNAPSHOT, { cache: "only-if-cached", mode: "same-origin" }).catch(() => null);
  if (kept && kept.ok) return countedResponse(kept, meter);
  if (await runtimeKept) return null;
  await meter.measured(RATE_KNOWN_BYTES, RATE_KNOWN_SECONDS);
  // Its size, asked without its body (a GET abandoned midway would still be read whole by the
  // book's service worker, which keeps what passes through it).
  const head = await plainFetch(SNAPSHOT, { method: "HEAD" }).catch(() => null);
  const size = head && head.ok ? Number(head.headers.get("Content-Length")) || Infinity : Infinity;
  if (size / meter.bytesPerSecond() > FRESH_START_SECONDS) return null;
  // (Resumed as the runtime's files are, downloads.mjs; never shared: one start reads it.)
  const answer = await downloads.once(SNAPSHOT).catch(() => null);
  return answer && answer.ok ? answer : null;  // (none: Python starts afresh, as before snapshots)
}

// The snapshot is stored gzipped (python_snapshot.mjs); a server that sent it with
// Content-Encoding: gzip sent it inflated already (inflatedIfGzip reads the first bytes).
/** @param {Response} response */
async function inflated(response) {
  const body = /** @type {ReadableStream<Uint8Array>} */ (response.body);  // (an ok answer has one)
  return new Uint8Array(await new Response(inflatedIfGzip(body)).arrayBuffer());
}

/** A file of _static, whole, or an error naming it. @param {string} name */
async function fetchWhole(name) {
  const response = await fetch(new URL(name, STATIC));
  if (!response.ok) throw new Error(`${name.split("/").pop()}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

// Python itself is up, before the runner's own setup (start() below): a page's preload starts
// then, so its wheels arrive and unpack while page_python.py runs, not after it.
/** @type {(pyodide: Pyodide) => void} */
let runtimeIsUp = () => {};
/** @type {Promise<Pyodide>} (never settled when the start fails: nothing is preloaded then) */
const runtimeUp = new Promise((resolve) => { runtimeIsUp = resolve; });

async function start() {
  const progress = setInterval(reportDownloads, PROGRESS_MS);
  // chapter_lib downloads while the runtime starts (read at once: its bytes are then counted in,
  // not left waiting in the answer until Python is up).
  const wheel = fetchWhole("runner/chapter_lib.whl");
  const pagePython = fetchWhole("runner/page_python.py");
  const displayModule = fetchWhole("runner/display.py");
  [wheel, pagePython, displayModule].forEach((file) => file.catch(() => {}));  // (a failure is said where it is awaited)
  let pyodide;
  try {
    pyodide = await Promise.race([startRuntime(), startGaveUp]);
  } finally {
    clearInterval(progress);
    reportDownloads();
  }
  pythonUp = true;
  runtimeIsUp(pyodide);
  downloads.endSharing();
  pyodide.setStdout(streamTo("stdout"));
  pyodide.setStderr(streamTo("stderr"));
  pyodide.setStdin({ error: true }); // sys.stdin reads fail at once (no browser prompt())
  pyodide.registerJsModule("_browser_run", {
    // A display bundle as JSON text (display.py): {data: {mime: data}, metadata}.
    display: (/** @type {string} */ bundle) => {
      flushStreams();
      const { data, metadata } = JSON.parse(bundle);
      post({ type: "display", id: currentId, data, metadata });
    },
    // clear_output(wait): the cell's output cleared now, or when it next shows something.
    clear: (/** @type {boolean} */ wait) => {
      flushStreams();
      post({ type: "clear", id: currentId, wait });
    },
    /** @param {string} plain @param {string} png @param {number} width @param {number} height */
    figure: (plain, png, width, height) => {
      drawn = true;
      flushStreams();
      post({ type: "figure", id: currentId, plain, png, width, height });
    },
    load_packages: (/** @type {{toJs(): string[]}} a PyProxy of a list */ names) => loadPackages(pyodide, names.toJs()),
    mark,
    // The reader's code runs (1) or not (0): Stop waits longer only for a cell that took the
    // interrupt in its own code (runner.mjs, interrupt()).
    cell_code: (/** @type {boolean} */ running) => {
      cellCodeNow = running ? 1 : 0;
      if (sharedInterrupt) Atomics.store(sharedInterrupt, CELL_CODE_SLOT, cellCodeNow);
    },
  });
  post({ type: "status", text: "Loading chapter_lib…" });
  // (Unpacked again after a restore: the snapshot holds Python's memory, not its files.)
  pyodide.unpackArchive(await wheel, "wheel");
  // IPython.display's stand-in, which page_python.py imports (as _browser_display).
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.FS.writeFile(`${sitePackages}/_browser_display.py`, new TextDecoder().decode(await displayModule));
  await pyodide.runPythonAsync(new TextDecoder().decode(await pagePython), { filename: "<exec>" });
  mark("runner set up");
  // The package imported now (already, when restored), with what its chapters import; each
  // chapter's own module is imported by the first cell that uses one of its names (a few
  // tens of ms), so a page loads the chapters it uses, not the book (chapter_lib/__init__.py).
  // A cell's output is the same: importing chapter_lib prints nothing and defines nothing in
  // the page's namespace.
  pyodide.runPython("import chapter_lib");
  mark("chapter_lib imported");
  const runCell = pyodide.globals.get("run_cell");
  const version = pyodide.runPython("import sys; sys.version.split()[0]");
  return { pyodide, runCell, version };
}

const ready = start().then(
  (python) => {
    post({ type: "ready", version: python.version });
    return python;
  },
  (error) => {
    const text = String(error && error.message ? error.message : error);
    const failure = onlineFailure(error);
    // Online, a download that gave up: said, and the page offers to try again (runner.mjs).
    if (failure) post({ type: "failed", text: downloadFailedText(failure) });
    // Offline without Python stored: one sentence, not the first of Pyodide's fetch errors.
    else if (isNetworkError(text)) post({ type: "failed", text: PYTHON_NOT_STORED, offline: true });
    else post({ type: "failed", text });
    throw error;
  },
);

// A page's packages, loaded as soon as Python is up (its cells import them; boot.mjs says
// which): the wheels from the runtime's start on, then, once the runner is set up, the
// imports a figure cell would make, between cells.
/** @param {Pyodide} pyodide @param {string[]} names */
async function preload(pyodide, names) {
  // The download goes on in the page's bar (download_bar.mjs), progress every PROGRESS_MS.
  figuresStage = "loading";
  const progress = setInterval(reportDownloads, PROGRESS_MS);
  try {
    await preloadNow(pyodide, names);
    figuresStage = "loaded";
  } catch (error) {
    figuresStage = "failed";
    throw error;
  } finally {
    clearInterval(progress);
    reportDownloads();
  }
}

/** @param {Pyodide} pyodide @param {string[]} names */
async function preloadNow(pyodide, names) {
  await loadPackages(pyodide, names, "this page's figures");
  await ready;  // (the imports below are page_python.py's: its setup must be done)
  const prepare = pyodide.globals.get("load_what_it_imports");
  await prepare(names.map((name) => `import ${name}`).join("\n"));
  prepare.destroy();
  // Once: a returning visit's page asks for the preload twice (before the click and on it),
  // and the second came after the figure cell it was for had drawn.
  if (names.includes("matplotlib") && !drawn) {
    drawn = true;
    pyodide.runPython("figures.warm_up()"); // figures: page_python.py's backend module, set by prepare
    mark("first draw warmed up");
  }
}

// When the page is cross-origin isolated it shares two buffers with this worker:
// - Stop without a restart: the page sets the interrupt buffer to 2 (SIGINT), and Python
//   raises KeyboardInterrupt at its next bytecode check;
// - input(): Python blocks here (Atomics.wait) until the page writes the reader's answer into
//   the input buffer (its layout: input.mjs). Stop while waiting returns no answer, so
//   Python raises KeyboardInterrupt (the interrupt is consumed here, not raised twice).
/** @type {Int32Array | null} */
let sharedInterrupt = null;
const CELL_CODE_SLOT = 1;  // (of the interrupt buffer, runner.mjs reads it; the layout: messages.mjs, SharedBuffersMessage)
/** @type {SharedArrayBuffer | null} */
let sharedInput = null;
let cellCodeNow = 0;  // (the reader's code runs: CELL_CODE_SLOT's value, also said through the relay)
const WAIT_MS = 100;

// Both are called only once useSharedBuffers has set the buffers (page_python.py uses them
// only then): the casts say so.
/** @param {string} prompt @returns {string | null} */
function readInput(prompt) {
  flushStreams();
  const interruptBuffer = /** @type {Int32Array} */ (sharedInterrupt);
  const inputBuffer = /** @type {SharedArrayBuffer} */ (sharedInput);
  const flag = new Int32Array(inputBuffer, 0, 2);
  Atomics.store(flag, 0, 0);
  post({ type: "input", id: currentId, prompt });
  while (Atomics.wait(flag, 0, 0, WAIT_MS) === "timed-out") {
    if (Atomics.exchange(interruptBuffer, 0, 0) !== 0) return null;  // (read and cleared in one step)
  }
  // (TextDecoder reads no shared memory: the bytes are copied out first.)
  return new TextDecoder().decode(new Uint8Array(inputBuffer, 8, flag[1]).slice());
}

// time.sleep on an isolated page: the wait is Atomics.wait on the interrupt buffer, in slices,
// so Stop ends it at once (KeyboardInterrupt, Python kept) as it ends a loop; Pyodide's own
// sleep never looks at the buffer, so Stop gave up after 2 s and restarted Python.
const SLEEP_SLICE_MS = 50;
/** @param {number} seconds */
function sleepUnlessStopped(seconds) {
  const interruptBuffer = /** @type {Int32Array} */ (sharedInterrupt);
  const end = performance.now() + seconds * 1000;
  for (let left = end - performance.now(); left > 0; left = end - performance.now()) {
    Atomics.wait(interruptBuffer, 0, 0, Math.min(left, SLEEP_SLICE_MS));
    if (Atomics.exchange(interruptBuffer, 0, 0) !== 0) return true; // stopped: page_python.py raises KeyboardInterrupt
  }
  return false;
}

// Not isolated (a first visit's page): the interrupt through the book's service worker
// (stop_relay.mjs), when it answers. Set before any cell runs (cells wait for `ready` too).
/** @param {string} id */
function useStopRelay(id) {
  const relayed = relayedStop(relayUrl(STATIC, id), () => cellCodeNow);
  post({ type: "stop-relayed", ok: relayed !== null });
  if (!relayed) return;
  ready.then(({ pyodide }) => {
    pyodide.setInterruptBuffer(/** @type {any} */ (relayed.buffer));
    pyodide.registerJsModule("_browser_input", { sleep: relayed.sleep });  // (input() still needs isolation)
    pyodide.runPython("import time; time.sleep = page_sleep");
  });
}

/** @param {import("./messages.mjs").SharedBuffersMessage} buffers */
function useSharedBuffers({ interrupt, input }) {
  sharedInterrupt = interrupt;
  sharedInput = input;
  ready.then(({ pyodide }) => {
    // (Not the buffer itself: Pyodide's check would now and then wipe out a Stop, stop_relay.mjs.)
    pyodide.setInterruptBuffer(/** @type {any} */ (takenOnlyWhenRead(interrupt)));
    pyodide.registerJsModule("_browser_input", { read: readInput, sleep: sleepUnlessStopped });
    pyodide.runPython("import builtins, time; builtins.input = page_input; time.sleep = page_sleep");
  });
}

// Cells run one at a time, in the order they were sent, like a notebook kernel.
let queue = Promise.resolve();
/** @param {MessageEvent<import("./messages.mjs").ToWorker>} event */
self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "preload") {
    // Not queued: the packages load while cells run (a cell that imports them waits).
    runtimeUp.then((pyodide) => preload(pyodide, message.packages)).catch(() => {});
    return;
  }
  if (message.type === "figure-bytes") figureBytes = message.bytes;
  if (message.type === "shared-buffers") useSharedBuffers(message);
  if (message.type === "stop-relay") useStopRelay(message.id);
  // input() then says that a reload of the page makes it read what the reader types.
  if (message.type === "reload-isolates") ready.then(({ pyodide }) => pyodide.runPython("RELOAD_ISOLATES = True"));
  if (message.type !== "run") return;
  const { id, source, label } = message;
  queue = queue.then(async () => {
    const { runCell } = await ready;
    currentId = id;
    lastFlush = 0;  // (its first write goes at once: see FLUSH_MS)
    // Tracebacks name the cell as the reader sees it ("Cell In[3]", "your cell 1 (added)").
    const ok = await runCell(source, label || `cell ${id}`);
    flushStreams();
    post({ type: "done", id, ok });
    mark(`cell ${id} done`);
  }).catch((error) => {
    // What run_cell could not show under the cell itself: a Stop Python took as it entered
    // run_cell (its first bytecode check comes before its own `try`; the page had pressed Stop
    // as it sent the cell), or the runner's own failure. The status says "KeyboardInterrupt,
    // under the cell": it is there.
    flushStreams();
    const shown = error && error.type === "KeyboardInterrupt" ? "KeyboardInterrupt\n" : `${(error && error.message) || error}\n`;
    post({ type: "stream", id, name: "stderr", text: shown });
    post({ type: "done", id, ok: false });
  });
};
