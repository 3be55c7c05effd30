"""Print the book to PDF, from its own HTML, in Debian's Chromium: the whole book, and each
chapter's in a book of several.

Usage:
    python -m runnable_book.pipeline.print_pdf _build/print/_build/singlehtml _build/pdf

Which PDFs, their names, pages and titles ("Chapter 15 · Advanced and Agentic Retrieval", on
every page's footer too) are the book's: printed_pdfs.py reads them from its pages. This book
has one chapter: one PDF, chapter15.pdf. A chapter's PDF is printed from the same one page with
the other chapters' pages taken out before it is opened.

The input is Sphinx's ``singlehtml`` build of the book (`make pdf` makes it with the
same _config.yml as the HTML book): the opening, 15.1-15.11 and the references on one
page, with the stored outputs, the plots and the mermaid diagrams. This tool serves it
on 127.0.0.1 (runnable_book/browser/local_site.py), opens it in Debian's Chromium through
Playwright (never a browser of its own), and before printing:

* moves the worked solutions of 15.11 to the back, after the last exercise, each linked
  from its exercise and back, its hints printed flat (runnable_book/pipeline/print_solutions.py),
  and opens every other fold (the ``<details>`` the HTML keeps closed);
* waits until every mermaid diagram is drawn and every image has loaded;
* adds a contents list with page numbers after the chapter title;
* shapes code for paper (runnable_book/pipeline/print_shaping.py): each code and output line its own
  block, so a wrapped line continues indented past its own indentation behind a drawn
  marker; output tables in smaller type where they would wrap; short blocks kept whole;
* lays the page out at the paper's printable width under print media and checks that no
  code or output line is wider than its box (the print CSS in runnable_book/sphinx_ext/static/runnable-book.css
  wraps them);
* aborts every request to another host.

Any of these failing is an error naming what failed, and no PDF is written: the PDF is
written to a temporary file and renamed into place only when everything passed.
The PDF has page numbers in its footer, bookmarks from the headings (outline), a
structure tree (tagged PDF) and document info (Title, Author, Subject), and is dated by the
last commit (SOURCE_DATE_EPOCH), so two prints of one commit are the same bytes (print_finish.py
finishes the PDF Chromium wrote).
"""

from __future__ import annotations

import argparse
import html
import io
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from pypdf import PdfReader

from runnable_book.common.files import write_atomically
from runnable_book.pipeline import print_record
from runnable_book.pipeline.print_finish import (PrintError, destination_pages, dated, document_info, finished,
                                                 pdf_date, section_start_pages, source_date_epoch)
from runnable_book.browser.chromium import BROWSER, keep_on_host, launch, wait_for_page_scripts
from runnable_book.browser.local_site import LocalSite
from runnable_book.common.page_scripts import page_function
from runnable_book.pipeline.print_shaping import JS_SHAPE_CODE, SHAPING_LIMITS
from runnable_book.pipeline.printed_pdfs import PrintedPdf, printed_pdfs, whole_book_pdf
from runnable_book.pipeline.print_solutions import JS_SET_PAGES, JS_SOLUTIONS_AT_THE_BACK, PAGE_TARGETS, exercises_in_print
from runnable_book.browser.page_state import (
    IMAGES_TIMEOUT_MS,
    JS_IMAGES,
    JS_LOAD_ALL_IMAGES,
    MERMAID_TIMEOUT_MS,
    NAVIGATION_TIMEOUT_MS,
    mermaid_status,
)

# The whole book on one page (runnable_book/sphinx_ext/pdf.py moves it to the root of the build).
CHAPTER_PAGE = "index.html"
PAPER = "A4"
MARGIN = {"top": "16mm", "bottom": "18mm", "left": "16mm", "right": "16mm"}
# A4 is 210 mm wide; less the side margins that leaves 178 mm, at 96 CSS px per inch.
PRINTABLE_WIDTH_PX = round((210 - 16 - 16) / 25.4 * 96)
# Chromium fills the footer from these class names; the footer is printed in its own
# small frame, so it needs its own font size (7.5 pt, the smallest type the PDF prints).
def footer(title: str) -> str:
    """Every page's footer: the PDF's title, and the page's number of the pages."""
    return ('<div style="width:100%; font-size:10px; color:#444; padding:0 16mm; display:flex;'
            ' justify-content:space-between; font-family:sans-serif;">'
            f'<span>{html.escape(title)}</span>'
            '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>')


