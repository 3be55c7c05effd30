// A cell's output, kept whole and shown bounded (ours).
//
// The output is a list of parts, in the order the cell wrote them: a stream run
// ({kind: "stdout" | "stderr", text}), a displayed value ({kind: "display", data, metadata}: its
// display bundle, drawn by mime.mjs as JupyterLab draws it) or a figure ({kind: "image/png",
// text: its text/plain, png}, shown by figures.mjs).
// Everything is kept (the tests, "Show all", "Save" and the notebook download read it),
// but a stream longer than SHOWN_LINES shows its first HEAD_LINES and last TAIL_LINES
// with "… N lines not shown …" between them, and one with over-long lines its first and
// last few thousand characters ("… N characters not shown …"): a print loop of 200,000 lines made an output
// area 3.4 million pixels tall and every update of it slower than the last. The page
// redraws a cell's output at most once per animation frame, however fast output arrives.
// A stream is drawn as a terminal shows it (ansi.mjs: colours, carriage returns), and a short
// one grows by what arrived, so a screen reader (the output area is a polite live region) hears
// each new line once; a bounded one, redrawn whole, is not read out as it changes.
//
// "Show all" of a long stream (20 MB, say) draws it in a box that scrolls, a piece at a time, a
// few milliseconds of work a frame (DRAW_BUDGET_MS), each piece a <pre> of at most PIECE_CHARS
// that the browser lays out only when it comes into view (CSS content-visibility): drawn whole at
// once, 20 MB held the page for about 21 s.
import { drawableLength, initialState, ansiNodes } from "./ansi.mjs";
import { button, el, saveFile } from "./dom.mjs";
import { drawBundle, textBlock } from "./mime.mjs";

const HEAD_LINES = 100;
const TAIL_LINES = 100;
const SHOWN_LINES = HEAD_LINES + TAIL_LINES + 50; // below this, all of it
// Characters too: one long line (a 5 MB print) wraps into tens of thousands of pixels, so
// what is shown of a stream, lines bounded or not, is at most its first HEAD_CHARS and last
// TAIL_CHARS characters (a screen or two at desktop width).
const HEAD_CHARS = 2_500;
const TAIL_CHARS = 2_500;
const SHOWN_CHARS = HEAD_CHARS + TAIL_CHARS + 1_000; // below this, all of it
// "Show all": pieces of at most this many characters (cut after a newline where there is one),
// as many a frame as this many milliseconds allow.
export const PIECE_CHARS = 32_768;
const DRAW_BUDGET_MS = 4;
// The tallest "Show all" box (its content scrolls inside it).
const SHOW_ALL_HEIGHT = "70vh";
// A piece's height before it is laid out (content-visibility's placeholder): its lines, and one
// more per this many characters, at the output's line height.
const WRAP_GUESS_CHARS = 100;

/** A stream run. `shown`: the length of text drawn for it; `drawnUpTo`, `ansi`: how far a
 * short one is drawn, and the ANSI state there (the next text is appended); `all`: "Show all"'s
 * drawing, piece by piece.
 * @typedef {{kind: "stdout" | "stderr", text: string, newlines: number, expanded: boolean,
 *   node: HTMLElement | null, shown?: number, drawnUpTo?: number, ansi?: import("./ansi.mjs").AnsiState,
 *   pre?: HTMLElement | null, all?: ShowAll | null}} StreamPart */
/** "Show all" of one stream: where its pieces go, how far they reach, the ANSI state there.
 * @typedef {{holder: HTMLElement, offset: number, ansi: import("./ansi.mjs").AnsiState, frame: number | null}} ShowAll */
/** A displayed value: its bundle ({mime: data}) and metadata, as a notebook stores them.
 * @typedef {{kind: "display", data: import("./messages.mjs").DisplayData, metadata: Record<string, any>,
 *   node: HTMLElement | null, text?: undefined, png?: undefined}} DisplayPart */
/** A figure (its element made by figures.mjs); `placed`: in the output area.
 * @typedef {{kind: "image/png", text: string, png: string, node: HTMLElement, placed?: boolean}} FigurePart */
