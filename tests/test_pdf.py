"""The book's PDF (`make pdf`, _build/pdf/chapter15.pdf: its one chapter) holds the whole chapter, printably.

* Every line of the chapter as delivered, but the departures its author accepted, is in
  the PDF's text, by the rules the HTML and the notebooks are held to
  (runnable_book/pipeline/accept.py: its markup restoration and normalisation, then whitespace
  set aside: see in_pdf_terms), the two diagrams drawn with every label, and every
  reference in the bibliography.
* Every font is embedded; the PDF has a bookmark titled as each section, in order, a
  contents list whose page numbers agree, is tagged, and has a sane number of pages.
* It reads like a typeset book: no type below 7.5 pt (code and output at one size); every
  diagram's labels at least 7 pt; every code line
  whole on one line, or wrapped with its continuation indented past it; nothing that only
  works on screen (fold triangles, diagram sources, copy and run controls); title, author
  and subject in the document info, dated by a commit, so printing again gives the same
  bytes; every plot printed as vectors or at 200 ppi or more.
* 15.11's worked solutions print after the last exercise, linked both ways, with no fold
  labels; its hints print flat.
* The HTML book links the very PDF that was tested.
* runnable_book/pipeline/print_pdf.py refuses to print, and writes nothing, when a diagram is not drawn,
  a code box would be cut at the right margin, or the page requests another host
  (planted faults on a copy of the singlehtml build). So the PDF that exists passed
  those checks: it is printed only when they all pass.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from markers import needs
from pypdf import PdfReader

from bs4 import BeautifulSoup
import yaml

from built_artefacts import require_built
from runnable_book.pipeline.accept import (
    delivered_references, delivered_text, lines_to_hold, normalized, reference_marks, restored_markup,
)
from runnable_book.pipeline.book_shape import exercise_numbers
from runnable_book.pipeline.pdf_difference import first_difference
from runnable_book.pipeline.pages import code_cells, notebook_pages, page_title, pages_in_toc_order, read_page
from runnable_book.pipeline.artefact_steps import SINGLEHTML, pdf_path  # (the build graph's own paths)
from runnable_book.pipeline.printed_pdfs import PrintedPdf, whole_book_pdf
from runnable_book.pipeline.print_finish import epoch_dated, outline_pages, pdf_date
from runnable_book.pipeline.print_pdf import CHAPTER_PAGE, ChapterPrinter, PrintError

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parent.parent
PDF = pdf_path()  # (named for the book: runnable_book/pipeline/printed_pdfs.py)
# A4 at 14px type: about 60 pages today. Far fewer means content went missing; far more,
# that something prints at the wrong size.
PAGE_RANGE = (30, 150)
# Every page's footer: the PDF's title ("Chapter 15 · Advanced and Agentic Retrieval", as
# tests/test_printed_pdfs.py reads it from the pages) and the page's number.
FOOTER = re.compile(re.escape(whole_book_pdf().title) + r"\s+\d+\s*/\s*\d+\s*$")
# The first line of each mermaid diagram in the chapter's text; its indented lines follow.
DIAGRAM_START = re.compile(r"^(stateDiagram-v2|flowchart \w+)$")
# The texts a diagram draws. A flowchart draws its node labels ["..."], {"..."},
# (["..."]) and edge labels |...|, not its node ids; a state diagram, "A --> B: label",
# draws the states A and B and the label.
FLOWCHART_LABELS = re.compile(r'\[\"(.+?)\"\]|\{\"(.+?)\"\}|\|(.+?)\|')
STATE_LABELS = re.compile(r'^\s*(\w+)\s*-->|-->\s*(\w+)|:\s*(.+)$')


def in_pdf_terms(text: str) -> str:
    """Text as it can be compared with the PDF's: no whitespace at all.

    A PDF has glyphs at positions, not lines and spaces: extraction pads laid-out lines
    with spaces, puts a space either side of an inline-code box ("d05 , d06"), and
    splits every line the page wraps, code included, where the page wrapped it (a long
    code line continues on the next printed line, without its indentation). So the
    comparison keeps every other character, in order, and drops whitespace.
    Ligatures ("ﬁ") are split back into letters (NFKC) on both sides.
    """
    return re.sub(r"\s+", "", normalized(unicodedata.normalize("NFKC", text)))


@pytest.fixture(scope="module")
def pdf() -> Path:
    return require_built(PDF, "pdf")


@pytest.fixture(scope="module")
def reader(pdf) -> PdfReader:
    return PdfReader(pdf)


@pytest.fixture(scope="module")
def page_texts(reader) -> list[str]:
    # Layout mode reads each page top to bottom, as printed; the default follows the
    # content stream, which can put a code block continued from the last page after
    # the paragraph below it.
    return [FOOTER.sub("", page.extract_text(extraction_mode="layout")) for page in reader.pages]


def diagram_lines() -> dict[str, re.Pattern]:
    """Each line of the chapter's diagram sources, with the pattern of what it draws."""
    lines, labels = {}, None
    for line in delivered_text()[0].splitlines():
        if DIAGRAM_START.match(line):
            labels = STATE_LABELS if line.startswith("stateDiagram") else FLOWCHART_LABELS
        elif not line.startswith((" ", "\t")):
            labels = None
            continue
        if labels is not None:
            lines[line] = labels
    return lines


