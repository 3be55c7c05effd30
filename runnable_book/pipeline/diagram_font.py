"""The one font the mermaid diagrams are measured in, drawn in, and shown in.

    python -m runnable_book.pipeline.diagram_font _build/static/fonts/diagram-sans.woff   # (make assets)

Mermaid sizes each box to its label as the drawing browser measures the label's text. The
SVG then names a font list ("trebuchet ms", verdana, arial), and whatever font the reader's
browser, or the PDF printer, finds for it is another width: labels ran out of their boxes
and edges crossed them. So the diagrams name one font, "Diagram Sans", and everyone has it:

* its source is DejaVu Sans from Debian's fonts-dejavu-core (the Makefile installs the
  package where it is missing), never a file committed here;
* runnable_book/pipeline/draw_diagrams.py measures and draws with it (loaded into the drawing page);
* the site serves a subset of it (the characters of the diagrams' sources, as the icon fonts
  are subset to the icons used), declared by ``@font-face`` in runnable_book/sphinx_ext/static/runnable-book.css, so a
  reader's browser on any system, and Chromium printing the PDF (which embeds it), show the
  labels in the font they were measured in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runnable_book.pipeline.pages import mermaid_sources

FAMILY = "Diagram Sans"
SOURCE = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")  # Debian: fonts-dejavu-core
DEBIAN_PACKAGE = "fonts-dejavu-core"


def source_font() -> Path:
    if not SOURCE.is_file():
        raise SystemExit(f"{SOURCE} is missing: install Debian's {DEBIAN_PACKAGE} (make assets does)")
    return SOURCE


def diagram_characters() -> str:
    """Every character of every diagram's source (its labels among them), and ASCII."""
    used = {ch for _, code in mermaid_sources() for ch in code if ch.isprintable()}
    return "".join(sorted(used | {chr(c) for c in range(0x20, 0x7F)}))


def write_subset(out: Path) -> None:
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff"  # zlib-compressed; woff2 would need brotli
    options.layout_features = ["kern", "liga"]
    options.name_IDs = ["*"]  # keeps DejaVu's copyright and licence notice inside the file
    font = subset.load_font(str(source_font()), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=diagram_characters())
    subsetter.subset(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".part")
    subset.save_font(font, str(partial), options)
    partial.replace(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the WOFF to write, e.g. _build/static/fonts/diagram-sans.woff")
    args = parser.parse_args(argv)
    write_subset(args.out)
    print(f"{args.out}: {FAMILY}, {args.out.stat().st_size / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
