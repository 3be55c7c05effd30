/* The book's service worker (ours; runnable_book/sphinx_ext/offline.py writes it to the site's root as
   sw.js, with the build's file groups filled in). Why our own and not Workbox: the whole job is
   "these files, each versioned by its digest, in one cache, kept on the reader's word", which
   is these lines; Workbox's build tool would add a few hundred npm packages for the same.

   Data on the reader's word (web.dev's offline cookbook: the shell ahead, the rest on use):
   - install downloads nothing new: it only refreshes, for a new edition, the files the reader
     has already kept (a file kept with the same digest is not fetched again);
   - "keep" (a message from a page): the pages and the search after a first visit, unless the
     data saver is on (offline_page.mjs decides), in a book of several chapters only the asking
     page's chapter of them and what every page shares (filesOf); of Python and the figures' packages, what a
     run loaded, from the HTTP cache alone (`fromCacheOnly`: a page that ran before this worker
     controlled it fetched them past it; runner/boot.mjs asks), never the rest of the group:
     the snapshot a start went without, latex.mjs or markup.mjs no output needed yet (the
     first output of 15.2 was followed by 2 MB of those on a 50 KB/s line); every group, fetched,
     on "Keep this book for offline use";
   - fetch: a file of the book is answered from the cache; one not kept yet is fetched and
     kept (the reader asked for it: a page, Run, a figure, the PDF link). A request that may
     only use what is stored (prestart.mjs's `only-if-cached`) never reaches the network.
     Except a large file of Python or the figures not kept yet: this worker leaves it to the
     browser (see LARGE_BYTES), and keeps it from the HTTP cache once the run asks;
   - every answer gets COOP/COEP headers, so a page this worker serves is crossOriginIsolated
     (the first visit's page is not: it was loaded before the worker existed);
   - offline, a page outside the book gets the book's own offline page;
   - activate: files of an earlier edition are dropped. A new edition waits until the reader
     accepts it (the page posts "take-new-edition"), so an open page never changes under them.

   Types (tsc, tsconfig.worker.json): the manifest and the messages are in offline_types.d.ts. */
/** @typedef {import("./offline_types").FromOfflineWorker} FromOfflineWorker */
/** @typedef {import("./offline_types").KeptReport} KeptReport */
/** @typedef {import("./offline_types").ToOfflineWorker} ToOfflineWorker */
// This worker's global scope as a service worker's: tsc's webworker lib types `self` as any
// worker's, without `registration`, `clients` or the install/activate/fetch events.
const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));
const GROUPS = __GROUPS__;          // {group: {files: {site-relative path: digest}, sizes: {path: bytes}, bytes}}
// eslint-disable-next-line no-unused-vars -- filled in by offline.py, read by no line here (offline_page.mjs names the groups)
const KEEPABLE = __KEEPABLE__;      // the groups "Keep this book for offline use" keeps
const OFFLINE_PAGE = __OFFLINE_PAGE__;
/** @type {Record<string, string>} every file of the site: path -> digest */
const FILES = Object.assign({}, ...Object.values(GROUPS).map((group) => group.files));
const SCOPE = new URL(sw.registration.scope);
// One cache per site, named by its path: sites under one origin (owner.github.io/a/, /b/)
// never prune each other's. Each entry's key carries its file's digest.
const CACHE = `book-offline:${SCOPE.pathname}`;
const PARALLEL_FETCHES = 6;

/* Chrome stops a service worker about five minutes into any event, even one that is passing on a
   response as it arrives (w3c/ServiceWorker#1182; Chromium 753646, WONTFIX): a figure page's
   matplotlib, numpy and first-figure.zip, answered here on a 50 KB/s line, all failed at once
   after 300 s while bytes still flowed. So a download that may outlast an event is
   never this worker's: a file of the groups a run keeps (boot.mjs asks, with what it loaded,
   and keepGroups reads them from the HTTP cache, no second download) larger than LARGE_BYTES,
   and not kept yet, gets no answer from here; the browser fetches it outside this worker's
   lifetime. Why 200 KB: on that line a figure page's click fetches about fifteen files at once,
   each with a few KB/s of it; a file under 200 KB is then about a minute of an event, well
   inside five, while everything above (the runtime, the snapshot, the larger wheels, down to
   pyodide.asm.js at 236 KB) is left to the browser. (Same-origin, such a file needs no CORP
   header: an isolated page loads it all the same.) */