EMPTY_HEADER = "<span></span>"

# What runs in the page around the two prints: print_pdf.mjs (each function says what it does).
SCRIPT = Path(__file__).with_suffix(".mjs")
# A chapter's PDF: printed from a page of its own, the one-page book's HTML with the other
# chapters' pages taken out before it is opened (none of their text is laid out, none of their
# images loaded), titled for the chapter. It is served from memory beside the book's page
# (LocalSite.serve), so that its relative addresses are the book's page's.
JS_CHAPTER_PAGE = page_function(SCRIPT, "chapterPage")


# The empty page the chapter's page is cut in: it fetches the book's page from its own site.
CUTTING_PAGE = "cutting-a-chapter.html"


def chapter_page_name(pdf: PrintedPdf) -> str:
    """Where a chapter's own page is served: beside the book's, named for its PDF (a name no
    Sphinx build writes)."""
    return f"{pdf.name}.html"
# Folds (<details>) that print_solutions did not unfold print opened.
JS_OPEN_DETAILS = page_function(SCRIPT, "openDetails")
# A contents list after the chapter title, one linked entry per section, in place of the
# theme's print-only list (no links, no page numbers); JS_SET_CONTENTS_PAGES numbers it once
# the first print has shown where each section starts.
JS_ADD_CONTENTS = page_function(SCRIPT, "addContents")
JS_SET_CONTENTS_PAGES = page_function(SCRIPT, "setContentsPages")
# The headings Chromium turns into bookmarks: those shown in print, in document order.
JS_PRINTED_HEADINGS = page_function(SCRIPT, "printedHeadings")
# Code and output boxes (and drawings) wider than the column: cut at the margin on paper.
JS_OVERFLOWING_BOXES = page_function(SCRIPT, "overflowingBoxes")


# Before each of the two prints, the whole page laid out anew: its layout tree taken down
# (display: none on the root) and built again, so that no paragraph is printed with a layout
# kept from before the printer's scripts changed the page (code shaped, the contents added,
# then their page numbers and the solutions' links). Without it, a print of the same build
# now and then laid one inline box out otherwise: a citation's link annotated as one
# rectangle, not one per run of its text, or a run of inline code 0.6 px off its line's
# baseline. Why a kept layout would differ is not known; what the step does is measured:
# `make bench-reprints` beside two busy processes, 2 of 20 prints differed without it, 0 of
# 36 with it.
JS_LAID_OUT_AFRESH = page_function(SCRIPT, "laidOutAfresh")


@dataclass
class PrintResult:
    pdf: Path
    pages: int | None  # (None: not printed again, not counted)
    bytes: int
    sections: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    printed: bool = True  # False: left as it was, its inputs unchanged (print_record.py)


