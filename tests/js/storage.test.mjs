// storage.mjs's KeptWork: two tabs of one page share one localStorage entry; each writes
// only the cells it changed, merged into the entry as stored now (read, merge, write), so
// neither overwrites the other's edit of another cell, and a deleted added cell stays deleted.
import { test } from "node:test";
import assert from "node:assert/strict";
import { installBrowser, makeTab } from "./browser_stub.mjs";

const PAGE = "/book/15_03_agents.html";
const KEY = "browser-run:v1:" + PAGE;
let storage = installBrowser(PAGE);
const { KeptWork, digest } = await import("../../runnable_book/sphinx_ext/runner/storage.mjs");

// A fresh origin, and a tab of it with its KeptWork (what it heard from other tabs, its notices).
function origin() {
  storage = installBrowser(PAGE);
  document.documentElement.dataset = {};
}
function openTab() {
  const tab = makeTab(storage).enter();
  const heard = [];
  const notices = [];
  const kept = new KeptWork((text) => notices.push(text), PAGE, (entry) => heard.push(entry));
  return { tab, kept, heard, notices };
}
const stored = () => JSON.parse(storage.getItem(KEY));

test("digest: FNV-1a, 8 hex digits, differs when the code does", () => {
  assert.equal(digest(""), "811c9dc5");
  assert.match(digest("print(1)"), /^[0-9a-f]{8}$/);
  assert.notEqual(digest("print(1)"), digest("print(2)"));
});

test("an edit is kept with the digest of the book's code it was made on; undone, it goes", () => {
  origin();
  const { kept } = openTab();
  kept.setEdit(3, "x = 2", "x = 1");
  kept.save(true);
  assert.deepEqual(stored(), { v: 1, edits: { 3: { source: "x = 2", book: digest("x = 1") } }, added: [] });
  assert.equal(document.documentElement.dataset.keptWorkWrites, "1");
  kept.setEdit(3, "x = 1", "x = 1");
  kept.save(true);
  assert.equal(storage.getItem(KEY), null);  // nothing left: the entry is removed
});

test("two tabs editing different cells: each write keeps the other's edit", () => {
  origin();
  const a = openTab();
  const b = openTab();
  a.tab.enter();
  a.kept.setEdit(1, "a's code", "book 1");
  a.kept.save(true);
  b.tab.enter();
  b.kept.setEdit(2, "b's code", "book 2");
  b.kept.save(true);
  assert.deepEqual(Object.keys(stored().edits).sort(), ["1", "2"]);
  assert.equal(stored().edits[1].source, "a's code");
  assert.equal(stored().edits[2].source, "b's code");
  assert.equal(b.kept.edit(1).source, "a's code");  // b's entry is the merged one
});

test("a tab's unwritten change survives another tab's write it hears (storage event)", () => {
  origin();
  const a = openTab();
  const b = openTab();
  a.tab.enter();
  a.kept.setEdit(1, "a typing", "book 1");  // not written yet: a timer is pending
  assert.equal(a.kept.pending(1), true);
  b.tab.enter();
  b.kept.setEdit(1, "b's version", "book 1");
  b.kept.setEdit(2, "b's other", "book 2");
  b.kept.save(true);
  a.tab.hear(KEY);
  assert.equal(a.heard.length, 1);
  assert.equal(a.heard[0].edits[1].source, "b's version");  // handed to work.mjs to offer
  assert.equal(a.kept.edit(1).source, "a typing");  // a's own stays a's until it writes
  assert.equal(a.kept.edit(2).source, "b's other");
  a.kept.save(true);  // the later edit wins the cell it changed, the other cell kept
  assert.equal(stored().edits[1].source, "a typing");
  assert.equal(stored().edits[2].source, "b's other");
});

test("another tab's write of another page, or an unreadable one, is not handed on", () => {
  origin();
  const a = openTab();
  storage.setItem("browser-run:v1:/book/other.html", JSON.stringify({ v: 1, edits: {}, added: [] }));
  a.tab.hear("browser-run:v1:/book/other.html");
  storage.setItem(KEY, "{not json");
  a.tab.hear(KEY);
  assert.deepEqual(a.heard, []);
});

