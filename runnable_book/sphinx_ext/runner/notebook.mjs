// "Download as notebook": the page as the reader has it, as an nbformat-4 .ipynb (ours).
//
// Built in the page from the reader's notebook the book serves beside the page (the
// header's ".ipynb" download, the notebook Binder and Colab open: its markdown converted
// for Jupyter and its first cell installing chapter_lib where it is missing). Each of the
// page's code cells is found in it by the book's code, in order; in the copy it gets the
// reader's code, and the outputs this page's Python gave it if it ran here (a cell
// edited but not run here gets none; the rest keep the book's stored outputs). Cells the
// reader added follow the cell they were added below. The result opens and runs in
// JupyterLab and Colab (tests/test_browser_work.py validates it with nbformat and runs it).

/** One of our outputs (cells.mjs's outputs()): a stream's (kind "stdout", "stderr", its text), a
 * displayed value's ("display", its display bundle and metadata) or a figure's ("image/png", its
 * text/plain as text, and its png).
 * @typedef {{kind: string, text?: string, data?: Record<string, any>, metadata?: Record<string, any>,
 *   png?: string | null}} Output */
/** One of the page's cells, in page order (work.mjs): the book's code (null for an added
 * cell), the reader's code, and its outputs (null when it has not run in this page's Python).
 * @typedef {{bookSource: string | null, source: string, outputs: Output[] | null}} PageCell */
/** An output as a Jupyter notebook stores it (the book's stored ones: any of nbformat's).
 * @typedef {{output_type: string, [key: string]: unknown}} JupyterOutput */
/** A notebook cell (nbformat 4), as far as this module reads and writes it.
 * @typedef {{cell_type: string, id?: string, metadata: {tags?: string[], [key: string]: unknown},
 *   source: string | string[], outputs?: JupyterOutput[], execution_count?: number | null}} NotebookCell */
/** An nbformat-4 notebook, as far as this module reads and writes it.
 * @typedef {{cells: NotebookCell[], metadata: {runnable_book?: object, [key: string]: unknown}}} Notebook */

const trimmed = (/** @type {string} */ text) => text.replace(/\n+$/, "");
const joined = (/** @type {string | string[]} */ source) => (Array.isArray(source) ? source.join("") : source);

// One of our outputs as a Jupyter output: a stream, or display data (a value's bundle as the
// page's Python made it; a figure's text/plain and PNG).
/** @param {Output} output @returns {JupyterOutput} */
function jupyterOutput({ kind, text, data, metadata, png }) {
  if (kind === "stdout" || kind === "stderr") return { output_type: "stream", name: kind, text };
  if (kind === "display") return { output_type: "display_data", data: data || {}, metadata: metadata || {} };
  /** @type {Record<string, string>} */
  const figure = { "text/plain": text || "" };
  if (png != null) figure["image/png"] = png;
  return { output_type: "display_data", data: figure, metadata: {} };
}

// page: [{bookSource (null for an added cell), source, outputs: [Output] | null}]
// in page order; outputs null when the cell has not run in this page's Python.
/** @param {Notebook} notebook the reader's notebook as the book serves it @param {PageCell[]} page
 * @returns {Notebook} */
export function readersNotebook(notebook, page) {
  const copy = structuredClone(notebook);
  const cells = copy.cells;
  /** @type {Map<number, NotebookCell[]>} */
  const after = new Map(); // index in cells -> added cells to insert after it
  let searchFrom = 0;
  let anchor = -1;
  let addedCount = 0;
  for (const cell of page) {
    if (cell.bookSource == null) {
      if (!after.has(anchor)) after.set(anchor, []);
      addedCount += 1;
      /** @type {NotebookCell[]} */ (after.get(anchor)).push({
        cell_type: "code", id: `added-in-browser-${addedCount}`, metadata: {}, execution_count: null,
        outputs: (cell.outputs || []).map(jupyterOutput), source: cell.source,
      });
      continue;
    }
    const at = cells.findIndex((c, i) => i >= searchFrom && c.cell_type === "code"
      && trimmed(joined(c.source)) === trimmed(/** @type {string} */ (cell.bookSource)));
    if (at < 0) throw new Error("a cell of this page is not in the book's notebook (was the book rebuilt? reload the page)");
    searchFrom = at + 1;
    anchor = at;
    const target = cells[at];
    const edited = trimmed(cell.source) !== trimmed(cell.bookSource);
    target.source = cell.source;
    if (cell.outputs) {
      target.outputs = cell.outputs.map(jupyterOutput);
      target.execution_count = null;
    } else if (edited) {
      target.outputs = [];
      target.execution_count = null;
    }
  }
  copy.cells = cells.flatMap((cell, i) => [cell, ...(after.get(i) || [])]);
  if (after.has(-1)) copy.cells.unshift(.../** @type {NotebookCell[]} */ (after.get(-1)));
  return copy;
}

/** @param {string} url @returns {Promise<Notebook>} */
export async function fetchNotebook(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

// The reader's exercise progress (progress.mjs) as a markdown cell after the install cell,
// and in the notebook's metadata, so it leaves the browser with the rest of their work.
/** @param {Notebook} notebook @param {import("./progress.mjs").ProgressEntry} progress @returns {Notebook} */
export function addProgress(notebook, { total, done }) {
  const words = { check: "its check passed", marked: "marked done" };
  const items = Object.keys(done).sort((a, b) => Number(a) - Number(b)).map((n) => `- Exercise ${n}: ${words[done[n]]}`);
  const text = `**Your progress** when you downloaded this notebook: ${items.length} of ${total} exercises done.` +
    (items.length ? `\n\n${items.join("\n")}` : "");
  const at = notebook.cells.findIndex((c) => (c.metadata.tags || []).includes("install")) + 1;
  notebook.cells.splice(at, 0, { cell_type: "markdown", id: "exercise-progress", metadata: { tags: ["progress"] }, source: text });
  notebook.metadata.runnable_book = { ...(notebook.metadata.runnable_book || {}), progress: { total, done } };
  return notebook;
}
