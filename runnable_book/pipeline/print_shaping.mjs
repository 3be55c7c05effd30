// What runnable_book/pipeline/print_pdf.py runs in the chapter's page just before printing, so code
// keeps its shape on paper (ours): read by print_shaping.py (which says what it does and
// why), each `export const` a function Playwright's page.evaluate calls with its argument.
// The limits it is called with are print_shaping.py's SHAPING_LIMITS.

// Types (tsc, tsconfig.page.json): a piece of a line is a text node and the elements around it.
/** @typedef {{ node: Text | Element, chain: Element[] }} Piece */

// [shortestSplit, longestKept, tallestKept]: returns how many code boxes it shaped.
/** @type {(limits: [number, number, number]) => number} */
export const shapeCode = ([shortestSplit, longestKept, tallestKept]) => {
    // Each line of a <pre> as its own block, the code's own markup (syntax colours) kept: an
    // element spanning a line break is cloned on both sides of it.
    /** @type {(pre: Element) => Piece[][]} */
    const splitLines = (pre) => {
        /** @type {Piece[][]} */
        const lines = [[]];
        /** @type {(chain: Element[], text: string) => Text | Element} */
        const wrapped = (chain, text) => {
            /** @type {Text | Element} */
            let node = document.createTextNode(text);
            for (const element of [...chain].reverse()) {
                const clone = /** @type {Element} */ (element.cloneNode(false));
                clone.removeAttribute('id');
                clone.append(node);
                node = clone;
            }
            return node;
        };
        // (tsc does not narrow a node by its nodeType: the casts below say what the test found.)
        /** @type {(node: Node, chain: Element[]) => void} */
        const walk = (node, chain) => {
            for (const child of [...node.childNodes]) {
                if (child.nodeType === Node.TEXT_NODE) {
                    /** @type {Text} */ (child).data.split('\n').forEach((part, index) => {
                        if (index > 0) lines.push([]);
                        if (part) /** @type {Piece[]} */ (lines.at(-1)).push({node: wrapped(chain, part), chain});
                    });
                } else if (child.nodeType === Node.ELEMENT_NODE) {
                    const element = /** @type {Element} */ (child);
                    walk(element, [...chain, element]);
                }
            }
        };
        walk(pre, []);
        if (lines.length > 1 && /** @type {Piece[]} */ (lines.at(-1)).length === 0) lines.pop();  // the final newline
        return lines;
    };
    // A run without spaces that a browser may break inside (after a hyphen or slash), kept whole.
    const breakable = /(\S*[-/]\S*)/;
    /** @type {(node: Node) => void} */
    const keepTokens = (node) => {
        for (const child of node.nodeType === Node.TEXT_NODE ? [node] : [...node.childNodes]) {
            if (child.nodeType !== Node.TEXT_NODE) { keepTokens(child); continue; }
            const text = /** @type {Text} */ (child);
            const parts = text.data.split(breakable);
            if (parts.length === 1) continue;
            text.replaceWith(...parts.filter(Boolean).map((part) => {
                if (!breakable.test(part) || part.length > longestKept) return document.createTextNode(part);
                const token = document.createElement('span');
                token.className = 'print-token';
                token.textContent = part;
                return token;
            }));
        }
    };
    /** @type {(piece: Piece, pattern: RegExp) => boolean} */
    const inClass = (piece, pattern) => piece.chain.some((element) => pattern.test(element.className));
    let shaped = 0;
    for (const pre of document.querySelectorAll('article div.highlight pre')) {
        const lines = splitLines(pre);
        const blocks = lines.map((pieces, index) => {
            const line = document.createElement('span');
            line.className = 'print-line';
            for (const piece of pieces) line.append(piece.node);
            keepTokens(line);
            const text = line.textContent;
            line.style.setProperty('--indent', String(text.length - text.trimStart().length));
            const first = pieces.find((piece) => piece.node.textContent.trim());
            // Pygments: c, c1, ch, cm = comments; sd = docstrings.
            const keep = first && (inClass(first, /(^|\s)(c|c1|ch|cm|sd)(\s|$)/)
                                   || pieces.every((p) => inClass(p, /(^|\s)sd(\s|$)/)));
            if (keep || index < 2) line.classList.add('print-keep-with-next');
            return line;
        });
        if (blocks.length >= 3) /** @type {HTMLSpanElement} */ (blocks.at(-3)).classList.add('print-keep-with-next');
        pre.replaceChildren(...blocks);
        pre.classList.add('print-lines');
        // One output of a cell (a cell may print several), or a cell's code.
        const box = pre.closest('div.output') || pre.closest('div.cell_input')
            || pre.closest('div[class*="highlight-"]') || pre;
        if (lines.length <= shortestSplit) box.classList.add('print-keep');
        shaped += 1;
    }
    // The theme keeps every admonition (worked solutions are admonitions) on one page: a
    // long one then leaves the rest of the page before it empty. Long ones may split.
    for (const box of document.querySelectorAll('article .admonition, article details, article .sd-card')) {
        if (box.getBoundingClientRect().height > tallestKept) box.classList.add('print-may-split');
    }
    return shaped;
};
