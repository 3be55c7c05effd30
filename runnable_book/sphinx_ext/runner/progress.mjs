// Exercise progress (ours): which exercises of each exercise page (15.11) the reader has done,
// kept in their browser.
//
// Loaded on every page after the first paint (a few KB). Which pages hold exercises, their
// sections and which have a check is the page's data (book_exercises.mjs, written by the build
// from runnable_book/pipeline/book_shape.py), never read from headings here. On every page it shows,
// beside each exercise page's entry in the sidebar, "n/7 done". On an exercise page it also shows:
//   - a progress list above the first exercise ("3 of 7 done"), with a control to clear it;
//   - a mark beside each done exercise's heading;
//   - for an exercise without a check, a "Mark as done" button beside its heading.
// An exercise with a check is done when the check, run in the page by the reader (not one
// of the worked solution's cells), prints its verdict "PASS  exercise N (check_x)" (how a pass
// begins is in the data, from the checks' harness): the page watches the outputs that "Run in
// your browser" writes (.browser-run-output), so this module needs nothing from the runner but
// that class name.
//
// Storage: one localStorage entry per exercise page, PROGRESS_KEY + its path, JSON
//   {v: 1, total: 7, done: {"3": "check", "1": "marked"}}
// If storage is unavailable, progress is shown for this visit only and the list says so; an
// entry that cannot be read is ignored (the list says so) and replaced on the next change.
import { el } from "./dom.mjs";
import { exercisePagePath, passedIn, readBookExercises } from "./book_exercises.mjs";

const PROGRESS_KEY = "browser-run:v1:progress:";

const UNREADABLE = "Your saved progress could not be read, so it starts again here.";

/** How an exercise was done: its check passed, or the reader marked it done.
 * @typedef {"check" | "marked"} DoneHow */
/** The stored entry: the number of exercises, and how each done one was done, by its number (as text).
 * @typedef {{v: 1, total: number, done: Record<string, DoneHow>}} ProgressEntry */

/** @param {any} entry what storage held, parsed: not known to be an entry yet @returns {entry is ProgressEntry} */
function validEntry(entry) {
  return Boolean(entry && entry.v === 1 && Number.isInteger(entry.total) && entry.done
    && typeof entry.done === "object" && !Array.isArray(entry.done)
    && Object.values(entry.done).every((how) => how === "check" || how === "marked"));
}

// Two tabs share the entry as they share kept edits (storage.mjs): a change is applied to
// what is stored now (read, apply, write), so a mark made in one tab never erases another's,
// and each tab hears the other's writes (the `storage` event) and shows them at once.
export class Progress {
  /** @param {string} pagePath the exercise page's path */
  constructor(pagePath) {
    this.pagePath = pagePath;
    this.key = PROGRESS_KEY + pagePath;
    this.problem = "";
    /** @type {ProgressEntry} */
    this.entry = { v: 1, total: 0, done: {} };
    /** @type {(() => void)[]} */
    this.listeners = [];
    try {
      if (window.bookStorageRefused) throw new DOMException("storage refused", "SecurityError");  // (layout.html)
      this.storage = window.localStorage;
      this.storage.getItem(this.key);  // (blocked storage throws here, not later)
    } catch (error) {
      this.storage = null;
      this.problem = "This browser does not let the page keep your progress: it lasts until you leave the page.";
      return;
    }
    const stored = this.read();
    if (stored) this.entry = stored;
    else if (stored === null) this.problem = UNREADABLE;
    window.addEventListener("storage", (event) => {
      if (event.key !== this.key && event.key !== null) return;  // (null: the storage was cleared)
      // A tab whose progress could not be kept (save) keeps it for the visit, as its title
      // says: what other tabs keep is no longer its own.
      if (!this.storage) return;
      const now = this.read();
      this.entry = now || { v: 1, total: this.entry.total, done: {} };
      this.listeners.forEach((listener) => listener());
    });
  }

  // The stored entry; undefined when there is none, null when it cannot be read.
  /** @returns {ProgressEntry | null | undefined} */
  read() {
    let text;
    try { text = /** @type {Storage} */ (this.storage).getItem(this.key); } catch (error) { return undefined; }
    if (text === null) return undefined;
    try {
      const entry = JSON.parse(text);
      return validEntry(entry) ? entry : null;
    } catch (error) {
      return null;
    }
  }

  /** @param {() => void} listener */
  onChange(listener) { this.listeners.push(listener); }

