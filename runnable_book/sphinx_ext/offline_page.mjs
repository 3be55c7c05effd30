/* Every page of the HTML book: registers the book's service worker (sw.js, at the site's root;
   runnable_book/sphinx_ext/offline.py says what it keeps), asks it to keep the pages, says in the
   footer what is kept, offers the rest ("Keep this book for offline use (N MB)") and a new
   edition when one is ready.

   Data on the reader's word: after a first visit the worker keeps the pages and the search in
   the background (about 0.6 MB; in a book of several chapters, this page's chapter of them, and
   another chapter's on a visit to it), never with the data saver on (`navigator.connection.saveData`,
   Chrome's Save-Data); of Python and the figures, what the reader's runs loaded (from the
   browser's HTTP cache, no byte more); the PDF and the notebooks when opened; the rest of
   any group only when the reader keeps the whole book, or an output needs it (a file the
   worker serves is kept as it passes).

   No background download of the rest on a fast line either (navigator.connection's
   effectiveType): "4g" is what Chrome says for most Wi-Fi, a metered phone hotspot included,
   so it cannot tell a free line from a paid one, and a fast line is where fetching on use
   costs the reader least. Offline, what was not kept is said plainly where it is needed.

   <html data-offline> tells the tests where things stand: "unavailable" (no service worker, or
   storage refused; the book works online as before), "partial" (the worker serves the book,
   the pages are not all kept: the data saver, or still keeping), "ready" (the pages and the
   search are kept for offline use: in a book of several chapters, this page's chapter's), "update" (a new edition is kept and waits for the reader's
   word), "removed".

   Types (tsc, tsconfig.page.json): the worker's messages are in offline_types.d.ts. */
/** @typedef {import("./offline_types").FromOfflineWorker} FromOfflineWorker */
/** @typedef {import("./offline_types").KeptReport} KeptReport */
/** @typedef {import("./offline_types").ToOfflineWorker} ToOfflineWorker */
/** @typedef {"unavailable" | "partial" | "ready" | "update" | "removed"} OfflineState */
const root = document.documentElement;

const siteRoot = new URL(root.dataset.content_root || "./", location.href);  // the worker's scope
const WORKER_URL = new URL("sw.js", siteRoot).href;
// This page as the worker lists it (site-relative; a folder's page is its index.html).
const PAGE = (() => {
  const path = decodeURIComponent(location.pathname.slice(siteRoot.pathname.length));
  return path === "" || path.endsWith("/") ? path + "index.html" : path;
})();
const TOUCH_TARGET = "44px";  // WCAG 2.5.5: every control here is at least this tall on a phone
/** @type {Record<string, string>} the groups the footer names, in its order */
const NAMES = { pages: "the pages and the search", python: "Python", figures: "figures", pdf: "the PDF",
                notebooks: "the notebooks" };
let refused = false;  // the browser refused to store: said once, the same way everywhere

/** @param {OfflineState} state */
function say(state) { if (root.dataset.offline !== "update" || state === "removed") root.dataset.offline = state; }
const saveData = () => Boolean(navigator.connection && navigator.connection.saveData);
const megabytes = (/** @type {number} */ bytes) => (bytes / 1e6).toFixed(1);

/** @param {string} text @param {(event: MouseEvent) => unknown} onClick @param {boolean} [primary] */
function control(text, onClick, primary = false) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `btn btn-sm ${primary ? "btn-primary" : "btn-outline-secondary"} offline-control`;
  b.style.minHeight = TOUCH_TARGET;
  b.style.margin = "0.25rem 0.5rem 0.25rem 0";
  b.textContent = text;
  b.addEventListener("click", onClick);
  return b;
}

/* The notice of a new edition: it reloads into it only when the reader asks, or goes away on
   "Not now". Below the header (the runner's Stop bar takes the bottom of the window), so it
   hides neither the header's buttons nor the page's title. Kept edits and progress live in
   localStorage, which neither the worker nor the reload touch. */
/** @param {ServiceWorker} waiting */
function offerNewEdition(waiting) {
  if (document.querySelector(".offline-new-edition")) return;
  say("update");
  const notice = document.createElement("div");
  notice.className = "offline-new-edition";
  notice.setAttribute("role", "status");
  const header = document.querySelector(".bd-header-article") || document.querySelector(".bd-header");
  const place = () => {
    const below = header ? Math.max(header.getBoundingClientRect().bottom, 0) : 0;
    notice.style.top = `calc(${below}px + 0.5rem)`;
  };
  // In the theme's colours; styled here so the page's one stylesheet stays what every page loads.
  Object.assign(notice.style, {
    position: "fixed", right: "0.5rem", zIndex: "1040", maxWidth: "min(32rem, calc(100vw - 1rem))",
    padding: "0.5rem 0.75rem", borderRadius: "0.375rem",
    background: "var(--pst-color-surface)", color: "var(--pst-color-text-base)",
    border: "1px solid var(--pst-color-border)", boxShadow: "0 2px 8px rgba(0, 0, 0, 0.25)",
  });
  place();
  window.addEventListener("scroll", place, { passive: true });
  const text = document.createElement("p");
  text.style.margin = "0 0 0.25rem";
  text.textContent = "A new edition of this book is available. Your edits are kept.";
  const reload = control("Open the new edition", () => {
    navigator.serviceWorker.addEventListener("controllerchange", () => location.reload());
    tell(waiting, "take-new-edition");
  }, true);
  const dismiss = control("Not now", () => {
    window.removeEventListener("scroll", place);
    notice.remove();  // the next page load offers it again
  });
  notice.append(text, reload, dismiss);
  document.body.append(notice);
}

