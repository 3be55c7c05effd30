// How Python takes Stop's signal, on either kind of page.
//
// A cross-origin isolated page shares an interrupt buffer with the worker, and Pyodide's check
// takes the signal from it. That check is CPython's (_Py_CheckEmscriptenSignals_Helper, in
// pyodide.asm.js): it reads `buffer[0]`, then writes 0 whatever it read. A Stop the page stores
// between the read and the write is wiped out, never taken: the cell runs on, the page reads 0
// ("taken") and, the cell's code running, waits 10 s for it to unwind, then restarts Python.
// The check runs every 50 bytecode checks, so a running loop sits in that window often enough to
// lose a Stop now and then (tests/js/stop_signal.test.mjs runs the check itself against a
// buffer the way two threads meet it). `takenOnlyWhenRead` is the buffer Pyodide is given
// instead: its write of 0 clears only the signal its read returned.
//
// Stop that keeps Python on a page that is not cross-origin isolated: a first visit's page, loaded
// before the book's service worker existed, which has no SharedArrayBuffer to share an interrupt
// buffer with the worker. The service worker (offline_sw.js) holds the signal instead: the page
// posts it there, and Python's periodic interrupt check asks for it with a synchronous request
// (a worker may block; the service worker answers from memory). The page's side and the worker's
// side are both here, so the two halves of one small protocol are read together.
//
// Pyodide's check reads `buffer[0]` (then writes 0) every few dozen bytecode checks: a plain
// object's getter stands in for the Int32Array, and asks at most every POLL_MS, so a Stop is taken
// within about that time, and between two asks a check costs one clock read. The request
// carries whether the reader's code is running (page_python.py's cell_code), which the page reads
// back to tell a cell that took the Stop and unwinds from one that never took it (runner.mjs).
// time.sleep waits in the same request: the service worker answers when the Stop comes or the
// slice of the sleep is over, so a sleep takes no CPU and Stop ends it at once.
// Where no service worker answers (a host without it, the request not intercepted), the worker's
// first request says so and the page keeps today's Stop, which restarts Python.

/** @typedef {{signal: number, cellCode: number}} RelayedState */

export const POLL_MS = 100;
export const SLEEP_SLICE_MS = 1000;  // (the longest a request is held: the service worker's setTimeout)
// What the service worker answers, and the header that says it was the service worker.
export const RELAY_HEADER = "X-Browser-Run-Stop";
/** @param {URL | string} staticUrl the site's _static/ folder @param {string} id this worker's */
export const relayUrl = (staticUrl, id) => new URL(`runner/stop-relay?id=${encodeURIComponent(id)}`, staticUrl);

// ---------------------------------------------------------------------------
// The page's side (runner.mjs)
// ---------------------------------------------------------------------------

export class RelayedStop {
  /** @param {ServiceWorker} serviceWorker @param {string} id */
  constructor(serviceWorker, id) {
    this.serviceWorker = serviceWorker;
    this.id = id;
  }

  /** @param {number} signal 2 (SIGINT) to stop, 0 to take an untaken Stop back */
  send(signal) {
    this.serviceWorker.postMessage({ type: "stop-relay", id: this.id, signal });
  }

  /** What the service worker knows now: the signal not yet taken, and whether the reader's code
   * was running at Python's last check. @returns {Promise<RelayedState>} */
  read() {
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (event) => resolve(event.data);
      this.serviceWorker.postMessage({ type: "stop-relay-read", id: this.id }, [channel.port2]);
    });
  }
}

// ---------------------------------------------------------------------------
// The worker's side (worker.mjs)
// ---------------------------------------------------------------------------

const SIGNAL_SLOT = 0;  // (of the shared interrupt buffer; its layout: messages.mjs, SharedBuffersMessage)

/** An isolated page's shared interrupt buffer as Pyodide's check is to read it (see the module's
 * comment): `buffer[0]` reads the signal; the 0 written after it clears that signal only if it
 * is still there (compare-and-exchange), so a Stop stored since is taken at the next check.
 * @param {Int32Array} shared */
export function takenOnlyWhenRead(shared) {
  let read = 0;  // what the last read returned: the signal the next write of 0 may clear
  return {
    get 0() {
      read = Atomics.load(shared, SIGNAL_SLOT);
      return read;
    },
    set 0(value) {
      if (value !== 0) Atomics.store(shared, SIGNAL_SLOT, value);
      else if (read !== 0) Atomics.compareExchange(shared, SIGNAL_SLOT, read, 0);
      read = 0;
    },
  };
}

/** Stop through the service worker at `url`, or null when none answers there: `buffer`, an object
 * Pyodide's setInterruptBuffer accepts in place of an Int32Array, and `sleep(seconds)`, true when
 * a Stop ended it. `cellCode()` says whether the reader's code is running.
 * @param {URL} url @param {() => number} cellCode */
export function relayedStop(url, cellCode) {
  /** @returns {number | null} the signal, or null without an answer of the service worker's */
  const ask = (waitMs = 0) => {
    try {
      const request = new XMLHttpRequest();
      // (Synchronous: Python waits here; with waitMs, until the Stop or that long.)
      request.open("GET", `${url.href}&code=${cellCode()}&wait=${Math.round(waitMs)}`, false);
      request.send();
      return request.getResponseHeader(RELAY_HEADER) === "1" ? Number(request.responseText) || 0 : null;
    } catch (error) {
      return null;
    }
  };
  if (ask() === null) return null;
  let asked = performance.now();
  const buffer = {
    get 0() {
      const now = performance.now();
      if (now - asked < POLL_MS) return 0;
      asked = now;
      return ask() || 0;
    },
    set 0(_) {},  // (Pyodide writes 0 after reading: the service worker cleared it when it answered)
  };
  /** @param {number} seconds */
  const sleep = (seconds) => {
    const end = performance.now() + seconds * 1000;
    for (let left = end - performance.now(); left > 0; left = end - performance.now()) {
      const signal = ask(Math.min(left, SLEEP_SLICE_MS));
      if (signal) return true;  // stopped: page_python.py raises KeyboardInterrupt
      if (signal === null) while (performance.now() < end);  // (the service worker went: waited out here)
    }
    return false;
  };
  return { buffer, sleep };
}
