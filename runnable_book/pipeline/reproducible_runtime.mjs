// Imported first by the scripts that start Pyodide in Node to make files the site serves
// (python_snapshot.mjs, figure_bytecode.mjs), so the same inputs make the same bytes and an
// incremental build's site is a clean build's, byte for byte (runnable_book/pipeline/artefact_graph.py).
// What would otherwise differ from run to run: the clock (file times in the runtime's file
// system, the import system's cached directory times, the dates in a zip) and the random
// bytes Python draws at its start (its `random` module's state); Python's hash seed, which
// orders sets (matplotlib's font list), is fixed by the scripts (env PYTHONHASHSEED "0").
// The page reseeds `random` after restoring a snapshot (runner/page_python.py).
// And the runtime's program name, which Emscripten takes from the script's path
// (process.argv[1]) into the interpreter's memory: a checkout elsewhere would lay the memory
// out otherwise. The scripts read their own arguments from process.argv.slice(2), unchanged.
process.argv[1] = "pyodide";

export const FIXED_TIME_MS = 315532800000; // 1980-01-01, zip's first year (as the wheel's dates)
export const PYTHON_ENV = { PYTHONHASHSEED: "0" };

Date.now = () => FIXED_TIME_MS;
performance.now = () => 0;
let drawn = 0;
crypto.getRandomValues = (array) => {
  for (let i = 0; i < array.length; i++) array[i] = (drawn++ * 2654435761) & 0xff;
  return array;
};