class ChapterPrinter:
    """One headless Debian Chromium, reused for any number of prints (a context manager)."""

    # How long the page's diagrams may take to be drawn (a test that plants one that nothing
    # will draw shortens it: a limit, not what the test checks).
    mermaid_timeout_ms = MERMAID_TIMEOUT_MS

    def __enter__(self) -> ChapterPrinter:
        self._launched = launch(BROWSER)  # the PDF is an artefact: the browser itself prints it
        self._browser = self._launched.__enter__()
        self._site_digests: dict[Path, tuple[tuple, str]] = {}
        return self

    def __exit__(self, *exc) -> None:
        self._launched.__exit__(*exc)

    def print_site(self, site_root: Path, out: Path, pdf: PrintedPdf | None = None,
                   records: Path | None = None) -> PrintResult:
        """Print site_root's one page to out as ``pdf`` says (printed_pdfs.py: its pages and its
        title; default, the whole book's); raise PrintError (and write nothing) on a problem.
        ``records``: a folder of print_record.py's records: out is left as it is when it was
        printed from the same inputs, and a new print is recorded there."""
        site_root, out = Path(site_root), Path(out)
        pdf = pdf or whole_book_pdf()
        if not (site_root / CHAPTER_PAGE).is_file():
            raise PrintError(f"{site_root / CHAPTER_PAGE} not found: build the singlehtml book first (make pdf)")
        with LocalSite(site_root) as site:
            context = self._browser.new_context(
                viewport={"width": PRINTABLE_WIDTH_PX, "height": 1000},
                color_scheme="light",  # paper is light, whatever the system prefers
                service_workers="block",
            )
            try:
                return self._print(context, site, out, pdf, records)
            finally:
                context.close()

    # -- steps ---------------------------------------------------------------

    def _print(self, context, site: LocalSite, out: Path, pdf: PrintedPdf, records: Path | None) -> PrintResult:
        title = pdf.title
        external: list[str] = []
        # Everything not served by our own server is stopped before it leaves the machine.
        keep_on_host(context, site.origin, also="data:|blob:", on_blocked=external.append)
        page = context.new_page()
        page.set_default_timeout(NAVIGATION_TIMEOUT_MS)
        page_errors: list[str] = []
        page.on("pageerror", lambda error: page_errors.append(str(error).splitlines()[0]))
        failed_local: list[str] = []
        page.on("response", lambda r: failed_local.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

        where = f"{CHAPTER_PAGE} of {site.root}"
        printed = CHAPTER_PAGE
        page_html = None  # (as the browser gets it: read only when a record is asked for)
        if not pdf.whole_book:
            root = whole_book_pdf().documents[0]  # (the book's first page: the one Sphinx marks not)
            site.serve(CUTTING_PAGE, b"<!DOCTYPE html><title>Cutting</title>")  # (an address of the site's own)
            page.goto(site.url(CUTTING_PAGE))
            cut = page.evaluate(JS_CHAPTER_PAGE, [CHAPTER_PAGE, list(pdf.documents), title, root in pdf.documents])
            missing = [d for d in pdf.documents if d != root and d not in cut["kept"]]
            if missing:
                raise PrintError(f"{where}: {out.name} should print {', '.join(missing)}, which the page does not hold")
            printed = chapter_page_name(pdf)
            page_html = cut["html"].encode("utf-8")
            site.serve(printed, page_html)
            where = f"{where}, cut to {out.name}'s pages"
        inputs = None
        if records is not None:
            if page_html is None:
                page_html = (site.root / CHAPTER_PAGE).read_bytes()
            inputs = print_record.inputs_digest(page_html, self._site_digest(site.root), title, pdf.documents,
                                                self._browser.version, source_date_epoch())
            if print_record.unchanged(records, out, inputs):
                return PrintResult(out, None, out.stat().st_size, printed=False)
        page.goto(site.url(printed), wait_until="load")
        wait_for_page_scripts(page)
        page_targets = page.evaluate(JS_SOLUTIONS_AT_THE_BACK, [PAGE_TARGETS, exercises_in_print(pdf.documents)])
        page.evaluate(JS_OPEN_DETAILS)
        self._wait_for_diagrams(page, where)
        self._wait_for_images(page, where)
        page.emulate_media(media="print")
        page.evaluate(JS_SHAPE_CODE, SHAPING_LIMITS)
        sections = page.evaluate(JS_ADD_CONTENTS)
        overflowing = page.evaluate(JS_OVERFLOWING_BOXES)
        if overflowing:
            raise PrintError(
                f"{where}: {len(overflowing)} box(es) wider than the printed page; the print CSS must wrap them:\n"
                + "\n".join(f"  {o['what']} {o['width']:.0f}px in {o['box']:.0f}px: {o['text']!r}" for o in overflowing)
            )
        if external:
            raise PrintError(f"{where}: the page requested other hosts (blocked):\n  " + "\n  ".join(external))
        if page_errors or failed_local:
            raise PrintError(f"{where}: the page had errors:\n  " + "\n  ".join(page_errors + failed_local))

        # First pass: where does each section start? Then print again with those page
        # numbers in the contents list (same length text, so the pages do not move).
        page.evaluate(JS_LAID_OUT_AFRESH)
        first = self._pdf(page, title)
        page.evaluate(JS_SET_CONTENTS_PAGES, section_start_pages(first, sections))
        page.evaluate(JS_SET_PAGES, [PAGE_TARGETS, destination_pages(first, page_targets)])
        page.evaluate(JS_LAID_OUT_AFRESH)
        created = pdf_date(source_date_epoch())
        final = finished(dated(self._pdf(page, title), created), page.evaluate(JS_PRINTED_HEADINGS),
                         document_info(created, title))
        if external:  # anything requested while printing
            raise PrintError(f"{where}: the page requested other hosts (blocked):\n  " + "\n  ".join(external))
        write_atomically(out, final)
        if records is not None:
            print_record.keep(records, out, inputs, final)
        return PrintResult(out, len(PdfReader(io.BytesIO(final)).pages), len(final), sections, external)

    def _site_digest(self, site_root: Path) -> str:
        """print_record.site_digest, read again only when a file of the folder was written since
        (the PDFs of one run are printed from one build)."""
        files = print_record.stat_signature(site_root)
        if self._site_digests.get(site_root, (None,))[0] != files:
            self._site_digests[site_root] = (files, print_record.site_digest(site_root, CHAPTER_PAGE))
        return self._site_digests[site_root][1]

    def _wait_for_diagrams(self, page, where: str) -> None:
        # (Polled once a frame: the print is an artefact, one wait per print
        # costs nothing, and a PDF that prints twice the same must not depend on when in a
        # frame the wait returned. The checks and tests poll every page_state.POLL_MS.)
        status = mermaid_status(page, self.mermaid_timeout_ms, polling="raf")
        problems = []
        for index, block in enumerate(status["blocks"], start=1):
            if block["failed"]:
                problems.append(f"mermaid diagram #{index} shows a mermaid syntax error")
            elif not block["drawn"]:
                problems.append(f"mermaid diagram #{index} was not drawn within {self.mermaid_timeout_ms / 1000:g} s")
        if status["strayErrors"]:
            problems.append("a mermaid error diagram is shown on the page")
        if problems:
            raise PrintError(f"{where}: " + "; ".join(problems))

    def _wait_for_images(self, page, where: str) -> None:
        page.evaluate(JS_LOAD_ALL_IMAGES, IMAGES_TIMEOUT_MS)
        broken = [image["src"] for image in page.evaluate(JS_IMAGES) if image["broken"]]
        if broken:
            raise PrintError(f"{where}: image(s) did not load: {', '.join(broken)}")

    @staticmethod
    def _pdf(page, title: str) -> bytes:
        return page.pdf(
            format=PAPER,
            margin=MARGIN,
            print_background=True,
            display_header_footer=True,
            header_template=EMPTY_HEADER,
            footer_template=footer(title),
            outline=True,  # PDF bookmarks from the headings
            # A structure tree (reading order for screen readers and reflow). Chromium
            # also builds the bookmarks from it: untagged, the PDF has none.
            tagged=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the singlehtml build, e.g. _build/print/_build/singlehtml")
    parser.add_argument("folder", type=Path, help="where to write the book's PDFs (printed_pdfs.py), e.g. _build/pdf")
    parser.add_argument("--records", type=Path, help="a folder of records of what each PDF was printed from: a PDF "
                        "whose inputs are unchanged is not printed again (print_record.py; `make pdf`)")
    args = parser.parse_args(argv)
    try:
        with ChapterPrinter() as printer:
            for pdf in printed_pdfs():
                started = time.monotonic()
                result = printer.print_site(args.site, args.folder / pdf.name, pdf, args.records)
                if not result.printed:
                    print(print_record.describe(result.pdf))
                    continue
                print(f"{result.pdf}: {result.pages} pages, {result.bytes / 1e6:.2f} MB, "
                      f"{len(result.sections)} sections, printed in {time.monotonic() - started:.1f} s")
    except (PrintError, RuntimeError, PlaywrightError) as error:
        print(f"print_pdf: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
