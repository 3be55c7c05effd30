// The entry point of the bundle that draws a cell's HTML and Markdown (ours): esbuild bundles
// it with DOMPurify and marked (npm) into _build/static/runner/markup.mjs at `make assets`, and
// mime.mjs imports it on the first such output (never with the page). HTML from a cell is
// sanitised here, in the page, before it reaches the document.
import DOMPurify from "dompurify";
import { marked } from "marked";

const purify = DOMPurify(window);
// What JupyterLab's renderHTML does after sanitising (handleDefaults): a link leaves the book in
// a new tab, without the book as its opener; an image without alt text says it is one.
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href") && !/^#/.test(node.getAttribute("href") || "")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
  if (node.tagName === "IMG" && !node.getAttribute("alt")) node.setAttribute("alt", "Image");
  // Ours: a form in an output never sends what a reader types to another host. DOMPurify keeps
  // a <form>'s http(s) action (and drops formaction only as an attribute it does not list): an
  // action or formaction off the book's own origin is removed (the form then submits to the
  // page itself, which ignores it).
  for (const name of ["action", "formaction"]) {
    const value = node.getAttribute(name);
    if (value !== null && !sameOrigin(value)) node.removeAttribute(name);
  }
});

/** @param {string} url @returns {boolean} whether url, read against the page, is on the book's origin */
function sameOrigin(url) {
  try {
    return new URL(url, document.baseURI).origin === location.origin;
  } catch {
    return false;  // not a URL a browser would follow: nothing to keep
  }
}

// DOMPurify's defaults (HTML, SVG and MathML; no script, no event handler, no javascript: or
// other unsafe URL, no <iframe>, <object> or <embed>), and: no <style> element, whose rules
// would apply to the whole book, not the output; ids and names prefixed ("user-content-"), so
// an output never takes the name of one of the page's own elements.
const CONFIG = { FORBID_TAGS: ["style"], SANITIZE_NAMED_PROPS: true, ADD_ATTR: ["target"], RETURN_DOM_FRAGMENT: true };

/** HTML, sanitised, as nodes to insert.
 * @param {string} html @returns {DocumentFragment} */
export function sanitized(html) {
  return /** @type {DocumentFragment} */ (/** @type {unknown} */ (purify.sanitize(html, CONFIG)));
}

/** Markdown as HTML (GitHub-flavoured, as JupyterLab's marked renders it); not yet sanitised.
 * @param {string} text @returns {string} */
export function markdownHtml(text) {
  return /** @type {string} */ (marked.parse(text, { async: false, gfm: true }));
}
