// The bare runtime's worker (benchmark only): loadPyodide from the book's own files, then
// 1 + 1. Posts when each step ended, splitting Pyodide's start into the fetches (resource
// timing), the WebAssembly compile (when instantiation resolved) and the interpreter's start.
import { loadPyodide } from "../_static/pyodide/pyodide.mjs";

const at = () => performance.timeOrigin + performance.now();
const mark = (step, when = at()) => self.postMessage({ type: "timing", step, at: when });
mark("worker: pyodide.mjs imported");

// Pyodide compiles and instantiates its .wasm with one of these two calls.
for (const name of ["instantiateStreaming", "instantiate"]) {
  const original = WebAssembly[name];
  WebAssembly[name] = (...args) => original.apply(WebAssembly, args).then((result) => {
    if (result && result.instance) mark("wasm compiled and instantiated");
    return result;
  });
}

const pyodide = await loadPyodide({ indexURL: new URL("../_static/pyodide/", import.meta.url).href });
mark("runtime started");
for (const entry of performance.getEntriesByType("resource")) {
  const file = entry.name.split("/").pop();
  if (/\.(wasm|zip|js|json)$/.test(file)) mark(`fetched ${file}`, performance.timeOrigin + entry.responseEnd);
}
const text = String(pyodide.runPython("1 + 1"));
mark("1 + 1 ran");
// ?matplotlib (slow_network.py's figure comparison): then Pyodide's own loadPackage of it.
if (new URL(import.meta.url).searchParams.has("matplotlib")) {
  await pyodide.loadPackage("matplotlib");
  mark("matplotlib loaded");
}
self.postMessage({ type: "result", text });
