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

Output boxes whose longest line (a table's row) is wider than the box are set in smaller type,
down to ``SMALLEST_OUTPUT_SCALE``, so their columns stay columns instead of wrapping.
"""

from __future__ import annotations

# Blocks of at most this many lines are never split across pages (about a third of a page).
SHORTEST_SPLIT_BLOCK = 16
# An output table may be set this much smaller than other code to keep its columns
# (9.2 pt code type -> no less than 6 pt, a footnote's size: 15.11's widest table, 114
# characters inside a worked solution, then fits).
SMALLEST_OUTPUT_SCALE = 0.66
# A note, worked solution or dropdown taller than this (CSS px; a printed page is about
# 990) may split across pages; shorter ones move whole.
TALLEST_KEPT_BOX_PX = 400
SHAPING_LIMITS = [SHORTEST_SPLIT_BLOCK, SMALLEST_OUTPUT_SCALE, TALLEST_KEPT_BOX_PX]

JS_SHAPE_CODE = """([shortestSplit, smallestScale, tallestKept]) => {
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
    const inClass = (piece, pattern) => piece.chain.some((element) => pattern.test(element.className));
    let shaped = 0;
    for (const pre of document.querySelectorAll('article div.highlight pre')) {
        const lines = splitLines(pre);
        const blocks = lines.map((pieces, index) => {
            const line = document.createElement('span');
            line.className = 'print-line';
            for (const piece of pieces) line.append(piece.node);
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
        // An output whose longest line does not fit: smaller type, so a table keeps its columns.
        if (pre.closest('div.cell_output')) {
            const longest = Math.max(...lines.map((pieces) => pieces.map((p) => p.node.textContent).join('').length));
            const probe = document.createElement('span');
            probe.textContent = 'x'.repeat(100);
            probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
            pre.append(probe);
            const charWidth = probe.getBoundingClientRect().width / 100;
            probe.remove();
            const style = getComputedStyle(pre);
            const room = (pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)) / charWidth;
            if (longest > room) {
                const scale = Math.max(smallestScale, Math.floor((room / longest) * 100) / 100);
                pre.style.fontSize = `${parseFloat(style.fontSize) * scale}px`;
            }
        }
        shaped += 1;
    }
    // The theme keeps every admonition (worked solutions are admonitions) on one page: a
    // long one then leaves the rest of the page before it empty. Long ones may split.
    for (const box of document.querySelectorAll('article .admonition, article details, article .sd-card')) {
        if (box.getBoundingClientRect().height > tallestKept) box.classList.add('print-may-split');
    }
    return shaped;
}"""