test("added cells: this tab's in its order, then other tabs' new ones; a deleted one stays deleted", () => {
  origin();
  const a = openTab();
  const b = openTab();
  a.tab.enter();
  a.kept.setAdded([{ id: "a1", after: "2", source: "one" }, { id: "a2", after: "a1", source: "two" }]);
  a.kept.save(true);
  b.tab.enter();
  b.kept.setAdded([{ id: "b1", after: "5", source: "bee" }]);
  b.kept.save(true);
  assert.deepEqual(stored().added.map((c) => c.id), ["b1", "a1", "a2"]);
  a.tab.enter();
  a.kept.setAdded([{ id: "a2", after: "2", source: "two" }]);  // a deleted a1
  a.kept.save(true);
  assert.deepEqual(stored().added.map((c) => c.id), ["a2", "b1"]);
  // a1 written back by a tab that still had it: this tab deleted it, so it stays deleted.
  assert.deepEqual(a.kept.mergeAdded([{ id: "a1", after: "2", source: "one" }]).map((c) => c.id), ["a2", "b1"]);
});

test("an unreadable entry is set aside with a notice, and the page starts from the book", () => {
  origin();
  storage.setItem(KEY, JSON.stringify({ v: 1, edits: { 1: { source: 5 } }, added: [] }));
  const a = openTab();
  assert.equal(a.notices.length, 1);
  assert.equal(a.kept.hasWork(), false);
  assert.equal(storage.getItem(KEY), null);
  assert.ok(storage.getItem("browser-run:v1:unreadable:" + PAGE));
});

test("an edit kept under a key that is no book cell's number is unreadable too", () => {
  // (work.mjs looks an added cell's edit up under its number, null: an entry with an edit
  // under "null" once passed, and restoring it threw.)
  for (const key of ["null", "x", "-1", "1.5"]) {
    origin();
    storage.setItem(KEY, JSON.stringify({ v: 1, edits: { [key]: { source: "print(1)", book: digest("x") } }, added: [] }));
    const a = openTab();
    assert.equal(a.notices.length, 1, key);
    assert.equal(a.kept.hasWork(), false, key);
  }
  origin();
  storage.setItem(KEY, JSON.stringify({ v: 1, edits: { 12: { source: "print(1)", book: digest("x") } }, added: [] }));
  assert.equal(openTab().notices.length, 0);
});

test("storage that cannot be reached when read: the storage notice, nothing set aside", () => {
  // (The probe at construction passed; the read itself throws, e.g. a profile gone away.
  // Nothing was read, so there is no unreadable copy to set aside, and "could not be read"
  // would be untrue: the edits are not kept, as when storage is refused.)
  origin();
  storage.setItem(KEY, JSON.stringify({ v: 1, edits: { 1: { source: "mine", book: digest("x") } }, added: [] }));
  const getItem = storage.getItem;
  storage.getItem = () => { throw new DOMException("gone", "InvalidStateError"); };
  try {
    const a = openTab();
    assert.equal(a.notices.length, 1);
    assert.match(a.notices[0], /cannot be kept in this browser/);
    assert.equal(a.kept.available, false);
    assert.equal(document.documentElement.dataset.keptWork, "unavailable");
  } finally {
    storage.getItem = getItem;
  }
  assert.equal(storage.getItem("browser-run:v1:unreadable:" + PAGE), null);
  assert.equal(stored().edits[1].source, "mine");  // the reader's copy left as it was
});

test("storage refused: one notice, nothing kept, edits still tracked in the tab", () => {
  origin();
  window.bookStorageRefused = true;
  const a = openTab();
  window.bookStorageRefused = true;  // (openTab entered a new window; the flag is read at construction)
  const refused = new KeptWork((text) => a.notices.push(text), PAGE);
  assert.equal(refused.available, false);
  assert.equal(document.documentElement.dataset.keptWork, "unavailable");
  refused.setEdit(1, "mine", "book");
  assert.equal(refused.edit(1).source, "mine");
  assert.equal(storage.getItem(KEY), null);
});

test("Clear my edits empties the entry for every tab", () => {
  origin();
  const a = openTab();
  a.kept.setEdit(1, "x", "y");
  a.kept.save(true);
  a.kept.clear();
  assert.equal(storage.getItem(KEY), null);
  assert.equal(a.kept.hasWork(), false);
});
