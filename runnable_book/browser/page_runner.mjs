// What page_runner.py asks of a page whose "Run in your browser" it drives (ours): each
// `export const` a function Playwright's page.evaluate or wait_for_function calls with its
// argument. Playwright sends a function's own text, not this module: a function uses nothing
// declared outside it. `window.browserRun` is the runner's (runner.mjs: its cells, each with
// its element, its source and its output).

// Every cell as the page shows it. A figure's output element is read as its text/plain (what
// nbval compares); its images are listed apart: drawn in the page (a data: URL), loaded, shown
// (not hidden by the runner; a worked solution's figure is shown once its fold is opened), with
// their alt text and size (the notebook's, the column's at most: CSS).
/** @type {() => object[]} */
export const cells = () => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return run.cells.map((c) => ({
        number: c.number,
        source: c.source(),
        state: c.element.dataset.runState,
        outputs: c.output.list(),
        images: [...c.output.container.querySelectorAll('img.browser-run-figure-image')].map(
            (/** @type {HTMLImageElement} */ img) => ({
                drawnInPage: img.src.startsWith('data:image/png;base64,'),
                loaded: img.complete && img.naturalWidth > 0,
                visible: !img.closest('[hidden]'),
                alt: img.alt, src: img.src,
                width: +(img.getAttribute('width') || 0), height: +(img.getAttribute('height') || 0),
            })),
        storedAlts: (c.figureSlots ? c.figureSlots.map((/** @type {{img: HTMLImageElement}} */ s) => s.img)
            : [...c.element.querySelectorAll('.cell_output img')])
            .map((/** @type {HTMLImageElement} */ img) => img.alt),
        storedImagesShown: [...c.element.querySelectorAll('img:not(.browser-run-figure-image)')]
            .filter((img) => !img.closest('[hidden]')).length,
    }));
};

// Cell n (1-based) has run, and what it output is drawn: the page draws a cell's output on the
// next animation frame, a displayed value once its renderer has loaded (output.mjs: `drawn`),
// and `cells` reads the images from what is drawn. A hidden page draws no frames, and is not
// waited for them. (The same test of "drawn" is in runFinished.)
/** @type {(n: number) => boolean} */
export const cellRan = (n) => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    const cell = run.cells[n - 1];
    return ['done', 'error'].includes(cell.element.dataset.runState)
        && (cell.output.drawn || document.hidden);
};

// Python idle, no cell queued or running, and every output drawn (as in cellRan).
/** @type {() => boolean} */
export const runFinished = () => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return document.documentElement.dataset.browserRun === 'idle'
        && run.cells.every((c) => !['queued', 'running'].includes(c.element.dataset.runState)
                                  && (c.output.drawn || document.hidden));
};

// Some cell has shown an output.
/** @type {() => boolean} */
export const firstOutput = () => {
    return !!document.querySelector('.browser-run-output pre');
};

// Python is started and runs nothing (<html data-browser-run>, runner.mjs).
/** @type {() => boolean} */
export const pythonIdle = () => {
    return document.documentElement.dataset.browserRun === 'idle';
};

// When each step of the run's start ended (boot.mjs, loader.js), [] before the first.
/** @type {() => {step: string, at: number}[]} */
export const timings = () => {
    return window.browserRunTimings || [];
};

// The origin's localStorage emptied (the reader's kept work, progress: nothing kept from before).
/** @type {() => void} */
export const clearStorage = () => {
    localStorage.clear();
};

// Cell n (1-based) is in run state `state` (queued, running, done, error, stopped, stale).
/** @type {(argument: [number, string]) => boolean} */
export const cellIs = ([n, state]) => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return run.cells[n - 1].element.dataset.runState === state;
};

// Cell n's (1-based) run state.
/** @type {(n: number) => string | undefined} */
export const cellState = (n) => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return run.cells[n - 1].element.dataset.runState;
};

// Cell n (1-based) is in run state `state`, and Python is idle again (after a Stop: stopped,
// and the runtime ready for the next run).
/** @type {(argument: [number, string]) => boolean} */
export const cellIsAndPythonIdle = ([n, state]) => {
    const run = /** @type {NonNullable<Window['browserRun']>} */ (window.browserRun);
    return run.cells[n - 1].element.dataset.runState === state
        && document.documentElement.dataset.browserRun === 'idle';
};
