// What chapter_lib's chapters cost a page's Python, in Node's Pyodide (ours; `make bench-library`):
//
//   node runnable_book/bench/in_node/library_imports.mjs _build/static/pyodide/ _build/static/runner/chapter_lib.whl
//
// Python's snapshot holds the package and what its chapters import, not the chapters' modules
// (runnable_book/pipeline/snapshot_imports.mjs): a page imports the chapters it uses. Measured
// here, from the snapshot's imports: the milliseconds each chapter's module takes to import (what
// a page's first use of it costs, on this machine's Node), and the snapshot's gzipped bytes
// without the chapters' modules and with all of them (what each chapter imported into it would
// add to every reader's download). Numbers, not checks; quote them from a quiet machine.
import { PYTHON_ENV } from "../../pipeline/reproducible_runtime.mjs";  // (as the snapshot is made; it stops performance.now: hrtime times)
import { SNAPSHOT_IMPORTS } from "../../pipeline/snapshot_imports.mjs";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [served, wheel] = process.argv.slice(2);
if (!served || !wheel) {
  console.error("usage: node library_imports.mjs <served pyodide folder>/ <chapter_lib.whl>");
  process.exit(2);
}
const { loadPyodide } = /** @type {typeof import("../../../node_modules/pyodide/pyodide.mjs")} */ (
  await import(pathToFileURL(resolve(served, "pyodide.mjs")).href));

/** Python as the snapshot is made, with what SNAPSHOT_IMPORTS imports. */
async function started() {
  const pyodide = await loadPyodide({ indexURL: resolve(served) + "/", _makeSnapshot: true, env: PYTHON_ENV });
  pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel");
  pyodide.runPython(SNAPSHOT_IMPORTS);
  return pyodide;
}

/** @param {Awaited<ReturnType<typeof started>>} pyodide */
const gzippedSnapshot = (pyodide) => gzipSync(pyodide.makeMemorySnapshot(), { level: 9 }).length;

const without = gzippedSnapshot(await started());
const python = await started();
/** @type {string[]} */
const chapters = python.runPython(
  "import pathlib, chapter_lib; sorted(p.stem for p in pathlib.Path(chapter_lib.__file__).parent.glob('chapter*.py'))").toJs();
/** @type {Record<string, number>} */
const importMs = {};
for (const chapter of chapters) {
  const began = process.hrtime.bigint();
  python.runPython(`import chapter_lib.${chapter}`);
  importMs[chapter] = Number(process.hrtime.bigint() - began) / 1e6;
}
const withAll = gzippedSnapshot(python);
for (const [chapter, ms] of Object.entries(importMs)) console.log(`import chapter_lib.${chapter}: ${ms.toFixed(1)} ms`);
console.log(`snapshot, gzipped: ${without.toLocaleString("en")} bytes without the chapters' modules, ` +
  `${withAll.toLocaleString("en")} with all ${chapters.length} (${((withAll - without) / chapters.length / 1e3).toFixed(1)} KB a chapter)`);
console.log(JSON.stringify({ chapters: chapters.length, import_ms: importMs, snapshot_gzipped_bytes: { without, with_all: withAll } }));
