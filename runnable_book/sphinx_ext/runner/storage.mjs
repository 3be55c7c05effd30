// Kept work: the reader's edits and added cells, saved in their browser as they type (ours).
//
// One localStorage entry per page (key PREFIX + the page's path), JSON:
//   {v: 1, edits: {"<n>": {source, book}}, added: [{id, after, source}]}
// "<n>" is the book cell's number on the page; `book` is a digest of the book's code of
// that cell when the reader edited it. After a rebuild of the book, a cell whose code
// changed has a different digest: the page then shows the reader's code and says the
// book's changed, offering both (runner.mjs). An added cell is saved with the cell it
// follows (`after`: a book cell's number or another added cell's id).
//
// Two tabs of one page share the entry. A tab writes only what it changed (the cells it
// edited since its last write, its added cells), merged into the entry as stored now
// (read, merge, write), so it never overwrites another tab's edit of another cell; and it
// hears the other tab's writes (the `storage` event, fired in every other tab of the
// origin) and hands them to work.mjs, which updates its cells or offers the other version.
//
// Storage may be missing or refuse (private mode, quota, blocked by the browser): one
// notice says edits are not kept, and everything else works. An entry that cannot be read
// (not JSON, not this shape) is moved aside under PREFIX + "unreadable:" + path, with a
// notice, and the page starts from the book's code.
const PREFIX = "browser-run:v1:";
const SAVE_DELAY_MS = 300;

/** A book cell's saved edit: the reader's code, and the digest of the book's code it was made on.
 * @typedef {{source: string, book: string}} KeptEdit */
/** A cell the reader added: its id, the cell it follows (`after`, as text), its code.
 * @typedef {{id: string, after: string, source: string}} KeptAdded */
/** The page's entry as stored: the edits by book cell number (as text), the added cells in order.
 * @typedef {{v: 1, edits: Record<string, KeptEdit>, added: KeptAdded[]}} KeptEntry */