/* Honest about storage: a line in the page's footer says what this browser keeps for the
   book, what it does not, the size of the rest, and offers to keep it or to remove it. */
/** @param {...(string | Node)} parts */
function footerLine(...parts) {
  const footer = document.querySelector(".bd-footer-content__inner") || document.body;
  let line = document.querySelector(".offline-storage");
  if (!line) {
    line = document.createElement("p");
    line.className = "offline-storage";
    line.setAttribute("role", "status");
    footer.append(line);
  }
  line.replaceChildren(...parts);
}

function sayNotKept() {
  refused = true;
  say("unavailable");
  footerLine("This browser did not let the book keep an offline copy; it works online as before.");
}

// Every message to the worker goes through tell or ask, so tsc checks it against the
// worker's (offline_types.d.ts; postMessage itself takes anything).
/** @param {ServiceWorker} worker @param {ToOfflineWorker} message */
function tell(worker, message) { worker.postMessage(message); }

/** @param {ServiceWorker} worker @param {ToOfflineWorker} message @returns {Promise<KeptReport>} */
function ask(worker, message) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data);
    worker.postMessage(message, [channel.port2]);
  });
}

// With the URLs this page loaded: the worker keeps those from the browser's cache, not again
// from the network (the page was loaded before the worker controlled it). fromCacheOnly: the
// worker keeps only what is in that cache (what the reader's use loaded) and fetches nothing.
// page: this page, whose chapter's part of the pages the worker keeps (a book of several
// chapters); none on the reader's word to keep the whole book.
/** @param {ServiceWorker} worker @param {string[]} groups @param {boolean} [fromCacheOnly]
 *  @param {string} [page] */
function keepGroups(worker, groups, fromCacheOnly = false, page = undefined) {
  const loaded = [location.href, ...performance.getEntriesByType("resource").map((entry) => entry.name)];
  tell(worker, { type: "keep", groups, loaded, fromCacheOnly, page });
}

// What the reader's own use asked to keep: of Python once it ran, of the figures' packages
// once a figure was drawn, what was loaded (runner/boot.mjs calls window.bookOffline.keep). Remembered in this browser
// until the offline copy is removed, and asked again of the worker whenever it is active: on a
// first visit the run can end before the worker is, and the reader leave the page before it is.
// (Asking again costs nothing: the worker skips what it has kept, and reads the HTTP cache
// alone, where it also finds what a later output loaded past it, latex.mjs say.)
const WANTED = `book-offline:wanted:${siteRoot.pathname}`;
/** @returns {string[]} */
function wanted() {
  try {
    const groups = JSON.parse(localStorage.getItem(WANTED) || "[]");
    return Array.isArray(groups) ? groups.filter((group) => group in NAMES) : [];
  } catch (error) {
    return [];  // storage refused, or an entry no longer JSON: nothing remembered
  }
}
/** @type {ServiceWorker | null} */
let activeWorker = null;
window.bookOffline = {
  keep(groups) {
    try {
      localStorage.setItem(WANTED, JSON.stringify([...new Set([...wanted(), ...groups])]));
    } catch (error) { /* storage refused: asked of this visit's worker only */ }
    if (activeWorker) keepGroups(activeWorker, groups, true);
  },
};

