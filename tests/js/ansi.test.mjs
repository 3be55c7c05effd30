// ansi.mjs: a cell's stream as JupyterLab draws it (its class names and its rules: bold makes the
// eight normal colours intense, inverse swaps, 256-colour and 24-bit colours as styles, other
// escape sequences dropped), a carriage return writing over its line, and the end of a stream
// held back while an escape sequence is still arriving.
import { test } from "node:test";
import assert from "node:assert/strict";
import { installBrowser } from "./browser_stub.mjs";

installBrowser();
const { ansiRuns, drawableLength, initialState, overwrite } = await import("../../runnable_book/sphinx_ext/runner/ansi.mjs");

const ESC = "\x1b";
const runs = (text, state) => ansiRuns(text, state).runs.map(({ text: t, classes, style }) =>
  [t, classes.join(" "), style].filter((value, i) => i === 0 || value));

test("text without escape sequences is one plain run", () => {
  assert.deepEqual(runs("hello\nworld\n"), [["hello\nworld\n"]]);
  assert.deepEqual(runs(""), []);
});

test("the eight colours and their intense forms, as JupyterLab's classes", () => {
  assert.deepEqual(runs(`${ESC}[31mred${ESC}[0m plain`), [["red", "ansi-red-fg"], [" plain"]]);
  assert.deepEqual(runs(`${ESC}[92mbright${ESC}[39m`), [["bright", "ansi-green-intense-fg"]]);
  assert.deepEqual(runs(`${ESC}[44mon blue${ESC}[49m`), [["on blue", "ansi-blue-bg"]]);
  assert.deepEqual(runs(`${ESC}[103mon yellow`), [["on yellow", "ansi-yellow-intense-bg"]]);
});

test("bold makes a normal colour intense, and says bold; reset and 22 end it", () => {
  assert.deepEqual(runs(`${ESC}[1;31mx${ESC}[22my${ESC}[0mz`),
    [["x", "ansi-red-intense-fg ansi-bold"], ["y", "ansi-red-fg"], ["z"]]);
  assert.deepEqual(runs(`${ESC}[1mbold`), [["bold", "ansi-bold"]]);
  assert.deepEqual(runs(`${ESC}[4munder${ESC}[24m`), [["under", "ansi-underline"]]);
});

test("inverse swaps the colours, and the default ones by class", () => {
  assert.deepEqual(runs(`${ESC}[7minv`), [["inv", "ansi-default-inverse-fg ansi-default-inverse-bg"]]);
  assert.deepEqual(runs(`${ESC}[31;7mx`), [["x", "ansi-default-inverse-fg ansi-red-bg"]]);
});

test("256-colour and 24-bit colours are inline styles; the first 16 of 256 are the classes", () => {
  assert.deepEqual(runs(`${ESC}[38;5;208mo`), [["o", "color: rgb(255, 135, 0)"]]);
  assert.deepEqual(runs(`${ESC}[38;5;9mr`), [["r", "ansi-red-intense-fg"]]);
  assert.deepEqual(runs(`${ESC}[38;5;244mg`), [["g", "color: rgb(128, 128, 128)"]]);
  assert.deepEqual(runs(`${ESC}[48;2;0;0;128mnavy`), [["navy", "background-color: rgb(0, 0, 128)"]]);
});

test("other escape sequences are dropped: cursor moves, erasing, titles and links", () => {
  assert.deepEqual(runs(`a${ESC}[2Kb${ESC}[1Ac`), [["abc"]]);
  assert.deepEqual(runs(`${ESC}]0;title\x07text`), [["text"]]);
  assert.deepEqual(runs(`${ESC}]8;;https://example.org${ESC}\\link${ESC}]8;;${ESC}\\`), [["link"]]);
  assert.deepEqual(runs(`${ESC}[31;?mnot red`), [["not red"]]);  // not a colour code: ignored
});

test("the state at the end of one piece is the start of the next", () => {
  const first = ansiRuns(`${ESC}[32mgreen `);
  assert.deepEqual(runs("still green", first.state), [["still green", "ansi-green-fg"]]);
  assert.deepEqual(initialState(), { fg: null, bg: null, bold: false, underline: false, inverse: false });
});

test("a carriage return writes over its line; a backspace deletes; \\r\\n is a newline", () => {
  assert.equal(overwrite("progress 10%\rprogress 100%\n"), "progress 100%\n");
  assert.equal(overwrite("abcdef\rXY"), "XYcdef");
  assert.equal(overwrite("one\r\ntwo\r\n"), "one\ntwo\n");
  assert.equal(overwrite("ab\bc"), "ac");
  assert.equal(overwrite("a\rb\nc\rd"), "b\nd");
  assert.equal(overwrite("plain\n"), "plain\n");
});

test("an escape sequence still arriving is held back; a complete one is drawn", () => {
  assert.equal(drawableLength("text"), 4);
  assert.equal(drawableLength(`red ${ESC}[3`), 4);
  assert.equal(drawableLength(`red ${ESC}`), 4);
  assert.equal(drawableLength(`red ${ESC}[31m`), 9);
  assert.equal(drawableLength(`${ESC}[31mred`), 8);
  assert.equal(drawableLength(`${ESC}]0;title`), 0);
  const long = "x".repeat(5_000_000);
  assert.equal(drawableLength(long), long.length);  // (only the end is read)
});