def drawn_labels(line: str, labels: re.Pattern) -> list[str]:
    return [group for match in labels.finditer(line) for group in match.groups() if group]


@pytest.fixture(scope="module")
def diagram_texts(reader, page_texts) -> str:
    """The text of the pages with a figure, in drawing order.

    A diagram's label wrapped onto two lines inside its box shares those lines with the
    boxes beside it, so reading the page row by row (layout mode) interleaves labels;
    drawing order keeps each label whole.
    """
    pages = [i for i, text in enumerate(page_texts) if "Figure15." in in_pdf_terms(text)]
    return "\n".join(reader.pages[i].extract_text() for i in pages)


def test_every_line_of_the_chapter_is_in_the_pdf(page_texts, diagram_texts):
    text = in_pdf_terms("\n".join(page_texts))
    drawn = in_pdf_terms(diagram_texts)
    diagrams = diagram_lines()
    assert len(diagrams) >= 20, "the chapter's two diagrams were not found in its text"
    missing = []
    for line in lines_to_hold():
        if line in diagrams:
            # A diagram is printed drawn: its source is not in the PDF, its labels are.
            missing += [f"{line.strip()}  (label {label!r})" for label in drawn_labels(line, diagrams[line])
                        if in_pdf_terms(label) not in drawn]
        elif in_pdf_terms(restored_markup(line)) not in text:
            missing.append(line)
    assert not missing, f"{len(missing)} lines of the chapter are not in the PDF:\n" + "\n".join(missing[:20])


def link_annotations(reader: PdfReader) -> list[tuple[int, str | None, str | None]]:
    """(page, URI, named destination) of every link annotation, one of the two set."""
    links = []
    for number, page in enumerate(reader.pages, start=1):
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            action = annotation.get("/A")
            action = action.get_object() if action is not None else {}
            destination = annotation.get("/Dest", action.get("/D"))
            links.append((number, str(action["/URI"]) if "/URI" in action else None,
                          str(destination) if destination is not None else None))
    return links


def test_no_link_leads_to_the_build_server_and_every_citation_to_its_entry(reader):
    """Citations are internal links to their reference; external links stay external; nothing
    points at the 127.0.0.1 server the PDF was printed from."""
    links = link_annotations(reader)
    uris = [uri for _, uri, _ in links if uri is not None]
    local = [uri for uri in uris if re.match(r"https?://(127\.|localhost|\[::1\])", uri)]
    assert not local, f"{len(local)} links lead to the build's own server: {sorted(set(local))[:5]}"
    assert all(uri.startswith(("https://", "http://", "mailto:")) for uri in uris), uris
    destinations = {str(name) for name in reader.named_destinations}
    internal = [name for _, _, name in links if name is not None]
    dead = sorted({name for name in internal if name not in destinations})
    assert not dead, f"internal links to no destination: {dead}"
    # Every reference is cited, so each entry of the bibliography has a citation linking to it,
    # landing on the References pages.
    cited = {name for name in internal if name.startswith("/cite-")}
    entries = delivered_references()
    assert len(cited) == len(entries), f"citations link {len(cited)} of {len(entries)} references: {sorted(cited)}"
    references_page = dict(outline_pages(PDF.read_bytes()))["References"]
    for name in cited:
        landing = reader.get_destination_page_number(reader.named_destinations[name]) + 1
        assert landing >= references_page, f"{name} lands on page {landing}, before the References ({references_page})"