/** @param {ServiceWorkerRegistration} registration */
async function sayWhatIsKept(registration) {
  const worker = registration.active;
  if (!worker || refused) return;
  const report = await ask(worker, { type: "what-is-kept", page: PAGE });
  const present = Object.keys(NAMES).filter((name) => report[name] && report[name].files);
  const complete = present.filter((name) => report[name].kept === report[name].files);
  // A book of several chapters whose pages are kept as far as a visit here keeps them: this
  // chapter's and what every page shares, said so, the other chapters' left to the reader.
  const chapter = report.pages && report.pages.chapter;
  const chapterKept = Boolean(chapter && !complete.includes("pages") && chapter.kept === chapter.files);
  // Groups the reader's runs loaded part of (Python, the figures): kept as far as they were
  // used, and said so ("only what your runs used"), never claiming more than runs offline.
  const used = present.filter((name) => !complete.includes(name) && report[name].kept && wanted().includes(name));
  const missing = present.filter((name) => !complete.includes(name));
  const notKept = missing.filter((name) => !used.includes(name));
  if (complete.includes("pages") || chapterKept) say("ready");
  else say("partial");
  const keptBytes = present.reduce((sum, name) => sum + report[name].bytes - report[name].missingBytes, 0);
  const missingBytes = missing.reduce((sum, name) => sum + report[name].missingBytes, 0);
  const list = (/** @type {string[]} */ names, /** @type {string} */ chapterPages) =>
    names.map((name) => (name === "pages" && chapterKept ? chapterPages : NAMES[name])).join(", ");
  const parts = [];
  if (complete.length || used.length || chapterKept) {
    const kept = present.filter((name) => complete.includes(name) || used.includes(name)
      || (name === "pages" && chapterKept));  // (in the footer's order)
    parts.push(`This book is kept in this browser for offline use (${megabytes(keptBytes)} MB): `
      + `${list(kept, "this chapter's pages and the search")}.`);
    if (used.length) parts.push(` Of ${list(used, "")}, only what your runs used.`);
  } else {
    parts.push(saveData()
      ? "Nothing of this book is kept for offline use yet: the data saver is on, so only what you open is kept."
      : "Nothing of this book is kept for offline use yet: only what you open is kept.");
  }
  if (notKept.length) parts.push(` Not kept: ${list(notKept, "the other chapters' pages")}. `);
  else parts.push(" ");
  const controls = [];
  if (missing.length) {
    const keepAll = control(`Keep this book for offline use (${megabytes(missingBytes)} MB)`, () => {
      keepAll.disabled = true;
      keepAll.textContent = "Keeping the book for offline use…";
      keepGroups(worker, missing);  // on the reader's word: the rest of every group, fetched
    });
    keepAll.classList.add("offline-keep-all");
    controls.push(keepAll);
  }
  if (complete.length || present.some((name) => report[name].kept)) {
    controls.push(control("Remove the offline copy", async () => {
      // Only this book's (other sites may share the origin, as on owner.github.io).
      const registration = await navigator.serviceWorker.getRegistration(siteRoot.href);
      if (registration) await registration.unregister();
      await caches.delete(`book-offline:${siteRoot.pathname}`);
      try { localStorage.removeItem(WANTED); } catch (error) { /* storage refused: nothing remembered */ }
      say("removed");
      footerLine("The offline copy is removed; the book works online as before (a later visit keeps its pages again).");
    }));
  }
  footerLine(...parts, ...controls);
}

async function register() {
  if (!("serviceWorker" in navigator) || !location.protocol.startsWith("http")) return say("unavailable");
  let registration;
  try {
    registration = await navigator.serviceWorker.register(WORKER_URL);
  } catch (error) {
    return say("unavailable");  // refused (private window, blocked, quota): online as before
  }
  if (!registration) return say("unavailable");  // (a blocked registration that still resolves)
  // An edition of this very book controls the page (not another copy of the book on the same
  // host, whose worker may control this path too: its edition is not ours).
  const hasEdition = () => Boolean(navigator.serviceWorker.controller
    && navigator.serviceWorker.controller.scriptURL === WORKER_URL);
  const activeNow = () => {
    say("partial");
    // (Active by now: called when a worker is, or has just become, the active one.)
    const active = activeWorker = registration.active;
    // In the background, a few at a time: the pages (not with the data saver), and what the
    // reader's use asked for (its files came already, the worker copies them from the cache).
    if (active && !saveData()) keepGroups(active, ["pages"], false, PAGE);
    if (active && wanted().length) keepGroups(active, wanted(), true);
    sayWhatIsKept(registration);
  };
  navigator.serviceWorker.addEventListener("message", (event) => {
    /** @type {FromOfflineWorker | undefined} */
    const message = event.data;
    if (message && message.type === "kept") sayWhatIsKept(registration);
    if (message && message.type === "not-kept") sayNotKept();
  });
  const watch = (/** @type {ServiceWorker} */ worker) => worker.addEventListener("statechange", () => {
    if (worker.state === "installed" && hasEdition()) offerNewEdition(worker);
    if (worker.state === "activated") activeNow();
    if (worker.state === "redundant" && !registration.active) sayNotKept();  // install failed (quota)
  });
  if (registration.waiting && hasEdition()) offerNewEdition(registration.waiting);
  else if (registration.installing) watch(registration.installing);
  if (registration.active) activeNow();
  registration.addEventListener("updatefound", () => {
    if (registration.installing) watch(registration.installing);  // (set when updatefound fires)
  });
  // A page left open for hours still hears of a new edition, and when the network returns.
  setInterval(() => registration.update().catch(() => {}), 60 * 60 * 1000);
  window.addEventListener("online", () => registration.update().catch(() => {}));
}

// (Site data refused: reading navigator.serviceWorker itself may throw; the book is then online.)
register().catch(() => say("unavailable"));
