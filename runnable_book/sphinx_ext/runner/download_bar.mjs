// The bar that shows what the click downloads (ours): bytes, percent and time left, moving as
// the bytes arrive, from the click to the first output (a page that draws: its figures' too).
//
// Why: on a slow phone line the start is minutes of download, and a line that said
// "Downloading Python: 0.5 of 19.7 MB…" stood unchanged for minutes while bytes arrived. Here
// the worker counts every body as it arrives (downloads.mjs) and says so every 250 ms; the page
// adds the runner's own files (editor, modules) once each has arrived, and redraws: a
// determinate <progress>, the megabytes to the hundredth (on a 50 KB/s line the figure moves
// five times a second), the percent, and the time left at the rate of the last seconds.
// Drawn by boot.mjs from the first progress that reports bytes until Python is ready, or on a
// page that draws until its figures' packages are in (before, they had no bar: "Running cell
// 5…" for 303 s on a 50 KB/s line).
import { el } from "./dom.mjs";

// The rate is taken over the last seconds of download (a start's first files are small and their
// round trips dominate; later the line's own speed does), and the time left is said only once
// that window holds MIN_RATE_MS of it. The seconds shown follow the estimate smoothly (each
// update moves them SMOOTHING of the way): on a 50 KB/s line the bursts of a shared link made
// an 8 s window's estimate swing between 19 s and 6 min while about 100 s remained.
const RATE_WINDOW_MS = 10_000;
const MIN_RATE_MS = 3000;
const SMOOTHING = 0.15;

/** What the click downloads, as the loader announces it (the build sums the files): Python's
 * files (`bytes`, of which the snapshot's `snapshotBytes`) and, on a page whose seen cells draw,
 * the figures' (`figureBytes`: matplotlib's packages, first-figure.zip), preloaded from the click.
 * @typedef {{bytes: number, snapshotBytes: number, figureBytes?: number}} Announced */

/** @param {number} bytes */
const megabytes = (bytes) => (bytes / 1e6).toFixed(bytes < 10e6 ? 2 : 1);

/** "about 2 min 10 s left", "about 40 s left" @param {number} seconds */
export function timeLeft(seconds) {
  if (!Number.isFinite(seconds)) return "working out the time left";
  const rounded = seconds < 60 ? Math.max(1, Math.round(seconds)) : Math.round(seconds / 5) * 5;
  const minutes = Math.floor(rounded / 60);
  const rest = rounded % 60;
  const text = minutes ? `${minutes} min${rest ? ` ${rest} s` : ""}` : `${rest} s`;
  return `about ${text} left`;
}

// Bytes of the runner's own files (the page's modules, the editor, the worker's script) fetched
// whole since the click, as stored (resource timing's decoded size; the modules every page
// loads before the click are not this click's).
/** @param {number} since the click, as performance.now() */
function runnerFilesBytes(since) {
  return /** @type {PerformanceResourceTiming[]} */ (performance.getEntriesByType("resource"))
    .filter((entry) => entry.name.includes("/_static/runner/") && entry.startTime >= since)
    .reduce((sum, entry) => sum + (entry.decodedBodySize || 0), 0);
}

// One bar for everything the click fetches, from the click to the first output: Python's
// files, then on a page that draws the figures' packages (loaded once Python is up). Its total
// is fixed at the click and never shrinks: a start that goes without the snapshot (worker.mjs)
// counts the snapshot as skipped, done. Its count is the bytes that arrived (downloads.mjs
// counts each once). Its sentence is the only one about the download: the status line
// (runner.mjs) says nothing of it meanwhile.
export class DownloadBar {
  /** @param {HTMLElement} bar the loader's bar @param {Announced} announced */
  constructor(bar, announced) {
    this.bar = bar;
    this.announced = announced;
    this.figuresAhead = Boolean(announced.figureBytes);  // loaded once Python is up (worker.mjs's preload)
    this.total = announced.bytes + (announced.figureBytes || 0);
    this.starts = 0;  // Pythons started since the click (newStart)
    this.clickedAt = Math.min(performance.now(), ...(window.browserRunTimings || [])
      .filter((t) => t.step === "click").map((t) => t.at - performance.timeOrigin));
    /** @type {[number, number][]} (ms, bytes arrived) of the last RATE_WINDOW_MS of download */
    this.samples = [];
    /** @type {number | null} the seconds left shown last, and when */
    this.shownSeconds = null;
    this.shownAt = 0;
    this.done = 0;  // what the bar shows done: never less than before
    /** @type {"python" | "starting" | "up" | "figures"} */
    this.stage = "python";
    /** @type {HTMLProgressElement | null} */
    this.meter = null;
    /** @type {HTMLElement | null} */
    this.text = null;
    /** @type {HTMLElement | null} */
    this.box = null;
    /** @type {ReturnType<typeof setInterval> | null} the seconds of Python's start, counted */
    this.ticking = null;
    this.startedAt = 0;
  }