  // Apply a change to this tab's progress and to the stored one (another tab's marks kept).
  /** @param {(done: Record<string, DoneHow>) => void} apply */
  change(apply) {
    apply(this.entry.done);
    if (!this.storage) return;
    const stored = this.read();
    if (stored) {
      apply(stored.done);
      stored.total = this.entry.total;
      this.entry = stored;
    }
    this.save();
  }

  save() {
    if (!this.storage) return;
    try {
      this.storage.setItem(this.key, JSON.stringify(this.entry));
    } catch (error) {
      this.problem = "This browser did not keep your progress (storage is full or blocked).";
      this.storage = null; // the title says so from now on
    }
  }

  /** @param {number} n */
  isDone(n) { return Boolean(this.entry.done[n]); }
  count() { return Object.keys(this.entry.done).length; }

  /** @param {number} n @param {DoneHow | null} how null: not done */
  set(n, how) {
    this.change((done) => {
      if (how) done[n] = how;
      else delete done[n];
    });
  }

  clear() {
    this.change((done) => { for (const n of Object.keys(done)) delete done[n]; });
  }
}

// ---------------------------------------------------------------------------
// Every page: the sidebar entry of the exercise page
// ---------------------------------------------------------------------------

/** @param {string} pagePath the exercise page's path */
function exercisePageLinks(pagePath) {
  // The page's own entry in the book's table of contents (the left sidebar), not the links
  // of the page's own contents ("#exercise-3") on the right.
  return [.../** @type {NodeListOf<HTMLAnchorElement>} */ (document.querySelectorAll(".bd-sidenav a.reference.internal"))].filter((a) => {
    const url = new URL(a.href, location.href);
    return url.pathname === pagePath && !url.hash;
  });
}

/** @param {HTMLAnchorElement} link @param {Progress} progress */
function showInSidebar(link, progress) {
  let badge = link.querySelector(".exercise-progress-badge");
  const total = progress.entry.total;
  if (!total || !progress.count()) {
    if (badge) badge.remove();
    return;
  }
  if (!badge) {
    badge = el("span", { class: "exercise-progress-badge" });
    link.append(" ", badge);
  }
  badge.textContent = `${progress.count()}/${total} done`;
  badge.setAttribute("aria-label", `${progress.count()} of ${total} exercises done`);
}

// ---------------------------------------------------------------------------
// The exercise page
// ---------------------------------------------------------------------------

/** An exercise's section on the page, with its status and (drawn by start()) its controls.
 * @typedef {{number: number, heading: Element, section: HTMLElement, hasCheck: boolean,
 *   mark?: HTMLElement, toggle?: HTMLElement}} Exercise */

/** The data's exercises found on this page (the build checked each section is there).
 * @param {import("./book_exercises.mjs").BookExercise[]} described */
function exercisesOnPage(described) {
  return described.map((exercise) => {
    const section = document.getElementById(exercise.section);
    const heading = section?.querySelector(":scope > h2");
    if (!section || !heading) throw new Error(`exercise ${exercise.number}: no section #${exercise.section} with a heading on this page`);
    return /** @type {Exercise} */ ({ number: exercise.number, heading, section, hasCheck: exercise.checks.length > 0 });
  });
}

/** @param {Progress} progress @param {Exercise[]} exercises
 * @param {HTMLElement} list @param {HTMLElement} summary @param {HTMLElement} note */
function renderPage(progress, exercises, list, summary, note) {
  summary.textContent = `${progress.count()} of ${exercises.length} exercises done`;
  note.textContent = progress.problem;
  note.hidden = !progress.problem;
  list.replaceChildren(...exercises.map((exercise) => {
    const how = progress.entry.done[exercise.number];
    const label = how === "check" ? "done: its check passed" : how === "marked" ? "done: marked by you" : "not done yet";
    return el("li", { class: how ? "is-done" : null },
      el("a", { href: `#${exercise.section.id}` }, `Exercise ${exercise.number}`), `: ${label}`);
  }));
  for (const exercise of exercises) {
    const done = progress.isDone(exercise.number);
    /** @type {HTMLElement} */ (exercise.mark).hidden = !done;
    if (exercise.toggle) {
      exercise.toggle.textContent = done ? "Mark as not done" : "Mark as done";
      // Named by its exercise: a screen reader's list of buttons had three "Mark as done".
      exercise.toggle.setAttribute("aria-label", `${exercise.toggle.textContent}: exercise ${exercise.number}`);
      exercise.toggle.setAttribute("aria-pressed", String(done));
    }
  }
  for (const link of exercisePageLinks(progress.pagePath)) showInSidebar(link, progress);
  document.documentElement.dataset.exerciseProgress = String(progress.count());
}

