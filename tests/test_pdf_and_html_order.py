"""`make pdf` and `make html` in either order end with a site that links and serves the PDF.

The HTML links the chapter's PDF only if the PDF existed when the HTML was built
(tools/sphinx_ext/pdf.py); `make html` then `make pdf` left a site without it, and
tests/test_pdf.py failed ("chapter15.pdf missing"). Now the Makefile's ``pdf`` target
rebuilds an existing site that does not serve this PDF, and the HTML build removes the
copy of a PDF that no longer exists.
"""

import subprocess
from pathlib import Path

from scratch_book import build, scratch_book

ROOT = Path(__file__).resolve().parent.parent
SITE_BUILD = "tools.pipeline.build_book html"  # the Makefile's html recipe


def make_pdf_dry_run(pdf: Path, site: Path) -> str:
    """What `make pdf` runs when `pdf` is up to date, for the site at `site` (make -n)."""
    result = subprocess.run(["make", "-n", "-o", str(pdf), "pdf", f"PDF={pdf}", f"SITE={site}"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_make_pdf_rebuilds_a_site_that_does_not_serve_this_pdf(tmp_path):
    pdf, site = tmp_path / "pdf" / "chapter15.pdf", tmp_path / "html"
    pdf.parent.mkdir()
    site.mkdir()
    pdf.write_bytes(b"%PDF- the chapter")
    assert SITE_BUILD not in make_pdf_dry_run(pdf, site), "no site yet: `make pdf` builds none"

    (site / "index.html").write_text("a site built before the PDF")
    assert SITE_BUILD in make_pdf_dry_run(pdf, site), "a site without the PDF is not rebuilt"

    (site / pdf.name).write_bytes(b"%PDF- an older chapter")
    assert SITE_BUILD in make_pdf_dry_run(pdf, site), "a site serving an older PDF is not rebuilt"

    (site / pdf.name).write_bytes(pdf.read_bytes())
    assert SITE_BUILD not in make_pdf_dry_run(pdf, site), "a site already serving this PDF is rebuilt"


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
