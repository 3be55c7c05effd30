"""Where two prints of the same build first differ: what the PDF's print-again test reports.

    first_difference(PdfReader(a), PdfReader(b))  ->  "p. 16, links: ..." or "p. 28, drawing line 1026: ..."

Page by page, in order: the page's links (each link annotation's target and rectangle), then
its drawing (the content stream, line by line). Links first, because Chromium numbers every
object of the PDF in one sequence: a page with one more link annotation shifts the names of
every later resource (/G87 becomes /G89), so the first differing drawing is only an echo of it.
"""

from __future__ import annotations

from pypdf import PdfReader
from pypdf.generic import IndirectObject


def described(target) -> str:
    """A link's target as text: a URI or a named destination as it is, an explicit one
    ([page, /Fit ...]) with its page as the object number it is (the same in both prints)."""
    if isinstance(target, IndirectObject):
        return f"object {target.idnum}"
    if isinstance(target, (list, tuple)):
        return "[" + ", ".join(described(item) for item in target) + "]"
    return str(target)


def page_links(page) -> list[tuple[str, list[float]]]:
    """(target, rectangle rounded to 0.1 pt) of each link annotation of a pypdf page."""
    links = []
    for annotation in page.get("/Annots") or []:
        annotation = annotation.get_object()
        if annotation.get("/Subtype") != "/Link":
            continue
        action = annotation.get("/A")
        target = action.get("/URI") if action is not None and "/URI" in action else annotation.get("/Dest")
        links.append((described(target), [round(float(x), 1) for x in annotation["/Rect"]]))
    return links


def first_difference(one: PdfReader, other: PdfReader) -> str:
    """Where two PDFs first differ: a page's links or its drawing (its first differing
    operator), or else elsewhere (metadata, fonts, the structure tree)."""
    if len(one.pages) != len(other.pages):
        return f"{len(one.pages)} pages, then {len(other.pages)}"
    for number, (this, that) in enumerate(zip(one.pages, other.pages), start=1):
        links, links_again = page_links(this), page_links(that)
        if links != links_again:
            only = [f"{target} at {rect}" for target, rect in links if (target, rect) not in links_again]
            only_again = [f"{target} at {rect}" for target, rect in links_again if (target, rect) not in links]
            return (f"p. {number}, links: {len(links)} then {len(links_again)}; only in the first: {only or 'none'}; "
                    f"only in the second: {only_again or 'none'}")
        drawn, again = (page.get_contents().get_data().decode("latin-1").splitlines() for page in (this, that))
        if drawn != again:
            at = next((i for i, (a, b) in enumerate(zip(drawn, again)) if a != b), min(len(drawn), len(again)))
            return f"p. {number}, drawing line {at + 1}: {drawn[at:at + 1]} then {again[at:at + 1]}"
    return "not in any page's links or drawing (metadata, fonts or the structure tree)"
