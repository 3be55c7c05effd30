// What run_in_browser.py (`make bench-run`) runs in a page of the book (ours): each
// `export const` a function Playwright's page.evaluate or wait_for_function calls with its
// argument. Playwright sends a function's own text, not this module: a function uses nothing
// declared outside it. `window.browserRun` is the runner's (runner.mjs).

// Run cell 1 with `source`, timing it in the page and watching the frames meanwhile. With
// `stopAfterMs`, Stop is pressed that long after the run starts (as a reader would).
/** @type {(argument: [string, number | null]) => Promise<object>} */
export const timedRun = async ([source, stopAfterMs]) => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    const cell = run.cells[0];
    cell.setSource(source);
    let longest = 0, last = performance.now(), watching = true;
    /** @type {(now: number) => void} */
    const frame = (now) => { longest = Math.max(longest, now - last); last = now; if (watching) requestAnimationFrame(frame); };
    requestAnimationFrame(frame);
    const started = performance.now();
    cell.element.querySelector('.browser-run-run').click();
    const finished = () => ['done', 'error', 'stopped'].includes(cell.runState);
    let stoppedAt = null;
    if (stopAfterMs != null) {
        await new Promise((resolve) => { setTimeout(resolve, stopAfterMs); });
        stoppedAt = performance.now();
        /** @type {HTMLElement} */ (document.querySelector('.browser-run-stop')).click();
    }
    while (!finished()) await new Promise((resolve) => { setTimeout(resolve, 5); });
    const ended = performance.now();
    watching = false;
    return {
        seconds: (ended - started) / 1000,
        longest_frame_gap_ms: Math.round(longest),
        stop_to_stopped_ms: stoppedAt == null ? null : Math.round(ended - stoppedAt),
        state: cell.runState,
        output_chars: cell.output.parts.reduce((/** @type {number} */ n, /** @type {{text: string}} */ part) => n + part.text.length, 0),
        shown_height_px: Math.round(cell.output.container.getBoundingClientRect().height),
    };
};

// Cell n (1-based) shows a figure it drew.
/** @type {(n: number) => boolean} */
export const figureShown = (n) => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return !!run.cells[n - 1].output.container.querySelector('img.browser-run-figure-image');
};

// The number of the page's first cell that imports matplotlib.
/** @type {() => number} */
export const firstFigureCell = () => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return run.cells.find((c) => /^\s*(import|from)\s+matplotlib/m.test(c.source())).number;
};

// The bare runtime's page (bare_runtime/index.html) shows 1 + 1.
/** @type {() => boolean} */
export const bareRuntimeAnswered = () => {
    return /** @type {Element} */ (document.getElementById('out')).textContent === '2';
};
