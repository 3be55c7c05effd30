// What the book's service worker (offline_sw.js) and the page script (offline_page.mjs) say to
// each other, and the manifest runnable_book/sphinx_ext/offline.py writes into the worker: types only,
// for `tsc --checkJs` (tsconfig.page.json, tsconfig.worker.json). One file for both sides,
// since the worker is a classic script checked with a worker's types and the page script a
// module checked with the DOM's, so neither can import the other's typedefs.

/** One group of the site's files (offline.py's `groups`): site-relative path -> digest. */
export interface Group {
  files: Record<string, string>;
  /** Each file's transfer size in bytes (gzip for text, as a static host sends it). */
  sizes: Record<string, number>;
  /** The sum of `sizes`. */
  bytes: number;
  /** Of "pages" in a book of several chapters: each chapter's part of `files` (its pages, the
   *  images only they show); the rest is every page's. */
  chapters?: Record<string, string[]>;
}

/** The manifest, `__GROUPS__` in offline_sw.js: group name ("pages", "python", …) -> files. */
export type Groups = Record<string, Group>;

/** What is kept of one group (the worker's `whatIsKept`, the footer's line). */
export interface GroupKept {
  kept: number;
  files: number;
  bytes: number;
  missingBytes: number;
  /** Of "pages" in a book of several chapters, asked by a page: what a visit to it keeps. */
  chapter?: GroupKept;
}
export type KeptReport = Record<string, GroupKept>;

/** Page -> worker. "what-is-kept" is answered on the MessagePort sent with it (a KeptReport). */
export type ToOfflineWorker =
  | "take-new-edition"
  /** page: the asking page's site-relative path (its chapter's part of "pages" is reported). */
  | { type: "what-is-kept"; page?: string }
  /** loaded: URLs the page already loaded, kept from the browser's HTTP cache. fromCacheOnly:
   *  keep only what the HTTP cache holds (what the reader's use loaded), fetch nothing. page:
   *  the asking page, whose chapter's part of "pages" is kept (none: every chapter's). */
  | { type: "keep"; groups: string[]; loaded?: string[]; fromCacheOnly?: boolean; page?: string }
  /** Stop on a page that is not isolated (runner/stop_relay.mjs): the signal for one page's
   * Python (2 to stop, 0 to take it back), and a read of it, answered on the port sent with it. */
  | { type: "stop-relay"; id: string; signal: number }
  | { type: "stop-relay-read"; id: string };

/** Worker -> every open page of the book, once a "keep" has ended. */
export type FromOfflineWorker =
  | { type: "kept"; groups: string[]; report: KeptReport }
  | { type: "not-kept"; groups: string[]; reason: string };
