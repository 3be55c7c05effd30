// The reader's work on a page (ours): edits kept in the browser and brought back (with a
// conflict offered when the book's code changed since), cells added and deleted, all of it
// cleared, or taken away as a notebook. runner.mjs owns the Python and the queue; the list
// of cells (`page.cells`, in page order) is shared: this module inserts and removes the
// reader's own cells in it.
import { addedCellElement } from "./cells.mjs";
import { saveFile } from "./dom.mjs";
import { addProgress, fetchNotebook, readersNotebook } from "./notebook.mjs";
import { KeptWork, digest } from "./storage.mjs";

export class Work {
  // page: {cells}; newCell({div, id, label, source}): an added Cell wired to the runner;
  // setStatus(text), notice(text): the status line and a lasting notice in front of it;
  // notebookUrl: the page's reader's notebook.
  constructor({ page, newCell, setStatus, notice, notebookUrl }) {
    Object.assign(this, { page, newCell, setStatus, notebookUrl });
    this.kept = new KeptWork(notice);
    this.addedCount = 0;
    this.restored = ""; // "your edits came back", until a cell runs
  }

  // A cell's code changed. An edit is saved with the digest of the book's code it was made
  // on; while a conflict is open that is the older book's, so a reload asks again.
  changed(cell) {
    if (cell.added) this.saveAdded();
    else this.kept.setEdit(cell.number, cell.source(), cell.bookSource, cell.olderBook || undefined);
  }

  saveAdded() {
    const list = [];
    let after = null;
    for (const cell of this.page.cells) {
      if (cell.added) list.push({ id: cell.id, after: String(after), source: cell.source() });
      after = cell.id;
    }
    this.kept.setAdded(list);
  }

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
      else if (cell.edited) cell.setSource(cell.bookSource);
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
      if (saved.book !== digest(cell.bookSource)) {
        cell.olderBook = saved.book;
        const chosen = () => { cell.olderBook = null; };
        cell.showConflict(
          () => { chosen(); kept.setEdit(cell.number, cell.source(), cell.bookSource); },
          () => { chosen(); cell.setSource(cell.bookSource); },
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

  async download() {
    try {
      const page = this.page.cells.map((c) => ({ bookSource: c.bookSource, source: c.source(), outputs: c.outputs() }));
      const notebook = readersNotebook(await fetchNotebook(this.notebookUrl), page);
      const progress = window.exerciseProgress; // set by progress.mjs on the exercise page
      if (progress) addProgress(notebook, progress.entry);
      const name = this.notebookUrl.split("/").pop().replace(/\.ipynb$/, "-my-work.ipynb");
      saveFile(name, JSON.stringify(notebook, null, 1) + "\n", "application/x-ipynb+json");
      this.setStatus(`Downloaded ${name}: open it in JupyterLab or Colab.`);
    } catch (error) {
      this.setStatus(`Could not make the notebook: ${error.message}`);
    }
  }
}
