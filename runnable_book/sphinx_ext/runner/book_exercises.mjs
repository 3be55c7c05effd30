// The book's exercises, as the page's data says them (ours): the inline
// <script type="application/json" id="book-exercises"> that runnable_book/sphinx_ext/exercises.py
// writes into every page of the HTML book from runnable_book/pipeline/book_shape.py. progress.mjs
// and runner.mjs read exercises through here, never from headings, section ids or URLs.

/** One exercise: its number, its section's id on the exercise page, and its reader checks,
 * each with how the output of a pass begins ("PASS  exercise 3 (check_conflict_policy)").
 * @typedef {{number: number, section: string, checks: {name: string, passed: string}[]}} BookExercise */
/** An exercise page's address from the site's root, and its exercises in page order.
 * @typedef {{page: string, exercises: BookExercise[]}} BookExercisePage */
/** Every exercise page of the book, in the book's order (each numbers its exercises from 1).
 * @typedef {{pages: BookExercisePage[]}} BookExercises */

export const SCRIPT_ID = "book-exercises";

const isText = (/** @type {unknown} */ value) => typeof value === "string" && value.length > 0;

/** The data from its JSON text; throws an error saying what is wrong with it.
 * @param {string} text
 * @returns {BookExercises} */
export function parseBookExercises(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`#${SCRIPT_ID}: not JSON (${/** @type {Error} */ (error).message})`);
  }
  if (!data || !Array.isArray(data.pages)) throw new Error(`#${SCRIPT_ID}: expected {pages: [...]}`);
  for (const page of data.pages) {
    if (!page || !isText(page.page) || !Array.isArray(page.exercises)) {
      throw new Error(`#${SCRIPT_ID}: a page is not {page, exercises: [...]}: ${JSON.stringify(page)}`);
    }
    for (const exercise of page.exercises) {
      const checksValid = Array.isArray(exercise?.checks)
        && exercise.checks.every((/** @type {any} */ check) => isText(check?.name) && isText(check?.passed));
      if (!Number.isInteger(exercise?.number) || !isText(exercise.section) || !checksValid) {
        throw new Error(`#${SCRIPT_ID}: an exercise of ${page.page} is not {number, section, checks: [{name, passed}]}: `
          + JSON.stringify(exercise));
      }
    }
  }
  return data;
}

/** The page's data; null on a page without it (a page of a book built without
 * runnable_book/sphinx_ext/exercises.py, or the printed page): no exercises there.
 * @returns {BookExercises | null} */
export function readBookExercises() {
  const script = document.getElementById(SCRIPT_ID);
  return script ? parseBookExercises(script.textContent || "") : null;
}

/** The exercise whose check passed in `output` (a run's printed text), or null: the first
 * line that begins as a pass of one of an exercise's checks says which.
 * @param {BookExercise[]} exercises
 * @param {string} output
 * @returns {BookExercise | null} */
export function passedIn(exercises, output) {
  for (const line of output.split("\n")) {
    const passed = exercises.find((exercise) => exercise.checks.some((check) => line.startsWith(check.passed)));
    if (passed) return passed;
  }
  return null;
}

/** An exercise page's path on this site: its address in the data resolved against the site's
 * root, which Sphinx writes on <html> (`data-content_root`, relative to the current page).
 * @param {BookExercisePage} page
 * @param {string} href the current page's address
 * @param {string | undefined} contentRoot
 * @returns {string} */
export function exercisePagePath(page, href, contentRoot) {
  if (contentRoot === undefined) throw new Error(`#${SCRIPT_ID}: the page has no data-content_root to find ${page.page} from`);
  return new URL(page.page, new URL(contentRoot, href)).pathname;
}
