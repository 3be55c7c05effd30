// What axe_check.py runs in a page once axe-core is loaded into it (ours): Playwright's
// page.evaluate calls the function's own text, not this module, so it uses nothing declared
// outside it.

// axe's violations on the page, with its experimental rules too (label-content-name-mismatch:
// a button whose visible text is not part of its accessible name, which speech-input users say
// to press it, is one): each rule, its impact, its help and the elements it names.
/** @type {() => Promise<{id: string, impact: string, help: string, targets: string[]}[]>} */
export const runAxe = async () => {
    const axe = /** @type {any} */ (window).axe;
    const experimental = axe.getRules(['experimental']).map((/** @type {{ruleId: string}} */ rule) => [rule.ruleId, {enabled: true}]);
    const results = await axe.run(document, {resultTypes: ['violations'], rules: Object.fromEntries(experimental)});
    return results.violations.map((/** @type {any} */ v) => ({
        id: v.id, impact: v.impact, help: v.help,
        targets: v.nodes.map((/** @type {{target: string[]}} */ n) => n.target.join(' ')),
    }));
};

// Whether axe-core is already in the page (it is added once per page).
/** @type {() => boolean} */
export const axeLoaded = () => {
    return typeof (/** @type {any} */ (window).axe) !== 'undefined';
};

// The footer says what the book's service worker keeps offline, with its controls
// (offline_page.mjs), or <html data-offline> says this browser keeps nothing.
/** @type {() => boolean} */
export const offlineFooterShown = () => {
    return document.documentElement.dataset.offline === 'unavailable' || !!document.querySelector('.offline-storage');
};