/** @typedef {StreamPart | DisplayPart | FigurePart} Part */
/** A stream part whose element is made (render makes it before it draws).
 * @typedef {StreamPart & {node: HTMLElement}} DrawnPart */

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
    /** @type {number | null} the animation frame a redraw waits for */
    this.frame = null;
    this.pending = 0; // displayed values still being drawn (their renderer loading)
  }

  // Everything the cell showed is drawn (the tests wait for it; "Show all" goes on after).
  get drawn() {
    return this.frame == null && this.pending === 0;
  }

  clear() {
    for (const part of this.parts) if ("all" in part && part.all?.frame != null) cancelAnimationFrame(part.all.frame);
    this.parts = [];
    cancelAnimationFrame(/** @type {number} */ (this.frame)); // (null: cancels nothing)
    this.frame = null;
    this.container.replaceChildren();
  }

  /** A stream's text: joined to the stream's last run when it wrote last.
   * @param {"stdout" | "stderr"} kind @param {string} text */
  add(kind, text) {
    const last = this.parts[this.parts.length - 1];
    if (last && last.kind === kind) {
      last.text += text;
      last.newlines += countLines(text);
    } else {
      this.parts.push({ kind, text, newlines: countLines(text), expanded: false, node: null });
    }
    this.redraw();
  }

  /** A displayed value: its display bundle and metadata (display.py).
   * @param {import("./messages.mjs").DisplayData} data @param {Record<string, any>} metadata */
  addDisplay(data, metadata) {
    this.parts.push({ kind: "display", data, metadata, node: null });
    this.redraw();
  }

  // A figure: its element (figures.mjs made it) goes where the cell's output is, in order.
  /** @param {string} plain @param {string} png @param {HTMLElement} node */
  addFigure(plain, png, node) {
    this.parts.push({ kind: "image/png", text: plain, png, node });
    this.redraw();
  }

  redraw() {
    if (this.frame == null) this.frame = requestAnimationFrame(() => this.render());
  }

  // [[kind, text]] as nbval compares them: stream text, and a value's or a figure's text/plain
  // (what the tests compare with the stored notebook).
  list() {
    /** @type {[string, string][]} */
    const listed = [];
    for (const part of this.parts) {
      if (part.kind === "display") {
        if (typeof part.data["text/plain"] === "string") listed.push(["text/plain", part.data["text/plain"]]);
      } else listed.push([part.kind === "image/png" ? "text/plain" : part.kind, part.text]);
    }
    return listed;
  }

  render() {
    this.frame = null;
    for (const part of this.parts) {
      if (part.kind === "image/png") {
        if (!part.placed) this.container.append(part.node);
        part.placed = true;
      } else if (part.kind === "display") {
        if (!part.node) this.drawDisplay(part);
      } else {
        if (!part.node) {
          part.node = el("div", { class: "browser-run-part", "data-kind": part.kind });
          this.container.append(part.node);
        }
        if (part.shown !== part.text.length || part.node.dataset.expanded !== String(part.expanded)) {
          this.draw(/** @type {DrawnPart} */ (part));
        }
      }
    }
  }

  /** @param {DisplayPart} part */
  drawDisplay(part) {
    const node = part.node = el("div", { class: "browser-run-part", "data-kind": "display" });
    this.container.append(node);
    this.pending += 1;
    drawBundle(part.data, part.metadata, this.label).then((drawn) => {
      if (this.parts.includes(part)) node.replaceChildren(drawn);
    }).finally(() => { this.pending -= 1; });
  }

  /** @param {DrawnPart} part */
  draw(part) {
    const expandedBefore = part.node.dataset.expanded === "true";
    part.shown = part.text.length;
    part.node.dataset.expanded = String(part.expanded);
    if (part.expanded) {
      this.drawAll(part, !expandedBefore);
      return;
    }
    const cut = bound(part.text, part.newlines);
    if (!cut) {
      this.drawWhole(part);
      return;
    }
    // Redrawn whole as it grows: not read out (the live region would read it again each frame).
    part.node.setAttribute("aria-live", "off");
    part.pre = null;
    const name = `${this.label.replace(/\s+/g, "-")}-${part.kind}.txt`;
    part.node.replaceChildren(
      textBlock(cut.head, this.className(part)),
      el("div", { class: "browser-run-omitted" },
        el("span", {}, `… ${cut.hidden} not shown …`),
        button("Show all", () => { part.expanded = true; this.draw(part); },
          { label: `Show all of the output of ${this.label}` }),
        button("Save as text", () => saveFile(name, part.text),
          { label: `Save as text: the output of ${this.label}` })),
      textBlock(cut.tail, this.className(part)),
    );
  }

  /** @param {StreamPart} part */
  className(part) {
    return `browser-run-${part.kind}`;
  }

  // A short stream, whole: what arrived since it was last drawn is appended (the ANSI state
  // carried over), unless it writes over what is drawn (a carriage return, a backspace).
  /** @param {DrawnPart} part */
  drawWhole(part) {
    const upTo = drawableLength(part.text);
    const from = part.drawnUpTo ?? 0;
    const added = part.text.slice(from, upTo);
    if (part.pre && from <= upTo && !/[\r\b]/.test(added)) {
      const { nodes, state } = ansiNodes(added, part.ansi);
      part.pre.append(...nodes);
      part.ansi = state;
    } else {
      const pre = part.pre = el("pre", { class: this.className(part) });
      const { nodes, state } = ansiNodes(part.text.slice(0, upTo));
      pre.append(...nodes);
      part.ansi = state;
      part.node.replaceChildren(pre);
    }
    part.drawnUpTo = upTo;
  }

  // "Show all": the stream in a box of its own (SHOW_ALL_HEIGHT tall at most, scrolled by
  // keyboard too), drawn a piece at a time, a few milliseconds a frame, each piece laid out only
  // when in view; it goes on as more arrives. The box's height is set from the text (its lines,
  // guessed) and its layout contained (CSS contain: strict): were it to grow as it fills, each
  // frame would lay out the whole page below it again (the editors of every later cell), about
  // 50 ms a frame. The focus, on the "Show all" just replaced, moves to the box.
  /** @param {DrawnPart} part @param {boolean} starting */
  drawAll(part, starting) {
    if (starting || !part.all) {
      const holder = el("div", { class: "browser-run-all", tabindex: "0", role: "region",
        "aria-label": `All of the output of ${this.label}` });
      holder.style.height = `min(${SHOW_ALL_HEIGHT}, ${estimatedLines(part.text)}lh)`;
      part.node.setAttribute("aria-live", "off");
      part.node.replaceChildren(holder);
      part.pre = null;
      part.all = { holder, offset: 0, ansi: initialState(), frame: null };
      holder.focus({ preventScroll: true });
    }
    const all = part.all;
    const step = () => {
      all.frame = null;
      const deadline = performance.now() + DRAW_BUDGET_MS;
      const upTo = drawableLength(part.text);
      while (all.offset < upTo && performance.now() < deadline) {
        const end = pieceEnd(part.text, all.offset, upTo);
        const piece = part.text.slice(all.offset, end);
        const { nodes, state } = ansiNodes(piece, all.ansi);
        const pre = el("pre", { class: `${this.className(part)} browser-run-piece` });
        pre.style.containIntrinsicBlockSize = `auto ${estimatedLines(piece)}lh`;
        pre.append(...nodes);
        all.holder.append(pre);
        all.ansi = state;
        all.offset = end;
      }
      if (all.offset < upTo) all.frame = requestAnimationFrame(step);
      else all.holder.style.height = `min(${SHOW_ALL_HEIGHT}, ${estimatedLines(part.text)}lh)`;  // (more may have come)
    };
    if (all.frame == null) step();
  }
}

/** Where the piece of text starting at `from` ends: at most PIECE_CHARS on, after the last
 * newline before that if there is one, never inside an escape sequence or a character's two
 * halves (UTF-16), and at `to` at most.
 * @param {string} text @param {number} from @param {number} to @param {number} [size] */
export function pieceEnd(text, from, to, size = PIECE_CHARS) {
  if (to - from <= size) return to;
  let end = from + size;
  const newline = text.lastIndexOf("\n", end - 1);
  if (newline >= from) return newline + 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;  // a high surrogate: its pair goes with it
  return from + drawableLength(text.slice(from, end));
}

/** The lines a piece takes before it is laid out (a guess: wrapped lines count too).
 * @param {string} piece */
function estimatedLines(piece) {
  return countLines(piece) + Math.ceil(piece.length / WRAP_GUESS_CHARS);
}
