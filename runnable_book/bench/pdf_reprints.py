"""How often printing the same build again gives another PDF, and where (a diagnostic).

    python -m runnable_book.bench.pdf_reprints [--prints 12]     # what `make bench-reprints` runs

tests/test_pdf.py prints the built book once more and asks for the very bytes of the PDF
`make pdf` made (its test_printing_again_gives_the_same_bytes); now and then it gets other
bytes. This prints the same singlehtml build --prints times with the printer the test uses
(one browser, a fresh context each time, dated as the PDF is), compares each print with
_build/pdf/chapter15.pdf (the PDF `make pdf` made), and reports for each whether it is the
same and, if not, where it first differs (runnable_book/pipeline/pdf_difference.py). A differing print is kept in
_build/bench/pdf-reprints/. Writes _build/bench/pdf_reprints.json. Numbers, not checks.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time

from pypdf import PdfReader

from runnable_book.pipeline.artefact_steps import SINGLEHTML, pdf_path  # (the build graph's own paths)
from runnable_book.repository import ROOT
from runnable_book.pipeline.pdf_difference import first_difference
from runnable_book.pipeline.print_finish import epoch_dated
from runnable_book.pipeline.print_pdf import ChapterPrinter

OUT = ROOT / "_build" / "bench"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prints", type=int, default=12)
    args = parser.parse_args(argv)
    PDF = pdf_path()
    if not PDF.is_file() or not SINGLEHTML.is_dir():
        print(f"{PDF.relative_to(ROOT)} or its singlehtml build is missing: run `make pdf` first", file=sys.stderr)
        return 2
    built = PdfReader(PDF)
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch_dated(built))  # dated as the built PDF (as the test does)
    kept = OUT / "pdf-reprints"
    shutil.rmtree(kept, ignore_errors=True)
    kept.mkdir(parents=True)
    prints = []
    with ChapterPrinter() as printer:
        for number in range(1, args.prints + 1):
            again = kept / f"print-{number}.pdf"
            started = time.monotonic()
            printer.print_site(SINGLEHTML, again)
            seconds = time.monotonic() - started
            same = again.read_bytes() == PDF.read_bytes()
            where = None if same else first_difference(built, PdfReader(again))
            if same:
                again.unlink()
            prints.append({"print": number, "same": same, "seconds": round(seconds, 1), "first_difference": where})
            print(f"print {number:2}: {'the same bytes' if same else 'OTHER BYTES: ' + where} ({seconds:.1f} s)", flush=True)
    differing = sum(not p["same"] for p in prints)
    print(f"{differing} of {len(prints)} prints differ from {PDF.relative_to(ROOT)}"
          + (f" (kept in {kept.relative_to(ROOT)}/)" if differing else ""))
    (OUT / "pdf_reprints.json").write_text(json.dumps({"pdf": str(PDF.relative_to(ROOT)), "prints": prints,
                                                        "differing": differing}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
