// What a built page has drawn and loaded, asked of the page (ours): read by page_state.py
// (which says who asks, and how long each may take), each `export const` a function
// Playwright's page.evaluate or wait_for_function calls with its argument. Playwright sends a
// function's own text, not this module: a function uses nothing declared outside it.

// Mermaid draws each block in a temporary <div> inside it and, once done, replaces the block's
// content with the finished <svg>; when the source does not parse, its error diagram stays in
// that <div>. So a block is drawn when an <svg> is its direct child, and failed when it shows
// the error text (pattern, a RegExp's source). sphinxcontrib-mermaid defers blocks hidden in
// closed tabs or dropdowns until they are shown (marked data-mermaid-deferred): those cannot be
// drawn yet. A block is settled when it is deferred, drawn or failed. Waited for with
// onceSettled true: null (wait on) until every block is settled.
/** @typedef {{deferred: boolean, drawn: boolean, failed: boolean, named: boolean}} MermaidBlock */
/** @typedef {{blocks: MermaidBlock[], strayErrors: number, settled: boolean}} MermaidStatus */
/** @type {(argument: [string, boolean]) => MermaidStatus | null} */
export const mermaidStatus = ([pattern, onceSettled]) => {
    const error = new RegExp(pattern);
    const blocks = [...document.querySelectorAll('.mermaid')].map((element) => ({
        deferred: element.hasAttribute('data-mermaid-deferred'),
        drawn: !!element.querySelector(':scope > svg'),
        failed: !!element.querySelector('svg') && error.test(element.textContent || ''),
        named: !!(element.getAttribute('aria-label') || '').trim(),
    }));
    const strayErrors = [...document.querySelectorAll('svg')]
        .filter((svg) => !svg.closest('.mermaid') && error.test(svg.textContent || '')).length;
    const settled = blocks.every((block) => block.deferred || block.drawn || block.failed);
    return onceSettled && !settled ? null : {blocks, strayErrors, settled};
};

// Lazy images load only when scrolled into view; load them now so that "broken" means broken,
// not "not scrolled to yet". Bounded (timeoutMs), because evaluate() itself has no time limit.
/** @type {(timeoutMs: number) => Promise<void>} */
export const loadAllImages = async (timeoutMs) => {
    const images = [...document.images];
    images.forEach((img) => { img.loading = 'eager'; });
    const loaded = Promise.all(images.map((img) => img.complete ? null :
        new Promise((done) => { img.addEventListener('load', done); img.addEventListener('error', done); })));
    await Promise.race([loaded, new Promise((done) => { setTimeout(done, timeoutMs); })]);
};

// Every image of the page: its src as written, whether it failed to load, its alt text.
/** @type {() => {src: string, broken: boolean, alt: string}[]} */
export const images = () => {
    return [...document.images].map((img) => ({
        src: img.getAttribute('src') || '',
        broken: !(img.complete && img.naturalWidth > 0),
        alt: (img.getAttribute('alt') || '').trim(),
    }));
};

// Painted and still, polled once a frame: no finite animation or CSS transition running
// (document.getAnimations() flushes styles first, so a theme just switched has started its
// transitions; spinners run forever and are not waited for), and the scroll position the same
// as at the previous frame (kept on window.lastScrollY, which page_state.py clears first).
/** @type {() => boolean} */
export const still = () => {
    const moving = document.getAnimations().some((animation) => animation.playState === 'running'
        && animation.effect && animation.effect.getComputedTiming().iterations !== Infinity);
    const win = /** @type {Window & {lastScrollY?: number}} */ (window);
    const same = win.lastScrollY === scrollY;
    win.lastScrollY = scrollY;
    return !moving && same;
};

// The scroll position `still` compares with forgotten: its first frame is never still.
/** @type {() => void} */
export const forgetScroll = () => {
    /** @type {Window & {lastScrollY?: number}} */ (window).lastScrollY = undefined;
};

// The book's offline state (<html data-offline>, offline_page.mjs) is `state` (ready,
// partial, ...).
/** @type {(state: string) => boolean} */
export const offlineState = (state) => {
    return document.documentElement.dataset.offline === state;
};

// Whether the page is cross-origin isolated (the offline worker's COOP/COEP): what lets Stop
// interrupt Python at once, and input() read the keyboard.
/** @type {() => boolean} */
export const crossOriginIsolated = () => {
    return self.crossOriginIsolated;
};