const LARGE_BYTES = 200_000;
const KEPT_AFTER_A_RUN = ["python", "figures"];
/** @type {Set<string>} */
const LEFT_TO_THE_BROWSER = new Set(KEPT_AFTER_A_RUN.flatMap((name) =>
  Object.keys(GROUPS[name].sizes).filter((path) => GROUPS[name].sizes[path] > LARGE_BYTES)));
/* The keys in the cache, known at once (a fetch event decides synchronously whether this worker
   answers): read when the worker starts, then kept up to date as it keeps and drops. Until read,
   every file is answered here, as before. */
/** @type {Set<string>} */
const keptKeysNow = new Set();
let keptKeysKnown = false;
caches.open(CACHE).then((cache) => cache.keys()).then((requests) => {
  requests.forEach((request) => keptKeysNow.add(request.url));
  keptKeysKnown = true;
}, () => {});

/** @param {string} path */
function keyOf(path) { return new URL(`${path}?digest=${FILES[path]}`, SCOPE).href; }

/* The files of a group that a page asks for. Of "pages", in a book of several chapters
   (offline.py's `chapters`) and asked by a page: what every page shares and that page's
   chapter's part; another chapter's part is kept when one of its pages asks, and everything
   when a page asks without naming itself ("Keep this book for offline use"). */
/** @param {string} name @param {string} [page] the asking page's site-relative path */
function filesOf(name, page) {
  const group = GROUPS[name];
  const paths = Object.keys(group.files);
  if (page === undefined || !group.chapters) return paths;
  const parts = Object.values(group.chapters);
  const own = new Set(parts.find((part) => part.includes(page)) || []);
  const inAPart = new Set(parts.flat());
  return paths.filter((path) => !inAPart.has(path) || own.has(path));
}

/* The site-relative path of a URL of the site ("" and "x/" are their index.html), or null. */
/** @param {URL} url @returns {string | null} */
function pathOf(url) {
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return null;
  const path = decodeURIComponent(url.pathname.slice(SCOPE.pathname.length));
  return path === "" || path.endsWith("/") ? path + "index.html" : path;
}

/* The response with the headers that make a page cross-origin isolated. Everything the book's
   pages load is the site's own, so require-corp blocks nothing they use. */