# Print sizes (poppler-utils' pdftotext and pdfimages read the PDF as a reader's viewer would).
SMALLEST_LABEL_PT = 7
LOWEST_IMAGE_PPI = 200
# What only the screen shows, never to be printed: fold triangles, the diagrams' folded
# source, the "Hide"/"Show" prompts of folds, run and copy controls.
SCREEN_ONLY = ("▼", "▶", "▸", "Diagram source", "Hide worked solution", "Hide the code", "Show code cell",
               "Run in your browser", "Launch Binder", "Download source file", "Copy to clipboard")


def poppler(tool: str, *args: str) -> str:
    return subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout


def test_no_screen_only_string_is_printed(pdf):
    text = poppler("pdftotext", str(pdf), "-")
    printed = [string for string in SCREEN_ONLY if string in text]
    assert not printed, f"the PDF prints what only works on screen: {printed}"


def test_document_info_names_title_author_and_subject(reader):
    info = reader.metadata or {}
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    for key in ("/Title", "/Author", "/Subject"):
        assert str(info.get(key) or "").strip(), f"the PDF's document info has no {key[1:]}: {dict(info)}"
    assert "Advanced and Agentic Retrieval" in info["/Title"]
    assert info["/Author"] == config["author"]
    assert "\n" not in info["/Subject"] and not info["/Subject"].endswith("…"), info["/Subject"]


def test_the_pdf_is_dated_by_a_commit(reader):
    """Not by the clock: by the commit it was built from (SOURCE_DATE_EPOCH)."""
    created = str(reader.metadata["/CreationDate"])
    commits = poppler("git", "-C", str(ROOT), "log", "--format=%ct").split()
    assert created in {pdf_date(int(epoch)) for epoch in commits}, f"{created} is no commit's date"
    assert reader.metadata["/ModDate"] == created


def test_printing_again_gives_the_same_bytes(printer, pdf, reader, tmp_path, monkeypatch):
    """Two prints of the same build, dated alike (SOURCE_DATE_EPOCH), are the same file."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(epoch_dated(reader)))
    again = tmp_path / "again.pdf"
    printer.print_site(SINGLEHTML, again)
    if again.read_bytes() != pdf.read_bytes():
        # Kept for whoever reads the failure: the two prints, and where they first differ.
        kept = ROOT / "_build" / "test-run" / "pdf-printed-again"
        kept.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pdf, kept / "first.pdf")
        shutil.copyfile(again, kept / "again.pdf")
        pytest.fail(f"printing the same build twice gave different PDFs: {first_difference(reader, PdfReader(again))}; "
                    f"both kept in {kept.relative_to(ROOT)}/ (`make bench-reprints` prints the build again and again, "
                    f"counting the prints that differ and where)")


# The fold labels of 15.11 on screen ("Worked solution 3: show the code", "Hint 1 of 3 for
# exercise 3", "Hide worked solution 3"): a reader of paper has nothing to click.
SCREEN_LABEL = re.compile(r"Worked solution \d+:|show the (code|traces|reader check)|answer in words"
                          r"|Hint \d+ of \d+ for|Hide worked solution")


@pytest.fixture(scope="module")
def printed_pages(pdf) -> list[str]:
    """Each page's text as pdftotext reads it, in reading order."""
    return poppler("pdftotext", "-layout", str(pdf), "-").split("\f")


