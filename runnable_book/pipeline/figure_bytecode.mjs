// What the page's first figure would otherwise build: bytecode and matplotlib's font cache,
// made at `make assets` (ours).
//
//   node runnable_book/pipeline/figure_bytecode.mjs _build/static/pyodide/ runnable_book/sphinx_ext/runner/figures.py \
//     _build/static/runner/first-figure.zip
//
// Pyodide's wheels carry Python source only, so a page's first `import matplotlib.pyplot`
// compiles every module it reaches (matplotlib, numpy, PIL, pyparsing, …) before it can draw:
// seconds, each time a page loads matplotlib. Here the same runtime, in Node, loads the same
// served wheels, imports what the runner's figure backend (runner/figures.py) imports, draws
// and saves one figure (so the modules drawing reaches are imported too), and compiles each
// module it imported from site-packages into its __pycache__, as "unchecked hash" bytecode:
// Python then uses it without comparing it with the source's date, which unpacking in the page
// changes. worker.mjs unpacks the zip over site-packages after loading the wheels. Bytecode of
// another Python (its magic number) is ignored by Python, which compiles the source as before.
//
// The zip also carries matplotlib/fontlist.json, the font cache Pyodide's matplotlib reads from
// its own folder: the wheel's copy is of another matplotlib (version 390, where 3.8.4 expects
// 330), so without this one every page's first figure lists the fonts again (and says so in a
// warning). A cache that does not fit is rebuilt by matplotlib, as before.
//
// The zip carries matplotlib's property lists too (runner/artist_docs.py, in the page
// `_browser_artist_docs`): recorded while matplotlib is imported here, replayed in the page.
// Before the zip is written, a second Python imports matplotlib replaying them, and the build
// stops unless every docstring they end up in is the same as the recorded import's.
//
// The same runtime and wheels make the same bytes: reproducible_runtime.mjs, imported first.
import { PYTHON_ENV } from "./reproducible_runtime.mjs";
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [served, backend, artistDocs, out] = process.argv.slice(2);
if (!served || !backend || !artistDocs || !out) {
  console.error("usage: node figure_bytecode.mjs <served pyodide folder>/ <figures.py> <artist_docs.py> <output .zip>");
  process.exit(2);
}
// (Pyodide's entry point as the book serves it, by path: see python_snapshot.mjs.)
const { loadPyodide } = /** @type {typeof import("../../node_modules/pyodide/pyodide.mjs")} */ (
  await import(pathToFileURL(resolve(served, "pyodide.mjs")).href));
const indexURL = resolve(served) + "/";
/** A Python with matplotlib's wheels unpacked, the backend in /tmp, artist_docs.py in site-packages. */
async function pythonWithMatplotlib() {
  // packageCacheDir: the wheels come from the served folder, never from Pyodide's CDN.
  const python = await loadPyodide({ indexURL, packageCacheDir: indexURL, env: PYTHON_ENV });
  await python.loadPackage("matplotlib", { messageCallback: () => {} });
  python.FS.writeFile("/tmp/_browser_figures.py", readFileSync(backend, "utf8"));
  const sitePackages = python.runPython("import site; site.getsitepackages()[0]");
  python.FS.writeFile(`${sitePackages}/_browser_artist_docs.py`, readFileSync(artistDocs, "utf8"));
  return python;
}
// The imports of the page's figure backend (page_python.py's load_what_it_imports).
const IMPORTS = `
import logging, sys
logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
sys.path.insert(0, "/tmp")
import matplotlib
matplotlib.use("module://_browser_figures")
import matplotlib.font_manager, matplotlib.pyplot as plt
import _browser_figures
`;
const pyodide = await pythonWithMatplotlib();
const recorded = pyodide.runPython(`
import json
import _browser_artist_docs
calls = _browser_artist_docs.record()
${IMPORTS}
recording = json.dumps(calls, sort_keys=True)  # (before drawing: only what the imports made)
json.dumps(_browser_artist_docs.documentation(), sort_keys=True)
`);
const summary = pyodide.runPython(`
import importlib.util, io, os, py_compile, site, zipfile
figure, axes = plt.subplots()
axes.bar(["a", "b"], [1, 2], label="bars")
axes.plot([0, 1], [1, 2], marker="o")
axes.set_title("title"); axes.legend(); axes.grid(True)
_browser_figures.png(figure)

site_packages = site.getsitepackages()[0]
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
    for module in sorted(sys.modules.values(), key=lambda m: getattr(m, "__name__", "")):
        source = getattr(module, "__file__", None) or ""
        if not (source.startswith(site_packages + "/") and source.endswith(".py")):
            continue
        compiled = importlib.util.cache_from_source(source)
        py_compile.compile(source, cfile=compiled, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        archive.write(compiled, os.path.relpath(compiled, site_packages))
    # Written by the import above (font_manager.json_dump), for this matplotlib.
    font_cache = os.path.join(os.path.dirname(matplotlib.__file__), "fontlist.json")
    archive.write(font_cache, os.path.relpath(font_cache, site_packages))
    # The property lists' module beside its bytecode (Python imports bytecode from __pycache__
    # only beside its source), and what it recorded.
    archive.write(_browser_artist_docs.__file__, os.path.relpath(_browser_artist_docs.__file__, site_packages))
    archive.writestr(_browser_artist_docs.RECORDING, recording)
with open("/tmp/figure-bytecode.zip", "wb") as file:
    file.write(buffer.getvalue())
f"{len(archive.namelist()) - 1} modules' bytecode, the font cache"
`);
const zip = pyodide.FS.readFile("/tmp/figure-bytecode.zip");

// The replay, checked: a second Python, the zip unpacked as the page unpacks it.
const replaying = await pythonWithMatplotlib();
replaying.unpackArchive(zip, "zip", { extractDir: replaying.runPython("import site; site.getsitepackages()[0]") });
const replayed = replaying.runPython(`
import json
import _browser_artist_docs
assert _browser_artist_docs.replay_recorded(), "no recording in the zip"
${IMPORTS}
json.dumps(_browser_artist_docs.documentation(), sort_keys=True)
`);
if (replayed !== recorded) {
  const [want, got] = [JSON.parse(recorded), JSON.parse(replayed)];
  const differ = Object.keys({ ...want, ...got }).filter((key) => want[key] !== got[key]);
  console.error(`figure_bytecode.mjs: matplotlib's docstrings differ when its property lists are replayed ` +
    `(runner/artist_docs.py), in ${differ.length}: ${differ.slice(0, 5).join(", ")}; nothing written to ${out}`);
  process.exit(1);
}
writeFileSync(out, zip);
console.log(`the first figure's imports (${summary}) -> ${out}`);