/** @param {Response} response */
function isolated(response) {
  if (response.status === 0 || [101, 204, 205, 304].includes(response.status)) return response;
  const headers = new Headers(response.headers);
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Cross-Origin-Embedder-Policy", "require-corp");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/* Stored, or not: a browser that refuses (quota, storage blocked) still gets its answer. */
/** @param {Cache} cache @param {string} path @param {Response} response */
async function keep(cache, path, response) {
  try {
    await cache.put(keyOf(path), response);
    keptKeysNow.add(keyOf(path));
    return true;
  } catch (error) {
    return false;
  }
}

/* What the reader's own use fetches through this worker right now (answer): the background
   keeping waits while there is any, so on a slow line a page's Python or figures never share
   it with files kept for later. */
let readerFetches = 0;
/** @type {(() => void)[]} */
const whenQuiet = [];
function readerFetchEnded() {
  readerFetches -= 1;
  if (readerFetches === 0) whenQuiet.splice(0).forEach((wake) => wake());
}
function quiet() {
  return readerFetches > 0 ? new Promise((wake) => { whenQuiet.push(() => wake(undefined)); }) : Promise.resolve();
}

/** @param {Cache} cache @param {string} path @param {RequestInit} [init] */
async function fetchAndKeep(cache, path, init = { cache: "no-cache" }) {
  const response = await fetch(new URL(path, SCOPE), init);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  await keep(cache, path, response.clone());
  return response;
}

/** @param {Cache} cache */
async function keptKeys(cache) { return new Set((await cache.keys()).map((request) => request.url)); }

/** @param {ArrayBuffer} bytes */
async function digestOf(bytes) {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...hash.slice(0, 8)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/* A file's bytes as this edition has them: from the browser's HTTP cache when the page (or a
   run) just loaded it, at the URL it used (Sphinx adds "?v=..." to its assets), so keeping it
   costs nothing more; from the server when the cached copy is not this edition's (its digest
   differs). fromCacheOnly: never the server (`only-if-cached`), and null when the HTTP cache
   has no copy of this edition: what the reader's use did not load is not fetched for it. */
/** @param {string} path @param {string | undefined} loadedAt @param {boolean} fromCacheOnly
 *  @returns {Promise<Response | null>} */
async function thisEditionOf(path, loadedAt, fromCacheOnly) {
  const here = new URL(path, SCOPE).href;
  /** @type {[string | undefined, RequestCache][]} */
  const tries = fromCacheOnly ? [[loadedAt, "only-if-cached"], [here, "only-if-cached"]]
    : [[loadedAt, "default"], [here, "default"], [here, "reload"]];
  for (const [url, mode] of tries) {
    if (!url) continue;
    // (only-if-cached is allowed for same-origin requests alone; not cached, it rejects)
    const response = await fetch(url, { cache: mode, mode: "same-origin" }).catch((error) => {
      if (mode === "only-if-cached") return null;
      throw error;
    });
    if (!response) continue;
    if (!response.ok) {
      if (fromCacheOnly) continue;
      throw new Error(`${path}: HTTP ${response.status}`);
    }
    const bytes = await response.arrayBuffer();
    if (await digestOf(bytes) !== FILES[path] && mode !== "reload") continue;
    const headers = new Headers(response.headers);
    ["Content-Encoding", "Content-Length"].forEach((name) => headers.delete(name));  // (the bytes are decoded)
    return new Response(bytes, { status: 200, headers });
  }
  if (fromCacheOnly) return null;
  // Unreachable (the "reload" try returns or throws); said for tsc, which cannot tell.
  throw new Error(`${path}: not fetched`);
}

/* The files of these groups not in the cache yet, a few at a time (a static host limits
   parallel requests). loaded: URLs the asking page already loaded. fromCacheOnly: only what
   the browser's HTTP cache holds (thisEditionOf), no byte from the network. Fails on the first
   file the browser refuses to store. */
/** @param {string[]} names @param {string[]} loaded @param {boolean} fromCacheOnly
 *  @param {string} [page] the asking page (filesOf) */
async function keepGroups(names, loaded = [], fromCacheOnly = false, page = undefined) {
  const cache = await caches.open(CACHE);
  const kept = await keptKeys(cache);
  /** @type {Record<string, string>} */
  const loadedAt = {};
  for (const url of loaded) {
    const path = pathOf(new URL(url));
    if (path !== null) loadedAt[path] = url;
  }
  const missing = names.flatMap((name) => filesOf(name, page)).filter((path) => !kept.has(keyOf(path)));
  const workers = Array.from({ length: PARALLEL_FETCHES }, async () => {
    while (missing.length) {
      if (!fromCacheOnly) await quiet();  // (the HTTP cache shares no line with the reader's downloads)
      const path = missing.pop();
      if (path === undefined) break;  // (another worker took the last while this one waited)
      const response = await thisEditionOf(path, loadedAt[path], fromCacheOnly);
      if (!response) continue;  // not loaded by the reader's use: not kept, and said so (whatIsKept)
      await cache.put(keyOf(path), response);  // (a refusal rejects: said to the page)
      keptKeysNow.add(keyOf(path));
    }
  });
  await Promise.all(workers);
}

/* What is kept, group by group: {group: {kept, files, bytes, missingBytes}}; of "pages" in a
   book of several chapters, asked by a page, also what its visit keeps (`chapter`, filesOf). */
/** @param {string} [page] @returns {Promise<KeptReport>} */
async function whatIsKept(page) {
  const kept = await keptKeys(await caches.open(CACHE));
  /** @param {Record<string, number>} sizes @param {string[]} paths */
  const counted = (sizes, paths) => {
    const missing = paths.filter((path) => !kept.has(keyOf(path)));
    // What the missing files cost, as the host sends them (the build measured each).
    return { kept: paths.length - missing.length, files: paths.length,
             bytes: paths.reduce((sum, path) => sum + sizes[path], 0),
             missingBytes: missing.reduce((sum, path) => sum + sizes[path], 0) };
  };
  /** @type {KeptReport} */
  const report = {};
  for (const [name, group] of Object.entries(GROUPS)) {
    report[name] = counted(group.sizes, Object.keys(group.files));
    if (page !== undefined && group.chapters) report[name].chapter = counted(group.sizes, filesOf(name, page));
  }
  return report;
}

/** @param {FromOfflineWorker} message */
async function tellPages(message) {
  for (const client of await sw.clients.matchAll({ includeUncontrolled: true, type: "window" })) {
    client.postMessage(message);
  }
}

sw.addEventListener("install", (event) => {
  // A new edition: what the reader kept of the last one, in this edition's version.
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const keptPaths = new Set([...await keptKeys(cache)].map((url) => pathOf(new URL(url))));
    const kept = await keptKeys(cache);
    const refresh = Object.keys(FILES).filter((path) => keptPaths.has(path) && !kept.has(keyOf(path)));
    const workers = Array.from({ length: PARALLEL_FETCHES }, async () => {
      while (refresh.length) await fetchAndKeep(cache, /** @type {string} */ (refresh.pop()));
    });
    await Promise.all(workers);
  })());
});