def test_solutions_are_at_the_back_and_linked_both_ways(printed_pages):
    """Each exercise: its hints, flat ("Hint 1", ...), then "Solution: p. N"; every worked
    solution after the last exercise's last hint, titled "Solution N (exercise N, p. M)"."""
    numbers = exercise_numbers()
    assert numbers == list(range(1, len(numbers) + 1)) and numbers, f"15.11's exercises: {numbers}"
    text = "\f\n".join(printed_pages)  # (a line may start a page: ^ matches after \n only)
    page_at = lambda offset: text.count("\f", 0, offset) + 1  # noqa: E731
    exercise_at, pointer_at, solution_at = {}, {}, {}
    for n in numbers:
        exercise = re.search(rf"^[ \t]*Exercise {n}[ \t]*$", text, re.M)
        solution = re.search(rf"^[ \t]*Solution {n} \(exercise {n}, p\.\s(\d+)\)", text, re.M)
        pointer = re.search(r"Solution: p\.\s(\d+)", text[exercise.end():]) if exercise else None
        assert exercise and solution and pointer, f"exercise {n}: heading, solution pointer or solution title missing"
        exercise_at[n], solution_at[n] = exercise.start(), solution.start()
        pointer_at[n] = exercise.end() + pointer.start()
        assert int(pointer[1]) == page_at(solution.start()), f"exercise {n} sends to p. {pointer[1]}"
        assert int(solution[1]) == page_at(exercise.start()), f"solution {n} sends back to p. {solution[1]}"
        hints = re.findall(r"^[ \t]*Hint (\d+)[ \t]*$", text[exercise.end():pointer_at[n]], re.M)
        assert hints and hints == [str(i) for i in range(1, len(hints) + 1)], f"exercise {n}'s hints: {hints}"
    last = numbers[-1]
    assert pointer_at[last] < min(solution_at.values()), "a worked solution prints before the last exercise's hints end"
    assert "Solutions to the exercises" in text[pointer_at[last]:min(solution_at.values())]
    assert all(f"# @solution {n}" in text[solution_at[n]:] for n in numbers)
    assert not re.search(r"# @solution \d", text[:min(solution_at.values())]), "solution code printed among the exercises"


def test_no_fold_label_is_printed_and_the_html_keeps_its_folds(printed_pages):
    labels = sorted({match[0] for page in printed_pages for match in SCREEN_LABEL.finditer(page)})
    assert not labels, f"the PDF prints labels of screen folds: {labels}"
    # The rearrangement is print's alone: the page it prints from still folds each solution.
    single_page = (SINGLEHTML / CHAPTER_PAGE).read_text(encoding="utf-8")
    assert all(f"Worked solution {n}: show the code" in single_page for n in exercise_numbers())


SMALLEST_TYPE_PT = 7.5
# The page's top and bottom margins (runnable_book/pipeline/print_pdf.py: 16 and 18 mm), about 48 pt.
MARGIN_PT = 48


def glyph_sizes(reader: PdfReader) -> list[tuple[int, str, float, str]]:
    """(page, font, size in pt as printed, text) of every run of text the PDF draws: the
    font size scaled by the text and graphics matrices in force (pypdf's visitor)."""
    runs = []
    for number, page in enumerate(reader.pages, start=1):
        def visit(text, cm, tm, font, size, number=number):
            if not text.strip() or font is None:
                return
            # The matrices' scale: the square root of the combined matrix's determinant.
            a, b = tm[0] * cm[0] + tm[1] * cm[2], tm[0] * cm[1] + tm[1] * cm[3]
            c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
            runs.append((number, str(font.get("/BaseFont", "")).split("+")[-1], size * abs(a * d - b * c) ** 0.5, text))
        page.extract_text(visitor_text=visit)
    return runs


def test_no_type_is_smaller_than_7_5_pt(reader):
    """Code and output print at one size (a wide output line wraps, its type is never shrunk);
    nothing in the PDF, the footer included, is set below 7.5 pt."""
    runs = glyph_sizes(reader)
    monospace = [run for run in runs if "Mono" in run[1] or "Courier" in run[1]]
    assert monospace, f"no monospace text found; fonts: {sorted({run[1] for run in runs})}"
    small = [f"p. {page}: {font} {size:.1f} pt {text.strip()[:40]!r}" for page, font, size, text in runs
             if size < SMALLEST_TYPE_PT - 0.05]
    assert not small, f"{len(small)} runs of text below {SMALLEST_TYPE_PT} pt:\n" + "\n".join(small[:10])


def test_no_page_but_the_last_is_less_than_half_full(pdf):
    """A page is cut short only by a figure or block too tall for what is left of it; half a
    page left empty (a figure that could have fitted with its caption) is a layout fault."""
    soup = BeautifulSoup(poppler("pdftotext", "-bbox", str(pdf), "-"), "html.parser")
    pages = soup.find_all("page")
    short = []
    for number, page in enumerate(pages[:-1], start=1):
        height = float(page["height"])
        # Words above the footer (in the bottom margin), measured from the top margin.
        bottoms = [float(w["ymax"]) for w in page.find_all("word") if float(w["ymax"]) < height - MARGIN_PT]
        filled = (max(bottoms, default=0) - MARGIN_PT) / (height - 2 * MARGIN_PT)
        if filled < 0.5:
            short.append(f"p. {number}: {filled:.0%} full")
    assert not short, "pages less than half full: " + ", ".join(short)


