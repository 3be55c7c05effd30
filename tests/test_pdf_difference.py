"""runnable_book/pipeline/pdf_difference.py: where two prints first differ, the cause before its echo."""

from __future__ import annotations

import io

from pypdf import PdfReader, PdfWriter
from pypdf.annotations import Link
from pypdf.generic import DecodedStreamObject, NameObject

from runnable_book.pipeline.pdf_difference import first_difference


def pdf(pages: list[tuple[bytes, list[tuple[float, float, float, float]]]]) -> PdfReader:
    """A PDF of one page per (drawing, link rectangles), each link to the first page."""
    writer = PdfWriter()
    for number, (drawing, links) in enumerate(pages):
        page = writer.add_blank_page(width=200, height=200)
        stream = DecodedStreamObject()
        stream.set_data(drawing)
        page[NameObject("/Contents")] = writer._add_object(stream)
        for rect in links:
            writer.add_annotation(page_number=number, annotation=Link(rect=rect, target_page_index=0))
    out = io.BytesIO()
    writer.write(out)
    return PdfReader(io.BytesIO(out.getvalue()))


TEXT = b"BT\n/F1 12 Tf\n1 0 0 -1 10 20 Tm\n<0033> Tj\nET"


def test_the_same_pages_differ_nowhere_a_page_shows():
    same = [(TEXT, [(10, 10, 90, 22)])]
    assert first_difference(pdf(same), pdf(same)).startswith("not in any page's links or drawing")


def test_a_link_split_in_three_is_named_before_the_drawing_it_renames():
    """A page with more link annotations, then a later page's drawing that differs (as the
    renamed resources after them do): the link's page is named, with both sets of rectangles."""
    one = pdf([(TEXT, [(10, 10, 90, 22)]), (b"/G87 gs", [])])
    other = pdf([(TEXT, [(10, 10, 40, 22), (40, 10, 60, 22), (60, 10, 90, 22)]), (b"/G89 gs", [])])
    said = first_difference(one, other)
    assert said.startswith("p. 1, links: 1 then 3"), said
    assert "[10.0, 10.0, 90.0, 22.0]" in said and "[40.0, 10.0, 60.0, 22.0]" in said, said


def test_a_moved_baseline_names_its_page_and_drawing_line():
    moved = TEXT.replace(b"10 20 Tm", b"10 20.6 Tm")
    said = first_difference(pdf([(TEXT, []), (TEXT, [])]), pdf([(TEXT, []), (moved, [])]))
    assert said == "p. 2, drawing line 3: ['1 0 0 -1 10 20 Tm'] then ['1 0 0 -1 10 20.6 Tm']", said


def test_another_page_count_is_said_first():
    assert first_difference(pdf([(TEXT, [])]), pdf([(TEXT, []), (TEXT, [])])) == "1 pages, then 2"
