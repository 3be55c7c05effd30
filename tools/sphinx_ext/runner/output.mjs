// A cell's output, kept whole and shown bounded (ours).
//
// The output is a list of parts, in the order the cell wrote them: a stream run
// ({kind: "stdout" | "stderr", text}), a value ({kind: "text/plain", text, markdown}) or a
// figure ({kind: "image/png", text: its text/plain, png}, shown by figures.mjs).
// Everything is kept (the tests, "Show all", "Save" and the notebook download read it),
// but a stream longer than SHOWN_LINES shows its first HEAD_LINES and last TAIL_LINES
// with "… N lines not shown …" between them, and one with over-long lines its first and
// last few thousand characters ("… N characters not shown …"): a print loop of 200,000 lines made an output
// area 3.4 million pixels tall and every update of it slower than the last. The page
// redraws a cell's output at most once per animation frame, however fast output arrives.
import { button, el, saveFile } from "./dom.mjs";

const HEAD_LINES = 100;
const TAIL_LINES = 100;
const SHOWN_LINES = HEAD_LINES + TAIL_LINES + 50; // below this, all of it
// Characters too: one long line (a 5 MB print) wraps into tens of thousands of pixels, so
// what is shown of a stream, lines bounded or not, is at most its first HEAD_CHARS and last
// TAIL_CHARS characters (a screen or two at desktop width).
const HEAD_CHARS = 2_500;
const TAIL_CHARS = 2_500;
const SHOWN_CHARS = HEAD_CHARS + TAIL_CHARS + 1_000; // below this, all of it

/** A stream run or a value (drawn here); `shown`: the length of text last drawn.
 * @typedef {{kind: "stdout" | "stderr" | "text/plain", text: string, newlines: number, markdown: string | null,
 *   expanded: boolean, node: HTMLElement | null, shown?: number, fixed?: false, png?: undefined}} TextPart */
/** A figure (its element made by figures.mjs); `placed`: in the output area.
 * @typedef {{kind: "image/png", text: string, markdown: null, png: string, node: HTMLElement, fixed: true,
 *   placed?: boolean, expanded?: undefined, shown?: undefined}} FigurePart */
/** @typedef {TextPart | FigurePart} Part */
/** A text part whose element is made (render makes it before it draws).
 * @typedef {TextPart & {node: HTMLElement}} DrawnPart */

// Index just after the n-th newline from the start (or -1 if there are fewer).
/** @param {string} text @param {number} n */
function afterLines(text, n) {
  let at = -1;
  for (let i = 0; i < n; i++) {
    at = text.indexOf("\n", at + 1);
    if (at < 0) return -1;
  }
  return at + 1;
}

// Index where the last n lines begin (a trailing newline ends the last line).
/** @param {string} text @param {number} n */
function lastLinesStart(text, n) {
  let at = text.endsWith("\n") ? text.length - 1 : text.length;
  for (let i = 0; i < n; i++) {
    at = text.lastIndexOf("\n", at - 1);
    if (at < 0) return 0;
  }
  return at + 1;
}

