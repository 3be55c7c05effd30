// What chromium.py's helpers run in a page of the book (ours): each `export const` a function
// Playwright's page.evaluate or wait_for_function calls. Playwright sends a function's own
// text, not this module: a function uses nothing declared outside it.

// Dark mode without a reload: pydata-sphinx-theme keeps the chosen mode and the applied theme
// in these two attributes, and its CSS follows them.
/** @type {() => void} */
export const darkTheme = () => {
    document.documentElement.dataset.mode = 'dark';
    document.documentElement.dataset.theme = 'dark';
};

// The scripts a page loads once it has painted (theme, copy buttons:
// runnable_book/sphinx_ext/page_assets.py) have run, or failed. A page without that loader (the search
// page, the root redirect) has nothing to wait for.
/** @type {() => boolean} */
export const pageScriptsSettled = () => {
    return !document.getElementById('scripts-after-paint')
        || ['loaded', 'failed'].includes(document.documentElement.dataset.pageScripts || '');
};

// What the after-paint loader says of the page's scripts: "loaded", "failed", or null on a page
// without it.
/** @type {() => string | null} */
export const pageScripts = () => {
    return document.documentElement.dataset.pageScripts || null;
};
