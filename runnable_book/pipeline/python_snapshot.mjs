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
// What the runner's page_python.py and display.py and a first cell import; chapter_lib last
// (it is what cells use). Each one left out is compiled from source in the page on every start
// (Pyodide's standard library is sources): json and base64 were most of the runner's setup.
// Of chapter_lib, the package and what its chapters' modules import (dataclasses, about 80 ms
// of a busy machine's start), not the chapters' modules themselves: a page imports the
// chapters its cells use, when they use them (chapter_lib/__init__.py), and the snapshot every
// reader downloads stays the same size as chapters are added (each one imported here was 30 KB
// more of it, gzipped).
pyodide.runPython(`
import __future__, base64, builtins, importlib.util, json, linecache, random, re, sys, time, traceback, types, asyncio, logging
from pyodide.code import CodeRunner, find_imports
from pyodide.ffi import JsException
import chapter_lib

def _what_the_chapters_import():
    import pathlib
    for module in sorted(pathlib.Path(chapter_lib.__file__).parent.glob("chapter*.py")):
        for name in find_imports(module.read_text()):
            # (a package of Pyodide's not loaded yet, numpy say, is loaded on a cell's first use)
            if name != "chapter_lib" and importlib.util.find_spec(name) is not None:
                importlib.import_module(name)

_what_the_chapters_import()
del _what_the_chapters_import
`);
const snapshot = pyodide.makeMemorySnapshot();
const gzipped = gzipSync(snapshot, { level: 9 });
writeFileSync(out, gzipped);
console.log(`Python's memory after its start, what chapter_lib uses imported (${(snapshot.length / 1e6).toFixed(1)} MB, ` +
  `${(gzipped.length / 1e6).toFixed(1)} MB gzipped) -> ${out}`);
