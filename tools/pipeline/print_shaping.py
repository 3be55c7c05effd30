"""What tools/pipeline/print_pdf.py does to the chapter's page, just before printing, so code
keeps its shape on paper. (The rest of print's look is CSS: book/_static/chapter.css, @media print.)

CSS alone cannot indent a wrapped code line past its own indentation: Chromium has no
``text-indent: hanging each-line``, and a ``<pre>`` is one block whatever its lines. So each
line of every code and output box becomes its own block (``span.print-line``), carrying its
leading spaces as ``--indent``; the print CSS then hangs a wrapped line's continuation four
characters past its indentation, with a continuation marker (a drawn arrow, not a character,
so the PDF's text is still the code's) in front of every continued row, and keeps a line's
rows on one page.

The same pass marks what page breaks should respect:

* ``print-keep``: a block short enough to move whole to the next page (never split);
* ``print-keep-with-next``: a comment line, or a line inside a docstring, stays on the page of
  the line after it, so a long block splits between statements, not inside a comment;
  and the first two lines of a long block stay with its third (no lone first line).

* ``print-may-split``: a note or worked solution too tall to move whole to the next page
  (the theme keeps every admonition whole, leaving a page before a long one mostly empty).

Code and output print at one size: a wide output line (a table's row) wraps as code does,
never by shrinking its box's type (6 pt was unreadable). And it wraps between tokens: a
short run without spaces that holds a hyphen or slash (``'us-east-2'``, ``cmdb://systems/aurora``)
is kept on one row (``span.print-token``), so the line breaks at the space before it rather
than inside it; only a run longer than ``LONGEST_KEPT_TOKEN`` characters may still break inside.
"""

from __future__ import annotations

# Blocks of at most this many lines are never split across pages (about a third of a page).
SHORTEST_SPLIT_BLOCK = 16
# A run without spaces up to this long is never broken inside (a printed row holds about 80).
LONGEST_KEPT_TOKEN = 40
# A note, worked solution or dropdown taller than this (CSS px; a printed page is about
# 990) may split across pages; shorter ones move whole.
TALLEST_KEPT_BOX_PX = 400
SHAPING_LIMITS = [SHORTEST_SPLIT_BLOCK, LONGEST_KEPT_TOKEN, TALLEST_KEPT_BOX_PX]

JS_SHAPE_CODE = """([shortestSplit, longestKept, tallestKept]) => {
    // Each line of a <pre> as its own block, the code's own markup (syntax colours) kept: an
    // element spanning a line break is cloned on both sides of it.
    const splitLines = (pre) => {
        const lines = [[]];
        const wrapped = (chain, text) => {
            let node = document.createTextNode(text);
            for (const element of [...chain].reverse()) {
                const clone = element.cloneNode(false);
                clone.removeAttribute('id');
                clone.append(node);
                node = clone;
            }
            return node;
        };
        const walk = (node, chain) => {
            for (const child of [...node.childNodes]) {
                if (child.nodeType === Node.TEXT_NODE) {
                    child.data.split('\\n').forEach((part, index) => {
                        if (index > 0) lines.push([]);
                        if (part) lines.at(-1).push({node: wrapped(chain, part), chain});
                    });
                } else if (child.nodeType === Node.ELEMENT_NODE) {
                    walk(child, [...chain, child]);
                }
            }
        };
        walk(pre, []);
        if (lines.length > 1 && lines.at(-1).length === 0) lines.pop();  // the final newline
        return lines;
    };
    // A run without spaces that a browser may break inside (after a hyphen or slash), kept whole.
    const breakable = /(\\S*[-/]\\S*)/;
    const keepTokens = (node) => {
        for (const text of node.nodeType === Node.TEXT_NODE ? [node] : [...node.childNodes]) {
            if (text.nodeType !== Node.TEXT_NODE) { keepTokens(text); continue; }
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
            const keep = first && (inClass(first, /(^|\\s)(c|c1|ch|cm|sd)(\\s|$)/)
                                   || pieces.every((p) => inClass(p, /(^|\\s)sd(\\s|$)/)));
            if (keep || index < 2) line.classList.add('print-keep-with-next');
            return line;
        });
        if (blocks.length >= 3) blocks.at(-3).classList.add('print-keep-with-next');
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
}"""
