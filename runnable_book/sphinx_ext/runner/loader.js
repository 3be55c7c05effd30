/* "Run in your browser": the loader every page with code cells carries inline (ours;
   runnable_book/sphinx_ext/runner/__init__.py adds it, and fills in the two values below). It only
   draws the controls; Python, the editor and runner.mjs load when the reader clicks. The
   controls' style is in runnable_book/sphinx_ext/static/runnable-book.css: a <style> added here made the browser
   restyle the whole page at load (about 100 ms at a phone's speed, Lighthouse's TBT). */
(() => {
  const LABEL = "Run in your browser";
  // What the click downloads, summed at build time from the files themselves (the figure
  // `make bench-run` measures as "served cold"), and this page's reader's notebook.
  const DOWNLOAD_BYTES = Number("__BROWSER_RUN_BYTES__");
  // Of which Python's snapshot, which a first visit on a slow network goes without (worker.mjs).
  const SNAPSHOT_BYTES = Number("__BROWSER_RUN_SNAPSHOT_BYTES__");
  const NOTEBOOK = "__BROWSER_RUN_NOTEBOOK__";
  // The packages this page's cells import that Python loads on demand (matplotlib, on a page
  // with figures): loaded from the click on, while the earlier cells run. (Not for the
  // imports of folded worked solutions alone: those load when such a cell runs.)
  const PRELOAD = JSON.parse('__BROWSER_RUN_PRELOAD__');
  // What the page's first figure fetches once Python is up (matplotlib and its packages, the
  // first figure's compiled imports), as the build wrote them; and when: "click" (a cell the
  // reader sees draws: preloaded from the click on), "solutions" (only folded worked solutions
  // draw: on running one), "" (no cell draws).
  const FIGURE_BYTES = Number("__BROWSER_RUN_FIGURE_BYTES__");
  const FIGURES = /** @type {string} */ ("__BROWSER_RUN_FIGURES__");
  const megabytes = (/** @type {number} */ bytes) => Math.round(bytes / 1e6);
  // "Up to": on a slow network Python starts without its snapshot, and the download is smaller.
  const DOWNLOAD_TEXT = `up to ${megabytes(DOWNLOAD_BYTES)} MB`;
  // What the click downloads on this page, figures included, as the button's line says it.
  const CLICK_TEXT = FIGURES === "click"
    ? `up to ${megabytes(DOWNLOAD_BYTES + FIGURE_BYTES)} MB: Python ${megabytes(DOWNLOAD_BYTES)} MB and its figures ${megabytes(FIGURE_BYTES)} MB`
    : FIGURES === "solutions"
      ? `${DOWNLOAD_TEXT}, and ${megabytes(FIGURE_BYTES)} MB more for figures when you run a worked solution that draws one`
      : DOWNLOAD_TEXT;
  const SERVE_HINT = "Running needs the book served over http, not opened as a file: in the " +
    "book's folder run `python -m http.server -d _build/html`, then open http://localhost:8000/.";
  // Where runner.mjs keeps the reader's edits of this page (storage.mjs, PREFIX + path).
  const KEPT = "browser-run:v1:" + location.pathname;
  // (tsc: the bar and its status exist before any control that calls start or prestart.)
  /** @type {HTMLSpanElement} */ let status;
  /** @type {HTMLDivElement} */ let bar;
  /** @type {Promise<unknown> | null} */ let loading = null;
  /** @type {Promise<unknown> | undefined} */ let prestarting;

  // Registered now, before the theme's scripts run, so it is the first window-level key
  // listener: once the runner has loaded, keys typed in its editors are kept from the
  // page's own shortcuts (keys.mjs says how). Until then it does nothing.
  window.addEventListener("keydown", (event) => {
    if (window.browserRunKeys) window.browserRunKeys(event);
  }, true);

  /** @param {string} cls @param {string} text */
  function button(cls, text) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn btn-sm browser-run-start " + cls;
    b.textContent = text;
    b.addEventListener("click", start);
    b.addEventListener("pointerenter", prestart);
    b.addEventListener("focus", prestart);
    return b;
  }
  // Python started before the click (prestart.mjs says when it does start): for a reader who
  // ran code in this book before (boot.mjs remembers it) once the page has loaded, or when the
  // pointer or the focus reaches a control; never with the data saver on or after "Don't
  // start Python early" (prestart.mjs's EARLY).
  const STARTED_BEFORE = "browser-run:v1:python-started";
  const EARLY = "browser-run:v1:start-early";
  /** @param {string} key */
  function stored(key) {
    try { return window.localStorage.getItem(key); } catch (error) { return null; }
  }
  function prestart() {
    const saveData = navigator.connection && navigator.connection.saveData;
    if (loading || prestarting || saveData || stored(EARLY) === "no" || location.protocol === "file:") return;
    const root = document.documentElement.dataset.content_root || "";
    prestarting = import(new URL(root + "_static/runner/prestart.mjs", location.href).href)
      .then((early) => early.prestart({ bar, preload: PRELOAD }))
      .catch(() => {}); // the click starts Python as usual
  }
  function keptWork() {
    try { return window.localStorage.getItem(KEPT) != null; } catch (error) { return false; }
  }
  function start() {
    if (location.protocol === "file:") {
      status.textContent = SERVE_HINT;
      bar.scrollIntoView({ block: "center" });
      return;
    }
    bar.scrollIntoView({ block: "start" });
    if (loading) {
      /* Already running: the header's button leads to the page's controls. */
      loading.then(() => { const runAll = /** @type {HTMLElement | null} */ (bar.querySelector(".browser-run-run-all")); if (runAll) runAll.focus(); });
      return;
    }
    status.textContent = "Loading the editor and Python…";
    (window.browserRunTimings ||= []).push({ step: "click", at: performance.timeOrigin + performance.now() });
    const root = document.documentElement.dataset.content_root || "";
    const runnerFile = (/** @type {string} */ name) => new URL(root + "_static/runner/" + name, location.href).href;
    // Python starts at once (boot.mjs), while the editor and the runner load beside it.
    const booting = import(runnerFile("boot.mjs")).then((boot) => {
      boot.showDownload(bar, { bytes: DOWNLOAD_BYTES, snapshotBytes: SNAPSHOT_BYTES,
        figureBytes: FIGURES === "click" ? FIGURE_BYTES : 0 });
      boot.bootPython();
      boot.preloadPackages(PRELOAD);
    });
    loading = Promise.all([import(runnerFile("runner.mjs")), booting])
      .then(([runner]) => runner.start({
        bar, status, download: { bytes: DOWNLOAD_BYTES, text: DOWNLOAD_TEXT, figureBytes: FIGURE_BYTES },
        notebook: new URL(root + NOTEBOOK, location.href).href,
      }))
      .catch((error) => {
        loading = null;
        // Offline, before anything of the runner was kept: one sentence, as the worker says it.
        status.textContent = !navigator.onLine || /fetch|network/i.test(error.message)
          ? "Python is not stored for offline use yet: run any page once online, or keep the book " +
            "for offline use (the page's footer)."
          : "Could not load the runner: " + error.message;
      });
  }
  document.addEventListener("DOMContentLoaded", () => {
    const first = document.querySelector("main div.cell");
    if (!first) return;
    status = document.createElement("span");
    status.className = "browser-run-status";
    status.setAttribute("role", "status");  /* an aria-live region: loading steps are announced */
    bar = document.createElement("div");
    bar.className = "browser-run-bar";
    status.textContent = keptWork()
      ? "Your edits to this page are kept in this browser: click to get them back and run them " +
        `(Python runs in your browser; the first click downloads ${CLICK_TEXT}, cached afterwards).`
      : "Edit and run this page's code here: Python runs in your browser " +
        `(the first click downloads ${CLICK_TEXT}, cached afterwards).`;
    bar.append(button("browser-run-at-cell", "▶ " + LABEL), status);
    first.before(bar);
    const header = document.querySelector(".article-header-buttons");
    if (header) header.prepend(button("browser-run-in-header", "▶ Run"));
    const headerButton = header && header.querySelector(".browser-run-in-header");
    if (headerButton) headerButton.setAttribute("aria-label", LABEL);
    if (stored(STARTED_BEFORE)) window.addEventListener("load", prestart);
  });
})();
