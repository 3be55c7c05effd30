"""Measure `make pdf`: how long its two steps take, and what they make.

Usage:
    python -m runnable_book.bench.pdf_build [--runs 3] [--out _build/bench/pdf.json]

Each run rebuilds the singlehtml book from scratch (its own doctree folder, so the HTML
build's cache does not help it and is not disturbed) and prints it to a PDF in a
temporary folder, timing both steps; _build/pdf is left alone. The report gives every
run's seconds, the median, and the PDF's page count and size. Timings depend on the
machine and on what else runs on it: rerun this on a quiet machine to compare. Nothing
here is asserted; the tests check what the PDF holds, not how fast it is made.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runnable_book import jupyter_book
from runnable_book.repository import ROOT
from runnable_book.pipeline.print_pdf import ChapterPrinter
from runnable_book.pipeline.printed_pdfs import whole_book_pdf



def build_singlehtml(out: Path) -> float:
    """Build the singlehtml book into out/singlehtml (doctrees in out/.doctrees); seconds."""
    started = time.monotonic()
    subprocess.run(
        [*jupyter_book.COMMAND, "build", str(ROOT), "--path-output", str(out), "--builder", "singlehtml",
         "--warningiserror", "--nitpick", "--keep-going", "--quiet"],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "bench" / "pdf.json")
    args = parser.parse_args(argv)

    runs = []
    with ChapterPrinter() as printer:
        for run in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory(prefix="bench-pdf-") as scratch:
                scratch = Path(scratch)
                singlehtml_s = build_singlehtml(scratch)
                started = time.monotonic()
                result = printer.print_site(scratch / "_build" / "singlehtml", scratch / whole_book_pdf().name)
                print_s = time.monotonic() - started
            runs.append({"singlehtml_s": round(singlehtml_s, 1), "print_s": round(print_s, 1),
                         "total_s": round(singlehtml_s + print_s, 1), "pages": result.pages, "bytes": result.bytes})
            print(f"run {run}: singlehtml {singlehtml_s:.1f} s + print {print_s:.1f} s = "
                  f"{singlehtml_s + print_s:.1f} s; {result.pages} pages, {result.bytes:,} bytes")

    summary = {
        "runs": runs,
        "median_total_s": round(statistics.median(r["total_s"] for r in runs), 1),
        "median_singlehtml_s": round(statistics.median(r["singlehtml_s"] for r in runs), 1),
        "median_print_s": round(statistics.median(r["print_s"] for r in runs), 1),
        "pages": runs[-1]["pages"],
        "bytes": runs[-1]["bytes"],
        "note": "wall-clock seconds on this machine, cold singlehtml build (fresh doctrees) each run",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"median: {summary['median_total_s']} s (singlehtml {summary['median_singlehtml_s']} s, "
          f"print {summary['median_print_s']} s); {summary['pages']} pages, {summary['bytes']:,} bytes; "
          f"report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
