/* The book's service worker (ours; tools/sphinx_ext/offline.py writes it to the site's root as
   sw.js, with the build's file list filled in). Why our own and not Workbox: the whole job is
   "these files, each versioned by its digest, from one cache", which is these lines; Workbox's
   build tool would add a few hundred npm packages for the same manifest.

   What it does, for the site's own URLs only (never another host's, which the page never asks for):
   - install: every file of the site except Python's runtime and the editor (PRECACHE) is put in
     the cache, so after one visit every page, the search, the figures, the PDF and the reader's
     notebooks open offline. A file already cached with the same digest (from an earlier edition)
     is not fetched again;
   - fetch: a file of the list is answered from the cache; one of ON_FIRST_USE (Pyodide, the
     editor, matplotlib's wheels) is fetched the first time the page asks for it, then kept;
   - every answer gets COOP/COEP headers, so a page this worker serves is crossOriginIsolated
     (the first visit's page is not: it was loaded before the worker existed);
   - activate: files of an earlier edition are dropped, only once this one is completely cached
     (activate follows a successful install). A new edition waits until the reader accepts it
     (the page posts "take-new-edition"), so an open page never changes under the reader. */
const PRECACHE = __PRECACHE__;      // {site-relative path: digest}
const ON_FIRST_USE = __ON_FIRST_USE__;
const FILES = { ...PRECACHE, ...ON_FIRST_USE };
const SCOPE = new URL(self.registration.scope);
// One cache per site, named by its path: sites under one origin (owner.github.io/a/, /b/)
// never prune each other's. Each entry's key carries its file's digest.
const CACHE = `book-offline:${SCOPE.pathname}`;
const PARALLEL_FETCHES = 6;

function keyOf(path) { return new URL(`${path}?digest=${FILES[path]}`, SCOPE).href; }

/* The site-relative path of a URL of the site ("" and "x/" are their index.html), or null. */
function pathOf(url) {
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return null;
  const path = decodeURIComponent(url.pathname.slice(SCOPE.pathname.length));
  return path === "" || path.endsWith("/") ? path + "index.html" : path;
}

/* The response with the headers that make a page cross-origin isolated. Everything the book's
   pages load is the site's own, so require-corp blocks nothing they use. */
function isolated(response) {
  if (response.status === 0 || [101, 204, 205, 304].includes(response.status)) return response;
  const headers = new Headers(response.headers);
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Cross-Origin-Embedder-Policy", "require-corp");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

async function fetchAndKeep(cache, path) {
  const response = await fetch(new URL(path, SCOPE), { cache: "no-cache" });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  await cache.put(keyOf(path), response.clone());
  return response;
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const kept = new Set((await cache.keys()).map((request) => request.url));
    const missing = Object.keys(PRECACHE).filter((path) => !kept.has(keyOf(path)));
    // A few at a time: a static host limits parallel requests, and a failure fails the install
    // (the browser tries again on a later visit; the site works online meanwhile).
    const workers = Array.from({ length: PARALLEL_FETCHES }, async () => {
      while (missing.length) await fetchAndKeep(cache, missing.pop());
    });
    await Promise.all(workers);
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const current = new Set(Object.keys(FILES).map(keyOf));
    for (const request of await cache.keys()) {
      if (!current.has(request.url)) await cache.delete(request);
    }
    await self.clients.claim();  // the first visit's page: its runs' files get cached too
  })());
});

self.addEventListener("message", (event) => {
  if (event.data === "take-new-edition") self.skipWaiting();
});

async function answer(request, path) {
  if (path in FILES) {
    const cache = await caches.open(CACHE);
    const cached = await cache.match(keyOf(path));
    if (cached) return isolated(cached);
    return isolated(await fetchAndKeep(cache, path));
  }
  return isolated(await fetch(request));  // not a file of this edition: the network's answer
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || request.headers.has("range")) return;
  const path = pathOf(new URL(request.url));
  if (path === null) return;
  event.respondWith(answer(request, path));
});
