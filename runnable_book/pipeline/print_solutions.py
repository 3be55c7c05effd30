"""What runnable_book/pipeline/print_pdf.py does to 15.11 before printing: solutions at the back.

On screen, each exercise is followed by its hints (dropdowns, each holding the next) and its
worked solution (folded code cells and an "answer in words" dropdown, labelled "Worked
solution N: show the code" and the like), closed until the reader opens them. Printed that
way, every solution sits open under its exercise, and the fold labels ask the reader to click.
A book puts the answers at the end of the chapter, so in print only:

* each exercise keeps its text, its start cell and its hints, flat and one after another
  ("Hint 1", "Hint 2", ...), then a line "Solution: p. N" linking to its solution;
* every worked solution moves, in order, to a section "Solutions to the exercises" after the
  last exercise, under a heading "Solution N (exercise N, p. M)" linking back: its code,
  outputs and figures, then the answer in words, with no fold labels;
* the page's introduction says where the hints and solutions are in print (its two sentences
  about the screen's folds are replaced; a page that no longer has them stops the print).

The page numbers are filled in on the second print (print_pdf.py), from the named
destinations Chromium writes for the two links' targets: ``PAGE_TARGETS`` is the attribute
whose value names the target. The HTML and the notebooks keep their folds: this runs only
in the page being printed.
"""

from __future__ import annotations

from pathlib import Path

from runnable_book.pipeline import book_shape
from runnable_book.repository import ROOT
from runnable_book.common.page_scripts import page_function

# What runs in the page: print_solutions.mjs.
SCRIPT = Path(__file__).with_suffix(".mjs")

# An element whose text is the page number of the element with this id (filled in later).
PAGE_TARGETS = "data-page-of"
SOLUTIONS_SECTION_ID = "print-solutions"

# Called with [PAGE_TARGETS, exercises_in_print()]. Returns the ids whose page numbers the
# second print fills in. Throws when 15.11 is not laid out as expected (an exercise's section
# missing, or without hints or a solution), rather than print it half moved.
JS_SOLUTIONS_AT_THE_BACK = page_function(SCRIPT, "solutionsAtTheBack")


def exercises_in_print(documents: tuple[str, ...] | None = None) -> list[dict]:
    """The exercises whose solutions move, as book_shape.py reads them from the exercise page:
    [{number, section}] in page order, section being the id of the exercise's section.
    (None in a book of several exercise pages: their sections' ids meet in the one printed page,
    so each worked solution stays printed after its exercise, as the HTML has it; none in a
    chapter's PDF without the exercise page, ``documents`` being its pages as Sphinx names them.)"""
    pages = book_shape.exercise_pages()
    if len(pages) != 1:
        return []
    if documents is not None and pages[0].relative_to(ROOT).with_suffix("").as_posix() not in documents:
        return []
    return [{"number": exercise.number, "section": exercise.section_id} for exercise in book_shape.exercises(pages[0]).values()]

JS_SET_PAGES = page_function(SCRIPT, "setPages")
