// What offline_visits.py (the offline benchmark, `make bench-run`) waits for and reads in a page of the book
// (ours): each `export const` a function Playwright's wait_for_function or evaluate calls with its
// argument. Playwright sends a function's own text, not this module: a function uses nothing
// declared outside it.

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

// Cell 1 stopped, its KeyboardInterrupt shown.
/** @type {() => boolean} */
export const firstCellStopped = () => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    const cell = run.cells[0].element;
    return cell.dataset.runState === 'stopped' && /KeyboardInterrupt/.test(cell.textContent);
};

// Bytes this origin keeps (the book's offline copy, its storage), as the browser estimates.
/** @type {() => Promise<number>} */
export const storageUsage = async () => {
    return (await navigator.storage.estimate()).usage || 0;
};
