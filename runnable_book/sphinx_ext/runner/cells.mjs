// One cell of the page as the runner shows it (ours): its editor, its bar of controls,
// its keyboard hint and its output. A book cell is myst-nb's div.cell, turned into an
// editor in place; a cell the reader adds is a new div.cell below the cell it was added to.
// What the controls do is the runner's (runner.mjs passes `actions`).
import { createEditor } from "./editor.mjs";
import { CellOutput } from "./output.mjs";
import { button, el } from "./dom.mjs";
import { restoreFigures } from "./figures.mjs";
import { guardEditor } from "./keys.mjs";

const HINT = "Tab indents; Shift+Enter runs the cell; to leave the editor press Escape, then Tab.";
const HINT_LEAVING = "Tab now leaves the editor (Shift+Tab goes back); any other key returns to editing.";
const STATE_WORDS = {
  idle: "", queued: "queued", running: "running…", done: "ran", error: "error", stopped: "stopped",
  stale: "not run in this Python (restarted)",
};

/** @typedef {import("./messages.mjs").CellId} CellId */
/** A cell's run state, as its element's data-run-state says it. @typedef {keyof typeof STATE_WORDS} RunState */
/** Why a cell is not run as a prerequisite (runner.mjs). @typedef {"was stopped" | "raised an error"} SkipReason */
/** One choice of an offer: [text, accessible name, action]. @typedef {[string, string, () => void]} Choice */
/** @typedef {{region: string, text: string[], summary: string, other: string, keep: Choice, take: Choice}} Offer */
/** What the cell's controls do (the runner's).
 * @typedef {{run: (cell: Cell) => void, add: (cell: Cell) => unknown, remove: (cell: Cell) => void,
 *   reset: (cell: Cell) => void, changed: (cell: Cell) => void}} CellActions */

export class Cell {
  // div: the cell's element; id: unique on the page (book cells: their number);
  // bookSource: the book's code (null for an added cell); actions: {run, add, remove,
  // reset, changed} from the runner.
  /** @param {{div: HTMLElement, id: CellId, number: number | null, label: string, bookSource: string | null,
   *   source?: string, actions: CellActions}} options */
  constructor({ div, id, number, label, bookSource, source, actions }) {
    this.element = div;
    this.id = id;
    this.number = number;
    this.label = label;
    this.bookSource = bookSource;
    this.actions = actions;
    this.added = bookSource == null;
    /** @type {RunState} */
    this.runState = "idle";
    this.generation = -1; // which Python (worker) it last ran in
    /** @type {SkipReason | null} */
    this.skipReason = null; // "was stopped", "raised an error": not run as a prerequisite
    /** The digest of the book's code a kept edit was made on, while its conflict is open (work.mjs).
     * @type {string | null | undefined} */
    this.olderBook; // (a declaration, for tsc: it reads nothing)
    /** The cell this one runs as a prerequisite of, while queued for it (runner.mjs).
     * @type {Cell | null | undefined} */
    this.runFirstFor; // (a declaration, for tsc)
    /** Changed in this tab (work.mjs). @type {boolean | undefined} */
    this.changedHere; // (a declaration, for tsc)
    // What build() makes, below, declared with the types it gives them, so that tsc knows
    // every cell has them (declarations: they read nothing).
    /** @type {HTMLElement} */ this.hint;
    /** @type {import("./editor.mjs").Editor} */ this.editor;
    /** @type {() => string} */ this.source;
    /** @type {(text: string) => void} */ this.setSource;
    /** @type {() => void} */ this.focus;
    /** @type {HTMLElement} */ this.conflict;
    /** @type {HTMLElement} */ this.stateText;
    /** @type {HTMLElement} */ this.editedMark;
    /** @type {HTMLElement} */ this.runButton;
    /** @type {HTMLElement | undefined} */ this.resetButton; // (a book cell's)
    /** @type {HTMLElement} */ this.bar;
    /** @type {CellOutput} */ this.output;
    this.clearPending = false; // clear_output(wait=True): cleared when the cell next shows something
    div.classList.add("browser-run-cell");
    this.build(/** @type {string} */ (source ?? bookSource)); // (an added cell is given its source)
  }

