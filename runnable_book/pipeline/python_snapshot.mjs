// A memory snapshot of the page's Python, started, made at `make assets` (ours).
//
//   node runnable_book/pipeline/python_snapshot.mjs _build/static/pyodide/ _build/static/runner/chapter_lib.whl \
//     _build/static/runner/python-snapshot.bin.gz
//
// Pyodide's start in the page is mostly the interpreter initialising (importing its own
// packages, running their setup), not downloading or compiling. Here the same runtime files,
// in Node, start Python once, import what the page's runner and chapter_lib's chapters import, and save
// the interpreter's memory (Pyodide 0.27's experimental `_makeSnapshot`/`makeMemorySnapshot`).
// worker.mjs restores it with `_loadSnapshot` and, when the snapshot is missing or does not
// restore, starts Python as before. The snapshot holds no JavaScript object (the page's
// `_browser_run` module is registered after the restore), and files stay out of it: the
// worker unpacks chapter_lib's wheel again, so tracebacks can quote its lines.
//
// It is written gzipped (21 MB of memory, mostly empty, is about 5 MB): a server that would
// not compress an unknown file type (GitHub Pages) sends 5 MB, not 21; the worker inflates it.
//
// The same library makes the same bytes: reproducible_runtime.mjs, imported first.
import { PYTHON_ENV } from "./reproducible_runtime.mjs";
import { SNAPSHOT_IMPORTS } from "./snapshot_imports.mjs";
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [served, wheel, out] = process.argv.slice(2);
if (!served || !wheel || !out) {
  console.error("usage: node python_snapshot.mjs <served pyodide folder>/ <chapter_lib.whl> <snapshot file>");
  process.exit(2);
}
// Pyodide's own entry point, pyodide.mjs, as the book serves it (a copy of its npm package's):
// by path, since the bare name resolves to its CommonJS build, which fails to start under
// Node's ES modules; and from the book, not beside this script, which may be installed apart.
const { loadPyodide } = /** @type {typeof import("../../node_modules/pyodide/pyodide.mjs")} */ (
  await import(pathToFileURL(resolve(served, "pyodide.mjs")).href));
const pyodide = await loadPyodide({ indexURL: resolve(served) + "/", _makeSnapshot: true, env: PYTHON_ENV });
pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel"); // (a Uint8Array: Pyodide refuses a Buffer)
pyodide.runPython(SNAPSHOT_IMPORTS);  // (snapshot_imports.mjs says what and why)
const snapshot = pyodide.makeMemorySnapshot();
const gzipped = gzipSync(snapshot, { level: 9 });
writeFileSync(out, gzipped);
console.log(`Python's memory after its start, what chapter_lib uses imported (${(snapshot.length / 1e6).toFixed(1)} MB, ` +
  `${(gzipped.length / 1e6).toFixed(1)} MB gzipped) -> ${out}`);