/** @param {Progress} progress @param {import("./book_exercises.mjs").BookExercise[]} described
 * @param {() => void} render */
function watchChecks(progress, described, render) {
  /** @type {WeakMap<Element, string>} */
  const seen = new WeakMap();
  const scan = () => {
    for (const output of document.querySelectorAll(".browser-run-output")) {
      // Only the reader's own runs: a worked solution's cells pass their checks by design.
      if (output.closest(".tag_hide-cell")) continue;
      const text = /** @type {string} */ (output.textContent);
      if (seen.get(output) === text) continue;
      seen.set(output, text);
      const number = passedIn(described, text)?.number;
      if (number && progress.entry.done[number] !== "check") {
        progress.set(number, "check");
        render();
      }
    }
  };
  new MutationObserver(scan).observe(document.querySelector("main") || document.body,
    { childList: true, subtree: true, characterData: true });
}

// Each exercise page's progress: its sidebar entry's count on every page, and on the page
// itself its list and controls. Returns this page's progress (null: not an exercise page).
// (The page's `data-exercise-progress` says the exercises done: on an exercise page its own, on
// any other page every exercise page's together.)
export function start() {
  const data = readBookExercises();
  /** @type {Progress[]} */
  const shown = [];
  /** @type {Progress | null} */
  let own = null;
  const doneInAll = () => {
    if (own || !shown.length) return;
    document.documentElement.dataset.exerciseProgress = String(shown.reduce((sum, p) => sum + p.count(), 0));
  };
  for (const page of data?.pages || []) {
    if (!page.exercises.length) continue;
    const progress = startPage(page, () => doneInAll());
    if (progress && location.pathname === progress.pagePath) own = progress;
    else if (progress) shown.push(progress);
  }
  doneInAll();
  return own;
}

/** @param {import("./book_exercises.mjs").BookExercisePage} data @param {() => void} counted */
function startPage(data, counted) {
  const pagePath = exercisePagePath(data, location.href, document.documentElement.dataset.content_root);
  const onExercisePage = location.pathname === pagePath;
  if (!onExercisePage && !exercisePageLinks(pagePath).length) return null;
  const progress = new Progress(pagePath);
  if (!onExercisePage) {
    // The count of exercises is the data's on every page, as on the exercise page (stored
    // there; here only shown, so a visit that changes nothing writes nothing).
    progress.entry.total = data.exercises.length;
    const show = () => {
      for (const link of exercisePageLinks(pagePath)) showInSidebar(link, progress);
      counted();
    };
    show();
    progress.onChange(show);
    return progress;
  }
  const exercises = exercisesOnPage(data.exercises);
  if (progress.entry.total !== exercises.length) {
    progress.entry.total = exercises.length;
    progress.save();
  }
  const summary = el("p", { class: "exercise-progress-summary", role: "status" });
  const note = el("p", { class: "exercise-progress-note" });
  const list = el("ul", { class: "exercise-progress-list" });
  // The title says where progress lives, and so where it does not when storage is refused.
  const title = el("p", { class: "exercise-progress-title" });
  const render = () => {
    renderPage(progress, exercises, list, summary, note);
    title.textContent = progress.storage ? "Your progress, kept in this browser"
      : "Your progress, for this visit only (this browser does not let the page keep it)";
  };
  const clear = el("button", { type: "button", class: "btn btn-sm exercise-progress-clear",
    onclick: () => { progress.clear(); render(); } }, "Clear my progress");
  const box = el("aside", { class: "exercise-progress", "aria-label": "Your progress" },
    title, summary, list, note, clear);
  exercises[0].section.before(box);
  for (const exercise of exercises) {
    exercise.mark = el("span", { class: "exercise-done-mark", hidden: true }, "✓ done");
    const extras = [exercise.mark];
    if (!exercise.hasCheck) {
      exercise.toggle = el("button", { type: "button", class: "btn btn-sm exercise-mark-done",
        onclick: () => { progress.set(exercise.number, progress.isDone(exercise.number) ? null : "marked"); render(); } });
      extras.push(exercise.toggle);
    }
    exercise.heading.after(el("div", { class: "exercise-status" }, ...extras));
  }
  render();
  progress.onChange(render);
  watchChecks(progress, data.exercises, render);
  // For "Download as notebook" (work.mjs): the progress goes into the reader's notebook.
  window.exerciseProgress = progress;
  return progress;
}

start();