def test_every_figure_is_referred_to_in_the_text(printed_pages):
    """Each numbered figure is named outside its own caption, as a book refers to its figures."""
    text = re.sub(r"\s+", " ", " ".join(printed_pages))
    captions = re.findall(r"Figure (15\.\d+)\b", text)
    numbers = sorted(set(captions), key=lambda n: int(n.split(".")[1]))
    assert len(numbers) >= 5, f"figures found: {numbers}"
    unreferred = [n for n in numbers if captions.count(n) < 2]
    assert not unreferred, f"figures never referred to in the text: {unreferred}"


def font_box_ratio(pdf: Path, page: int) -> float:
    """The largest (ascent - descent) per point of font size among the page's fonts.

    pdftotext's word boxes are as tall as their font's ascent to descent: a box's height
    divided by this is at most the font size it was set in."""
    resources = PdfReader(pdf).pages[page - 1].get("/Resources") or {}
    ratios = []
    for font in fonts_of(resources, set()):
        if font.get("/Subtype") == "/Type0":
            font = font["/DescendantFonts"][0].get_object()
        descriptor = (font.get("/FontDescriptor") or {})
        descriptor = descriptor.get_object() if hasattr(descriptor, "get_object") else descriptor
        if "/Ascent" in descriptor and "/Descent" in descriptor:
            ratios.append((float(descriptor["/Ascent"]) - float(descriptor["/Descent"])) / 1000)
    assert ratios, f"page {page} names no font metrics"
    return max(ratios)


def word_boxes(pdf: Path) -> list[list[tuple[str, float]]]:
    """Per page, (word, height in pt) of every word, from `pdftotext -bbox`."""
    soup = BeautifulSoup(poppler("pdftotext", "-bbox", str(pdf), "-"), "html.parser")
    return [[(word.get_text(), float(word["ymax"]) - float(word["ymin"])) for word in page.find_all("word")]
            for page in soup.find_all("page")]


def test_every_diagram_label_is_at_least_7_pt(pdf):
    """Figure 15.5 (a wide flowchart, drawn top to bottom) and figure 15.1, read from the PDF."""
    pages = word_boxes(pdf)
    diagrams: dict[str, set[str]] = {}
    for line, labels in diagram_lines().items():
        if DIAGRAM_START.match(line):
            current = diagrams.setdefault(line + str(len(diagrams)), set())
        else:
            current |= {word for label in drawn_labels(line, labels) for word in label.split() if len(word) > 2}
    assert len(diagrams) == 2
    for header, words in diagrams.items():
        # The diagram's page: the one where most of its label words are printed.
        number, boxes = max(enumerate(pages, start=1), key=lambda p: len(words & {w for w, _ in p[1]}))
        found = [(word, height) for word, height in boxes if word in words]
        assert len({w for w, _ in found}) >= 0.8 * len(words), f"{header}: labels not found on page {number}"
        ratio = font_box_ratio(pdf, number)
        smallest = min(found, key=lambda box: box[1])
        size = smallest[1] / ratio
        assert size >= SMALLEST_LABEL_PT, (
            f"{header.rstrip('0123456789')} on page {number}: label {smallest[0]!r} is printed at {size:.1f} pt")


def book_code_lines() -> list[str]:
    """Every line of every code cell the book prints (the chapter's and ours), stripped."""
    return [line.strip() for md in notebook_pages() for cell in code_cells(md)
            for line in cell.source.splitlines() if line.strip()]


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def test_every_code_line_is_whole_or_continues_indented_past_it(pdf):
    """`pdftotext -layout` keeps each printed row and its indentation: a code line is either
    one row, or rows of which every continuation starts right of the line's first row."""
    rows = [row for row in poppler("pdftotext", "-layout", str(pdf), "-").replace("\f", "\n").splitlines()
            if row.strip()]
    whole = {squeeze(row) for row in rows}
    starts: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        starts.setdefault(squeeze(row)[:12], []).append(index)
    wrong, missing = [], []
    for line in book_code_lines():
        target = squeeze(line)
        if target in whole:
            continue
        # Wrapped: a row that starts it, then rows right of that row's start that complete it.
        shapes = []
        for index in starts.get(target[:12], []):
            text, end = squeeze(rows[index]), index
            while len(text) < len(target) and target.startswith(text) and end + 1 < len(rows):
                end += 1
                text += squeeze(rows[end])
            if text == target:
                shapes.append(all(indentation(rows[i]) > indentation(rows[index]) for i in range(index + 1, end + 1)))
        if not shapes:
            missing.append(line)
        elif not any(shapes):
            wrong.append(line)
    assert not wrong, f"{len(wrong)} code lines continue at or left of their own start:\n" + "\n".join(wrong[:10])
    assert not missing, f"{len(missing)} code lines are neither whole nor wrapped in the PDF:\n" + "\n".join(missing[:10])


