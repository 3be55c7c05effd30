// The reader's work on a page (ours): edits kept in the browser and brought back (with a
// conflict offered when the book's code changed since), cells added and deleted, all of it
// cleared, or taken away as a notebook. runner.mjs owns the Python and the queue; the list
// of cells (`page.cells`, in page order) is shared: this module inserts and removes the
// reader's own cells in it.
import { addedCellElement } from "./cells.mjs";
import { saveFile } from "./dom.mjs";
import { addProgress, fetchNotebook, readersNotebook } from "./notebook.mjs";
import { KeptWork, digest } from "./storage.mjs";

/** @typedef {import("./cells.mjs").Cell} Cell */
/** @typedef {import("./storage.mjs").KeptAdded} KeptAdded */
/** @typedef {import("./storage.mjs").KeptEntry} KeptEntry */

const capital = (/** @type {string} */ text) => text[0].toUpperCase() + text.slice(1);

export class Work {
  // page: {cells}; newCell({div, id, label, source}): an added Cell wired to the runner;
  // setStatus(text), notice(text): the status line and a lasting notice in front of it;
  // notebookUrl: the page's reader's notebook.
  /** @param {{page: {cells: Cell[]}, newCell: (options: {div: HTMLElement, id: string, label: string, source: string}) => Cell,
   *   setStatus: (text: string) => void, notice: (text: string) => void, notebookUrl: string}} options */
  constructor({ page, newCell, setStatus, notice, notebookUrl }) {
    this.page = page;
    this.newCell = newCell;
    this.setStatus = setStatus;
    this.notebookUrl = notebookUrl;
    this.kept = new KeptWork(notice, location.pathname, (entry) => this.fromOtherTab(entry));
    this.applying = false; // true while another tab's save is put into the editors
    this.addedCount = 0;
    this.restored = ""; // "your edits came back", until a cell runs
  }

  // A cell's code changed. An edit is saved with the digest of the book's code it was made
  // on; while a conflict is open that is the older book's, so a reload asks again.
  /** @param {Cell} cell */
  changed(cell) {
    if (this.applying) return; // another tab's save: already stored
    cell.changedHere = true;
    if (cell.added) this.saveAdded();
    else this.kept.setEdit(cell.number, cell.source(), /** @type {string} */ (cell.bookSource),
      cell.olderBook || undefined);
  }

  saveAdded() {
    if (this.applying) return; // another tab's cells, placed here: already stored
    /** @type {KeptAdded[]} */
    const list = [];
    let after = null;
    for (const cell of this.page.cells) {
      if (cell.added) list.push({ id: /** @type {string} */ (cell.id), after: String(after),
        source: cell.source() });
      after = cell.id;
    }
    this.kept.setAdded(list);
  }

  /** @param {Cell} below @param {{id?: string, source?: string, focus?: boolean}} [options] */
  add(below, { id, source = "", focus = true } = {}) {
    const cells = this.page.cells;
    this.addedCount += 1;
    id = id || `a${Date.now().toString(36)}${this.addedCount}`;
    const div = addedCellElement();
    // After the cell it was added to, and after cells already added below that one.
    let index = cells.indexOf(below);
    while (cells[index + 1] && cells[index + 1].added) index += 1;
    cells[index].element.after(div);
    const cell = this.newCell({ div, id, label: `your cell ${this.addedCount} (added)`, source });
    cells.splice(index + 1, 0, cell);
    if (focus) cell.focus();
    this.saveAdded();
    return cell;
  }

  /** @param {Cell} cell */
  remove(cell) {
    const cells = this.page.cells;
    const index = cells.indexOf(cell);
    cell.element.remove();
    cells.splice(index, 1);
    this.saveAdded();
    const next = cells[index] || cells[index - 1];
    if (next && next.focus) next.focus();
  }

  clear() {
    if (!window.confirm("Clear all your edits and added cells on this page? The cells go back to the book's code.")) return;
    for (const cell of [...this.page.cells]) {
      if (cell.added) this.remove(cell);
      else if (cell.edited) cell.setSource(/** @type {string} */ (cell.bookSource));
    }
    this.kept.clear();
    this.setStatus("Your edits on this page were cleared.");
  }

