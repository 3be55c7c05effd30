// output.mjs's bound(): what of a long stream a cell shows (the first and last 100 lines,
// at most the first and last 2,500 characters of them) and what it says it hides.
import { test } from "node:test";
import assert from "node:assert/strict";
import { installBrowser } from "./browser_stub.mjs";

installBrowser();
const { bound } = await import("../../runnable_book/sphinx_ext/runner/output.mjs");

const lines = (n, width = 1) => Array.from({ length: n }, (_, i) => String(i).padStart(width, "0")).join("\n") + "\n";

test("a short output is shown whole", () => {
  assert.equal(bound(""), null);
  assert.equal(bound("hello\n"), null);
  assert.equal(bound(lines(250)), null);  // up to 100 + 100 + 50 lines: all of it
});

test("a long output shows its first and last hundred lines, and counts the rest", () => {
  const text = lines(10_000, 5);
  const shown = bound(text);
  assert.ok(shown);
  assert.equal(shown.head, lines(100, 5));
  assert.equal(shown.tail, text.split("\n").slice(-101).join("\n"));
  assert.equal(shown.hidden, "9,800 lines");
  assert.equal(shown.head.split("\n").length - 1, 100);
  assert.equal(shown.tail.split("\n").length - 1, 100);
});

test("the count of newlines passed in is the one used (kept as output arrives)", () => {
  const text = lines(1_000);
  const newlines = text.split("\n").length - 1;
  assert.deepEqual(bound(text, newlines), bound(text));
});

test("one over-long line shows its first and last 2,500 characters", () => {
  const text = "x".repeat(5_000_000);
  const shown = bound(text);
  assert.equal(shown.head.length, 2_500);
  assert.equal(shown.tail.length, 2_500);
  assert.equal(shown.hidden, `${(5_000_000 - 5_000).toLocaleString("en")} characters`);
});

test("up to 6,000 characters on few lines are shown whole", () => {
  assert.equal(bound("y".repeat(6_000)), null);
  assert.ok(bound("y".repeat(6_001)));
});

test("long lines and many: bounded by lines, then by characters, and both are said", () => {
  const text = Array.from({ length: 1_000 }, (_, i) => `${i} ${"z".repeat(200)}`).join("\n") + "\n";
  const shown = bound(text);
  assert.equal(shown.head.length, 2_500);
  assert.equal(shown.tail.length, 2_500);
  assert.ok(text.startsWith(shown.head) && text.endsWith(shown.tail));
  assert.match(shown.hidden, /^800 lines \([\d,]+ characters\)$/);
  assert.equal(shown.hidden, `800 lines (${(text.length - 5_000).toLocaleString("en")} characters)`);
});

test("what is shown plus what is hidden is the whole output", () => {
  for (const text of [lines(300), lines(5_000, 4), "a\n".repeat(260), "q".repeat(7_000) + "\n" + lines(400)]) {
    const shown = bound(text);
    assert.ok(shown, text.length);
    assert.ok(text.startsWith(shown.head));
    assert.ok(text.endsWith(shown.tail));
    assert.ok(shown.head.length + shown.tail.length < text.length);
  }
});

test("Show all's pieces: at most the piece size, cut after a newline, never inside a sequence or a pair", async () => {
  const { pieceEnd } = await import("../../runnable_book/sphinx_ext/runner/output.mjs");
  const text = lines(10_000, 5);
  assert.equal(pieceEnd(text, 0, 100, 1_000), 100);  // the rest fits
  const end = pieceEnd(text, 0, text.length, 1_000);
  assert.ok(end <= 1_000 && text[end - 1] === "\n", end);
  const line = "y".repeat(999) + "\x1b[31m" + "z".repeat(100);  // no newline: cut before the sequence
  assert.equal(pieceEnd(line, 0, line.length, 1_001), 999);
  const emoji = "y".repeat(999) + "😀" + "z";  // the surrogate pair stays whole
  assert.equal(pieceEnd(emoji, 0, emoji.length, 1_000), 999);
  let at = 0;
  const pieces = [];
  while (at < text.length) pieces.push(text.slice(at, at = pieceEnd(text, at, text.length, 4_096)));
  assert.equal(pieces.join(""), text);
});