  /** The worker's progress @param {import("./messages.mjs").ProgressMessage} message */
  update(message) {
    if (!message.bytes && !this.box) return;  // nothing downloaded yet (or all cached): nothing to show
    const arrived = message.bytes + runnerFilesBytes(this.clickedAt);
    const skipped = message.snapshot === false ? this.announced.snapshotBytes : 0;
    this.done = Math.max(this.done, Math.min(arrived + skipped, this.total));
    this.show();
    const meter = /** @type {HTMLProgressElement} */ (this.meter);
    meter.max = this.total;
    meter.value = this.done;
    /** @type {HTMLElement} */ (this.box).dataset.arrived = String(arrived);
    if (skipped) /** @type {HTMLElement} */ (this.box).dataset.skipped = String(skipped);  // (for tests: done, never arrived)
    if (message.figures === "loading") this.stage = "figures";
    else if (this.stage === "python" && !message.downloading) this.stage = "starting";
    if (this.stage === "starting") {
      this.starting();
      return;
    }
    this.stopTicking();
    if (this.stage === "up") {
      this.say(`Python is up; the figures' packages come next: ${this.counted()}`);
      return;
    }
    const what = this.stage === "figures" ? "the figures' packages" : "Python";
    if (!message.downloading && this.done >= this.total) {  // (every byte in: the packages are unpacked)
      this.say(`Downloaded ${what}; unpacking them: ${this.counted()}`);
      return;
    }
    this.say(`Downloading ${what}: ${this.counted()}, ${timeLeft(this.secondsLeft(arrived))}`);
  }

  // "3.20 of 27.5 MB (11%)"
  counted() {
    return `${megabytes(this.done)} of ${megabytes(this.total)} MB (${Math.floor((this.done / this.total) * 100)}%)`;
  }

  // The time left at the rate of the last seconds of download, followed smoothly.
  /** @param {number} arrived */
  secondsLeft(arrived) {
    const now = performance.now();
    this.samples.push([now, arrived]);
    while (this.samples.length > 2 && now - this.samples[0][0] > RATE_WINDOW_MS) this.samples.shift();
    const [since, sinceBytes] = this.samples[0];
    const rate = (arrived - sinceBytes) / Math.max((now - since) / 1000, 0.001);
    if (now - since < MIN_RATE_MS || rate <= 0) return this.shownSeconds ?? Infinity;
    const estimate = (this.total - this.done) / rate;
    const passed = (now - this.shownAt) / 1000;
    const before = this.shownSeconds === null ? estimate : Math.max(this.shownSeconds - passed, 0);
    this.shownSeconds = before + SMOOTHING * (estimate - before);
    this.shownAt = now;
    return this.shownSeconds;
  }

  // Python's files in: Python starts, seconds of the interpreter's own work, counted as they
  // pass (the worker says nothing meanwhile: its thread is busy).
  starting() {
    this.samples = [];  // (no download meanwhile: the rate is the next download's)
    this.shownSeconds = null;
    if (this.ticking) return;
    this.startedAt = performance.now();
    const say = () => {
      const seconds = Math.round((performance.now() - this.startedAt) / 1000);
      this.say(`Downloaded Python; starting it…${seconds ? ` ${seconds} s` : ""}: ${this.counted()}`);
    };
    say();
    this.ticking = setInterval(say, 1000);
  }

  stopTicking() {
    if (this.ticking) clearInterval(this.ticking);
    this.ticking = null;
  }

  /** @param {string} text */
  say(text) {
    this.show();
    /** @type {HTMLElement} */ (this.text).textContent = text;
  }

  // A Python started (boot.mjs): the click's first, or a new one (Stop, Try again), which
  // downloads anew what is not cached and loads no figures ahead: a bar of its own.
  newStart() {
    this.starts += 1;
    if (this.starts === 1) return;
    this.finish();
    this.figuresAhead = false;
    this.total = this.announced.bytes;
    this.done = 0;
    this.stage = "python";
    this.shownSeconds = null;
  }

  // Python is up: the bar goes, unless the page's figures are still to come.
  ready() {
    if (!this.figuresAhead || !this.box || this.stage === "figures") {
      if (this.stage !== "figures") this.finish();
      return;
    }
    this.stage = "up";
    this.stopTicking();
    this.say(`Python is up; the figures' packages come next: ${this.counted()}`);
  }

  // (Shown again after the runner redraws the loader's bar with its own controls.)
  show() {
    if (this.box) {
      if (!this.box.isConnected) this.bar.append(this.box);
      return;
    }
    this.meter = /** @type {HTMLProgressElement} */ (el("progress", { class: "browser-run-downloading-meter",
      "aria-label": "What the click downloads" }));
    this.text = el("span", { class: "browser-run-downloading-text" });
    this.box = el("div", { class: "browser-run-downloading", "data-total": String(this.total) }, this.meter, " ", this.text);
    this.bar.append(this.box);
  }

  // Everything in (or the start failed): the bar goes, the status line says the rest.
  finish() {
    if (this.box) this.box.remove();
    this.stopTicking();
    this.box = null;
    this.samples = [];
  }
}