  /** @param {string} source */
  build(source) {
    const div = this.element;
    const slug = `browser-run-${this.id}`;
    const host = el("div", { class: "browser-run-editor" });
    this.hint = el("p", { class: "browser-run-hint", id: `${slug}-hint` }, HINT);
    guardEditor(host);
    const editor = createEditor(host, source, {
      label: `Code of ${this.label}, editable`,
      describedBy: this.hint.id,
      onRun: () => this.actions.run(this),
      onChange: () => this.changed(),
      onLeaveMode: (on) => { this.hint.textContent = on ? HINT_LEAVING : HINT; },
    });
    this.editor = editor;
    this.source = editor.source;
    this.setSource = editor.setSource;
    this.focus = editor.focus;

    this.conflict = el("div", { class: "browser-run-conflict", hidden: true });
    this.stateText = el("span", { class: "browser-run-cell-state" });
    this.editedMark = el("span", { class: "browser-run-edited", hidden: true }, "edited (kept in this browser)");
    const controls = /** @type {HTMLElement[]} */ ([
      (this.runButton = button(`Run ${this.label}`, () => this.actions.run(this), { cls: "browser-run-run" })),
      this.added ? null : (this.resetButton = button("Reset", () => this.actions.reset(this),
        { label: `Reset ${this.label} to the book's code`, cls: "browser-run-reset" })),
      button("Add a cell", () => this.actions.add(this), { label: `Add a cell below ${this.label}`, cls: "browser-run-add" }),
      this.added ? button("Delete", () => this.actions.remove(this), { label: `Delete ${this.label}`, cls: "browser-run-delete" }) : null,
      this.editedMark,
      this.stateText,
    ].filter(Boolean));
    const bar = this.bar = el("div", { class: "browser-run-cell-bar" }, ...controls);
    // A polite live region: what a running cell prints is read out as it arrives (output.mjs
    // appends only what is new, and keeps a long output's redraws out of it).
    const outputArea = el("div", { class: "browser-run-output", role: "group", "aria-label": `Output of ${this.label}`,
      "aria-live": "polite" });
    this.output = new CellOutput(outputArea, this.label);

    if (this.added) {
      div.append(this.conflict, host, this.hint, bar, outputArea);
    } else {
      // (a book cell has its code: runner.mjs takes only the div.cell with a .cell_input pre)
      const input = /** @type {Element} */ (div.querySelector(".cell_input"));
      const pre = /** @type {HTMLPreElement} */ (input.querySelector("pre"));
      const highlight = /** @type {Element} */ (pre.closest("div[class^='highlight-']") || pre.parentElement);
      highlight.replaceWith(host);
      host.before(this.conflict);
      host.after(this.hint);
      input.after(bar, outputArea);
      this.stored = /** @type {HTMLElement | null} */ (div.querySelector(".cell_output"));
      // An editor drawn while hidden (a closed worked solution) measures itself when shown.
      div.querySelectorAll("details").forEach((d) => d.addEventListener("toggle", editor.remeasure));
    }
    this.markEdited();
  }

  changed() {
    this.skipReason = null; // edited: it runs as a prerequisite again (runner.mjs)
    this.markEdited();
    this.actions.changed(this);
  }

  get edited() {
    return !this.added && this.source() !== this.bookSource;
  }

  markEdited() {
    if (this.added) return;
    this.element.dataset.edited = String(this.edited);
    this.editedMark.hidden = !this.edited;
    // The same statement as the status's: with storage refused (storage.mjs), nothing is kept.
    this.editedMark.textContent = document.documentElement.dataset.keptWork === "unavailable"
      ? "edited (not kept: this browser refuses storage)" : "edited (kept in this browser)";
    /** @type {HTMLElement} */ (this.resetButton).hidden = !this.edited;
  }

  // wait: clear_output(wait=True), the output cleared when the cell next shows something.
  clearOutput({ wait = false } = {}) {
    this.clearPending = wait;
    if (wait) return;
    restoreFigures(this); // the stored figures back in their place, before the output goes
    if (this.stored) this.stored.hidden = true;
    this.output.clear();
  }

  // The cell is about to show something: an output cleared with wait=True goes now.
  beforeOutput() {
    if (this.clearPending) this.clearOutput();
  }

  // The outputs this page's Python gave the cell, or null if it has not run here.
  /** @returns {import("./notebook.mjs").Output[] | null} */
  outputs() {
    if (this.generation < 0) return null;
    return this.output.parts.map((part) => part.kind === "display"
      ? { kind: part.kind, data: part.data, metadata: part.metadata }
      : { kind: part.kind, text: part.text, png: part.kind === "image/png" ? part.png : null });
  }

  /** @param {RunState} runState */
  setState(runState) {
    this.runState = runState;
    this.element.dataset.runState = runState;
    if (this.stateText) this.stateText.textContent = STATE_WORDS[runState];
  }

  // The book's code changed under the reader's saved edit: say so, show it, offer both.
  /** @param {() => void} onKeep @param {() => void} onTake */
  showConflict(onKeep, onTake) {
    this.offer({
      region: `The book's code of ${this.label} changed`,
      text: [`The book's code of ${this.label} has changed since you edited it. `,
        "The editor shows your code; the book's new code is below."],
      summary: "The book's code now", other: /** @type {string} */ (this.bookSource), // (a book cell's)
      keep: ["Keep mine", `Keep mine: my code of ${this.label}`, onKeep],
      take: ["Take the book's", `Take the book's code of ${this.label}`, onTake],
    });
  }

  // Another version of this cell's code, offered above the editor: what happened (text),
  // the other code (under summary), and two choices, each [text, accessible name, action].
  /** @param {Offer} offer */
  offer({ region, text, summary, other, keep, take }) {
    const done = () => {
      this.conflict.hidden = true;
      this.conflict.replaceChildren();
    };
    /** @param {Choice} choice */
    const choice = ([words, label, action]) => button(words, () => { done(); action(); }, { label });
    this.conflict.replaceChildren(
      el("p", {}, ...text),
      el("details", {}, el("summary", {}, summary), el("pre", {}, other)),
      el("div", { class: "browser-run-cell-bar" }, choice(keep), choice(take)),
    );
    this.conflict.hidden = false;
    this.conflict.setAttribute("role", "region");
    this.conflict.setAttribute("aria-label", region);
  }
}

// A new, empty cell element for an added cell (placed by the runner).
export function addedCellElement() {
  return el("div", { class: "cell browser-run-added" });
}