sw.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const current = new Set(Object.keys(FILES).map(keyOf));
    for (const request of await cache.keys()) {
      if (current.has(request.url)) continue;
      await cache.delete(request);
      keptKeysNow.delete(request.url);
    }
    await sw.clients.claim();  // the first visit's page: what it runs from now on is kept
  })());
});

/* Stop on a page that is not cross-origin isolated (runner/stop_relay.mjs): the page posts the
   signal here, the page's Python asks for it with a synchronous request of STOP_RELAY (and says
   whether the reader's code runs, which the page reads back). Held in memory: a Stop is taken
   within a tenth of a second or the page restarts Python, so nothing here must outlive this
   worker. The fewest entries a few open pages need; the oldest go first. */
const STOP_RELAY = new URL("_static/runner/stop-relay", SCOPE).pathname;
/** @type {Map<string, {signal: number, cellCode: number, wake?: () => void}>} */
const stopSignals = new Map();
const SLEEP_SLICE_MS = 1000;  // (stop_relay.mjs's: the longest a sleeping Python's request is held)
/** @param {string} id */
function stopEntry(id) {
  let entry = stopSignals.get(id);
  if (!entry) {
    entry = { signal: 0, cellCode: 0 };
    stopSignals.set(id, entry);
    if (stopSignals.size > 64) stopSignals.delete(/** @type {string} */ (stopSignals.keys().next().value));
  }
  return entry;
}
/** @param {URL} url */
async function answerStopRelay(url) {
  const entry = stopEntry(url.searchParams.get("id") || "");
  entry.cellCode = Number(url.searchParams.get("code")) || 0;
  const wait = Math.min(Number(url.searchParams.get("wait")) || 0, SLEEP_SLICE_MS);
  if (wait > 0 && entry.signal === 0) {  // time.sleep: answered when the Stop comes, or the slice ends
    await new Promise((resolve) => { entry.wake = () => resolve(undefined); setTimeout(entry.wake, wait); });
    entry.wake = undefined;
  }
  const signal = entry.signal;
  entry.signal = 0;  // (taken: Python raises KeyboardInterrupt)
  // (The header is stop_relay.mjs's RELAY_HEADER: this classic script cannot import it.)
  return new Response(String(signal), { headers: { "X-Browser-Run-Stop": "1", "Cache-Control": "no-store" } });
}

