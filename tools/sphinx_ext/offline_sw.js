/* The book's service worker (ours; tools/sphinx_ext/offline.py writes it to the site's root as
   sw.js, with the build's file groups filled in). Why our own and not Workbox: the whole job is
   "these files, each versioned by its digest, in one cache, kept on the reader's word", which
   is these lines; Workbox's build tool would add a few hundred npm packages for the same.

   Data on the reader's word (web.dev's offline cookbook: the shell ahead, the rest on use):
   - install downloads nothing new: it only refreshes, for a new edition, the files the reader
     has already kept (a file kept with the same digest is not fetched again);
   - "keep" (a message from a page): the pages and the search after a first visit, unless the
     data saver is on (offline_page.mjs decides); Python and the figures' packages when a page
     has run them, since a page that ran before this worker controlled it fetched them past it
     (runner/boot.mjs asks); every group on "Keep this book for offline use";
   - fetch: a file of the book is answered from the cache; one not kept yet is fetched and
     kept (the reader asked for it: a page, Run, a figure, the PDF link). A request that may
     only use what is stored (prestart.mjs's `only-if-cached`) never reaches the network;
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

/** @param {string} path */
function keyOf(path) { return new URL(`${path}?digest=${FILES[path]}`, SCOPE).href; }

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
   differs). */
/** @param {string} path @param {string | undefined} loadedAt @returns {Promise<Response>} */
async function thisEditionOf(path, loadedAt) {
  /** @type {[string | undefined, RequestCache][]} */
  const tries = [[loadedAt, "default"], [new URL(path, SCOPE).href, "default"], [new URL(path, SCOPE).href, "reload"]];
  for (const [url, mode] of tries) {
    if (!url) continue;
    const response = await fetch(url, { cache: mode });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    const bytes = await response.arrayBuffer();
    if (await digestOf(bytes) !== FILES[path] && mode !== "reload") continue;
    const headers = new Headers(response.headers);
    ["Content-Encoding", "Content-Length"].forEach((name) => headers.delete(name));  // (the bytes are decoded)
    return new Response(bytes, { status: 200, headers });
  }
  // Unreachable (the "reload" try returns or throws); said for tsc, which cannot tell.
  throw new Error(`${path}: not fetched`);
}

/* The files of these groups not in the cache yet, a few at a time (a static host limits
   parallel requests). loaded: URLs the asking page already loaded. Fails on the first file
   the browser refuses to store. */
/** @param {string[]} names @param {string[]} loaded */
async function keepGroups(names, loaded = []) {
  const cache = await caches.open(CACHE);
  const kept = await keptKeys(cache);
  /** @type {Record<string, string>} */
  const loadedAt = {};
  for (const url of loaded) {
    const path = pathOf(new URL(url));
    if (path !== null) loadedAt[path] = url;
  }
  const missing = names.flatMap((name) => Object.keys(GROUPS[name].files)).filter((path) => !kept.has(keyOf(path)));
  const workers = Array.from({ length: PARALLEL_FETCHES }, async () => {
    while (missing.length) {
      await quiet();
      const path = missing.pop();
      if (path === undefined) break;  // (another worker took the last while this one waited)
      await cache.put(keyOf(path), await thisEditionOf(path, loadedAt[path]));  // (a refusal rejects: said to the page)
    }
  });
  await Promise.all(workers);
}

/* What is kept, group by group: {group: {kept, files, bytes, missingBytes}}. */
/** @returns {Promise<KeptReport>} */
async function whatIsKept() {
  const kept = await keptKeys(await caches.open(CACHE));
  /** @type {KeptReport} */
  const report = {};
  for (const [name, group] of Object.entries(GROUPS)) {
    const paths = Object.keys(group.files);
    const missing = paths.filter((path) => !kept.has(keyOf(path)));
    // What the missing files cost, as the host sends them (the build measured each).
    report[name] = { kept: paths.length - missing.length, files: paths.length, bytes: group.bytes,
                     missingBytes: missing.reduce((sum, path) => sum + group.sizes[path], 0) };
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
      if (!current.has(request.url)) await cache.delete(request);
    }
    await sw.clients.claim();  // the first visit's page: what it runs from now on is kept
  })());
});

sw.addEventListener("message", (event) => {
  /** @type {ToOfflineWorker} */
  const message = event.data;
  if (message === "take-new-edition") return sw.skipWaiting();
  if (message && message.type === "what-is-kept") {
    event.waitUntil(whatIsKept().then((report) => event.ports[0].postMessage(report)));
  } else if (message && message.type === "keep") {
    const names = message.groups.filter((name) => name in GROUPS);
    event.waitUntil(keepGroups(names, message.loaded || []).then(
      async () => tellPages({ type: "kept", groups: names, report: await whatIsKept() }),
      async (error) => tellPages({ type: "not-kept", groups: names, reason: String(error && error.name || error) }),
    ));
  }
});

/* The book's own offline page, its link made absolute (it answers for any URL of the site). */
/** @param {Cache} cache */
async function offlinePage(cache) {
  const stored = await cache.match(keyOf(OFFLINE_PAGE));
  if (!stored) return null;
  const text = (await stored.text()).replace('href="../index.html"', `href="${new URL("index.html", SCOPE).href}"`);
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
    const page = request.mode === "navigate" && await offlinePage(cache);
    if (!page || !(error instanceof TypeError)) throw error;  // (TypeError: the network failed)
    return page;
  }
}

sw.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || request.headers.has("range")) return;
  const path = pathOf(new URL(request.url));
  if (path === null) return;
  event.respondWith(answer(event, path));
});
