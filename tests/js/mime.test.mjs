// mime.mjs: which of a display bundle's MIME types the page draws (JupyterLab's order), and
// how text with LaTeX in it is split into text and math (MathJax's delimiters in JupyterLab).
import { test } from "node:test";
import assert from "node:assert/strict";
import { installBrowser } from "./browser_stub.mjs";

installBrowser();
const { MIME_ORDER, preferredMime, splitMath } = await import("../../runnable_book/sphinx_ext/runner/mime.mjs");

test("the bundle's type JupyterLab prefers: JSON, HTML, Markdown, LaTeX, SVG, images, then text", () => {
  const bundle = Object.fromEntries(MIME_ORDER.map((mime) => [mime, "x"]));
  for (const mime of MIME_ORDER) {
    assert.equal(preferredMime(bundle), mime);
    delete bundle[mime];
  }
  assert.equal(preferredMime(bundle), null);
  assert.equal(preferredMime({ "text/plain": "<A>", "text/html": "<b>A</b>" }), "text/html");
  assert.equal(preferredMime({ "text/plain": "<A>", "image/png": "iVBOR", "image/svg+xml": "<svg/>" }), "image/svg+xml");
});

test("a script is never the one drawn: a JavaScript value shows its text", () => {
  assert.equal(preferredMime({ "text/plain": "<Javascript>", "application/javascript": "alert(1)" }), "text/plain");
});

const pieces = (text, options) => splitMath(text, options).map((p) => (p.math ? [p.display ? "display" : "inline", p.text] : p.text));

test("inline and display math by MathJax's delimiters", () => {
  assert.deepEqual(pieces("a $x^2$ b"), ["a ", ["inline", "x^2"], " b"]);
  assert.deepEqual(pieces("$$\\int f$$ and \\(a\\) \\[b\\]"),
    [["display", "\\int f"], " and ", ["inline", "a"], " ", ["display", "b"]]);
  assert.deepEqual(pieces("\\begin{align}a&=b\\end{align} x"), [["display", "\\begin{align}a&=b\\end{align}"], " x"]);
});

test("dollars that are money are text", () => {
  assert.deepEqual(pieces("costs $5 and $10"), ["costs $5 and $10"]);
  assert.deepEqual(pieces("\\$5 and $z$"), ["\\$5 and ", ["inline", "z"]]);
});

test("in Markdown, code holds no math", () => {
  assert.deepEqual(pieces("`$a$` $b$", { markdown: true }), ["`$a$` ", ["inline", "b"]]);
  assert.deepEqual(pieces("```\n$x$\n```\n$y$", { markdown: true }), ["```\n$x$\n```\n", ["inline", "y"]]);
  assert.deepEqual(pieces("`$a$`"), ["`", ["inline", "a"], "`"]);  // (LaTeX alone: backticks are text)
});