def test_every_plot_is_printed_as_vectors_or_at_200_ppi(pdf):
    """Plots are printed from their stored SVG (vectors); any raster image is sharp enough."""
    printed = (SINGLEHTML / CHAPTER_PAGE).read_text(encoding="utf-8")
    plots = re.findall(r'<img[^>]+src="(_images/[^"]+)"', printed)
    assert plots and all(src.endswith(".svg") for src in plots), f"plots printed from raster images: {plots}"
    listing = poppler("pdfimages", "-list", str(pdf)).splitlines()[2:]
    soft = [row for row in listing if min(int(row.split()[12]), int(row.split()[13])) < LOWEST_IMAGE_PPI]
    assert not soft, "images printed below 200 ppi:\n" + "\n".join(soft)


def test_every_reference_is_in_the_bibliography(reader, page_texts):
    start = dict((title, page) for title, page in outline_pages(PDF.read_bytes()) if title.strip() == "References")
    assert start, "the PDF has no References bookmark"
    references = in_pdf_terms("\n".join(page_texts[start["References"] - 1:]))
    entries = delivered_references()
    assert len(entries) == 8
    for entry in entries:
        assert all(in_pdf_terms(mark) in references for mark in reference_marks(entry)), entry


def fonts_of(resources, seen: set) -> list:
    """Every font object used by a page's resources, through its form XObjects too."""
    fonts = []
    resources = resources.get_object() if resources is not None else {}
    for font in (resources.get("/Font") or {}).values():
        fonts.append(font.get_object())
    for xobject in (resources.get("/XObject") or {}).values():
        ref = getattr(xobject, "idnum", None)
        xobject = xobject.get_object()
        if xobject.get("/Subtype") == "/Form" and ref not in seen:
            seen.add(ref)
            fonts += fonts_of(xobject.get("/Resources"), seen)
    return fonts


def is_embedded(font) -> bool:
    if font.get("/Subtype") == "/Type3":
        return True  # its glyphs are drawn by procedures inside the PDF
    if font.get("/Subtype") == "/Type0":
        font = font["/DescendantFonts"][0].get_object()
    descriptor = font.get("/FontDescriptor")
    descriptor = descriptor.get_object() if descriptor is not None else {}
    return any(key in descriptor for key in ("/FontFile", "/FontFile2", "/FontFile3"))


def test_every_font_is_embedded(reader):
    seen: set = set()
    fonts = [font for page in reader.pages for font in fonts_of(page.get("/Resources"), seen)]
    assert fonts, "the PDF uses no fonts at all"
    not_embedded = sorted({str(font.get("/BaseFont")) for font in fonts if not is_embedded(font)})
    assert not not_embedded, f"fonts not embedded: {not_embedded}"


def test_page_count_is_sane(reader):
    low, high = PAGE_RANGE
    assert low <= len(reader.pages) <= high, f"{len(reader.pages)} pages, expected {low}-{high}"


def test_every_page_has_a_bookmark_titled_as_it_in_order(pdf):
    """The chapter title, then each section's title exactly (runnable_book/pipeline/print_pdf.py retitles them)."""
    expected = [page_title(read_page(md)) for md in pages_in_toc_order()]
    bookmarks = outline_pages(pdf.read_bytes())
    titles = [title for title, _ in bookmarks]
    missing = [title for title in expected if title not in titles]
    assert not missing, f"no bookmark titled {missing}; bookmarks: {titles}"
    positions = [titles.index(title) for title in expected]
    assert positions == sorted(positions), f"the section bookmarks are out of order: {titles}"
    pages = [bookmarks[i][1] for i in positions]
    assert pages == sorted(pages), f"section start pages go backwards: {pages}"