  // Saved edits back into the editors; an edit whose book cell changed since is offered.
  restore() {
    const kept = this.kept;
    let restored = 0;
    for (const cell of this.page.cells) {
      const saved = kept.edit(cell.number);
      if (!saved || saved.source === cell.source()) continue;
      if (saved.book !== digest(/** @type {string} */ (cell.bookSource))) {
        cell.olderBook = saved.book;
        const chosen = () => { cell.olderBook = null; };
        cell.showConflict(
          () => {
            chosen();
            kept.setEdit(cell.number, cell.source(), /** @type {string} */ (cell.bookSource));
          },
          () => { chosen(); cell.setSource(/** @type {string} */ (cell.bookSource)); },
        );
      }
      cell.setSource(saved.source);
      restored += 1;
    }
    for (const saved of kept.added()) {
      const cells = this.page.cells;
      const below = cells.find((c) => String(c.id) === saved.after) || cells[cells.length - 1];
      this.add(below, { id: saved.id, source: saved.source, focus: false });
      restored += 1;
    }
    if (restored) this.restored = `Your edits to this page (${restored} cell${restored === 1 ? "" : "s"}) came back from this browser.`;
  }

  // Another tab of this page saved (entry: the page's work as now stored). Each cell whose
  // stored code differs from its editor takes the stored code, unless the reader is typing
  // in that cell here (a change not yet written): then this tab's code stays and, being
  // the later edit, is written over the other; the other tab's is offered. A cell whose
  // code was changed in this tab and is replaced says so and offers this tab's code back.
  // No edit is lost without a notice in the tab that made it.
  /** @param {KeptEntry} entry */
  fromOtherTab(entry) {
    const cells = this.page.cells;
    for (const cell of cells) {
      if (cell.added) continue;
      const saved = entry.edits[String(cell.number)];
      this.reconcile(cell, saved ? saved.source : /** @type {string} */ (cell.bookSource), this.kept.pending(cell.number));
    }
    const stored = new Map(entry.added.map((a) => [a.id, a]));
    // Added cells the other tab deleted go, unless this tab has added cells it has not
    // written yet (then "not stored" may only mean "not written") or one is being edited.
    for (const cell of cells.filter((c) => c.added && !stored.has(/** @type {string} */ (c.id)) && !this.kept.addedDirty)) {
      if (cell.element.contains(document.activeElement)) continue;
      this.quietly(() => { cell.element.remove(); cells.splice(cells.indexOf(cell), 1); });
    }
    for (const saved of entry.added) {
      const cell = cells.find((c) => c.id === saved.id);
      if (cell) this.reconcile(cell, saved.source, this.kept.addedDirty && this.kept.timer != null);
      else {
        const below = cells.find((c) => String(c.id) === saved.after) || cells[cells.length - 1];
        this.quietly(() => this.add(below, { id: saved.id, source: saved.source, focus: false }));
      }
    }
  }

  /** @param {() => void} change */
  quietly(change) {
    this.applying = true;
    try { change(); } finally { this.applying = false; }
  }

  /** @param {Cell} cell @param {string} theirs the code stored now @param {boolean} typing */
  reconcile(cell, theirs, typing) {
    const ours = cell.source();
    if (theirs === ours) return;
    const region = `${capital(cell.label)} was changed in another tab`;
    if (typing) {
      cell.offer({
        region, summary: "The other tab's code", other: theirs,
        text: [`You changed ${cell.label} in another tab of this page too. This tab's code stays `,
          "(it is the later edit, so it is the one kept); the other tab's code is below."],
        keep: ["Keep this tab's", `Keep this tab's code of ${cell.label}`, () => {}],
        take: ["Take the other tab's", `Take the other tab's code of ${cell.label}`,
          () => cell.setSource(theirs)],
      });
      return;
    }
    this.quietly(() => { cell.setSource(theirs); cell.markEdited(); });
    if (!cell.changedHere) return;
    cell.offer({
      region, summary: "This tab's code before", other: ours,
      text: [`Your edit of ${cell.label} in another tab of this page replaced the code here `,
        "(the later edit is the one kept). This tab's code is below, and one Ctrl+Z away in the editor."],
      keep: ["Keep the other tab's", `Keep the other tab's code of ${cell.label}`, () => {}],
      take: ["Take this tab's back", `Take this tab's code of ${cell.label} back`,
        () => cell.setSource(ours)],
    });
  }

  async download() {
    try {
      const page = this.page.cells.map((c) => ({ bookSource: c.bookSource, source: c.source(),
        outputs: c.outputs() }));
      const notebook = readersNotebook(await fetchNotebook(this.notebookUrl), page);
      const progress = window.exerciseProgress; // set by progress.mjs on the exercise page
      if (progress) addProgress(notebook, progress.entry);
      const name = /** @type {string} */ (this.notebookUrl.split("/").pop()).replace(/\.ipynb$/, "-my-work.ipynb");
      saveFile(name, JSON.stringify(notebook, null, 1) + "\n", "application/x-ipynb+json");
      this.setStatus(`Downloaded ${name}: open it in JupyterLab or Colab.`);
    } catch (error) {
      this.setStatus(`Could not make the notebook: ${/** @type {Error} */ (error).message}`);
    }
  }
}
