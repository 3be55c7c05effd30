// A cell's stream as a terminal would show it, drawn as JupyterLab draws it (ours): ANSI's
// SGR escape sequences (colours, bold, underline, inverse) become spans with JupyterLab's class
// names (`ansi-red-fg`, `ansi-green-intense-bg`, `ansi-bold`; 256 and 24-bit colours as inline
// styles; bold makes the 8 normal colours intense), other CSI sequences (cursor moves) and OSC
// sequences (titles, links) are dropped; a carriage return writes over its line and a
// backspace deletes the character before it, as JupyterLab's output area does. The colours
// themselves are runner.css's (JupyterLab's hues at WCAG AA contrast in light and dark mode).
//
// The text a cell wrote is kept as written (output.mjs: what the notebook download and the
// comparison with the stored notebook use); only what is drawn is read this way.

const COLORS = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];
// Colour n (0-15) as JupyterLab names it: 8-15 are the intense ones.
const colorName = (/** @type {number} */ n) => `ansi-${COLORS[n % 8]}${n >= 8 ? "-intense" : ""}`;

/** A colour: one of the 16 (0-15), an [r, g, b] triple, or null (the default).
 * @typedef {number | number[] | null} AnsiColor */
/** What the escape sequences so far have set: carried from one piece of a stream to the next.
 * @typedef {{fg: AnsiColor, bg: AnsiColor, bold: boolean, underline: boolean, inverse: boolean}} AnsiState */
/** A run of text in one style: its classes and inline style.
 * @typedef {{text: string, classes: string[], style: string}} AnsiRun */

/** @returns {AnsiState} */
export const initialState = () => ({ fg: null, bg: null, bold: false, underline: false, inverse: false });

// CSI (ESC [ parameters final-byte), as JupyterLab's ansiSpan matches it; OSC (ESC ] ... BEL or
// ESC \), which JupyterLab leaves as text and a terminal never shows.
// eslint-disable-next-line no-control-regex
const ESCAPE = /\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;
const LONGEST_SEQUENCE = 4096;  // (an OSC title or link; a CSI sequence is a few characters)
// An escape sequence not yet complete at the end of what has arrived (its rest comes later).
// eslint-disable-next-line no-control-regex
const UNFINISHED = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?$/;

/** How much of text can be drawn now: all of it but an escape sequence still arriving.
 * @param {string} text */
export function drawableLength(text) {
  // Only the end is read (no sequence is longer): a stream of 20 MB is not scanned each frame.
  const from = Math.max(0, text.length - LONGEST_SEQUENCE);
  const last = text.slice(from).lastIndexOf("\x1b");
  if (last < 0) return text.length;
  return UNFINISHED.test(text.slice(from + last)) ? from + last : text.length;
}

/** A 256-colour or 24-bit colour (after 38 or 48), taking its numbers from `numbers`; null
 * when they do not make one (JupyterLab then ignores the rest of the sequence).
 * @param {number[]} numbers @returns {AnsiColor | undefined} */
function extendedColor(numbers) {
  const kind = numbers.shift();
  if (kind === 2 && numbers.length >= 3) {
    const rgb = numbers.splice(0, 3);
    return rgb.every((c) => c >= 0 && c <= 255) ? rgb : undefined;
  }
  if (kind === 5 && numbers.length >= 1) {
    const index = /** @type {number} */ (numbers.shift());
    if (index < 16) return index;
    if (index < 232) {  // the 6x6x6 cube
      const level = (/** @type {number} */ n) => (n > 0 ? 55 + n * 40 : 0);
      const n = index - 16;
      return [level(Math.floor(n / 36)), level(Math.floor((n % 36) / 6)), level(n % 6)];
    }
    if (index < 256) {  // the greys
      const grey = (index - 232) * 10 + 8;
      return [grey, grey, grey];
    }
  }
  return undefined;
}

/** The state after one SGR sequence's parameters ("1;31", "" for a reset).
 * @param {AnsiState} state @param {string} parameters @returns {AnsiState} */