// A short digest of a cell's code (FNV-1a, 32 bits, hex): enough to notice a change;
// not crypto.subtle, which a page served over plain http from another machine lacks.
/** @param {string} text @returns {string} */
export function digest(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** @returns {KeptEntry} */
const emptyEntry = () => ({ v: 1, edits: {}, added: [] });

// Each write is counted on <html data-kept-work-writes="n">, so that what waits for the
// reader's work to be kept (tests/test_browser_work.py) waits for the write itself, not for
// a guess at SAVE_DELAY_MS.
function countWrite() {
  const root = document.documentElement;
  root.dataset.keptWorkWrites = String(Number(root.dataset.keptWorkWrites || 0) + 1);
}

/** @param {any} entry what storage held, parsed: not known to be an entry yet @returns {entry is KeptEntry} */
function validEntry(entry) {
  const isText = (/** @type {unknown} */ x) => typeof x === "string";
  return entry && typeof entry === "object" && entry.v === 1
    && entry.edits && typeof entry.edits === "object" && !Array.isArray(entry.edits)
    // Edits are kept by book cell number (1, 2, ...): any other key is no cell's, and would
    // be looked up for an added cell (work.mjs asks by its number, null).
    && Object.keys(entry.edits).every((n) => /^[1-9][0-9]*$/.test(n))
    && Object.values(entry.edits).every((e) => e && isText(e.source) && isText(e.book))
    && Array.isArray(entry.added)
    && entry.added.every((/** @type {any} */ a) => a && isText(a.id) && isText(a.after) && isText(a.source));
}

export class KeptWork {
  // notice(text): show the reader one message about their kept work.
  // onRemote(entry): another tab saved the page's work (the entry as now stored).
  /** @param {(text: string) => void} notice @param {string} [page] @param {(entry: KeptEntry) => void} [onRemote] */
  constructor(notice, page = location.pathname, onRemote = () => {}) {
    this.notice = notice;
    this.key = PREFIX + page;
    /** @type {number | null} */
    this.timer = null;
    this.entry = emptyEntry();
    /** @type {Set<string>} */
    this.dirty = new Set(); // book cells (their number, as text) changed here since the last write
    this.addedDirty = false; // this tab's added cells changed since the last write
    /** @type {Set<string>} */
    this.knownAdded = new Set(); // ids of added cells this tab has had (so a deleted one stays deleted)
    /** @type {Storage | null} */
    this.storage = null;
    try {
      // (layout.html's stand-in for a refused storage keeps nothing: refused all the same)
      if (window.bookStorageRefused) throw new DOMException("storage refused", "SecurityError");
      const storage = window.localStorage;
      const probe = PREFIX + "probe";
      storage.setItem(probe, "1");
      storage.removeItem(probe);
      this.storage = storage;
    } catch (error) {
      this.unavailable(error);
    }
    if (this.storage) this.read();
    for (const a of this.entry.added) this.knownAdded.add(a.id);
    window.addEventListener("storage", (event) => {
      if (!this.storage || event.key !== this.key && event.key !== null) return;
      const entry = this.parse(event.key === null ? null : event.newValue);
      if (!entry) return; // unreadable: this tab's next write replaces it
      // What this tab has not written yet stays its own until it does; work.mjs is given
      // the other tab's version, to offer it.
      const mine = structuredClone(entry);
      for (const n of this.dirty) {
        if (this.entry.edits[n]) mine.edits[n] = this.entry.edits[n];
        else delete mine.edits[n];
      }
      if (this.addedDirty) mine.added = this.mergeAdded(mine.added);
      this.entry = mine;
      onRemote(entry);
    });
    // A reload or a link followed within SAVE_DELAY_MS of the last keystroke loses nothing.
    window.addEventListener("pagehide", () => { if (this.timer != null) this.save(true); });
  }

  get available() {
    return this.storage != null;
  }

  /** @param {unknown} error what storage threw */
  unavailable(error) {
    this.storage = null;
    document.documentElement.dataset.keptWork = "unavailable";  // cells.mjs: "edited (not kept)"
    this.notice(
      "Your edits cannot be kept in this browser (its storage is " +
      `${error && /** @type {Error} */ (error).name === "QuotaExceededError" ? "full" : "unavailable or blocked"}), ` +
      "so they are lost when you leave the page: use “Download as notebook” to keep them.");
  }

  // A stored entry (raw text, or null for none) as an entry, or null if it cannot be read.
  /** @param {string | null} raw @returns {KeptEntry | null} */
  parse(raw) {
    if (raw == null) return emptyEntry();
    try {
      const entry = JSON.parse(raw);
      return validEntry(entry) ? entry : null;
    } catch {
      return null;
    }
  }

  read() {
    let raw;
    try {
      raw = /** @type {Storage} */ (this.storage).getItem(this.key);
    } catch (error) {
      // Storage passed the probe but cannot be reached now: nothing was read, so nothing is
      // set aside (and the reader's copy is not touched); edits are not kept, as when refused.
      this.unavailable(error);
      return;
    }
    if (raw == null) return;
    const entry = this.parse(raw);
    if (entry) {
      this.entry = entry;
      return;
    }
    try {
      /** @type {Storage} */ (this.storage).setItem(PREFIX + "unreadable:" + this.key.slice(PREFIX.length), raw);
      /** @type {Storage} */ (this.storage).removeItem(this.key);
    } catch { /* left where it was; it is ignored all the same */ }
    this.notice("A saved copy of your edits on this page could not be read, so it was set aside; " +
      "the cells show the book's code.");
  }

  // Book cell n has a change made in this tab that is not written yet (the reader is typing).
  /** @param {number | null} n */
  pending(n) {
    return this.timer != null && this.dirty.has(String(n));
  }

  // The saved edit of book cell n, or null: {source, book}.
  /** @param {number | null} n @returns {KeptEdit | null} */
  edit(n) {
    return this.entry.edits[String(n)] || null;
  }

  added() {
    return this.entry.added;
  }

  hasWork() {
    return Object.keys(this.entry.edits).length > 0 || this.entry.added.length > 0;
  }

  // Book cell n now reads `source`; `bookSource` is the book's code it was edited from
  // (`book`: its digest, when that is an older book's, i.e. the reader has not chosen yet).
  /** @param {number | null} n @param {string} source @param {string} bookSource @param {string} [book] */
  setEdit(n, source, bookSource, book = digest(bookSource)) {
    if (source === bookSource) delete this.entry.edits[String(n)];
    else this.entry.edits[String(n)] = { source, book };
    this.dirty.add(String(n));
    this.save();
  }

  /** @param {KeptAdded[]} list */
  setAdded(list) {
    this.entry.added = list;
    for (const a of list) this.knownAdded.add(a.id);
    this.addedDirty = true;
    this.save();
  }

  // This tab's added cells, in its order, then those another tab added that this tab has not
  // seen yet (a cell this tab deleted is not brought back).
  /** @param {KeptAdded[]} stored @returns {KeptAdded[]} */
  mergeAdded(stored) {
    const others = stored.filter((a) => !this.knownAdded.has(a.id));
    return [...this.entry.added, ...others];
  }

  // Clear my edits: the page's work goes, in every tab.
  clear() {
    this.entry = emptyEntry();
    this.dirty.clear();
    this.addedDirty = false;
    this.write(this.entry);
  }

  // Written SAVE_DELAY_MS after the last keystroke (or at once), and when the page hides.
  save(now = false) {
    clearTimeout(/** @type {number | undefined} */ (this.timer));
    this.timer = null;
    if (!this.storage) return;
    if (!now) {
      this.timer = setTimeout(() => this.save(true), SAVE_DELAY_MS);
      return;
    }
    // Read, merge, write: the stored entry (another tab's edits in it), with this tab's changes.
    let stored = null;
    try {
      stored = this.parse(this.storage.getItem(this.key));
    } catch { /* written over below */ }
    const entry = stored || emptyEntry();
    for (const n of this.dirty) {
      if (this.entry.edits[n]) entry.edits[n] = this.entry.edits[n];
      else delete entry.edits[n];
    }
    if (this.addedDirty) entry.added = this.mergeAdded(entry.added);
    this.dirty.clear();
    this.addedDirty = false;
    this.entry = entry;
    this.write(entry);
  }

  /** @param {KeptEntry} entry */
  write(entry) {
    if (!this.storage) return;
    const hasWork = Object.keys(entry.edits).length > 0 || entry.added.length > 0;
    try {
      if (hasWork) this.storage.setItem(this.key, JSON.stringify(entry));
      else this.storage.removeItem(this.key);
      countWrite();
    } catch (error) {
      this.unavailable(error);
    }
  }
}
