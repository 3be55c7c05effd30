// What the runner's modules keep on `window` (types only, for `tsc --checkJs`; tsconfig.json,
// tsconfig.page.json), and what the browser has that TypeScript's DOM lib does not type.
export {};
declare global {
  interface Navigator {
    /** The Network Information API (Chromium only): the data saver's `saveData` (offline_page.mjs,
     *  loader.js). Absent in the other browsers, hence optional. */
    readonly connection?: { readonly saveData?: boolean };
  }
  interface Window {
    /** boot.mjs and loader.js: when each step of a run's start ended (`make bench-run`). */
    browserRunTimings?: { step: string; at: number }[];
    /** keys.mjs: the inline loader's window-level key listener calls it (loader.js). */
    browserRunKeys?: (event: KeyboardEvent) => void;
    /** layout.html: set when reading localStorage threw (storage refused). */
    bookStorageRefused?: boolean;
    /** progress.mjs on the exercise page; read by work.mjs ("Download as notebook"). */
    exerciseProgress?: any;
    /** offline_page.mjs: ask the book's service worker to keep these groups (runner/boot.mjs:
     *  Python once it ran, the figures' packages once drawn), remembered until kept. */
    bookOffline?: { keep: (groups: string[]) => void };
    /** runner.mjs: the page's cells and Run all, for the tests and the benchmark. */
    browserRun?: { readonly cells: any[]; readonly downloads: unknown; runAll: () => unknown };
  }
}
