"""The diagrams read on screen: their labels at least 11 px high on a desktop (1280 px)
and on a phone (375 px), where a diagram wider than the column scrolls sideways
(runnable_book/sphinx_ext/static/runnable-book.css, runnable_book/sphinx_ext/diagrams.py). Their print size is checked on
the PDF (tests/test_pdf.py)."""

import pytest

pytestmark = pytest.mark.site

SMALLEST_LABEL_PX = 11
DIAGRAM_PAGES = ["book/15_02_one_shot_rag.html", "book/15_09_permissions_and_hostile_evidence.html"]
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 375, "height": 800}}

# Each drawn label's height on screen: its font size in the drawing's units, times the
# drawing's scale (rendered width over its viewBox width).
JS_LABEL_SIZES = """() => [...document.querySelectorAll('div.mermaid > svg')].map((svg) => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll('text')]
        .filter((text) => text.textContent.trim())
        .map((text) => parseFloat(getComputedStyle(text).fontSize) * scale);
    return {smallest: Math.min(...sizes), labels: sizes.length,
            scrolls: svg.parentElement.scrollWidth > svg.parentElement.clientWidth};
})"""


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("path", DIAGRAM_PAGES)
def test_diagram_labels_are_at_least_11_px(browser_on_site, path, viewport):
    served, browser = browser_on_site
    page = browser.new_page(viewport=VIEWPORTS[viewport])
    page.goto(served.url(path), wait_until="load")
    diagrams = page.evaluate(JS_LABEL_SIZES)
    assert diagrams, f"{path} shows no diagram"
    for diagram in diagrams:
        assert diagram["labels"] > 3
        assert diagram["smallest"] >= SMALLEST_LABEL_PX, (
            f"{path} at {viewport} width: a diagram label is {diagram['smallest']:.1f} px high")
