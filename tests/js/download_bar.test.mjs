// The download bar's arithmetic (runnable_book/sphinx_ext/runner/download_bar.mjs), on a stub page and a
// clock of our own: its total is fixed at the click and never shrinks (a start without the
// snapshot counts it as skipped), on a page that draws it goes on through the figures'
// packages, and its time left neither shows before it means something nor swings with bursts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { installBrowser } from "./browser_stub.mjs";

installBrowser("/book/15_04_quality_and_cost.html");
// Just enough DOM for the bar: elements with attributes, children and text.
const element = (tag) => ({
  tag, children: [], dataset: {}, attributes: {}, textContent: "", isConnected: false, max: 1, value: 0,
  setAttribute(name, value) {
    this.attributes[name] = value;
    if (name.startsWith("data-")) this.dataset[name.slice(5)] = value;
  },
  append(...children) {
    for (const child of children) {
      if (typeof child === "object") { this.children.push(child); child.isConnected = true; }
    }
  },
  remove() { this.isConnected = false; },
});
globalThis.document.createElement = element;
let clock = 0;
performance.now = () => clock;
performance.getEntriesByType = () => [];

const { DownloadBar } = await import("../../runnable_book/sphinx_ext/runner/download_bar.mjs");

const MB = 1e6;
const announced = { bytes: 13 * MB, snapshotBytes: 5 * MB, figureBytes: 16 * MB };
/** @param {object} [extra] */
const progress = (bytes, extra = {}) => ({ type: "progress", files: 0, bytes, downloading: true, snapshot: null, figures: null, ...extra });

function freshBar() {
  clock = 0;
  const bar = new DownloadBar(element("div"), announced);
  bar.newStart();
  return bar;
}

test("the total is fixed at the click, figures included, and a skipped snapshot counts as done", () => {
  const bar = freshBar();
  bar.update(progress(1 * MB));
  assert.equal(bar.meter.max, 29 * MB);
  clock += 1000;
  bar.update(progress(2 * MB, { snapshot: false }));
  assert.equal(bar.meter.max, 29 * MB, "the total shrank");
  assert.equal(bar.meter.value, 7 * MB);
  assert.equal(bar.box.dataset.arrived, String(2 * MB), "what arrived is not what is done");
  assert.match(bar.text.textContent, /^Downloading Python: 7\.00 of 29\.0 MB \(24%\), working out the time left$/);
});

test("on a page that draws, the bar stays once Python is up and follows the figures' packages", () => {
  const bar = freshBar();
  bar.update(progress(13 * MB));
  bar.update(progress(13 * MB, { downloading: false }));
  assert.match(bar.text.textContent, /^Downloaded Python; starting it…: 13\.0 of 29\.0 MB \(44%\)$/);
  bar.stopTicking();
  bar.ready();
  assert.ok(bar.box.isConnected, "the bar went while the figures were still to come");
  assert.match(bar.text.textContent, /^Python is up; the figures' packages come next/);
  bar.update(progress(20 * MB, { figures: "loading" }));
  assert.match(bar.text.textContent, /^Downloading the figures' packages: 20\.0 of 29\.0 MB \(68%\)/);
  bar.finish();
  assert.equal(bar.box, null);
});

test("a new Python (Stop, Try again) gets a bar of its own, without the figures", () => {
  const bar = freshBar();
  bar.update(progress(3 * MB));
  bar.newStart();
  bar.update(progress(1 * MB));
  assert.equal(bar.meter.max, 13 * MB);
  bar.ready();
  assert.equal(bar.box, null, "the bar waited for figures no one loads");
});

test("the time left shows after a few seconds of download, then follows a bursty line smoothly", () => {
  const bar = freshBar();
  let bytes = 0;
  const shown = [];
  for (let step = 1; step <= 240; step += 1) {  // a minute, every 250 ms: bursts of 0 and 200 KB/s
    clock = step * 250;
    bytes += step % 8 < 4 ? 50_000 : 0;
    bar.update(progress(bytes));
    const left = /about (?:(\d+) min )?(?:(\d+) s )?left/.exec(bar.text.textContent);
    if (step * 250 < 3000) assert.match(bar.text.textContent, /working out the time left/);
    if (left) shown.push(Number(left[1] || 0) * 60 + Number(left[2] || 0));
  }
  assert.ok(shown.length > 200);
  const changes = shown.slice(1).map((seconds, i) => Math.abs(seconds - shown[i]) / shown[i]);
  assert.ok(Math.max(...changes) < 0.1, `the time left jumped: ${Math.max(...changes)}`);
});
