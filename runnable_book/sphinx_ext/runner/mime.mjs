// A displayed value drawn as JupyterLab draws it (ours): of its display bundle (display.py
// makes it as IPython does), the MIME type JupyterLab prefers, drawn by the renderer JupyterLab
// uses for it. The reader's HTML, and the HTML Markdown makes, is sanitised (markup.mjs:
// DOMPurify, bundled from npm at `make assets`): no script, no event handler, no javascript:
// URL, no <style> that would restyle the book. SVG is drawn as an image, as JupyterLab draws it
// (an <img> runs no script and loads nothing). LaTeX, alone or in Markdown, becomes MathML
// (latex.mjs: temml), which browsers draw themselves. Both bundles load on the first output
// that needs them, never with the page.
import { ansiNodes } from "./ansi.mjs";

/** @typedef {import("./messages.mjs").DisplayData} DisplayData */

// JupyterLab's ranks (rendermime's standard factories, and the JSON viewer's rank 0), first
// preferred. JavaScript (rank 110) is left out: the page runs no script from an output, so
// such a value shows its text/plain.
export const MIME_ORDER = ["application/json", "text/html", "text/markdown", "text/latex", "image/svg+xml",
  "image/bmp", "image/png", "image/jpeg", "image/gif", "image/webp", "text/plain"];

/** The MIME type of a bundle to draw, or null when it has none the page draws.
 * @param {DisplayData} data */
export function preferredMime(data) {
  return MIME_ORDER.find((mime) => data[mime] != null) ?? null;
}

/** A piece of text with LaTeX in it: text, or math (display: on a line of its own).
 * @typedef {{math: boolean, text: string, display?: boolean}} MathPiece */

// The delimiters MathJax finds in JupyterLab: $$...$$, \[...\], \begin{env}...\end{env} (display),
// $...$ and \(...\) (inline; a $ followed by a space or closed after one is a dollar, as in
// "$5 and $10"). In Markdown, code (fenced blocks, `spans`) holds no math.
const MATH = String.raw`\$\$(?<dollars>[\s\S]+?)\$\$|\\\[(?<brackets>[\s\S]+?)\\\]` +
  String.raw`|(?<environment>\\begin\{(?<name>[a-zA-Z]+\*?)\}[\s\S]+?\\end\{\k<name>\})` +
  String.raw`|(?<![\\$])\$(?!\s)(?<dollar>(?:\\\$|[^$\n])+?)(?<!\s)\$(?!\d)|\\\((?<parens>[\s\S]+?)\\\)`;
const MATH_IN_TEXT = new RegExp(MATH, "g");
const MATH_IN_MARKDOWN = new RegExp(String.raw`(?<code>` + "```[\\s\\S]*?```|`[^`\\n]*`" + ")|" + MATH, "g");

/** Text split into text and math, in order (the math without its delimiters, but for an
 * environment, which is LaTeX itself). `markdown`: Markdown's code stays text.
 * @param {string} text @param {{markdown?: boolean}} [options] @returns {MathPiece[]} */
export function splitMath(text, { markdown = false } = {}) {
  /** @type {MathPiece[]} */
  const pieces = [];
  const pushText = (/** @type {string} */ piece) => {
    if (!piece) return;
    const last = pieces[pieces.length - 1];
    if (last && !last.math) last.text += piece;
    else pieces.push({ math: false, text: piece });
  };
  let start = 0;
  for (const match of text.matchAll(markdown ? MATH_IN_MARKDOWN : MATH_IN_TEXT)) {
    const found = /** @type {Record<string, string | undefined>} */ (match.groups);
    pushText(text.slice(start, match.index));
    start = /** @type {number} */ (match.index) + match[0].length;
    const display = found.dollars ?? found.brackets ?? found.environment;
    const inline = found.dollar ?? found.parens;
    if (found.code !== undefined) pushText(found.code);
    else if (display !== undefined) pieces.push({ math: true, text: display.trim(), display: true });
    else pieces.push({ math: true, text: /** @type {string} */ (inline).trim(), display: false });
  }
  pushText(text.slice(start));
  return pieces;
}

// Placeholders for math while Markdown is made HTML (private-use characters, which no reader
// types), as JupyterLab's removeMath and replaceMath do with "@@n@@".
const PLACEHOLDER = /\uE000(\d+)\uE001/g;

/** @type {Promise<typeof import("./markup.mjs")> | null} */
let markup = null;
/** @type {Promise<typeof import("./latex.mjs")> | null} */
let latex = null;
// Imported when an output first needs one (nothing fetches them before: a page whose outputs
// are plain text never downloads them). A failed import is tried again by the next output (the
// line may be back), and offline it says what is missing rather than the browser's words.
/** @param {unknown} error */
const plainly = (error) => (navigator.onLine ? error
  : new Error("its renderer is not stored for offline use yet: keep this book for offline use (the page's footer) while online"));
const loadMarkup = () => (markup ??= import("./markup.mjs").catch((error) => { markup = null; throw plainly(error); }));
const loadLatex = () => (latex ??= import("./latex.mjs").catch((error) => { latex = null; throw plainly(error); }));

/** Math as MathML (the browser draws it); a formula temml cannot read shows its source.
 * @param {MathPiece} piece */
async function mathElement(piece) {
  const { mathML } = await loadLatex();
  const holder = document.createElement(piece.display ? "div" : "span");
  holder.className = piece.display ? "browser-run-math-display" : "browser-run-math";
  holder.innerHTML = mathML(piece.text, Boolean(piece.display));  // (temml's own output, from text)
  return holder;
}

