// The bar that shows Python's download (ours): bytes, percent and time left, moving as the
// bytes arrive.
//
// Why: on a slow phone line the start is minutes of download, and a line that said
// "Downloading Python: 0.5 of 19.7 MB…" stood unchanged for minutes while bytes arrived. Here
// the worker counts every body as it arrives (downloads.mjs) and says so every 250 ms; the page
// adds the runner's own files (editor, modules) once each has arrived, and redraws: a
// determinate <progress>, the megabytes to the hundredth (on a 50 KB/s line the figure moves
// five times a second), the percent, and the time left at the rate of the last seconds.
// Drawn by boot.mjs from the first progress that reports bytes until Python is ready.
import { el } from "./dom.mjs";

// The rate is taken over the last few seconds (a start's first files are small and their
// round trips dominate; later the line's own speed does).
const RATE_WINDOW_MS = 8000;

/** What the click downloads, as the loader announces it (the build sums the files).
 * @typedef {{bytes: number, snapshotBytes: number}} Announced */

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

// Bytes of the runner's own files (the page's modules, the editor, the worker's script) this page
// has fetched whole, as stored (resource timing's decoded size).
function runnerFilesBytes() {
  return /** @type {PerformanceResourceTiming[]} */ (performance.getEntriesByType("resource"))
    .filter((entry) => entry.name.includes("/_static/runner/"))
    .reduce((sum, entry) => sum + (entry.decodedBodySize || 0), 0);
}

export class DownloadBar {
  /** @param {HTMLElement} bar the loader's bar @param {Announced} announced */
  constructor(bar, announced) {
    this.bar = bar;
    this.announced = announced;
    /** @type {[number, number][]} (ms, bytes) of the last RATE_WINDOW_MS */
    this.samples = [];
    /** @type {HTMLProgressElement | null} */
    this.meter = null;
    /** @type {HTMLElement | null} */
    this.text = null;
    /** @type {HTMLElement | null} */
    this.box = null;
    /** @type {ReturnType<typeof setInterval> | null} the seconds of Python's start, counted */
    this.ticking = null;
  }

  /** The worker's progress @param {import("./messages.mjs").ProgressMessage} message */
  update(message) {
    if (!message.bytes && !this.box) return;  // nothing downloaded yet (or all cached): nothing to show
    const total = this.announced.bytes - (message.snapshot === false ? this.announced.snapshotBytes : 0);
    const loaded = Math.min(message.bytes + runnerFilesBytes(), total);
    const now = performance.now();
    this.samples.push([now, loaded]);
    while (this.samples.length > 2 && now - this.samples[0][0] > RATE_WINDOW_MS) this.samples.shift();
    const [since, sinceBytes] = this.samples[0];
    const rate = (loaded - sinceBytes) / Math.max((now - since) / 1000, 0.001);
    const seconds = now - since < 1000 || rate <= 0 ? Infinity : (total - loaded) / rate;
    this.show();
    const meter = /** @type {HTMLProgressElement} */ (this.meter);
    meter.max = total;
    meter.value = loaded;
    const percent = Math.floor((loaded / total) * 100);
    if (!message.downloading) {
      meter.value = total;  // (every file in: what was not counted came from elsewhere)
      this.starting(total);
      return;
    }
    /** @type {HTMLElement} */ (this.text).textContent =
      `Downloading Python: ${megabytes(loaded)} of ${megabytes(total)} MB (${percent}%), ${timeLeft(seconds)}`;
  }

  // Every file in: Python starts, seconds of the interpreter's own work, counted as they pass
  // (the worker says nothing meanwhile: its thread is busy).
  /** @param {number} total */
  starting(total) {
    this.show();
    if (this.ticking) return;
    const since = performance.now();
    const say = () => {
      this.show();
      const seconds = Math.round((performance.now() - since) / 1000);
      /** @type {HTMLElement} */ (this.text).textContent =
        `Downloaded Python (${megabytes(total)} MB); starting it…${seconds ? ` ${seconds} s` : ""}`;
    };
    say();
    this.ticking = setInterval(say, 1000);
  }

  // (Shown again after the runner redraws the loader's bar with its own controls.)
  show() {
    if (this.box) {
      if (!this.box.isConnected) this.bar.append(this.box);
      return;
    }
    this.meter = /** @type {HTMLProgressElement} */ (el("progress", { class: "browser-run-downloading-meter",
      "aria-label": "Python's download" }));
    this.text = el("span", { class: "browser-run-downloading-text" });
    this.box = el("div", { class: "browser-run-downloading" }, this.meter, " ", this.text);
    this.bar.append(this.box);
  }

  // Python is up (or could not start): the bar goes, the status line says the rest.
  finish() {
    if (this.box) this.box.remove();
    if (this.ticking) clearInterval(this.ticking);
    this.box = this.ticking = null;
    this.samples = [];
  }
}