def test_the_contents_list_gives_each_section_its_page(pdf, page_texts):
    """The contents list after the title (page numbers from a first print) agrees with the bookmarks."""
    bookmarks = dict(outline_pages(pdf.read_bytes()))
    contents = "\n".join(page_texts[:2])
    wrong = []
    for title in [page_title(read_page(md)) for md in pages_in_toc_order()[1:]]:
        listed = re.search(re.escape(title) + r"\s+(\d+)\b", contents)
        if not listed or int(listed.group(1)) != bookmarks.get(title):
            wrong.append(f"{title}: contents say {listed and listed.group(1)}, bookmark says {bookmarks.get(title)}")
    assert not wrong, "\n".join(wrong)


def test_the_contents_list_names_the_solutions_with_their_page(pdf, page_texts):
    """The solutions at the back of 15.11 are in the printed contents, as in the bookmarks."""
    bookmarks = dict(outline_pages(pdf.read_bytes()))
    contents = "\n".join(page_texts[:2])
    listed = re.search(r"Solutions to the exercises\s+(\d+)\b", contents)
    assert listed, "the printed contents do not list the solutions"
    assert int(listed.group(1)) == bookmarks.get("Solutions to the exercises"), (listed.group(1), bookmarks)


def test_the_printed_exercise_introduction_describes_the_printed_page(printed_pages):
    """15.11's introduction says where print puts hints and solutions, not how the screen folds them."""
    text = re.sub(r"\s+", " ", "\n".join(printed_pages))
    for screen_only in ("one at a time: each hint holds the next one", "hidden on this page until you open it"):
        assert screen_only not in text, f"the PDF prints the screen's wording: {screen_only!r}"
    said = re.search(r"printed with the others after the last exercise, under “Solutions to the exercises” "
                     r"\(p\. (\d+)\)", text)
    assert said, "the printed introduction does not say where the solutions are"
    page_of_solutions = next(i + 1 for i, page in enumerate(printed_pages)
                             if re.search(r"^\s*Solutions to the exercises\s*$", page, re.M))
    assert int(said.group(1)) == page_of_solutions


def test_the_pdf_is_tagged(reader):
    catalog = reader.trailer["/Root"]
    assert "/StructTreeRoot" in catalog, "no structure tree: printed without tagged=True?"
    assert catalog.get("/MarkInfo", {}).get("/Marked"), "not marked as a tagged PDF"


def test_the_html_book_links_the_tested_pdf(pdf, site):
    published = site / pdf.name
    assert published.is_file(), f"{published} missing: `make html` copies the PDF when it exists"
    assert published.read_bytes() == pdf.read_bytes(), "the HTML book publishes another PDF than the tested one"
    page = (site / "book" / "15_01_corpus_and_search_stub.html").read_text()
    assert f'href="../{pdf.name}"' in page, "the page header has no link to the chapter PDF"


# --------------------------------------------------------------------------
# Planted faults: the printer refuses, and writes nothing
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
@needs("browser")
def printer():
    with ChapterPrinter() as chapter_printer:
        yield chapter_printer


@pytest.fixture
def singlehtml_copy(tmp_path) -> Path:
    require_built(SINGLEHTML / CHAPTER_PAGE, "pdf")
    copy = tmp_path / "singlehtml"
    shutil.copytree(SINGLEHTML, copy)
    return copy


def plant(root: Path, old: str, new: str) -> None:
    page = root / CHAPTER_PAGE
    text = page.read_text(encoding="utf-8")
    assert old in text, f"{page} has no {old!r} to plant a fault at"
    page.write_text(text.replace(old, new, 1), encoding="utf-8")


def assert_refused(printer, root: Path, tmp_path: Path, *words: str) -> None:
    out = tmp_path / "out" / "chapter15.pdf"
    with pytest.raises(PrintError) as refused:
        printer.print_site(root, out)
    assert all(word in str(refused.value) for word in words), str(refused.value)
    assert not out.parent.exists() or not any(out.parent.iterdir()), "a refused print left a file behind"


def test_a_request_to_another_host_is_refused(printer, singlehtml_copy, tmp_path):
    url = "https://cdn.jsdelivr.net/npm/x.js"
    plant(singlehtml_copy, "</head>", f'<script src="{url}"></script></head>')
    assert_refused(printer, singlehtml_copy, tmp_path, "requested other hosts", url)