/** Text with LaTeX in it (text/latex), as MathJax typesets it in JupyterLab.
 * @param {string} source */
async function drawLatex(source) {
  const host = document.createElement("div");
  for (const piece of splitMath(source)) {
    host.append(piece.math ? await mathElement(piece) : piece.text);
  }
  return host;
}

/** Markdown as HTML (marked, as JupyterLab's), sanitised, with its math as MathML.
 * @param {string} source */
async function drawMarkdown(source) {
  const pieces = splitMath(source, { markdown: true });
  const maths = pieces.filter((piece) => piece.math);
  let index = 0;
  const text = pieces.map((piece) => (piece.math ? `\uE000${index++}\uE001` : piece.text)).join("");
  const { markdownHtml, sanitized } = await loadMarkup();
  const host = document.createElement("div");
  host.append(sanitized(markdownHtml(text)));
  if (maths.length) await replacePlaceholders(host, maths);
  return host;
}

/** Each placeholder in host's text, replaced by its formula.
 * @param {HTMLElement} host @param {MathPiece[]} maths */
async function replacePlaceholders(host, maths) {
  const walker = document.createTreeWalker(host, NodeFilter.SHOW_TEXT);
  /** @type {Text[]} */
  const texts = [];
  while (walker.nextNode()) texts.push(/** @type {Text} */ (walker.currentNode));
  for (const node of texts) {
    const value = /** @type {string} */ (node.nodeValue);
    if (!value.includes("\uE000")) continue;
    /** @type {(Node | string)[]} */
    const parts = [];
    let start = 0;
    for (const match of value.matchAll(PLACEHOLDER)) {
      parts.push(value.slice(start, match.index));
      const piece = maths[Number(match[1])];
      parts.push(piece ? await mathElement(piece) : match[0]);
      start = /** @type {number} */ (match.index) + match[0].length;
    }
    parts.push(value.slice(start));
    node.replaceWith(...parts);
  }
}

/** An image, as JupyterLab's renderImage draws it: its width and height from the bundle's
 * metadata; its alt text the metadata's, else one that says which cell showed it.
 * @param {string} src @param {Record<string, any>} metadata @param {string} label */
function image(src, metadata, label) {
  const img = document.createElement("img");
  img.className = "browser-run-image";
  img.src = src;
  if (typeof metadata.width === "number") img.width = metadata.width;
  if (typeof metadata.height === "number") img.height = metadata.height;
  img.alt = typeof metadata.alt === "string" && metadata.alt ? metadata.alt : `An image shown by ${label}`;
  return img;
}

/** An SVG document as an image (JupyterLab's renderSVG), its namespace added if missing.
 * @param {string} source */
function svgSource(source) {
  return /<svg[^>]+xmlns=[^>]+svg/.test(source) ? source : source.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"');
}

/** Plain text (and text/plain), its ANSI escape sequences drawn as styles.
 * @param {string} text @param {string} className */
export function textBlock(text, className) {
  const pre = document.createElement("pre");
  pre.className = className;
  pre.append(...ansiNodes(text).nodes);
  return pre;
}

/** The element that shows a display bundle: the MIME type JupyterLab prefers, drawn as it draws
 * it (data-mime says which). A renderer that cannot load (offline, its bundle not kept) leaves
 * the value's text/plain, and says why under it.
 * @param {DisplayData} data @param {Record<string, any>} metadata @param {string} label the cell's
 * @returns {Promise<HTMLElement>} */
export async function drawBundle(data, metadata, label) {
  const mime = preferredMime(data);
  const plain = () => textBlock(String(data["text/plain"] ?? ""), "browser-run-text-plain");
  let drawn;
  try {
    drawn = await drawMime(mime, data, metadata, label);
  } catch (error) {
    drawn = document.createElement("div");
    drawn.append(plain(), textBlock(`(${mime} could not be drawn here: ${/** @type {Error} */ (error).message})`,
      "browser-run-stderr"));
  }
  drawn.classList.add("browser-run-display");
  drawn.dataset.mime = mime ?? "none";
  return drawn;
}

/** @param {string | null} mime @param {DisplayData} data @param {Record<string, any>} metadata @param {string} label
 * @returns {Promise<HTMLElement>} */
async function drawMime(mime, data, metadata, label) {
  const value = mime ? data[mime] : "";
  const imageMetadata = (mime && metadata[mime]) || {};
  switch (mime) {
    case "application/json": {
      return textBlock(JSON.stringify(value, null, 2), "browser-run-json");
    }
    case "text/html": {
      const { sanitized } = await loadMarkup();
      const host = document.createElement("div");
      host.className = "browser-run-html";
      host.append(sanitized(String(value)));
      return host;
    }
    case "text/markdown": {
      const host = await drawMarkdown(String(value));
      host.className = "browser-run-markdown";
      return host;
    }
    case "text/latex": {
      const host = await drawLatex(String(value));
      host.className = "browser-run-latex";
      return host;
    }
    case "image/svg+xml": {
      const src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgSource(String(value)))}`;
      return holder(image(src, imageMetadata, label));
    }
    case null:
    case "text/plain":
      return textBlock(String(value), "browser-run-text-plain");
    default:  // an image's bytes, base64
      return holder(image(`data:${mime};base64,${String(value).replace(/\s/g, "")}`, imageMetadata, label));
  }
}

const holder = (/** @type {HTMLElement} */ child) => {
  const div = document.createElement("div");
  div.append(child);
  return div;
};