/** @param {string} text */
function countLines(text, from = 0, to = text.length) {
  let count = 0;
  for (let at = text.indexOf("\n", from); at >= 0 && at < to; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

// {head, hidden, tail} when text is too long to show whole, else null: bounded by lines
// (first and last hundred), then by characters. `newlines` is the count of "\n" in text,
// kept as output arrives, so a redraw does not rescan the middle.
/** @param {string} text */
export function bound(text, newlines = countLines(text)) {
  let head = text;
  let tail = "";
  let hiddenLines = 0;
  const headEnd = afterLines(text, HEAD_LINES);
  if (headEnd > 0 && text.length > headEnd) {
    const tailStart = lastLinesStart(text, TAIL_LINES);
    if (tailStart > headEnd) {
      const hidden = newlines - HEAD_LINES - countLines(text, tailStart);
      if (hidden + HEAD_LINES + TAIL_LINES > SHOWN_LINES) {
        [head, tail, hiddenLines] = [text.slice(0, headEnd), text.slice(tailStart), hidden];
      }
    }
  }
  if (!hiddenLines && text.length <= SHOWN_CHARS) return null;
  const trimmed = !hiddenLines || head.length > HEAD_CHARS || tail.length > TAIL_CHARS;
  if (!hiddenLines) [head, tail] = [text.slice(0, HEAD_CHARS), text.slice(-TAIL_CHARS)];
  else [head, tail] = [head.slice(0, HEAD_CHARS), tail.slice(-TAIL_CHARS)];
  const lines = `${hiddenLines.toLocaleString("en")} lines`;
  const chars = `${(text.length - head.length - tail.length).toLocaleString("en")} characters`;
  return { head, hidden: !hiddenLines ? chars : trimmed ? `${lines} (${chars})` : lines, tail };
}

export class CellOutput {
  /** @param {HTMLElement} container @param {string} label */
  constructor(container, label) {
    this.container = container; // the cell's output area
    this.label = label; // "cell 3", for file names and buttons
    /** @type {Part[]} */
    this.parts = [];
    this.frame = null;
  }

  clear() {
    this.parts = [];
    cancelAnimationFrame(/** @type {number} */ (this.frame)); // (null: cancels nothing)
    this.frame = null;
    this.container.replaceChildren();
  }

  /** @param {TextPart["kind"]} kind @param {string} text @param {string | null} [markdown] */
  add(kind, text, markdown = null) {
    const last = this.parts[this.parts.length - 1];
    if ((kind === "stdout" || kind === "stderr") && last && last.kind === kind) {
      last.text += text;
      last.newlines += countLines(text);
    } else {
      this.parts.push({ kind, text, newlines: countLines(text), markdown, expanded: false, node: null });
    }
    if (this.frame == null) this.frame = requestAnimationFrame(() => this.render());
  }

  // A figure: its element (figures.mjs made it) goes where the cell's output is, in order.
  /** @param {string} plain @param {string} png @param {HTMLElement} node */
  addFigure(plain, png, node) {
    this.parts.push({ kind: "image/png", text: plain, markdown: null, png, node, fixed: true });
    if (this.frame == null) this.frame = requestAnimationFrame(() => this.render());
  }

  // [[kind, text]] as Jupyter stores them (a value's or a figure's text/plain): what the
  // tests compare with the stored notebook, as nbval does.
  list() {
    return this.parts.map((part) => [part.kind === "image/png" ? "text/plain" : part.kind, part.text]);
  }

  render() {
    this.frame = null;
    for (const part of this.parts) {
      if (part.fixed) {
        if (!part.placed) this.container.append(part.node);
        part.placed = true;
        continue;
      }
      if (!part.node) {
        part.node = el("div", { class: "browser-run-part", "data-kind": part.kind });
        this.container.append(part.node);
      }
      if (part.shown !== part.text.length || part.node.dataset.expanded !== String(part.expanded)) {
        this.draw(/** @type {DrawnPart} */ (part));
      }
    }
  }

  /** @param {DrawnPart} part */
  draw(part) {
    part.shown = part.text.length;
    part.node.dataset.expanded = String(part.expanded);
    /** @param {string} text */
    const pre = (text) => el("pre", { class: `browser-run-${part.kind.replace("/", "-")}` }, text);
    if (part.markdown != null) {
      // A Markdown value (the exercises' show_source): its text; a fenced block as code.
      part.node.replaceChildren(pre(part.markdown.replace(/^```\w*\n([\s\S]*?)\n?```\s*$/, "$1")));
      return;
    }
    const cut = part.expanded ? null : bound(part.text, part.newlines);
    if (!cut) {
      part.node.replaceChildren(pre(part.text));
      return;
    }
    const name = `${this.label.replace(/\s+/g, "-")}-${part.kind}.txt`;
    part.node.replaceChildren(
      pre(cut.head),
      el("div", { class: "browser-run-omitted" },
        el("span", {}, `… ${cut.hidden} not shown …`),
        button("Show all", () => { part.expanded = true; this.draw(part); },
          { label: `Show all of the output of ${this.label}` }),
        button("Save as text", () => saveFile(name, part.text),
          { label: `Save as text: the output of ${this.label}` })),
      pre(cut.tail),
    );
  }
}
