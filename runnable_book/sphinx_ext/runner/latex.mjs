// The entry point of the bundle that draws a cell's LaTeX (ours): esbuild bundles it with temml
// (npm) into _build/static/runner/latex.mjs at `make assets`, and mime.mjs imports it on the
// first output with math in it. temml writes MathML, which the browser draws itself (no fonts
// or script to load), where JupyterLab typesets with MathJax.
import temml from "temml";

/** A formula as MathML markup; one temml cannot read is shown as its source, in the error colour.
 * `\href` and other commands that could make a link or load a file are refused (trust: false).
 * @param {string} tex @param {boolean} display @returns {string} */
export function mathML(tex, display) {
  return temml.renderToString(tex, { displayMode: display, throwOnError: false, trust: false });
}
