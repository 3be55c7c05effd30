// book_exercises.mjs: the page's data on the exercises (runnable_book/sphinx_ext/exercises.py writes
// it), read and checked, and what progress.mjs asks of it: which page, which check passed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { exercisePagePath, parseBookExercises, passedIn } from "../../runnable_book/sphinx_ext/runner/book_exercises.mjs";

const PAGE = {
  page: "book/15_11_exercises.html",
  exercises: [
    { number: 1, section: "exercise-1", checks: [] },
    { number: 3, section: "exercise-3",
      checks: [{ name: "check_conflict_policy", passed: "PASS  exercise 3 (check_conflict_policy)" }] },
    { number: 6, section: "exercise-6", checks: [{ name: "check_router", passed: "PASS  exercise 6 (check_router)" }] },
  ],
};
// A book of two exercise pages (each numbers its exercises from 1).
const OTHER = { page: "book/16_09_exercises.html", exercises: [{ number: 1, section: "exercise-1", checks: [] }] };
const DATA = { pages: [PAGE, OTHER] };

test("the data as the build writes it is read as it is", () => {
  assert.deepEqual(parseBookExercises(JSON.stringify(DATA)), DATA);
});

test("data that is not what the build writes is refused, saying what is wrong", () => {
  assert.throws(() => parseBookExercises("{not json"), /#book-exercises: not JSON/);
  assert.throws(() => parseBookExercises(JSON.stringify(PAGE)), /expected \{pages/);  // (one page's, not the book's)
  assert.throws(() => parseBookExercises(JSON.stringify({ pages: [{ exercises: [] }] })), /a page is not \{page, exercises/);
  const noSection = { pages: [{ ...PAGE, exercises: [{ number: 2, checks: [] }] }] };
  assert.throws(() => parseBookExercises(JSON.stringify(noSection)), /an exercise of book\/15_11_exercises.html is not .*"number":2/);
  const checkWithoutVerdict = { pages: [{ ...PAGE, exercises: [{ number: 2, section: "exercise-2", checks: [{ name: "check_x" }] }] }] };
  assert.throws(() => parseBookExercises(JSON.stringify(checkWithoutVerdict)), /an exercise of .* is not/);
});

test("a pass of an exercise's check, on a line of its own, names that exercise", () => {
  const ran = "one-shot first answers\nPASS  exercise 6 (check_router): all 9 cases pass\n  ok   a: b\n";
  assert.equal(passedIn(PAGE.exercises, ran)?.number, 6);
  assert.equal(passedIn(PAGE.exercises, "FAIL  exercise 6 (check_router): 2 of 9 cases fail\n"), null);
  assert.equal(passedIn(PAGE.exercises, "said: PASS  exercise 6 (check_router)"), null);  // not where a line begins
  assert.equal(passedIn(PAGE.exercises, "PASS  exercise 3 (check_router): all 9 cases pass"), null);  // not 3's check
  // Two verdicts in one output: the first printed, as the page has always read it.
  const both = "PASS  exercise 6 (check_router): all 9 cases pass\nPASS  exercise 3 (check_conflict_policy): all 5 cases pass";
  assert.equal(passedIn(PAGE.exercises, both)?.number, 6);
});

test("the exercise page's path is the data's page from the site's root, wherever the reader is", () => {
  assert.equal(exercisePagePath(PAGE, "http://127.0.0.1:8000/book/15_02_one_shot_rag.html", "../"),
               "/book/15_11_exercises.html");
  assert.equal(exercisePagePath(PAGE, "http://127.0.0.1:8000/index.html", ""), "/book/15_11_exercises.html");
  assert.equal(exercisePagePath(PAGE, "https://example.org/site/book/15_11_exercises.html#exercise-3", "../"),
               "/site/book/15_11_exercises.html");
  assert.throws(() => exercisePagePath(PAGE, "http://127.0.0.1:8000/index.html", undefined), /no data-content_root/);
});
