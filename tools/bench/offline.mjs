// What offline.py (the offline benchmark, `make bench-run`) waits for in a page of the book
// (ours): each `export const` a function Playwright's wait_for_function calls with its
// argument. Playwright sends a function's own text, not this module: a function uses nothing
// declared outside it.

// The page's offline state (<html data-offline>, offline_page.mjs) is `state`.
/** @type {(state: string) => boolean} */
export const offlineState = (state) => {
    return document.documentElement.dataset.offline === state;
};

// Python idle and no cell queued or running.
/** @type {() => boolean} */
export const idle = () => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return document.documentElement.dataset.browserRun === 'idle'
        && run.cells.every((c) => !['queued', 'running'].includes(c.element.dataset.runState));
};

// A figure drawn in the page is shown.
/** @type {() => boolean} */
export const figureShown = () => {
    return !!document.querySelector('img.browser-run-figure-image');
};

// The page says the whole book is kept, and offers to keep nothing more.
/** @type {() => boolean} */
export const allKept = () => {
    return /^This book is kept/.test(document.querySelector('.offline-storage')?.textContent || '')
        && !document.querySelector('button.offline-keep-all');
};
