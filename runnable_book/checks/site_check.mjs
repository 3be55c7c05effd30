// What site_check.py reads of each page of the built site (ours): each `export const` a
// function Playwright's page.evaluate or wait_for_function calls. Playwright sends a function's
// own text, not this module: a function uses nothing declared outside it.

// Every link's target, resolved.
/** @type {() => string[]} */
export const links = () => {
    return [...document.querySelectorAll('a[href]')].map((a) => /** @type {HTMLAnchorElement} */ (a).href);
};

// The icon a browser shows in the tab: the page's <link rel="icon">, else /favicon.ico, which
// browsers request on their own (a request Playwright's page events never see); and the
// page's description.
/** @type {() => {icon: string, description: string}} */
export const head = () => {
    const icon = /** @type {HTMLLinkElement | null} */ (document.querySelector('link[rel~="icon"]'));
    const description = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="description"]'));
    return {
        icon: (icon && icon.href) || new URL('/favicon.ico', location.href).href,
        description: (description && description.content) || '',
    };
};

// When the page's load event ended, in ms since navigation began (0 when not known).
/** @type {() => number} */
export const loadMs = () => {
    const nav = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType('navigation')[0]);
    return nav ? nav.loadEventEnd : 0;
};

// The search page has said how many results it found.
/** @type {() => boolean} */
export const searchFinished = () => {
    const summary = document.querySelector('#search-results .search-summary');
    return !!summary && (summary.textContent || '').trim().length > 0;
};

// The search results' links, in order.
/** @type {() => string[]} */
export const searchResultLinks = () => {
    return [...document.querySelectorAll('#search-results ul.search li a')]
        .map((a) => /** @type {HTMLAnchorElement} */ (a).href);
};