sw.addEventListener("message", (event) => {
  /** @type {ToOfflineWorker} */
  const message = event.data;
  if (message === "take-new-edition") return sw.skipWaiting();
  if (message && message.type === "stop-relay") {
    const entry = stopEntry(message.id);
    entry.signal = message.signal;
    if (entry.wake) entry.wake();
  } else if (message && message.type === "stop-relay-read") {
    const { signal, cellCode } = stopEntry(message.id);
    event.ports[0].postMessage({ signal, cellCode });
  } else if (message && message.type === "what-is-kept") {
    event.waitUntil(whatIsKept(message.page).then((report) => event.ports[0].postMessage(report)));
  } else if (message && message.type === "keep") {
    const names = message.groups.filter((name) => name in GROUPS);
    event.waitUntil(keepGroups(names, message.loaded || [], Boolean(message.fromCacheOnly), message.page).then(
      async () => tellPages({ type: "kept", groups: names, report: await whatIsKept() }),
      async (error) => tellPages({ type: "not-kept", groups: names, reason: String(error && error.name || error) }),
    ));
  }
});

/* The book's own offline page, its link made absolute (it answers for any URL of the site);
   for a page of the book this browser has not kept, it says so (offline.py's second sentence). */
/** @param {Cache} cache @param {string} path */
async function offlinePage(cache, path) {
  const stored = await cache.match(keyOf(OFFLINE_PAGE));
  if (!stored) return null;
  let text = (await stored.text()).replace('href="../index.html"', `href="${new URL("index.html", SCOPE).href}"`);
  if (path in FILES) {
    text = text.replace('data-offline-reason="elsewhere"', 'data-offline-reason="elsewhere" hidden')
      .replace('data-offline-reason="not-kept" hidden', 'data-offline-reason="not-kept"');
  }
  return isolated(new Response(text, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } }));
}

/* A file the reader asked for and this worker has not kept: answered as it arrives, and kept
   once it has (a copy of the same body, in the background): the page's Python compiles its
   WebAssembly while it downloads and its bar moves, where waiting for the copy to be stored
   held every byte back until the last. A request the page abandons (its signal: the snapshot
   a slow line goes without) is abandoned here too, and nothing is kept of it. */
/** @param {FetchEvent} event @param {Cache} cache @param {string} path @param {RequestInit} init */
async function fetchAndKeepAfter(event, cache, path, init) {
  readerFetches += 1;
  try {
    const response = await fetch(new URL(path, SCOPE), { ...init, signal: event.request.signal });
    if (response.ok) {
      event.waitUntil(keep(cache, path, response.clone()).finally(readerFetchEnded));
    } else {
      readerFetchEnded();
    }
    return response;
  } catch (error) {
    readerFetchEnded();
    throw error;
  }
}

/** @param {FetchEvent} event @param {string} path */
async function answer(event, path) {
  const request = event.request;
  const cache = await caches.open(CACHE);
  if (path in FILES) {
    const cached = await cache.match(keyOf(path));
    if (cached) return isolated(cached);
  }
  try {
    if (!(path in FILES)) return isolated(await fetch(request));  // not a file of this edition
    if (request.cache === "only-if-cached") {
      // Only what this browser already has (its HTTP cache), never the network.
      const response = await fetch(request);
      if (response.ok) event.waitUntil(keep(cache, path, response.clone()));
      return isolated(response);
    }
    return isolated(await fetchAndKeepAfter(event, cache, path, { cache: "no-cache" }));
  } catch (error) {
    const page = request.mode === "navigate" && await offlinePage(cache, path);
    if (!page || !(error instanceof TypeError)) throw error;  // (TypeError: the network failed)
    return page;
  }
}

/* A large file not kept yet, asked for by the network (LARGE_BYTES): the browser's, not this
   worker's. (A question to the HTTP cache alone, only-if-cached, ends at once: answered here.) */
/** @param {Request} request @param {string} path */
function leftToTheBrowser(request, path) {
  return LEFT_TO_THE_BROWSER.has(path) && keptKeysKnown && !keptKeysNow.has(keyOf(path))
    && request.cache !== "only-if-cached";
}

sw.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.pathname === STOP_RELAY && url.origin === SCOPE.origin) return event.respondWith(answerStopRelay(url));
  if (request.method !== "GET" || request.headers.has("range")) return;
  const path = pathOf(new URL(request.url));
  if (path === null || leftToTheBrowser(request, path)) return;
  event.respondWith(answer(event, path));
});
