// Python started before the click (ours), so a returning reader's first output comes about a
// second after it: Pyodide's start is mostly compiling and initialising, not downloading, so a
// warm HTTP cache alone saves little.
//
// The loader imports this module only when starting early is cheap and expected: the reader
// has run code in this book before in this browser (boot.mjs remembers it), or moves the
// pointer or the keyboard focus onto a "Run in your browser" control; never with the browser's
// data saver on, and never once the reader said no. Here the last condition: every runtime
// file must already be in the HTTP cache (fetches with `cache: "only-if-cached"` fail rather
// than download), so a first visit, or a cache that was emptied, downloads nothing unasked.
// On a page with figures, matplotlib loads early too when all its wheels are cached.
//
// A Python started early is said in the bar, with a button to stop it and not start early
// again. It has run nothing of the page: the reader's click adopts it (runner.mjs, through
// boot.mjs) and the cells run in it as in one started by the click.
import { bootPython, preloadPackages, stopWaiting } from "./boot.mjs";
import { button, el } from "./dom.mjs";

// "no": the reader asked not to start Python early (the loader reads it too).
export const EARLY = "browser-run:v1:start-early";
// Pyodide's files the worker loads before Python is up (the Makefile's PYODIDE_FILES; the
// WebAssembly as its gzipped copy, downloads.mjs).
const RUNTIME = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm.gz", "python_stdlib.zip", "pyodide-lock.json"];
// The editor and the runner: compiled now, so the click only has to draw the cells.
const RUNNER = "./runner.mjs";

let started = false;

/** @param {string[]} names */
async function allCached(names) {
  /** @param {string} name */
  const cached = async (name) => {
    const response = await fetch(new URL(`../pyodide/${name}`, import.meta.url),
      { cache: "only-if-cached", mode: "same-origin" });
    if (response.body) response.body.cancel(); // its headers say it is there: the body is not needed
    return response.ok;
  };
  try {
    return (await Promise.all(names.map(cached))).every(Boolean);
  } catch (error) {
    return false; // not cached: only-if-cached fails instead of downloading
  }
}

// The wheels loadPackage would fetch for these packages: theirs and their dependencies', by
// the runtime's pyodide-lock.json (cached with the runtime).
/** What is read of pyodide-lock.json.
 * @typedef {{packages: Record<string, {file_name: string, depends: string[]} | undefined>}} PyodideLock */
/** @param {string[]} names @returns {Promise<string[]>} */
async function wheelsOf(names) {
  const lock = /** @type {PyodideLock} */ (await (await fetch(new URL("../pyodide/pyodide-lock.json", import.meta.url))).json());
  /** @type {Set<string>} */
  const files = new Set();
  /** @param {string} name */
  const visit = (name) => {
    const entry = lock.packages[name];
    if (!entry || files.has(entry.file_name)) return;
    files.add(entry.file_name);
    entry.depends.forEach(visit);
  };
  names.forEach(visit);
  return [...files];
}

// bar: the loader's bar above the first cell (the note goes at its end); preload: the
// packages the page's cells import (matplotlib on a page with figures), loaded too when their
// wheels are cached as well. True when Python is starting.
/** @param {{bar: HTMLElement, preload?: string[]}} options @returns {Promise<boolean>} */
export async function prestart({ bar, preload = [] }) {
  if (started) return true;
  if (!(await allCached(RUNTIME)) || started) return started;
  const text = el("span", {});
  const stop = button("Don't start Python early", () => {
    stopWaiting();
    try { window.localStorage.setItem(EARLY, "no"); } catch (error) { /* only this page, then */ }
    text.textContent = "Python stopped: it will start when you click, and not before.";
    stop.remove();
  }, { cls: "browser-run-early-stop" });
  text.textContent = "Python is starting in this page, ready for your click (its files are in your " +
    "browser's cache from an earlier visit; nothing is downloaded).";
  const worker = bootPython({
    early: true,
    onMessage: (message) => {
      if (message.type === "ready") {
        text.textContent = `Python ${message.version} is ready in this page, started before your click ` +
          "from files already in your browser's cache. It has run nothing yet.";
      } else if (message.type === "failed") {
        text.textContent = "Python could not start early; it will start again when you click.";
        stopWaiting();
        stop.remove();
      }
    },
  });
  if (!worker) return false; // the reader clicked meanwhile: that Python is the page's
  started = true;
  bar.append(el("span", { class: "browser-run-early" }, text, " ", stop));
  import(RUNNER).catch(() => {}); // loaded again (and reported) on the click if it failed here
  if (preload.length && await allCached(await wheelsOf(preload).catch(() => ["(lock unread)"]))) {
    preloadPackages(preload);
  }
  return true;
}
