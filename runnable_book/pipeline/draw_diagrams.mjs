// What draw_diagrams.py runs in its drawing page (a blank page with the diagram font and
// mermaid's own script added; ours): each `export const` a function Playwright's
// page.evaluate calls with its argument. Playwright sends a function's own text, not this
// module: a function uses nothing declared outside it. `mermaid` is the global mermaid.min.js
// defines.

// Whether the font `family` (the diagrams' own, added as an @font-face) has loaded: the
// labels are measured in it, so it must be there before the first drawing.
/** @type {(family: string) => Promise<boolean>} */
export const fontLoaded = async (family) => {
    return (await document.fonts.load(`16px "${family}"`)).length > 0;
};

// mermaid set up with the book's options (draw_diagrams.py's OPTIONS).
/** @type {(options: object) => void} */
export const initializeMermaid = (options) => {
    /** @type {any} */ (window).mermaid.initialize(options);
};

// One diagram drawn: its SVG markup, its styles scoped by `id`.
/** @type {(argument: [string, string]) => Promise<string>} */
export const renderMermaid = async ([id, code]) => {
    return (await /** @type {any} */ (window).mermaid.render(id, code)).svg;
};