function applySgr(state, parameters) {
  const next = { ...state };
  const items = parameters.split(";");
  if (!items.every((item) => /^\d*$/.test(item))) return next;  // not a colour code: ignored
  const numbers = items.map((item) => (item === "" ? 0 : Number(item)));
  while (numbers.length) {
    const n = /** @type {number} */ (numbers.shift());
    if (n === 0) Object.assign(next, initialState());
    else if (n === 1 || n === 5) next.bold = true;
    else if (n === 4) next.underline = true;
    else if (n === 7) next.inverse = true;
    else if (n === 21 || n === 22) next.bold = false;
    else if (n === 24) next.underline = false;
    else if (n === 27) next.inverse = false;
    else if (n >= 30 && n <= 37) next.fg = n - 30;
    else if (n >= 90 && n <= 97) next.fg = n - 90 + 8;
    else if (n === 39) next.fg = null;
    else if (n >= 40 && n <= 47) next.bg = n - 40;
    else if (n >= 100 && n <= 107) next.bg = n - 100 + 8;
    else if (n === 49) next.bg = null;
    else if (n === 38 || n === 48) {
      const color = extendedColor(numbers);
      if (color === undefined) break;
      if (n === 38) next.fg = color;
      else next.bg = color;
    }
  }
  return next;
}

/** A run's classes and style, as JupyterLab's pushColoredChunk makes them.
 * @param {AnsiState} state @returns {{classes: string[], style: string}} */
function runStyle({ fg, bg, bold, underline, inverse }) {
  if (bold && typeof fg === "number" && fg < 8) fg += 8;  // bold text takes the intense colour
  if (inverse) [fg, bg] = [bg, fg];
  const classes = [];
  const styles = [];
  if (typeof fg === "number") classes.push(`${colorName(fg)}-fg`);
  else if (fg) styles.push(`color: rgb(${fg.join(", ")})`);
  else if (inverse) classes.push("ansi-default-inverse-fg");
  if (typeof bg === "number") classes.push(`${colorName(bg)}-bg`);
  else if (bg) styles.push(`background-color: rgb(${bg.join(", ")})`);
  else if (inverse) classes.push("ansi-default-inverse-bg");
  if (bold) classes.push("ansi-bold");
  if (underline) classes.push("ansi-underline");
  return { classes, style: styles.join("; ") };
}

/** The runs of text and their styles, and the state at the end (for the text that follows).
 * @param {string} text @param {AnsiState} [state] @returns {{runs: AnsiRun[], state: AnsiState}} */
export function ansiRuns(text, state = initialState()) {
  /** @type {AnsiRun[]} */
  const runs = [];
  const push = (/** @type {string} */ chunk) => {
    if (!chunk) return;
    const last = runs[runs.length - 1];
    const { classes, style } = runStyle(state);
    if (last && last.style === style && last.classes.join(" ") === classes.join(" ")) last.text += chunk;
    else runs.push({ text: chunk, classes, style });
  };
  if (!text.includes("\x1b")) {
    push(text);
    return { runs, state };
  }
  let start = 0;
  for (const match of text.matchAll(ESCAPE)) {
    push(text.slice(start, match.index));
    start = /** @type {number} */ (match.index) + match[0].length;
    if (match[2] === "m") state = applySgr(state, match[1]);
  }
  push(text.slice(start));
  return { runs, state };
}

/** Text as a terminal leaves it: a carriage return goes back to the start of its line and what
 * follows writes over it (a progress bar that redraws itself shows its last state); a backspace
 * deletes the character before it; "\r\n" is a newline. (JupyterLab's removeOverwrittenChars.)
 * @param {string} text */
export function overwrite(text) {
  if (!text.includes("\r") && !text.includes("\b")) return text;
  return text.replace(/\r+\n/g, "\n").split("\n").map((line) => {
    if (!line.includes("\r") && !line.includes("\b")) return line;
    /** @type {string[]} */
    const cells = [];
    let column = 0;
    for (const character of line) {
      if (character === "\r") column = 0;
      else if (character === "\b") {
        if (column > 0) cells.splice(--column, 1);
      } else cells[column++] = character;
    }
    return cells.join("");
  }).join("\n");
}

/** The DOM of drawn text: a text node for an unstyled run, a span for a styled one.
 * @param {string} text @param {AnsiState} [state] @returns {{nodes: Node[], state: AnsiState}} */
export function ansiNodes(text, state) {
  const { runs, state: after } = ansiRuns(overwrite(text), state);
  const nodes = runs.map(({ text: chunk, classes, style }) => {
    if (!classes.length && !style) return document.createTextNode(chunk);
    const span = document.createElement("span");
    if (classes.length) span.className = classes.join(" ");
    if (style) span.setAttribute("style", style);
    span.textContent = chunk;
    return span;
  });
  return { nodes, state: after };
}
