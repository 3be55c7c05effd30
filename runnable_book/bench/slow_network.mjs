// What slow_network.py (`make bench-run`) runs in a page of the book on a slow network (ours):
// each `export const` a function Playwright's evaluate or wait_for_function calls. Playwright
// sends a function's own text, not this module: a function uses nothing declared outside it.

// From now on, every `everyMs`, what the download bar shows (runner/download_bar.mjs) and the
// status line, kept in window.downloadSamples: {at (ms since the epoch), text, value, max, status}.
/** @type {(everyMs: number) => void} */
export const watchDownloadBar = (everyMs) => {
    /** @type {{at: number, text: string | null, value: number | null, max: number | null, arrived: number, skipped: number, status: string}[]} */
    const samples = [];
    /** @type {any} */ (window).downloadSamples = samples;
    setInterval(() => {
        const meter = /** @type {HTMLProgressElement | null} */ (document.querySelector('.browser-run-downloading-meter'));
        const text = document.querySelector('.browser-run-downloading-text');
        samples.push({
            at: performance.timeOrigin + performance.now(),
            text: text ? text.textContent : null,
            value: meter ? meter.value : null,
            max: meter ? meter.max : null,
            // (what arrived, not what is done: a skipped snapshot is done, and never arrived)
            arrived: Number(/** @type {HTMLElement | null} */ (document.querySelector('.browser-run-downloading'))?.dataset.arrived ?? NaN),
            // (the snapshot's bytes, when the start went without it: counted done at once)
            skipped: Number(/** @type {HTMLElement | null} */ (document.querySelector('.browser-run-downloading'))?.dataset.skipped ?? 0),
            status: document.querySelector('.browser-run-status')?.textContent || '',
        });
    }, everyMs);
};

// What watchDownloadBar kept.
/** @type {() => object[]} */
export const downloadSamples = () => {
    return /** @type {any} */ (window).downloadSamples || [];
};