def test_an_undrawn_diagram_is_refused(printer, singlehtml_copy, tmp_path, monkeypatch):
    monkeypatch.setattr(printer, "mermaid_timeout_ms", 1_000)  # nothing will draw it: no need to wait long
    # The diagrams are drawn at build time (runnable_book/sphinx_ext/diagrams.py): take one drawing out.
    page = singlehtml_copy / CHAPTER_PAGE
    text, count = re.subn(r'(<div class="mermaid"[^>]*>)<svg\b.*?</svg>', r"\1", page.read_text(encoding="utf-8"),
                          count=1, flags=re.DOTALL)
    assert count == 1, f"{page} has no drawn diagram to take out"
    page.write_text(text, encoding="utf-8")
    assert_refused(printer, singlehtml_copy, tmp_path, "mermaid diagram #1")


def test_a_code_line_cut_at_the_margin_is_refused(printer, singlehtml_copy, tmp_path):
    # What the print CSS prevents: a code box that keeps its long lines on one line.
    plant(singlehtml_copy, "</head>", "<style>div.highlight pre { white-space: pre !important; }</style></head>")
    assert_refused(printer, singlehtml_copy, tmp_path, "wider than the printed page")


# --------------------------------------------------------------------------
# A chapter's PDF in a book of several: printed from its own pages alone
# --------------------------------------------------------------------------


def test_a_chapters_pdf_is_printed_from_its_pages_alone(printer, singlehtml_copy, tmp_path):
    """A chapter's page is cut from the one-page book before the browser opens it: nothing of
    the other chapters' pages is laid out or requested (a long book's chapter prints at the cost
    of its own pages). Here 15.1 is printed as a pretend chapter, beside an image planted in
    the references that is not there: the book's print stops on it, the chapter's never asks."""
    book = whole_book_pdf()
    marker = f'<span id="document-{book.documents[-1]}"></span>'
    plant(singlehtml_copy, marker, marker + '<img src="_images/not-there.png" alt="a planted image">')
    assert_refused(printer, singlehtml_copy, tmp_path, "not-there.png")

    chapter = PrintedPdf("chapter99.pdf", "Chapter 99 · A pretend chapter", "99", (book.documents[1],), whole_book=False)
    out = tmp_path / chapter.name
    result = printer.print_site(singlehtml_copy, out, chapter)
    assert [title for title, _ in outline_pages(out.read_bytes())] == [chapter.title, *result.sections]
    assert result.sections == [page_title(read_page(ROOT / f"{book.documents[1]}.md"))]
    assert PdfReader(out).metadata["/Title"] == chapter.title


def test_a_pdf_is_printed_again_only_when_what_it_is_printed_from_changed(printer, singlehtml_copy, tmp_path):
    """`make pdf`'s records (runnable_book/pipeline/print_record.py): a chapter's PDF whose page,
    build and tool are as when it was printed is left as it is, an edit of another chapter's page
    included; an edit of its own pages prints it again, as does a PDF on disk that is not the
    one recorded."""
    book = whole_book_pdf()
    records, chapter = tmp_path / "records", PrintedPdf("chapter99.pdf", "Chapter 99 · A pretend chapter", "99",
                                                        (book.documents[1],), whole_book=False)
    out = tmp_path / chapter.name
    again = lambda: printer.print_site(singlehtml_copy, out, chapter, records).printed  # noqa: E731
    assert again(), "a PDF never printed was not printed"
    first = out.read_bytes()
    assert not again(), "a PDF printed from the same inputs was printed again"
    other = f'<span id="document-{book.documents[-1]}"></span>'
    plant(singlehtml_copy, other, other + "<p>An edit of another chapter.</p>")
    assert not again() and out.read_bytes() == first, "an edit of another chapter's page printed this one again"
    own = f'<span id="document-{book.documents[1]}"></span>'
    plant(singlehtml_copy, own, own + "<p>An edit of the chapter.</p>")
    assert again() and out.read_bytes() != first, "an edit of the chapter's own page left its PDF as it was"
    out.write_bytes(first)
    assert again(), "a PDF on disk that is not the one recorded was left as it is"
    (singlehtml_copy / "_static" / "planted.css").write_text("p { color: red }")
    assert again(), "a file added to the build (which the page may load) left the PDF as it was"
