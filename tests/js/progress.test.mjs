// progress.mjs's Progress: the exercises a reader has done, one localStorage entry shared by
// the tabs; a change is applied to what is stored now (read, apply, write), so a mark made
// in one tab never erases another's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { installBrowser, makeTab } from "./browser_stub.mjs";

const PAGE = "/book/15_11_exercises.html";
const KEY = "browser-run:v1:progress:" + PAGE;
let storage = installBrowser(PAGE);
// (Its import runs start(), which finds no #book-exercises data in the stub: nothing.)
const { Progress } = await import("../../runnable_book/sphinx_ext/runner/progress.mjs");

function origin() { storage = installBrowser(PAGE); }
function openTab() {
  const tab = makeTab(storage).enter();
  const progress = new Progress(PAGE);
  progress.entry.total = 7;  // (start() sets it from the page's exercises)
  return { tab, progress };
}
const stored = () => JSON.parse(storage.getItem(KEY));

test("a mark and a passing check are kept; cleared, none is", () => {
  origin();
  const { progress } = openTab();
  progress.set(1, "marked");
  progress.set(3, "check");
  assert.deepEqual(stored(), { v: 1, total: 7, done: { 1: "marked", 3: "check" } });
  assert.equal(progress.count(), 2);
  assert.equal(progress.isDone(3), true);
  progress.set(1, null);
  assert.deepEqual(stored().done, { 3: "check" });
  progress.clear();
  assert.deepEqual(stored().done, {});
});

test("two tabs: each change is applied to what is stored, the other tab's marks kept", () => {
  origin();
  const a = openTab();
  const b = openTab();
  a.tab.enter();
  a.progress.set(2, "marked");
  b.tab.enter();
  b.progress.set(5, "check");  // b never heard of 2: it is kept all the same
  assert.deepEqual(stored().done, { 2: "marked", 5: "check" });
  assert.deepEqual(b.progress.entry.done, { 2: "marked", 5: "check" });
  a.tab.enter();
  a.progress.set(2, null);
  assert.deepEqual(stored().done, { 5: "check" });
});

test("a tab hears the other's writes and tells its listeners", () => {
  origin();
  const a = openTab();
  const b = openTab();
  let told = 0;
  a.progress.onChange(() => { told += 1; });
  b.tab.enter();
  b.progress.set(4, "marked");
  a.tab.hear(KEY);
  assert.equal(told, 1);
  assert.equal(a.progress.isDone(4), true);
  a.tab.hear("browser-run:v1:something-else");
  assert.equal(told, 1);
  storage.removeItem(KEY);
  a.tab.hear(null);  // the storage was cleared
  assert.equal(told, 2);
  assert.equal(a.progress.count(), 0);
  assert.equal(a.progress.entry.total, 7);
});

test("an unreadable entry is said, ignored, and replaced on the next change", () => {
  origin();
  storage.setItem(KEY, JSON.stringify({ v: 1, total: 7, done: { 1: "maybe" } }));
  const { progress } = openTab();
  assert.match(progress.problem, /could not be read/);
  assert.equal(progress.count(), 0);
  progress.set(6, "marked");
  assert.deepEqual(stored(), { v: 1, total: 7, done: { 6: "marked" } });
});

test("storage refused: progress lasts for the visit, and says so", () => {
  origin();
  window.bookStorageRefused = true;
  const progress = new Progress(PAGE);
  assert.match(progress.problem, /does not let the page keep your progress/);
  progress.set(1, "marked");
  assert.equal(progress.isDone(1), true);
  assert.equal(storage.getItem(KEY), null);
});

test("storage full: a tab that could not keep its progress keeps it for the visit, whatever another tab writes", () => {
  origin();
  const a = openTab();
  const b = openTab();
  a.tab.enter();
  const setItem = storage.setItem;
  storage.setItem = () => { throw new Error("QuotaExceededError"); };
  a.progress.set(1, "marked");
  storage.setItem = setItem;
  assert.match(a.progress.problem, /did not keep your progress/);
  b.tab.enter();
  b.progress.set(4, "marked");
  a.tab.enter();
  a.tab.hear(KEY);
  assert.equal(a.progress.isDone(1), true);  // (it once read the storage it no longer had: all marks gone)
  assert.deepEqual(stored().done, { 4: "marked" });
});
