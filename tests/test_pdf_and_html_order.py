"""`make pdf` and `make html` in either order end with a site that links and serves the PDF.

The HTML links the chapter's PDF only if the PDF existed when the HTML was built
(runnable_book/sphinx_ext/pdf.py); `make html` then `make pdf` left a site without it, and
tests/test_pdf.py failed ("chapter15.pdf missing"). Now `make pdf` brings an existing site up
to date after the PDF (the graph's `html` step depends on the PDF's content), `make html`
brings an existing PDF up to date first, and the HTML build removes the copy of a PDF that
no longer exists.
"""

import subprocess
from pathlib import Path

import pytest

from scratch_book import build, scratch_book

ROOT = Path(__file__).resolve().parent.parent


def dry_run(target: str, pdf: Path, site: Path) -> str:
    """The graph steps `make target` asks for, for a PDF at `pdf` and a site at `site` (make -n)."""
    result = subprocess.run(["make", "-n", target, f"PDF={pdf}", f"SITE={site}"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return next(line for line in result.stdout.splitlines() if "runnable_book.pipeline.artefact_graph" in line)


def test_make_pdf_updates_a_built_site_and_make_html_an_existing_pdf(tmp_path):
    pdf, site = tmp_path / "pdf" / "chapter15.pdf", tmp_path / "html"
    site.mkdir()
    assert not dry_run("pdf", pdf, site).endswith(" html"), "no site yet: `make pdf` builds none"
    assert " pdf " not in dry_run("html", pdf, site) + " ", "no PDF yet: `make html` prints none"
    (site / "index.html").write_text("a site built before the PDF")
    assert dry_run("pdf", pdf, site).endswith(" pdf html"), "a built site is not brought up to date after the PDF"
    pdf.parent.mkdir()
    pdf.write_bytes(b"%PDF- the chapter")
    assert dry_run("html", pdf, site).endswith(" pdf html"), "an existing PDF is not brought up to date first"


@pytest.mark.sphinx
def test_the_site_links_and_serves_the_pdf_only_while_it_exists(tmp_path):
    pdf = tmp_path / "chapter.pdf"
    pdf.write_bytes(b"%PDF- the chapter")
    book = tmp_path / "book"
    scratch_book(book, ["page"], ["pdf"], chapter_pdf=str(pdf))
    html = book / "_build" / "html"

    build(book)
    assert (html / pdf.name).read_bytes() == pdf.read_bytes()
    assert f'href="{pdf.name}"' in (html / "page.html").read_text(), "the page does not link the PDF"

    pdf.unlink()
    build(book)
    assert not (html / pdf.name).exists(), "the site still serves a PDF that no longer exists"
    assert f'href="{pdf.name}"' not in (html / "page.html").read_text(), "the page links a PDF that is gone"


def test_the_graph_rebuilds_the_site_when_its_pdf_appears_changes_or_goes(tmp_path, monkeypatch):
    """The graph lists the `html` step's inputs before any step runs, when a PDF that `make pdf`
    is about to print does not exist yet: the step's own up-to-date test compares the PDF the
    site was built with (recorded by the step) with the PDF there is when the step comes."""
    from runnable_book.pipeline import artefact_steps

    pdf = tmp_path / "pdf" / "chapter15.pdf"
    monkeypatch.setattr(artefact_steps, "pdf_paths", lambda: [pdf])
    monkeypatch.setattr(artefact_steps, "SITE_PDF_DIGEST", tmp_path / "digests" / "site-pdf.sha256")
    monkeypatch.setattr(artefact_steps, "ROOT", tmp_path)
    assert not artefact_steps.site_serves_the_pdf(), "a site never built is not up to date"
    artefact_steps.SITE_PDF_DIGEST.parent.mkdir()
    artefact_steps.SITE_PDF_DIGEST.write_text(artefact_steps.pdf_state())  # built without a PDF
    assert artefact_steps.site_serves_the_pdf()
    pdf.parent.mkdir()
    pdf.write_bytes(b"%PDF- the chapter")
    assert not artefact_steps.site_serves_the_pdf(), "a PDF made since is not published"
    artefact_steps.SITE_PDF_DIGEST.write_text(artefact_steps.pdf_state())
    assert artefact_steps.site_serves_the_pdf()
    pdf.write_bytes(b"%PDF- the chapter, printed again after a page changed")
    assert not artefact_steps.site_serves_the_pdf(), "the site would serve the older PDF"
    pdf.unlink()
    assert not artefact_steps.site_serves_the_pdf(), "the site would serve a PDF that is gone"
