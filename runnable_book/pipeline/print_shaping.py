"""What runnable_book/pipeline/print_pdf.py does to the chapter's page, just before printing, so code
keeps its shape on paper. (The rest of print's look is CSS: runnable_book/sphinx_ext/static/runnable-book.css, @media print.)

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

from pathlib import Path

from runnable_book.common.page_scripts import page_function

# Blocks of at most this many lines are never split across pages (about a third of a page).
SHORTEST_SPLIT_BLOCK = 16
# A run without spaces up to this long is never broken inside (a printed row holds about 80).
LONGEST_KEPT_TOKEN = 40
# A note, worked solution or dropdown taller than this (CSS px; a printed page is about
# 990) may split across pages; shorter ones move whole.
TALLEST_KEPT_BOX_PX = 400
SHAPING_LIMITS = [SHORTEST_SPLIT_BLOCK, LONGEST_KEPT_TOKEN, TALLEST_KEPT_BOX_PX]

# The pass itself runs in the page: print_shaping.mjs.
JS_SHAPE_CODE = page_function(Path(__file__).with_suffix(".mjs"), "shapeCode")
