// Stop's signal on a cross-origin isolated page (runner/stop_relay.mjs, takenOnlyWhenRead): the
// page stores SIGINT in a buffer it shares with the worker while Python runs, and Pyodide's own
// check, called over and over by the running Python, takes it. That check is run here as Pyodide
// ships it (read out of node_modules/pyodide/pyodide.asm.js), in a thread of its own, against the
// buffer the worker gives Pyodide, while this thread stores Stops as the page does: each Stop is
// taken once, none is lost. (Against the bare shared buffer, as Pyodide was given it before, the
// same Stops are lost now and then: said in the test's diagnostics, not asserted, since how often
// depends on how the two threads meet. It was the cause of the Stop tests' rare "took the Stop
// but had not finished 10 s later": a Stop wiped out, the page reading 0 as "taken".)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";

const ASM = new URL("../../node_modules/pyodide/pyodide.asm.js", import.meta.url);
const STOP_RELAY = new URL("../../runnable_book/sphinx_ext/runner/stop_relay.mjs", import.meta.url);
const SIGINT = 2;
const STOPS = 1000;

// The check as Pyodide ships it: a function of `Module` (Module.Py_EmscriptenSignalBuffer).
function pyodidesCheck() {
  const found = /function _Py_CheckEmscriptenSignals_Helper\(\)\{.*?\}catch\(e\)\{return 0\}\}/s.exec(readFileSync(ASM, "utf8"));
  assert.ok(found, "Pyodide's signal check is no longer where this test reads it: read pyodide.asm.js again "
    + "(and whether stop_relay.mjs's takenOnlyWhenRead still matches how it reads and clears the buffer)");
  assert.match(found[0], /Py_EmscriptenSignalBuffer\[0\];Module\.Py_EmscriptenSignalBuffer\[0\]=0;/,
    "Pyodide's check no longer reads the buffer then writes 0: stop_relay.mjs's takenOnlyWhenRead is made for that");
  return found[0];
}

// The slots the two threads share: the buffer Pyodide is given (its slot 0 the signal), and the
// checking thread's counts: Stops taken, checks made, and a flag that ends it.
const [SIGNAL, TAKEN, CHECKS, DONE] = [0, 2, 3, 4];

// A thread that runs the check over and over, as a running Python does, on `mode`'s buffer.
/** @param {Int32Array} shared @param {"bare" | "takenOnlyWhenRead"} mode */
function checkingThread(shared, mode) {
  return new Worker(`
    const { workerData: { shared, mode, stopRelay } } = require("node:worker_threads");
    const Module = {};
    ${pyodidesCheck()}
    import(stopRelay).then(({ takenOnlyWhenRead }) => {
      Module.Py_EmscriptenSignalBuffer = mode === "bare" ? shared : takenOnlyWhenRead(shared);
      while (Atomics.load(shared, ${DONE}) === 0) {
        if (_Py_CheckEmscriptenSignals_Helper() === ${SIGINT}) Atomics.add(shared, ${TAKEN}, 1);
        Atomics.add(shared, ${CHECKS}, 1);
      }
    });
  `, { eval: true, workerData: { shared, mode, stopRelay: STOP_RELAY.href } });
}

// Spins until `done()` (the other thread is running: each wait is for its state, never a time).
/** @param {() => boolean} done */
function until(done) {
  while (!done());
}

// STOPS Stops, each stored as the page stores one, a moment after the last was settled. A Stop
// is settled when it was taken, or when the buffer is back at 0 and two whole checks have passed
// since without its being taken: lost. Returns how many were taken and lost.
/** @param {"bare" | "takenOnlyWhenRead"} mode */
async function stops(mode) {
  const shared = new Int32Array(new SharedArrayBuffer(8 * Int32Array.BYTES_PER_ELEMENT));
  const thread = checkingThread(shared, mode);
  try {
    until(() => Atomics.load(shared, CHECKS) > 0);
    let lost = 0;
    for (let stop = 0; stop < STOPS; stop += 1) {
      const taken = Atomics.load(shared, TAKEN);
      Atomics.store(shared, SIGNAL, SIGINT);
      until(() => Atomics.load(shared, TAKEN) > taken || Atomics.load(shared, SIGNAL) === 0);
      const checks = Atomics.load(shared, CHECKS);
      until(() => Atomics.load(shared, TAKEN) > taken || Atomics.load(shared, CHECKS) >= checks + 2);
      if (Atomics.load(shared, TAKEN) === taken) lost += 1;
      const checksNow = Atomics.load(shared, CHECKS);  // (the next Stop lands somewhere else in the check)
      until(() => Atomics.load(shared, CHECKS) >= checksNow + (stop % 7));
    }
    return { taken: Atomics.load(shared, TAKEN), lost };
  } finally {
    Atomics.store(shared, DONE, 1);
    await thread.terminate();
  }
}

test("every Stop stored while Pyodide's check runs is taken, once", async (t) => {
  const { taken, lost } = await stops("takenOnlyWhenRead");
  assert.deepEqual({ taken, lost }, { taken: STOPS, lost: 0 });
  const bare = await stops("bare");
  t.diagnostic(`the bare shared buffer, as Pyodide was given it before: ${bare.lost} of ${STOPS} Stops lost`);
});
